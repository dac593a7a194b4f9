#define _GNU_SOURCE   // memmem
#include <string.h>
#include "heif_planes.h"

// The chroma format the HEVC streams are coded in (hvcC's chroma_format_idc),
// the largest over every hvcC box: colour items share one, an alpha item is
// monochrome. Asking libheif for more chroma than the primary image has
// makes it upsample first, so a stray match costs memory and time, not a
// wrong picture.
enum heif_chroma thumbd_heif_native_chroma(const uint8_t *data, size_t length) {
    int idc = -1;
    // From one hvcC to the next (memmem), not a comparison at every byte of the file.
    for (size_t i = 4; i + 4 + 17 <= length;) {
        const uint8_t *box = memmem(data + i, length - i, "hvcC", 4);
        if (!box || (size_t)(box - data) + 4 + 17 > length) break;
        i = (size_t)(box - data);
        int found = data[i + 4 + 16] & 3;   // after 16 bytes of profile, level and parallelism fields
        if (found > idc) idc = found;
        i += 1;
    }
    switch (idc) {
    case 0: return heif_chroma_monochrome;
    case 2: return heif_chroma_422;
    case 3: return heif_chroma_444;
    default: return heif_chroma_420;
    }
}

// Describes libheif's planar YCbCr (or monochrome) image as an avifImage
// for libavif's converter, with the matrix and range libheif 1.15's own
// conversion would use: the image's nclx, else full-range BT.601. NULL for
// anything libavif cannot take (other layouts, depths, alpha at another depth).
avifImage *thumbd_heif_borrow_planes(const struct heif_image *image) {
    enum heif_colorspace space = heif_image_get_colorspace(image);
    enum heif_chroma chroma = heif_image_get_chroma_format(image);
    avifPixelFormat format;
    if (space == heif_colorspace_monochrome && chroma == heif_chroma_monochrome) format = AVIF_PIXEL_FORMAT_YUV400;
    else if (space != heif_colorspace_YCbCr) return NULL;
    else if (chroma == heif_chroma_420) format = AVIF_PIXEL_FORMAT_YUV420;
    else if (chroma == heif_chroma_422) format = AVIF_PIXEL_FORMAT_YUV422;
    else if (chroma == heif_chroma_444) format = AVIF_PIXEL_FORMAT_YUV444;
    else return NULL;
    int depth = heif_image_get_bits_per_pixel_range(image, heif_channel_Y);
    if (depth != 8 && depth != 10 && depth != 12) return NULL;
    int has_alpha = heif_image_has_channel(image, heif_channel_Alpha);
    if (has_alpha && heif_image_get_bits_per_pixel_range(image, heif_channel_Alpha) != depth) return NULL;
    avifImage *planes = avifImageCreateEmpty();
    if (!planes) return NULL;
    planes->width = (uint32_t)heif_image_get_width(image, heif_channel_Y);
    planes->height = (uint32_t)heif_image_get_height(image, heif_channel_Y);
    planes->depth = (uint32_t)depth;
    planes->yuvFormat = format;
    planes->yuvRange = AVIF_RANGE_FULL;
    planes->matrixCoefficients = AVIF_MATRIX_COEFFICIENTS_BT601;
    struct heif_color_profile_nclx *nclx = NULL;
    if (heif_image_get_nclx_color_profile(image, &nclx).code == heif_error_Ok && nclx) {
        planes->yuvRange = nclx->full_range_flag ? AVIF_RANGE_FULL : AVIF_RANGE_LIMITED;
        planes->matrixCoefficients = (avifMatrixCoefficients)nclx->matrix_coefficients;
        planes->colorPrimaries = (avifColorPrimaries)nclx->color_primaries;   // for chroma-derived matrices
    }
    if (nclx) heif_nclx_color_profile_free(nclx);
    enum heif_channel channels[3] = { heif_channel_Y, heif_channel_Cb, heif_channel_Cr };
    for (int i = 0; i < (format == AVIF_PIXEL_FORMAT_YUV400 ? 1 : 3); i++) {
        int stride = 0;
        planes->yuvPlanes[i] = (uint8_t *)heif_image_get_plane_readonly(image, channels[i], &stride);
        planes->yuvRowBytes[i] = stride > 0 ? (uint32_t)stride : 0;
        if (!planes->yuvPlanes[i]) { avifImageDestroy(planes); return NULL; }
    }
    planes->imageOwnsYUVPlanes = AVIF_FALSE;
    if (has_alpha) {
        int stride = 0;
        planes->alphaPlane = (uint8_t *)heif_image_get_plane_readonly(image, heif_channel_Alpha, &stride);
        planes->alphaRowBytes = stride > 0 ? (uint32_t)stride : 0;
        planes->imageOwnsAlphaPlane = AVIF_FALSE;
        planes->alphaPremultiplied = heif_image_is_premultiplied_alpha((struct heif_image *)image) ? AVIF_TRUE : AVIF_FALSE;
    }
    return planes;
}
