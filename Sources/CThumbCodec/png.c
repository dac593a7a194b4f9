#include <pthread.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <png.h>
#include "thumbd_codec.h"

// libpng's full API (not png_image_*): the simplified API applies gAMA and
// treats 16-bit samples as linear, and API.md § Output wants neither.

typedef struct {
    const uint8_t *data;
    size_t length;
    size_t offset;
    uint32_t height;        // rows of the image (0 while probing: no rows are read)
    thumbd_deadline deadline;
    // Why the last longjmp happened: THUMBD_CORRUPT (libpng's error), or set
    // before it: THUMBD_OK (the image was complete), THUMBD_DEADLINE.
    int outcome;
    char message[256];
} png_source;

static void set_text(char *to, size_t size, const char *from) {
    if (to && size) { strncpy(to, from, size - 1); to[size - 1] = 0; }
}

// Stops libpng with a known outcome; on_error keeps it.
static void stop(png_structp png, png_source *src, int outcome, const char *why) {
    src->outcome = outcome;
    png_error(png, why);
}

static uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

// CRC-32 (ISO-HDLC) as PNG uses it, slicing by four bytes.
static uint32_t crc_table[4][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;
static void crc_init(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++)
        for (int t = 1; t < 4; t++) crc_table[t][n] = crc_table[0][crc_table[t - 1][n] & 0xFF] ^ (crc_table[t - 1][n] >> 8);
}
static uint32_t crc32_of(const uint8_t *p, size_t n) {
    pthread_once(&crc_once, crc_init);
    uint32_t c = 0xFFFFFFFFu;
    for (; n >= 4; n -= 4, p += 4) {
        c ^= (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        c = crc_table[3][c & 0xFF] ^ crc_table[2][(c >> 8) & 0xFF] ^ crc_table[1][(c >> 16) & 0xFF] ^ crc_table[0][c >> 24];
    }
    while (n--) c = crc_table[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    return ~c;
}

// The CRC of the chunk whose data (or CRC field) starts at or holds `offset`.
// chunks_fit has checked that every chunk up to the image data lies inside the
// data; IDAT chunks after that are checked here.
static int chunk_at_is_intact(const png_source *src, size_t offset) {
    size_t i = 8;
    while (i + 12 <= src->length) {
        size_t n = be32(src->data + i);
        if (n > src->length - i - 12) return 0;
        if (offset >= i + 8 && offset <= i + 8 + n)
            return crc32_of(src->data + i + 4, n + 4) == be32(src->data + i + 8 + n);
        i += 12 + n;
    }
    return 0;
}

// libpng, after the last row of the last pass, goes on reading: it inflates
// whatever compressed data is left (all of it: a few MB of zlib can hold
// gigabytes of zeros) and the chunks after it. API.md § Output wants the image
// read up to its last row only, so the first read past that point stops
// libpng instead: the image is complete, provided the chunk that held the
// last row is intact (libpng has not reached its CRC yet).
static int past_last_row(png_structp png, const png_source *src) {
    return src->height && (png_get_current_pass_number(png) >= 7 || png_get_current_row_number(png) >= src->height);
}

static void source_read(png_structp png, png_bytep out, size_t count) {
    png_source *src = png_get_io_ptr(png);
    if (past_last_row(png, src)) {
        if (chunk_at_is_intact(src, src->offset)) stop(png, src, THUMBD_OK, "image complete");
        stop(png, src, THUMBD_CORRUPT, "IDAT: CRC error");
    }
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
    png_structp png;
    png_infop info;
    png_source src;
    uint32_t width, height, next_row;
    int interlaced;
    int color;           // RGB or palette, as opposed to gray (what an iCCP must describe)
    uint8_t *image;      // whole image, only for Adam7 (libpng needs every pass)
    png_bytep *pointers; // row pointers into image; kept here so a longjmp cannot leak them
};

// After every row libpng decodes (every pass of an interlaced image too).
static void on_row(png_structp png, png_uint_32 row, int pass) {
    (void)row; (void)pass;
    png_source *src = png_get_io_ptr(png);
    if (thumbd_deadline_passed(src->deadline)) stop(png, src, THUMBD_DEADLINE, "render deadline passed");
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
    d->src.deadline = deadline;
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
    png_set_read_status_fn(d->png, on_row);
    limit_chunks(d->png);
    png_read_info(d->png, d->info);
    int type = png_get_color_type(d->png, d->info);
    d->color = (type & PNG_COLOR_MASK_COLOR) != 0;
    png_set_expand(d->png);        // palette → RGB, gray < 8 bits → 8, tRNS → alpha
    png_set_strip_16(d->png);      // 16-bit keeps its high byte (API.md § Output)
    png_set_gray_to_rgb(d->png);
    if (!(type & PNG_COLOR_MASK_ALPHA) && !png_get_valid(d->png, d->info, PNG_INFO_tRNS))
        png_set_add_alpha(d->png, 0xFF, PNG_FILLER_AFTER);
    d->interlaced = png_set_interlace_handling(d->png) > 1;
    png_read_update_info(d->png, d->info);
    d->width = png_get_image_width(d->png, d->info);
    d->height = png_get_image_height(d->png, d->info);
    if (png_get_rowbytes(d->png, d->info) != (size_t)d->width * 4) png_error(d->png, "unexpected row layout");
    d->src.height = d->height;
    *out_width = d->width;
    *out_height = d->height;
    *status = THUMBD_OK;
    return d;
}

// One libpng read step under its own setjmp: THUMBD_OK when it returned or
// stopped at the end of the image data (source_read), else why it stopped.
static int read_row(thumbd_png_decoder *d, png_bytep row) {
    d->src.outcome = THUMBD_CORRUPT;
    if (setjmp(png_jmpbuf(d->png))) return d->src.outcome;
    png_read_row(d->png, row, NULL);
    return THUMBD_OK;
}

static int read_image(thumbd_png_decoder *d) {
    d->src.outcome = THUMBD_CORRUPT;
    if (setjmp(png_jmpbuf(d->png))) return d->src.outcome;
    png_read_image(d->png, d->pointers);
    return THUMBD_OK;
}

int thumbd_png_read(thumbd_png_decoder *d, void *rows, uint32_t max_rows, uint32_t *rows_read,
                    char *message, size_t message_size) {
    *rows_read = 0;
    size_t stride = (size_t)d->width * 4;
    if (d->interlaced && !d->image) {
        d->image = malloc(stride * d->height);
        d->pointers = malloc(sizeof(png_bytep) * d->height);
        if (!d->image || !d->pointers) { copy_message("out of memory", message, message_size); return THUMBD_NO_MEMORY; }
        for (uint32_t y = 0; y < d->height; y++) d->pointers[y] = d->image + y * stride;
        int status = read_image(d);
        if (status != THUMBD_OK) {
            d->next_row = d->height;   // nothing more to give
            copy_message(d->src.message, message, message_size);
            return status;
        }
    }
    uint8_t *out = rows;
    uint32_t n = 0;
    while (n < max_rows && d->next_row < d->height) {
        if (d->interlaced) {
            memcpy(out + n * stride, d->image + (size_t)d->next_row * stride, stride);
        } else {
            int status = read_row(d, out + n * stride);
            if (status != THUMBD_OK) {
                copy_message(d->src.message, message, message_size);
                return status;
            }
        }
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
