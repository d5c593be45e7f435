/* Bit-parallel LCS (ROUGE-L) and rouge-score's summary-level union LCS (ROUGE-Lsum).
 *
 * The LCS runs Hyyro's bit-parallel recurrence: one vector V of bits over the
 * "bits" sequence per row of the DP table, V' = (V + (V & M)) | (V & ~M) with M the
 * match mask of the row's token, 64 columns per machine word.  Bit j of row i's V is
 * clear where the table steps up at column j, so T[i][j] = j - popcount(V_i mod 2^j).
 *
 * Memory stays proportional to the work: match masks are kept per distinct token
 * (dense, distinct x words) when that fits RV_MASK_BUDGET_WORDS, else as position
 * lists from which each row's mask is built (linear memory); rougeLsum's backtrack
 * keeps every row while (rows x words) fits RV_ROWS_BUDGET_WORDS, else every K-th row
 * (K ~ sqrt(rows)) and recomputes one block of K rows at a time while it walks back.
 * The popcount-heavy kernels are compiled once per instruction set (dispatch.h).
 */
#ifndef RESPEVAL_LCS_H
#define RESPEVAL_LCS_H

#include "dispatch.h"
#include "scratch.h"

#define RV_MASK_BUDGET_WORDS ((int64_t)1 << 21)  /* 16 MB of match masks per thread */
#define RV_ROWS_BUDGET_WORDS ((int64_t)1 << 22)  /* 32 MB of stored rows per thread */
/* Largest LCS table (tokens x tokens) of one row: ~2^34 word steps, seconds of work.
 * Beyond it a row raises RowTooLongError (respeval.limits.LCS_MAX_CELLS). */
#define RV_LCS_MAX_CELLS ((int64_t)1 << 40)

static RV_ALWAYS_INLINE int rv_popcount64(uint64_t x) { return __builtin_popcountll(x); }

/* ------------------------------------------------------------------ match masks */

/* Match masks of `bits` (lb tokens, w words), with s->slot mapping a token id to its
 * distinct index; dense when distinct x w fits the budget, else position lists.
 * The number of distinct tokens, or -1 when out of memory.  Call rv_masks_clear after. */
static inline int64_t rv_masks_build(rv_scratch *s, const int32_t *bits, int64_t lb, int64_t w) {
    int64_t distinct = 0, j;
    for (j = 0; j < lb; j++) {
        if (s->slot[bits[j]] < 0) s->slot[bits[j]] = (int32_t)distinct++;
    }
    s->sparse = distinct * w > RV_MASK_BUDGET_WORDS;
    if (!s->sparse) {
        if (rv_grow((void **)&s->masks, &s->masks_cap, distinct * w, sizeof(uint64_t))) return -1;
        memset(s->masks, 0, (size_t)(distinct * w) * sizeof(uint64_t));
        for (j = 0; j < lb; j++) s->masks[(int64_t)s->slot[bits[j]] * w + (j >> 6)] |= 1ULL << (j & 63);
        return distinct;
    }
    if (rv_grow((void **)&s->pos_off, &s->pos_off_cap, distinct + 2, sizeof(int64_t)) ||
        rv_grow((void **)&s->pos, &s->pos_cap, lb, sizeof(int64_t)) ||
        rv_grow((void **)&s->mask_tmp, &s->mask_tmp_cap, w, sizeof(uint64_t)))
        return -1;
    memset(s->pos_off, 0, (size_t)(distinct + 2) * sizeof(int64_t));
    for (j = 0; j < lb; j++) s->pos_off[s->slot[bits[j]] + 2]++;
    for (int64_t r = 0; r < distinct; r++) s->pos_off[r + 2] += s->pos_off[r + 1];
    for (j = 0; j < lb; j++) s->pos[s->pos_off[s->slot[bits[j]] + 1]++] = j;
    memset(s->mask_tmp, 0, (size_t)w * sizeof(uint64_t));
    s->mask_tmp_row = -1;
    return distinct;
}

