#ifndef THUMBD_GIF_COMMON_H
#define THUMBD_GIF_COMMON_H
// Internal to the shim: what the still GIF decoder (gif.c) and the frame
// reader (gif_anim.c) share — reading from memory, opening, status codes.
#include <stddef.h>
#include <stdint.h>
#include <gif_lib.h>

/// The caller's bytes, read from the start by giflib through a callback.
typedef struct {
    const uint8_t *data;
    size_t length;
    size_t offset;
} gif_source;

/// DGifOpen over `src` (which must outlive the file), refusing a screen
/// without pixels. NULL with *status and message set on failure.
GifFileType *thumbd_gif_open_source(gif_source *src, int *status, char *message, size_t message_size);
/// giflib's error code as a THUMBD_* status with a message.
int thumbd_gif_status(int code, char *message, size_t message_size);
/// DGifCloseFile, ignoring its error; NULL is allowed.
void thumbd_gif_close(GifFileType *gif);

#endif
