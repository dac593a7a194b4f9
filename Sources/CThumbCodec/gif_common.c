// The GIF reading both GIF decoders share (gif_common.h).
#include <stdlib.h>
#include <string.h>
#include <gif_lib.h>
#include "decoder.h"
#include "gif_common.h"

// Past the end, a one-byte read (a block size or record type) gets 0: a block
// terminator. So a file whose only flaw is a missing terminator after complete
// image data decodes, while LZW data still needed fails in giflib (an empty
// data block is D_GIF_ERR_IMAGE_DEFECT). Longer reads are never padded, so no
// pixel can be made up.
static int source_read(GifFileType *gif, GifByteType *out, int count) {
    gif_source *src = gif->UserData;
    size_t left = src->length - src->offset;
    if (count <= 0) return 0;
    if (left == 0 && count == 1) { out[0] = 0; return 1; }
    size_t n = (size_t)count < left ? (size_t)count : left;
    memcpy(out, src->data + src->offset, n);
    src->offset += n;
    return (int)n;
}

int thumbd_gif_status(int code, char *message, size_t message_size) {
    const char *text = GifErrorString(code);
    switch (code) {
    case D_GIF_ERR_NOT_ENOUGH_MEM:
        thumbd_set_message(message, message_size, "out of memory decoding GIF");
        return THUMBD_NO_MEMORY;
    case D_GIF_ERR_READ_FAILED:
        thumbd_set_message(message, message_size, "GIF data ends early (truncated)");
        return THUMBD_CORRUPT;
    default:
        thumbd_set_message(message, message_size, text ? text : "undecodable GIF");
        return THUMBD_CORRUPT;
    }
}

void thumbd_gif_close(GifFileType *gif) {
    int ignored;
    if (gif) DGifCloseFile(gif, &ignored);
}

GifFileType *thumbd_gif_open_source(gif_source *src, int *status, char *message, size_t message_size) {
    int error = 0;
    GifFileType *gif = DGifOpen(src, source_read, &error);
    if (!gif) {
        *status = thumbd_gif_status(error, message, message_size);
        return NULL;
    }
    if (gif->SWidth <= 0 || gif->SHeight <= 0) {
        *status = THUMBD_CORRUPT;
        thumbd_set_message(message, message_size, "GIF logical screen has no pixels");
        thumbd_gif_close(gif);
        return NULL;
    }
    *status = THUMBD_OK;
    return gif;
}

