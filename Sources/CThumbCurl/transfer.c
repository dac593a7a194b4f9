#define _GNU_SOURCE
#include "transfer.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <linux/tcp.h>   /* struct tcp_info with tcpi_bytes_received (glibc's lacks it) */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Non-2xx bodies are read (so the connection can be reused) up to this, then dropped. */
#define THUMBD_MAX_SKIPPED 65536
/* CURLE_TOO_LARGE, which libcurl 8.6 and later return where 7.x said
 * CURLE_OUT_OF_MEMORY (a buffer reached its maximum); not in older headers. */
#define THUMBD_CURLE_TOO_LARGE 100

static int buffer_append(thumbd_buffer *b, const void *bytes, size_t n) {
    if (n > SIZE_MAX - b->length) return -1;
    if (b->length + n > b->capacity) {
        size_t capacity = b->capacity ? b->capacity : 16384;
        while (capacity < b->length + n) capacity = capacity > SIZE_MAX / 2 ? b->length + n : capacity * 2;
        unsigned char *grown = realloc(b->bytes, capacity);
        if (!grown) return -1;
        b->bytes = grown;
        b->capacity = capacity;
    }
    memcpy(b->bytes + b->length, bytes, n);
    b->length += n;
    return 0;
}

static char *copy(const char *s) { return s ? strdup(s) : NULL; }

static struct curl_slist *lines(const char *text) {
    struct curl_slist *list = NULL;
    if (!text) return NULL;
    const char *start = text;
    while (*start) {
        const char *end = strchr(start, '\n');
        size_t n = end ? (size_t)(end - start) : strlen(start);
        if (n > 0) {
            char *line = strndup(start, n);
            struct curl_slist *more = line ? curl_slist_append(list, line) : NULL;
            free(line);
            if (!more) { curl_slist_free_all(list); return NULL; }
            list = more;
        }
        start += n + (end ? 1 : 0);
    }
    return list;
}

thumbd_transfer *thumbd_transfer_new(const thumbd_request *r) {
    thumbd_transfer *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->upload_fd = -1;
    t->url = copy(r->url);
    t->expected_host = copy(r->expected_host);
    t->ca_file = copy(r->ca_file);
    t->headers = lines(r->headers);
    t->resolve = lines(r->resolve);
    t->aws_sigv4 = copy(r->aws_sigv4);
    t->username = copy(r->username);
    t->password = copy(r->password);
    if (!t->url || !t->expected_host || (r->ca_file && !t->ca_file) || (r->headers && *r->headers && !t->headers)
        || (r->resolve && *r->resolve && !t->resolve) || (r->aws_sigv4 && !t->aws_sigv4)
        || (r->username && !t->username) || (r->password && !t->password)) {
        thumbd_transfer_free(t);
        return NULL;
    }
    t->connect_timeout_ms = r->connect_timeout_ms;
    t->deadline_ms = r->deadline_ms;
    t->max_bytes = r->max_bytes;
    t->urgent = r->urgent;
    t->path_as_is = r->path_as_is;
    t->keep_error_body = r->keep_error_body;
    t->own_host_share = r->own_host_share;
    t->method = r->method;
    t->upload_fd = -1;
    if (t->method == THUMBD_METHOD_PUT) {
        t->upload_length = r->upload_length;
        int taken = r->upload_bytes ? (r->upload_length == 0 || buffer_append(&t->upload, r->upload_bytes, r->upload_length) == 0)
                                    : (t->upload_fd = fcntl(r->upload_fd, F_DUPFD_CLOEXEC, 0)) >= 0;
        t->upload_offset = r->upload_offset;
        if (!taken) {
            thumbd_transfer_free(t);
            return NULL;
        }
    }
    t->write = r->write;
    t->write_context = r->write_context;
    t->check = r->check;
    t->check_context = r->check_context;
    t->done = r->done;
    t->done_context = r->done_context;
    t->wanted = r->wanted;
    t->wanted_context = r->wanted_context;
    t->content_length = -1;
    return t;
}

