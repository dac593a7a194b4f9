#ifndef THUMBD_ANIM_INTERNAL_H
#define THUMBD_ANIM_INTERNAL_H
// Internal to the shim: the common shape of the GIF and WebP frame readers.
#include <stddef.h>
#include <stdint.h>
#include "thumbd_anim.h"

struct thumbd_anim {
    uint32_t width, height;
    uint32_t frames;   // frames handed out so far
    // Composites the next frame (see thumbd_anim_next); *canvas NULL at the end.
    int (*next)(thumbd_anim *a, thumbd_deadline deadline, const uint8_t **canvas, int32_t *duration_ms,
                char *message, size_t message_size);
    // Frees whatever the format keeps in state (not the reader itself).
    void (*release)(thumbd_anim *a);
    void *state;
    uint8_t *profile;   // a copied ICC profile, freed on close
    size_t profile_length;
};

/// A zeroed reader with a zeroed format state of `state_size` bytes and the
/// format's two functions, or NULL (nothing allocated) with THUMBD_NO_MEMORY
/// reported.
thumbd_anim *thumbd_anim_new(size_t state_size,
                             int (*next)(thumbd_anim *, thumbd_deadline, const uint8_t **, int32_t *, char *, size_t),
                             void (*release)(thumbd_anim *), int *status, char *message, size_t message_size);

#endif
