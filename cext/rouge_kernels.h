/* ROUGE kernels over integer token ids.
 *
 * Every function here takes raw pointers that the Cython layer has already
 * validated (offsets monotone and inside the ids buffer, every id < vocab size),
 * so the loops carry no checks.  All scratch memory belongs to one thread
 * (rv_scratch) and is grown on demand; vocabulary-indexed arrays are returned
 * to their all-zero / all-minus-one state before a function returns, which is
 * what lets one scratch serve millions of rows without re-clearing.
 */
#ifndef RESPEVAL_ROUGE_KERNELS_H
#define RESPEVAL_ROUGE_KERNELS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"

#define RV_EMPTY_KEY UINT64_MAX

typedef struct {
    /* indexed by token id (size vocab_size) */
    int32_t *cnt_a;     /* all zero between calls */
    int32_t *cnt_b;     /* all zero between calls */
    int32_t *slot;      /* all -1 between calls */
    int32_t *cnt_c;     /* all zero between calls (BLEU's max-over-references counts) */
    int64_t vocab_size;
    /* n-gram hash table */
    uint64_t *keys;
    int32_t *vals;
    int64_t nkeys_cap;
    int32_t *gram_cnt;  /* counts per dense n-gram id */
    int64_t gram_cnt_cap;
    uint32_t *ids_a, *ids_b;  /* dense ids of the current order's n-grams */
    int64_t ids_a_cap, ids_b_cap;
    /* bit-parallel LCS */
    uint64_t *masks;    /* distinct tokens x words */
    int64_t masks_cap;
    uint64_t *rows;     /* stored V vectors for backtracking: (len+1) x words */
    int64_t rows_cap;
    uint8_t *marks;
    int64_t marks_cap;
} rv_scratch;

static inline int rv_scratch_init(rv_scratch *s, int64_t vocab_size) {
    memset(s, 0, sizeof(*s));
    int64_t n = vocab_size > 0 ? vocab_size : 1;
    s->vocab_size = vocab_size;
    s->cnt_a = (int32_t *)calloc((size_t)n, sizeof(int32_t));
    s->cnt_b = (int32_t *)calloc((size_t)n, sizeof(int32_t));
    s->slot = (int32_t *)malloc((size_t)n * sizeof(int32_t));
    s->cnt_c = (int32_t *)calloc((size_t)n, sizeof(int32_t));
    if (!s->cnt_a || !s->cnt_b || !s->slot || !s->cnt_c) return -1;
    memset(s->slot, 0xff, (size_t)n * sizeof(int32_t));
    return 0;
}

static inline void rv_scratch_free(rv_scratch *s) {
    free(s->cnt_a); free(s->cnt_b); free(s->slot); free(s->cnt_c);
    free(s->keys); free(s->vals); free(s->gram_cnt);
    free(s->ids_a); free(s->ids_b);
    free(s->masks); free(s->rows); free(s->marks);
    memset(s, 0, sizeof(*s));
}

/* ---------------------------------------------------------------- n-grams */

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

/* BLEU's clipped matches: for n = 1..max_order,
 *   correct[n-1] = sum over hypothesis n-grams g of min(count_hyp(g), max over refs count_ref(g)).
 * The references are refs[ref_off[r] .. ref_off[r+1]) for r < nrefs.  N-grams
 * get dense ids per order exactly as in rv_ngram_overlaps.  -1 on allocation failure. */
