#ifndef THUMBD_FORMATS_H
#define THUMBD_FORMATS_H
// WebP (libwebp), GIF (giflib), HEIC (libheif), AVIF (libavif) decoders and the WebP and
// AVIF encoders. None of these libraries longjmps; they report errors by
// return value, which the shim turns into THUMBD_* codes with a message.
// Every probe takes the caller's pixel limit and answers THUMBD_TOO_LARGE
// (width and height filled in) before anything proportional to the image is
// allocated.
#include "thumbd_codec.h"

// MARK: Probes

/// WebP header and chunk walk: canvas size, alpha, animation, EXIF orientation.
int thumbd_webp_probe(const void *data, size_t length, uint64_t max_pixels, thumbd_image_info *info,
                      char *message, size_t message_size);
/// GIF screen descriptor and first frame's descriptor: size is the logical screen.
int thumbd_gif_probe(const void *data, size_t length, uint64_t max_pixels, thumbd_image_info *info,
                     char *message, size_t message_size);
/// HEIF primary image: size after irot/imir/clap, alpha, bit depth. Orientation is always 1.
/// For files whose images are all HEVC (the structure walk decides: ISOBMFFLayout).
int thumbd_heif_probe(const void *data, size_t length, uint64_t max_pixels, thumbd_image_info *info,
                      char *message, size_t message_size);
/// AVIF primary item (else the first frame of an image sequence), parsed by
/// libavif without decoding AV1: the same answers as thumbd_heif_probe. For
/// every AVIF or HEIF file that is not all HEVC.
int thumbd_avif_probe(const void *data, size_t length, uint64_t max_pixels, thumbd_image_info *info,
                      char *message, size_t message_size);

// MARK: Decoders

/// One decode of a WebP, GIF or HEIF source to RGBA8 rows (straight alpha), read
/// in batches with thumbd_decoder_read like the JPEG and PNG decoders.
typedef struct thumbd_decoder thumbd_decoder;

/// scale_num/8 as for JPEG (output ceil(side·scale_num/8)); honoured for still
/// opaque images only, whose produced size *out_width/*out_height report.
thumbd_decoder *thumbd_webp_open(const void *data, size_t length, int scale_num,
                                 uint32_t *out_width, uint32_t *out_height,
                                 int *status, char *message, size_t message_size);
thumbd_decoder *thumbd_gif_open(const void *data, size_t length, uint32_t *out_width, uint32_t *out_height,
                                int *status, char *message, size_t message_size);
/// max_pixels: the same limit the probe was given (it bounds libheif's per-item size check).
/// libheif's start-up (heif_init: its codecs and any plugins it loads), at
/// most once per process; its decoder calls it too. A sandboxed worker calls
/// it before its filter forbids opening files.
void thumbd_heif_start(void);

/// The most threads a job's grid tiles decode on (libheif 1.15's
/// heif_context_set_max_decoding_threads; RenderQueue lends a job idle workers).
#define THUMBD_HEIF_MAX_TILE_THREADS 4

/// tile_threads: threads libheif may decode a grid's tiles on (1 or less: the
/// calling thread alone; thumbd gives at most 4, THUMBD_HEIF_MAX_TILE_THREADS).
thumbd_decoder *thumbd_heif_open(const void *data, size_t length, uint64_t max_pixels, int tile_threads,
                                 uint32_t *out_width, uint32_t *out_height,
                                 int *status, char *message, size_t message_size);
/// The AVIF counterpart (libavif, one thread; max_pixels also bounds the AV1
/// frame dav1d will allocate). clap, irot and imir are applied.
thumbd_decoder *thumbd_avif_open(const void *data, size_t length, uint64_t max_pixels,
                                 uint32_t *out_width, uint32_t *out_height,
                                 int *status, char *message, size_t message_size);
/// A thumbnail item of the primary image (`thmb`), as the structure walk
/// found it, to decode instead of the primary (API.md § Formats read,
/// "Embedded thumbnails").
typedef struct {
    uint32_t item;
    /// Its size after its own irot: the decode must produce exactly this.
    uint32_t width, height;
    /// AVIF only (libavif reads no thumbnail item): the file is read as if
    /// `pitm` named this item and its `thmb` reference had another type —
    /// the meta box (header included) and the two fields inside it, the
    /// item ID being primary_id_size (2 or 4) bytes.
    uint64_t meta_offset, meta_length, primary_id_offset, reference_type_offset;
    uint32_t primary_id_size;
} thumbd_thumbnail;

