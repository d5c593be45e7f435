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
 * call" produces.  Returns the number of pairs; marks the paired positions; *first is
 * the smallest paired predicted position + 1 (0 if none); *distinct_pred counts the
 * distinct predicted ids. */
static inline int64_t rv_traj_pair_up(const uint64_t *pk, int64_t np, const uint64_t *rk, int64_t nr,
                                      uint8_t *pm, uint8_t *rm, int64_t *first, int64_t *distinct_pred) {
    int64_t i = 0, j = 0, pairs = 0, best = -1, distinct = 0;
    uint32_t last = 0;
    int have_last = 0;
    while (i < np) {
        uint32_t pid = (uint32_t)(pk[i] >> 32);
        if (!have_last || pid != last) { distinct++; last = pid; have_last = 1; }
        while (j < nr && (uint32_t)(rk[j] >> 32) < pid) j++;
        if (j < nr && (uint32_t)(rk[j] >> 32) == pid) {
            int64_t ppos = (int64_t)(uint32_t)pk[i], rpos = (int64_t)(uint32_t)rk[j];
            if (pm) pm[ppos] = 1;
            if (rm) rm[rpos] = 1;
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

/* One row's statistics into out[RV_T_NSTATS]; pm/rm (may be NULL) receive matched flags. */
static inline int rv_traj_row(rv_traj_scratch *s, const int32_t *pc, const int32_t *pn, int64_t np,
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
    out[RV_T_MATCHED] = rv_traj_pair_up(pk, np, rk, nr, pm, rm, &first, &distinct);
    out[RV_T_ANY_ORDER] = out[RV_T_MATCHED] == nr;
    out[RV_T_REDUNDANT] = np - distinct;
    out[RV_T_FIRST_MATCH] = first;

    out[RV_T_EXACT_NAMES] = rv_traj_equal(pn, np, rn, nr);
    out[RV_T_IN_ORDER_NAMES] = rv_traj_subsequence(rn, nr, pn, np);
    rv_traj_keys(pn, np, pk);
    rv_traj_keys(rn, nr, rk);
    out[RV_T_MATCHED_NAMES] = rv_traj_pair_up(pk, np, rk, nr, NULL, NULL, &first_n, &distinct_n);
    out[RV_T_ANY_ORDER_NAMES] = out[RV_T_MATCHED_NAMES] == nr;

    out[RV_T_LCS] = rv_traj_lcs(pc, np, rc, nr, s->dp);
    out[RV_T_LCS_NAMES] = rv_traj_lcs(pn, np, rn, nr, s->dp);
    out[RV_T_EDIT_NAMES] = rv_traj_edit(rn, nr, pn, np, s->dp);
    return 0;
}

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