void thumbd_transfer_free(thumbd_transfer *t) {
    if (!t) return;
    if (t->easy) curl_easy_cleanup(t->easy);
    if (t->url_handle) curl_url_cleanup(t->url_handle);
    curl_slist_free_all(t->headers);
    curl_slist_free_all(t->resolve);
    free(t->url);
    free(t->expected_host);
    free(t->ca_file);
    free(t->aws_sigv4);
    free(t->username);
    /* The secret access key: no copy of it outlives the transfer. */
    if (t->password) explicit_bzero(t->password, strlen(t->password));
    free(t->password);
    free(t->head.bytes);
    free(t->error_body.bytes);
    free(t->upload.bytes);
    if (t->upload_fd >= 0) close(t->upload_fd);
    free(t);
}

/* MARK: - The address rule, at connect time */

static int allowed(thumbd_transfer *t, const struct sockaddr *sa) {
    if (sa->sa_family == AF_INET)
        return t->check(t->check_context, 4, (const unsigned char *)&((const struct sockaddr_in *)sa)->sin_addr);
    if (sa->sa_family == AF_INET6)
        return t->check(t->check_context, 6, (const unsigned char *)&((const struct sockaddr_in6 *)sa)->sin6_addr);
    return 0;
}

/* Every socket libcurl opens comes through here with the address it is
 * about to connect to: a refused one is never created, so not a byte (not
 * even a SYN) reaches it, whatever DNS said earlier. */
static curl_socket_t open_socket(void *context, curlsocktype purpose, struct curl_sockaddr *address) {
    thumbd_transfer *t = context;
    if (purpose != CURLSOCKTYPE_IPCXN || !allowed(t, &address->addr)) {
        t->result.refused = 1;
        return CURL_SOCKET_BAD;
    }
    thumbd_sockets *s = t->sockets;
    if (s->count == s->capacity) {
        size_t capacity = s->capacity ? s->capacity * 2 : 64;
        curl_socket_t *grown = realloc(s->fds, capacity * sizeof *grown);
        if (!grown) return CURL_SOCKET_BAD;
        s->fds = grown;
        s->capacity = capacity;
    }
    curl_socket_t fd = socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
    if (fd != CURL_SOCKET_BAD) s->fds[s->count++] = fd;
    return fd;
}

static int close_socket(void *context, curl_socket_t fd) {
    thumbd_sockets *s = context;
    for (size_t i = 0; i < s->count; i++) {
        if (s->fds[i] == fd) { s->fds[i] = s->fds[--s->count]; break; }
    }
    return close(fd);
}

void thumbd_sockets_free(thumbd_sockets *s) {
    free(s->fds);
    s->fds = NULL;
    s->count = s->capacity = 0;
}

/* The socket of ours whose local port is `port` (libcurl does not hand out
 * a transfer's socket while it runs). */
static curl_socket_t socket_for(thumbd_sockets *s, int port) {
    for (size_t i = 0; i < s->count; i++) {
        struct sockaddr_storage a;
        socklen_t length = sizeof a;
        if (getsockname(s->fds[i], (struct sockaddr *)&a, &length) != 0) continue;
        int p = a.ss_family == AF_INET ? ntohs(((struct sockaddr_in *)&a)->sin_port)
              : a.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&a)->sin6_port) : -1;
        if (p == port) return s->fds[i];
    }
    return CURL_SOCKET_BAD;
}

/* Bytes libcurl has read from the socket: received by the kernel, less
 * what still waits in the receive queue. */
static uint64_t bytes_received(curl_socket_t fd) {
    if (fd == CURL_SOCKET_BAD) return 0;
    int queued = 0;
    if (ioctl(fd, FIONREAD, &queued) != 0 || queued < 0) queued = 0;
    struct tcp_info info;
    socklen_t length = sizeof info;
    memset(&info, 0, sizeof info);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return 0;
    return info.tcpi_bytes_received > (uint64_t)queued ? info.tcpi_bytes_received - (uint64_t)queued : 0;
}

