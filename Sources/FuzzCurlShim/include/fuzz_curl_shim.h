#ifndef FUZZ_CURL_SHIM_H
#define FUZZ_CURL_SHIM_H

#include <stddef.h>

/* Drives CThumbCurl's own response handling (transfer.c: the header
 * callback's status / Content-Length / Transfer-Encoding parsing and head
 * cap, the body callback's byte limit and chunked decoding) with bytes as
 * libcurl would hand them over: the head line by line, then the body in
 * pieces. No socket, no libcurl transfer. `piece_seed` 0 hands the body over
 * whole, otherwise in pieces whose sizes follow from the seed and the bytes.
 * Returns the `thumbd_result` (CThumbCurl's type), valid until the next call
 * with the same `slot` (0 or 1). Fuzzing only. */
const void *fuzz_origin_response(const unsigned char *data, size_t length, size_t max_bytes,
                                 unsigned piece_seed, int slot);

/* The bytes the transfer's body sink received in the last call with `slot`
 * (valid until the next one). */
const unsigned char *fuzz_origin_body(int slot, size_t *length);

#endif
