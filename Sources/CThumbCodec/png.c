#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <png.h>
#include "thumbd_codec.h"
#include "png_rows.h"

// libpng reads the chunks before the image data, in every probe and decode:
// thumbd's rules for them are libpng's (text skipped unread but for its CRC,
// an iCCP inflated up to 4 MiB and ignored past that or when malformed, any
// bad CRC an error), and libspng 0.7.3 cannot keep them (it inflates text and
// iCCP before the image data and fails the image on an oversized profile).
// The image data itself is libspng's (png_rows.c), and libpng writes PNGs.
// libpng's full API (not png_image_*): the simplified API applies gAMA and
// treats 16-bit samples as linear, and API.md § Output wants neither.

typedef struct {
    const uint8_t *data;
    size_t length;
    size_t offset;
    char message[256];
} png_source;

static void set_text(char *to, size_t size, const char *from) {
    if (to && size) { strncpy(to, from, size - 1); to[size - 1] = 0; }
}

static uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void source_read(png_structp png, png_bytep out, size_t count) {
    png_source *src = png_get_io_ptr(png);
    if (count > src->length - src->offset) png_error(png, "PNG data ends early (truncated)");
    memcpy(out, src->data + src->offset, count);
    src->offset += count;
}

static void on_error(png_structp png, png_const_charp text) {
    png_source *src = png_get_error_ptr(png);
    set_text(src->message, sizeof src->message, text);
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp text) { (void)png; (void)text; }

static void copy_message(const char *from, char *to, size_t size) { set_text(to, size, from); }

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
// Likewise an ancillary chunk over the cap is skipped (its CRC still
// checked). A bad CRC on any chunk is an
// error (libpng's default only warns about ancillary ones and drops them).
//
// thumbd reads no text, so libpng is told to skip tEXt, zTXt and iTXt as it
// skips unknown chunks (reading them for the CRC only) instead of inflating
// and keeping them: a file of zTXt bombs then costs libpng nothing, and what
// compressed data it still inflates (iCCP) the structure walk has bounded
// (PNGStructure.swift).
static void limit_chunks(png_structp png) {
    static const png_byte text_chunks[] = "tEXt\0zTXt\0iTXt";
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, text_chunks, 3);
    png_set_chunk_malloc_max(png, THUMBD_PNG_CHUNK_MAX);
    png_set_chunk_cache_max(png, 256);
    png_set_user_limits(png, THUMBD_MAX_SIDE, THUMBD_MAX_SIDE);
    png_set_crc_action(png, PNG_CRC_DEFAULT, PNG_CRC_ERROR_QUIT);
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

// A side over THUMBD_MAX_SIDE is "too large", not corrupt: read IHDR before
// libpng, whose user limit would only call it invalid.
static int oversized(const uint8_t *data, size_t length, thumbd_image_info *info) {
    if (length < 24 || memcmp(data + 12, "IHDR", 4) != 0) return 0;
    uint32_t width = be32(data + 16), height = be32(data + 20);
    if (width <= THUMBD_MAX_SIDE && height <= THUMBD_MAX_SIDE) return 0;
    info->width = width;
    info->height = height;
    return 1;
}

