/* Per-thread scratch of the id kernels (n-grams, BLEU, LCS).
 *
 * Every kernel takes raw pointers that the Cython layer has already validated
 * (offsets monotone and inside the ids buffer, every id below the id space), so the
 * loops carry no checks.  All scratch memory belongs to one thread and is grown on
 * demand; arrays indexed by token id are returned to their all-zero / all-minus-one
 * state before a kernel returns, which is what lets one scratch serve millions of
 * rows without re-clearing.
 */
#ifndef RESPEVAL_SCRATCH_H
#define RESPEVAL_SCRATCH_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"

#define RV_EMPTY_KEY UINT64_MAX

typedef struct {
    /* indexed by token id, for ids below vocab_size */
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
    /* bit-parallel LCS: match masks of one sequence, dense or as position lists */
    uint64_t *masks;    /* distinct tokens x words */
    int64_t masks_cap;
    int64_t *pos_off;   /* sparse masks: positions of distinct token r are pos[pos_off[r] .. pos_off[r+1]) */
    int64_t pos_off_cap;
    int64_t *pos;
    int64_t pos_cap;
    uint64_t *mask_tmp; /* one mask built from positions */
    int64_t mask_tmp_cap;
    int64_t mask_tmp_row;  /* distinct token whose bits mask_tmp holds, -1 */
    int sparse;
    uint64_t *rows;     /* stored V vectors for backtracking */
    int64_t rows_cap;
    uint64_t *vec;      /* one V vector */
    int64_t vec_cap;
    uint8_t *marks;
    int64_t marks_cap;
} rv_scratch;

/* Make the id-indexed arrays cover ids below vocab_size (new entries cleared). */
static inline int rv_scratch_reserve(rv_scratch *s, int64_t vocab_size) {
    if (vocab_size <= s->vocab_size) return 0;
    int64_t n = s->vocab_size > 0 ? s->vocab_size : 1;
    while (n < vocab_size) n *= 2;
    int32_t **arrays[4] = {&s->cnt_a, &s->cnt_b, &s->cnt_c, &s->slot};
    for (int k = 0; k < 4; k++) {
        int32_t *p = (int32_t *)realloc(*arrays[k], (size_t)n * sizeof(int32_t));
        if (!p) return -1;
        memset(p + s->vocab_size, k == 3 ? 0xff : 0, (size_t)(n - s->vocab_size) * sizeof(int32_t));
        *arrays[k] = p;
    }
    s->vocab_size = n;
    return 0;
}

static inline int rv_scratch_init(rv_scratch *s, int64_t vocab_size) {
    memset(s, 0, sizeof(*s));
    s->mask_tmp_row = -1;
    return rv_scratch_reserve(s, vocab_size > 0 ? vocab_size : 1);
}

static inline void rv_scratch_free(rv_scratch *s) {
    free(s->cnt_a); free(s->cnt_b); free(s->slot); free(s->cnt_c);
    free(s->keys); free(s->vals); free(s->gram_cnt);
    free(s->ids_a); free(s->ids_b);
    free(s->masks); free(s->pos_off); free(s->pos); free(s->mask_tmp);
    free(s->rows); free(s->vec); free(s->marks);
    memset(s, 0, sizeof(*s));
}

#endif