/* The match mask of distinct token r (w words). */
static inline const uint64_t *rv_mask(rv_scratch *s, int64_t r, int64_t w) {
    if (!s->sparse) return s->masks + r * w;
    if (s->mask_tmp_row != r) {
        int64_t k;
        if (s->mask_tmp_row >= 0) {
            for (k = s->pos_off[s->mask_tmp_row]; k < s->pos_off[s->mask_tmp_row + 1]; k++)
                s->mask_tmp[s->pos[k] >> 6] = 0;
        }
        for (k = s->pos_off[r]; k < s->pos_off[r + 1]; k++) s->mask_tmp[s->pos[k] >> 6] |= 1ULL << (s->pos[k] & 63);
        s->mask_tmp_row = r;
    }
    return s->mask_tmp;
}

static inline void rv_masks_clear(rv_scratch *s, const int32_t *bits, int64_t lb) {
    for (int64_t j = 0; j < lb; j++) s->slot[bits[j]] = -1;
}

/* One step of the recurrence, carrying across words (an add-with-carry chain). */
static RV_ALWAYS_INLINE void rv_lcs_step(uint64_t *v, const uint64_t *m, int64_t w) {
#if defined(__SIZEOF_INT128__)
    unsigned __int128 carry = 0;
    for (int64_t k = 0; k < w; k++) {
        uint64_t vk = v[k];
        unsigned __int128 sum = (unsigned __int128)vk + (vk & m[k]) + carry;
        carry = sum >> 64;
        v[k] = (uint64_t)sum | (vk & ~m[k]);
    }
#else
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
#endif
}

static RV_ALWAYS_INLINE int rv_bit(const uint64_t *v, int64_t j) { return (int)((v[j >> 6] >> (j & 63)) & 1); }

/* Zero bits of v in positions [0, j): the DP value T[i][j] of the stored row. */
static RV_ALWAYS_INLINE int64_t rv_prefix_zeros(const uint64_t *v, int64_t j) {
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
    if (rv_grow((void **)&s->vec, &s->vec_cap, w, sizeof(uint64_t)) || rv_masks_build(s, b, lb, w) < 0) {
        rv_masks_clear(s, b, lb);
        return -1;
    }
    uint64_t *v = s->vec;
    for (int64_t k = 0; k < w; k++) v[k] = ~0ULL;
    for (int64_t i = 0; i < la; i++) {
        int32_t r = s->slot[a[i]];
        if (r >= 0) rv_lcs_step(v, rv_mask(s, r, w), w);
    }
    rv_masks_clear(s, b, lb);
    return rv_prefix_zeros(v, lb);
}

/* ------------------------------------------------------------------ rougeLsum */

/* Mark the positions of one ref sentence (rs, la) that rouge-score's backtrack picks
 * against one cand sentence (cs, lb <= 64), whose masks (one word each) are in m1[1..],
 * m1[0] = 0.  Returns 0, or -1 when out of memory. */
static RV_ALWAYS_INLINE int rv_lsum_sentence_w1(rv_scratch *s, const int32_t *rs, int64_t la,
                                                const int32_t *cs, int64_t lb, const uint64_t *m1,
                                                uint8_t *mk) {
    if (rv_grow((void **)&s->rows, &s->rows_cap, la + 1, sizeof(uint64_t))) return -1;
    uint64_t *rows = s->rows, V = ~0ULL, pres = 0;
    rows[0] = V;
    /* branchless forward pass: a token absent from the cand sentence reads the zero mask */
    for (int64_t i = 0; i < la; i++) {
        uint64_t M = m1[s->slot[rs[i]] + 1];
        pres |= (uint64_t)(M != 0) << (i & 63);
        uint64_t U = V & M;
        V = (V + U) | (V - U);
        rows[i + 1] = V;
    }
    uint64_t valid = lb == 64 ? ~0ULL : ((1ULL << lb) - 1);
    int64_t remaining = lb - rv_popcount64(V & valid);
    int64_t i = la, j = lb;
    /* backtrack, rouge-score's rule: diagonal on equal tokens, else left when
     * T[i][j-1] > T[i-1][j], else up; with T[i][j] = j - popcount(V_i mod 2^j) that is
     * popcount(V_{i-1} mod 2^j) >= popcount(V_i mod 2^(j-1)) + 2.  Stop once every LCS
     * position is marked. */
    if (la <= 64) {
        /* rows of tokens absent from the cand sentence repeat the row above, and the
         * walk goes straight up through them: jump to the next present row */
        while (remaining > 0 && j > 0) {
            uint64_t below = pres & (i == 64 ? ~0ULL : ((1ULL << i) - 1));
            if (!below) break;
            i = 64 - __builtin_clzll(below);
            int eq = rs[i - 1] == cs[j - 1];
            uint64_t ma = (1ULL << (j - 1)) - 1, mb = j == 64 ? ~0ULL : (1ULL << j) - 1;
            int gt = rv_popcount64(rows[i - 1] & mb) >= rv_popcount64(rows[i] & ma) + 2;
            mk[i - 1] |= (uint8_t)eq;
            remaining -= eq;
            i -= eq | !gt;
            j -= eq | gt;
        }
        return 0;
    }
    while (remaining > 0 && i > 0 && j > 0) {
        int eq = rs[i - 1] == cs[j - 1];
        uint64_t ma = (1ULL << (j - 1)) - 1, mb = j == 64 ? ~0ULL : (1ULL << j) - 1;
        int gt = rv_popcount64(rows[i - 1] & mb) >= rv_popcount64(rows[i] & ma) + 2;
        mk[i - 1] |= (uint8_t)eq;
        remaining -= eq;
        i -= eq | !gt;
        j -= eq | gt;
    }
    return 0;
}

