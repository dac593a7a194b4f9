#define _GNU_SOURCE
#include "transfer.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

/* One thread drives every transfer of an engine through one multi handle:
 * connections (and their TLS sessions) and the DNS cache live in the multi
 * and the share handle, so later downloads reuse them. At most `limit`
 * transfers run; the rest wait in arrival order (redirect hops of admitted
 * downloads at the front), and one whose deadline passes while waiting is
 * completed as timed out without starting; one nobody wants any more
 * (`wanted`: a POST /info batch that has answered) is completed as abandoned
 * when its turn comes, and its slot goes to the next.
 *
 * One host gets at most a quarter of the slots (host_limit): an origin that
 * drips or stalls (every byte but the last, then nothing until the timeout)
 * could otherwise hold every slot for `origin.timeoutSeconds`, and every
 * other host's first request would wait behind it (attacks.py's stalled
 * downloads: a normal thumbnail took 9 s). Browsers cap connections per host
 * for the same reason. A transfer whose host is at its share waits, and
 * later ones of other hosts pass it; redirect hops are not held back, since
 * their download already holds a slot. Nor is the operator's own S3 endpoint
 * (own_host_share): every s3 source is on that one host, which no client
 * chooses, so its downloads may use every slot, as origin.maxConcurrentFetches says. */
struct thumbd_engine {
    pthread_t thread;
    pthread_mutex_t lock;
    CURLM *multi;
    CURLSH *share;
    /* Under `lock`. */
    thumbd_transfer *queue_head, *queue_tail;
    int queued, limit, stopping, running, peak;
    /* Running transfers per host (by hash of the host name; a collision only
     * makes two hosts share one share): at most `limit` ≤ 1024 entries. */
    struct { uint64_t hash; int count; } hosts[1024];
    int host_entries;
    /* The engine's thread only: transfers added to the multi. */
    thumbd_transfer *active;
    thumbd_sockets sockets;
};

int64_t thumbd_monotonic_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static int global_ok;
static void global_init(void) { global_ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }

static void complete(thumbd_transfer *t, CURLcode code) {
    thumbd_transfer_finish(t, code);
    t->done(t->done_context, &t->result);
    thumbd_transfer_free(t);
}

static void *run(void *context);

thumbd_engine *thumbd_engine_start(int max_running) {
    pthread_once(&global_once, global_init);
    if (!global_ok) return NULL;
    thumbd_engine *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->limit = max_running > 0 ? max_running : 1;
    e->multi = curl_multi_init();
    e->share = curl_share_init();
    if (!e->multi || !e->share) goto fail;
    /* Only the engine's thread uses the share handle: no lock callbacks needed. */
    curl_share_setopt(e->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_share_setopt(e->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    if (pthread_mutex_init(&e->lock, NULL) != 0) goto fail;
    if (pthread_create(&e->thread, NULL, run, e) != 0) {
        pthread_mutex_destroy(&e->lock);
        goto fail;
    }
    return e;
fail:
    if (e->multi) curl_multi_cleanup(e->multi);
    if (e->share) curl_share_cleanup(e->share);
    free(e);
    return NULL;
}

void thumbd_engine_set_limit(thumbd_engine *e, int max_running) {
    pthread_mutex_lock(&e->lock);
    e->limit = max_running > 0 ? max_running : 1;
    pthread_mutex_unlock(&e->lock);
    curl_multi_wakeup(e->multi);
}

int thumbd_engine_submit(thumbd_engine *e, const thumbd_request *request) {
    thumbd_transfer *t = thumbd_transfer_new(request);
    if (!t) return -1;
    pthread_mutex_lock(&e->lock);
    if (e->stopping) {
        pthread_mutex_unlock(&e->lock);
        thumbd_transfer_free(t);
        return -1;
    }
    if (t->urgent) {
        t->next = e->queue_head;
        e->queue_head = t;
        if (!e->queue_tail) e->queue_tail = t;
    } else {
        if (e->queue_tail) e->queue_tail->next = t; else e->queue_head = t;
        e->queue_tail = t;
    }
    e->queued++;
    pthread_mutex_unlock(&e->lock);
    curl_multi_wakeup(e->multi);
    return 0;
}

void thumbd_engine_counts(thumbd_engine *e, int *running, int *queued, int *peak) {
    pthread_mutex_lock(&e->lock);
    *running = e->running;
    *queued = e->queued;
    *peak = e->peak;
    pthread_mutex_unlock(&e->lock);
}

void thumbd_engine_stop(thumbd_engine *e) {
    pthread_t thread = e->thread;
    int self = pthread_equal(thread, pthread_self());
    pthread_mutex_lock(&e->lock);
    int already = e->stopping;
    e->stopping = 1;
    pthread_mutex_unlock(&e->lock);
    if (already) return;
    curl_multi_wakeup(e->multi);
    /* From a completion (the last reference went away there) the thread
     * cannot wait for itself: it frees the engine as it leaves. */
    if (self) pthread_detach(thread); else pthread_join(thread, NULL);
}

static uint64_t host_hash(const char *host) {
    uint64_t h = 1469598103934665603ULL;   /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)host; *p; p++) h = (h ^ *p) * 1099511628211ULL;
    return h;
}

