/* A growable string -> dense int32 id table (the shared vocabulary).
 *
 * Token bytes live in one arena; the open-addressing table holds ids only, so
 * growing it never moves token bytes.  Ids are dense and stable: id k is the k-th
 * distinct token ever added, which is what lets predictions and references of one
 * scoring call (and several calls) compare tokens by integer equality.
 */
#ifndef RESPEVAL_VOCAB_H
#define RESPEVAL_VOCAB_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "porter.h"

#define RV_STEM_UNSET (-1)

/* A table slot carries the hash and length, so a probe touches one cache line
 * and reads the token bytes only on a likely match. */
typedef struct {
    uint64_t hash;
    int32_t id;
    int32_t len;
} rv_slot;

/* A small direct-mapped cache of short tokens (<= 8 bytes, packed into one
 * word) in front of the table: word frequencies are Zipfian, so most lookups
 * hit a few thousand entries that stay in L1/L2, where the table itself
 * (tens of thousands of types) would miss cache on nearly every probe. */
#define RV_CACHE_SIZE 16384
typedef struct {
    uint64_t key;
    int32_t id;
    int32_t len;
} rv_cache_entry;

typedef struct {
    char *arena;          /* all token bytes, back to back */
    int64_t arena_len, arena_cap;
    int64_t *start;       /* start[id] .. start[id+1] in arena; length n+1 */
    uint64_t *hash;       /* hash of each id's bytes, to avoid rehashing on growth */
    int32_t n, cap_ids;
    rv_slot *slots;       /* id -1 = empty; power-of-two size */
    int64_t nslots;
    int32_t *stem_of;     /* id -> id of its Porter stem (RV_STEM_UNSET until asked) */
    int64_t stem_cap;
    rv_cache_entry *cache;
} rv_vocab;