/* Called before each request is sent, on new and reused connections alike:
 * a connection opened under earlier (wider) rules is checked again. */
static int before_request(void *context, char *primary_ip, char *local_ip, int primary_port, int local_port) {
    (void)local_ip; (void)primary_port;
    thumbd_transfer *t = context;
    struct sockaddr_in6 a6;
    struct sockaddr_in a4;
    memset(&a6, 0, sizeof a6);
    memset(&a4, 0, sizeof a4);
    int ok;
    if (inet_pton(AF_INET, primary_ip, &a4.sin_addr) == 1) {
        a4.sin_family = AF_INET;
        ok = allowed(t, (struct sockaddr *)&a4);
    } else if (inet_pton(AF_INET6, primary_ip, &a6.sin6_addr) == 1) {
        a6.sin6_family = AF_INET6;
        ok = allowed(t, (struct sockaddr *)&a6);
    } else {
        ok = 0;
    }
    if (!ok) {
        t->result.refused = 1;
        return CURL_PREREQFUNC_ABORT;
    }
    t->fd = socket_for(t->sockets, local_port);
    t->received_at_request = bytes_received(t->fd);
    t->head_suspect_since_ms = 0;
    return CURL_PREREQFUNC_OK;
}

/* MARK: - The response head */

static int digits_only(const char *s, size_t n) {
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++) if (s[i] < '0' || s[i] > '9') return 0;
    return 1;
}

static size_t on_header(char *data, size_t size, size_t count, void *context) {
    thumbd_transfer *t = context;
    size_t n = size * count;
    if (n >= 5 && memcmp(data, "HTTP/", 5) == 0) {
        /* A new response (after a 1xx, or the first): forget the previous head. */
        t->head.length = 0;
        t->status = 0;
        t->content_length_seen = 0;
        t->content_length = -1;
        t->chunked = 0;
        const char *space = memchr(data, ' ', n);
        if (space && (size_t)(space - data) + 4 <= n && digits_only(space + 1, 3))
            t->status = (space[1] - '0') * 100 + (space[2] - '0') * 10 + (space[3] - '0');
    }
    if (t->head.length + n > THUMBD_MAX_HEAD) {
        t->result.head_too_large = 1;
        return 0;
    }
    if (buffer_append(&t->head, data, n) != 0) return 0;

    size_t end = n;
    while (end > 0 && (data[end - 1] == '\r' || data[end - 1] == '\n')) end--;
    if (end == 0) {
        if (t->status >= 200) {
            t->head_done = 1;
            int success = t->status >= 200 && t->status < 300;
            /* An announced length only ever refuses: nothing is sized by it
             * (a lying origin would hold the memory until its deadline). */
            if (success && t->content_length > 0 && (uint64_t)t->content_length > t->max_bytes) {
                t->result.too_large = 1;
                return 0;
            }
        }
        return n;
    }
    const char *colon = memchr(data, ':', end);
    if (!colon) return n;
    size_t name = (size_t)(colon - data);
    const char *value = colon + 1;
    size_t length = end - name - 1;
    while (length > 0 && (*value == ' ' || *value == '\t')) { value++; length--; }
    while (length > 0 && (value[length - 1] == ' ' || value[length - 1] == '\t')) length--;
    if (name == 14 && strncasecmp(data, "Content-Length", 14) == 0) {
        /* 1*DIGIT only (RFC 9110 §8.6), and differing fields make the framing
         * invalid (RFC 9112 §6.3): libcurl would take "12abc" as 12. */
        if (!digits_only(value, length) || length > 18) {
            t->result.bad_length = 1;
            return 0;
        }
        int64_t v = 0;
        for (size_t i = 0; i < length; i++) v = v * 10 + (value[i] - '0');
        if (t->content_length_seen && v != t->content_length) {
            t->result.bad_length = 1;
            return 0;
        }
        t->content_length_seen = 1;
        t->content_length = v;
    } else if (name == 17 && strncasecmp(data, "Transfer-Encoding", 17) == 0) {
        for (size_t i = 0; i + 7 <= length; i++)
            if (strncasecmp(value + i, "chunked", 7) == 0) t->chunked = 1;
    }
    return n;
}

