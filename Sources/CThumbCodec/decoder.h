#ifndef THUMBD_DECODER_H
#define THUMBD_DECODER_H
// Internal to the shim: the common shape of the WebP, GIF and HEIF decoders.
#include <stddef.h>
#include <stdint.h>
#include "thumbd_formats.h"

struct thumbd_decoder {
    uint32_t width, height, next_row;
    // A decoder that holds the whole image sets pixels/stride; rows are copied from it.
    const uint8_t *pixels;
    size_t stride;
    // A streaming decoder sets produce instead: it writes `count` rows of width*4 bytes.
    int (*produce)(thumbd_decoder *d, uint8_t *rows, uint32_t count, char *message, size_t message_size);
    // Frees whatever the format keeps in state (not the decoder itself).
    void (*release)(thumbd_decoder *d);
    void *state;
    thumbd_deadline deadline;   // checked before every batch of rows
    // The file's colour description: an ICC profile copied out of the
    // container (freed on close) and HEIF nclx codes.
    uint8_t *profile;
    size_t profile_length;
    thumbd_nclx nclx;
};

/// Whether the colour description says anything: an ICC profile, or nclx
/// primaries or transfer other than unspecified (0 absent, 2 unspecified).
/// An embedded thumbnail without one takes its primary image's
/// (thumbd_heif_open_thumbnail): libheif writes AVIF thumbnails an nclx box
/// of 2/2/6, which only says how to convert their YCbCr.
static inline int thumbd_decoder_has_color(const thumbd_decoder *d) {
    return d->profile_length > 0 || (d->nclx.primaries != 0 && d->nclx.primaries != 2)
        || (d->nclx.transfer != 0 && d->nclx.transfer != 2);
}

/// A zeroed decoder, or NULL with THUMBD_NO_MEMORY reported.
thumbd_decoder *thumbd_decoder_new(int *status, char *message, size_t message_size);
/// Copies a message into a caller's buffer, always terminated.
void thumbd_set_message(char *to, size_t size, const char *from);

#endif