static inline uint64_t rv_hash_bytes(const char *s, int64_t len) {
    /* FNV-1a folded through a final avalanche: tokens are short, and the mix
     * keeps sequential-looking tokens ("a1", "a2") from clustering. */
    uint64_t h = 1469598103934665603ULL;
    for (int64_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    h ^= h >> 33; h *= 0xff51afd7ed558ccdULL; h ^= h >> 33;
    return h;
}

static inline int rv_vocab_init(rv_vocab *v) {
    memset(v, 0, sizeof(*v));
    v->arena_cap = 1 << 16;
    v->cap_ids = 1 << 12;
    v->nslots = 1 << 13;
    v->arena = (char *)malloc((size_t)v->arena_cap);
    v->start = (int64_t *)malloc(sizeof(int64_t) * (size_t)(v->cap_ids + 1));
    v->hash = (uint64_t *)malloc(sizeof(uint64_t) * (size_t)v->cap_ids);
    v->slots = (rv_slot *)malloc(sizeof(rv_slot) * (size_t)v->nslots);
    v->cache = (rv_cache_entry *)malloc(sizeof(rv_cache_entry) * RV_CACHE_SIZE);
    if (!v->arena || !v->start || !v->hash || !v->slots || !v->cache) return -1;
    memset(v->slots, 0xff, sizeof(rv_slot) * (size_t)v->nslots);
    memset(v->cache, 0xff, sizeof(rv_cache_entry) * RV_CACHE_SIZE);  /* len -1: empty */
    v->start[0] = 0;
    return 0;
}

static inline void rv_vocab_free(rv_vocab *v) {
    free(v->arena); free(v->start); free(v->hash); free(v->slots); free(v->stem_of); free(v->cache);
    memset(v, 0, sizeof(*v));
}

static inline int rv_vocab_rehash(rv_vocab *v, int64_t nslots) {
    rv_slot *slots = (rv_slot *)malloc(sizeof(rv_slot) * (size_t)nslots);
    if (!slots) return -1;
    memset(slots, 0xff, sizeof(rv_slot) * (size_t)nslots);
    uint64_t mask = (uint64_t)nslots - 1;
    for (int32_t id = 0; id < v->n; id++) {
        uint64_t p = v->hash[id] & mask;
        while (slots[p].id >= 0) p = (p + 1) & mask;
        slots[p].hash = v->hash[id];
        slots[p].id = id;
        slots[p].len = (int32_t)(v->start[id + 1] - v->start[id]);
    }
    free(v->slots);
    v->slots = slots;
    v->nslots = nslots;
    return 0;
}

/* Returns the id of the token, or -1 if absent. */
static inline int32_t rv_vocab_find_h(const rv_vocab *v, const char *s, int64_t len, uint64_t h) {
    uint64_t mask = (uint64_t)v->nslots - 1;
    uint64_t p = h & mask;
    for (;;) {
        const rv_slot *sl = &v->slots[p];
        if (sl->id < 0) return -1;
        if (sl->hash == h && sl->len == len) {
            const char *t = v->arena + v->start[sl->id];
            int64_t k = 0;
            while (k < len && t[k] == s[k]) k++;
            if (k == len) return sl->id;
        }
        p = (p + 1) & mask;
    }
}

static inline int32_t rv_vocab_find(const rv_vocab *v, const char *s, int64_t len) {
    return rv_vocab_find_h(v, s, len, rv_hash_bytes(s, len));
}

/* Returns the id of the token (whose rv_hash_bytes is h), adding it if new;
 * -1 on allocation failure, -2 when the vocabulary would exceed int32 ids. */
static inline int32_t rv_vocab_add_h(rv_vocab *v, const char *s, int64_t len, uint64_t h) {
    int32_t found = rv_vocab_find_h(v, s, len, h);
    if (found >= 0) return found;
    if (v->n >= INT32_MAX - 1 || len > INT32_MAX) return -2;
    if (v->n >= v->cap_ids) {
        int64_t cap = (int64_t)v->cap_ids * 2;
        if (cap > INT32_MAX - 1) cap = INT32_MAX - 1;
        int64_t *st = (int64_t *)realloc(v->start, sizeof(int64_t) * (size_t)(cap + 1));
        if (!st) return -1;
        v->start = st;
        uint64_t *hs = (uint64_t *)realloc(v->hash, sizeof(uint64_t) * (size_t)cap);
        if (!hs) return -1;
        v->hash = hs;
        v->cap_ids = (int32_t)cap;
    }
    if (v->arena_len + len > v->arena_cap) {
        int64_t cap = v->arena_cap * 2;
        while (cap < v->arena_len + len) cap *= 2;
        char *a = (char *)realloc(v->arena, (size_t)cap);
        if (!a) return -1;
        v->arena = a;
        v->arena_cap = cap;
    }
    int32_t id = v->n;
    memcpy(v->arena + v->arena_len, s, (size_t)len);
    v->arena_len += len;
    v->start[id + 1] = v->arena_len;
    v->hash[id] = h;
    v->n++;
    /* keep the load factor under 1/2 so probes stay short */
    if ((int64_t)v->n * 2 > v->nslots) {
        if (rv_vocab_rehash(v, v->nslots * 2) != 0) return -1;
    } else {
        uint64_t mask = (uint64_t)v->nslots - 1;
        uint64_t p = h & mask;
        while (v->slots[p].id >= 0) p = (p + 1) & mask;
        v->slots[p].hash = h;
        v->slots[p].id = id;
        v->slots[p].len = (int32_t)len;
    }
    return id;
}

static inline int32_t rv_vocab_add(rv_vocab *v, const char *s, int64_t len) {
    return rv_vocab_add_h(v, s, len, rv_hash_bytes(s, len));
}

/* Id of the Porter stem of token `id` (an ASCII word), interning the stem.
 * rouge-score stems only tokens longer than 3 characters; shorter ones map to
 * themselves.  Computed once per word type.  Negative on failure. */
static inline int32_t rv_vocab_stem(rv_vocab *v, int32_t id) {
    if ((int64_t)id >= v->stem_cap) {
        int64_t cap = v->stem_cap ? v->stem_cap : 1024;
        while (cap <= (int64_t)id) cap *= 2;
        int32_t *p = (int32_t *)realloc(v->stem_of, sizeof(int32_t) * (size_t)cap);
        if (!p) return -1;
        for (int64_t i = v->stem_cap; i < cap; i++) p[i] = RV_STEM_UNSET;
        v->stem_of = p;
        v->stem_cap = cap;
    }
    if (v->stem_of[id] != RV_STEM_UNSET) return v->stem_of[id];
    int64_t len = v->start[id + 1] - v->start[id];
    int32_t sid = id;
    if (len > 3) {
        char small[64];
        char *buf = len <= (int64_t)sizeof(small) ? small : (char *)malloc((size_t)len);
        if (!buf) return -1;
        /* stem into a separate buffer: adding the stem may move the arena */
        int slen = respeval_porter_stem(v->arena + v->start[id], (int)len, buf, (int)len);
        sid = slen < 0 ? -1 : rv_vocab_add(v, buf, slen);
        if (buf != small) free(buf);
        if (sid < 0) return -1;
        /* the arena may have moved, but stem_of did not */
    }
    v->stem_of[id] = sid;
    return sid;
}

#endif