/* MARK: - The body */

/* Hands body bytes to the sink; -1 when it says stop. */
static int deliver(thumbd_transfer *t, const unsigned char *p, size_t n) {
    if (n == 0) return 0;
    if (t->write && t->write(t->write_context, p, n) != 0) {
        t->result.sink_failed = 1;
        return -1;
    }
    t->body_length += n;
    return 0;
}

enum { CHUNK_SIZE, CHUNK_EXTENSION, CHUNK_SIZE_LF, CHUNK_DATA, CHUNK_DATA_CR, CHUNK_DATA_LF, CHUNK_END };

static int hex(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Chunked framing, decoded here rather than by libcurl so that an announced
 * chunk size past the limit stops the download at once (libcurl would wait
 * for the bytes). libcurl still parses the framing too, to find the end of
 * the response; after the last chunk the trailer is libcurl's business.
 * Returns 0, -1 (malformed), -2 (past the limit) or -3 (the sink said stop). */
static int dechunk(thumbd_transfer *t, const unsigned char *p, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned char c = p[i];
        switch (t->chunk_state) {
        case CHUNK_SIZE: {
            int v = hex(c);
            if (v >= 0) {
                if (t->chunk_digits == 16) return -1;
                t->chunk_left = t->chunk_left << 4 | (uint64_t)v;
                t->chunk_digits++;
                i++;
                break;
            }
            if (t->chunk_digits == 0) return -1;
            if (t->chunk_left > t->max_bytes - t->body_length) { t->result.too_large = 1; return -2; }
            if (c == ';' || c == ' ' || c == '\t') t->chunk_state = CHUNK_EXTENSION;
            else if (c == '\r') t->chunk_state = CHUNK_SIZE_LF;
            else if (c == '\n') t->chunk_state = t->chunk_left ? CHUNK_DATA : CHUNK_END;
            else return -1;
            i++;
            break;
        }
        case CHUNK_EXTENSION:
            if (c == '\n') t->chunk_state = t->chunk_left ? CHUNK_DATA : CHUNK_END;
            else if (c == '\r') t->chunk_state = CHUNK_SIZE_LF;
            i++;
            break;
        case CHUNK_SIZE_LF:
            if (c != '\n') return -1;
            t->chunk_state = t->chunk_left ? CHUNK_DATA : CHUNK_END;
            i++;
            break;
        case CHUNK_DATA: {
            size_t take = n - i;
            if ((uint64_t)take > t->chunk_left) take = (size_t)t->chunk_left;
            if (deliver(t, p + i, take) != 0) return -3;
            t->chunk_left -= take;
            i += take;
            if (t->chunk_left == 0) t->chunk_state = CHUNK_DATA_CR;
            break;
        }
        case CHUNK_DATA_CR:
            if (c == '\r') { t->chunk_state = CHUNK_DATA_LF; i++; break; }
            if (c != '\n') return -1;
            /* fallthrough: a bare LF ends the chunk too */
        case CHUNK_DATA_LF:
            if (c != '\n') return -1;
            t->chunk_state = CHUNK_SIZE;
            t->chunk_digits = 0;
            t->chunk_left = 0;
            i++;
            break;
        case CHUNK_END:
            return 0;
        }
    }
    return 0;
}

