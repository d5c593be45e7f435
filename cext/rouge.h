/* ROUGE-N and ROUGE-L of many predictions against one reference (a "group").
 *
 * The reference is mapped once to dense indices 0..nd-1 of its distinct tokens (a
 * prediction token it does not hold becomes nd, which matches nothing), with its
 * occurrence counts and, for references up to RV_GROUP_MASK_WORDS words (512 tokens),
 * one position mask per distinct token.  Every prediction scored against it then needs
 * no hash table and nothing to clear:
 *   rouge1   the i-th occurrence of a token in the prediction is a clipped hit iff
 *            fewer than i came before it... i.e. iff count_so_far < count_in_reference;
 *   rougeN   with G_n = AND_k (Mr[t_k] >> k) over the n-gram's tokens (its occurrences in
 *            the reference, by start) and Q_n the same over the prediction's masks of
 *            the positions seen so far, the occurrence is a hit iff
 *            popcount(Q_n) < popcount(G_n); G_n and Q_n roll from order n-1 of the
 *            previous token;
 *   rougeL   Hyyro's bit-parallel LCS on the same reference masks (lcs.h).
 * Longer references take the hash-table n-gram kernel (ngram.h) in the dense id space,
 * and LCS masks from lcs.h (dense, or position lists beyond the memory budget).
 */
#ifndef RESPEVAL_ROUGE_H
#define RESPEVAL_ROUGE_H

#include "dispatch.h"
#include "lcs.h"
#include "ngram.h"
#include "scratch.h"

#define RV_GROUP_MASK_WORDS 8
#define RV_ROUGE_MAX_ORDER 64

typedef struct {
    int32_t *loc; int64_t loc_cap;      /* thread-vocabulary id -> dense index, -1 */
    int32_t *rdist; int64_t rdist_cap;  /* thread-vocabulary id of each dense index */
    int32_t *r; int64_t r_cap;          /* the reference, dense */
    int32_t *rcnt; int64_t rcnt_cap;    /* occurrences of each dense index in the reference */
    int64_t m, nd, w;
    int mapped;                         /* the reference came through loc (rv_rgroup_set_ref) */
    uint64_t *mr; int64_t mr_cap;       /* [nd][w] position masks, when w <= RV_GROUP_MASK_WORDS */
    int small;
    /* one prediction */
    int32_t *a; int64_t a_cap;          /* the prediction, dense (nd: not in the reference) */
    int32_t *pcnt; int64_t pcnt_cap;    /* occurrences so far, per dense index */
    uint64_t *mp; int64_t mp_cap;       /* [nd][wp] masks of the positions seen so far */
    rv_scratch ngrams;                  /* hash n-grams of long pairs, dense ids */
    rv_scratch lcs;                     /* LCS masks of a long reference, kept for its group */
} rv_rgroup;

static inline int rv_rgroup_init(rv_rgroup *g) {
    memset(g, 0, sizeof(*g));
    return rv_scratch_init(&g->ngrams, 1) || rv_scratch_init(&g->lcs, 1) ? -1 : 0;
}

static inline void rv_rgroup_free(rv_rgroup *g) {
    free(g->loc); free(g->rdist); free(g->r); free(g->rcnt); free(g->mr);
    free(g->a); free(g->pcnt); free(g->mp);
    rv_scratch_free(&g->ngrams);
    rv_scratch_free(&g->lcs);
    memset(g, 0, sizeof(*g));
}

/* The reference's masks (small references) or its LCS masks and hash scratch. */
static inline int rv_rgroup_masks(rv_rgroup *g) {
    int64_t m = g->m, nd = g->nd;
    g->w = m ? (m + 63) >> 6 : 1;
    g->small = g->w <= RV_GROUP_MASK_WORDS;
    if (g->small) {
        if (rv_grow((void **)&g->mr, &g->mr_cap, (nd + 1) * g->w, sizeof(uint64_t))) return -1;
        memset(g->mr, 0, (size_t)((nd + 1) * g->w) * sizeof(uint64_t));
        for (int64_t j = 0; j < m; j++) g->mr[g->r[j] * g->w + (j >> 6)] |= 1ULL << (j & 63);
    } else {
        if (rv_scratch_reserve(&g->ngrams, nd + 1) || rv_scratch_reserve(&g->lcs, nd + 1)) return -1;
        if (rv_masks_build(&g->lcs, g->r, m, g->w) < 0) return -1;
    }
    return 0;
}

