/* Trajectory kernels: tool-call sequences as int32 ids (call id = name + canonical
 * arguments, name id = tool name), compared row by row.
 *
 * Everything here trusts its arguments: trajectory.pxi checks every length and offset
 * before calling in.  The pure-Python twin is src/respeval/_core_py/trajectory.py; the
 * statistics and their order are TRAJECTORY_STATS there.
 */
#ifndef RESPEVAL_TRAJECTORY_H
#define RESPEVAL_TRAJECTORY_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "buffer.h"
#include "dispatch.h"

enum {
    RV_T_NPRED = 0,
    RV_T_NREF,
    RV_T_EXACT,
    RV_T_IN_ORDER,
    RV_T_ANY_ORDER,
    RV_T_MATCHED,
    RV_T_EXACT_NAMES,
    RV_T_IN_ORDER_NAMES,
    RV_T_ANY_ORDER_NAMES,
    RV_T_MATCHED_NAMES,
    RV_T_LCS,
    RV_T_LCS_NAMES,
    RV_T_EDIT_NAMES,
    RV_T_REDUNDANT,
    RV_T_FIRST_MATCH,
    RV_T_DISCORDANT,
    RV_T_NSTATS
};

/* Per-thread scratch, grown on demand. */
typedef struct {
    uint64_t *keys;   /* (id << 32 | position) sort keys: predicted then reference */
    int64_t keys_cap;
    int64_t *dp;      /* one DP row, or a full edit matrix for alignments */
    int64_t dp_cap;
} rv_traj_scratch;

static inline void rv_traj_scratch_free(rv_traj_scratch *s) {
    free(s->keys);
    free(s->dp);
    memset(s, 0, sizeof(*s));
}

static inline int rv_traj_reserve(rv_traj_scratch *s, int64_t nkeys, int64_t ndp) {
    if (nkeys > s->keys_cap) {
        int64_t cap = nkeys < 64 ? 64 : nkeys * 2;
        uint64_t *k = (uint64_t *)realloc(s->keys, sizeof(uint64_t) * (size_t)cap);
        if (!k) return -1;
        s->keys = k;
        s->keys_cap = cap;
    }
    if (ndp > s->dp_cap) {
        int64_t cap = ndp < 64 ? 64 : ndp * 2;
        int64_t *d = (int64_t *)realloc(s->dp, sizeof(int64_t) * (size_t)cap);
        if (!d) return -1;
        s->dp = d;
        s->dp_cap = cap;
    }
    return 0;
}

static int rv_traj_cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static inline void rv_traj_sort(uint64_t *k, int64_t n) {
    if (n <= 24) {
        for (int64_t i = 1; i < n; i++) {
            uint64_t v = k[i];
            int64_t j = i - 1;
            while (j >= 0 && k[j] > v) { k[j + 1] = k[j]; j--; }
            k[j + 1] = v;
        }
    } else {
        qsort(k, (size_t)n, sizeof(uint64_t), rv_traj_cmp_u64);
    }
}

/* Sorted (id, position) keys of a sequence. */
static inline void rv_traj_keys(const int32_t *ids, int64_t n, uint64_t *out) {
    for (int64_t i = 0; i < n; i++) out[i] = ((uint64_t)(uint32_t)ids[i] << 32) | (uint64_t)(uint32_t)i;
    rv_traj_sort(out, n);
}

/* Pairs the k-th occurrence of an id in the reference with its k-th occurrence in the
 * prediction: exactly what "each reference call takes the first unused equal predicted
 * call" produces.  Returns the number of pairs; marks the paired positions; ref_of
 * (np entries, may be NULL) receives each predicted position's reference partner or -1; *first is
 * the smallest paired predicted position + 1 (0 if none); *distinct_pred counts the
 * distinct predicted ids. */
static inline int64_t rv_traj_pair_up(const uint64_t *pk, int64_t np, const uint64_t *rk, int64_t nr,
                                      uint8_t *pm, uint8_t *rm, int64_t *ref_of, int64_t *first,
                                      int64_t *distinct_pred) {
    int64_t i = 0, j = 0, pairs = 0, best = -1, distinct = 0;
    uint32_t last = 0;
    int have_last = 0;
    if (ref_of)
        for (int64_t k = 0; k < np; k++) ref_of[k] = -1;
    while (i < np) {
        uint32_t pid = (uint32_t)(pk[i] >> 32);
        if (!have_last || pid != last) { distinct++; last = pid; have_last = 1; }
        while (j < nr && (uint32_t)(rk[j] >> 32) < pid) j++;
        if (j < nr && (uint32_t)(rk[j] >> 32) == pid) {
            int64_t ppos = (int64_t)(uint32_t)pk[i], rpos = (int64_t)(uint32_t)rk[j];
            if (pm) pm[ppos] = 1;
            if (rm) rm[rpos] = 1;
            if (ref_of) ref_of[ppos] = rpos;
            if (best < 0 || ppos < best) best = ppos;
            pairs++;
            i++;
            j++;
        } else {
            i++;
        }
    }
    *first = best + 1;
    *distinct_pred = distinct;
    return pairs;
}

static inline int rv_traj_subsequence(const int32_t *r, int64_t nr, const int32_t *p, int64_t np) {
    int64_t k = 0;
    for (int64_t i = 0; i < np && k < nr; i++)
        if (p[i] == r[k]) k++;
    return k == nr;
}