static size_t on_body(char *data, size_t size, size_t count, void *context) {
    thumbd_transfer *t = context;
    size_t n = size * count;
    if (t->status < 200 || t->status >= 300) {
        if (t->keep_error_body && t->error_body.length < THUMBD_MAX_ERROR_BODY) {
            size_t room = THUMBD_MAX_ERROR_BODY - t->error_body.length;
            /* Losing the error text is no reason to fail the transfer. */
            (void)buffer_append(&t->error_body, data, n < room ? n : room);
        }
        t->skipped += n;
        if (t->skipped > THUMBD_MAX_SKIPPED) {
            t->result.body_skipped = 1;
            return 0;
        }
        return n;
    }
    if (t->chunked) {
        int r = dechunk(t, (const unsigned char *)data, n);
        if (r == -1) t->result.bad_chunk = 1;
        return r == 0 ? n : 0;
    }
    if (n > t->max_bytes - t->body_length) {
        t->result.too_large = 1;
        return 0;
    }
    return deliver(t, (const unsigned char *)data, n) == 0 ? n : 0;
}

/* libcurl reads a response head line by line with no cap of ours (up to
 * 100 KiB for a single line) and waits for the end of a line forever; the
 * bytes it has read from the socket show a head that will not end. The
 * slack covers TLS framing and late session tickets: libcurl parses each
 * read before the next, so bytes read while the head is unfinished are head. */
static int on_progress(void *context, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
    (void)dltotal; (void)dlnow; (void)ultotal; (void)ulnow;
    thumbd_transfer *t = context;
    /* Nobody waits for the answer any more (a POST /info batch that has answered). */
    if (t->wanted && !t->wanted(t->wanted_context)) {
        t->result.abandoned = 1;
        return 1;
    }
    if (t->head_done) return 0;
    /* While a PUT's body is still going out, the check waits: the body is
     * finite, so it resumes once the last chunk is sent, and an upload the
     * store never reads ends at the deadline. Reading the kernel's counters
     * for every 64 KiB chunk cost two syscalls each (the shared store's
     * writes, Results.md). */
    if (t->method == THUMBD_METHOD_PUT && t->uploaded < t->upload_length) return 0;
    uint64_t received = bytes_received(t->fd);
    if (!(received > t->received_at_request && received - t->received_at_request > THUMBD_MAX_HEAD + 4096)) {
        t->head_suspect_since_ms = 0;
        return 0;
    }
    /* The kernel's counters can run ahead of what libcurl has parsed for a
     * moment under load, so a legitimate head followed by a large body could
     * look unfinished once. A head that will not end still looks so half a
     * second later (libcurl calls this at least once a second). */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t now_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
    if (t->head_suspect_since_ms == 0) {
        t->head_suspect_since_ms = now_ms;
        return 0;
    }
    if (now_ms - t->head_suspect_since_ms < 500) return 0;
    t->result.head_too_large = 1;
    return 1;
}

/* MARK: - Uploads (the shared originals store's PUTs) */

/* The next bytes of a PUT's body: from the copy, or read from the original's
 * file, so an original is never held whole in memory to be written. */
static size_t on_upload(char *buffer, size_t size, size_t count, void *context) {
    thumbd_transfer *t = context;
    size_t want = size * count, left = t->upload_length - t->uploaded;
    if (want > left) want = left;
    if (want == 0) return 0;
    if (t->upload_fd < 0) {
        memcpy(buffer, t->upload.bytes + t->uploaded, want);
        t->uploaded += want;
        return want;
    }
    for (;;) {
        ssize_t n = pread(t->upload_fd, buffer, want, (off_t)(t->upload_offset + (int64_t)t->uploaded));
        if (n < 0 && errno == EINTR) continue;
        /* A file shorter than announced: stop rather than send a short body. */
        if (n <= 0) return CURL_READFUNC_ABORT;
        t->uploaded += (size_t)n;
        return (size_t)n;
    }
}

