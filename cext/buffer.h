/* The core's one growable buffer: a typed array that doubles when it fills.
 *
 *   rv_i32buf ids = {0};                an empty buffer (data NULL, n = cap = 0);
 *                                       rv_i64buf and rv_u32buf likewise, RV_BUF(T) any other
 *   rv_buf_push(&ids, 7)                append; 0, or -1 when out of memory
 *   rv_buf_reserve(&ids, total)         room for `total` elements in all
 *   rv_buf_free(&ids)
 *
 * Every buffer has the same three fields, so the same macros serve every element
 * type; rv_grow is the function behind them (and serves plain pointer + capacity
 * pairs too).  Sizes are checked against RV_MAX_ELEMS, so no size computation
 * (doubling, bytes for realloc) can overflow, also with a 32-bit size_t.
 */
#ifndef RESPEVAL_BUFFER_H
#define RESPEVAL_BUFFER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RV_MAX_ELEMS ((int64_t)(SIZE_MAX / 16 < (uint64_t)(INT64_MAX / 16) ? SIZE_MAX / 16 : INT64_MAX / 16))

/* Grow *p (capacity *cap elements of `elem` bytes) to hold at least `need`
 * elements, doubling from 64; contents are kept.  0, or -1 when out of memory
 * (then *p and *cap are unchanged). */
static inline int rv_grow(void **p, int64_t *cap, int64_t need, size_t elem) {
    if (need <= *cap) return 0;
    if (need < 0 || need > RV_MAX_ELEMS) return -1;
    int64_t c = *cap > 0 ? *cap : 64;
    while (c < need) c = c > RV_MAX_ELEMS / 2 ? need : c * 2;
    void *q = realloc(*p, (size_t)c * elem);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* rv_grow, with the new elements zeroed. */
static inline int rv_grow_zero(void **p, int64_t *cap, int64_t need, size_t elem) {
    int64_t old = *cap;
    if (rv_grow(p, cap, need, elem)) return -1;
    if (*cap > old) memset((char *)*p + (size_t)old * elem, 0, (size_t)(*cap - old) * elem);
    return 0;
}

#define RV_BUF(T) struct { T *data; int64_t n, cap; }
#define rv_buf_reserve(b, total) \
    rv_grow((void **)&(b)->data, &(b)->cap, (total), sizeof(*(b)->data))
#define rv_buf_push(b, x) \
    (((b)->n < (b)->cap || rv_buf_reserve((b), (b)->n + 1) == 0) ? ((b)->data[(b)->n++] = (x), 0) : -1)
#define rv_buf_free(b) (free((b)->data), (b)->data = NULL, (b)->n = (b)->cap = 0)

typedef RV_BUF(int32_t) rv_i32buf;
typedef RV_BUF(int64_t) rv_i64buf;
typedef RV_BUF(uint32_t) rv_u32buf;

#endif
