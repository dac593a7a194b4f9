// An animated GIF read frame by frame (thumbd_anim.h), composited as browsers
// do: a transparent logical screen; each frame's opaque pixels over it; then,
// before the next frame, the frame's disposal. Memory: the canvas, one frame
// row of indices, and — only once a frame asks to be restored ("previous") —
// the pixels under that frame's rectangle.
#include <stdlib.h>
#include <string.h>
#include <gif_lib.h>
#include "anim.h"
#include "decoder.h"
#include "gif_common.h"

typedef struct {
    gif_source src;
    GifFileType *gif;
    uint64_t max_pixels;
    uint8_t *canvas;             // width × height RGBA
    uint8_t *saved;              // restore-previous: the rectangle's rows, packed (canvas-sized once needed)
    uint8_t *line;               // one frame row of indices
    size_t line_size;
    int dispose;                 // the last frame's disposal, applied before the next frame
    int x0, y0, x1, y1;          // the last frame's rectangle, clipped to the canvas
} gif_anim;

// What a graphic control extension says about the image after it.
typedef struct {
    int transparent;
    int disposal;
    int delay_cs;
} frame_control;

static void release(thumbd_anim *a) {
    gif_anim *s = a->state;
    if (!s) return;
    thumbd_gif_close(s->gif);
    free(s->canvas);
    free(s->saved);
    free(s->line);
    free(s);
}

// 3 is "restore previous"; browsers (Chromium, Firefox) and Pillow read 4 so too.
static int restores(int disposal) { return disposal == 3 || disposal == 4; }

static void copy_rect(uint8_t *canvas, uint8_t *packed, const gif_anim *s, uint32_t width, int to_canvas) {
    size_t row = (size_t)(s->x1 - s->x0) * 4;
    for (int y = s->y0; y < s->y1; y++) {
        uint8_t *c = canvas + ((size_t)y * width + (size_t)s->x0) * 4;
        uint8_t *p = packed + (size_t)(y - s->y0) * row;
        if (to_canvas) memcpy(c, p, row); else memcpy(p, c, row);
    }
}

// The last frame's disposal, before the next frame is drawn.
static void dispose_last(gif_anim *s, uint32_t width) {
    if (s->x1 <= s->x0 || s->y1 <= s->y0) return;
    if (s->dispose == 2) {
        for (int y = s->y0; y < s->y1; y++)
            memset(s->canvas + ((size_t)y * width + (size_t)s->x0) * 4, 0, (size_t)(s->x1 - s->x0) * 4);
    } else if (restores(s->dispose) && s->saved) {
        copy_rect(s->canvas, s->saved, s, width, 1);
    }
}

// Records up to the next image descriptor, with the graphic control
// extension that applies to it (the last one before it). *found is 0 at the
// trailer.
static int read_to_image(GifFileType *gif, frame_control *control, int *found, char *message, size_t message_size) {
    *control = (frame_control){ NO_TRANSPARENT_COLOR, 0, 0 };
    *found = 0;
    for (;;) {
        GifRecordType type;
        if (DGifGetRecordType(gif, &type) == GIF_ERROR) return thumbd_gif_status(gif->Error, message, message_size);
        if (type == TERMINATE_RECORD_TYPE) return THUMBD_OK;
        if (type == IMAGE_DESC_RECORD_TYPE) {
            if (DGifGetImageDesc(gif) == GIF_ERROR) return thumbd_gif_status(gif->Error, message, message_size);
            *found = 1;
            return THUMBD_OK;
        }
        if (type != EXTENSION_RECORD_TYPE) continue;
        int code;
        GifByteType *block;
        if (DGifGetExtension(gif, &code, &block) == GIF_ERROR) return thumbd_gif_status(gif->Error, message, message_size);
        if (code == GRAPHICS_EXT_FUNC_CODE && block && block[0] >= 4) {
            GraphicsControlBlock gcb;
            if (DGifExtensionToGCB(block[0], block + 1, &gcb) == GIF_OK)
                *control = (frame_control){ gcb.TransparentColor, gcb.DisposalMode, gcb.DelayTime };
        }
        while (block) {
            if (DGifGetExtensionNext(gif, &block) == GIF_ERROR) return thumbd_gif_status(gif->Error, message, message_size);
        }
    }
}

// One row of indices onto canvas row `y`, columns x0…x1: the transparent
// index leaves the canvas as it is; an index past the table is opaque black.
static void draw_row(const gif_anim *s, const ColorMapObject *colors, int transparent, int y, uint32_t width) {
    const GifColorType *palette = colors->Colors;
    int count = colors->ColorCount;
    uint8_t *out = s->canvas + ((size_t)y * width + (size_t)s->x0) * 4;
    for (int x = 0; x < s->x1 - s->x0; x++, out += 4) {
        int i = s->line[x];
        if (i == transparent) continue;
        if (i < count) { out[0] = palette[i].Red; out[1] = palette[i].Green; out[2] = palette[i].Blue; }
        else { out[0] = out[1] = out[2] = 0; }
        out[3] = 255;
    }
}

