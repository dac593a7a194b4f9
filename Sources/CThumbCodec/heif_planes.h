#ifndef THUMBD_HEIF_PLANES_H
#define THUMBD_HEIF_PLANES_H
// Internal to the shim: libheif's decoded YCbCr planes handed to libavif's
// converter (yuv_bands.c) instead of being converted by libheif.
#include <stddef.h>
#include <stdint.h>
#include <avif/avif.h>
#include <libheif/heif.h>

/// The chroma layout to ask libheif for: the coded one, read from the file's hvcC boxes.
enum heif_chroma thumbd_heif_native_chroma(const uint8_t *data, size_t length);
/// An avifImage borrowing `image`'s planes (destroying it frees none), or NULL
/// for a layout libavif cannot convert. `image` must outlive it.
avifImage *thumbd_heif_borrow_planes(const struct heif_image *image);

#endif