static inline int rv_traj_equal(const int32_t *a, int64_t na, const int32_t *b, int64_t nb) {
    if (na != nb) return 0;
    for (int64_t i = 0; i < na; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* Discordant pairs among the matched calls: pairs ordered one way in the prediction and
 * the other way in the reference.  ref_of (np entries, -1 = unmatched) is overwritten. */
static inline int64_t rv_traj_discordant(int64_t *ref_of, int64_t np) {
    int64_t m = 0, d = 0;
    for (int64_t i = 0; i < np; i++)
        if (ref_of[i] >= 0) ref_of[m++] = ref_of[i];
    for (int64_t a = 0; a < m; a++)
        for (int64_t b = a + 1; b < m; b++)
            d += ref_of[a] > ref_of[b];
    return d;
}

/* row has nb + 1 cells */
static inline int64_t rv_traj_lcs(const int32_t *a, int64_t na, const int32_t *b, int64_t nb, int64_t *row) {
    for (int64_t j = 0; j <= nb; j++) row[j] = 0;
    for (int64_t i = 0; i < na; i++) {
        int64_t diag = 0;
        for (int64_t j = 1; j <= nb; j++) {
            int64_t up = row[j];
            if (a[i] == b[j - 1]) row[j] = diag + 1;
            else row[j] = up > row[j - 1] ? up : row[j - 1];
            diag = up;
        }
    }
    return row[nb];
}

static inline int64_t rv_traj_edit(const int32_t *a, int64_t na, const int32_t *b, int64_t nb, int64_t *row) {
    for (int64_t j = 0; j <= nb; j++) row[j] = j;
    for (int64_t i = 1; i <= na; i++) {
        int64_t diag = row[0];
        row[0] = i;
        for (int64_t j = 1; j <= nb; j++) {
            int64_t up = row[j];
            int64_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[nb];
}

/* Bit-parallel rows: at most RV_TRAJ_BITS calls a side (every tau-bench row, ~6.75
 * predicted and ~2.7 reference calls on average).  The reference side becomes bit masks:
 * for predicted call i, eq = {j : rc[j] == pc[i]} and eq_n the same for names.  One pass
 * over the predicted calls then gives every statistic, with no sort, no scratch and no DP
 * row, where rv_traj_row_dp sorts four key arrays and fills three nr x np tables.
 *
 *  - exact / in order: bit i of eq (the diagonal), bit k of eq for the next reference
 *    call k not yet found in order;
 *  - pairing: predicted call i takes the lowest reference call of eq not taken yet.  The
 *    k-th occurrence of an id in the prediction thus takes its k-th occurrence in the
 *    reference, the pairs of rv_traj_pair_up (and of the twin's greedy matching);
 *  - discordant: when i takes reference call t, the pairs it makes discordant with
 *    earlier pairs are the taken reference calls after t;
 *  - LCS (calls and names): Hyyro's bit-vector LCS (Allison-Dix), one add per call:
 *    V = (V + (V & eq)) | (V - (V & eq)); the LCS is the zero bits of V below nr;
 *  - edit distance of the names: Myers' bit-vector algorithm in Hyyro's form for the
 *    global distance (the horizontal delta shifted in at row 0 is +1): vp/vn hold the
 *    +1/-1 vertical deltas of the DP column, the distance is tracked at its last cell.
 * Levenshtein distance and LCS are symmetric, so making the reference the bit side
 * changes nothing in their values.  A zero-length side needs no special case except in
 * the edit distance (no last cell to track: the distance is then np). */
#define RV_TRAJ_BITS 64

/* The compiler's popcount: one instruction in the sse2/avx2/avx512 copies of rv_traj_rows
 * (dispatch.h compiles them with POPCNT), a libgcc call in the portable one. */
static RV_ALWAYS_INLINE int rv_traj_popcount(uint64_t x) { return __builtin_popcountll(x); }

/* The bits j < n of v[j] == x, for n <= RV_TRAJ_BITS; v is readable up to the next
 * multiple of 4 (rv_traj_stage sees to it).  SSE2 compares four ids a step: a row's
 * reference side (~2.7 calls) is one step, where the scalar loop is a compare, a
 * variable shift and a branch per call. */
static RV_ALWAYS_INLINE uint64_t rv_traj_eq_bits(const int32_t *v, int64_t n, int32_t x) {
    uint64_t m = 0;
#if defined(__SSE2__)
    const __m128i b = _mm_set1_epi32(x);
    for (int64_t j = 0; j < n; j += 4) {
        __m128i e = _mm_cmpeq_epi32(b, _mm_loadu_si128((const __m128i *)(v + j)));
        m |= (uint64_t)(uint32_t)_mm_movemask_ps(_mm_castsi128_ps(e)) << j;
    }
    return n >= 64 ? m : m & (((uint64_t)1 << n) - 1);
#else
    for (int64_t j = 0; j < n; j++) m |= (uint64_t)(v[j] == x) << j;
    return m;
#endif
}

/* v[0:n], readable up to the next multiple of 4: v itself when `room` (3 more entries
 * follow it in its buffer: a later row's, which rv_traj_eq_bits masks off), else a copy
 * in buf (RV_TRAJ_BITS + 4 entries), zero-padded.  Copying every row cost ~7% of the
 * kernel (three memcpy calls a row); only the last rows of a block need it. */
static RV_ALWAYS_INLINE const int32_t *rv_traj_stage(int32_t *buf, const int32_t *v, int64_t n, int room) {
    if (room) return v;
    if (n > 0) memcpy(buf, v, sizeof(int32_t) * (size_t)n);
    memset(buf + n, 0, sizeof(int32_t) * 4);
    return buf;
}

/* proom / rroom: whether 3 entries past the row's end are inside the predicted / reference
 * arrays (see rv_traj_stage). */
static RV_ALWAYS_INLINE void rv_traj_row_bits(const int32_t *pc, const int32_t *pn, int64_t np, const int32_t *rc,
                                              const int32_t *rn, int64_t nr, int64_t *out, uint8_t *pm,
                                              uint8_t *rm, int proom, int rroom) {
    int32_t bufs[3][RV_TRAJ_BITS + 4];
    const int32_t *rcs = rv_traj_stage(bufs[0], rc, nr, rroom), *rns = rv_traj_stage(bufs[1], rn, nr, rroom);
    const int32_t *pcs = rv_traj_stage(bufs[2], pc, np, proom);
    const uint64_t below = nr == 64 ? ~(uint64_t)0 : ((uint64_t)1 << nr) - 1; /* the reference's bits */
    const uint64_t last = nr > 0 ? (uint64_t)1 << (nr - 1) : 0;
    uint64_t taken = 0, taken_n = 0;       /* reference calls paired so far (calls, names) */
    uint64_t lcs = ~(uint64_t)0, lcs_n = ~(uint64_t)0;
    uint64_t vp = below, vn = 0;           /* DP column 0 is 0..nr: every vertical delta +1 */
    int64_t edit = nr, matched = 0, first = 0, discordant = 0, redundant = 0;
    int64_t in_order = 0, in_order_n = 0;  /* reference calls found in order so far */
    uint64_t exact = np == nr, exact_n = np == nr;
    for (int64_t i = 0; i < np; i++) {
        const int32_t c = pc[i], n = pn[i];
        const uint64_t eq = rv_traj_eq_bits(rcs, nr, c), eq_n = rv_traj_eq_bits(rns, nr, n);
        redundant += rv_traj_eq_bits(pcs, i, c) != 0; /* an earlier predicted call is the same */
        /* exact: same length and eq holds bit i for every i (a shift past nr reads 0) */
        exact &= eq >> i;
        exact_n &= eq_n >> i;
        in_order += in_order < nr && ((eq >> in_order) & 1);
        in_order_n += in_order_n < nr && ((eq_n >> in_order_n) & 1);

        uint64_t avail = eq & ~taken, take = avail & (0 - avail);
        if (take) {
            discordant += rv_traj_popcount(taken & ~(take | (take - 1)));
            taken |= take;
            matched++;
            if (!first) first = i + 1;
        }
        if (pm) pm[i] = take != 0;
        avail = eq_n & ~taken_n;
        taken_n |= avail & (0 - avail);

        uint64_t u = lcs & eq;
        lcs = (lcs + u) | (lcs - u);
        u = lcs_n & eq_n;
        lcs_n = (lcs_n + u) | (lcs_n - u);

        uint64_t x = eq_n | vn;
        uint64_t d0 = (((x & vp) + vp) ^ vp) | x;
        uint64_t hp = vn | ~(d0 | vp), hn = vp & d0;
        edit += (hp & last) != 0;
        edit -= (hn & last) != 0;
        hp = (hp << 1) | 1;
        hn <<= 1;
        vp = hn | ~(d0 | hp);
        vn = hp & d0;
    }
    if (rm)
        for (int64_t j = 0; j < nr; j++) rm[j] = (uint8_t)((taken >> j) & 1);
    out[RV_T_NPRED] = np;
    out[RV_T_NREF] = nr;
    out[RV_T_EXACT] = (int64_t)(exact & 1);
    out[RV_T_IN_ORDER] = in_order == nr;
    out[RV_T_ANY_ORDER] = matched == nr;
    out[RV_T_MATCHED] = matched;
    out[RV_T_EXACT_NAMES] = (int64_t)(exact_n & 1);
    out[RV_T_IN_ORDER_NAMES] = in_order_n == nr;
    out[RV_T_MATCHED_NAMES] = rv_traj_popcount(taken_n);
    out[RV_T_ANY_ORDER_NAMES] = out[RV_T_MATCHED_NAMES] == nr;
    out[RV_T_LCS] = rv_traj_popcount(~lcs & below);
    out[RV_T_LCS_NAMES] = rv_traj_popcount(~lcs_n & below);
    out[RV_T_EDIT_NAMES] = nr > 0 ? edit : np;
    out[RV_T_REDUNDANT] = redundant;
    out[RV_T_FIRST_MATCH] = first;
    out[RV_T_DISCORDANT] = discordant;
}

/* Rows with a side longer than RV_TRAJ_BITS: sorted keys, DP rows. */
static inline int rv_traj_row_dp(rv_traj_scratch *s, const int32_t *pc, const int32_t *pn, int64_t np,
                                 const int32_t *rc, const int32_t *rn, int64_t nr, int64_t *out,
                                 uint8_t *pm, uint8_t *rm) {
    int64_t nmax = np > nr ? np : nr;
    if (rv_traj_reserve(s, np + nr, nmax + 1) != 0) return -1;
    uint64_t *pk = s->keys, *rk = s->keys + np;
    int64_t first = 0, distinct = 0, first_n = 0, distinct_n = 0;
    if (pm) memset(pm, 0, (size_t)np);
    if (rm) memset(rm, 0, (size_t)nr);

    out[RV_T_NPRED] = np;
    out[RV_T_NREF] = nr;
    out[RV_T_EXACT] = rv_traj_equal(pc, np, rc, nr);
    out[RV_T_IN_ORDER] = rv_traj_subsequence(rc, nr, pc, np);
    rv_traj_keys(pc, np, pk);
    rv_traj_keys(rc, nr, rk);
    out[RV_T_MATCHED] = rv_traj_pair_up(pk, np, rk, nr, pm, rm, s->dp, &first, &distinct);
    out[RV_T_DISCORDANT] = rv_traj_discordant(s->dp, np);
    out[RV_T_ANY_ORDER] = out[RV_T_MATCHED] == nr;
    out[RV_T_REDUNDANT] = np - distinct;
    out[RV_T_FIRST_MATCH] = first;

    out[RV_T_EXACT_NAMES] = rv_traj_equal(pn, np, rn, nr);
    out[RV_T_IN_ORDER_NAMES] = rv_traj_subsequence(rn, nr, pn, np);
    rv_traj_keys(pn, np, pk);
    rv_traj_keys(rn, nr, rk);
    out[RV_T_MATCHED_NAMES] = rv_traj_pair_up(pk, np, rk, nr, NULL, NULL, NULL, &first_n, &distinct_n);
    out[RV_T_ANY_ORDER_NAMES] = out[RV_T_MATCHED_NAMES] == nr;

    out[RV_T_LCS] = rv_traj_lcs(pc, np, rc, nr, s->dp);
    out[RV_T_LCS_NAMES] = rv_traj_lcs(pn, np, rn, nr, s->dp);
    out[RV_T_EDIT_NAMES] = rv_traj_edit(rn, nr, pn, np, s->dp);
    return 0;
}

/* One row's statistics into out[RV_T_NSTATS]; pm/rm (may be NULL) receive matched flags.
 * proom / rroom as for rv_traj_row_bits.  Returns 0, or -1 when out of memory. */
static RV_ALWAYS_INLINE int rv_traj_row(rv_traj_scratch *s, const int32_t *pc, const int32_t *pn, int64_t np,
                                        const int32_t *rc, const int32_t *rn, int64_t nr, int64_t *out,
                                        uint8_t *pm, uint8_t *rm, int proom, int rroom) {
    if (np <= RV_TRAJ_BITS && nr <= RV_TRAJ_BITS) {
        rv_traj_row_bits(pc, pn, np, rc, rn, nr, out, pm, rm, proom, rroom);
        return 0;
    }
    return rv_traj_row_dp(s, pc, pn, np, rc, rn, nr, out, pm, rm);
}

/* Rows r0 .. r1 of CSR sides (po/ro offsets; a side's arrays may be NULL when it has no
 * calls, and pm/rm when the flags are not wanted) into out[r * RV_T_NSTATS ...].  The row
 * loop lives here rather than in trajectory.pxi so that rv_traj_row inlines into it (and
 * into each instruction set's copy of it); a one-thread call runs it once, with no OpenMP
 * team.  The arrays hold at least po[r1] / ro[r1] calls, which tells which rows may read
 * past their end.  Returns the failed rows (out of memory). */
static RV_ALWAYS_INLINE int64_t rv_traj_rows_body(rv_traj_scratch *s, const int32_t *pc, const int32_t *pn,
                                                  const int64_t *po, const int32_t *rc, const int32_t *rn,
                                                  const int64_t *ro, int64_t r0, int64_t r1, int64_t *out,
                                                  uint8_t *pm, uint8_t *rm) {
    int64_t failures = 0;
    const int64_t pend = po[r1], rend = ro[r1];
    for (int64_t r = r0; r < r1; r++) {
        const int64_t p0 = po[r], p1 = po[r + 1], q0 = ro[r], q1 = ro[r + 1];
        failures += rv_traj_row(s, pc ? pc + p0 : NULL, pn ? pn + p0 : NULL, p1 - p0, rc ? rc + q0 : NULL,
                                rn ? rn + q0 : NULL, q1 - q0, out + r * RV_T_NSTATS, pm ? pm + p0 : NULL,
                                rm ? rm + q0 : NULL, p1 + 3 <= pend, q1 + 3 <= rend) != 0;
    }
    return failures;
}
RV_MULTIVERSION(int64_t, rv_traj_rows,
                (rv_traj_scratch *s, const int32_t *pc, const int32_t *pn, const int64_t *po, const int32_t *rc,
                 const int32_t *rn, const int64_t *ro, int64_t r0, int64_t r1, int64_t *out, uint8_t *pm,
                 uint8_t *rm),
                (s, pc, pn, po, rc, rn, ro, r0, r1, out, pm, rm))

/* Substitutions of a minimum edit alignment of reference names r against predicted
 * names p (traceback from the end: match, substitution, missed reference, extra
 * prediction).  Writes at most min(nr, np) pairs; returns how many, or -1 (no memory). */
static inline int64_t rv_traj_substitutions(rv_traj_scratch *s, const int32_t *r, int64_t nr,
                                            const int32_t *p, int64_t np, int32_t *out_ref,
                                            int32_t *out_pred) {
    int64_t w = np + 1;
    if (rv_traj_reserve(s, 0, (nr + 1) * w) != 0) return -1;
    int64_t *d = s->dp;
    for (int64_t j = 0; j <= np; j++) d[j] = j;
    for (int64_t i = 1; i <= nr; i++) {
        d[i * w] = i;
        for (int64_t j = 1; j <= np; j++) {
            int64_t best = d[(i - 1) * w + j - 1] + (r[i - 1] != p[j - 1]);
            if (d[(i - 1) * w + j] + 1 < best) best = d[(i - 1) * w + j] + 1;
            if (d[i * w + j - 1] + 1 < best) best = d[i * w + j - 1] + 1;
            d[i * w + j] = best;
        }
    }
    int64_t i = nr, j = np, n = 0;
    while (i > 0 && j > 0) {
        int64_t here = d[i * w + j], diag = d[(i - 1) * w + j - 1];
        if (r[i - 1] == p[j - 1] && here == diag) {
            i--; j--;
        } else if (here == diag + 1) {
            out_ref[n] = r[i - 1];
            out_pred[n] = p[j - 1];
            n++;
            i--; j--;
        } else if (here == d[(i - 1) * w + j] + 1) {
            i--;
        } else {
            j--;
        }
    }
    /* found back to front: reverse */
    for (int64_t a = 0, b = n - 1; a < b; a++, b--) {
        int32_t t = out_ref[a]; out_ref[a] = out_ref[b]; out_ref[b] = t;
        t = out_pred[a]; out_pred[a] = out_pred[b]; out_pred[b] = t;
    }
    return n;
}

/* ------------------------------------------------------------------------------------
 * The call table: (name id, canonical arguments) bytes -> dense int32 id, first seen
 * first.  Names are short and hash 8 bytes at a time; keys of 64 bytes and more (most
 * calls' arguments) take rv_tj_buf_hash, a 64-byte block a step.
 */

/* The memo's hash of a call's text.  The text is read as 64-byte blocks of eight 8-byte
 * words, zero-padded at the end; word l of every block is added into accumulator l as
 * the product of its key-mixed halves plus its neighbour word (l ^ 1), and the eight
 * accumulators and the length are mixed once at the end.  No accumulator depends on
 * another, and none on the previous block but through an addition, so a vector path
 * takes a whole block in a few instructions; the two-lane multiply chain this replaced
 * was ~60% of the scan's time.  A block's words past the text's last 16-byte piece are
 * not added, so the 16-, 32- and 64-byte scans and the plain one give the same hash. */
static const uint64_t rv_tj_hkey[8] = {0x76FBA653E3D3BB33ULL, 0x15930763BE7BC931ULL, 0xBF9A35FD7FF5CD69ULL,
                                       0xB3A97E39D89696D5ULL, 0x1D0B18948E99C2EBULL, 0x894E2B5616AD2F4BULL,
                                       0x27EBA9FEB6CC669BULL, 0x69A36F60687A80B3ULL};
static const uint64_t rv_tj_hmix[8] = {0x59EA14252DEDCDC3ULL, 0xE91A20CF7CB549BBULL, 0x1A6746D51F51029FULL,
                                       0x9AE4DA91D763B4ADULL, 0x61CCF5F446AB9603ULL, 0xBEF89A29E01B52FBULL,
                                       0x35C3460A9632E78DULL, 0x7447CBBE1EF5E247ULL};

/* Piece j (0..3) of a block, its words w0 w1, into the accumulators. */
static inline void rv_tj_hash_piece(uint64_t acc[8], int j, uint64_t w0, uint64_t w1) {
    uint64_t k0 = w0 ^ rv_tj_hkey[2 * j], k1 = w1 ^ rv_tj_hkey[2 * j + 1];
    acc[2 * j] += w1 + (k0 & 0xFFFFFFFFu) * (k0 >> 32);
    acc[2 * j + 1] += w0 + (k1 & 0xFFFFFFFFu) * (k1 >> 32);
}

/* The 128-bit product of a and b, its halves xored. */
static inline uint64_t rv_tj_mul_fold(uint64_t a, uint64_t b) {
#if defined(__SIZEOF_INT128__)
    __uint128_t p = (__uint128_t)a * b;
    return (uint64_t)p ^ (uint64_t)(p >> 64);
#else
    uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
    uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;
    return (((mid << 32) | (uint32_t)ll)) ^ (hh + (lh >> 32) + (hl >> 32) + (mid >> 32));
#endif
}

static inline uint64_t rv_tj_hash_end(const uint64_t acc[8], int64_t len) {
    uint64_t h = (uint64_t)len * 0x9E3779B97F4A7C15ULL;
    for (int l = 0; l < 8; l += 2) h += rv_tj_mul_fold(acc[l] ^ rv_tj_hmix[l], acc[l + 1] ^ rv_tj_hmix[l + 1]);
    h ^= h >> 37;
    h *= 0x165667919E3779F9ULL;
    h ^= h >> 32;
    return h;
}

static inline uint64_t rv_tj_text_hash(const char *s, int64_t len) {
    uint64_t acc[8] = {0, 0, 0, 0, 0, 0, 0, 0}, w[2];
    int j = 0;
    for (int64_t k = 0; k < len; k += 16, j = (j + 1) & 3) {
        w[0] = w[1] = 0;
        memcpy(w, s + k, (size_t)(len - k < 16 ? len - k : 16));
        rv_tj_hash_piece(acc, j, w[0], w[1]);
    }
    return rv_tj_hash_end(acc, len);
}

/* rv_tj_text_hash of a buffer s[0:n], a whole 64-byte block a step on the vector paths
 * (the span scanners' lanes without the scanning): the calls table's long keys and the
 * dict reader's fingerprints.  A short text costs less through a plain serial hash (the
 * final mixing here is ~20 cycles), so the callers take this one from 64 bytes on. */
#if defined(RV_X86) && defined(__SSE2__)
RV_TARGET_AVX512 static uint64_t rv_tj_buf_hash_avx512(const char *s, int64_t n) {
    const __m512i key = _mm512_loadu_si512((const void *)rv_tj_hkey);
    __m512i acc = _mm512_setzero_si512();
    for (int64_t i = 0; i < n; i += 64) {
        __mmask8 words = 0xFF;
        __m512i v;
        if (n - i >= 64) {
            v = _mm512_loadu_si512((const void *)(s + i));
        } else {
            v = _mm512_maskz_loadu_epi8((1ULL << (n - i)) - 1, s + i); /* reads no byte past s[n - 1] */
            words = (__mmask8)((1u << (2 * ((n - i + 15) >> 4))) - 1);
        }
        __m512i k = _mm512_xor_si512(v, key);
        __m512i add = _mm512_add_epi64(_mm512_shuffle_epi32(v, _MM_PERM_BADC),
                                       _mm512_mul_epu32(k, _mm512_srli_epi64(k, 32)));
        acc = _mm512_mask_add_epi64(acc, words, acc, add);
    }
    uint64_t a[8];
    _mm512_storeu_si512((void *)a, acc);
    return rv_tj_hash_end(a, n);
}

RV_TARGET_AVX2 static uint64_t rv_tj_buf_hash_avx2(const char *s, int64_t n) {
    const __m256i key0 = _mm256_loadu_si256((const __m256i *)rv_tj_hkey);
    const __m256i key1 = _mm256_loadu_si256((const __m256i *)(rv_tj_hkey + 4));
    __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m256i v0 = _mm256_loadu_si256((const __m256i *)(s + i));
        __m256i v1 = _mm256_loadu_si256((const __m256i *)(s + i + 32));
        __m256i k0 = _mm256_xor_si256(v0, key0), k1 = _mm256_xor_si256(v1, key1);
        acc0 = _mm256_add_epi64(acc0, _mm256_add_epi64(_mm256_shuffle_epi32(v0, _MM_SHUFFLE(1, 0, 3, 2)),
                                                       _mm256_mul_epu32(k0, _mm256_srli_epi64(k0, 32))));
        acc1 = _mm256_add_epi64(acc1, _mm256_add_epi64(_mm256_shuffle_epi32(v1, _MM_SHUFFLE(1, 0, 3, 2)),
                                                       _mm256_mul_epu32(k1, _mm256_srli_epi64(k1, 32))));
    }
    uint64_t a[8];
    _mm256_storeu_si256((__m256i *)a, acc0);
    _mm256_storeu_si256((__m256i *)(a + 4), acc1);
    /* the last, partial block a 16-byte piece at a time, zero-padded */
    for (int j = 0; i < n; i += 16, j++) {
        uint64_t w[2] = {0, 0};
        memcpy(w, s + i, (size_t)(n - i < 16 ? n - i : 16));
        rv_tj_hash_piece(a, j, w[0], w[1]);
    }
    return rv_tj_hash_end(a, n);
}
#endif

static inline uint64_t rv_tj_buf_hash(const char *s, int64_t n) {
#if defined(RV_X86) && defined(__SSE2__)
    if (rv_isa >= RV_ISA_AVX512) return rv_tj_buf_hash_avx512(s, n);
    if (rv_isa >= RV_ISA_AVX2) return rv_tj_buf_hash_avx2(s, n);
#endif
    return rv_tj_text_hash(s, n);
}

static inline uint64_t rv_traj_hash(const char *s, int64_t n) {
    if (n >= 64) return rv_tj_buf_hash(s, n);
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n, w;
    while (n >= 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 31;
        s += 8;
        n -= 8;
    }
    if (n > 0) {
        w = 0;
        memcpy(&w, s, (size_t)n);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
    }
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93ULL;
    h ^= h >> 32;
    return h;
}

typedef struct {
    uint64_t hash;
    int64_t off;  /* the key's bytes in the arena: a match reads them without start[id] */
    int32_t id;
    int32_t len;
} rv_traj_slot;

typedef struct {
    char *arena;
    int64_t arena_len, arena_cap;
    int64_t *start;  /* start[id] .. start[id + 1] in arena */
    uint64_t *hash;
    int32_t n, cap;
    rv_traj_slot *slots;
    int64_t nslots;
} rv_traj_table;

static inline void rv_traj_table_free(rv_traj_table *t) {
    free(t->arena); free(t->start); free(t->hash); free(t->slots);
    memset(t, 0, sizeof(*t));
}

static inline int rv_traj_table_init(rv_traj_table *t) {
    memset(t, 0, sizeof(*t));
    t->arena_cap = 1 << 16;
    t->cap = 1 << 10;
    t->nslots = 1 << 11;
    t->arena = (char *)malloc((size_t)t->arena_cap);
    t->start = (int64_t *)malloc(sizeof(int64_t) * (size_t)(t->cap + 1));
    t->hash = (uint64_t *)malloc(sizeof(uint64_t) * (size_t)t->cap);
    t->slots = (rv_traj_slot *)malloc(sizeof(rv_traj_slot) * (size_t)t->nslots);
    if (!t->arena || !t->start || !t->hash || !t->slots) { rv_traj_table_free(t); return -1; }
    memset(t->slots, 0xff, sizeof(rv_traj_slot) * (size_t)t->nslots);
    t->start[0] = 0;
    return 0;
}

/* Asks for p[0:n] to be on its way into the cache.  A prefetch never faults, so p may
 * point anywhere: the JSON reader prefetches the objects of rows a few places ahead
 * blindly, as reading each row's text front to back first waits on memory (~5% of the
 * reading time, measured interleaved). */
#define RV_PREFETCH_ROW_BYTES 1024
#define RV_PREFETCH_ROWS_AHEAD 4
static inline void rv_prefetch_bytes(const char *p, int64_t n) {
#if defined(__GNUC__)
    for (int64_t k = 0; k < n; k += 64) __builtin_prefetch(p + k);
#else
    (void)p;
    (void)n;
#endif
}

/* Spare tables.  The bulk pipeline and the benchmarks intern chunk after chunk, each in a
 * new CallTable whose two big tables (calls and the memo) reach tens of MB; fresh memory
 * costs a page fault per 4 KB, ~10% of the reading time.  So up to RV_TRAJ_SPARES freed
 * tables of at most RV_TRAJ_SPARE_BYTES each are kept, emptied, for the next ones to
 * start from.  Called only with the GIL held (CallTable's constructor and destructor). */
#define RV_TRAJ_SPARES 2
#define RV_TRAJ_SPARE_BYTES ((int64_t)32 << 20)
static rv_traj_table rv_traj_spares[RV_TRAJ_SPARES];
static int rv_traj_nspares = 0;

static inline int64_t rv_traj_table_bytes(const rv_traj_table *t) {
    return t->arena_cap + (int64_t)(2 * t->cap + 1) * 8 + t->nslots * (int64_t)sizeof(rv_traj_slot);
}

/* rv_traj_table_init, from a spare table if there is one. */
static inline int rv_traj_table_init_spare(rv_traj_table *t) {
    if (rv_traj_nspares == 0) return rv_traj_table_init(t);
    *t = rv_traj_spares[--rv_traj_nspares];
    t->n = 0;
    t->arena_len = 0;
    t->start[0] = 0;
    memset(t->slots, 0xff, sizeof(rv_traj_slot) * (size_t)t->nslots);
    return 0;
}

/* rv_traj_table_free, keeping the table as a spare if there is room. */
static inline void rv_traj_table_release(rv_traj_table *t) {
    if (t->slots && rv_traj_nspares < RV_TRAJ_SPARES && rv_traj_table_bytes(t) <= RV_TRAJ_SPARE_BYTES) {
        rv_traj_spares[rv_traj_nspares++] = *t;
        memset(t, 0, sizeof(*t));
        return;
    }
    rv_traj_table_free(t);
}

static inline int rv_traj_table_rehash(rv_traj_table *t, int64_t nslots) {
    rv_traj_slot *slots = (rv_traj_slot *)malloc(sizeof(rv_traj_slot) * (size_t)nslots);
    if (!slots) return -1;
    memset(slots, 0xff, sizeof(rv_traj_slot) * (size_t)nslots);
    uint64_t mask = (uint64_t)nslots - 1;
    for (int32_t id = 0; id < t->n; id++) {
        uint64_t p = t->hash[id] & mask;
        while (slots[p].id >= 0) p = (p + 1) & mask;
        slots[p].hash = t->hash[id];
        slots[p].off = t->start[id];
        slots[p].id = id;
        slots[p].len = (int32_t)(t->start[id + 1] - t->start[id]);
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = nslots;
    return 0;
}

/* The next capacity after cap: x4 while below big, then x2.  Each growth re-inserts every
 * key at a random slot, which costs more than the probes themselves on tables of a few
 * hundred thousand calls; growing faster early makes that rarer. */
static inline int64_t rv_traj_grown(int64_t cap, int64_t big) {
    return cap < big ? cap * 4 : cap * 2;
}

/* The id of key s[0:n] whose rv_traj_hash is h, added if new; -1 no memory, -2 beyond
 * int32 ids or lengths. */
static inline int32_t rv_traj_table_add_h(rv_traj_table *t, const char *s, int64_t n, uint64_t h) {
    if (n > INT32_MAX) return -2;
    uint64_t mask = (uint64_t)t->nslots - 1, p = h & mask;
    for (;;) {
        const rv_traj_slot *sl = &t->slots[p];
        if (sl->id < 0) break;
        if (sl->hash == h && sl->len == n && (n == 0 || memcmp(t->arena + sl->off, s, (size_t)n) == 0))
            return sl->id;
        p = (p + 1) & mask;
    }
    if (t->n >= INT32_MAX - 1) return -2;
    if (t->n >= t->cap) {
        int64_t cap = rv_traj_grown((int64_t)t->cap, (int64_t)1 << 22);
        if (cap > INT32_MAX - 1) cap = INT32_MAX - 1;
        int64_t *st = (int64_t *)realloc(t->start, sizeof(int64_t) * (size_t)(cap + 1));
        if (!st) return -1;
        t->start = st;
        uint64_t *hs = (uint64_t *)realloc(t->hash, sizeof(uint64_t) * (size_t)cap);
        if (!hs) return -1;
        t->hash = hs;
        t->cap = (int32_t)cap;
    }
    if (t->arena_len + n > t->arena_cap) {
        int64_t cap = rv_traj_grown(t->arena_cap, (int64_t)1 << 26);
        while (cap < t->arena_len + n) cap *= 2;
        char *a = (char *)realloc(t->arena, (size_t)cap);
        if (!a) return -1;
        t->arena = a;
        t->arena_cap = cap;
    }
    int32_t id = t->n;
    int64_t off = t->arena_len;
    if (n) memcpy(t->arena + off, s, (size_t)n);
    t->arena_len += n;
    t->start[id + 1] = t->arena_len;
    t->hash[id] = h;
    t->n++;
    if ((int64_t)t->n * 2 > t->nslots) {
        if (rv_traj_table_rehash(t, rv_traj_grown(t->nslots, (int64_t)1 << 22)) != 0) return -1;
    } else {
        t->slots[p].hash = h;
        t->slots[p].off = off;
        t->slots[p].id = id;
        t->slots[p].len = (int32_t)n;
    }
    return id;
}

static inline int32_t rv_traj_table_add(rv_traj_table *t, const char *s, int64_t n) {
    return rv_traj_table_add_h(t, s, n, rv_traj_hash(s, n));
}

/* Adds the k keys base[start[i] : end[i]] (a row's calls), ids into out: every key is
 * hashed and its slot prefetched first, so the table's cache misses overlap.  0, or the
 * first failure of rv_traj_table_add. */
static inline int rv_traj_table_add_many(rv_traj_table *t, const char *base, const int64_t *start,
                                         const int64_t *end, int64_t k, uint64_t *hashes, int32_t *out) {
    uint64_t mask = (uint64_t)t->nslots - 1;
    for (int64_t i = 0; i < k; i++) {
        hashes[i] = rv_traj_hash(base + start[i], end[i] - start[i]);
#if defined(__GNUC__)
        __builtin_prefetch(&t->slots[hashes[i] & mask]);
#endif
    }
    for (int64_t i = 0; i < k; i++) {
        int32_t id = rv_traj_table_add_h(t, base + start[i], end[i] - start[i], hashes[i]);
        if (id < 0) return id;
        out[i] = id;
    }
    return 0;
}

/* The id of key s[0:n] whose rv_traj_hash is h, or -1. */
static inline int32_t rv_traj_table_find_h(const rv_traj_table *t, const char *s, int64_t n, uint64_t h) {
    uint64_t mask = (uint64_t)t->nslots - 1, p = h & mask;
    for (;;) {
        const rv_traj_slot *sl = &t->slots[p];
        if (sl->id < 0) return -1;
        if (sl->hash == h && sl->len == n && (n == 0 || memcmp(t->arena + sl->off, s, (size_t)n) == 0))
            return sl->id;
        p = (p + 1) & mask;
    }
}

/* The id of key s[0:n], or -1. */
static inline int32_t rv_traj_table_find(const rv_traj_table *t, const char *s, int64_t n) {
    return rv_traj_table_find_h(t, s, n, rv_traj_hash(s, n));
}

/* ------------------------------------------------------------------------------------
 * The call memo: a call object's exact JSON text -> what reading it gave (its name id
 * and call id, or "dropped" by the name normaliser).  Evaluation data repeats calls byte
 * for byte (a task's reference in every trial, a prediction that copies the reference),
 * and a repeated text needs only to be found, hashed and compared, not parsed and
 * canonicalised again.  Identical bytes read the same way, so a hit gives exactly the
 * ids a full read would.  The memo belongs to one CallTable and one set of reading
 * options; it stops growing at RV_TRAJ_MEMO_MAX_BYTES of text.
 */

#define RV_TRAJ_MEMO_MAX_BYTES ((int64_t)1 << 29)
#define RV_TRAJ_MEMO_MISS UINT64_MAX

typedef struct {
    rv_traj_table raw;  /* call texts as written */
    uint64_t *val;      /* per text: (name id + 1) << 32 | call id; name id + 1 == 0: dropped */
    int64_t val_cap;
} rv_traj_memo;

static inline uint64_t rv_traj_memo_pack(int32_t name_id, int32_t call_id) {
    return ((uint64_t)(uint32_t)(name_id + 1) << 32) | (uint64_t)(uint32_t)call_id;
}

static inline int32_t rv_traj_memo_name(uint64_t v) { return (int32_t)(uint32_t)(v >> 32) - 1; }
static inline int32_t rv_traj_memo_call(uint64_t v) { return (int32_t)(uint32_t)v; }

static inline void rv_traj_memo_free(rv_traj_memo *m) {
    rv_traj_table_release(&m->raw);
    free(m->val);
    memset(m, 0, sizeof(*m));
}

static inline int rv_traj_memo_init(rv_traj_memo *m) {
    memset(m, 0, sizeof(*m));
    return rv_traj_table_init_spare(&m->raw);
}

/* What the call text s[0:n] (hash h) gave, or RV_TRAJ_MEMO_MISS. */
static inline uint64_t rv_traj_memo_find(const rv_traj_memo *m, const char *s, int64_t n, uint64_t h) {
    int32_t id = rv_traj_table_find_h(&m->raw, s, n, h);
    return id < 0 ? RV_TRAJ_MEMO_MISS : m->val[id];
}

/* Remembers that the call text s[0:n] (hash h) gave v; 0, or -1 without memory.  A full
 * memo is left as it is. */
static inline int rv_traj_memo_add(rv_traj_memo *m, const char *s, int64_t n, uint64_t h, uint64_t v) {
    if (m->raw.arena_len + n > RV_TRAJ_MEMO_MAX_BYTES) return 0;
    int32_t id = rv_traj_table_add_h(&m->raw, s, n, h);
    if (id == -2) return 0;
    if (id < 0) return -1;
    if (id >= m->val_cap) {
        int64_t cap = m->val_cap ? 2 * m->val_cap : 1024;
        uint64_t *val = (uint64_t *)realloc(m->val, sizeof(uint64_t) * (size_t)cap);
        if (!val) return -1;
        m->val = val;
        m->val_cap = cap;
    }
    m->val[id] = v;
    return 0;
}

/* ------------------------------------------------------------------------------------
 * Canonical calls straight from JSON text (no Python objects).
 *
 * rv_tjson_trajectory reads one trajectory, a JSON list of call objects, and writes per
 * call its name (decoded UTF-8) and its arguments' canonical JSON: the bytes the Python
 * path (json.loads, then the twin's canonical_args) produces.  It handles the common
 * subset of JSON and answers RV_TJ_FALLBACK for everything else: a syntax error, a
 * missing or duplicated name or arguments key, arguments that are not an object or
 * null, NaN/Infinity literals, integers beyond 18 digits, escapes that make lone
 * surrogates, control characters in strings, invalid UTF-8 (checked when asked), deeper
 * nesting than RV_TJ_MAX_DEPTH.  The caller then takes the Python path for that row,
 * which reproduces Python's result or error exactly.
 *
 * Non-integral numbers go through dbl_canon (the caller's: Python's float() and repr()).
 * Every read is checked against the text's length.
 */

enum { RV_TJ_OK = 0, RV_TJ_FALLBACK = 1, RV_TJ_NOMEM = -1 };
#define RV_TJ_MAX_DEPTH 64

typedef struct {
    char *d;
    int64_t n, cap;
} rv_tbuf;

static inline int rv_tbuf_reserve(rv_tbuf *b, int64_t extra) {
    if (extra < 0 || b->n > INT64_MAX / 2 - extra) return -1;
    if (b->n + extra <= b->cap) return 0;
    int64_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + extra) cap *= 2;
    char *d = (char *)realloc(b->d, (size_t)cap);
    if (!d) return -1;
    b->d = d;
    b->cap = cap;
    return 0;
}

/* d[0:n] = s[0:n]; JSON keys, names and values are mostly a few bytes, which two fixed-size
 * (overlapping) copies move without a call into the C library. */
static inline void rv_copy_short(char *d, const char *s, int64_t n) {
    if (n > 32) {
        memcpy(d, s, (size_t)n);
    } else if (n >= 16) {
        memcpy(d, s, 16);
        memcpy(d + n - 16, s + n - 16, 16);
    } else if (n >= 8) {
        memcpy(d, s, 8);
        memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    } else {
        for (int64_t k = 0; k < n; k++) d[k] = s[k];
    }
}

static inline int rv_tbuf_put(rv_tbuf *b, const char *s, int64_t n) {
    if (rv_tbuf_reserve(b, n) != 0) return -1;
    rv_copy_short(b->d + b->n, s, n);
    b->n += n;
    return 0;
}

static inline int rv_tbuf_putc(rv_tbuf *b, char c) {
    if (b->n >= b->cap && rv_tbuf_reserve(b, 1) != 0) return -1;
    b->d[b->n++] = c;
    return 0;
}

/* "s" with \ and " escaped: the twin's _quote of the decoded string */
static inline int rv_tbuf_put_quoted(rv_tbuf *b, const char *s, int64_t n) {
    if (rv_tbuf_reserve(b, 2 * n + 2) != 0) return -1;
    char *o = b->d + b->n;
    *o++ = '"';
    for (int64_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '"' || c == '\\') *o++ = '\\';
        *o++ = c;
    }
    *o++ = '"';
    b->n = o - b->d;
    return 0;
}

/* Whether the 8 bytes of w hold a " or a \ (zero bytes hold neither). */
static inline int rv_word_needs_escape(uint64_t w) {
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t a = w ^ (ones * (uint64_t)'"'), c = w ^ (ones * (uint64_t)'\\');
    return (((a - ones) & ~a) | ((c - ones) & ~c)) & highs ? 1 : 0;
}

/* rv_tbuf_put_quoted, for strings that are mostly free of \ and " (values read from
 * Python objects): such a string is copied whole once a word-at-a-time scan has said so. */
static inline int rv_tbuf_put_quoted_words(rv_tbuf *b, const char *s, int64_t n) {
    int64_t i = 0;
    int escape = 0;
    for (; i + 8 <= n && !escape; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        escape = rv_word_needs_escape(w);
    }
    /* the last n - i < 8 bytes: loads that stay inside s, overlapping what was checked
     * (never a copy through memory: a load spanning two stores stalls) */
    if (!escape && i < n) {
        if (n >= 8) {
            uint64_t w;
            memcpy(&w, s + n - 8, 8);
            escape = rv_word_needs_escape(w);
        } else if (n >= 4) {
            uint32_t lo, hi;
            memcpy(&lo, s, 4);
            memcpy(&hi, s + n - 4, 4);
            escape = rv_word_needs_escape((uint64_t)lo | ((uint64_t)hi << 32));
        } else {
            for (; i < n; i++) escape |= s[i] == '"' || s[i] == '\\';
        }
    }
    if (escape) return rv_tbuf_put_quoted(b, s, n);
    if (rv_tbuf_reserve(b, n + 2) != 0) return -1;
    b->d[b->n] = '"';
    rv_copy_short(b->d + b->n + 1, s, n);
    b->d[b->n + 1 + n] = '"';
    b->n += n + 2;
    return 0;
}

/* Appends the canonical form of the JSON number text s[0:n] that has a fraction or an
 * exponent (integral values as integers, others by repr); 0, or -1 on failure. */
typedef int (*rv_dbl_canon_fn)(const char *s, int64_t n, rv_tbuf *out);

typedef struct {
    int64_t koff, klen;    /* the decoded key (inside its quotes) */
    int64_t mstart, mend;  /* the member's canonical text "key":value */
    int64_t order;
} rv_tmember;

/* Calls' texts in rows of JSON text: per call its span (start, end) in its row and the
 * span's rv_tj_text_hash, for the rows of a group back to back (buffer.h's RV_BUF). */
typedef struct {
    int64_t start, end;
    uint64_t hash;
} rv_tjspan;
typedef RV_BUF(rv_tjspan) rv_tjspans;

typedef struct {
    rv_tbuf names;      /* decoded call names, back to back */
    rv_tbuf args;       /* per call: 4 bytes for the name id, then the canonical arguments */
    int64_t *name_end;  /* per call: end of its name in names, of its args in args */
    int64_t *args_end;
    uint64_t *memo;     /* per call: what the memo gave for its text, or RV_TRAJ_MEMO_MISS */
    int64_t *raw_start; /* per call: its text in the input, and that text's hash */
    int64_t *raw_end;
    uint64_t *raw_hash;
    rv_tjspans row_spans; /* with a memo: the row's calls' spans, when they were not found ahead */
    int64_t ncalls, calls_cap;
    rv_tbuf tmp, junk, key;
    rv_tmember *mem, *mem_tmp;
    int64_t mem_n, mem_cap;
    rv_dbl_canon_fn dbl_canon;
    int check_utf8;     /* validate UTF-8 inside strings (bytes from Arrow, not from a str) */
} rv_tjson;

static inline void rv_tjson_free(rv_tjson *t) {
    free(t->names.d); free(t->args.d); free(t->name_end); free(t->args_end);
    free(t->memo); free(t->raw_start); free(t->raw_end); free(t->raw_hash);
    rv_buf_free(&t->row_spans);
    free(t->tmp.d); free(t->junk.d); free(t->key.d); free(t->mem); free(t->mem_tmp);
    memset(t, 0, sizeof(*t));
}

typedef struct {
    const char *s;
    int64_t n, i;
} rv_tjcur;

static inline void rv_tj_ws(rv_tjcur *c) {
    while (c->i < c->n) {
        char ch = c->s[c->i];
        if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r') break;
        c->i++;
    }
}

static inline int rv_tj_hex(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

static inline int rv_tj_u4(const rv_tjcur *c, int64_t at, uint32_t *out) {
    if (at + 4 > c->n) return -1;
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) {
        int h = rv_tj_hex(c->s[at + k]);
        if (h < 0) return -1;
        v = (v << 4) | (uint32_t)h;
    }
    *out = v;
    return 0;
}

/* Length of the valid UTF-8 sequence (no surrogates, no overlongs) at s[0:n], or 0. */
static inline int rv_tj_utf8_len(const unsigned char *s, int64_t n) {
    unsigned char b0 = s[0];
    if (b0 < 0x80) return 1;
    if (b0 >= 0xC2 && b0 <= 0xDF) return (n >= 2 && (s[1] & 0xC0) == 0x80) ? 2 : 0;
    if (b0 >= 0xE0 && b0 <= 0xEF) {
        if (n < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80) return 0;
        if (b0 == 0xE0 && s[1] < 0xA0) return 0;  /* overlong */
        if (b0 == 0xED && s[1] >= 0xA0) return 0; /* surrogate */
        return 3;
    }
    if (b0 >= 0xF0 && b0 <= 0xF4) {
        if (n < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80) return 0;
        if (b0 == 0xF0 && s[1] < 0x90) return 0;  /* overlong */
        if (b0 == 0xF4 && s[1] >= 0x90) return 0; /* > U+10FFFF */
        return 4;
    }
    return 0;
}

/* 1 if s[0:n] is valid UTF-8 (no surrogates, no overlongs). */
static inline int rv_tj_utf8_valid(const unsigned char *s, int64_t n) {
    int64_t i = 0;
    while (i < n) {
        if (s[i] < 0x80) { i++; continue; }
        int k = rv_tj_utf8_len(s + i, n - i);
        if (k == 0) return 0;
        i += k;
    }
    return 1;
}

static inline int rv_tj_put_cp(rv_tbuf *o, uint32_t cp) {
    char u[4];
    int k;
    if (cp < 0x80) { u[0] = (char)cp; k = 1; }
    else if (cp < 0x800) { u[0] = (char)(0xC0 | (cp >> 6)); u[1] = (char)(0x80 | (cp & 0x3F)); k = 2; }
    else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12)); u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F)); k = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18)); u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); u[3] = (char)(0x80 | (cp & 0x3F)); k = 4;
    }
    return rv_tbuf_put(o, u, k);
}

