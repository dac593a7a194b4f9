#ifndef THUMBD_CODEC_H
#define THUMBD_CODEC_H
// Every call into libjpeg and libpng that can fail goes through this shim:
// both libraries report fatal errors with longjmp, which must never cross a
// Swift frame. Each function below owns its setjmp and returns a status code
// with a message instead. Types are plain C so Swift needs no library headers.
#include <stddef.h>
#include <stdint.h>

/// Status codes of every shim call.
enum {
    THUMBD_OK = 0,
    THUMBD_CORRUPT = 1,       // truncated or undecodable data (422 corrupt_image)
    THUMBD_UNSUPPORTED = 2,   // a variant we do not decode: 12-bit, lossless (415)
    THUMBD_NO_MEMORY = 3,
    THUMBD_FAILED = 4,        // anything else, e.g. an encoder error
    THUMBD_TOO_LARGE = 5,     // the header declares more than the caller's pixel limit (422 image_too_large)
    THUMBD_DEADLINE = 6,      // the render's deadline passed; the work was abandoned (Configuration.md maxRenderSeconds)
};

/// When a render must stop: decoders and encoders check it at every row, scan
/// or encoder callback the library offers and give up with THUMBD_DEADLINE.
/// Monotonic clock nanoseconds; 0 means no deadline. Passed by value.
typedef struct {
    int64_t not_after_ns;
} thumbd_deadline;

/// A deadline `nanoseconds` from now (CLOCK_MONOTONIC); 0 or less is already past.
thumbd_deadline thumbd_deadline_in(int64_t nanoseconds);
/// Whether the deadline has passed (never for a zero deadline).
int thumbd_deadline_passed(thumbd_deadline deadline);

/// Largest number of scans a progressive JPEG may have (libjpeg-turbo's advice,
/// as `djpeg -maxscans`): the 101st scan is corrupt (Configuration.md).
#define THUMBD_JPEG_MAX_SCANS 100

/// Colour models a header can declare.
enum { THUMBD_GRAY = 1, THUMBD_RGB = 2, THUMBD_YCC = 3, THUMBD_CMYK = 4, THUMBD_YCCK = 5, THUMBD_OTHER = 6 };

/// What a header probe reads without decoding pixels.
typedef struct {
    uint32_t width;
    uint32_t height;
    int32_t components;     // JPEG components; PNG channels after expansion
    int32_t color_model;    // THUMBD_GRAY…
    int32_t orientation;    // EXIF 1…8, 1 when absent
    int32_t has_alpha;      // PNG with an alpha channel or tRNS
    int32_t progressive;    // JPEG progressive, or PNG Adam7 interlaced
    int32_t arithmetic;     // JPEG arithmetic coding
    int32_t max_h_samp;     // JPEG: largest sampling factors (for memory estimates)
    int32_t max_v_samp;
    int32_t bit_depth;      // PNG bit depth; HEIF/AVIF luma bits
    int32_t animated;       // WebP with an ANIM chunk (its first frame is decoded)
    int32_t lossless;       // WebP VP8L (decoded through a whole-image ARGB buffer)
} thumbd_image_info;

/// An embedded ICC profile checked against the pixels it describes (see
/// "Colour profiles" below).
typedef struct thumbd_icc thumbd_icc;

/// Reads the EXIF orientation from a TIFF structure ("II*\0…" or "MM\0*…"):
/// IFD0 tag 0x0112. Returns 1 when absent or malformed. Pure parsing, bounded.
int thumbd_exif_orientation(const void *tiff, size_t length);

// MARK: JPEG

/// Parses a JPEG's header and Exif APP1 without decoding any scan.
int thumbd_jpeg_probe(const void *data, size_t length, thumbd_image_info *info, char *message, size_t message_size);

/// An incremental JPEG decode: open, read rows in batches, close.
typedef struct thumbd_jpeg_decoder thumbd_jpeg_decoder;

/// Starts decoding at scale_num/8 (1…8) to RGBA8 rows. *out_width/*out_height
/// receive the scaled size. On failure the decoder is closed and NULL returned.
/// A progressive file decoded at a reduced scale skips the scans whose
/// coefficients the scaled IDCT never reads (at 1/8 every AC scan but a
/// 4:2:0 file's chroma): the same pixels and the same answers for truncated
/// or hostile files, except that damage inside a skipped scan's data that a
/// full decode reports as "premature end of data segment" goes unseen.
thumbd_jpeg_decoder *thumbd_jpeg_open(const void *data, size_t length, int scale_num, thumbd_deadline deadline,
                                      uint32_t *out_width, uint32_t *out_height,
                                      int *status, char *message, size_t message_size);
