#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "decoder.h"

static int64_t monotonic_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

thumbd_deadline thumbd_deadline_in(int64_t nanoseconds) {
    // Never 0 (that means "none"): a deadline already past is at least 1 ns.
    int64_t now = monotonic_ns();
    int64_t at = nanoseconds <= 0 ? now : nanoseconds >= INT64_MAX - now ? INT64_MAX : now + nanoseconds;
    thumbd_deadline deadline = { at > 0 ? at : 1 };
    return deadline;
}

int thumbd_deadline_passed(thumbd_deadline deadline) {
    return deadline.not_after_ns != 0 && monotonic_ns() >= deadline.not_after_ns;
}

void thumbd_set_message(char *to, size_t size, const char *from) {
    if (to && size) { strncpy(to, from, size - 1); to[size - 1] = 0; }
}

thumbd_decoder *thumbd_decoder_new(int *status, char *message, size_t message_size) {
    thumbd_decoder *d = calloc(1, sizeof *d);
    if (!d) {
        *status = THUMBD_NO_MEMORY;
        thumbd_set_message(message, message_size, "out of memory");
    }
    return d;
}

int thumbd_decoder_read(thumbd_decoder *d, void *rows, uint32_t max_rows, uint32_t *rows_read,
                        char *message, size_t message_size) {
    *rows_read = 0;
    uint32_t count = d->height - d->next_row < max_rows ? d->height - d->next_row : max_rows;
    if (count == 0) return THUMBD_OK;
    if (thumbd_deadline_passed(d->deadline)) {
        thumbd_set_message(message, message_size, "render deadline passed");
        return THUMBD_DEADLINE;
    }
    if (d->produce) {
        int status = d->produce(d, rows, count, message, message_size);
        if (status != THUMBD_OK) return status;
    } else {
        size_t row_bytes = (size_t)d->width * 4;
        for (uint32_t i = 0; i < count; i++)
            memcpy((uint8_t *)rows + i * row_bytes, d->pixels + (size_t)(d->next_row + i) * d->stride, row_bytes);
    }
    d->next_row += count;
    *rows_read = count;
    return THUMBD_OK;
}

void thumbd_decoder_set_deadline(thumbd_decoder *d, thumbd_deadline deadline) { d->deadline = deadline; }

void thumbd_decoder_close(thumbd_decoder *d) {
    if (!d) return;
    if (d->release) d->release(d);
    free(d->profile);
    free(d);
}

void thumbd_decoder_color(const thumbd_decoder *d, const void **profile, size_t *length, thumbd_nclx *nclx) {
    *profile = d->profile;
    *length = d->profile ? d->profile_length : 0;
    *nclx = d->nclx;
}