/* libcurl rewinds a body it must send again (a reused connection that had
 * closed); only a rewind to the start is ever asked for. */
static int on_seek(void *context, curl_off_t offset, int origin) {
    thumbd_transfer *t = context;
    if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > t->upload_length) return CURL_SEEKFUNC_FAIL;
    t->uploaded = (size_t)offset;
    return CURL_SEEKFUNC_OK;
}

/* MARK: - Setup */

static int same_host(const char *curl_host, const char *expected) {
    size_t n = strlen(curl_host);
    if (n >= 2 && curl_host[0] == '[' && curl_host[n - 1] == ']') { curl_host++; n -= 2; }
    return strlen(expected) == n && strncasecmp(curl_host, expected, n) == 0;
}

int thumbd_transfer_prepare(thumbd_transfer *t, CURLSH *share, thumbd_sockets *sockets, int64_t now_ms) {
    t->sockets = sockets;
    t->fd = CURL_SOCKET_BAD;
    /* libcurl must connect to the host the rules were checked for: any
     * difference between its URL parser and ours is refused. */
    t->url_handle = curl_url();
    if (!t->url_handle) return -1;
    char *host = NULL;
    if (curl_url_set(t->url_handle, CURLUPART_URL, t->url, t->path_as_is ? CURLU_PATH_AS_IS : 0) != CURLUE_OK
        || curl_url_get(t->url_handle, CURLUPART_HOST, &host, 0) != CURLUE_OK) return -1;
    int same = same_host(host, t->expected_host);
    curl_free(host);
    if (!same) return -1;

    CURL *e = t->easy = curl_easy_init();
    if (!e) return -1;
    int64_t left = t->deadline_ms - now_ms;
    if (left < 1) left = 1;
    long connect = t->connect_timeout_ms < left ? t->connect_timeout_ms : (long)left;
    t->result.connect_bounded = connect < left;
    CURLcode c = CURLE_OK;
#define SET(option, value) if (c == CURLE_OK) c = curl_easy_setopt(e, option, value)
    SET(CURLOPT_CURLU, t->url_handle);
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_PROXY, "");                 /* no proxy from the environment: we connect to what we check */
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_FOLLOWLOCATION, 0L);        /* redirects are ours, re-checked per hop */
    SET(CURLOPT_HTTP_TRANSFER_DECODING, 0L);
    SET(CURLOPT_CONNECTTIMEOUT_MS, connect);
    SET(CURLOPT_TIMEOUT_MS, (long)left);
    SET(CURLOPT_OPENSOCKETFUNCTION, open_socket);
    SET(CURLOPT_OPENSOCKETDATA, t);
    SET(CURLOPT_CLOSESOCKETFUNCTION, close_socket);
    SET(CURLOPT_CLOSESOCKETDATA, sockets);
    SET(CURLOPT_PREREQFUNCTION, before_request);
    SET(CURLOPT_PREREQDATA, t);
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_HEADERDATA, t);
    SET(CURLOPT_WRITEFUNCTION, on_body);
    SET(CURLOPT_WRITEDATA, t);
    SET(CURLOPT_XFERINFOFUNCTION, on_progress);
    SET(CURLOPT_XFERINFODATA, t);
    SET(CURLOPT_NOPROGRESS, 0L);
    SET(CURLOPT_PRIVATE, t);
    if (t->headers) SET(CURLOPT_HTTPHEADER, t->headers);
    if (t->resolve) SET(CURLOPT_RESOLVE, t->resolve);
    if (t->ca_file) SET(CURLOPT_CAINFO, t->ca_file);
    if (share) SET(CURLOPT_SHARE, share);
    if (t->path_as_is) SET(CURLOPT_PATH_AS_IS, 1L);
    switch (t->method) {
    case THUMBD_METHOD_HEAD: SET(CURLOPT_NOBODY, 1L); break;
    case THUMBD_METHOD_DELETE: SET(CURLOPT_CUSTOMREQUEST, "DELETE"); break;
    case THUMBD_METHOD_PUT:
        SET(CURLOPT_UPLOAD, 1L);
        SET(CURLOPT_INFILESIZE_LARGE, (curl_off_t)t->upload_length);
        SET(CURLOPT_READFUNCTION, on_upload);
        SET(CURLOPT_READDATA, t);
        SET(CURLOPT_SEEKFUNCTION, on_seek);
        SET(CURLOPT_SEEKDATA, t);
        break;
    default: break;
    }
    if (t->aws_sigv4) {
        SET(CURLOPT_AWS_SIGV4, t->aws_sigv4);
        /* Apart rather than CURLOPT_USERPWD "id:secret": a colon in either stays theirs. */
        SET(CURLOPT_USERNAME, t->username ? t->username : "");
        SET(CURLOPT_PASSWORD, t->password ? t->password : "");
    }
