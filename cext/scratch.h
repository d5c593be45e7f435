/* Per-thread scratch of the id kernels (n-grams, BLEU, LCS).
 *
 * Every kernel takes raw pointers that the Cython layer has already validated
 * (offsets monotone and inside the ids buffer, every id < vocab size), so the
 * loops carry no checks.  All scratch memory belongs to one thread and is grown
 * on demand; vocabulary-indexed arrays are returned to their all-zero / all-minus-one
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
    /* indexed by token id (size vocab_size) */
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
    /* bit-parallel LCS */
    uint64_t *masks;    /* distinct tokens x words */
    int64_t masks_cap;
    uint64_t *rows;     /* stored V vectors for backtracking: (len+1) x words */
    int64_t rows_cap;
    uint8_t *marks;
    int64_t marks_cap;
} rv_scratch;

static inline int rv_scratch_init(rv_scratch *s, int64_t vocab_size) {
    memset(s, 0, sizeof(*s));
    int64_t n = vocab_size > 0 ? vocab_size : 1;
    s->vocab_size = vocab_size;
    s->cnt_a = (int32_t *)calloc((size_t)n, sizeof(int32_t));
    s->cnt_b = (int32_t *)calloc((size_t)n, sizeof(int32_t));
    s->slot = (int32_t *)malloc((size_t)n * sizeof(int32_t));
    s->cnt_c = (int32_t *)calloc((size_t)n, sizeof(int32_t));
    if (!s->cnt_a || !s->cnt_b || !s->slot || !s->cnt_c) return -1;
    memset(s->slot, 0xff, (size_t)n * sizeof(int32_t));
    return 0;
}

static inline void rv_scratch_free(rv_scratch *s) {
    free(s->cnt_a); free(s->cnt_b); free(s->slot); free(s->cnt_c);
    free(s->keys); free(s->vals); free(s->gram_cnt);
    free(s->ids_a); free(s->ids_b);
    free(s->masks); free(s->rows); free(s->marks);
    memset(s, 0, sizeof(*s));
}

#endif
