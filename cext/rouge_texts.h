/* ROUGE from texts, one reference group at a time, on one thread.
 *
 * A worker owns its tables, a tokenizer state and the group kernels: ids only have
 * to agree within a pair, so threads never share a vocabulary and nothing is
 * merged.  For each reference it tokenizes the reference once, prepares the group
 * (rouge.h), then tokenizes and scores each prediction paired with it.  Without
 * stemming, tokens are numbered by a small table of the reference's own distinct
 * tokens (a prediction's other tokens match nothing), which stays in cache; with
 * stemming, a vocabulary per worker gives each word type its stem once.  Statistics per pair are integers:
 * hits of orders 1..max_order, then the LCS length (want_lcs), then rougeLsum's
 * union-LCS hits (want_lsum); and the two token counts.
 */
#ifndef RESPEVAL_ROUGE_TEXTS_H
#define RESPEVAL_ROUGE_TEXTS_H

#include "lcs.h"
#include "rouge.h"
#include "tokenize.h"
#include "vocab.h"

#define RV_TEXT_PREFETCH 8
#define RV_DENSE_LOGSZ 6  /* the reference table's slots to start with (and to shrink back to) */

typedef struct {
    int max_order, want_lcs, want_lsum, stem;
    int64_t ncols;          /* max_order + want_lcs + want_lsum */
    const int *kinds_p; const void *const *datas_p; const int64_t *lens_p;  /* predictions */
    const int *kinds_r; const void *const *datas_r; const int64_t *lens_r;  /* references */
    const int64_t *pair_pred;
    int64_t nref;
    const int64_t *group_start;  /* pairs of reference r: order[group_start[r] .. group_start[r+1]) */
    const int64_t *order;
    int64_t *stats;              /* [pairs][ncols] */
    int64_t *lengths;            /* [pairs][2]: prediction tokens, reference tokens */
} rv_rouge_job;

typedef struct {
    rv_vocab v;                  /* stemming: every word type, with its stem */
    rv_vocab d;                  /* no stemming: the current reference's distinct tokens */
    rv_tok tok;
    rv_rgroup g;
    rv_scratch lsum;             /* rougeLsum in the group's dense id space */
    rv_i32buf ids;               /* the reference's ids, then one prediction's */
    rv_i64buf sents;             /* sentence ends, likewise */
    rv_i64buf rb, pb;            /* sentence bounds of the reference and the prediction */
    int64_t too_long;            /* the first pair (by index) beyond RV_LCS_MAX_CELLS, or -1 */
} rv_rouge_worker;

static inline int rv_rouge_worker_init(rv_rouge_worker *w) {
    memset(w, 0, sizeof(*w));
    w->too_long = -1;
    if (rv_vocab_init(&w->v) || rv_vocab_init_size(&w->d, RV_DENSE_LOGSZ) || rv_rgroup_init(&w->g) ||
        rv_scratch_init(&w->lsum, 1))
        return -1;
    return 0;
}

static inline void rv_rouge_worker_free(rv_rouge_worker *w) {
    rv_vocab_free(&w->v);
    rv_vocab_free(&w->d);
    rv_tok_free(&w->tok);
    rv_rgroup_free(&w->g);
    rv_scratch_free(&w->lsum);
    rv_buf_free(&w->ids);
    rv_buf_free(&w->sents);
    rv_buf_free(&w->rb);
    rv_buf_free(&w->pb);
}

/* Sentence bounds [start, end1, end2, ...] relative to `base` from sentence ends. */
static inline int rv_bounds(rv_i64buf *out, const int64_t *ends, int64_t n, int64_t base) {
    out->n = 0;
    if (rv_buf_reserve(out, n + 1)) return -1;
    out->data[out->n++] = 0;
    for (int64_t k = 0; k < n; k++) out->data[out->n++] = ends[k] - base;
    return 0;
}