static inline int rv_ngram_clip_maxref(rv_scratch *s, const int32_t *a, int64_t la,
                                       const int32_t *refs, const int64_t *ref_off, int64_t nrefs,
                                       int max_order, int64_t *correct) {
    int64_t i, r;
    for (int n = 0; n < max_order; n++) correct[n] = 0;
    if (max_order <= 0 || la == 0 || nrefs <= 0) return 0;
    int64_t total_ref = ref_off[nrefs] - ref_off[0];
    const int32_t *rbase = refs + ref_off[0];

    /* order 1 on the vocabulary-indexed arrays */
    for (i = 0; i < la; i++) s->cnt_a[a[i]]++;
    for (r = 0; r < nrefs; r++) {
        const int32_t *b = refs + ref_off[r];
        int64_t lb = ref_off[r + 1] - ref_off[r];
        for (i = 0; i < lb; i++) s->cnt_b[b[i]]++;
        for (i = 0; i < lb; i++) {
            if (s->cnt_b[b[i]] > s->cnt_c[b[i]]) s->cnt_c[b[i]] = s->cnt_b[b[i]];
        }
        for (i = 0; i < lb; i++) s->cnt_b[b[i]] = 0;
    }
    {
        int64_t c = 0;
        for (i = 0; i < la; i++) {
            int32_t t = a[i];
            if (s->cnt_a[t] > 0) {
                c += s->cnt_a[t] < s->cnt_c[t] ? s->cnt_a[t] : s->cnt_c[t];
                s->cnt_a[t] = 0;  /* count each type once */
            }
        }
        correct[0] = c;
    }
    for (i = 0; i < total_ref; i++) s->cnt_c[rbase[i]] = 0;
    if (max_order == 1 || la < 2) return 0;

    int64_t total = la + total_ref;
    int64_t cap = rv_table_reserve(s, total);
    if (cap < 0) return -1;
    /* gram_cnt holds [hyp counts | current ref counts | max ref counts], each la long */
    if (rv_grow((void **)&s->ids_a, &s->ids_a_cap, la, sizeof(uint32_t)) ||
        rv_grow((void **)&s->ids_b, &s->ids_b_cap, total_ref > 0 ? total_ref : 1, sizeof(uint32_t)) ||
        rv_grow((void **)&s->gram_cnt, &s->gram_cnt_cap, 3 * la, sizeof(int32_t)))
        return -1;
    int64_t saved_cap = s->nkeys_cap;
    s->nkeys_cap = cap;
    int32_t *hyp_cnt = s->gram_cnt, *cur_cnt = s->gram_cnt + la, *max_cnt = s->gram_cnt + 2 * la;
    for (i = 0; i < la; i++) s->ids_a[i] = (uint32_t)a[i];
    for (i = 0; i < total_ref; i++) s->ids_b[i] = (uint32_t)rbase[i];

    for (int n = 2; n <= max_order; n++) {
        int64_t na = la - n + 1;
        if (na <= 0) break;
        for (i = 0; i < cap; i++) s->keys[i] = RV_EMPTY_KEY;
        uint32_t next = 0;
        for (i = 0; i < na; i++) {
            uint64_t key = ((uint64_t)s->ids_a[i] << 32) | (uint32_t)a[i + n - 1];
            uint32_t before = next;
            uint32_t id = rv_gram_id(s, key, &next);
            s->ids_a[i] = id;
            if (next != before) { hyp_cnt[id] = 0; cur_cnt[id] = 0; max_cnt[id] = 0; }
            hyp_cnt[id]++;
        }
        uint32_t a_distinct = next;
        for (r = 0; r < nrefs; r++) {
            int64_t off = ref_off[r] - ref_off[0];
            int64_t lb = ref_off[r + 1] - ref_off[r];
            int64_t nb = lb - n + 1;
            const int32_t *b = rbase + off;
            uint32_t *ids = s->ids_b + off;
            for (i = 0; i < nb; i++) {
                uint64_t key = ((uint64_t)ids[i] << 32) | (uint32_t)b[i + n - 1];
                uint32_t id = rv_gram_id(s, key, &next);
                ids[i] = id;
                if (id < a_distinct) cur_cnt[id]++;
            }
            for (i = 0; i < nb; i++) {
                uint32_t id = ids[i];
                if (id < a_distinct) {
                    if (cur_cnt[id] > max_cnt[id]) max_cnt[id] = cur_cnt[id];
                }
            }
            for (i = 0; i < nb; i++) {
                if (ids[i] < a_distinct) cur_cnt[ids[i]] = 0;
            }
        }
        int64_t c = 0;
        for (uint32_t id = 0; id < a_distinct; id++)
            c += hyp_cnt[id] < max_cnt[id] ? hyp_cnt[id] : max_cnt[id];
        correct[n - 1] = c;
    }
    s->nkeys_cap = saved_cap;
    return 0;
}

