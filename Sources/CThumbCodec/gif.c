#include <stdlib.h>
#include <string.h>
#include <gif_lib.h>
#include "decoder.h"
#include "gif_common.h"

// giflib reports errors by code (no longjmp). Only the first frame is read,
// composited onto a transparent canvas of the logical screen size (API.md § Output),
// streamed row by row; an interlaced frame is held as palette indices.

// Reads records up to the first image descriptor. *transparent receives the
// transparent index of the last graphic control extension before it, or -1.
static int walk_to_image(GifFileType *gif, int *transparent, char *message, size_t message_size) {
    *transparent = NO_TRANSPARENT_COLOR;
    for (;;) {
        GifRecordType type;
        if (DGifGetRecordType(gif, &type) == GIF_ERROR) return thumbd_gif_status(gif->Error, message, message_size);
        if (type == IMAGE_DESC_RECORD_TYPE) {
            if (DGifGetImageDesc(gif) == GIF_ERROR) return thumbd_gif_status(gif->Error, message, message_size);
            if (gif->Image.Width <= 0 || gif->Image.Height <= 0) {
                thumbd_set_message(message, message_size, "GIF frame has no pixels");
                return THUMBD_CORRUPT;
            }
            if (!gif->Image.ColorMap && !gif->SColorMap) {
                thumbd_set_message(message, message_size, "GIF frame has no colour table");
                return THUMBD_CORRUPT;
            }
            return THUMBD_OK;
        }
        if (type == TERMINATE_RECORD_TYPE) {
            thumbd_set_message(message, message_size, "GIF has no image");
            return THUMBD_CORRUPT;
        }
        if (type != EXTENSION_RECORD_TYPE) continue;   // UNDEFINED_RECORD_TYPE never comes back without an error
        int code;
        GifByteType *block;
        if (DGifGetExtension(gif, &code, &block) == GIF_ERROR) return thumbd_gif_status(gif->Error, message, message_size);
        if (code == GRAPHICS_EXT_FUNC_CODE && block && block[0] >= 4) {
            GraphicsControlBlock gcb;
            if (DGifExtensionToGCB(block[0], block + 1, &gcb) == GIF_OK) *transparent = gcb.TransparentColor;
        }
        while (block) {
            if (DGifGetExtensionNext(gif, &block) == GIF_ERROR) return thumbd_gif_status(gif->Error, message, message_size);
        }
    }
}

int thumbd_gif_probe(const void *data, size_t length, uint64_t max_pixels, thumbd_image_info *info,
                     char *message, size_t message_size) {
    memset(info, 0, sizeof *info);
    gif_source src = { data, length, 0 };
    int status;
    GifFileType *gif = thumbd_gif_open_source(&src, &status, message, message_size);
    if (!gif) return status;
    info->width = (uint32_t)gif->SWidth;
    info->height = (uint32_t)gif->SHeight;
    info->components = 4;
    info->color_model = THUMBD_OTHER;
    info->orientation = 1;
    info->bit_depth = 8;
    if ((uint64_t)info->width * info->height > max_pixels) {
        thumbd_gif_close(gif);
        return THUMBD_TOO_LARGE;
    }
    int transparent;
    status = walk_to_image(gif, &transparent, message, message_size);
    if (status == THUMBD_OK) {
        GifImageDesc *f = &gif->Image;
        // giflib decodes whole frame rows, also where they lie outside the
        // screen, and an interlaced frame whole: the frame's size bounds the
        // work as the screen's bounds the memory.
        if ((uint64_t)f->Width * (uint64_t)f->Height > max_pixels) {
            info->width = (uint32_t)f->Width;
            info->height = (uint32_t)f->Height;
            status = THUMBD_TOO_LARGE;
        }
        info->progressive = f->Interlace ? 1 : 0;
        info->has_alpha = transparent != NO_TRANSPARENT_COLOR || f->Left > 0 || f->Top > 0
            || f->Left + f->Width < gif->SWidth || f->Top + f->Height < gif->SHeight;
    }
    thumbd_gif_close(gif);
    return status;
}

typedef struct {
    gif_source src;
    GifFileType *gif;
    int transparent;
    const ColorMapObject *colors;
    int left, top, frame_width, frame_height;
    int visible_width, visible_height;  // the part of the frame inside the screen
    int interlaced;
    uint8_t *line;                      // one frame row of indices
    uint8_t *visible;                   // interlaced: visible_width × visible_height indices
} gif_state;

static void release_gif(thumbd_decoder *d) {
    gif_state *s = d->state;
    if (!s) return;
    thumbd_gif_close(s->gif);
    free(s->line);
    free(s->visible);
    free(s);
}