/// thumbd_jpeg_open decoding every scan, as before the skipping existed: for
/// tests and benchmarks that compare the two.
thumbd_jpeg_decoder *thumbd_jpeg_open_every_scan(const void *data, size_t length, int scale_num, thumbd_deadline deadline,
                                                 uint32_t *out_width, uint32_t *out_height,
                                                 int *status, char *message, size_t message_size);
/// Scans libjpeg decoded, and scans the file has (they differ when scans were skipped).
void thumbd_jpeg_scan_counts(const thumbd_jpeg_decoder *decoder, int *decoded, int *in_file);
/// Reads up to max_rows rows of width*4 bytes into rows; *rows_read gets how many.
int thumbd_jpeg_read(thumbd_jpeg_decoder *decoder, void *rows, uint32_t max_rows, uint32_t *rows_read,
                     char *message, size_t message_size);
void thumbd_jpeg_close(thumbd_jpeg_decoder *decoder);
/// The embedded ICC profile (APP2 ICC_PROFILE segments joined in sequence
/// order; *length 0 when absent, malformed or over 4 MiB; owned by the
/// decoder), the colour model it must describe (THUMBD_GRAY, THUMBD_RGB,
/// THUMBD_CMYK, or 0 when no profile applies) and whether CMYK is stored
/// inverted (Adobe).
void thumbd_jpeg_color(const thumbd_jpeg_decoder *decoder, const void **profile, size_t *length,
                       int *model, int *cmyk_inverted);
/// CMYK/YCCK files: convert rows with this profile's transform instead of the
/// naive inversion. The decoder borrows icc; keep it open until closing.
void thumbd_jpeg_use_cmyk_profile(thumbd_jpeg_decoder *decoder, thumbd_icc *icc);

/// Quantization tables a JPEG can be written with, both scaled by libjpeg's
/// quality (jpeg_quality_scaling) and clamped to baseline's 1…255.
enum {
    /// ITU T.81 Annex K's luminance and chrominance tables (libjpeg's own).
    THUMBD_JPEG_TABLE_ANNEX_K = 0,
    /// N. Robidoux's table (ImageMagick's proposal, MozJPEG's default) for both planes.
    THUMBD_JPEG_TABLE_ROBIDOUX = 1,
};

/// How a JPEG is written (JPEGEncoder.Settings): libjpeg's quality 1…100,
/// progressive (jpeg_simple_progression) or baseline, 4:4:4 or 4:2:0, a table above.
typedef struct {
    int quality;
    int progressive;
    int yuv444;
    int table;
} thumbd_jpeg_settings;

/// Encodes RGBA8 pixels (alpha ignored) as a JFIF JPEG with optimized Huffman tables.
/// *out receives a malloc'd buffer the caller frees with thumbd_free.
int thumbd_jpeg_encode(const void *rgba, uint32_t width, uint32_t height, const thumbd_jpeg_settings *settings,
                       thumbd_deadline deadline, void **out, size_t *out_length, char *message, size_t message_size);

// MARK: PNG

/// Largest PNG side libpng is allowed to read (png_set_user_limits); the same
/// bound ImageDecoder.probe puts on every format.
#define THUMBD_MAX_SIDE (1u << 20)
/// Bytes libpng may allocate for one ancillary chunk or decompressed text/iCCP.
#define THUMBD_PNG_CHUNK_MAX (4u * 1024u * 1024u)

/// Parses a PNG's IHDR (and eXIf, tRNS) without inflating image data. A side
/// over THUMBD_MAX_SIDE is THUMBD_TOO_LARGE (width and height filled in).
int thumbd_png_probe(const void *data, size_t length, thumbd_image_info *info, char *message, size_t message_size);

typedef struct thumbd_png_decoder thumbd_png_decoder;

/// Starts decoding to RGBA8 rows (gamma chunks ignored, 16-bit keeps the high byte).
/// The data is read up to the last image row and no further (API.md § Output
/// "Strictness"): every chunk before it must have a good CRC; compressed data
/// after the last row and the chunks after it are never read or inflated.
/// Ancillary chunks: text chunks (tEXt, zTXt, iTXt) are skipped unread but for
/// their CRC; any other is held in memory only up to THUMBD_PNG_CHUNK_MAX bytes
/// (larger ones are skipped), a decompressed iCCP likewise, and at most 256
/// ancillary chunks are kept.
thumbd_png_decoder *thumbd_png_open(const void *data, size_t length, thumbd_deadline deadline, uint32_t *out_width, uint32_t *out_height,
                                    int *status, char *message, size_t message_size);
