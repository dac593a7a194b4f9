#ifndef THUMBD_PNG_ROWS_H
#define THUMBD_PNG_ROWS_H
// Internal to the shim: a PNG's image data through libspng (png_rows.c), after
// libpng has read the chunks before it (png.c).
#include <stddef.h>
#include <stdint.h>
#include "thumbd_codec.h"
#include "decoder.h"

/// What libpng accepted of the chunks libspng needs besides IHDR: the palette
/// and the tRNS chunk's body (0 entries / bytes when absent or ignored).
typedef struct {
    uint8_t palette[768];
    uint32_t palette_entries;
    uint8_t trns[256];
    uint32_t trns_length;
} png_rows_head;

typedef struct png_rows png_rows;

/// Starts reading RGBA8 rows from the first IDAT (at idat_offset) on; the
/// data's signature and IHDR are taken as they are (libpng checked them).
png_rows *png_rows_open(const uint8_t *data, size_t length, size_t idat_offset, const png_rows_head *head,
                        int *status, char *message, size_t message_size);
/// Up to max_rows rows; the deadline is checked before each. With the last
/// row, the CRC of the chunk that held it; nothing after it is read.
int png_rows_read(png_rows *rows, uint8_t *out, uint32_t max_rows, uint32_t *rows_read, thumbd_deadline deadline,
                  char *message, size_t message_size);
void png_rows_close(png_rows *rows);
void png_rows_size(const png_rows *rows, uint32_t *width, uint32_t *height);

#endif
