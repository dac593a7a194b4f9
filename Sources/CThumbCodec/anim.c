// What both frame readers share (anim.h): the deadline between frames, the
// "damage after a whole frame ends the animation" rule, and closing.
#include <stdlib.h>
#include "anim.h"
#include "decoder.h"

thumbd_anim *thumbd_anim_new(size_t state_size,
                             int (*next)(thumbd_anim *, thumbd_deadline, const uint8_t **, int32_t *, char *, size_t),
                             void (*release)(thumbd_anim *), int *status, char *message, size_t message_size) {
    thumbd_anim *a = calloc(1, sizeof *a);
    void *state = a ? calloc(1, state_size) : NULL;
    if (!state) {
        free(a);
        *status = THUMBD_NO_MEMORY;
        thumbd_set_message(message, message_size, "out of memory");
        return NULL;
    }
    a->state = state;
    a->next = next;
    a->release = release;
    return a;
}

int thumbd_anim_next(thumbd_anim *a, thumbd_deadline deadline, const uint8_t **canvas, int32_t *duration_ms,
                     char *message, size_t message_size) {
    *canvas = NULL;
    *duration_ms = 0;
    if (thumbd_deadline_passed(deadline)) {
        thumbd_set_message(message, message_size, "render deadline passed");
        return THUMBD_DEADLINE;
    }
    int status = a->next(a, deadline, canvas, duration_ms, message, message_size);
    // Browsers show the frames before a damaged one; so does thumbd, as long
    // as there is one (the first frame's damage is the still decoder's
    // corrupt_image). Limits, memory and the deadline still fail the render.
    if (status == THUMBD_CORRUPT && a->frames > 0) {
        *canvas = NULL;
        return THUMBD_OK;
    }
    if (status == THUMBD_OK && *canvas) a->frames++;
    return status;
}

void thumbd_anim_profile(const thumbd_anim *a, const void **profile, size_t *length) {
    *profile = a->profile;
    *length = a->profile ? a->profile_length : 0;
}

void thumbd_anim_close(thumbd_anim *a) {
    if (!a) return;
    if (a->release) a->release(a);
    free(a->profile);
    free(a);
}
