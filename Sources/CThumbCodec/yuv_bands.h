#ifndef THUMBD_YUV_BANDS_H
#define THUMBD_YUV_BANDS_H
// Internal to the shim: RGBA8 rows of a decoded YCbCr image (an avifImage,
// whether libavif decoded it or it wraps libheif's planes), converted by
// libavif (libyuv where it can) one band of lines at a time, so no
// full-size RGBA copy of the picture is ever held. A crop and the HEIF
// irot/imir transforms are applied as the rows are copied out.
#include <stddef.h>
#include <stdint.h>
#include <avif/avif.h>

typedef struct {
    const avifImage *image;   // borrowed; its planes must outlive the bands
    avifImage *view;          // a shallow window on image: the band being converted
    avifCropRect crop;        // within image, before rotation
    int transpose;            // output rows are source columns (irot 90° or 270°)
    int flip_x, flip_y;       // source axes read backwards
    avifChromaUpsampling upsampling;   // AUTOMATIC (libyuv's bilinear) unless set after init
    avifBool precise;                  // libavif's own arithmetic instead of libyuv's 6-bit coefficients
    uint32_t out_width, out_height;
    // The band: lines [ready_start, ready_end) along the banded axis (rows, or
    // columns when transposed) are converted; the buffer holds the view
    // [view_start, view_start + view_length), and across it the crop widened
    // from view_across, as an RGBA image.
    uint8_t *buffer;
    size_t buffer_size;
    uint32_t view_start, view_length, view_across, ready_start, ready_end;
    size_t buffer_stride;
} thumbd_yuv_bands;

/// Sets up bands over `image`: `crop` within it (width 0 means the whole
/// image), then `angle`·90° anticlockwise (irot), then `mirror` (imir mode:
/// 0 swaps top and bottom, 1 left and right; -1 none). Returns 0 when out of memory.
int thumbd_yuv_bands_init(thumbd_yuv_bands *bands, const avifImage *image, avifCropRect crop, int angle, int mirror);
/// Writes output rows [first, first + count) as width·4-byte RGBA rows
/// (straight alpha, 255 without an alpha plane). THUMBD_* status.
int thumbd_yuv_bands_rows(thumbd_yuv_bands *bands, uint32_t first, uint32_t count, uint8_t *rows,
                          char *message, size_t message_size);
void thumbd_yuv_bands_free(thumbd_yuv_bands *bands);

#endif
