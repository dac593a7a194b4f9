#include <string.h>
#include <zlib.h>
#include "thumbd_codec.h"

// The PNG structure walk (PNGStructure.swift) needs the inflated size of
// compressed ancillary chunks without holding the inflated bytes: zlib's
// streaming inflate into a small scratch buffer, stopped as soon as the
// count passes the caller's limit, so a zlib bomb costs at most `limit`
// bytes of inflate work. Here rather than in Swift because zlib's
// inflateInit is a macro.
size_t thumbd_inflated_length(const void *data, size_t length, size_t limit) {
    unsigned char scratch[16384];
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    if (inflateInit(&stream) != Z_OK) return 0;
    const unsigned char *next = data;
    size_t left = length, total = 0;
    for (;;) {
        // avail_in is a uInt: feed a longer input in pieces.
        if (stream.avail_in == 0 && left > 0) {
            uInt piece = left > (1u << 30) ? (1u << 30) : (uInt)left;
            stream.next_in = (unsigned char *)next;
            stream.avail_in = piece;
            next += piece;
            left -= piece;
        }
        stream.next_out = scratch;
        stream.avail_out = sizeof scratch;
        int status = inflate(&stream, Z_NO_FLUSH);
        total += sizeof scratch - stream.avail_out;
        if (total > limit) break;
        // The end of the stream, bad data, or input exhausted with no
        // progress (a truncated stream): what was inflated so far is the size.
        if (status == Z_STREAM_END || (status != Z_OK && status != Z_BUF_ERROR)) break;
        if (status == Z_BUF_ERROR && stream.avail_in == 0 && left == 0) break;
    }
    inflateEnd(&stream);
    return total;
}