static void expand(const gif_state *s, const uint8_t *indices, uint8_t *out) {
    const GifColorType *palette = s->colors->Colors;
    int count = s->colors->ColorCount;
    for (int x = 0; x < s->visible_width; x++, out += 4) {
        int i = indices[x];
        if (i == s->transparent) continue;   // stays (0,0,0,0)
        if (i < count) { out[0] = palette[i].Red; out[1] = palette[i].Green; out[2] = palette[i].Blue; }
        out[3] = 255;                        // an index past the table is opaque black
    }
}

// Interlaced frames arrive in four passes: rows 0,8,16…; 4,12…; 2,6…; 1,3….
static int read_interlaced(gif_state *s, char *message, size_t message_size) {
    static const int start[4] = { 0, 4, 2, 1 }, step[4] = { 8, 8, 4, 2 };
    s->visible = malloc((size_t)s->visible_width * (size_t)s->visible_height);
    if (!s->visible) {
        thumbd_set_message(message, message_size, "out of memory for the GIF frame");
        return THUMBD_NO_MEMORY;
    }
    for (int pass = 0; pass < 4; pass++) {
        for (int y = start[pass]; y < s->frame_height; y += step[pass]) {
            if (DGifGetLine(s->gif, s->line, s->frame_width) == GIF_ERROR)
                return thumbd_gif_status(s->gif->Error, message, message_size);
            if (y < s->visible_height) memcpy(s->visible + (size_t)y * s->visible_width, s->line, (size_t)s->visible_width);
        }
    }
    return THUMBD_OK;
}

static int produce(thumbd_decoder *d, uint8_t *rows, uint32_t count, char *message, size_t message_size) {
    gif_state *s = d->state;
    size_t row_bytes = (size_t)d->width * 4;
    memset(rows, 0, row_bytes * count);
    for (uint32_t i = 0; i < count; i++) {
        int64_t y = (int64_t)d->next_row + i - s->top;   // row within the frame
        if (y < 0 || y >= s->visible_height) continue;
        const uint8_t *indices;
        if (s->interlaced) {
            if (!s->visible) {
                int status = read_interlaced(s, message, message_size);
                if (status != THUMBD_OK) return status;
            }
            indices = s->visible + (size_t)y * s->visible_width;
        } else {
            // Rows are asked for in order, so frame row y is the next one giflib gives.
            if (DGifGetLine(s->gif, s->line, s->frame_width) == GIF_ERROR)
                return thumbd_gif_status(s->gif->Error, message, message_size);
            indices = s->line;
        }
        expand(s, indices, rows + i * row_bytes + (size_t)s->left * 4);
    }
    return THUMBD_OK;
}

thumbd_decoder *thumbd_gif_open(const void *data, size_t length, uint32_t *out_width, uint32_t *out_height,
                                int *status, char *message, size_t message_size) {
    thumbd_decoder *d = thumbd_decoder_new(status, message, message_size);
    gif_state *s = d ? calloc(1, sizeof *s) : NULL;
    if (!s) {
        free(d);
        *status = THUMBD_NO_MEMORY;
        thumbd_set_message(message, message_size, "out of memory");
        return NULL;
    }
    d->state = s;
    d->release = release_gif;
    d->produce = produce;
    s->src = (gif_source){ data, length, 0 };
    s->gif = thumbd_gif_open_source(&s->src, status, message, message_size);
    if (!s->gif) { thumbd_decoder_close(d); return NULL; }
    *status = walk_to_image(s->gif, &s->transparent, message, message_size);
    if (*status != THUMBD_OK) { thumbd_decoder_close(d); return NULL; }
    GifFileType *gif = s->gif;
    s->colors = gif->Image.ColorMap ? gif->Image.ColorMap : gif->SColorMap;
    s->left = gif->Image.Left;
    s->top = gif->Image.Top;
    s->frame_width = gif->Image.Width;
    s->frame_height = gif->Image.Height;
    s->interlaced = gif->Image.Interlace;
    s->visible_width = s->left >= gif->SWidth ? 0 : (s->frame_width < gif->SWidth - s->left ? s->frame_width : gif->SWidth - s->left);
    s->visible_height = s->top >= gif->SHeight ? 0 : (s->frame_height < gif->SHeight - s->top ? s->frame_height : gif->SHeight - s->top);
    if (s->visible_width == 0) s->visible_height = 0;   // wholly off screen: nothing to read
    s->line = malloc((size_t)s->frame_width);
    if (!s->line) {
        *status = THUMBD_NO_MEMORY;
        thumbd_set_message(message, message_size, "out of memory");
        thumbd_decoder_close(d);
        return NULL;
    }
    d->width = (uint32_t)gif->SWidth;
    d->height = (uint32_t)gif->SHeight;
    *out_width = d->width;
    *out_height = d->height;
    return d;
}