/* Rows lo+1 .. hi of the table into dst (w words each), from row lo in dst[0..w). */
static RV_ALWAYS_INLINE void rv_lsum_rows(rv_scratch *s, const int32_t *rs, int64_t lo, int64_t hi,
                                          uint64_t *dst, int64_t w) {
    for (int64_t i = lo; i < hi; i++) {
        uint64_t *cur = dst + (i + 1 - lo) * w;
        memcpy(cur, cur - w, (size_t)w * sizeof(uint64_t));
        int32_t r = s->slot[rs[i]];
        if (r >= 0) rv_lcs_step(cur, rv_mask(s, r, w), w);
    }
}

/* The same for any cand sentence length (w words per row). */
static RV_ALWAYS_INLINE int rv_lsum_sentence(rv_scratch *s, const int32_t *rs, int64_t la,
                                             const int32_t *cs, int64_t lb, int64_t w, uint8_t *mk) {
    /* rows stored in blocks of K: all of them when they fit the budget, else every
     * K-th one (checkpoints) plus one recomputed block */
    int64_t K = la, nck = 1;
    if ((la + 1) * w > RV_ROWS_BUDGET_WORDS) {
        K = 1;
        while (K * K < la + 1) K++;
        nck = la / K + 1;
    }
    /* layout: [checkpoints: nck rows][block: K + 1 rows] */
    if (rv_grow((void **)&s->rows, &s->rows_cap, (nck + K + 1) * w, sizeof(uint64_t))) return -1;
    uint64_t *ck = s->rows, *blk = s->rows + nck * w;
    for (int64_t k = 0; k < w; k++) ck[k] = ~0ULL;
    int64_t cur_block;
    if (nck == 1) {  /* every row in the block buffer */
        memcpy(blk, ck, (size_t)w * sizeof(uint64_t));
        rv_lsum_rows(s, rs, 0, la, blk, w);
        cur_block = 0;
    } else {  /* forward pass keeping every K-th row */
        memcpy(blk, ck, (size_t)w * sizeof(uint64_t));
        for (int64_t c = 0; c * K < la; c++) {
            int64_t lo = c * K, hi = lo + K < la ? lo + K : la;
            memcpy(blk, ck + c * w, (size_t)w * sizeof(uint64_t));
            rv_lsum_rows(s, rs, lo, hi, blk, w);
            if (c + 1 < nck) memcpy(ck + (c + 1) * w, blk + (hi - lo) * w, (size_t)w * sizeof(uint64_t));
        }
        cur_block = (la - 1) / K;  /* the last block is in blk */
    }
    const uint64_t *last = blk + (la - cur_block * K) * w;
    int64_t remaining = rv_prefix_zeros(last, lb);
    int64_t i = la, j = lb, ones_i = 0, ones_up = 0;
    int fresh = 0;  /* whether ones_i / ones_up hold the counts for the current (i, j) */
    const uint64_t *row_i = NULL, *row_up = NULL;
    /* rouge-score's rule (diagonal on equal tokens, else left when T[i][j-1] > T[i-1][j],
     * else up), with T[i][j] = j - ones(V_i mod 2^j): the ones below column j-1 of row i
     * and below column j of row i-1 are counted when i changes and kept up to date
     * while the walk goes left, so a long candidate sentence costs no quadratic time */
    while (remaining > 0 && i > 0 && j > 0) {
        if (!fresh) {
            int64_t c = (i - 1) / K;
            if (c != cur_block) {  /* walk back into an earlier block: recompute it */
                int64_t lo = c * K, hi = lo + K < la ? lo + K : la;
                memcpy(blk, ck + c * w, (size_t)w * sizeof(uint64_t));
                rv_lsum_rows(s, rs, lo, hi, blk, w);
                cur_block = c;
            }
            row_i = blk + (i - c * K) * w;
            row_up = row_i - w;
            ones_i = (j - 1) - rv_prefix_zeros(row_i, j - 1);
            ones_up = j - rv_prefix_zeros(row_up, j);
            fresh = 1;
        }
        if (rs[i - 1] == cs[j - 1]) {
            mk[i - 1] = 1;
            remaining--;
            i--;
            j--;
            fresh = 0;
        } else if (ones_up >= ones_i + 2) {  /* T[i][j-1] > T[i-1][j] */
            j--;
            if (j > 0) {
                ones_i -= rv_bit(row_i, j - 1);
                ones_up -= rv_bit(row_up, j);
            }
        } else {
            i--;
            fresh = 0;
        }
    }
    return 0;
}

