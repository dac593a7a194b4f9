#include <stdlib.h>
#include <string.h>
#include "avif_swap.h"

// libavif 0.11 decodes no thumbnail item: AVIF_DECODER_SOURCE_THUMBNAIL_ITEM
// is declared but unimplemented, and an item that is some image's thumbnail
// is skipped when the primary is looked for. This reader makes libavif
// decode one as its primary image: it serves the file's own bytes, except
// that the meta box comes from a copy in which pitm names the thumbnail and
// the thumbnail's thmb reference has another type ('free': libavif reads
// every iref child the same way and ignores the types it does not know).
// Nothing else differs, so libavif applies the thumbnail's own clap, irot,
// imir and colr and finds its own alpha plane (its auxl item), as it would
// for a primary image. The structure walk found both fields
// (ISOBMFFPrimarySwap) and bounded the meta box to 1 MiB.

typedef struct {
    avifIO io;   // first, so that libavif's avifIO * is one of these
    const uint8_t *data;
    size_t length;
    uint8_t *copy;        // the file from copy_offset to the meta box's end, patched
    uint64_t copy_offset;
    size_t copy_length;
    uint64_t meta_offset;
} swap_reader;

// libavif reads a top-level box header as 32 bytes from where the box
// starts, so the header read of a box shorter than that just before meta
// (a 24-byte ftyp) reaches into it: the copy starts this much earlier.
enum { HEADER_READ = 32 };

static avifResult swap_read(struct avifIO *io, uint32_t flags, uint64_t offset, size_t size, avifROData *out) {
    swap_reader *r = (swap_reader *)io;
    if (flags != 0 || offset > r->length) return AVIF_RESULT_IO_ERROR;
    if (size > r->length - offset) size = (size_t)(r->length - offset);
    uint64_t end = offset + size, copy_end = r->copy_offset + r->copy_length;
    if (offset >= r->copy_offset && end <= copy_end) {
        out->data = r->copy + (offset - r->copy_offset);
    } else if (end <= r->meta_offset || offset >= copy_end) {
        out->data = r->data + offset;
    } else {
        // Part inside meta, part outside: no box of a sound file is read so
        // (an iloc extent overlapping meta would be). The decode fails and
        // the caller decodes the primary instead.
        return AVIF_RESULT_IO_ERROR;
    }
    out->size = size;
    return AVIF_RESULT_OK;
}

static void swap_destroy(struct avifIO *io) {
    swap_reader *r = (swap_reader *)io;
    free(r->copy);
    free(r);
}

static void put_be(uint8_t *at, uint32_t value, uint32_t size) {
    for (uint32_t i = 0; i < size; i++) at[i] = (uint8_t)(value >> (8 * (size - 1 - i)));
}

avifIO *thumbd_avif_swap_reader(const void *data, size_t length, const thumbd_thumbnail *t) {
    uint64_t meta_end = t->meta_offset + t->meta_length;
    if (t->meta_length == 0 || meta_end > length || meta_end < t->meta_offset
        || (t->primary_id_size != 2 && t->primary_id_size != 4)
        || (t->primary_id_size == 2 && t->item > 0xFFFF)
        || t->primary_id_offset < t->meta_offset || t->primary_id_offset + t->primary_id_size > meta_end
        || t->reference_type_offset < t->meta_offset || t->reference_type_offset + 4 > meta_end)
        return NULL;
    swap_reader *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->copy_offset = t->meta_offset > HEADER_READ ? t->meta_offset - HEADER_READ : 0;
    r->copy_length = (size_t)(meta_end - r->copy_offset);
    r->copy = malloc(r->copy_length);
    if (!r->copy) { free(r); return NULL; }
    memcpy(r->copy, (const uint8_t *)data + r->copy_offset, r->copy_length);
    put_be(r->copy + (t->primary_id_offset - r->copy_offset), t->item, t->primary_id_size);
    memcpy(r->copy + (t->reference_type_offset - r->copy_offset), "free", 4);
    r->data = data;
    r->length = length;
    r->meta_offset = t->meta_offset;
    r->io.read = swap_read;
    r->io.destroy = swap_destroy;
    r->io.sizeHint = length;
    r->io.persistent = AVIF_TRUE;   // the copy lives as long as the reader, the file longer
    return &r->io;
}
