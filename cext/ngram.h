/* Clipped n-gram overlaps on exact dense n-gram ids (ROUGE-N, chrF, SQuAD's bag of tokens). */
#ifndef RESPEVAL_NGRAM_H
#define RESPEVAL_NGRAM_H

#include "scratch.h"

static inline uint64_t rv_mix64(uint64_t k) {
    k ^= k >> 33; k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33; k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

/* Dense id of `key` in the table, inserting it as id *next if absent. */
static inline uint32_t rv_gram_id(rv_scratch *s, uint64_t key, uint32_t *next) {
    uint64_t mask = (uint64_t)s->nkeys_cap - 1;
    uint64_t p = rv_mix64(key) & mask;
    for (;;) {
        uint64_t k = s->keys[p];
        if (k == key) return (uint32_t)s->vals[p];
        if (k == RV_EMPTY_KEY) {
            s->keys[p] = key;
            s->vals[p] = (int32_t)*next;
            return (*next)++;
        }
        p = (p + 1) & mask;
    }
}

/* Size the n-gram table for `total` n-grams: the smallest power of two >= 2*total
 * (grown, never shrunk, so a large row does not make later small rows clear a
 * large table).  Returns that capacity, or -1 on allocation failure. */
static inline int64_t rv_table_reserve(rv_scratch *s, int64_t total) {
    int64_t cap = 16;
    while (cap < 2 * total) cap *= 2;
    if (cap > s->nkeys_cap) {
        free(s->keys); free(s->vals);
        s->keys = (uint64_t *)malloc((size_t)cap * sizeof(uint64_t));
        s->vals = (int32_t *)malloc((size_t)cap * sizeof(int32_t));
        if (!s->keys || !s->vals) { s->nkeys_cap = 0; return -1; }
        s->nkeys_cap = cap;
    }
    return cap;
}

/* Clipped overlap sum_g min(count_a(g), count_b(g)) for n = 1..max_order.
 * overlap[n-1] receives the value for order n.  Orders above 1 are counted on
 * dense ids: the id of an n-gram is the table id of (id of its (n-1)-gram
 * prefix, last token), which is exact (no hash collisions can merge n-grams).
 * Returns 0, or -1 on allocation failure. */
static inline int rv_ngram_overlaps(rv_scratch *s,
                                    const int32_t *a, int64_t la,
                                    const int32_t *b, int64_t lb,
                                    int max_order, int64_t *overlap) {
    int64_t i;
    for (int n = 0; n < max_order; n++) overlap[n] = 0;
    if (max_order <= 0 || la == 0 || lb == 0) return 0;

    /* order 1: count a's tokens in a vocabulary-indexed array, consume with b's */
    {
        int64_t ov = 0;
        for (i = 0; i < la; i++) s->cnt_a[a[i]]++;
        for (i = 0; i < lb; i++) {
            if (s->cnt_a[b[i]] > 0) { s->cnt_a[b[i]]--; ov++; }
        }
        for (i = 0; i < la; i++) s->cnt_a[a[i]] = 0;
        overlap[0] = ov;
    }
    if (max_order == 1 || la < 2 || lb < 2) return 0;

    int64_t total = la + lb;
    int64_t cap = rv_table_reserve(s, total);
    if (cap < 0) return -1;
    if (rv_grow((void **)&s->ids_a, &s->ids_a_cap, la, sizeof(uint32_t)) ||
        rv_grow((void **)&s->ids_b, &s->ids_b_cap, lb, sizeof(uint32_t)) ||
        rv_grow((void **)&s->gram_cnt, &s->gram_cnt_cap, total, sizeof(int32_t)))
        return -1;
    /* the table is used at capacity `used_cap`, a power of two >= 2*total */
    int64_t used_cap = cap;
    int64_t saved_cap = s->nkeys_cap;
    s->nkeys_cap = used_cap;

    /* ids of order-1 "grams" are the token ids themselves */
    for (i = 0; i < la; i++) s->ids_a[i] = (uint32_t)a[i];
    for (i = 0; i < lb; i++) s->ids_b[i] = (uint32_t)b[i];

    for (int n = 2; n <= max_order; n++) {
        int64_t na = la - n + 1, nb = lb - n + 1;
        if (na <= 0 || nb <= 0) break;
        for (i = 0; i < used_cap; i++) s->keys[i] = RV_EMPTY_KEY;
        uint32_t next = 0;
        for (i = 0; i < na; i++) {
            uint64_t key = ((uint64_t)s->ids_a[i] << 32) | (uint32_t)a[i + n - 1];
            uint32_t before = next;
            uint32_t id = rv_gram_id(s, key, &next);
            s->ids_a[i] = id;
            if (next != before) s->gram_cnt[id] = 0;  /* first sighting */
            s->gram_cnt[id]++;
        }
        uint32_t a_distinct = next;
        int64_t ov = 0;
        for (i = 0; i < nb; i++) {
            uint64_t key = ((uint64_t)s->ids_b[i] << 32) | (uint32_t)b[i + n - 1];
            uint32_t id = rv_gram_id(s, key, &next);
            s->ids_b[i] = id;
            if (id < a_distinct && s->gram_cnt[id] > 0) { s->gram_cnt[id]--; ov++; }
        }
        overlap[n - 1] = ov;
    }
    s->nkeys_cap = saved_cap;
    return 0;
}

#endif
