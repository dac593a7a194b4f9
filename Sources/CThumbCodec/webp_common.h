#ifndef THUMBD_WEBP_COMMON_H
#define THUMBD_WEBP_COMMON_H
// Internal to the shim: what the still WebP decoder (webp.c) and the frame
// reader (webp_anim.c) share.
#include <stddef.h>
#include <stdint.h>
#include <webp/demux.h>

/// The ICCP chunk into a new *profile (the demuxer only points into the
/// caller's bytes); a profile over THUMBD_ICC_MAX_BYTES is left out (ignored,
/// API.md § Output "Colour"). 0 only when the copy could not be allocated.
int thumbd_webp_copy_profile(const WebPDemuxer *demux, uint8_t **profile, size_t *length);

#endif
