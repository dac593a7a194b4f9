#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <png.h>
#include "thumbd_codec.h"

// libpng's full API (not png_image_*): the simplified API applies gAMA and
// treats 16-bit samples as linear, and README § Output wants neither.

typedef struct {
    const uint8_t *data;
    size_t length;
    size_t offset;
    char message[256];
} png_source;

static void source_read(png_structp png, png_bytep out, size_t count) {
    png_source *src = png_get_io_ptr(png);
    if (count > src->length - src->offset) png_error(png, "PNG data ends early (truncated)");
    memcpy(out, src->data + src->offset, count);
    src->offset += count;
}

static void on_error(png_structp png, png_const_charp text) {
    png_source *src = png_get_error_ptr(png);
    strncpy(src->message, text, sizeof src->message - 1);
    src->message[sizeof src->message - 1] = 0;
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp text) { (void)png; (void)text; }

static void copy_message(const char *from, char *to, size_t size) {
    if (to && size) { strncpy(to, from, size - 1); to[size - 1] = 0; }
}

// A chunk may claim up to 2 GiB, and libpng allocates a text chunk's buffer
// before reading it. The whole file is in memory, so any chunk before the
// image data that claims more bytes than remain is simply truncated: refuse
// it before libpng sees it. Also cap ancillary chunk memory and count.
static int chunks_fit(const uint8_t *data, size_t length) {
    size_t i = 8;
    while (i + 12 <= length) {
        size_t n = (size_t)data[i] << 24 | (size_t)data[i + 1] << 16 | (size_t)data[i + 2] << 8 | data[i + 3];
        if (memcmp(data + i + 4, "IDAT", 4) == 0) return 1;
        if (n > length - i - 12) return 0;
        i += 12 + n;
    }
    return 1;
}

// The chunk memory cap also bounds iCCP: libpng checks the length a profile
// declares against it before allocating ("exceeds application limits") and
// never inflates past that length, so a zlib bomb in iCCP costs at most
// 4 MiB; a rejected profile is only a warning and the image still decodes.
static void limit_chunks(png_structp png) {
    png_set_chunk_malloc_max(png, THUMBD_ICC_MAX_BYTES);
    png_set_chunk_cache_max(png, 256);
}

static void fill_info(png_structp png, png_infop info, thumbd_image_info *out) {
    int type = png_get_color_type(png, info);
    out->width = png_get_image_width(png, info);
    out->height = png_get_image_height(png, info);
    out->bit_depth = png_get_bit_depth(png, info);
    out->has_alpha = (type & PNG_COLOR_MASK_ALPHA) || png_get_valid(png, info, PNG_INFO_tRNS);
    out->progressive = png_get_interlace_type(png, info) == PNG_INTERLACE_ADAM7;
    out->color_model = (type & PNG_COLOR_MASK_COLOR) ? THUMBD_RGB : THUMBD_GRAY;
    out->components = 4;
    out->orientation = 1;
    png_uint_32 exif_length = 0;
    png_bytep exif = NULL;
    if (png_get_eXIf_1(png, info, &exif_length, &exif) && exif)
        out->orientation = thumbd_exif_orientation(exif, exif_length);
}

int thumbd_png_probe(const void *data, size_t length, thumbd_image_info *info, char *message, size_t message_size) {
    png_source src = { data, length, 0, "" };
    memset(info, 0, sizeof *info);
    if (!chunks_fit(data, length)) {
        copy_message("PNG chunk extends past the end of the data (truncated)", message, message_size);
        return THUMBD_CORRUPT;
    }
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, on_error, on_warning);
    if (!png) { copy_message("out of memory", message, message_size); return THUMBD_NO_MEMORY; }
    png_infop pinfo = png_create_info_struct(png);
    if (!pinfo || setjmp(png_jmpbuf(png))) {
        copy_message(src.message[0] ? src.message : "out of memory", message, message_size);
        png_destroy_read_struct(&png, &pinfo, NULL);
        return THUMBD_CORRUPT;
    }
    png_set_read_fn(png, &src, source_read);
    limit_chunks(png);
    png_read_info(png, pinfo);
    fill_info(png, pinfo, info);
    png_destroy_read_struct(&png, &pinfo, NULL);
    return THUMBD_OK;
}

struct thumbd_png_decoder {
    png_structp png;
    png_infop info;
    png_source src;
    uint32_t width, height, next_row;
    int interlaced;
    int color;           // RGB or palette, as opposed to gray (what an iCCP must describe)
    uint8_t *image;      // whole image, only for Adam7 (libpng needs every pass)
    png_bytep *pointers; // row pointers into image; kept here so a longjmp cannot leak them
};

