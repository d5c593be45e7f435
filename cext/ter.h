/* TER's edit counting: sacreBLEU 2.6's beam edit distance and greedy block-shift
 * search (sacrebleu/metrics/lib_ter.py), on token ids.
 *
 * Every limit and tie-break is sacreBLEU's (tests/_helpers/reference/ter.py is the
 * readable spec, respeval/_core_py/ter.py the twin of this file):
 *   - DP rows: beam of 25 cells either side of floor(i * m / n), widened to
 *     ceil(ratio / 2 + 25) when 25 < ratio / 2; the last row in full; cells outside
 *     the beam are undefined (INF); ties go to match/substitution, then extra
 *     hypothesis word, then missing reference word (a later one only if strictly
 *     cheaper);
 *   - shift candidates: runs of 1..10 equal words whose starts are <= 50 apart, the
 *     hypothesis run holding an error, the reference run holding an error, the run
 *     not aligned onto itself; each distinct target; the best maximises
 *     (gain, length, -start, -target); the search stops when the gain is <= 0 or
 *     once 1000 candidates were evaluated (that round's best is then dropped).
 * Where sacreBLEU caches rows in a trie of hypothesis prefixes, a candidate here
 * recomputes rows from its first changed position on (row i depends on the first
 * i words only): the same numbers.
 *
 * Rows are stored as bands: row i holds cells [s_i, e_i), its beam [lo_i, hi_i)
 * plus one undefined cell on the left and undefined cells up to the next row's
 * beam end on the right, which is every cell row i + 1 reads.  Memory is
 * O(n * beam + m), not O(n * m).  The caller bounds n and m (RV_TER_MAX_WORDS).
 */
#ifndef RESPEVAL_TER_H
#define RESPEVAL_TER_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"

#define RV_TER_MAX_SHIFT_SIZE 10
#define RV_TER_MAX_SHIFT_DIST 50
#define RV_TER_BEAM_WIDTH 25
#define RV_TER_MAX_CANDIDATES 1000
/* Longest hypothesis or reference, in words, one row may have (documented limit). */
#define RV_TER_MAX_WORDS (1 << 17)
#define RV_TER_INF 1000000000

enum { RV_TER_MATCH = 0, RV_TER_SUB, RV_TER_EXTRA_HYP, RV_TER_MISSING_REF, RV_TER_UNDEF };

typedef struct {
    int32_t *cost; uint8_t *ops; int64_t cost_cap, ops_cap;       /* the banded table */
    int64_t *start; int64_t start_cap;                            /* row i's first cell in cost/ops */
    int32_t *s, *e, *lo, *hi; int64_t s_cap, e_cap, lo_cap, hi_cap;
    int32_t *tmp; int64_t tmp_cap;                                /* two rows for candidates */
    int32_t *words, *shifted, *best; int64_t words_cap, shifted_cap, best_cap;
    int32_t *align; uint8_t *ref_err, *hyp_err, *path; int64_t align_cap, ref_err_cap, hyp_err_cap, path_cap;
} rv_ter_scratch;

static inline void rv_ter_scratch_free(rv_ter_scratch *t) {
    free(t->cost); free(t->ops); free(t->start); free(t->s); free(t->e); free(t->lo); free(t->hi);
    free(t->tmp); free(t->words); free(t->shifted); free(t->best);
    free(t->align); free(t->ref_err); free(t->hyp_err); free(t->path);
    memset(t, 0, sizeof(*t));
}

/* One DP row i (1 <= i <= n) into cur (indexed by cell), from prev; ops optional. */
static inline void rv_ter_row(const rv_ter_scratch *t, int64_t i, const int32_t *prev, int32_t *cur,
                              uint8_t *ops, int32_t word, const int32_t *ref) {
    int64_t lo = t->lo[i], hi = t->hi[i], s = t->s[i], e = t->e[i];
    if (lo > s) { cur[s] = RV_TER_INF; if (ops) ops[s] = RV_TER_UNDEF; }
    if (lo == 0) {
        cur[0] = prev[0] + 1;
        if (ops) ops[0] = RV_TER_EXTRA_HYP;
        lo = 1;
    }
    for (int64_t j = lo; j < hi; j++) {
        int eq = word == ref[j - 1];
        int32_t best = prev[j - 1] + !eq;
        uint8_t op = eq ? RV_TER_MATCH : RV_TER_SUB;
        if (best >= RV_TER_INF) { best = RV_TER_INF; op = RV_TER_UNDEF; }
        if (prev[j] + 1 < best) { best = prev[j] + 1; op = RV_TER_EXTRA_HYP; }
        if (cur[j - 1] + 1 < best) { best = cur[j - 1] + 1; op = RV_TER_MISSING_REF; }
        cur[j] = best;
        if (ops) ops[j] = op;
    }
    for (int64_t j = hi > lo ? hi : lo; j < e; j++) {
        cur[j] = RV_TER_INF;
        if (ops) ops[j] = RV_TER_UNDEF;
    }
}

