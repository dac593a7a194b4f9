#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "icc_cache.h"

// Building an lcms2 transform for a LUT or CMYK profile takes 20–90 ms here,
// longer than decoding a thumbnail-sized source, and the same few profiles
// (a camera's, a print workflow's CMYK) recur across a site's images. So
// built profiles are kept: at most ICC_CACHE_ENTRIES, least recently used
// out first, and at most ICC_CACHE_BYTES of profile copies (a key is the
// whole profile, compared byte for byte after a hash, so no collision can
// hand one image another's colours). An evicted profile lives on until the
// decodes using it close it.

enum { ICC_CACHE_ENTRIES = 16 };
#define ICC_CACHE_BYTES (8u * 1024u * 1024u)

typedef struct {
    thumbd_icc *icc;   // NULL: free slot
    uint8_t *bytes;
    size_t length;
    uint64_t hash;
    int model, inverted;
    uint64_t last_use;
} entry;

static entry entries[ICC_CACHE_ENTRIES];
static size_t stored_bytes;
static uint64_t clock_ticks, hits, misses;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

// FNV-1a over 8-byte words, then a final mix: only a fast pre-filter.
static uint64_t hash_bytes(const uint8_t *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325u ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x100000001b3u;
    }
    for (; i < n; i++) h = (h ^ p[i]) * 0x100000001b3u;
    h ^= h >> 33; h *= 0xff51afd7ed558ccdu; h ^= h >> 33;
    return h;
}

static entry *lookup(const void *data, size_t length, uint64_t hash, int model, int inverted) {
    for (int i = 0; i < ICC_CACHE_ENTRIES; i++) {
        entry *e = &entries[i];
        if (e->icc && e->hash == hash && e->length == length && e->model == model && e->inverted == inverted
            && memcmp(e->bytes, data, length) == 0) return e;
    }
    return NULL;
}

static void evict(entry *e) {
    thumbd_icc_close(e->icc);
    free(e->bytes);
    stored_bytes -= e->length;
    memset(e, 0, sizeof *e);
}

static entry *least_recent(void) {
    entry *oldest = NULL;
    for (int i = 0; i < ICC_CACHE_ENTRIES; i++)
        if (entries[i].icc && (!oldest || entries[i].last_use < oldest->last_use)) oldest = &entries[i];
    return oldest;
}

thumbd_icc *thumbd_icc_cache_find(const void *data, size_t length, int model, int cmyk_inverted) {
    uint64_t hash = hash_bytes(data, length);
    pthread_mutex_lock(&lock);
    entry *e = lookup(data, length, hash, model, cmyk_inverted);
    thumbd_icc *icc = NULL;
    if (e) {
        e->last_use = ++clock_ticks;
        thumbd_icc_retain(e->icc);
        icc = e->icc;
        hits++;
    } else {
        misses++;
    }
    pthread_mutex_unlock(&lock);
    return icc;
}

thumbd_icc *thumbd_icc_cache_insert(thumbd_icc *icc, const void *data, size_t length, int model, int cmyk_inverted) {
    if (length > ICC_CACHE_BYTES / 2) return icc;   // not worth pushing everything else out
    uint64_t hash = hash_bytes(data, length);
    uint8_t *copy = malloc(length);
    if (!copy) return icc;   // uncached, still usable
    memcpy(copy, data, length);
    pthread_mutex_lock(&lock);
    entry *e = lookup(data, length, hash, model, cmyk_inverted);
    if (e) {
        // Another decode built the same profile meanwhile: share the cached one.
        e->last_use = ++clock_ticks;
        thumbd_icc *shared = e->icc;
        thumbd_icc_retain(shared);
        pthread_mutex_unlock(&lock);
        thumbd_icc_close(icc);
        free(copy);
        return shared;
    }
    entry *slot = NULL;
    for (int i = 0; i < ICC_CACHE_ENTRIES && !slot; i++)
        if (!entries[i].icc) slot = &entries[i];
    if (!slot) { slot = least_recent(); evict(slot); }
    while (stored_bytes + length > ICC_CACHE_BYTES) evict(least_recent());
    thumbd_icc_retain(icc);   // the cache's reference
    *slot = (entry){ icc, copy, length, hash, model, cmyk_inverted, ++clock_ticks };
    stored_bytes += length;
    pthread_mutex_unlock(&lock);
    return icc;
}

void thumbd_icc_cache_counts(size_t *count, uint64_t *hit_count, uint64_t *miss_count) {
    pthread_mutex_lock(&lock);
    size_t n = 0;
    for (int i = 0; i < ICC_CACHE_ENTRIES; i++) n += entries[i].icc != NULL;
    *count = n;
    *hit_count = hits;
    *miss_count = misses;
    pthread_mutex_unlock(&lock);
}