/* Make `ids` (m tokens, ids below vocab_n) the group's reference. 0, or -1. */
static inline int rv_rgroup_set_ref(rv_rgroup *g, const int32_t *ids, int64_t m, int64_t vocab_n) {
    if (vocab_n > g->loc_cap) {
        int64_t old = g->loc_cap;
        if (rv_grow((void **)&g->loc, &g->loc_cap, vocab_n, sizeof(int32_t))) return -1;
        memset(g->loc + old, 0xff, (size_t)(g->loc_cap - old) * sizeof(int32_t));
    }
    if (rv_grow((void **)&g->rdist, &g->rdist_cap, m + 1, sizeof(int32_t)) ||
        rv_grow((void **)&g->r, &g->r_cap, m + 1, sizeof(int32_t)) ||
        rv_grow((void **)&g->rcnt, &g->rcnt_cap, m + 1, sizeof(int32_t)) ||
        rv_grow((void **)&g->pcnt, &g->pcnt_cap, m + 1, sizeof(int32_t)))
        return -1;
    int64_t nd = 0;
    for (int64_t j = 0; j < m; j++) {
        int32_t t = ids[j];
        int32_t d = g->loc[t];
        if (d < 0) {
            d = g->loc[t] = (int32_t)nd;
            g->rdist[nd] = t;
            g->rcnt[nd] = 0;
            g->pcnt[nd] = 0;
            nd++;
        }
        g->r[j] = d;
        g->rcnt[d]++;
    }
    g->pcnt[nd] = 0;
    g->m = m;
    g->nd = nd;
    g->mapped = 1;
    return rv_rgroup_masks(g);
}

/* Make `dense` (m tokens already numbered 0..nd-1 in first-seen order) the group's
 * reference, without a vocabulary map.  0, or -1. */
static inline int rv_rgroup_set_dense(rv_rgroup *g, const int32_t *dense, int64_t m, int64_t nd) {
    if (rv_grow((void **)&g->r, &g->r_cap, m + 1, sizeof(int32_t)) ||
        rv_grow((void **)&g->rcnt, &g->rcnt_cap, nd + 1, sizeof(int32_t)) ||
        rv_grow((void **)&g->pcnt, &g->pcnt_cap, nd + 1, sizeof(int32_t)))
        return -1;
    memcpy(g->r, dense, (size_t)m * sizeof(int32_t));
    memset(g->rcnt, 0, (size_t)(nd + 1) * sizeof(int32_t));
    memset(g->pcnt, 0, (size_t)(nd + 1) * sizeof(int32_t));
    for (int64_t j = 0; j < m; j++) g->rcnt[dense[j]]++;
    g->m = m;
    g->nd = nd;
    g->mapped = 0;
    return rv_rgroup_masks(g);
}

static inline void rv_rgroup_clear_ref(rv_rgroup *g) {
    if (g->mapped) for (int64_t d = 0; d < g->nd; d++) g->loc[g->rdist[d]] = -1;
    if (!g->small) rv_masks_clear(&g->lcs, g->r, g->m);
    g->nd = g->m = 0;
}

/* The prediction (thread-vocabulary ids) as dense indices into g->a. 0, or -1. */
static inline int rv_rgroup_map(rv_rgroup *g, const int32_t *p, int64_t np) {
    if (rv_grow((void **)&g->a, &g->a_cap, np + 1, sizeof(int32_t))) return -1;
    int32_t absent = (int32_t)g->nd;
    for (int64_t i = 0; i < np; i++) {
        int32_t t = p[i];
        int32_t d = t < g->loc_cap ? g->loc[t] : -1;
        g->a[i] = d < 0 ? absent : d;
    }
    return 0;
}

/* x >> k across w words (1 <= k <= 63) into out. */
static RV_ALWAYS_INLINE void rv_shr(const uint64_t *x, int64_t w, int k, uint64_t *out) {
    for (int64_t q = 0; q < w; q++) out[q] = (x[q] >> k) | (q + 1 < w ? x[q + 1] << (64 - k) : 0);
}