static int host_limit(const thumbd_engine *e) { return e->limit >= 4 ? e->limit / 4 : 1; }

/* Under `lock`. */
static int host_running(const thumbd_engine *e, uint64_t hash) {
    for (int i = 0; i < e->host_entries; i++) if (e->hosts[i].hash == hash) return e->hosts[i].count;
    return 0;
}

/* Under `lock`: one more (+1) or one fewer (-1) running transfer of t's host. */
static void host_count(thumbd_engine *e, const thumbd_transfer *t, int delta) {
    uint64_t hash = host_hash(t->expected_host);
    for (int i = 0; i < e->host_entries; i++) {
        if (e->hosts[i].hash != hash) continue;
        e->hosts[i].count += delta;
        if (e->hosts[i].count <= 0) e->hosts[i] = e->hosts[--e->host_entries];
        return;
    }
    if (delta > 0 && e->host_entries < (int)(sizeof e->hosts / sizeof e->hosts[0])) {
        e->hosts[e->host_entries].hash = hash;
        e->hosts[e->host_entries].count = delta;
        e->host_entries++;
    }
}

/* A slot ended (under `lock`). */
static void release(thumbd_engine *e, const thumbd_transfer *t) {
    e->running--;
    host_count(e, t, -1);
}

/* Takes what may start now, and what expired while waiting, off the queue. */
static void admit(thumbd_engine *e, int64_t now, thumbd_transfer **start, thumbd_transfer **expired, int64_t *next_deadline) {
    pthread_mutex_lock(&e->lock);
    thumbd_transfer **link = &e->queue_head, *last = NULL;
    while (*link) {
        thumbd_transfer *t = *link;
        if (t->deadline_ms <= now) {
            *link = t->next;
            t->next = *expired;
            *expired = t;
            e->queued--;
            continue;
        }
        if (e->running < e->limit
            && (t->urgent || t->own_host_share || host_running(e, host_hash(t->expected_host)) < host_limit(e))) {
            *link = t->next;
            t->next = NULL;
            /* Keep arrival order in the start list. */
            thumbd_transfer **end = start;
            while (*end) end = &(*end)->next;
            *end = t;
            e->queued--;
            e->running++;
            host_count(e, t, +1);
            if (e->running > e->peak) e->peak = e->running;
            continue;
        }
        if (t->deadline_ms < *next_deadline) *next_deadline = t->deadline_ms;
        last = t;
        link = &t->next;
    }
    e->queue_tail = last;
    pthread_mutex_unlock(&e->lock);
}

static void finished(thumbd_engine *e, thumbd_transfer *t, CURLcode code) {
    curl_multi_remove_handle(e->multi, t->easy);
    for (thumbd_transfer **link = &e->active; *link; link = &(*link)->next) {
        if (*link == t) { *link = t->next; break; }
    }
    pthread_mutex_lock(&e->lock);
    release(e, t);
    pthread_mutex_unlock(&e->lock);
    complete(t, code);
}