/* ---------------------------------------------------------------- LCS */

static inline int rv_popcount64(uint64_t x) { return __builtin_popcountll(x); }

/* Build match masks of `bits` (length lb, words w) in s->masks, with s->slot
 * mapping a token id to its mask row.  Returns the number of distinct tokens,
 * or -1 on allocation failure.  Call rv_clear_masks afterwards. */
static inline int64_t rv_build_masks(rv_scratch *s, const int32_t *bits, int64_t lb, int64_t w) {
    int64_t distinct = 0, j;
    if (rv_grow((void **)&s->masks, &s->masks_cap, lb * w, sizeof(uint64_t))) return -1;
    for (j = 0; j < lb; j++) {
        int32_t t = bits[j];
        int32_t r = s->slot[t];
        if (r < 0) {
            r = (int32_t)distinct++;
            s->slot[t] = r;
            memset(s->masks + (int64_t)r * w, 0, (size_t)w * sizeof(uint64_t));
        }
        s->masks[(int64_t)r * w + (j >> 6)] |= 1ULL << (j & 63);
    }
    return distinct;
}

static inline void rv_clear_masks(rv_scratch *s, const int32_t *bits, int64_t lb) {
    for (int64_t j = 0; j < lb; j++) s->slot[bits[j]] = -1;
}

/* One step of the bit-parallel LCS recurrence (Hyyro): V' = (V + U) | (V & ~M)
 * with U = V & M, carrying across words. */
static inline void rv_lcs_step(uint64_t *v, const uint64_t *m, int64_t w) {
    uint64_t carry = 0;
    for (int64_t k = 0; k < w; k++) {
        uint64_t vk = v[k];
        uint64_t u = vk & m[k];
        uint64_t t = vk + carry;
        uint64_t c1 = t < carry;
        uint64_t sum = t + u;
        uint64_t c2 = sum < u;
        carry = c1 | c2;
        v[k] = sum | (vk & ~m[k]);
    }
}

/* Zero bits of v in positions [0, j): the DP value T[i][j] for the stored row. */
static inline int64_t rv_prefix_zeros(const uint64_t *v, int64_t j) {
    int64_t ones = 0, k = 0;
    for (; (k + 1) * 64 <= j; k++) ones += rv_popcount64(v[k]);
    int64_t rem = j - k * 64;
    if (rem > 0) ones += rv_popcount64(v[k] & ((1ULL << rem) - 1));
    return j - ones;
}

/* Length of the longest common subsequence of a and b. -1 on allocation failure. */
static inline int64_t rv_lcs_length(rv_scratch *s, const int32_t *a, int64_t la,
                                    const int32_t *b, int64_t lb) {
    if (la == 0 || lb == 0) return 0;
    /* bits run over the shorter sequence: fewer words per step */
    if (lb > la) { const int32_t *t = a; a = b; b = t; int64_t l = la; la = lb; lb = l; }
    int64_t w = (lb + 63) >> 6;
    if (rv_build_masks(s, b, lb, w) < 0) return -1;
    if (rv_grow((void **)&s->rows, &s->rows_cap, w, sizeof(uint64_t))) {
        rv_clear_masks(s, b, lb);
        return -1;
    }
    uint64_t *v = s->rows;
    for (int64_t k = 0; k < w; k++) v[k] = ~0ULL;
    for (int64_t i = 0; i < la; i++) {
        int32_t r = s->slot[a[i]];
        if (r >= 0) rv_lcs_step(v, s->masks + (int64_t)r * w, w);
    }
    rv_clear_masks(s, b, lb);
    return rv_prefix_zeros(v, lb);
}