/// The thumbnail instead of the primary, decoded by libheif as the primary
/// is by thumbd_heif_open (its own irot/imir, its alpha plane). Its colour
/// description is its own `colr` when that says anything (an ICC profile,
/// or nclx primaries or transfer other than unspecified), else the
/// primary's. An error when libheif does not list it as a thumbnail of the
/// primary or when it decodes to another size; the caller then decodes the
/// primary. max_pixels as for the primary.
thumbd_decoder *thumbd_heif_open_thumbnail(const void *data, size_t length, uint64_t max_pixels, int tile_threads,
                                           const thumbd_thumbnail *thumbnail, uint32_t *out_width,
                                           uint32_t *out_height, int *status, char *message, size_t message_size);
/// The AVIF counterpart: libavif decodes the thumbnail as its primary image
/// (its own clap/irot/imir, its alpha plane), through a read of the file
/// whose meta box is a patched copy. Colour as for thumbd_heif_open_thumbnail.
thumbd_decoder *thumbd_avif_open_thumbnail(const void *data, size_t length, uint64_t max_pixels,
                                           const thumbd_thumbnail *thumbnail, uint32_t *out_width,
                                           uint32_t *out_height, int *status, char *message, size_t message_size);
/// Rows read after this answer THUMBD_DEADLINE once the deadline has passed.
/// WebP, HEIF and AVIF decode the whole image inside open (libwebp's one-shot
/// decode, libheif 1.15 and libavif 0.11 have no cancellation hook), so for
/// them the deadline is seen at the first row read after open.
void thumbd_decoder_set_deadline(thumbd_decoder *decoder, thumbd_deadline deadline);
int thumbd_decoder_read(thumbd_decoder *decoder, void *rows, uint32_t max_rows, uint32_t *rows_read,
                        char *message, size_t message_size);
void thumbd_decoder_close(thumbd_decoder *decoder);
/// The colour description the file carries (API.md § Output "Colour"): an ICC
/// profile for RGB pixels (WebP `ICCP`, HEIF `colr` `prof`/`rICC`; *length 0
/// when absent or over 4 MiB; owned by the decoder) and HEIF's `nclx` codes
/// (HEIC: zero when absent; AVIF: the AV1 sequence header's when absent).
void thumbd_decoder_color(const thumbd_decoder *decoder, const void **profile, size_t *length, thumbd_nclx *nclx);

// MARK: Encoders

/// How a lossy WebP is written (WebPEncoder.Settings); -1 in a field marked
/// so keeps WEBP_PRESET_DEFAULT's value.
typedef struct {
    float quality;          // 0…100
    int method;             // 0 (fastest) … 6
    int filter_strength;    // 0…100, or -1
    int filter_sharpness;   // 0…7
    int sns_strength;       // 0…100, or -1
    int segments;           // 1…4, or -1
    int sharp_yuv;          // libwebp's use_sharp_yuv: RGB→YUV by iteration, sharper chroma edges
} thumbd_webp_settings;

/// Lossy WebP; with has_alpha the alpha plane is kept losslessly.
/// libwebp's progress hook checks the deadline.
int thumbd_webp_encode(const void *rgba, uint32_t width, uint32_t height, int has_alpha,
                       const thumbd_webp_settings *settings, thumbd_deadline deadline,
                       void **out, size_t *out_length, char *message, size_t message_size);

/// AV1 encoders libavif 0.11 may be built with (Debian's has all three).
enum { THUMBD_AV1_AOM = 0, THUMBD_AV1_RAV1E = 2 };

/// How an AVIF is written (AVIFEncoder.Settings).
typedef struct {
    int quantizer;          // colour: min = max quantizer, 0…63
    int alpha_quantizer;    // 0 (lossless) … 63
    int speed;              // libavif's 0…10
    int yuv444;             // 4:4:4 instead of 4:2:0
    int codec;              // THUMBD_AV1_*
    /// aom only: quantizer becomes aom's cq-level in its constant-quality mode
    /// with quantizers 0…63 allowed, so that aom may vary it per block.
    int adaptive_quantizer;
    /// Codec-specific options as "key=value" pairs separated by ';' (libavif's
    /// avifEncoderSetCodecSpecificOption; aom takes aomenc's long option names), or NULL.
    const char *options;
} thumbd_avif_settings;

/// 8-bit AVIF (sRGB, BT.601 full range). libavif 0.11 has no progress or
/// cancel hook: the deadline is checked only before encoding starts.
int thumbd_avif_encode(const void *rgba, uint32_t width, uint32_t height, int has_alpha,
                       const thumbd_avif_settings *settings, thumbd_deadline deadline,
                       void **out, size_t *out_length, char *message, size_t message_size);

#endif