/* ROUGE-Lsum hits (rouge-score's _summary_level_lcs).
 * ref: tokens ref[0..m) cut into sentences by ref_sent[0..nrs] (absolute positions
 * into ref); cand likewise.  For every candidate sentence and every reference
 * sentence, the LCS index set in the reference sentence is found by rouge-score's
 * backtrack (diagonal on equal tokens, else left when T[i][j-1] > T[i-1][j], else
 * up) and marked; then marked reference positions, in order, are clipped against
 * the remaining token counts of both texts.  Ids must be below s->vocab_size. */
static RV_ALWAYS_INLINE int64_t rv_lsum_hits_body(rv_scratch *s,
                                                  const int32_t *ref, const int64_t *ref_sent, int64_t nrs,
                                                  const int32_t *cand, const int64_t *cand_sent, int64_t ncs) {
    if (nrs == 0 || ncs == 0) return 0;
    int64_t r0 = ref_sent[0], m = ref_sent[nrs] - r0;
    int64_t c0 = cand_sent[0], n = cand_sent[ncs] - c0;
    if (m == 0 || n == 0) return 0;
    if (rv_grow((void **)&s->marks, &s->marks_cap, m, 1)) return -1;
    memset(s->marks, 0, (size_t)m);
    uint64_t m1[65];

    for (int64_t t = 0; t < ncs; t++) {
        const int32_t *cs = cand + cand_sent[t];
        int64_t lb = cand_sent[t + 1] - cand_sent[t];
        if (lb == 0) continue;
        int64_t w = (lb + 63) >> 6;
        int64_t distinct = rv_masks_build(s, cs, lb, w);
        if (distinct < 0) { rv_masks_clear(s, cs, lb); return -1; }
        if (w == 1) {
            m1[0] = 0;
            for (int64_t q = 0; q < distinct; q++) m1[q + 1] = s->masks[q];
        }
        for (int64_t si = 0; si < nrs; si++) {
            const int32_t *rs = ref + ref_sent[si];
            int64_t la = ref_sent[si + 1] - ref_sent[si];
            if (la == 0) continue;
            uint8_t *mk = s->marks + (ref_sent[si] - r0);
            int r = w == 1 ? rv_lsum_sentence_w1(s, rs, la, cs, lb, m1, mk) : rv_lsum_sentence(s, rs, la, cs, lb, w, mk);
            if (r) { rv_masks_clear(s, cs, lb); return -1; }
        }
        rv_masks_clear(s, cs, lb);
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

RV_MULTIVERSION(int64_t, rv_lsum_hits,
                (rv_scratch *s, const int32_t *ref, const int64_t *ref_sent, int64_t nrs,
                 const int32_t *cand, const int64_t *cand_sent, int64_t ncs),
                (s, ref, ref_sent, nrs, cand, cand_sent, ncs))

#endif