// Reads every row of the current frame (interlaced: four passes, rows
// 0,8,16…; 4,12…; 2,6…; 1,3…), drawing those on the canvas.
static int draw_frame(gif_anim *s, const ColorMapObject *colors, int transparent, uint32_t width,
                      thumbd_deadline deadline, char *message, size_t message_size) {
    static const int start[4] = { 0, 4, 2, 1 }, step[4] = { 8, 8, 4, 2 };
    const GifImageDesc *f = &s->gif->Image;
    int passes = f->Interlace ? 4 : 1;
    for (int pass = 0; pass < passes; pass++) {
        int first = f->Interlace ? start[pass] : 0, stride = f->Interlace ? step[pass] : 1;
        for (int row = first; row < f->Height; row += stride) {
            // A huge frame of tiny LZW codes costs time, not memory: the deadline bounds it.
            if (thumbd_deadline_passed(deadline)) {
                thumbd_set_message(message, message_size, "render deadline passed");
                return THUMBD_DEADLINE;
            }
            if (DGifGetLine(s->gif, s->line, f->Width) == GIF_ERROR)
                return thumbd_gif_status(s->gif->Error, message, message_size);
            int y = f->Top + row;
            if (y < s->y1) draw_row(s, colors, transparent, y, width);
        }
    }
    return THUMBD_OK;
}

static int next(thumbd_anim *a, thumbd_deadline deadline, const uint8_t **canvas, int32_t *duration_ms,
                char *message, size_t message_size) {
    gif_anim *s = a->state;
    dispose_last(s, a->width);
    s->x0 = s->x1 = s->y0 = s->y1 = 0;   // nothing to dispose should this frame fail
    frame_control control;
    int found;
    int status = read_to_image(s->gif, &control, &found, message, message_size);
    if (status != THUMBD_OK || !found) return status;
    const GifImageDesc *f = &s->gif->Image;
    if (f->Width <= 0 || f->Height <= 0) {
        thumbd_set_message(message, message_size, "GIF frame has no pixels");
        return THUMBD_CORRUPT;
    }
    // giflib decodes whole frame rows, also outside the screen: the frame's
    // size bounds the work as the screen's bounds the memory (as the probe).
    if ((uint64_t)f->Width * (uint64_t)f->Height > s->max_pixels) {
        thumbd_set_message(message, message_size, "GIF frame is larger than the pixel limit");
        return THUMBD_TOO_LARGE;
    }
    const ColorMapObject *colors = f->ColorMap ? f->ColorMap : s->gif->SColorMap;
    if (!colors) {
        thumbd_set_message(message, message_size, "GIF frame has no colour table");
        return THUMBD_CORRUPT;
    }
    if ((size_t)f->Width > s->line_size) {
        uint8_t *line = realloc(s->line, (size_t)f->Width);
        if (!line) {
            thumbd_set_message(message, message_size, "out of memory for a GIF row");
            return THUMBD_NO_MEMORY;
        }
        s->line = line;
        s->line_size = (size_t)f->Width;
    }
    // The part of the frame on the screen (giflib gives Left/Top ≥ 0).
    s->x0 = f->Left < (int)a->width ? f->Left : (int)a->width;
    s->y0 = f->Top < (int)a->height ? f->Top : (int)a->height;
    s->x1 = f->Left + f->Width < (int)a->width ? f->Left + f->Width : (int)a->width;
    s->y1 = f->Top + f->Height < (int)a->height ? f->Top + f->Height : (int)a->height;
    if (s->x1 < s->x0) s->x1 = s->x0;
    if (s->y1 < s->y0) s->y1 = s->y0;
    s->dispose = control.disposal;
    if (restores(control.disposal) && s->x1 > s->x0 && s->y1 > s->y0) {
        if (!s->saved) s->saved = malloc((size_t)a->width * a->height * 4);
        if (!s->saved) {
            thumbd_set_message(message, message_size, "out of memory for the previous GIF canvas");
            return THUMBD_NO_MEMORY;
        }
        copy_rect(s->canvas, s->saved, s, a->width, 0);
    }
    status = draw_frame(s, colors, control.transparent, a->width, deadline, message, message_size);
    if (status != THUMBD_OK) return status;
    *duration_ms = control.delay_cs < 2 ? 100 : control.delay_cs * 10;
    *canvas = s->canvas;
    return THUMBD_OK;
}

thumbd_anim *thumbd_gif_anim_open(const void *data, size_t length, uint64_t max_pixels,
                                  uint32_t *width, uint32_t *height, int *status, char *message, size_t message_size) {
    thumbd_anim *a = thumbd_anim_new(sizeof(gif_anim), next, release, status, message, message_size);
    if (!a) return NULL;
    gif_anim *s = a->state;
    s->max_pixels = max_pixels;
    s->src = (gif_source){ data, length, 0 };
    s->gif = thumbd_gif_open_source(&s->src, status, message, message_size);
    if (!s->gif) { thumbd_anim_close(a); return NULL; }
    a->width = (uint32_t)s->gif->SWidth;
    a->height = (uint32_t)s->gif->SHeight;
    if ((uint64_t)a->width * a->height > max_pixels) {
        *status = THUMBD_TOO_LARGE;
        thumbd_set_message(message, message_size, "GIF logical screen is larger than the pixel limit");
        thumbd_anim_close(a);
        return NULL;
    }
    s->canvas = calloc((size_t)a->width * a->height, 4);
    if (!s->canvas) {
        *status = THUMBD_NO_MEMORY;
        thumbd_set_message(message, message_size, "out of memory for the GIF canvas");
        thumbd_anim_close(a);
        return NULL;
    }
    *width = a->width;
    *height = a->height;
    *status = THUMBD_OK;
    return a;
}