/* The string starting at the opening quote c->s[c->i], decoded (UTF-8) onto o. */
static int rv_tj_string(rv_tjson *t, rv_tjcur *c, rv_tbuf *o) {
    c->i++; /* the opening quote */
    for (;;) {
        int64_t run = c->i;
        while (c->i < c->n) {
            unsigned char ch = (unsigned char)c->s[c->i];
            if (ch == '"' || ch == '\\' || ch < 0x20) break;
            if (ch >= 0x80 && t->check_utf8) {
                int k = rv_tj_utf8_len((const unsigned char *)c->s + c->i, c->n - c->i);
                if (k == 0) return RV_TJ_FALLBACK;
                c->i += k;
            } else {
                c->i++;
            }
        }
        if (rv_tbuf_put(o, c->s + run, c->i - run) != 0) return RV_TJ_NOMEM;
        if (c->i >= c->n) return RV_TJ_FALLBACK;  /* unterminated */
        char ch = c->s[c->i];
        if (ch == '"') { c->i++; return RV_TJ_OK; }
        if (ch != '\\') return RV_TJ_FALLBACK;    /* a control character (strict JSON) */
        if (c->i + 1 >= c->n) return RV_TJ_FALLBACK;
        char e = c->s[c->i + 1];
        char lit = 0;
        switch (e) {
            case '"': lit = '"'; break;
            case '\\': lit = '\\'; break;
            case '/': lit = '/'; break;
            case 'b': lit = '\b'; break;
            case 'f': lit = '\f'; break;
            case 'n': lit = '\n'; break;
            case 'r': lit = '\r'; break;
            case 't': lit = '\t'; break;
            case 'u': break;
            default: return RV_TJ_FALLBACK;
        }
        if (e != 'u') {
            if (rv_tbuf_putc(o, lit) != 0) return RV_TJ_NOMEM;
            c->i += 2;
            continue;
        }
        uint32_t cp, lo;
        if (rv_tj_u4(c, c->i + 2, &cp) != 0) return RV_TJ_FALLBACK;
        c->i += 6;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            /* a pair only as \uD8xx\uDCxx; anything else leaves a lone surrogate */
            if (c->i + 1 < c->n && c->s[c->i] == '\\' && c->s[c->i + 1] == 'u' &&
                rv_tj_u4(c, c->i + 2, &lo) == 0 && lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                c->i += 6;
            } else {
                return RV_TJ_FALLBACK;
            }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return RV_TJ_FALLBACK;
        }
        if (rv_tj_put_cp(o, cp) != 0) return RV_TJ_NOMEM;
    }
}

