#include "thumbd_codec.h"

static uint32_t rd16(const uint8_t *p, int le) { return le ? (uint32_t)(p[0] | p[1] << 8) : (uint32_t)(p[0] << 8 | p[1]); }
static uint32_t rd32(const uint8_t *p, int le) {
    return le ? ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24)
              : ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3]);
}

int thumbd_exif_orientation(const void *tiff, size_t length) {
    const uint8_t *p = tiff;
    if (!p || length < 8) return 1;
    int le;
    if (p[0] == 'I' && p[1] == 'I') le = 1;
    else if (p[0] == 'M' && p[1] == 'M') le = 0;
    else return 1;
    if (rd16(p + 2, le) != 42) return 1;
    uint32_t ifd = rd32(p + 4, le);
    if (ifd > length || length - ifd < 2) return 1;
    uint32_t count = rd16(p + ifd, le);
    for (uint32_t i = 0; i < count; i++) {
        size_t entry = (size_t)ifd + 2 + (size_t)i * 12;
        if (entry + 12 > length) return 1;
        if (rd16(p + entry, le) != 0x0112) continue;
        uint32_t type = rd16(p + entry + 2, le);
        uint32_t value;
        if (type == 3) value = rd16(p + entry + 8, le);        // SHORT, stored in the value field
        else if (type == 4) value = rd32(p + entry + 8, le);   // LONG, tolerated
        else return 1;
        return (value >= 1 && value <= 8) ? (int)value : 1;
    }
    return 1;
}
