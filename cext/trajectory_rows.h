/* Trajectory row kernels: tool-call sequences as int32 ids (call id = name + canonical
 * arguments, name id = tool name), compared row by row (the readers that turn calls into
 * those ids are trajectory_table.h, trajectory_json.h, trajectory_py.h and
 * trajectory_arrow.h).
 *
 * Everything here trusts its arguments: trajectory.pxi checks every length and offset
 * before calling in.  The pure-Python twin is src/respeval/_core_py/trajectory.py; the
 * statistics and their order are TRAJECTORY_STATS (respeval/_tool_calls.py).
 */
#ifndef RESPEVAL_TRAJECTORY_ROWS_H
#define RESPEVAL_TRAJECTORY_ROWS_H

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
    return rv_grow((void **)&s->keys, &s->keys_cap, nkeys, sizeof(uint64_t)) ||
                   rv_grow((void **)&s->dp, &s->dp_cap, ndp, sizeof(int64_t))
               ? -1
               : 0;
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

#endif
