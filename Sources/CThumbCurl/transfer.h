#ifndef THUMBD_TRANSFER_H
#define THUMBD_TRANSFER_H

#include <curl/curl.h>
#include "thumbd_curl.h"

typedef struct thumbd_buffer {
    unsigned char *bytes;
    size_t length, capacity;
} thumbd_buffer;

/* The sockets libcurl opened through us and has not closed, so a request
 * on a reused connection can find its socket by local port. The engine's
 * thread only. */
typedef struct thumbd_sockets {
    curl_socket_t *fds;
    size_t count, capacity;
} thumbd_sockets;

void thumbd_sockets_free(thumbd_sockets *s);

/* One request to one URL (one hop of a download), owned by the engine. */
typedef struct thumbd_transfer {
    struct thumbd_transfer *next;
    CURL *easy;
    CURLU *url_handle;
    struct curl_slist *headers, *resolve;
    char *url, *expected_host, *ca_file;
    char *aws_sigv4, *username, *password;
    int path_as_is, keep_error_body, own_host_share;
    /* THUMBD_METHOD_*; a PUT's body comes from `upload` or from `upload_fd`
     * (a duplicate owned here, -1 when none) at `upload_offset`. */
    int method;
    thumbd_buffer upload;
    int upload_fd;
    int64_t upload_offset;
    size_t upload_length, uploaded;
    long connect_timeout_ms;
    int64_t deadline_ms;
    size_t max_bytes;
    int urgent;
    thumbd_body_write write;
    void *write_context;
    thumbd_address_check check;
    void *check_context;
    thumbd_done done;
    void *done_context;
    thumbd_wanted wanted;
    void *wanted_context;

    /* The response being read. */
    long status;
    int head_done;            /* the final (non-1xx) head is complete */
    int content_length_seen;
    int64_t content_length;
    int chunked;
    thumbd_buffer head;
    /* Bytes of the 2xx body handed to `write` so far: the only trace of the
     * body kept here (it goes straight to the sink). */
    uint64_t body_length;
    size_t skipped;
    /* With keep_error_body: the first THUMBD_MAX_ERROR_BODY bytes of a non-2xx body. */
    thumbd_buffer error_body;
    /* Chunked decoding (transfer decoding is ours, so announced sizes are seen). */
    int chunk_state;
    uint64_t chunk_left;
    int chunk_digits;
    /* The connection's socket and the bytes it had received when the request went out (TCP_INFO). */
    thumbd_sockets *sockets;
    curl_socket_t fd;
    uint64_t received_at_request;
    /* Monotonic ms when the bytes read first passed the head cap with the
     * head unfinished; 0 while they have not. */
    int64_t head_suspect_since_ms;

    thumbd_result result;
} thumbd_transfer;

thumbd_transfer *thumbd_transfer_new(const thumbd_request *request);
/* Creates and configures the easy handle; non-zero if the URL is refused. */
int thumbd_transfer_prepare(thumbd_transfer *t, CURLSH *share, thumbd_sockets *sockets, int64_t now_ms);
/* Fills `result` from the easy handle and the callbacks' flags. */
void thumbd_transfer_finish(thumbd_transfer *t, CURLcode code);
void thumbd_transfer_free(thumbd_transfer *t);

#endif
