#ifndef THUMBD_JXL_H
#define THUMBD_JXL_H
// JPEG XL (libjxl 0.7): the header probe and first-frame decoder (jxl.c),
// and the lossy encoder (jxl_encode.c). libjxl reports errors by return
// value, never longjmp; no parallel runner is set, so every call runs on the
// caller's thread (a worker runs one job at a time).
#include "thumbd_formats.h"

/// Frames the probe walks before it stops counting: a file with more
/// answers max_frames + 1 and the caller refuses it (as GIFStructure.maxFrames).
/// Reads the basic info (size before orientation, alpha, bit depth, colour
/// channels, the codestream's orientation 1…8) and walks the frame headers
/// libjxl reports (displayed frames, coalesced) without decoding a pixel:
/// *frames gets how many it saw, at most max_frames + 1 (1 when the file
/// ends before its first frame header: the decode reports that). A size over
/// max_pixels is THUMBD_TOO_LARGE (width and height filled in) at the basic
/// info, before libjxl reads further. Truncated or invalid data before the
/// basic info is THUMBD_CORRUPT; damage after the first frame header stops
/// the count there (the decode decides whether the first frame stands).
int thumbd_jxl_probe(const void *data, size_t length, uint64_t max_pixels, uint32_t max_frames,
                     thumbd_image_info *info, uint32_t *frames, char *message, size_t message_size);

/// Decodes the first displayed frame to RGBA8 (straight alpha) inside open,
/// in stored orientation (the codestream's orientation is the caller's to
/// apply: thumbd_jxl_probe reports it). An XYB-coded image is decoded to sRGB
/// by libjxl; any other keeps its own colour, which thumbd_decoder_color
/// describes: nclx codes when its colour encoding is an enumerated one with a
/// D65 white point (libjxl's enums are H.273's codes), else the ICC profile
/// libjxl gives (not when over THUMBD_ICC_MAX_BYTES: the pixels are then
/// taken as sRGB). The deadline is checked between libjxl's events; the
/// frame's pixels are decoded in one call (libjxl 0.7 has no cancellation
/// hook), so after it the deadline is seen at the first row read.
thumbd_decoder *thumbd_jxl_open(const void *data, size_t length, uint64_t max_pixels, thumbd_deadline deadline,
                                uint32_t *out_width, uint32_t *out_height,
                                int *status, char *message, size_t message_size);
/// THUMBD_GRAY or THUMBD_RGB: the colour space the decoder's profile must
/// describe (a grey image's rows carry R = G = B).
int thumbd_jxl_color_model(const thumbd_decoder *decoder);

/// Lossy JPEG XL (VarDCT, XYB) as a bare codestream: 8-bit sRGB, no
/// metadata; with has_alpha an 8-bit alpha channel (coded with the frame's
/// settings: libjxl 0.7 has no separate alpha distance), else none. distance is
/// butteraugli's (0.1…25), effort libjxl's 1…9. libjxl 0.7's encoder has no
/// progress or cancel hook: the deadline is checked only before it starts.
int thumbd_jxl_encode(const void *rgba, uint32_t width, uint32_t height, int has_alpha, float distance, int effort,
                      thumbd_deadline deadline, void **out, size_t *out_length, char *message, size_t message_size);

#endif