int thumbd_png_probe(const void *data, size_t length, thumbd_image_info *info, char *message, size_t message_size) {
    png_source src = { .data = data, .length = length };
    memset(info, 0, sizeof *info);
    if (!chunks_fit(data, length)) {
        copy_message("PNG chunk extends past the end of the data (truncated)", message, message_size);
        return THUMBD_CORRUPT;
    }
    if (oversized(data, length, info)) {
        copy_message("PNG side over 1048576 pixels", message, message_size);
        return THUMBD_TOO_LARGE;
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
    png_source src;
    png_rows *rows;
    thumbd_deadline deadline;
    int color;              // RGB or palette, as opposed to gray (what an iCCP must describe)
    uint8_t *profile;       // the iCCP libpng accepted, copied out
    size_t profile_length;
};

// The palette and tRNS libpng accepted, for libspng. A tRNS colour outside the
// bit depth's range never matches a pixel in libpng; libspng would mask it, so
// it is left out.
static void rows_head(png_structp png, png_infop info, png_rows_head *head) {
    memset(head, 0, sizeof *head);
    png_colorp palette = NULL;
    int entries = 0;
    if (png_get_PLTE(png, info, &palette, &entries) && palette && entries > 0 && entries <= 256) {
        for (int i = 0; i < entries; i++) {
            head->palette[i * 3] = palette[i].red;
            head->palette[i * 3 + 1] = palette[i].green;
            head->palette[i * 3 + 2] = palette[i].blue;
        }
        head->palette_entries = (uint32_t)entries;
    }
    png_bytep alpha = NULL;
    int count = 0;
    png_color_16p colour = NULL;
    if (!png_get_tRNS(png, info, &alpha, &count, &colour)) return;
    int type = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
    unsigned max = depth == 16 ? 0xFFFF : (1u << depth) - 1;
    uint8_t *t = head->trns;
    if (type == PNG_COLOR_TYPE_PALETTE && alpha && count > 0 && count <= 256) {
        memcpy(t, alpha, (size_t)count);
        head->trns_length = (uint32_t)count;
    } else if (type == PNG_COLOR_TYPE_GRAY && colour && colour->gray <= max) {
        t[0] = colour->gray >> 8; t[1] = colour->gray & 0xFF;
        head->trns_length = 2;
    } else if (type == PNG_COLOR_TYPE_RGB && colour && colour->red <= max && colour->green <= max && colour->blue <= max) {
        t[0] = colour->red >> 8; t[1] = colour->red & 0xFF;
        t[2] = colour->green >> 8; t[3] = colour->green & 0xFF;
        t[4] = colour->blue >> 8; t[5] = colour->blue & 0xFF;
        head->trns_length = 6;
    }
}

// libpng's part: the chunks before the image data, up to the first IDAT's
// header; fills the head libspng needs and keeps the profile.
static int read_head(thumbd_png_decoder *d, png_rows_head *head, size_t *idat_offset) {
    png_infop info = NULL;
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &d->src, on_error, on_warning);
    if (png) info = png_create_info_struct(png);
    if (!png || !info) {
        png_destroy_read_struct(&png, &info, NULL);
        copy_message("out of memory", d->src.message, sizeof d->src.message);
        return THUMBD_NO_MEMORY;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        return THUMBD_CORRUPT;
    }
    png_set_read_fn(png, &d->src, source_read);
    limit_chunks(png);
    png_read_info(png, info);
    // libpng stops having read the first IDAT's length and type.
    *idat_offset = d->src.offset - 8;
    if (d->src.offset < 8 + 25 + 8 || memcmp(d->src.data + d->src.offset - 4, "IDAT", 4) != 0)
        png_error(png, "PNG has no image data");
    d->color = (png_get_color_type(png, info) & PNG_COLOR_MASK_COLOR) != 0;
    rows_head(png, info, head);
    png_charp name = NULL;
    int compression = 0;
    png_bytep profile = NULL;
    png_uint_32 size = 0;
    if (png_get_iCCP(png, info, &name, &compression, &profile, &size) && profile && size) {
        d->profile = malloc(size);
        if (!d->profile) png_error(png, "out of memory");
        memcpy(d->profile, profile, size);
        d->profile_length = size;
    }
    png_destroy_read_struct(&png, &info, NULL);
    return THUMBD_OK;
}

thumbd_png_decoder *thumbd_png_open(const void *data, size_t length, thumbd_deadline deadline,
                                    uint32_t *out_width, uint32_t *out_height,
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
    d->deadline = deadline;
    png_rows_head head;
    size_t idat_offset = 0;
    *status = read_head(d, &head, &idat_offset);
    if (*status != THUMBD_OK) {
        copy_message(d->src.message, message, message_size);
        thumbd_png_close(d);
        return NULL;
    }
    d->rows = png_rows_open(data, length, idat_offset, &head, status, message, message_size);
    if (!d->rows) { thumbd_png_close(d); return NULL; }
    png_rows_size(d->rows, out_width, out_height);
    return d;
}

int thumbd_png_read(thumbd_png_decoder *d, void *rows, uint32_t max_rows, uint32_t *rows_read,
                    char *message, size_t message_size) {
    return png_rows_read(d->rows, rows, max_rows, rows_read, d->deadline, message, message_size);
}

void thumbd_png_color(const thumbd_png_decoder *d, const void **profile, size_t *length, int *model) {
    *profile = d->profile;
    *length = d->profile_length;
    *model = d->color ? THUMBD_RGB : THUMBD_GRAY;
}

void thumbd_png_close(thumbd_png_decoder *d) {
    if (!d) return;
    png_rows_close(d->rows);
    free(d->profile);
    free(d);
}

typedef struct {
    uint8_t *data;
    size_t length;
    size_t capacity;
    int deadline_passed;
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

int thumbd_png_encode(const void *rgba, uint32_t width, uint32_t height, int has_alpha, thumbd_deadline deadline,
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
        int status = sink->deadline_passed ? THUMBD_DEADLINE : THUMBD_FAILED;
        free(sink->data);
        free(sink);
        return status;
    }
    png_set_write_fn(png, sink, sink_write, sink_flush);
    png_set_IHDR(png, info, width, height, 8, has_alpha ? PNG_COLOR_TYPE_RGB_ALPHA : PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(png, 6);
    png_write_info(png, info);
    if (!has_alpha) png_set_filler(png, 0, PNG_FILLER_AFTER);   // drop the alpha byte of each RGBA pixel
    const uint8_t *src = rgba;
    for (uint32_t y = 0; y < height; y++) {
        if (thumbd_deadline_passed(deadline)) {
            sink->deadline_passed = 1;
            png_error(png, "render deadline passed");
        }
        png_write_row(png, (png_const_bytep)(src + (size_t)y * width * 4));
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    *out = sink->data;
    *out_length = sink->length;
    free(sink);
    return THUMBD_OK;
}