int thumbd_png_read(thumbd_png_decoder *decoder, void *rows, uint32_t max_rows, uint32_t *rows_read,
                    char *message, size_t message_size);
void thumbd_png_close(thumbd_png_decoder *decoder);
/// The iCCP profile, decompressed (*length 0 when absent or rejected by
/// libpng: over 4 MiB, bad zlib data, colour space not the image's; owned by
/// the decoder) and the colour model it must describe (THUMBD_GRAY or THUMBD_RGB).
void thumbd_png_color(const thumbd_png_decoder *decoder, const void **profile, size_t *length, int *model);

/// Encodes RGBA8 pixels as 8-bit RGB (has_alpha 0) or RGBA PNG.
int thumbd_png_encode(const void *rgba, uint32_t width, uint32_t height, int has_alpha, thumbd_deadline deadline,
                      void **out, size_t *out_length, char *message, size_t message_size);

// MARK: zlib (structure walks)

/// Bytes the zlib stream in `data` inflates to, counted through a small
/// scratch buffer (nothing is kept); counting stops once it passes `limit`
/// (the result is then over `limit`) and at bad or truncated data (the
/// result is what inflated before it).
size_t thumbd_inflated_length(const void *data, size_t length, size_t limit);

// MARK: Colour profiles (Little CMS 2)

/// Profiles larger than this are ignored (API.md § Output).
#define THUMBD_ICC_MAX_BYTES (4u * 1024u * 1024u)

/// How a usable profile is applied.
enum {
    THUMBD_ICC_MATRIX_SHAPER = 1,  // tone curves + 3×3 matrix: the imaging layer applies them
    THUMBD_ICC_TRANSFORM = 2,      // anything else: a full lcms2 transform of every row
};

/// Parses an ICC profile for pixels of colour model `model` (THUMBD_GRAY,
/// THUMBD_RGB or THUMBD_CMYK; `cmyk_inverted` for Adobe CMYK). Returns NULL,
/// with the reason in message, when the profile must be ignored: over 4 MiB,
/// unparsable, of another colour space, or unusable by lcms2.
thumbd_icc *thumbd_icc_open(const void *profile, size_t length, int model, int cmyk_inverted,
                            char *message, size_t message_size);
/// THUMBD_ICC_MATRIX_SHAPER or THUMBD_ICC_TRANSFORM.
int thumbd_icc_kind(const thumbd_icc *icc);
/// Matrix/shaper only. curves: 3×256 floats (R, G, B tables: 8-bit sample →
/// linear light 0…1). matrix: 9 floats, row-major, source linear RGB → linear
/// sRGB (identity for gray profiles).
void thumbd_icc_matrix_shaper(const thumbd_icc *icc, float *curves, float *matrix);
/// Transform only, gray or RGB profiles: converts RGBA8 pixels (gray as
/// R = G = B) to sRGB in place, perceptual intent; alpha is kept.
void thumbd_icc_convert_rgba(thumbd_icc *icc, void *rgba, size_t pixels);
/// Transform only, CMYK profiles: CMYK8 pixels → RGBA8 sRGB, alpha 255.
void thumbd_icc_convert_cmyk(thumbd_icc *icc, const void *cmyk, void *rgba, size_t pixels);
/// Releases one reference: opened profiles are shared through a small cache
/// of built transforms (keyed by the profile's bytes, model and inversion),
/// so a profile seen again costs a lookup, not a transform build.
void thumbd_icc_close(thumbd_icc *icc);
/// How many profiles the cache holds and how many opens it answered (for tests).
void thumbd_icc_cache_counts(size_t *entries, uint64_t *hits, uint64_t *misses);

/// An ISO/IEC 23091-2 (H.273) colour description: HEIF's `colr` box of type
/// `nclx`. Codes as in H.273; 0 when absent.
typedef struct {
    int primaries;   // 1 BT.709, 9 BT.2020, 11 DCI-P3, 12 Display P3 (EG 432-1), …
    int transfer;    // 1/6/14/15 BT.709 family, 13 sRGB, 16 PQ, 18 HLG, …
} thumbd_nclx;

/// Curves and matrix (same layout as thumbd_icc_matrix_shaper) that take
/// samples described by `nclx` to linear sRGB. Returns 0 when the samples are
/// sRGB already (BT.709 primaries with an sRGB-like transfer, or primaries the
/// shim does not know): nothing to convert.
int thumbd_nclx_matrix_shaper(const thumbd_nclx *nclx, float *curves, float *matrix);

/// Frees a buffer an encoder returned.
void thumbd_free(void *buffer);

/// Library versions, for `thumbd --version`.
const char *thumbd_codec_versions(void);

#endif
