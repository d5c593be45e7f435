/* BLEU's clipped n-gram matches against the maximum count over a row's references. */
#ifndef RESPEVAL_BLEU_H
#define RESPEVAL_BLEU_H

#include <math.h>

#include "ngram.h"

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

/* sacreBLEU's compute_bleu (sacrebleu 2.6.0, metrics/bleu.py) of one row of statistics
 * [hyp_len, ref_len, correct_1..N, total_1..N], in its float order step for step, so the
 * score is the same double:
 *   bp = exp(1 - ref_len / sys_len) when shorter (0 when empty);
 *   no match at any order -> 0; per order n: add-k adds k to correct and total (n > 1),
 *   a total of 0 ends the loop, effective order = the last order reached;
 *   p_n = 100. * correct / total, or on no match 100. / (2^m * total) (exp) or
 *   100. * k / total (floor) or 0 (none, add-k);
 *   score = bp * exp(sum(my_log(p_n) for n <= eff) / eff), my_log(0) = -9999999999.
 * The sum is Python's sum() of floats: left to right before Python 3.12, Neumaier's
 * compensated sum from 3.12 on (``compensated``), as sacreBLEU gets it from the
 * interpreter it runs on.  exp and log are the C library's, as math.exp/math.log. */
enum { RV_SMOOTH_NONE = 0, RV_SMOOTH_FLOOR = 1, RV_SMOOTH_ADD_K = 2, RV_SMOOTH_EXP = 3 };

static inline double rv_bleu_sentence_score(const int64_t *row, int max_order, int smooth,
                                            double value, int effective_order, int compensated) {
    const int64_t sys_len = row[0], ref_len = row[1];
    const int64_t *correct = row + 2, *total = row + 2 + max_order;
    double bp = 1.0;
    if (sys_len < ref_len) bp = sys_len > 0 ? exp(1.0 - (double)ref_len / (double)sys_len) : 0.0;
    int any = 0;
    for (int n = 0; n < max_order; n++) any |= correct[n] != 0;
    if (!any) return 0.0;
    double p[64];
    for (int n = 0; n < max_order; n++) p[n] = 0.0;
    double smooth_mteval = 1.0;
    int eff = max_order;
    for (int n = 0; n < max_order; n++) {
        double c = (double)correct[n], t = (double)total[n];
        if (smooth == RV_SMOOTH_ADD_K && n > 0) {
            c += value;
            t += value;
        }
        if (t == 0.0) break;
        if (effective_order) eff = n + 1;
        if (c == 0.0) {
            if (smooth == RV_SMOOTH_EXP) {
                smooth_mteval *= 2.0;
                p[n] = 100.0 / (smooth_mteval * t);
            } else if (smooth == RV_SMOOTH_FLOOR) {
                p[n] = 100.0 * value / t;
            }
        } else {
            p[n] = 100.0 * c / t;
        }
    }
    double f = 0.0, comp = 0.0;
    for (int n = 0; n < eff; n++) {
        double x = p[n] == 0.0 ? -9999999999.0 : log(p[n]);
        if (compensated && n > 0) {
            double s = f + x;
            if (fabs(f) >= fabs(x)) comp += (f - s) + x;
            else comp += (x - s) + f;
            f = s;
        } else {
            f += x;
        }
    }
    if (compensated && comp != 0.0 && isfinite(comp)) f += comp;
    return bp * exp(f / (double)eff);
}

#endif