/* Byte classes inside a JSON string: 0 plain, 1 stops the scan (" \ or a control
 * character), 2 starts a multi-byte UTF-8 sequence to validate (Arrow bytes only). */
static unsigned char rv_tj_cls[2][256];
static int rv_tj_cls_ready = 0;

/* Byte classes outside JSON strings, for rv_tj_object_span: 1 a quote, 2 opens, 3 closes. */
static unsigned char rv_tj_nest_cls[256];

static void rv_tj_cls_init(void) {
    for (int k = 0; k < 256; k++) {
        unsigned char v = (k == '"' || k == '\\' || k < 0x20) ? 1 : 0;
        rv_tj_cls[0][k] = v;
        rv_tj_cls[1][k] = v ? v : (k >= 0x80 ? 2 : 0);
        rv_tj_nest_cls[k] = k == '"' ? 1 : (k == '{' || k == '[') ? 2 : (k == '}' || k == ']') ? 3 : 0;
    }
    rv_tj_cls_ready = 1;
}

/* The first i' >= i with cls[s[i']] != 0 (a byte that ends a plain run inside a JSON
 * string), or n; with SSE2, 16 bytes per step. */
static inline int64_t rv_tj_plain_run(const unsigned char *s, int64_t i, int64_t n, const unsigned char *cls,
                                      int check_utf8) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), ctl = _mm_set1_epi8(0x1F);
    const uint32_t high = check_utf8 ? 0xFFFFu : 0u;
    while (rv_isa != RV_ISA_PORTABLE && n - i >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                                    _mm_cmpeq_epi8(_mm_min_epu8(v, ctl), v)); /* v <= 0x1F */
        uint32_t m = (uint32_t)_mm_movemask_epi8(stop) | ((uint32_t)_mm_movemask_epi8(v) & high);
        if (m) return i + __builtin_ctz(m);
        i += 16;
    }
