/* Bit-parallel LCS (ROUGE-L) and rouge-score's summary-level union LCS (ROUGE-Lsum). */
#ifndef RESPEVAL_LCS_H
#define RESPEVAL_LCS_H

#include "scratch.h"

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