/* Row geometry for a hypothesis of n words against m reference words. */
static inline int rv_ter_geometry(rv_ter_scratch *t, int64_t n, int64_t m) {
    if (rv_grow((void **)&t->start, &t->start_cap, n + 2, sizeof(int64_t)) ||
        rv_grow((void **)&t->s, &t->s_cap, n + 1, sizeof(int32_t)) ||
        rv_grow((void **)&t->e, &t->e_cap, n + 1, sizeof(int32_t)) ||
        rv_grow((void **)&t->lo, &t->lo_cap, n + 1, sizeof(int32_t)) ||
        rv_grow((void **)&t->hi, &t->hi_cap, n + 1, sizeof(int32_t)))
        return -1;
    double ratio = n ? (double)m / (double)n : 1.0;
    int64_t beam = RV_TER_BEAM_WIDTH < ratio / 2 ? (int64_t)ceil(ratio / 2 + RV_TER_BEAM_WIDTH) : RV_TER_BEAM_WIDTH;
    t->lo[0] = 0;
    t->hi[0] = (int32_t)(m + 1);
    for (int64_t i = 1; i <= n; i++) {
        int64_t diag = (int64_t)floor((double)i * ratio);
        int64_t lo = diag - beam, hi = diag + beam;
        t->lo[i] = (int32_t)(lo < 0 ? 0 : lo);
        t->hi[i] = (int32_t)(i == n || hi > m + 1 ? m + 1 : hi);
    }
    int64_t total = 0;
    for (int64_t i = 0; i <= n; i++) {
        int64_t s = t->lo[i] > 0 ? t->lo[i] - 1 : 0;
        int64_t e = i < n && t->hi[i + 1] > t->hi[i] ? t->hi[i + 1] : t->hi[i];
        t->s[i] = (int32_t)s;
        t->e[i] = (int32_t)e;
        t->start[i] = total - s;  /* cell j of row i is at start[i] + j */
        total += e - s;
    }
    if (rv_grow((void **)&t->cost, &t->cost_cap, total, sizeof(int32_t)) ||
        rv_grow((void **)&t->ops, &t->ops_cap, total, 1) ||
        rv_grow((void **)&t->tmp, &t->tmp_cap, 2 * (m + 1), sizeof(int32_t)))
        return -1;
    return 0;
}

/* The full table of `words`; returns the distance. */
static inline int32_t rv_ter_table(rv_ter_scratch *t, const int32_t *words, int64_t n, const int32_t *ref, int64_t m) {
    int32_t *row0 = t->cost + t->start[0];
    uint8_t *ops0 = t->ops + t->start[0];
    for (int64_t j = 0; j <= m; j++) { row0[j] = (int32_t)j; ops0[j] = RV_TER_MISSING_REF; }
    for (int64_t i = 1; i <= n; i++)
        rv_ter_row(t, i, t->cost + t->start[i - 1], t->cost + t->start[i], t->ops + t->start[i], words[i - 1], ref);
    return t->cost[t->start[n] + m];
}

/* Distance of `cand`, whose first `p` words are those the table was built from. */
static inline int32_t rv_ter_candidate(rv_ter_scratch *t, const int32_t *cand, int64_t p, int64_t n,
                                       const int32_t *ref, int64_t m) {
    if (p >= n) return t->cost[t->start[n] + m];
    int32_t *a = t->tmp, *b = t->tmp + (m + 1), *x;
    memcpy(a + t->s[p], t->cost + t->start[p] + t->s[p], (size_t)(t->e[p] - t->s[p]) * sizeof(int32_t));
    for (int64_t i = p + 1; i <= n; i++) {
        rv_ter_row(t, i, a, b, NULL, cand[i - 1], ref);
        x = a; a = b; b = x;
    }
    return a[m];
}

/* sacreBLEU's block move of w[start, start + len) to `target`, into out. */
static inline void rv_ter_move(const int32_t *w, int64_t n, int64_t start, int64_t len, int64_t target, int32_t *out) {
    int64_t o = 0, k;
    if (target < start) {
        for (k = 0; k < target; k++) out[o++] = w[k];
        for (k = start; k < start + len; k++) out[o++] = w[k];
        for (k = target; k < start; k++) out[o++] = w[k];
        for (k = start + len; k < n; k++) out[o++] = w[k];
    } else if (target > start + len) {
        for (k = 0; k < start; k++) out[o++] = w[k];
        for (k = start + len; k < target; k++) out[o++] = w[k];
        for (k = start; k < start + len; k++) out[o++] = w[k];
        for (k = target; k < n; k++) out[o++] = w[k];
    } else {
        for (k = 0; k < start; k++) out[o++] = w[k];
        for (k = start + len; k < len + target; k++) out[o++] = w[k];
        for (k = start; k < start + len; k++) out[o++] = w[k];
        for (k = len + target; k < n; k++) out[o++] = w[k];
    }
}

/* Backtrace of the table: alignment and error flags.  0, or -3 if the path left
 * the beam (which sacreBLEU would report as an undefined operation). */