#else
    (void)check_utf8;
#endif
    while (i < n && cls[s[i]] == 0) i++;
    return i;
}

/* Scans the string at c->s[c->i] == '"'.  RV_TJ_OK: it has no escapes, its text is
 * s[*start : *start + *len] and c->i is past it.  1: it has escapes (c->i unchanged).
 * RV_TJ_FALLBACK: unterminated, a control character or invalid UTF-8. */
static inline int rv_tj_raw_string(const rv_tjson *t, rv_tjcur *c, int64_t *start, int64_t *len) {
    const unsigned char *s = (const unsigned char *)c->s;
    const unsigned char *cls = rv_tj_cls[t->check_utf8 ? 1 : 0];
    int64_t i = c->i + 1, n = c->n;
    for (;;) {
        i = rv_tj_plain_run(s, i, n, cls, t->check_utf8);
        if (i >= n) return RV_TJ_FALLBACK;
        if (cls[s[i]] == 2) {
            int k = rv_tj_utf8_len(s + i, n - i);
            if (k == 0) return RV_TJ_FALLBACK;
            i += k;
            continue;
        }
        break;
    }
    if (s[i] == '"') {
        *start = c->i + 1;
        *len = i - c->i - 1;
        c->i = i + 1;
        return RV_TJ_OK;
    }
    if (s[i] == '\\') return 1;
    return RV_TJ_FALLBACK;
}

/* The string at c->s[c->i] == '"' in canonical form (quoted, \ and " escaped).  A JSON
 * string without escapes is already that: it is copied as it stands. */
static int rv_tj_string_canon(rv_tjson *t, rv_tjcur *c, rv_tbuf *o) {
    int64_t start, len, open = c->i;
    int r = rv_tj_raw_string(t, c, &start, &len);
    if (r == RV_TJ_OK) return rv_tbuf_put(o, c->s + open, len + 2) == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
    if (r != 1) return r;
    /* escapes: decode, then quote */
    int64_t at = t->key.n;
    r = rv_tj_string(t, c, &t->key);
    if (r != RV_TJ_OK) return r;
    r = rv_tbuf_put_quoted(o, t->key.d + at, t->key.n - at) == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
    t->key.n = at;
    return r;
}

