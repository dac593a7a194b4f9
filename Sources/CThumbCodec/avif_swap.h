#ifndef THUMBD_AVIF_SWAP_H
#define THUMBD_AVIF_SWAP_H
// Internal to the shim: the reader through which libavif decodes a thumbnail
// item as if it were the primary image (avif_swap.c).
#include <stddef.h>
#include <avif/avif.h>
#include "thumbd_formats.h"

/// An avifIO over `data` (which must outlive it) that serves the meta box
/// from a patched copy; avifDecoderSetIO takes it over. NULL when the
/// thumbnail's fields do not lie inside the meta box, or out of memory.
avifIO *thumbd_avif_swap_reader(const void *data, size_t length, const thumbd_thumbnail *thumbnail);

#endif
