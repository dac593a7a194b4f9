#ifndef THUMBD_CURL_H
#define THUMBD_CURL_H

#include <stddef.h>
#include <stdint.h>

/* Downloads on libcurl, driven by one thread per engine (the multi
 * interface). Swift sees only plain data: requests go in as strings and
 * numbers, results come out as a struct of flags and the response head. The
 * only calls back into Swift are the address check, the body sink and the
 * completion, plain C function pointers that must not throw or block. */

/* Asked before every connection libcurl opens and before every request sent
 * on a reused one. `family` is 4 or 6, `address` 4 or 16 bytes in network
 * order. Returns non-zero to allow. */
typedef int (*thumbd_address_check)(void *context, int family, const unsigned char *address);

/* Takes the next bytes of a 2xx body (de-chunked), in order, on the engine's
 * thread, as libcurl reads them: the shim keeps no copy of a body, so no
 * buffer sized by what an origin announces ever exists (SourcesAndLimits.md
 * "Downloads"). Never called for other statuses. Returns 0 to go on,
 * non-zero to stop the transfer (`sink_failed`). */
typedef int (*thumbd_body_write)(void *context, const unsigned char *bytes, size_t length);

/* Asked on the engine's thread before a waiting transfer starts and as a
 * running one progresses (at least once a second): non-zero while someone
 * still waits for the answer; 0 ends the transfer (`abandoned`). Must be
 * quick and must not block. */
typedef int (*thumbd_wanted)(void *context);

/* How a transfer ended. Pointers are valid only during the completion call. */
typedef struct thumbd_result {
    int curl_code;              /* CURLcode; 0 when the whole response arrived */
    int error_kind;             /* THUMBD_KIND_* for curl_code */
    long status;                /* last status line seen, 0 if none */
    size_t body_length;         /* bytes of the 2xx body handed to `write`; 0 when too_large */
    const char *head;           /* the final response head: status line and fields, CRLF separated */
    size_t head_length;
    int refused;                /* an address check said no (some address, or a reused connection) */
    int too_large;              /* the body passed max_bytes (announced or received) */
    int bad_length;             /* a Content-Length that is not 1*DIGIT, or two that differ */
    int bad_chunk;              /* malformed chunked framing */
    int head_too_large;         /* the response head passed THUMBD_MAX_HEAD bytes */
    int head_line_too_long;     /* libcurl refused a head line over CURL_MAX_HTTP_HEADER (100 KiB) */
    int sink_failed;            /* `write` said stop (the file could not be written) */
    int body_skipped;           /* a non-2xx body was cut short on purpose: the head is the answer */
    int expired_in_queue;       /* the deadline passed before a slot was free */
    int connected;              /* a connection was established */
    int connect_bounded;        /* the connect timeout was shorter than what remained of the deadline */
    int cancelled;              /* the engine stopped first */
    int abandoned;              /* `wanted` said nobody waits for the answer any more */
    const unsigned char *error_body; /* with keep_error_body: the first bytes of a non-2xx body, as received */
    size_t error_body_length;   /* at most THUMBD_MAX_ERROR_BODY */
} thumbd_result;

enum {
    THUMBD_KIND_NONE = 0, THUMBD_KIND_RESOLVE, THUMBD_KIND_CONNECT, THUMBD_KIND_TIMEOUT, THUMBD_KIND_TLS,
    THUMBD_KIND_NOTHING, THUMBD_KIND_PARTIAL, THUMBD_KIND_RECEIVE, THUMBD_KIND_PROTOCOL, THUMBD_KIND_OTHER,
};

enum { THUMBD_METHOD_GET = 0, THUMBD_METHOD_HEAD, THUMBD_METHOD_PUT, THUMBD_METHOD_DELETE };

#define THUMBD_MAX_HEAD 65536
/* What keep_error_body keeps: S3's error document names its <Code> near the start. */
#define THUMBD_MAX_ERROR_BODY 4096

typedef void (*thumbd_done)(void *context, const thumbd_result *result);

typedef struct thumbd_request {
    const char *url;
    const char *expected_host;  /* the host the rules were checked for; libcurl's parse must agree */
    const char *headers;        /* extra request fields, one per line ('\n'), may be NULL */
    const char *resolve;        /* CURLOPT_RESOLVE entries, one per line, may be NULL (tests) */
    const char *ca_file;        /* CURLOPT_CAINFO, NULL for the system store */
    long connect_timeout_ms;
    int64_t deadline_ms;        /* thumbd_monotonic_ms() clock */
    size_t max_bytes;
    int urgent;                 /* queue at the front (a redirect of a download already admitted) */
    /* S3 (S3Sources.md): libcurl signs the request with
     * AWS Signature V4 (CURLOPT_AWS_SIGV4, e.g. "aws:amz:us-east-1:s3") as
     * `username` (access key id) with `password` (secret access key). NULL for
     * plain downloads. The shim keeps its copy of the secret only while the
     * transfer lives, and wipes it when freed. */
    const char *aws_sigv4;
    const char *username;
    const char *password;
    int path_as_is;             /* send the path byte for byte: no dot-segment removal (S3 keys) */
    int keep_error_body;        /* keep the start of a non-2xx body (S3's error code) */
    int own_host_share;         /* not held to one host's share of the slots: the operator's S3 endpoint */
    /* The shared originals store (SeveralInstances.md) also writes, looks and
     * deletes: THUMBD_METHOD_*. A PUT sends `upload_length` bytes, copied from
     * `upload_bytes` when it is not NULL, else read from `upload_fd` at
     * `upload_offset` (the shim keeps a duplicate of the descriptor, so the
     * caller's may close at once). */
    int method;
    const unsigned char *upload_bytes;
    int upload_fd;
    int64_t upload_offset;
    size_t upload_length;
    thumbd_body_write write;     /* NULL: a 2xx body is counted and dropped */
    void *write_context;
    thumbd_address_check check;
    void *check_context;
    thumbd_done done;
    void *done_context;
    thumbd_wanted wanted;        /* NULL: always wanted */
    void *wanted_context;
} thumbd_request;

typedef struct thumbd_engine thumbd_engine;

/* Starts the engine's thread; NULL if it cannot. */
thumbd_engine *thumbd_engine_start(int max_running);
/* Transfers at once from now on (running ones are not stopped). */
void thumbd_engine_set_limit(thumbd_engine *engine, int max_running);
/* Copies the request; its `done` is called exactly once on the engine's
 * thread. Returns 0, or -1 (out of memory, engine stopping): then `done` is
 * never called. */
int thumbd_engine_submit(thumbd_engine *engine, const thumbd_request *request);
/* Running, queued, and the most ever running at once. */
void thumbd_engine_counts(thumbd_engine *engine, int *running, int *queued, int *peak_running);
/* Ends the thread (transfers left are completed with `cancelled`) and frees
 * the engine. Safe from the engine's own thread (from a completion). */
void thumbd_engine_stop(thumbd_engine *engine);

int64_t thumbd_monotonic_ms(void);
/* libcurl's generic text for a code; never names an address. */
const char *thumbd_curl_strerror(int code);

#endif