static int rv_tj_literal(rv_tjcur *c, const char *word, int64_t len) {
    if (c->i + len > c->n || memcmp(c->s + c->i, word, (size_t)len) != 0) return RV_TJ_FALLBACK;
    c->i += len;
    return RV_TJ_OK;
}

static int rv_tj_number(rv_tjson *t, rv_tjcur *c, rv_tbuf *o) {
    int64_t start = c->i, digits_start;
    int neg = 0, is_float = 0;
    if (c->s[c->i] == '-') { neg = 1; c->i++; }
    digits_start = c->i;
    if (c->i >= c->n) return RV_TJ_FALLBACK;
    if (c->s[c->i] == '0') {
        c->i++;
    } else if (c->s[c->i] >= '1' && c->s[c->i] <= '9') {
        while (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') c->i++;
    } else {
        return RV_TJ_FALLBACK;  /* "-Infinity" and the like */
    }
    int64_t int_digits = c->i - digits_start;
    if (c->i < c->n && c->s[c->i] == '.') {
        c->i++;
        int64_t f = c->i;
        while (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') c->i++;
        if (c->i == f) return RV_TJ_FALLBACK;
        is_float = 1;
    }
    if (c->i < c->n && (c->s[c->i] == 'e' || c->s[c->i] == 'E')) {
        c->i++;
        if (c->i < c->n && (c->s[c->i] == '+' || c->s[c->i] == '-')) c->i++;
        int64_t e = c->i;
        while (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') c->i++;
        if (c->i == e) return RV_TJ_FALLBACK;
        is_float = 1;
    }
    /* Python reads "01" as 0 followed by extra data: leave that to Python */
    if (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') return RV_TJ_FALLBACK;
    if (is_float) {
        if (!t->dbl_canon) return RV_TJ_FALLBACK;
        return t->dbl_canon(c->s + start, c->i - start, o) == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
    }
    if (int_digits > 18) return RV_TJ_FALLBACK;
    if (neg && int_digits == 1 && c->s[digits_start] == '0')
        return rv_tbuf_putc(o, '0') == 0 ? RV_TJ_OK : RV_TJ_NOMEM; /* int("-0") == 0 */
    return rv_tbuf_put(o, c->s + start, c->i - start) == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
}

/* -1, 0, 1 as the byte strings a[0:na], b[0:nb] compare (unsigned bytes, then length);
 * object keys are short, so a plain loop beats a call to memcmp */
static inline int rv_tj_cmp(const char *a, int64_t na, const char *b, int64_t nb) {
    int64_t m = na < nb ? na : nb;
    for (int64_t k = 0; k < m; k++) {
        unsigned char x = (unsigned char)a[k], y = (unsigned char)b[k];
        if (x != y) return x < y ? -1 : 1;
    }
    return (na > nb) - (na < nb);
}

static inline int rv_tj_key_less(const char *base, const rv_tmember *a, const rv_tmember *b) {
    int cmp = rv_tj_cmp(base + a->koff, a->klen, base + b->koff, b->klen);
    if (cmp != 0) return cmp < 0;
    return a->order < b->order;
}

/* Stable sort of members by key bytes (UTF-8 byte order is code point order), then by
 * position, so among duplicate keys the last one written comes last. */
static void rv_tj_sort_members(const char *base, rv_tmember *m, rv_tmember *tmp, int64_t n) {
    if (n <= 16) {
        for (int64_t i = 1; i < n; i++) {
            rv_tmember v = m[i];
            int64_t j = i - 1;
            while (j >= 0 && rv_tj_key_less(base, &v, &m[j])) { m[j + 1] = m[j]; j--; }
            m[j + 1] = v;
        }
        return;
    }
    int64_t half = n / 2;
    rv_tj_sort_members(base, m, tmp, half);
    rv_tj_sort_members(base, m + half, tmp, n - half);
    int64_t a = 0, b = half, k = 0;
    while (a < half && b < n) tmp[k++] = rv_tj_key_less(base, &m[b], &m[a]) ? m[b++] : m[a++];
    while (a < half) tmp[k++] = m[a++];
    while (b < n) tmp[k++] = m[b++];
    memcpy(m, tmp, sizeof(rv_tmember) * (size_t)n);
}

static int rv_tj_value(rv_tjson *t, rv_tjcur *c, rv_tbuf *o, int depth);

static int rv_tj_push_member(rv_tjson *t, rv_tmember m) {
    if (t->mem_n >= t->mem_cap) {
        int64_t cap = t->mem_cap ? 2 * t->mem_cap : 64;
        rv_tmember *a = (rv_tmember *)realloc(t->mem, sizeof(rv_tmember) * (size_t)cap);
        if (!a) return -1;
        t->mem = a;
        rv_tmember *b = (rv_tmember *)realloc(t->mem_tmp, sizeof(rv_tmember) * (size_t)cap);
        if (!b) return -1;
        t->mem_tmp = b;
        t->mem_cap = cap;
    }
    t->mem[t->mem_n++] = m;
    return 0;
}

/* An object at c->s[c->i] == '{', written as it is read ({"key":value,...}); only when
 * its keys are not already in order (or repeat) is it rebuilt with sorted members, the
 * last of duplicate keys kept.  Keys containing " or \ are left to Python (their quoted
 * form would not sort like their text). */
static int rv_tj_object(rv_tjson *t, rv_tjcur *c, rv_tbuf *o, int depth) {
    int64_t start = o->n, base = t->mem_n, order = 0;
    int in_order = 1, r;
    c->i++;
    rv_tj_ws(c);
    if (rv_tbuf_putc(o, '{') != 0) return RV_TJ_NOMEM;
    if (c->i < c->n && c->s[c->i] == '}') {
        c->i++;
        return rv_tbuf_putc(o, '}') == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
    }
    for (;;) {
        rv_tmember m;
        if (c->i >= c->n || c->s[c->i] != '"') return RV_TJ_FALLBACK;
        if (order && rv_tbuf_putc(o, ',') != 0) return RV_TJ_NOMEM;
        m.mstart = o->n;
        int64_t kstart, klen;
        int64_t open = c->i;
        r = rv_tj_raw_string(t, c, &kstart, &klen);
        if (r == RV_TJ_OK) {
            if (rv_tbuf_put(o, c->s + open, klen + 2) != 0) return RV_TJ_NOMEM;
        } else if (r == 1) {
            if (rv_tbuf_putc(o, '"') != 0) return RV_TJ_NOMEM;
            int64_t at = o->n;
            if ((r = rv_tj_string(t, c, o)) != RV_TJ_OK) return r;
            for (int64_t k = at; k < o->n; k++)
                if (o->d[k] == '"' || o->d[k] == '\\') return RV_TJ_FALLBACK;
            if (rv_tbuf_putc(o, '"') != 0) return RV_TJ_NOMEM;
        } else {
            return r;
        }
        m.koff = m.mstart + 1;
        m.klen = o->n - 1 - m.koff;
        rv_tj_ws(c);
        if (c->i >= c->n || c->s[c->i] != ':') return RV_TJ_FALLBACK;
        c->i++;
        rv_tj_ws(c);
        if (rv_tbuf_putc(o, ':') != 0) return RV_TJ_NOMEM;
        if ((r = rv_tj_value(t, c, o, depth + 1)) != RV_TJ_OK) return r;
        m.mend = o->n;
        m.order = order++;
        if (t->mem_n > base && !rv_tj_key_less(o->d, &t->mem[t->mem_n - 1], &m)) in_order = 0;
        if (in_order && t->mem_n > base) {
            /* equal keys: order breaks the tie, so check the bytes too */
            const rv_tmember *p = &t->mem[t->mem_n - 1];
            if (rv_tj_cmp(o->d + p->koff, p->klen, o->d + m.koff, m.klen) == 0) in_order = 0;
        }
        if (rv_tj_push_member(t, m) != 0) return RV_TJ_NOMEM;
        rv_tj_ws(c);
        if (c->i >= c->n) return RV_TJ_FALLBACK;
        if (c->s[c->i] == ',') { c->i++; rv_tj_ws(c); continue; }
        if (c->s[c->i] == '}') { c->i++; break; }
        return RV_TJ_FALLBACK;
    }
    int64_t count = t->mem_n - base;
    rv_tmember *mm = t->mem + base;
    if (in_order) {
        t->mem_n = base;
        return rv_tbuf_putc(o, '}') == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
    }
    rv_tj_sort_members(o->d, mm, t->mem_tmp, count);
    t->tmp.n = 0;
    if (rv_tbuf_putc(&t->tmp, '{') != 0) return RV_TJ_NOMEM;
    int first = 1;
    for (int64_t k = 0; k < count; k++) {
        if (k + 1 < count && mm[k].klen == mm[k + 1].klen &&
            (mm[k].klen == 0 || memcmp(o->d + mm[k].koff, o->d + mm[k + 1].koff, (size_t)mm[k].klen) == 0))
            continue; /* a later duplicate wins */
        if (!first && rv_tbuf_putc(&t->tmp, ',') != 0) return RV_TJ_NOMEM;
        first = 0;
        if (rv_tbuf_put(&t->tmp, o->d + mm[k].mstart, mm[k].mend - mm[k].mstart) != 0) return RV_TJ_NOMEM;
    }
    if (rv_tbuf_putc(&t->tmp, '}') != 0) return RV_TJ_NOMEM;
    t->mem_n = base;
    o->n = start;
    return rv_tbuf_put(o, t->tmp.d, t->tmp.n) == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
}

static int rv_tj_value(rv_tjson *t, rv_tjcur *c, rv_tbuf *o, int depth) {
    int r;
    if (depth > RV_TJ_MAX_DEPTH || c->i >= c->n) return RV_TJ_FALLBACK;
    char ch = c->s[c->i];
    switch (ch) {
        case '{':
            return rv_tj_object(t, c, o, depth);
        case '[':
            c->i++;
            if (rv_tbuf_putc(o, '[') != 0) return RV_TJ_NOMEM;
            rv_tj_ws(c);
            if (c->i < c->n && c->s[c->i] == ']') {
                c->i++;
                return rv_tbuf_putc(o, ']') == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
            }
            for (;;) {
                if ((r = rv_tj_value(t, c, o, depth + 1)) != RV_TJ_OK) return r;
                rv_tj_ws(c);
                if (c->i >= c->n) return RV_TJ_FALLBACK;
                if (c->s[c->i] == ',') {
                    c->i++;
                    rv_tj_ws(c);
                    if (rv_tbuf_putc(o, ',') != 0) return RV_TJ_NOMEM;
                    continue;
                }
                if (c->s[c->i] == ']') {
                    c->i++;
                    return rv_tbuf_putc(o, ']') == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
                }
                return RV_TJ_FALLBACK;
            }
        case '"':
            return rv_tj_string_canon(t, c, o);
        case 't':
            if ((r = rv_tj_literal(c, "true", 4)) != RV_TJ_OK) return r;
            return rv_tbuf_putc(o, '1') == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
        case 'f':
            if ((r = rv_tj_literal(c, "false", 5)) != RV_TJ_OK) return r;
            return rv_tbuf_putc(o, '0') == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
        case 'n':
            if ((r = rv_tj_literal(c, "null", 4)) != RV_TJ_OK) return r;
            return rv_tbuf_put(o, "null", 4) == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
        default:
            if (ch == '-' || (ch >= '0' && ch <= '9')) return rv_tj_number(t, c, o);
            return RV_TJ_FALLBACK;
    }
}

#define RV_TJ_GROW(field, type, cap)                                          \
    do {                                                                      \
        type *grown = (type *)realloc(t->field, sizeof(type) * (size_t)(cap)); \
        if (!grown) return -1;                                                \
        t->field = grown;                                                     \
    } while (0)

/* Ends the call being read: its name and arguments end where names and args do now. */
static int rv_tj_push_call(rv_tjson *t) {
    if (t->ncalls >= t->calls_cap) {
        int64_t cap = t->calls_cap ? 2 * t->calls_cap : 64;
        RV_TJ_GROW(name_end, int64_t, cap);
        RV_TJ_GROW(args_end, int64_t, cap);
        RV_TJ_GROW(memo, uint64_t, cap);
        RV_TJ_GROW(raw_start, int64_t, cap);
        RV_TJ_GROW(raw_end, int64_t, cap);
        RV_TJ_GROW(raw_hash, uint64_t, cap);
        t->calls_cap = cap;
    }
    t->name_end[t->ncalls] = t->names.n;
    t->args_end[t->ncalls] = t->args.n;
    t->memo[t->ncalls] = RV_TRAJ_MEMO_MISS;
    t->ncalls++;
    return 0;
}
#undef RV_TJ_GROW


/* One past the '}' that closes the object at s[i] == '{', matching braces and brackets
 * outside strings, with the text's rv_tj_text_hash in *hash; -1 if the text ends first.
 * Nothing else is checked: the memo only answers for texts that were read in full
 * before, byte for byte. */
static inline int64_t rv_tj_object_span_portable(const char *text, int64_t n, int64_t i, uint64_t *hash) {
    const unsigned char *s = (const unsigned char *)text;
    int64_t open = i, depth = 0;
    while (i < n) {
        switch (rv_tj_nest_cls[s[i]]) {
            case 0:
                i++;
                break;
            case 1:
                i++;
                for (;;) {
                    while (i < n && s[i] != '"' && s[i] != '\\') i++;
                    if (i >= n) return -1;
                    if (s[i] == '"') break;
                    i += 2; /* an escape: the next byte cannot end the string */
                }
                i++;
                break;
            case 2:
                depth++;
                i++;
                break;
            default:
                i++;
                if (--depth == 0) {
                    *hash = rv_tj_text_hash(text + open, i - open);
                    return i;
                }
        }
    }
    return -1;
}

/* The scanner's state between blocks, and one block of it: masks of the block's quotes,
 * backslashes, openers ({ [) and closers (} ]), bit k for byte k of `width` (16, 32 or
 * 64).  Quotes toggle an inside-a-string mask (a prefix XOR), so only the braces and
 * brackets outside strings are visited; a block with a backslash is walked mark by mark
 * instead, so an escaped byte is skipped (across blocks too).  Returns one past the
 * closing brace within the block (1..width), or 0. */
typedef struct {
    int64_t depth;
    int in_string, skip_first;
} rv_tj_nest;

static RV_ALWAYS_INLINE int rv_tj_nest_block(rv_tj_nest *st, uint64_t q, uint64_t e, uint64_t o, uint64_t c,
                                             int width) {
    const uint64_t all = width == 64 ? ~0ULL : (1ULL << width) - 1;
    if (e == 0) {
        if (st->skip_first) q &= ~1ULL; /* byte 0 is escaped */
        st->skip_first = 0;
        uint64_t inside = q;
        inside ^= inside << 1;
        inside ^= inside << 2;
        inside ^= inside << 4;
        inside ^= inside << 8;
        if (width > 16) inside ^= inside << 16;
        if (width > 32) inside ^= inside << 32;
        inside &= all;
        if (st->in_string) inside ^= all;
        uint64_t marks = (o | c) & ~inside;
        while (marks) {
            int k = __builtin_ctzll(marks);
            marks &= marks - 1;
            if (o >> k & 1u) {
                st->depth++;
            } else if (--st->depth == 0) {
                return k + 1;
            }
        }
        st->in_string = (int)(inside >> (width - 1) & 1u);
        return 0;
    }
    uint64_t any = q | e | o | c;
    if (st->skip_first) any &= ~1ULL;
    st->skip_first = 0;
    while (any) {
        int k = __builtin_ctzll(any);
        uint64_t bit = 1ULL << k;
        any &= any - 1;
        if (st->in_string) {
            if (e & bit) {
                if (k == width - 1) st->skip_first = 1; /* the escaped byte opens the next block */
                else any &= ~(bit << 1);
            } else if (q & bit) {
                st->in_string = 0;
            }
        } else if (q & bit) {
            st->in_string = 1;
        } else if (o & bit) {
            st->depth++;
        } else if ((c & bit) && --st->depth == 0) {
            return k + 1;
        }
    }
    return 0;
}

#if defined(__SSE2__)
/* The first `keep` bytes of v, the rest zero. */
static inline __m128i rv_tj_keep(__m128i v, int keep) {
    const __m128i index = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    return _mm_and_si128(v, _mm_cmplt_epi8(index, _mm_set1_epi8((char)keep)));
}

/* rv_tj_hash_piece on a vector of 16 bytes: each word's halves multiplied, the
 * neighbour word added. */
static inline __m128i rv_tj_hash_add128(__m128i acc, __m128i v, __m128i key) {
    __m128i k = _mm_xor_si128(v, key);
    __m128i prod = _mm_mul_epu32(k, _mm_srli_epi64(k, 32));
    return _mm_add_epi64(acc, _mm_add_epi64(_mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2)), prod));
}

/* The object's end within a 16-byte block (1..16), or 0: the block's quotes, backslashes
 * and brackets ([ ] are { } without 0x20) handed to rv_tj_nest_block. */
static inline int rv_tj_block_sse2(rv_tj_nest *st, __m128i v, uint32_t valid) {
    __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
    return rv_tj_nest_block(st, (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('"'))) & valid,
                            (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))) & valid,
                            (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(folded, _mm_set1_epi8('{'))) & valid,
                            (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(folded, _mm_set1_epi8('}'))) & valid, 16);
}