/* Ask for the first bytes of a text (its object header is already read). */
static inline void rv_prefetch_text(const void *data, int64_t len, int kind) {
#if defined(__GNUC__) || defined(__clang__)
    const char *c = (const char *)data;
    int64_t bytes = len * kind;
    __builtin_prefetch(c);
    if (bytes > 64) __builtin_prefetch(c + 64);
    if (bytes > 128) __builtin_prefetch(c + 128);
    if (bytes > 192) __builtin_prefetch(c + 192);
#else
    (void)data; (void)len; (void)kind;
#endif
}

/* Every pair of reference r.  0, or -1 when out of memory. */
static inline int rv_rouge_group(rv_rouge_worker *w, const rv_rouge_job *job, int64_t r) {
    int64_t k0 = job->group_start[r], k1 = job->group_start[r + 1];
    if (k0 == k1) return 0;
    rv_i64buf *sents = job->want_lsum ? &w->sents : NULL;
    int dense = !job->stem;
    w->ids.n = 0;
    w->sents.n = 0;
    if (dense && rv_vocab_reset(&w->d, RV_DENSE_LOGSZ)) return -1;
    if (rv_tokenize_rouge(dense ? &w->d : &w->v, job->stem, job->kinds_r[r], job->datas_r[r], job->lens_r[r],
                          &w->tok, &w->ids, sents))
        return -1;
    int64_t m = w->ids.n, nrs = w->sents.n;
    if (dense ? rv_rgroup_set_dense(&w->g, w->ids.data, m, w->d.n) : rv_rgroup_set_ref(&w->g, w->ids.data, m, w->v.n))
        return -1;
    if (job->want_lsum && (rv_bounds(&w->rb, w->sents.data, nrs, 0) || rv_scratch_reserve(&w->lsum, w->g.nd + 1)))
        return -1;
    int64_t last = job->group_start[job->nref];
    for (int64_t q = k0; q < k1; q++) {
        int64_t k = job->order[q], p = job->pair_pred[k];
        if (q + RV_TEXT_PREFETCH < last) {  /* the prediction a few pairs ahead, maybe in the next group */
            int64_t pf = job->pair_pred[job->order[q + RV_TEXT_PREFETCH]];
            rv_prefetch_text(job->datas_p[pf], job->lens_p[pf], job->kinds_p[pf]);
        }
        int64_t *st = job->stats + k * job->ncols;
        w->ids.n = m;
        w->sents.n = nrs;
        if (rv_tokenize_rouge_into(dense ? &w->d : &w->v, job->stem, !dense, (int32_t)w->g.nd, job->kinds_p[p],
                                   job->datas_p[p], job->lens_p[p], &w->tok, &w->ids, sents))
            return -1;
        int64_t np = w->ids.n - m;
        job->lengths[2 * k] = np;
        job->lengths[2 * k + 1] = m;
        for (int64_t c = 0; c < job->ncols; c++) st[c] = 0;
        if ((job->want_lcs || job->want_lsum) && np > 0 && m > RV_LCS_MAX_CELLS / np) {
            if (w->too_long < 0 || k < w->too_long) w->too_long = k;
            continue;
        }
        const int32_t *a = w->ids.data + m;  /* dense already, or mapped below */
        if (!dense) {
            if (rv_rgroup_map(&w->g, a, np)) return -1;
            a = w->g.a;
        }
        if ((job->max_order > 0 || job->want_lcs) &&
            rv_rgroup_pair(&w->g, a, np, job->max_order, job->want_lcs, st, st + job->max_order))
            return -1;
        if (job->want_lsum) {
            if (rv_bounds(&w->pb, w->sents.data + nrs, w->sents.n - nrs, m)) return -1;
            int64_t h = rv_lsum_hits(&w->lsum, w->g.r, w->rb.data, nrs, a, w->pb.data, w->pb.n - 1);
            if (h < 0) return -1;
            st[job->max_order + job->want_lcs] = h;
        }
    }
    rv_rgroup_clear_ref(&w->g);
    if (r + 1 < job->nref) rv_prefetch_text(job->datas_r[r + 1], job->lens_r[r + 1], job->kinds_r[r + 1]);
    return 0;
}

#endif