/* ROUGE-Lsum hits (rouge-score's _summary_level_lcs).
 * ref: tokens ref[0..m) cut into sentences by ref_sent[0..nrs] (absolute
 * positions into ref); cand likewise.  For every candidate sentence and every
 * reference sentence, the LCS index set in the reference sentence is found by
 * rouge-score's backtrack (diagonal on equal tokens, else left when
 * T[i][j-1] > T[i-1][j], else up) and marked; then marked reference positions,
 * in order, are clipped against the remaining token counts of both texts. */
static inline int64_t rv_lsum_hits(rv_scratch *s,
                                   const int32_t *ref, const int64_t *ref_sent, int64_t nrs,
                                   const int32_t *cand, const int64_t *cand_sent, int64_t ncs) {
    if (nrs == 0 || ncs == 0) return 0;
    int64_t r0 = ref_sent[0], m = ref_sent[nrs] - r0;
    int64_t c0 = cand_sent[0], n = cand_sent[ncs] - c0;
    if (m == 0 || n == 0) return 0;
    if (rv_grow((void **)&s->marks, &s->marks_cap, m, 1)) return -1;
    memset(s->marks, 0, (size_t)m);

    for (int64_t t = 0; t < ncs; t++) {
        const int32_t *cs = cand + cand_sent[t];
        int64_t lb = cand_sent[t + 1] - cand_sent[t];
        if (lb == 0) continue;
        int64_t w = (lb + 63) >> 6;
        if (rv_build_masks(s, cs, lb, w) < 0) return -1;
        for (int64_t si = 0; si < nrs; si++) {
            const int32_t *rs = ref + ref_sent[si];
            int64_t la = ref_sent[si + 1] - ref_sent[si];
            if (la == 0) continue;
            if (rv_grow((void **)&s->rows, &s->rows_cap, (la + 1) * w, sizeof(uint64_t))) {
                rv_clear_masks(s, cs, lb);
                return -1;
            }
            uint64_t *rows = s->rows;
            for (int64_t k = 0; k < w; k++) rows[k] = ~0ULL;
            for (int64_t i = 0; i < la; i++) {
                uint64_t *cur = rows + (i + 1) * w;
                memcpy(cur, rows + i * w, (size_t)w * sizeof(uint64_t));
                int32_t r = s->slot[rs[i]];
                if (r >= 0) rv_lcs_step(cur, s->masks + (int64_t)r * w, w);
            }
            int64_t remaining = rv_prefix_zeros(rows + la * w, lb);
            /* rouge-score's backtrack; stop once every LCS position is marked */
            int64_t i = la, j = lb;
            uint8_t *mk = s->marks + (ref_sent[si] - r0);
            while (remaining > 0 && i > 0 && j > 0) {
                if (rs[i - 1] == cs[j - 1]) {
                    mk[i - 1] = 1;
                    remaining--;
                    i--; j--;
                } else if (rv_prefix_zeros(rows + i * w, j - 1) >
                           rv_prefix_zeros(rows + (i - 1) * w, j)) {
                    j--;
                } else {
                    i--;
                }
            }
        }
        rv_clear_masks(s, cs, lb);
    }

    int64_t hits = 0, p;
    const int32_t *rr = ref + r0, *cc = cand + c0;
    for (p = 0; p < m; p++) s->cnt_a[rr[p]]++;
    for (p = 0; p < n; p++) s->cnt_b[cc[p]]++;
    for (p = 0; p < m; p++) {
        if (!s->marks[p]) continue;
        int32_t tok = rr[p];
        if (s->cnt_b[tok] > 0 && s->cnt_a[tok] > 0) {
            hits++;
            s->cnt_b[tok]--;
            s->cnt_a[tok]--;
        }
    }
    for (p = 0; p < m; p++) s->cnt_a[rr[p]] = 0;
    for (p = 0; p < n; p++) s->cnt_b[cc[p]] = 0;
    return hits;
}

#endif
