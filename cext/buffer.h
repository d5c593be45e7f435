/* The core's one growable buffer: a typed array that doubles when it fills.
 *
 *   rv_i32buf ids = {0};                an empty buffer (data NULL, n = cap = 0);
 *                                       rv_i64buf, rv_u32buf, rv_u64buf likewise, RV_BUF(T) any other
 *   rv_buf_push(&ids, 7)                append; 0, or -1 when out of memory
 *   rv_buf_reserve(&ids, total)         room for `total` elements in all
 *   rv_buf_free(&ids)
 *
 * Every buffer has the same three fields, so the same macros serve every element
 * type; rv_grow is the function behind them (and serves plain pointer + capacity
 * pairs too), rv_grow_parallel behind arrays that share one capacity (a row's calls:
 * starts, ends, hashes, ...).  Sizes are checked against RV_MAX_ELEMS, so no size
 * computation (doubling, bytes for realloc) can overflow, also with a 32-bit size_t.
 *
 * rv_tbuf is the text buffer (RV_BUF(char)) the readers write canonical text into:
 * rv_tbuf_reserve(b, extra) makes room for `extra` more bytes, rv_tbuf_put and
 * rv_tbuf_putc append.
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

/* rv_grow for k arrays that share one capacity *cap: each array ps[i] (elements of
 * elem[i] bytes) to hold at least `need`.  0, or -1 when out of memory (then *cap is
 * unchanged, and every array still holds at least *cap elements). */
static inline int rv_grow_parallel(void **const *ps, const size_t *elem, int k, int64_t *cap, int64_t need) {
    if (need <= *cap) return 0;
    int64_t grown = *cap;
    for (int i = 0; i < k; i++) {
        grown = *cap;
        if (rv_grow(ps[i], &grown, need, elem[i])) return -1;
    }
    *cap = grown;
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
typedef RV_BUF(uint64_t) rv_u64buf;
typedef RV_BUF(char) rv_tbuf;

#if defined(__GNUC__) || defined(__clang__)
#define RV_NOINLINE __attribute__((noinline))
#else
#define RV_NOINLINE
#endif

/* rv_grow for a text buffer, out of line: the writers' fast paths (a compare and a copy)
 * stay small enough for the compiler to inline them where they are called per value. */
static RV_NOINLINE int rv_tbuf_grow(rv_tbuf *b, int64_t need) { return rv_buf_reserve(b, need); }

/* Room for `extra` more bytes after b->n: 0, or -1 when out of memory. */
static inline int rv_tbuf_reserve(rv_tbuf *b, int64_t extra) {
    if (extra < 0 || b->n > RV_MAX_ELEMS - extra) return -1;
    return b->n + extra <= b->cap ? 0 : rv_tbuf_grow(b, b->n + extra);
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
    rv_copy_short(b->data + b->n, s, n);
    b->n += n;
    return 0;
}

static inline int rv_tbuf_putc(rv_tbuf *b, char c) {
    if (b->n >= b->cap && rv_tbuf_grow(b, b->n + 1) != 0) return -1;
    b->data[b->n++] = c;
    return 0;
}

#endif
