/* The callbacks under test are static in CThumbCurl/transfer.c, so this file
 * compiles that source again (unchanged) into the fuzzer, its exported names
 * renamed so they do not clash with the CThumbCurl the rest of the fuzzer
 * links (ThumbFetch). What is fuzzed is therefore exactly the shipped code. */
#define thumbd_transfer_new fuzz_copy_thumb_transfer_new
#define thumbd_transfer_free fuzz_copy_thumb_transfer_free
#define thumbd_transfer_prepare fuzz_copy_thumb_transfer_prepare
#define thumbd_transfer_finish fuzz_copy_thumb_transfer_finish
#define thumbd_sockets_free fuzz_copy_thumb_sockets_free
#define thumbd_curl_strerror fuzz_copy_thumb_curl_strerror
#include "../CThumbCurl/transfer.c"

#include "fuzz_curl_shim.h"

static thumbd_transfer *slots[2];
/* What the body sink received, per slot: the shim itself keeps no body. */
static thumbd_buffer bodies[2];

static int collect(void *context, const unsigned char *bytes, size_t length) {
    return buffer_append(context, bytes, length) == 0 ? 0 : 1;
}

const unsigned char *fuzz_origin_body(int slot, size_t *length) {
    *length = bodies[slot].length;
    return bodies[slot].bytes;
}

static const unsigned char *line_end(const unsigned char *p, const unsigned char *end) {
    const unsigned char *lf = memchr(p, '\n', (size_t)(end - p));
    return lf ? lf + 1 : end;
}

const void *fuzz_origin_response(const unsigned char *data, size_t length, size_t max_bytes,
                                 unsigned piece_seed, int slot) {
    thumbd_transfer_free(slots[slot]);
    bodies[slot].length = 0;
    thumbd_request request = { .url = "http://origin.test/a.jpg", .expected_host = "origin.test",
                              .max_bytes = max_bytes, .write = collect, .write_context = &bodies[slot] };
    thumbd_transfer *t = slots[slot] = thumbd_transfer_new(&request);
    if (!t) abort();
    t->fd = CURL_SOCKET_BAD;
    const unsigned char *p = data, *end = data + length;
    CURLcode code = CURLE_OK;
    /* The head: libcurl passes each field line whole, CRLF included, and a
     * 1xx head is followed by the next head. */
    while (p < end && !t->head_done) {
        const unsigned char *next = line_end(p, end);
        size_t n = (size_t)(next - p);
        if (on_header((char *)p, 1, n, t) != n) { code = CURLE_WRITE_ERROR; break; }
        p = next;
    }
    if (code == CURLE_OK && !t->head_done) code = CURLE_PARTIAL_FILE;
    /* The body, as libcurl's reads happen to cut it. */
    unsigned seed = piece_seed;
    while (code == CURLE_OK && p < end) {
        size_t n = (size_t)(end - p);
        if (seed) {
            seed = seed * 1103515245u + 12345u + *p;
            size_t piece = 1 + (seed >> 16) % 97;
            if (piece < n) n = piece;
        }
        if (on_body((char *)p, 1, n, t) != n) code = CURLE_WRITE_ERROR;
        p += n;
    }
    thumbd_transfer_finish(t, code);
    return &t->result;
}
