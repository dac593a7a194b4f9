#include <stdlib.h>
#include <string.h>
#include <spng.h>
#include <zlib.h>
#include "png_rows.h"

// PNG image data through libspng (faster than libpng's row reader: SIMD
// defiltering and expansion). libspng sees a stream thumbd builds: the
// signature, IHDR, PLTE and tRNS as libpng accepted them (png.c reads the
// chunks before the image data), then the file from its first IDAT on. It
// never sees a text chunk or an iCCP: libspng 0.7.3 inflates zTXt, iTXt and
// iCCP before the image data whatever its options say, and fails the whole
// image on an iCCP over its chunk limits, where thumbd ignores the profile.

// The stream libspng reads: `head` first, then data[offset...]. Once the last
// row is out, the stream ends 4 bytes after the last byte read (the CRC of
// the chunk that held it) and a bare IEND follows, so spng_decode_chunks
// checks that CRC and reads nothing of the file after it.
typedef struct {
    const uint8_t *data;
    size_t length;
    size_t offset;
    size_t end;            // SIZE_MAX until the last row is out
    uint8_t head[8 + 25 + 12 + 768 + 12 + 256];
    size_t head_length, head_offset;
    size_t iend_offset;    // bytes of the bare IEND served
} spng_source;

static const uint8_t iend_chunk[12] = { 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82 };

static int source_read(spng_ctx *ctx, void *user, void *dest, size_t length) {
    (void)ctx;
    spng_source *src = user;
    uint8_t *out = dest;
    size_t n = src->head_length - src->head_offset;
    if (n > length) n = length;
    memcpy(out, src->head + src->head_offset, n);
    src->head_offset += n;
    out += n;
    length -= n;
    size_t stop = src->end < src->length ? src->end : src->length;
    n = stop > src->offset ? stop - src->offset : 0;
    if (n > length) n = length;
    memcpy(out, src->data + src->offset, n);
    src->offset += n;
    out += n;
    length -= n;
    if (length && src->end != SIZE_MAX && src->offset == src->end) {
        n = sizeof iend_chunk - src->iend_offset;
        if (n > length) n = length;
        memcpy(out, iend_chunk + src->iend_offset, n);
        src->iend_offset += n;
        length -= n;
    }
    return length ? SPNG_IO_EOF : 0;
}

struct png_rows {
    spng_ctx *ctx;
    spng_source src;
    uint32_t width, height, next_row;
    int interlaced;
    uint8_t *image;        // whole image, only for Adam7 (every pass fills part of each row)
};

static void put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

// Appends one chunk with its CRC to the head.
static void add_chunk(spng_source *src, const char *type, const uint8_t *body, uint32_t length) {
    uint8_t *p = src->head + src->head_length;
    put_be32(p, length);
    memcpy(p + 4, type, 4);
    if (length) memcpy(p + 8, body, length);
    put_be32(p + 8 + length, (uint32_t)crc32(0, p + 4, length + 4));
    src->head_length += 12 + length;
}


// libspng's code as the message thumbd answers: a CRC error here is on image
// data (the chunks before it were read by libpng), a short stream is truncated.
static int fail(int code, char *message, size_t message_size) {
    if (code == SPNG_ECHUNK_CRC) thumbd_set_message(message, message_size, "IDAT: CRC error");
    else if (code == SPNG_IO_EOF || code == SPNG_EIDAT_TOO_SHORT)
        thumbd_set_message(message, message_size, "PNG data ends early (truncated)");
    else if (code == SPNG_EMEM) { thumbd_set_message(message, message_size, "out of memory"); return THUMBD_NO_MEMORY; }
    else thumbd_set_message(message, message_size, spng_strerror(code));
    return THUMBD_CORRUPT;
}