static RV_ALWAYS_INLINE int64_t rv_popcount_words(const uint64_t *x, int64_t w) {
    int64_t c = 0;
    for (int64_t q = 0; q < w; q++) c += rv_popcount64(x[q]);
    return c;
}

/* Clipped n-gram hits of orders 1..max_order and the LCS length of the dense
 * prediction (np tokens in a) against the reference, when the reference and the
 * prediction both fit RV_GROUP_MASK_WORDS words.  The vectors of order n at token i
 * come from those of order n-1 at token i-1; once an order has no occurrence in the
 * reference, neither has any higher one through this token, so the orders stop there
 * (most 3- to 6-grams of real text stop early).  0, or -1. */
static RV_ALWAYS_INLINE int rv_rgroup_small_body(rv_rgroup *g, const int32_t *a, int64_t np, int max_order,
                                                 int want_lcs, int64_t *ov, int64_t *lcs) {
    const int64_t nd = g->nd, w = g->w, wp = (np + 63) >> 6;
    const uint64_t *mr = g->mr;
    for (int n = 0; n < max_order; n++) ov[n] = 0;
    int64_t live = 0;  /* orders 1..live of the previous token have occurrences in the reference */
    if (w == 1 && wp <= 1) {
        /* one word a side: every vector in a register or two */
        uint64_t bufG[2][RV_ROUGE_MAX_ORDER + 1], bufQ[2][RV_ROUGE_MAX_ORDER + 1], V = ~0ULL;
        uint64_t *pG = bufG[0], *pQ = bufQ[0], *cG = bufG[1], *cQ = bufQ[1], *x;
        if (rv_grow_zero((void **)&g->mp, &g->mp_cap, nd + 1, sizeof(uint64_t))) return -1;
        uint64_t *mp = g->mp;
        for (int64_t i = 0; i < np; i++) {
            int32_t d = a[i];
            if (d == nd) { live = 0; continue; }
            uint64_t md = mr[d], pd = mp[d];
            if (max_order > 0) {
                ov[0] += g->pcnt[d] < g->rcnt[d];
                g->pcnt[d]++;
                cG[1] = md;
                cQ[1] = pd;
                int64_t top = live + 1 < max_order ? live + 1 : max_order, n;
                for (n = 2; n <= top; n++) {
                    uint64_t gn = pG[n - 1] & (md >> (n - 1));
                    if (!gn) break;
                    uint64_t qn = pQ[n - 1] & (pd >> (n - 1));
                    cG[n] = gn;
                    cQ[n] = qn;
                    ov[n - 1] += rv_popcount64(qn) < rv_popcount64(gn);
                }
                live = n - 1 > 1 ? n - 1 : 1;
                x = pG; pG = cG; cG = x;
                x = pQ; pQ = cQ; cQ = x;
                mp[d] = pd | (1ULL << i);
            }
            uint64_t U = V & md;
            V = (V + U) | (V - U);
        }
        for (int64_t i = 0; i < np; i++) { mp[a[i]] = 0; g->pcnt[a[i]] = 0; }
        if (want_lcs) {
            uint64_t valid = g->m == 64 ? ~0ULL : ((1ULL << g->m) - 1);
            *lcs = g->m - rv_popcount64(V & valid);
        }
        return 0;
    }
#ifdef __SIZEOF_INT128__
    if (w <= 2 && wp <= 2) {
        /* up to two words a side (chrF's characters: 65-128 per segment), each vector
         * one 128-bit integer: the word arrays' per-order copies and loops were most of
         * chrF's time */
        typedef unsigned __int128 rv_u128;
        rv_u128 bufG[2][RV_ROUGE_MAX_ORDER + 1], bufQ[2][RV_ROUGE_MAX_ORDER + 1];
        rv_u128 *pG = bufG[0], *pQ = bufQ[0], *cG = bufG[1], *cQ = bufQ[1], *x;
        uint64_t V[2] = {~0ULL, ~0ULL};
        if (rv_grow_zero((void **)&g->mp, &g->mp_cap, (nd + 1) * wp, sizeof(uint64_t))) return -1;
        uint64_t *mp = g->mp;
        for (int64_t i = 0; i < np; i++) {
            int32_t d = a[i];
            if (d == nd) { live = 0; continue; }
            const uint64_t *mdw = mr + d * w;
            uint64_t *pdw = mp + d * wp;
            rv_u128 md = (rv_u128)mdw[0] | (w == 2 ? (rv_u128)mdw[1] << 64 : 0);
            rv_u128 pd = (rv_u128)pdw[0] | (wp == 2 ? (rv_u128)pdw[1] << 64 : 0);
            if (max_order > 0) {
                ov[0] += g->pcnt[d] < g->rcnt[d];
                g->pcnt[d]++;
                cG[1] = md;
                cQ[1] = pd;
                int64_t top = live + 1 < max_order ? live + 1 : max_order, n;
                for (n = 2; n <= top; n++) {
                    rv_u128 gn = pG[n - 1] & (md >> (n - 1));
                    if (!gn) break;
                    rv_u128 qn = pQ[n - 1] & (pd >> (n - 1));
                    cG[n] = gn;
                    cQ[n] = qn;
                    ov[n - 1] += rv_popcount64((uint64_t)qn) + rv_popcount64((uint64_t)(qn >> 64)) <
                                 rv_popcount64((uint64_t)gn) + rv_popcount64((uint64_t)(gn >> 64));
                }
                live = n - 1 > 1 ? n - 1 : 1;
                x = pG; pG = cG; cG = x;
                x = pQ; pQ = cQ; cQ = x;
                pdw[i >> 6] |= 1ULL << (i & 63);
            }
            if (want_lcs) rv_lcs_step(V, mdw, w);
        }
        for (int64_t i = 0; i < np; i++) {
            memset(mp + (int64_t)a[i] * wp, 0, (size_t)wp * sizeof(uint64_t));
            g->pcnt[a[i]] = 0;
        }
        if (want_lcs) *lcs = rv_prefix_zeros(V, g->m);
        return 0;
    }
#endif
    /* several words a side (at most RV_GROUP_MASK_WORDS): the same on word arrays */
    uint64_t bufG[2][RV_ROUGE_MAX_ORDER + 1][RV_GROUP_MASK_WORDS];
    uint64_t bufQ[2][RV_ROUGE_MAX_ORDER + 1][RV_GROUP_MASK_WORDS];
    uint64_t (*pG)[RV_GROUP_MASK_WORDS] = bufG[0], (*pQ)[RV_GROUP_MASK_WORDS] = bufQ[0];
    uint64_t (*cG)[RV_GROUP_MASK_WORDS] = bufG[1], (*cQ)[RV_GROUP_MASK_WORDS] = bufQ[1], (*x)[RV_GROUP_MASK_WORDS];
    uint64_t V[RV_GROUP_MASK_WORDS], sh[RV_GROUP_MASK_WORDS];
    if (rv_grow_zero((void **)&g->mp, &g->mp_cap, (nd + 1) * wp, sizeof(uint64_t))) return -1;
    uint64_t *mp = g->mp;
    for (int64_t q = 0; q < w; q++) V[q] = ~0ULL;
    for (int64_t i = 0; i < np; i++) {
        int32_t d = a[i];
        if (d == nd) { live = 0; continue; }
        const uint64_t *md = mr + d * w;
        uint64_t *pd = mp + d * wp;
        if (max_order > 0) {
            ov[0] += g->pcnt[d] < g->rcnt[d];
            g->pcnt[d]++;
            memcpy(cG[1], md, (size_t)w * sizeof(uint64_t));
            memcpy(cQ[1], pd, (size_t)wp * sizeof(uint64_t));
            int64_t top = live + 1 < max_order ? live + 1 : max_order, n;
            for (n = 2; n <= top; n++) {
                uint64_t any = 0;
                rv_shr(md, w, (int)(n - 1), sh);
                for (int64_t q = 0; q < w; q++) any |= cG[n][q] = pG[n - 1][q] & sh[q];
                if (!any) break;
                rv_shr(pd, wp, (int)(n - 1), sh);
                for (int64_t q = 0; q < wp; q++) cQ[n][q] = pQ[n - 1][q] & sh[q];
                ov[n - 1] += rv_popcount_words(cQ[n], wp) < rv_popcount_words(cG[n], w);
            }
            live = n - 1 > 1 ? n - 1 : 1;
            x = pG; pG = cG; cG = x;
            x = pQ; pQ = cQ; cQ = x;
            pd[i >> 6] |= 1ULL << (i & 63);
        }
        if (want_lcs) rv_lcs_step(V, md, w);
    }
    for (int64_t i = 0; i < np; i++) {
        memset(mp + (int64_t)a[i] * wp, 0, (size_t)wp * sizeof(uint64_t));
        g->pcnt[a[i]] = 0;
    }
    if (want_lcs) *lcs = rv_prefix_zeros(V, g->m);
    return 0;
}

