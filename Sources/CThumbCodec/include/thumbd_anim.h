#ifndef THUMBD_ANIM_H
#define THUMBD_ANIM_H
// Animations (SPEC §14): frame-by-frame readers of animated GIF (giflib) and
// animated WebP (libwebpdemux's WebPAnimDecoder), and the animated WebP
// encoder (libwebpmux's WebPAnimEncoder). None of these libraries longjmps;
// the shim turns their failures into THUMBD_* codes with a message, as for
// the still decoders.
//
// Memory is one composited canvas at a time: a reader holds the canvas (and
// the previous canvas where a disposal needs it), never every frame.
#include "thumbd_codec.h"

// MARK: Frame readers

/// One animation being read: open, then `thumbd_anim_next` for each frame.
typedef struct thumbd_anim thumbd_anim;

/// An animated GIF's frames composited on its logical screen (*width ×
/// *height), which starts transparent. Disposal 2 (background) clears the
/// frame's rectangle to transparent, as browsers do; 3 (previous), and 4 as
/// browsers read it, restores what was under the frame; 0, 1 and 5–7 leave it.
/// A frame larger than max_pixels (its own width·height) is THUMBD_TOO_LARGE
/// when reached, as the probe says of the first.
thumbd_anim *thumbd_gif_anim_open(const void *data, size_t length, uint64_t max_pixels,
                                  uint32_t *width, uint32_t *height, int *status, char *message, size_t message_size);
/// An animated WebP's frames as WebPAnimDecoder composites them (blending and
/// disposal, transparent canvas, one thread). A canvas over max_pixels is
/// THUMBD_TOO_LARGE. The data must stay valid until close.
thumbd_anim *thumbd_webp_anim_open(const void *data, size_t length, uint64_t max_pixels,
                                   uint32_t *width, uint32_t *height, int *status, char *message, size_t message_size);
/// The next frame: *canvas gets width·height RGBA8 pixels (straight alpha, no
/// padding; valid until the next call or close) and *duration_ms how long it
/// shows (a GIF delay under 20 ms is 100 ms, as browsers show it). At the end
/// *canvas is NULL and THUMBD_OK returned. Damage after at least one whole
/// frame (a truncated file, junk instead of a block, a frame that does not
/// decode) ends the animation there rather than failing it.
/// The deadline is checked before each frame and, for GIF, at every row.
int thumbd_anim_next(thumbd_anim *anim, thumbd_deadline deadline, const uint8_t **canvas, int32_t *duration_ms,
                     char *message, size_t message_size);
/// A WebP's `ICCP` profile (*length 0 when absent or over 4 MiB; owned by the
/// reader). GIF carries none.
void thumbd_anim_profile(const thumbd_anim *anim, const void **profile, size_t *length);
void thumbd_anim_close(thumbd_anim *anim);

// MARK: Animated WebP encoder

typedef struct thumbd_webp_anim_encoder thumbd_webp_anim_encoder;

/// Lossy frames at quality 0…100 (alpha kept losslessly, as the still WebP
/// encoder does), no key frames forced, a transparent background hint, and
/// `loop_count` in WebP's meaning (0 = forever, n = played n times).
thumbd_webp_anim_encoder *thumbd_webp_anim_encoder_new(uint32_t width, uint32_t height, int quality, int loop_count,
                                                       int *status, char *message, size_t message_size);
/// Adds one width·height RGBA8 frame shown for duration_ms (0 stays 0).
/// libwebp's progress hook checks the deadline while it encodes.
int thumbd_webp_anim_encoder_add(thumbd_webp_anim_encoder *encoder, const void *rgba, int32_t duration_ms,
                                 thumbd_deadline deadline, char *message, size_t message_size);
/// Assembles the file after the last frame; *out is malloc'd (thumbd_free).
/// The encoder's own frames are released before the copy is made.
int thumbd_webp_anim_encoder_finish(thumbd_webp_anim_encoder *encoder, void **out, size_t *out_length,
                                    char *message, size_t message_size);
void thumbd_webp_anim_encoder_free(thumbd_webp_anim_encoder *encoder);

#endif