png_rows *png_rows_open(const uint8_t *data, size_t length, size_t idat_offset, const png_rows_head *head,
                        int *status, char *message, size_t message_size) {
    png_rows *r = calloc(1, sizeof *r);
    // The Adler-32 comes at the end of the compressed data, after the last row,
    // where thumbd stops reading (it was never checked): not computing it saves
    // a pass over every inflated byte.
    if (r) r->ctx = spng_ctx_new(SPNG_CTX_IGNORE_ADLER32);
    if (!r || !r->ctx) {
        free(r);
        *status = THUMBD_NO_MEMORY;
        thumbd_set_message(message, message_size, "out of memory");
        return NULL;
    }
    spng_source *src = &r->src;
    src->data = data;
    src->length = length;
    src->offset = idat_offset;
    src->end = SIZE_MAX;
    memcpy(src->head, data, 8 + 25);   // the signature and IHDR, as libpng read them
    src->head_length = 8 + 25;
    if (head->palette_entries) add_chunk(src, "PLTE", head->palette, head->palette_entries * 3);
    if (head->trns_length) add_chunk(src, "tRNS", head->trns, head->trns_length);
    // Every CRC is an error, critical or not (API.md § Output "Strictness"); the
    // limits are libpng's (a PLTE or tRNS is all libspng reads before the image
    // data), and unknown chunks are never kept.
    spng_set_crc_action(r->ctx, SPNG_CRC_ERROR, SPNG_CRC_ERROR);
    spng_set_chunk_limits(r->ctx, THUMBD_PNG_CHUNK_MAX, THUMBD_PNG_CHUNK_MAX);
    spng_set_option(r->ctx, SPNG_KEEP_UNKNOWN_CHUNKS, 0);
    spng_set_option(r->ctx, SPNG_CHUNK_COUNT_LIMIT, 256);
    spng_set_image_limits(r->ctx, THUMBD_MAX_SIDE, THUMBD_MAX_SIDE);
    int code = spng_set_png_stream(r->ctx, source_read, src);
    struct spng_ihdr ihdr;
    if (!code) code = spng_get_ihdr(r->ctx, &ihdr);
    // Palette to RGB, gray under 8 bits to 8, tRNS to alpha, 16-bit samples to
    // their high byte (API.md § Output); gAMA, sBIT and the rest are not applied.
    if (!code) code = spng_decode_image(r->ctx, NULL, 0, SPNG_FMT_RGBA8, SPNG_DECODE_TRNS | SPNG_DECODE_PROGRESSIVE);
    if (code) {
        *status = fail(code, message, message_size);
        png_rows_close(r);
        return NULL;
    }
    r->width = ihdr.width;
    r->height = ihdr.height;
    r->interlaced = ihdr.interlace_method != 0;
    *status = THUMBD_OK;
    return r;
}

// After the last row: the CRC of the chunk that held it, and nothing more.
static int finish(png_rows *r, char *message, size_t message_size) {
    r->src.end = r->src.offset + 4;
    int code = spng_decode_chunks(r->ctx);
    return code ? fail(code, message, message_size) : THUMBD_OK;
}

// One row of the image, or for Adam7 one pass's pixels of a row, placed in the
// whole image; SPNG_EOI with the last. (libspng 0.7.3 returns 0 for the last
// row of an interlaced image whose last pass is not the 7th: the next row's
// info then says SPNG_EOI.)
static int decode_one(png_rows *r, uint8_t *row, size_t stride) {
    if (!r->interlaced) return spng_decode_row(r->ctx, row, stride);
    struct spng_row_info info;
    int code = spng_get_row_info(r->ctx, &info);
    if (code) return code == SPNG_EOI ? SPNG_EOI : SPNG_EINTERNAL;
    return spng_decode_row(r->ctx, r->image + (size_t)info.row_num * stride, stride);
}

int png_rows_read(png_rows *r, uint8_t *out, uint32_t max_rows, uint32_t *rows_read, thumbd_deadline deadline,
                  char *message, size_t message_size) {
    *rows_read = 0;
    size_t stride = (size_t)r->width * 4;
    if (r->interlaced && !r->image) {
        r->image = calloc(r->height, stride);
        if (!r->image) { thumbd_set_message(message, message_size, "out of memory"); return THUMBD_NO_MEMORY; }
        for (;;) {
            if (thumbd_deadline_passed(deadline)) {
                r->next_row = r->height;
                thumbd_set_message(message, message_size, "render deadline passed");
                return THUMBD_DEADLINE;
            }
            int code = decode_one(r, NULL, stride);
            if (code == SPNG_EOI) break;
            if (code) { r->next_row = r->height; return fail(code, message, message_size); }
        }
        int status = finish(r, message, message_size);
        if (status != THUMBD_OK) { r->next_row = r->height; return status; }
    }
    uint32_t n = 0;
    while (n < max_rows && r->next_row < r->height) {
        uint8_t *row = out + (size_t)n * stride;
        if (r->interlaced) {
            memcpy(row, r->image + (size_t)r->next_row * stride, stride);
        } else {
            if (thumbd_deadline_passed(deadline)) {
                thumbd_set_message(message, message_size, "render deadline passed");
                return THUMBD_DEADLINE;
            }
            int code = decode_one(r, row, stride);
            if (code == SPNG_EOI) {
                // The last row: the chunk that held it must be intact before any of this batch counts.
                int status = finish(r, message, message_size);
                if (status != THUMBD_OK) return status;
            } else if (code) {
                return fail(code, message, message_size);
            }
        }
        n++;
        r->next_row++;
    }
    *rows_read = n;
    return THUMBD_OK;
}

void png_rows_close(png_rows *r) {
    if (!r) return;
    spng_ctx_free(r->ctx);
    free(r->image);
    free(r);
}

void png_rows_size(const png_rows *r, uint32_t *width, uint32_t *height) {
    *width = r->width;
    *height = r->height;
}