static inline int rv_ter_align(rv_ter_scratch *t, int64_t n, int64_t m) {
    int64_t i = n, j = m, np = 0;
    while (i > 0 || j > 0) {
        if (j < t->s[i] || j >= t->e[i]) return -3;
        uint8_t op = t->ops[t->start[i] + j];
        t->path[np++] = op;
        if (op == RV_TER_MATCH || op == RV_TER_SUB) { i--; j--; }
        else if (op == RV_TER_MISSING_REF) j--;
        else if (op == RV_TER_EXTRA_HYP) i--;
        else return -3;
    }
    int64_t h = -1, r = -1, nh = 0, nr = 0;
    for (int64_t k = np - 1; k >= 0; k--) {
        uint8_t op = t->path[k];
        if (op == RV_TER_MATCH || op == RV_TER_SUB) {
            h++; r++;
            t->align[r] = (int32_t)h;
            t->hyp_err[nh++] = op == RV_TER_SUB;
            t->ref_err[nr++] = op == RV_TER_SUB;
        } else if (op == RV_TER_EXTRA_HYP) {
            h++;
            t->hyp_err[nh++] = 1;
        } else {
            r++;
            t->align[r] = (int32_t)h;
            t->ref_err[nr++] = 1;
        }
    }
    return 0;
}

/* Shifts + edit distance turning hyp (n words) into ref (m words), as sacreBLEU's
 * translation_edit_rate.  >= 0, -1 when out of memory, -3 on an internal error. */
static inline int64_t rv_ter_edits(rv_ter_scratch *t, const int32_t *hyp, int64_t n, const int32_t *ref, int64_t m) {
    if (m == 0) return n;
    if (rv_ter_geometry(t, n, m) ||
        rv_grow((void **)&t->words, &t->words_cap, n + 1, sizeof(int32_t)) ||
        rv_grow((void **)&t->shifted, &t->shifted_cap, n + 1, sizeof(int32_t)) ||
        rv_grow((void **)&t->best, &t->best_cap, n + 1, sizeof(int32_t)) ||
        rv_grow((void **)&t->align, &t->align_cap, m + 1, sizeof(int32_t)) ||
        rv_grow((void **)&t->ref_err, &t->ref_err_cap, m + 1, 1) ||
        rv_grow((void **)&t->hyp_err, &t->hyp_err_cap, n + 1, 1) ||
        rv_grow((void **)&t->path, &t->path_cap, n + m + 1, 1))
        return -1;
    int32_t *words = t->words;
    memcpy(words, hyp, (size_t)n * sizeof(int32_t));
    int64_t shifts = 0, checked = 0;
    for (;;) {
        int32_t current = rv_ter_table(t, words, n, ref, m);
        if (rv_ter_align(t, n, m)) return -3;
        int have = 0, stop = 0;
        int64_t bk_gain = 0, bk_len = 0, bk_h = 0, bk_t = 0;
        for (int64_t h = 0; h < n && !stop; h++) {
            int64_t r0 = h - RV_TER_MAX_SHIFT_DIST < 0 ? 0 : h - RV_TER_MAX_SHIFT_DIST;
            int64_t r1 = h + RV_TER_MAX_SHIFT_DIST + 1 < m ? h + RV_TER_MAX_SHIFT_DIST + 1 : m;
            for (int64_t r = r0; r < r1 && !stop; r++) {
                int herr = 0, rerr = 0;
                for (int64_t len = 1; len <= RV_TER_MAX_SHIFT_SIZE && h + len <= n && r + len <= m; len++) {
                    if (words[h + len - 1] != ref[r + len - 1]) break;
                    herr |= t->hyp_err[h + len - 1];
                    rerr |= t->ref_err[r + len - 1];
                    if (!herr || !rerr) continue;
                    if (h <= t->align[r] && t->align[r] < h + len) continue;
                    int64_t prev_target = -1;
                    for (int64_t off = -1; off < len; off++) {
                        int64_t target = r + off == -1 ? 0 : (int64_t)t->align[r + off] + 1;
                        if (target == prev_target) continue;
                        prev_target = target;
                        rv_ter_move(words, n, h, len, target, t->shifted);
                        int64_t gain = current - rv_ter_candidate(t, t->shifted, h < target ? h : target, n, ref, m);
                        checked++;
                        /* (gain, length, -start, -target), maximised */
                        if (!have || gain > bk_gain ||
                            (gain == bk_gain && (len > bk_len || (len == bk_len && (h < bk_h ||
                                                                                   (h == bk_h && target < bk_t)))))) {
                            have = 1; bk_gain = gain; bk_len = len; bk_h = h; bk_t = target;
                            memcpy(t->best, t->shifted, (size_t)n * sizeof(int32_t));
                        }
                    }
                    if (checked >= RV_TER_MAX_CANDIDATES) { stop = 1; break; }
                }
            }
        }
        if (checked >= RV_TER_MAX_CANDIDATES || !have || bk_gain <= 0) return shifts + current;
        shifts++;
        memcpy(words, t->best, (size_t)n * sizeof(int32_t));
    }
}

#endif