RV_MULTIVERSION(int, rv_rgroup_small,
                (rv_rgroup *g, const int32_t *a, int64_t np, int max_order, int want_lcs, int64_t *ov, int64_t *lcs),
                (g, a, np, max_order, want_lcs, ov, lcs))

/* Clipped n-gram hits (orders 1..max_order) and, if want_lcs, the LCS length of the
 * dense prediction a (np tokens; nd for a token not in the reference, as
 * rv_rgroup_map gives) against the group's reference.  0, or -1. */
static inline int rv_rgroup_pair(rv_rgroup *g, const int32_t *a, int64_t np, int max_order, int want_lcs,
                                 int64_t *ov, int64_t *lcs) {
    if (g->small && np <= 64 * RV_GROUP_MASK_WORDS) return rv_rgroup_small(g, a, np, max_order, want_lcs, ov, lcs);
    if (max_order > 0) {
        if (rv_scratch_reserve(&g->ngrams, g->nd + 1)) return -1;
        if (rv_ngram_overlaps(&g->ngrams, a, np, g->r, g->m, max_order, ov)) return -1;
    }
    if (want_lcs) {
        if (np == 0 || g->m == 0) { *lcs = 0; return 0; }
        int64_t w = g->w;
        if (rv_grow((void **)&g->lcs.vec, &g->lcs.vec_cap, w, sizeof(uint64_t))) return -1;
        uint64_t *v = g->lcs.vec;
        for (int64_t q = 0; q < w; q++) v[q] = ~0ULL;
        for (int64_t i = 0; i < np; i++) {
            int32_t d = a[i];
            if (d == g->nd) continue;
            rv_lcs_step(v, g->small ? g->mr + d * w : rv_mask(&g->lcs, d, w), w);
        }
        *lcs = rv_prefix_zeros(v, g->m);
    }
    return 0;
}

