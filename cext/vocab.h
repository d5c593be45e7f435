/* A growable string -> dense int32 id table (the vocabulary).
 *
 * Ids are dense and stable: id k is the k-th distinct token ever added, which is
 * what lets predictions and references of one scoring call compare tokens by
 * integer equality.  Token bytes live in one arena.
 *
 * The open-addressing table keeps a token's first 16 bytes, a hash of any further
 * bytes and its length inline in a 32-byte slot, so a probe touches one cache line
 * and a token of up to 16 bytes is compared without leaving it; the arena is read
 * only for longer tokens.  Keys are built from
 * 16 bytes at the token's start: rv_key_padded reads them unconditionally (the
 * tokenizer's buffers are padded), rv_key_of copies what there is.
 */
#ifndef RESPEVAL_VOCAB_H
#define RESPEVAL_VOCAB_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "porter.h"

#define RV_STEM_UNSET (-1)

typedef struct {
    uint64_t k0, k1; /* bytes 0..15, zero-padded */
    uint64_t tail;   /* hash of the bytes from 16 on (0 for shorter tokens) */
    uint32_t len;
    int32_t id;      /* -1: empty slot */
} rv_slot;

typedef struct {
    uint64_t k0, k1, tail, h;
    int64_t len;
} rv_key;

typedef struct {
    char *arena;          /* all token bytes, back to back */
    int64_t arena_len, arena_cap;
    int64_t *start;       /* start[id] .. start[id+1] in arena; length n+1 */
    int32_t n, cap_ids;
    rv_slot *slots;       /* power-of-two size */
    uint64_t mask;
    int shift;            /* slot of hash h: h >> shift */
    int32_t *stem_of;     /* id -> id of its Porter stem (RV_STEM_UNSET until asked) */
    int64_t stem_cap;
} rv_vocab;

static inline uint64_t rv_key_tail(const unsigned char *s, int64_t len) {
    uint64_t h = 0x27D4EB2F165667C5ULL;
    for (int64_t i = 16; i < len; i++) h = (h ^ s[i]) * 0x100000001B3ULL;
    return h ^ (h >> 29);
}

/* Multiplicative (Fibonacci) hashing: the table takes the product's top bits, which
 * depend on every bit of the key. */
static inline uint64_t rv_key_hash(uint64_t k0, uint64_t k1, int64_t len, uint64_t tail) {
    return (k0 ^ ((uint64_t)len << 56) ^ ((k1 ^ tail) * 0xC2B2AE3D27D4EB4FULL)) * 0x9E3779B97F4A7C15ULL;
}

static inline void rv_key_finish(rv_key *q, const unsigned char *s) {
    q->tail = q->len > 16 ? rv_key_tail(s, q->len) : 0;
    q->h = rv_key_hash(q->k0, q->k1, q->len, q->tail);
}

/* The bytes of a token of length len kept in k0 and k1: rv_key_mask[min(len, 16)][0..1]. */
static const uint64_t rv_key_mask[17][2] = {
    {0, 0}, {0xFFULL, 0}, {0xFFFFULL, 0}, {0xFFFFFFULL, 0}, {0xFFFFFFFFULL, 0},
    {0xFFFFFFFFFFULL, 0}, {0xFFFFFFFFFFFFULL, 0}, {0xFFFFFFFFFFFFFFULL, 0}, {~0ULL, 0},
    {~0ULL, 0xFFULL}, {~0ULL, 0xFFFFULL}, {~0ULL, 0xFFFFFFULL}, {~0ULL, 0xFFFFFFFFULL},
    {~0ULL, 0xFFFFFFFFFFULL}, {~0ULL, 0xFFFFFFFFFFFFULL}, {~0ULL, 0xFFFFFFFFFFFFFFULL}, {~0ULL, ~0ULL}};

/* Key of s[0..len) where at least 16 bytes from s are readable. */
static inline void rv_key_padded(const unsigned char *s, int64_t len, rv_key *q) {
    uint64_t k0, k1;
    memcpy(&k0, s, 8);
    memcpy(&k1, s + 8, 8);
    const uint64_t *mask = rv_key_mask[len < 16 ? len : 16];
    q->k0 = k0 & mask[0];
    q->k1 = k1 & mask[1];
    q->len = len;
    rv_key_finish(q, s);
}

/* Key of s[0..len), reading nothing beyond it. */
static inline void rv_key_of(const char *s, int64_t len, rv_key *q) {
    unsigned char b[16] = {0};
    memcpy(b, s, (size_t)(len < 16 ? len : 16));
    memcpy(&q->k0, b, 8);
    memcpy(&q->k1, b + 8, 8);
    q->len = len;
    rv_key_finish(q, (const unsigned char *)s);
}

/* An empty vocabulary with 2^logsz slots to start with. */
static inline int rv_vocab_init_size(rv_vocab *v, int logsz) {
    memset(v, 0, sizeof(*v));
    v->arena_cap = (int64_t)1 << (logsz + 3);
    v->cap_ids = (int32_t)1 << (logsz - 1);
    v->arena = (char *)malloc((size_t)v->arena_cap);
    v->start = (int64_t *)malloc(sizeof(int64_t) * (size_t)(v->cap_ids + 1));
    v->slots = (rv_slot *)malloc(sizeof(rv_slot) << logsz);
    if (!v->arena || !v->start || !v->slots) return -1;
    memset(v->slots, 0xff, sizeof(rv_slot) << logsz);
    v->mask = ((uint64_t)1 << logsz) - 1;
    v->shift = 64 - logsz;
    v->start[0] = 0;
    return 0;
}