/* rv_tj_object_span_portable, 16 bytes per step (SSE2 is in every x86-64 CPU), hashing
 * each piece as it is read (piece j of a block into accumulators 2j, 2j + 1). */
static inline int64_t rv_tj_object_span_sse2(const char *text, int64_t n, int64_t i, uint64_t *hash) {
    __m128i acc[4], key[4];
    for (int j = 0; j < 4; j++) {
        acc[j] = _mm_setzero_si128();
        key[j] = _mm_loadu_si128((const __m128i *)(rv_tj_hkey + 2 * j));
    }
    rv_tj_nest st = {0, 0, 0};
    uint8_t tail[16];
    int j = 0;
    for (int64_t at = i; at < n; at += 16, j = (j + 1) & 3) {
        __m128i v = _mm_loadu_si128((const __m128i *)rv_block((const uint8_t *)text, n, at, 16, tail));
        int end = rv_tj_block_sse2(&st, v, rv_valid32(n, at, 16));
        if (end) v = rv_tj_keep(v, end);
        acc[j] = rv_tj_hash_add128(acc[j], v, key[j]);
        if (end) {
            uint64_t a[8];
            for (int k = 0; k < 4; k++) _mm_storeu_si128((__m128i *)(a + 2 * k), acc[k]);
            *hash = rv_tj_hash_end(a, at + end - i);
            return at + end;
        }
    }
    return -1;
}
#endif

#if defined(RV_X86) && defined(__SSE2__)
#define RV_TJ_SPAN_VECTOR 1
/* The same, 32 bytes per step (AVX2): a block's two halves into two accumulator
 * vectors, the second half's words left out when the object ends in the first. */
RV_TARGET_AVX2 static RV_ALWAYS_INLINE int rv_tj_step_avx2(rv_tj_nest *st, const uint8_t *s, int64_t n, int64_t i, __m256i *acc,
                                            __m256i key) {
    const __m256i index = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
                                           20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
    uint8_t tail[32];
    __m256i v = _mm256_loadu_si256((const __m256i *)rv_block(s, n, i, 32, tail));
    uint32_t valid = rv_valid32(n, i, 32);
    __m256i folded = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
    int end = rv_tj_nest_block(
        st, (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('"'))) & valid,
        (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('\\'))) & valid,
        (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(folded, _mm256_set1_epi8('{'))) & valid,
        (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(folded, _mm256_set1_epi8('}'))) & valid, 32);
    if (end) v = _mm256_and_si256(v, _mm256_cmpgt_epi8(_mm256_set1_epi8((char)end), index));
    __m256i k = _mm256_xor_si256(v, key);
    __m256i add = _mm256_add_epi64(_mm256_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2)),
                                   _mm256_mul_epu32(k, _mm256_srli_epi64(k, 32)));
    if (end && end <= 16) add = _mm256_blend_epi32(add, _mm256_setzero_si256(), 0xF0);
    *acc = _mm256_add_epi64(*acc, add);
    return end;
}

RV_TARGET_AVX2 static int64_t rv_tj_object_span_avx2(const char *text, int64_t n, int64_t i, uint64_t *hash) {
    const uint8_t *s = (const uint8_t *)text;
    const __m256i key0 = _mm256_loadu_si256((const __m256i *)rv_tj_hkey);
    const __m256i key1 = _mm256_loadu_si256((const __m256i *)(rv_tj_hkey + 4));
    __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
    int64_t open = i;
    rv_tj_nest st = {0, 0, 0};
    for (; i < n; i += 64) {
        int end = rv_tj_step_avx2(&st, s, n, i, &acc0, key0), at = 0;
        if (!end && i + 32 < n) {
            end = rv_tj_step_avx2(&st, s, n, i + 32, &acc1, key1);
            at = 32;
        }
        if (end) {
            uint64_t a[8];
            _mm256_storeu_si256((__m256i *)a, acc0);
            _mm256_storeu_si256((__m256i *)(a + 4), acc1);
            *hash = rv_tj_hash_end(a, i + at + end - open);
            return i + at + end;
        }
    }
    return -1;
}

/* The same, 64 bytes per step (AVX-512 BW): one block, one accumulator vector. */
RV_TARGET_AVX512 static int64_t rv_tj_object_span_avx512(const char *text, int64_t n, int64_t i, uint64_t *hash) {
    const uint8_t *s = (const uint8_t *)text;
    const __m512i quote = _mm512_set1_epi8('"'), bslash = _mm512_set1_epi8('\\'), lower = _mm512_set1_epi8(0x20);
    const __m512i open_b = _mm512_set1_epi8('{'), close_b = _mm512_set1_epi8('}');
    const __m512i key = _mm512_loadu_si512((const void *)rv_tj_hkey);
    __m512i acc = _mm512_setzero_si512();
    int64_t open = i;
    rv_tj_nest st = {0, 0, 0};
    for (; i < n; i += 64) {
        /* a masked load reads no byte past the text (and faults on none) */
        uint64_t valid = n - i >= 64 ? ~0ULL : (1ULL << (n - i)) - 1;
        __m512i v = _mm512_maskz_loadu_epi8(valid, s + i);
        __m512i folded = _mm512_or_si512(v, lower);
        int end = rv_tj_nest_block(&st, _mm512_cmpeq_epi8_mask(v, quote), _mm512_cmpeq_epi8_mask(v, bslash),
                                   _mm512_cmpeq_epi8_mask(folded, open_b), _mm512_cmpeq_epi8_mask(folded, close_b),
                                   64);
        __mmask8 words = 0xFF;
        if (end) {
            v = _mm512_maskz_mov_epi8(end == 64 ? ~0ULL : (1ULL << end) - 1, v);
            words = (__mmask8)((1u << (2 * ((end + 15) >> 4))) - 1);
        }
        __m512i k = _mm512_xor_si512(v, key);
        __m512i add = _mm512_add_epi64(_mm512_shuffle_epi32(v, _MM_PERM_BADC),
                                       _mm512_mul_epu32(k, _mm512_srli_epi64(k, 32)));
        acc = _mm512_mask_add_epi64(acc, words, acc, add);
        if (end) {
            uint64_t a[8];
            _mm512_storeu_si512((void *)a, acc);
            *hash = rv_tj_hash_end(a, i + end - open);
            return i + end;
        }
    }
    return -1;
}
#endif