/* ------------------------------------------------------------------ pairs of id rows */

/* The per-thread scratch of the id kernels: a group for one-off references, and
 * the id-indexed scratch of the hash n-grams (BLEU's several references) and
 * rougeLsum. */
typedef struct {
    rv_scratch s;
    rv_rgroup g;
} rv_pair_scratch;

static inline int rv_pair_scratch_init(rv_pair_scratch *ps, int64_t vocab_size) {
    memset(ps, 0, sizeof(*ps));
    return rv_scratch_init(&ps->s, vocab_size) || rv_rgroup_init(&ps->g) ? -1 : 0;
}

static inline void rv_pair_scratch_free(rv_pair_scratch *ps) {
    rv_scratch_free(&ps->s);
    rv_rgroup_free(&ps->g);
}

/* Clipped n-gram overlaps of a (la ids) against b (lb ids), orders 1..max_order, and
 * the LCS length if want_lcs: b is made a one-pair group (ids below vocab_size).
 * 0, or -1 when out of memory. */
static inline int rv_pair_stats(rv_pair_scratch *ps, const int32_t *a, int64_t la, const int32_t *b, int64_t lb,
                                int64_t vocab_size, int max_order, int want_lcs, int64_t *ov, int64_t *lcs) {
    rv_rgroup *g = &ps->g;
    int r = rv_rgroup_set_ref(g, b, lb, vocab_size);
    if (r == 0) r = rv_rgroup_map(g, a, la);
    if (r == 0) r = rv_rgroup_pair(g, g->a, la, max_order, want_lcs, ov, lcs);
    rv_rgroup_clear_ref(g);
    return r;
}

#endif