thumbd_png_decoder *thumbd_png_open(const void *data, size_t length, uint32_t *out_width, uint32_t *out_height,
                                    int *status, char *message, size_t message_size) {
    if (!chunks_fit(data, length)) {
        *status = THUMBD_CORRUPT;
        copy_message("PNG chunk extends past the end of the data (truncated)", message, message_size);
        return NULL;
    }
    thumbd_png_decoder *d = calloc(1, sizeof *d);
    if (!d) { *status = THUMBD_NO_MEMORY; copy_message("out of memory", message, message_size); return NULL; }
    d->src.data = data;
    d->src.length = length;
    d->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &d->src, on_error, on_warning);
    if (d->png) d->info = png_create_info_struct(d->png);
    if (!d->png || !d->info) {
        png_destroy_read_struct(&d->png, &d->info, NULL);
        free(d);
        *status = THUMBD_NO_MEMORY;
        copy_message("out of memory", message, message_size);
        return NULL;
    }
    if (setjmp(png_jmpbuf(d->png))) {
        *status = THUMBD_CORRUPT;
        copy_message(d->src.message, message, message_size);
        thumbd_png_close(d);
        return NULL;
    }
    png_set_read_fn(d->png, &d->src, source_read);
    limit_chunks(d->png);
    png_read_info(d->png, d->info);
    int type = png_get_color_type(d->png, d->info);
    d->color = (type & PNG_COLOR_MASK_COLOR) != 0;
    png_set_expand(d->png);        // palette → RGB, gray < 8 bits → 8, tRNS → alpha
    png_set_strip_16(d->png);      // 16-bit keeps its high byte (README § Output)
    png_set_gray_to_rgb(d->png);
    if (!(type & PNG_COLOR_MASK_ALPHA) && !png_get_valid(d->png, d->info, PNG_INFO_tRNS))
        png_set_add_alpha(d->png, 0xFF, PNG_FILLER_AFTER);
    d->interlaced = png_set_interlace_handling(d->png) > 1;
    png_read_update_info(d->png, d->info);
    d->width = png_get_image_width(d->png, d->info);
    d->height = png_get_image_height(d->png, d->info);
    if (png_get_rowbytes(d->png, d->info) != (size_t)d->width * 4) png_error(d->png, "unexpected row layout");
    *out_width = d->width;
    *out_height = d->height;
    *status = THUMBD_OK;
    return d;
}

int thumbd_png_read(thumbd_png_decoder *d, void *rows, uint32_t max_rows, uint32_t *rows_read,
                    char *message, size_t message_size) {
    *rows_read = 0;
    size_t stride = (size_t)d->width * 4;
    if (setjmp(png_jmpbuf(d->png))) {
        copy_message(d->src.message, message, message_size);
        return THUMBD_CORRUPT;
    }
    if (d->interlaced && !d->image) {
        d->image = malloc(stride * d->height);
        d->pointers = malloc(sizeof(png_bytep) * d->height);
        if (!d->image || !d->pointers) png_error(d->png, "out of memory");
        for (uint32_t y = 0; y < d->height; y++) d->pointers[y] = d->image + y * stride;
        png_read_image(d->png, d->pointers);
    }
    uint8_t *out = rows;
    uint32_t n = 0;
    while (n < max_rows && d->next_row < d->height) {
        if (d->interlaced) memcpy(out + n * stride, d->image + (size_t)d->next_row * stride, stride);
        else png_read_row(d->png, out + n * stride, NULL);
        n++;
        d->next_row++;
    }
    *rows_read = n;
    return THUMBD_OK;
}

void thumbd_png_color(const thumbd_png_decoder *d, const void **profile, size_t *length, int *model) {
    png_charp name = NULL;
    int compression = 0;
    png_bytep data = NULL;
    png_uint_32 size = 0;
    *profile = NULL;
    *length = 0;
    if (png_get_iCCP(d->png, d->info, &name, &compression, &data, &size) && data && size) {
        *profile = data;
        *length = size;
    }
    *model = d->color ? THUMBD_RGB : THUMBD_GRAY;
}

void thumbd_png_close(thumbd_png_decoder *d) {
    if (!d) return;
    png_destroy_read_struct(&d->png, &d->info, NULL);
    free(d->pointers);
    free(d->image);
    free(d);
}

typedef struct {
    uint8_t *data;
    size_t length;
    size_t capacity;
    char message[256];
} png_sink;

static void sink_write(png_structp png, png_bytep bytes, size_t count) {
    png_sink *sink = png_get_io_ptr(png);
    if (count > sink->capacity - sink->length) {
        size_t capacity = sink->capacity ? sink->capacity : 4096;
        while (capacity - sink->length < count) capacity *= 2;
        uint8_t *grown = realloc(sink->data, capacity);
        if (!grown) png_error(png, "out of memory");
        sink->data = grown;
        sink->capacity = capacity;
    }
    memcpy(sink->data + sink->length, bytes, count);
    sink->length += count;
}

static void sink_flush(png_structp png) { (void)png; }

static void on_write_error(png_structp png, png_const_charp text) {
    png_sink *sink = png_get_error_ptr(png);
    strncpy(sink->message, text, sizeof sink->message - 1);
    png_longjmp(png, 1);
}

int thumbd_png_encode(const void *rgba, uint32_t width, uint32_t height, int has_alpha,
                      void **out, size_t *out_length, char *message, size_t message_size) {
    png_sink *sink = calloc(1, sizeof *sink);
    *out = NULL;
    *out_length = 0;
    if (!sink) { copy_message("out of memory", message, message_size); return THUMBD_NO_MEMORY; }
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, sink, on_write_error, on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info || setjmp(png_jmpbuf(png))) {
        copy_message(sink->message[0] ? sink->message : "out of memory", message, message_size);
        png_destroy_write_struct(&png, &info);
        free(sink->data);
        free(sink);
        return THUMBD_FAILED;
    }
    png_set_write_fn(png, sink, sink_write, sink_flush);
    png_set_IHDR(png, info, width, height, 8, has_alpha ? PNG_COLOR_TYPE_RGB_ALPHA : PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(png, 6);
    png_write_info(png, info);
    if (!has_alpha) png_set_filler(png, 0, PNG_FILLER_AFTER);   // drop the alpha byte of each RGBA pixel
    const uint8_t *src = rgba;
    for (uint32_t y = 0; y < height; y++) png_write_row(png, (png_const_bytep)(src + (size_t)y * width * 4));
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    *out = sink->data;
    *out_length = sink->length;
    free(sink);
    return THUMBD_OK;
}