static void *run(void *context) {
    thumbd_engine *e = context;
    pthread_setname_np(pthread_self(), "thumbd-fetch");
    for (;;) {
        pthread_mutex_lock(&e->lock);
        int stopping = e->stopping;
        pthread_mutex_unlock(&e->lock);
        if (stopping) break;

        int64_t now = thumbd_monotonic_ms();
        int64_t next_deadline = now + 1000;
        thumbd_transfer *start = NULL, *expired = NULL;
        admit(e, now, &start, &expired, &next_deadline);
        while (expired) {
            thumbd_transfer *t = expired;
            expired = t->next;
            t->result.expired_in_queue = 1;
            complete(t, CURLE_OPERATION_TIMEDOUT);
        }
        int dropped = 0;
        while (start) {
            thumbd_transfer *t = start;
            start = t->next;
            if (t->wanted && !t->wanted(t->wanted_context)) {
                /* Nobody waits for it any more: it never starts, and its slot goes to the next. */
                pthread_mutex_lock(&e->lock);
                release(e, t);
                pthread_mutex_unlock(&e->lock);
                t->result.abandoned = 1;
                complete(t, CURLE_ABORTED_BY_CALLBACK);
                dropped++;
            } else if (thumbd_transfer_prepare(t, e->share, &e->sockets, now) != 0) {
                pthread_mutex_lock(&e->lock);
                release(e, t);
                pthread_mutex_unlock(&e->lock);
                complete(t, CURLE_URL_MALFORMAT);
            } else if (curl_multi_add_handle(e->multi, t->easy) != CURLM_OK) {
                pthread_mutex_lock(&e->lock);
                release(e, t);
                pthread_mutex_unlock(&e->lock);
                complete(t, CURLE_FAILED_INIT);
            } else {
                t->next = e->active;
                e->active = t;
            }
        }

        int still = 0;
        curl_multi_perform(e->multi, &still);
        CURLMsg *m;
        int left, ended = 0;
        while ((m = curl_multi_info_read(e->multi, &left))) {
            if (m->msg != CURLMSG_DONE) continue;
            thumbd_transfer *t = NULL;
            CURL *easy = m->easy_handle;
            CURLcode code = m->data.result;
            curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&t);
            finished(e, t, code);
            ended++;
        }
        /* A slot came free: admit the next waiting transfer before sleeping. */
        if (ended || dropped) continue;

        long wait = 1000;
        long curl_wait = -1;
        curl_multi_timeout(e->multi, &curl_wait);
        if (curl_wait >= 0 && curl_wait < wait) wait = curl_wait;
        int64_t until_deadline = next_deadline - thumbd_monotonic_ms();
        if (until_deadline < wait) wait = until_deadline < 0 ? 0 : (long)until_deadline;
        curl_multi_poll(e->multi, NULL, 0, (int)wait, NULL);
    }

    /* Stopping: whatever is left ends as cancelled. */
    pthread_mutex_lock(&e->lock);
    thumbd_transfer *waiting = e->queue_head;
    e->queue_head = e->queue_tail = NULL;
    e->queued = 0;
    pthread_mutex_unlock(&e->lock);
    while (waiting) {
        thumbd_transfer *t = waiting;
        waiting = t->next;
        t->result.cancelled = 1;
        complete(t, CURLE_ABORTED_BY_CALLBACK);
    }
    while (e->active) {
        thumbd_transfer *t = e->active;
        t->result.cancelled = 1;
        finished(e, t, CURLE_ABORTED_BY_CALLBACK);
    }
    curl_multi_cleanup(e->multi);   /* closes cached connections through close_socket */
    curl_share_cleanup(e->share);
    thumbd_sockets_free(&e->sockets);
    pthread_mutex_destroy(&e->lock);
    free(e);
    return NULL;
}
