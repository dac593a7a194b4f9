#ifndef THUMB_TRANSFER_H
#define THUMB_TRANSFER_H

#include <curl/curl.h>
#include "thumb_curl.h"

typedef struct thumb_buffer {
    unsigned char *bytes;
    size_t length, capacity;
} thumb_buffer;

/* The sockets libcurl opened through us and has not closed, so a request
 * on a reused connection can find its socket by local port. The engine's
 * thread only. */
typedef struct thumb_sockets {
    curl_socket_t *fds;
    size_t count, capacity;
} thumb_sockets;

void thumb_sockets_free(thumb_sockets *s);

/* One request to one URL (one hop of a download), owned by the engine. */
typedef struct thumb_transfer {
    struct thumb_transfer *next;
    CURL *easy;
    CURLU *url_handle;
    struct curl_slist *headers, *resolve;
    char *url, *expected_host, *ca_file;
    char *aws_sigv4, *username, *password;
    int path_as_is, keep_error_body, own_host_share;
    /* THUMB_METHOD_*; a PUT's body comes from `upload` or from `upload_fd`
     * (a duplicate owned here, -1 when none) at `upload_offset`. */
    int method;
    thumb_buffer upload;
    int upload_fd;
    int64_t upload_offset;
    size_t upload_length, uploaded;
    long connect_timeout_ms;
    int64_t deadline_ms;
    size_t max_bytes;
    int urgent;
    thumb_body_write write;
    void *write_context;
    thumb_address_check check;
    void *check_context;
    thumb_done done;
    void *done_context;
    thumb_wanted wanted;
    void *wanted_context;

    /* The response being read. */
    long status;
    int head_done;            /* the final (non-1xx) head is complete */
    int content_length_seen;
    int64_t content_length;
    int chunked;
    thumb_buffer head;
    /* Bytes of the 2xx body handed to `write` so far: the only trace of the
     * body kept here (it goes straight to the sink). */
    uint64_t body_length;
    size_t skipped;
    /* With keep_error_body: the first THUMB_MAX_ERROR_BODY bytes of a non-2xx body. */
    thumb_buffer error_body;
    /* Chunked decoding (transfer decoding is ours, so announced sizes are seen). */
    int chunk_state;
    uint64_t chunk_left;
    int chunk_digits;
    /* The connection's socket and the bytes it had received when the request went out (TCP_INFO). */
    thumb_sockets *sockets;
    curl_socket_t fd;
    uint64_t received_at_request;
    /* Monotonic ms when the bytes read first passed the head cap with the
     * head unfinished; 0 while they have not. */
    int64_t head_suspect_since_ms;

    thumb_result result;
} thumb_transfer;

thumb_transfer *thumb_transfer_new(const thumb_request *request);
/* Creates and configures the easy handle; non-zero if the URL is refused. */
int thumb_transfer_prepare(thumb_transfer *t, CURLSH *share, thumb_sockets *sockets, int64_t now_ms);
/* Fills `result` from the easy handle and the callbacks' flags. */
void thumb_transfer_finish(thumb_transfer *t, CURLcode code);
void thumb_transfer_free(thumb_transfer *t);

#endif