#undef SET
    return c == CURLE_OK ? 0 : -1;
}

static int kind(CURLcode code) {
    switch (code) {
    case CURLE_OK: return THUMBD_KIND_NONE;
    case CURLE_COULDNT_RESOLVE_HOST: return THUMBD_KIND_RESOLVE;
    case CURLE_COULDNT_CONNECT: return THUMBD_KIND_CONNECT;
    case CURLE_OPERATION_TIMEDOUT: return THUMBD_KIND_TIMEOUT;
    case CURLE_SSL_CONNECT_ERROR: case CURLE_PEER_FAILED_VERIFICATION: case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER: case CURLE_SSL_CACERT_BADFILE: case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH: case CURLE_SSL_INVALIDCERTSTATUS: case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_SHUTDOWN_FAILED: case CURLE_SSL_CRL_BADFILE:
        return THUMBD_KIND_TLS;
    case CURLE_GOT_NOTHING: return THUMBD_KIND_NOTHING;
    case CURLE_PARTIAL_FILE: return THUMBD_KIND_PARTIAL;
    case CURLE_RECV_ERROR: case CURLE_SEND_ERROR: return THUMBD_KIND_RECEIVE;
    case CURLE_UNSUPPORTED_PROTOCOL: case CURLE_WEIRD_SERVER_REPLY: case CURLE_HTTP2: case CURLE_HTTP2_STREAM:
    case CURLE_BAD_CONTENT_ENCODING: case CURLE_HTTP3:
        return THUMBD_KIND_PROTOCOL;
    default: return THUMBD_KIND_OTHER;
    }
}

void thumbd_transfer_finish(thumbd_transfer *t, CURLcode code) {
    thumbd_result *r = &t->result;
    r->curl_code = (int)code;
    r->error_kind = kind(code);
    r->status = t->status;
    /* A body cut at the limit is no answer, and how much of it arrived
     * depends on how the reads fell: count none of it. */
    r->body_length = r->too_large ? 0 : (size_t)t->body_length;
    /* libcurl reads a head line into a buffer of at most CURL_MAX_HTTP_HEADER
     * (100 KiB) and reports a longer one as out of memory (CURLE_TOO_LARGE
     * from 8.6): before the head is complete, that is what such a code means. */
    if (!t->head_done && (code == CURLE_OUT_OF_MEMORY || (int)code == THUMBD_CURLE_TOO_LARGE)) r->head_line_too_long = 1;
    r->head = (const char *)t->head.bytes;
    r->head_length = t->head.length;
    r->error_body = t->error_body.bytes;
    r->error_body_length = t->error_body.length;
    if (t->easy) {
        curl_off_t connected = 0;
        if (curl_easy_getinfo(t->easy, CURLINFO_CONNECT_TIME_T, &connected) == CURLE_OK && connected > 0) r->connected = 1;
    }
    if (t->status > 0) r->connected = 1;
}

const char *thumbd_curl_strerror(int code) { return curl_easy_strerror((CURLcode)code); }
