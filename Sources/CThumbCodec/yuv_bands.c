#include <stdlib.h>
#include <string.h>
#include "thumbd_codec.h"
#include "decoder.h"
#include "yuv_bands.h"

// Lines converted per band, and the extra lines converted on each side: the
// chroma upsampler reads the neighbouring chroma sample, so with a margin
// each band's lines come out exactly as a whole-image conversion gives them.
enum { BAND_LINES = 64, BAND_MARGIN = 4 };

// [start, end) widened by the margin, clipped to [0, limit), and aligned to
// whole chroma samples when the axis is subsampled.
static void widen(uint32_t start, uint32_t end, uint32_t limit, int shift, uint32_t *from, uint32_t *length) {
    uint32_t a = start > BAND_MARGIN ? start - BAND_MARGIN : 0;
    uint32_t b = end + BAND_MARGIN < limit ? end + BAND_MARGIN : limit;
    if (shift) {
        a &= ~1u;
        if (b & 1u && b < limit) b++;
    }
    *from = a;
    *length = b - a;
}

int thumbd_yuv_bands_init(thumbd_yuv_bands *bands, const avifImage *image, avifCropRect crop, int angle, int mirror) {
    memset(bands, 0, sizeof *bands);
    bands->image = image;
    if (crop.width == 0 || crop.height == 0) crop = (avifCropRect){ 0, 0, image->width, image->height };
    bands->crop = crop;
    // Output (x, y) reads source (flip_x ? w-1-u : u, flip_y ? h-1-v : v) of
    // the crop, where (u, v) is (x, y), or (y, x) when transposed.
    switch (angle & 3) {
    case 1: bands->transpose = 1; bands->flip_x = 1; break;   // 90° anticlockwise
    case 2: bands->flip_x = bands->flip_y = 1; break;
    case 3: bands->transpose = 1; bands->flip_y = 1; break;   // 270° anticlockwise
    default: break;
    }
    // imir after irot: mode 0 reverses output rows, mode 1 output columns.
    if (mirror == 0) { if (bands->transpose) bands->flip_x ^= 1; else bands->flip_y ^= 1; }
    if (mirror == 1) { if (bands->transpose) bands->flip_y ^= 1; else bands->flip_x ^= 1; }
    bands->out_width = bands->transpose ? crop.height : crop.width;
    bands->out_height = bands->transpose ? crop.width : crop.height;
    bands->view = avifImageCreateEmpty();
    return bands->view != NULL;
}

// Converts the band holding `line` (an image row, or column when
// transposed), extending it the way the rows are read.
static int convert_band(thumbd_yuv_bands *b, uint32_t line, char *message, size_t message_size) {
    const avifImage *image = b->image;
    avifPixelFormatInfo format;
    avifGetPixelFormatInfo(image->yuvFormat, &format);
    int backwards = b->transpose ? b->flip_x : b->flip_y;
    uint32_t axis = b->transpose ? image->width : image->height;
    uint32_t start = backwards ? (line + 1 > BAND_LINES ? line + 1 - BAND_LINES : 0) : line;
    uint32_t end = start + BAND_LINES < axis ? start + BAND_LINES : axis;
    avifCropRect rect;
    uint32_t from, length, across_from, across_length;
    if (b->transpose) {
        widen(start, end, axis, format.chromaShiftX, &from, &length);
        widen(b->crop.y, b->crop.y + b->crop.height, image->height, format.chromaShiftY, &across_from, &across_length);
        rect = (avifCropRect){ from, across_from, length, across_length };
    } else {
        widen(start, end, axis, format.chromaShiftY, &from, &length);
        widen(b->crop.x, b->crop.x + b->crop.width, image->width, format.chromaShiftX, &across_from, &across_length);
        rect = (avifCropRect){ across_from, from, across_length, length };
    }
    size_t need = (size_t)rect.width * rect.height * 4;
    if (need > b->buffer_size) {
        free(b->buffer);
        b->buffer_size = 0;
        b->buffer = malloc(need);
        if (!b->buffer) {
            thumbd_set_message(message, message_size, "out of memory for a band of rows");
            return THUMBD_NO_MEMORY;
        }
        b->buffer_size = need;
    }
    avifResult result = avifImageSetViewRect(b->view, image, &rect);
    avifRGBImage rgb;
    if (result == AVIF_RESULT_OK) {
        avifRGBImageSetDefaults(&rgb, b->view);
        rgb.depth = 8;   // 10/12-bit sources → 8-bit
        rgb.format = AVIF_RGB_FORMAT_RGBA;
        rgb.alphaPremultiplied = AVIF_FALSE;   // premultiplied sources are unpremultiplied
        rgb.chromaUpsampling = b->upsampling;
        rgb.avoidLibYUV = b->precise;
        rgb.pixels = b->buffer;
        rgb.rowBytes = rect.width * 4;
        result = avifImageYUVToRGB(b->view, &rgb);
    }
    if (result != AVIF_RESULT_OK) {
        b->ready_start = b->ready_end = 0;
        thumbd_set_message(message, message_size, avifResultToString(result));
        return THUMBD_CORRUPT;
    }
    b->buffer_stride = (size_t)rect.width * 4;
    b->view_start = from;
    b->view_length = length;
    b->view_across = across_from;
    b->ready_start = start;
    b->ready_end = end;
    return THUMBD_OK;
}

int thumbd_yuv_bands_rows(thumbd_yuv_bands *b, uint32_t first, uint32_t count, uint8_t *rows,
                          char *message, size_t message_size) {
    const avifCropRect *c = &b->crop;
    size_t row_bytes = (size_t)b->out_width * 4;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t y = first + i;
        uint8_t *out = rows + i * row_bytes;
        // The source line this output row comes from, in image coordinates.
        uint32_t line = b->transpose ? c->x + (b->flip_x ? c->width - 1 - y : y)
                                     : c->y + (b->flip_y ? c->height - 1 - y : y);
        if (line < b->ready_start || line >= b->ready_end) {
            int status = convert_band(b, line, message, message_size);
            if (status != THUMBD_OK) return status;
        }
        if (!b->transpose) {
            const uint8_t *src = b->buffer + (size_t)(line - b->view_start) * b->buffer_stride
                                 + (size_t)(c->x - b->view_across) * 4;
            if (!b->flip_x) {
                memcpy(out, src, row_bytes);
            } else {
                for (uint32_t x = 0; x < b->out_width; x++) memcpy(out + x * 4, src + (size_t)(c->width - 1 - x) * 4, 4);
            }
        } else {
            const uint8_t *column = b->buffer + (size_t)(line - b->view_start) * 4;
            for (uint32_t x = 0; x < b->out_width; x++) {
                uint32_t sy = c->y + (b->flip_y ? c->height - 1 - x : x);
                memcpy(out + x * 4, column + (size_t)(sy - b->view_across) * b->buffer_stride, 4);
            }
        }
    }
    return THUMBD_OK;
}

void thumbd_yuv_bands_free(thumbd_yuv_bands *b) {
    if (b->view) avifImageDestroy(b->view);   // a view owns no planes
    free(b->buffer);
    memset(b, 0, sizeof *b);
}