static inline int64_t rv_tj_object_span(const char *text, int64_t n, int64_t i, uint64_t *hash) {
#ifdef RV_TJ_SPAN_VECTOR
    if (rv_isa >= RV_ISA_AVX512) return rv_tj_object_span_avx512(text, n, i, hash);
    if (rv_isa >= RV_ISA_AVX2) return rv_tj_object_span_avx2(text, n, i, hash);
#endif
#if defined(__SSE2__)
    if (rv_isa != RV_ISA_PORTABLE) return rv_tj_object_span_sse2(text, n, i, hash);
#endif
    return rv_tj_object_span_portable(text, n, i, hash);
}

/* One call object at c->s[c->i] == '{'. */
static int rv_tj_call(rv_tjson *t, rv_tjcur *c, const char *name_key, int64_t name_len, const char *args_key,
                      int64_t args_len, int args_required) {
    int have_name = 0, have_args = 0, r;
    int64_t kstart, klen;
    const char *key;
    static const char slot[4] = {0, 0, 0, 0};
    /* 4 bytes before the arguments, for the caller to write the name id into: the call's
     * key (name id, canonical arguments) is then one span, interned without a copy */
    if (rv_tbuf_put(&t->args, slot, 4) != 0) return RV_TJ_NOMEM;
    c->i++;
    rv_tj_ws(c);
    if (c->i < c->n && c->s[c->i] == '}') return RV_TJ_FALLBACK; /* no name */
    for (;;) {
        if (c->i >= c->n || c->s[c->i] != '"') return RV_TJ_FALLBACK;
        r = rv_tj_raw_string(t, c, &kstart, &klen);
        if (r == RV_TJ_OK) {
            key = c->s + kstart;
        } else if (r == 1) {
            t->key.n = 0;
            if ((r = rv_tj_string(t, c, &t->key)) != RV_TJ_OK) return r;
            key = t->key.d;
            klen = t->key.n;
        } else {
            return r;
        }
        int is_name = klen == name_len && memcmp(key, name_key, (size_t)klen) == 0;
        int is_args = klen == args_len && memcmp(key, args_key, (size_t)klen) == 0;
        rv_tj_ws(c);
        if (c->i >= c->n || c->s[c->i] != ':') return RV_TJ_FALLBACK;
        c->i++;
        rv_tj_ws(c);
        if (c->i >= c->n) return RV_TJ_FALLBACK;
        if (is_name) {
            if (have_name || c->s[c->i] != '"') return RV_TJ_FALLBACK; /* duplicate, or not a string */
            r = rv_tj_raw_string(t, c, &kstart, &klen);
            if (r == RV_TJ_OK) {
                if (rv_tbuf_put(&t->names, c->s + kstart, klen) != 0) return RV_TJ_NOMEM;
            } else if (r == 1) {
                if ((r = rv_tj_string(t, c, &t->names)) != RV_TJ_OK) return r;
            } else {
                return r;
            }
            have_name = 1;
        } else if (is_args) {
            if (have_args) return RV_TJ_FALLBACK;
            char ch = c->s[c->i];
            if (ch == '{') {
                if ((r = rv_tj_object(t, c, &t->args, 1)) != RV_TJ_OK) return r;
            } else if (ch == 'n') {
                if ((r = rv_tj_literal(c, "null", 4)) != RV_TJ_OK) return r;
                if (rv_tbuf_put(&t->args, "null", 4) != 0) return RV_TJ_NOMEM;
            } else {
                return RV_TJ_FALLBACK; /* arguments that are not an object */
            }
            have_args = 1;
        } else {
            t->junk.n = 0;
            if ((r = rv_tj_value(t, c, &t->junk, 1)) != RV_TJ_OK) return r;
        }
        rv_tj_ws(c);
        if (c->i >= c->n) return RV_TJ_FALLBACK;
        if (c->s[c->i] == ',') { c->i++; rv_tj_ws(c); continue; }
        if (c->s[c->i] == '}') { c->i++; break; }
        return RV_TJ_FALLBACK;
    }
    if (!have_name) return RV_TJ_FALLBACK;
    if (!have_args) {
        if (args_required) return RV_TJ_FALLBACK;
        if (rv_tbuf_put(&t->args, "null", 4) != 0) return RV_TJ_NOMEM;
    }
    return rv_tj_push_call(t) == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
}

/* The trajectory's list syntax around its calls: c at the '[' (after whitespace), each
 * call handed to visit(t, ctx, c) at its '{' (it moves c past the call).  Whitespace,
 * commas and the closing ']' are checked here; anything else is RV_TJ_FALLBACK. */
typedef int (*rv_tj_visit_fn)(rv_tjson *t, void *ctx, rv_tjcur *c);

static int rv_tj_list(rv_tjson *t, rv_tjcur *c, rv_tj_visit_fn visit, void *ctx) {
    int r;
    rv_tj_ws(c);
    if (c->i >= c->n || c->s[c->i] != '[') return RV_TJ_FALLBACK;
    c->i++;
    rv_tj_ws(c);
    if (c->i < c->n && c->s[c->i] == ']') {
        c->i++;
    } else {
        for (;;) {
            if (c->i >= c->n || c->s[c->i] != '{') return RV_TJ_FALLBACK;
            if ((r = visit(t, ctx, c)) != RV_TJ_OK) return r;
            rv_tj_ws(c);
            if (c->i >= c->n) return RV_TJ_FALLBACK;
            if (c->s[c->i] == ',') { c->i++; rv_tj_ws(c); continue; }
            if (c->s[c->i] == ']') { c->i++; break; }
            return RV_TJ_FALLBACK;
        }
    }
    rv_tj_ws(c);
    return c->i == c->n ? RV_TJ_OK : RV_TJ_FALLBACK;
}

typedef struct {
    const char *name_key, *args_key;
    int64_t name_len, args_len;
    int args_required;
    const rv_traj_memo *memo;
} rv_tj_opts;

static int rv_tj_visit_read(rv_tjson *t, void *ctx, rv_tjcur *c) {
    const rv_tj_opts *o = (const rv_tj_opts *)ctx;
    return rv_tj_call(t, c, o->name_key, o->name_len, o->args_key, o->args_len, o->args_required);
}

/* Pass 1 with a memo: each call's span and hash appended to the group's spans, its memo
 * slot prefetched, so the row's cache misses overlap (and, when the rows of a group are
 * found ahead of reading them, those of the rows before it). */
typedef struct {
    rv_tjspans *spans;
    const rv_traj_memo *memo;
} rv_tj_span_ctx;

static int rv_tj_visit_span(rv_tjson *t, void *ctx, rv_tjcur *c) {
    const rv_tj_span_ctx *x = (const rv_tj_span_ctx *)ctx;
    uint64_t h;
    int64_t open = c->i, end = rv_tj_object_span(c->s, c->n, open, &h);
    (void)t;
    if (end < 0) return RV_TJ_FALLBACK;
    rv_tjspan span = {open, end, h};
    if (rv_buf_push(x->spans, span) != 0) return RV_TJ_NOMEM;
#if defined(__GNUC__)
    const rv_traj_table *m = &x->memo->raw;
    __builtin_prefetch(&m->slots[h & (uint64_t)(m->nslots - 1)]);
#endif
    c->i = end;
    return RV_TJ_OK;
}

/* Pass 1 of the trajectory s[0:n]: its calls' spans appended to g.  Reads nothing but s
 * (and prefetches), so it may run ahead of the rows before it.  RV_TJ_OK; otherwise g is
 * left as it was and the row is for the caller's other path. */
static int rv_tjson_spans(rv_tjspans *g, const char *s, int64_t n, const rv_traj_memo *memo) {
    rv_tjcur c = {s, n, 0};
    rv_tj_span_ctx x = {g, memo};
    int64_t mark = g->n;
    if (!rv_tj_cls_ready) rv_tj_cls_init();
    int r = rv_tj_list(NULL, &c, rv_tj_visit_span, &x);
    if (r != RV_TJ_OK) g->n = mark;
    return r;
}

/* The texts of the memo entries that calls g[from:to) may be, on their way into the cache
 * for the comparisons (their slots were prefetched by rv_tjson_spans). */
static inline void rv_tjson_prefetch_texts(const rv_tjspans *g, int64_t from, int64_t to, const rv_traj_memo *memo) {
#if defined(__GNUC__)
    const rv_traj_table *m = &memo->raw;
    for (int64_t k = from; k < to; k++) {
        const rv_traj_slot *sl = &m->slots[g->data[k].hash & (uint64_t)(m->nslots - 1)];
        if (sl->id >= 0 && sl->hash == g->data[k].hash) __builtin_prefetch(m->arena + sl->off);
    }
#else
    (void)g; (void)from; (void)to; (void)memo;
#endif
}

/* Pass 2 of the trajectory s[0:n] whose calls' spans are g[from:to) (rv_tjson_spans):
 * calls appended to t (its counts are reset first).  A call whose text the memo knows is
 * not read: t->memo[k] holds what the memo gave; every call read in full has its text's
 * span and hash in raw_start/raw_end/raw_hash, for the caller to remember once it has
 * ids. */
static int rv_tjson_read_spans(rv_tjson *t, const char *s, int64_t n, const char *name_key, int64_t name_len,
                               const char *args_key, int64_t args_len, int args_required, const rv_traj_memo *memo,
                               const rv_tjspans *g, int64_t from, int64_t to) {
    rv_tjcur c = {s, n, 0};
    int r;
    if (!rv_tj_cls_ready) rv_tj_cls_init();
    t->names.n = t->args.n = t->ncalls = 0;
    t->mem_n = 0;
    t->key.n = 0;
    for (int64_t k = from; k < to; k++) {
        int64_t open = g->data[k].start, end = g->data[k].end;
        uint64_t h = g->data[k].hash;
        uint64_t v = rv_traj_memo_find(memo, s + open, end - open, h);
        if (v != RV_TRAJ_MEMO_MISS) {
            if (rv_tj_push_call(t) != 0) return RV_TJ_NOMEM;
            t->memo[t->ncalls - 1] = v;
            continue;
        }
        c.i = open;
        if ((r = rv_tj_call(t, &c, name_key, name_len, args_key, args_len, args_required)) != RV_TJ_OK) return r;
        if (c.i != end) return RV_TJ_FALLBACK;
        t->raw_start[t->ncalls - 1] = open;
        t->raw_end[t->ncalls - 1] = end;
        t->raw_hash[t->ncalls - 1] = h;
    }
    return RV_TJ_OK;
}

/* One trajectory from JSON text s[0:n]: calls appended to t (its counts are reset first);
 * with a memo, both passes above, one after the other. */
static int rv_tjson_trajectory(rv_tjson *t, const char *s, int64_t n, const char *name_key, int64_t name_len,
                               const char *args_key, int64_t args_len, int args_required,
                               const rv_traj_memo *memo) {
    int r;
    if (!memo) {
        rv_tjcur c = {s, n, 0};
        rv_tj_opts o = {name_key, args_key, name_len, args_len, args_required, memo};
        if (!rv_tj_cls_ready) rv_tj_cls_init();
        t->names.n = t->args.n = t->ncalls = 0;
        t->mem_n = 0;
        t->key.n = 0;
        return rv_tj_list(t, &c, rv_tj_visit_read, &o);
    }
    t->row_spans.n = 0;
    if ((r = rv_tjson_spans(&t->row_spans, s, n, memo)) != RV_TJ_OK) return r;
    rv_tjson_prefetch_texts(&t->row_spans, 0, t->row_spans.n, memo);
    return rv_tjson_read_spans(t, s, n, name_key, name_len, args_key, args_len, args_required, memo, &t->row_spans, 0,
                               t->row_spans.n);
}

#endif