static inline int rv_vocab_init(rv_vocab *v) { return rv_vocab_init_size(v, 13); }

/* Empty the vocabulary for reuse (ids restart at 0), shrinking its table back to
 * 2^logsz slots if it grew beyond; clearing costs the table's size. */
static inline int rv_vocab_reset(rv_vocab *v, int logsz) {
    if (v->mask + 1 > ((uint64_t)1 << logsz)) {
        rv_slot *slots = (rv_slot *)malloc(sizeof(rv_slot) << logsz);
        if (!slots) return -1;
        free(v->slots);
        v->slots = slots;
        v->mask = ((uint64_t)1 << logsz) - 1;
        v->shift = 64 - logsz;
    }
    memset(v->slots, 0xff, sizeof(rv_slot) * (size_t)(v->mask + 1));
    v->n = 0;
    v->arena_len = 0;
    v->start[0] = 0;
    return 0;
}

static inline void rv_vocab_free(rv_vocab *v) {
    free(v->arena); free(v->start); free(v->slots); free(v->stem_of);
    memset(v, 0, sizeof(*v));
}

static inline int rv_vocab_rehash(rv_vocab *v) {
    int logsz = 64 - v->shift + 1;
    rv_slot *slots = (rv_slot *)malloc(sizeof(rv_slot) << logsz);
    if (!slots) return -1;
    memset(slots, 0xff, sizeof(rv_slot) << logsz);
    uint64_t mask = ((uint64_t)1 << logsz) - 1;
    for (uint64_t i = 0; i <= v->mask; i++) {
        rv_slot s = v->slots[i];
        if (s.id < 0) continue;
        uint64_t p = rv_key_hash(s.k0, s.k1, s.len, s.tail) >> (64 - logsz);
        while (slots[p].id >= 0) p = (p + 1) & mask;
        slots[p] = s;
    }
    free(v->slots);
    v->slots = slots;
    v->mask = mask;
    v->shift = 64 - logsz;
    return 0;
}

/* Insert the token (key q, bytes s) into the empty slot sl: its new id, or -1
 * when out of memory, -2 when the vocabulary would exceed int32 ids. */
static inline int32_t rv_vocab_insert(rv_vocab *v, const char *s, const rv_key *q, rv_slot *sl) {
    if (v->n >= INT32_MAX - 1 || q->len > (int64_t)UINT32_MAX - 1) return -2;
    if (v->n >= v->cap_ids) {
        int64_t cap = (int64_t)v->cap_ids * 2;
        if (cap > INT32_MAX - 1) cap = INT32_MAX - 1;
        int64_t *st = (int64_t *)realloc(v->start, sizeof(int64_t) * (size_t)(cap + 1));
        if (!st) return -1;
        v->start = st;
        v->cap_ids = (int32_t)cap;
    }
    if (v->arena_len + q->len > v->arena_cap) {
        int64_t cap = v->arena_cap * 2;
        while (cap < v->arena_len + q->len) cap *= 2;
        char *a = (char *)realloc(v->arena, (size_t)cap);
        if (!a) return -1;
        v->arena = a;
        v->arena_cap = cap;
    }
    int32_t id = v->n;
    memcpy(v->arena + v->arena_len, s, (size_t)q->len);
    v->arena_len += q->len;
    v->start[id + 1] = v->arena_len;
    sl->k0 = q->k0;
    sl->k1 = q->k1;
    sl->tail = q->tail;
    sl->len = (uint32_t)q->len;
    sl->id = id;
    v->n++;
    /* keep the load factor under 1/2 so probes stay short */
    if ((uint64_t)v->n * 2 > v->mask + 1 && rv_vocab_rehash(v) != 0) return -1;
    return id;
}

/* Id of the token s[0..len) with key q; added when new if `add` (else -1). */
static inline int32_t rv_vocab_lookup(rv_vocab *v, const char *s, const rv_key *q, int add) {
    uint64_t i = q->h >> v->shift;
    for (;;) {
        rv_slot *sl = &v->slots[i];
        if (sl->id < 0) return add ? rv_vocab_insert(v, s, q, sl) : -1;
        if (sl->k0 == q->k0 && sl->k1 == q->k1 && sl->len == (uint64_t)q->len &&
            (q->len <= 16 || (sl->tail == q->tail &&
                              memcmp(v->arena + v->start[sl->id] + 16, s + 16, (size_t)(q->len - 16)) == 0)))
            return sl->id;
        i = (i + 1) & v->mask;
    }
}

static inline void rv_vocab_prefetch(const rv_vocab *v, const rv_key *q) {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(&v->slots[q->h >> v->shift]);
#else
    (void)v; (void)q;
#endif
}

/* Id of the token, adding it if new: -1 on allocation failure, -2 when full. */
static inline int32_t rv_vocab_add(rv_vocab *v, const char *s, int64_t len) {
    rv_key q;
    rv_key_of(s, len, &q);
    return rv_vocab_lookup(v, s, &q, 1);
}

/* Id of the token, or -1 if absent. */
static inline int32_t rv_vocab_find(rv_vocab *v, const char *s, int64_t len) {
    rv_key q;
    rv_key_of(s, len, &q);
    return rv_vocab_lookup(v, s, &q, 0);
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
    }
    v->stem_of[id] = sid;
    return sid;
}

#endif
