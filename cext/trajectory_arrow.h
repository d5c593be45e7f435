/* Tool-call arguments from Arrow buffers: the canonical JSON of one call's arguments
 * written straight from its struct column, a call at a time.
 *
 * A plan (rv_taplan) is the arguments' Arrow type as a tree of nodes, one per array:
 * scalars, strings, structs (fields sorted, names quoted once), lists, and "text" nodes
 * for any other type, canonicalised beforehand through its Python values.  Writing call j
 * walks that tree for element j and copies each byte once, where a column at a time would
 * write every field's text, then copy it into its struct's text, and so on up.
 *
 * The output equals respeval._core_py's canonical_args of the value arrow_rows gives: null
 * struct fields left out (Arrow cannot tell them from missing keys), null list elements
 * written as null, bools as 1 and 0, integral floats as integers, other floats by repr,
 * NaN numbered by the caller's counter.  Offsets and UTF-8 are trusted: the caller has
 * run Arrow's full validation on the column. */
#ifndef RESPEVAL_TRAJECTORY_ARROW_H
#define RESPEVAL_TRAJECTORY_ARROW_H

#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "trajectory_json.h"
#include "trajectory_py.h"

enum {
    RV_TA_NULL,    /* the null type: never present */
    RV_TA_INT,     /* values: int64 */
    RV_TA_UINT,    /* values: uint64 */
    RV_TA_FLOAT,   /* values: double */
    RV_TA_BOOL,    /* values: uint8 */
    RV_TA_STRING,  /* off32 or off64 (+ offset), data */
    RV_TA_STRUCT,  /* children: the fields, sorted by name */
    RV_TA_LIST,    /* off32 or off64 (+ offset, - base); one child: the values */
    RV_TA_TEXT     /* off64, data: each element's canonical text, written beforehand */
};

typedef struct {
    int kind;
    const uint8_t *bits;   /* validity bitmap; NULL: every element is valid */
    int64_t bit_offset;
    const void *values;
    const int32_t *off32;
    const int64_t *off64;
    int64_t offset;        /* the array's own offset into off32 / off64 */
    int64_t base;          /* a list's: subtracted from its offsets (its values are sliced) */
    const char *data;
    const char *qname;     /* the quoted field name, when the node is a struct's field */
    int64_t qlen;
    int64_t first_child, nchildren;  /* into rv_taplan.kids */
    int keep_nulls;        /* a struct's null fields written as null, not left out */
} rv_tanode;

typedef struct {
    const rv_tanode *nodes;
    const int64_t *kids;  /* node indices */
    int json;             /* write JSON (json.dumps' values), not the canonical form */
} rv_taplan;

/* "s" as JSON writes it: ", \ and control characters escaped; other bytes (UTF-8
 * already checked) as they are. */
static int rv_tbuf_put_json_string(rv_tbuf *b, const char *s, int64_t n) {
    static const char hex[] = "0123456789abcdef";
    if (rv_tbuf_reserve(b, 6 * n + 2) != 0) return -1;
    char *o = b->data + b->n;
    *o++ = '"';
    for (int64_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            *o++ = '\\';
            *o++ = (char)c;
        } else if (c < 0x20) {
            *o++ = '\\';
            *o++ = 'u';
            *o++ = '0';
            *o++ = '0';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        } else {
            *o++ = (char)c;
        }
    }
    *o++ = '"';
    b->n = o - b->data;
    return 0;
}

/* A float as json.dumps writes it: repr, NaN, Infinity, -Infinity. */
static int rv_ta_json_double(rv_tbuf *o, double d) {
    if (d != d) return rv_tbuf_put(o, "NaN", 3);
    if (d == HUGE_VAL) return rv_tbuf_put(o, "Infinity", 8);
    if (d == -HUGE_VAL) return rv_tbuf_put(o, "-Infinity", 9);
    char *text = PyOS_double_to_string(d, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (!text) return -1;
    int r = rv_tbuf_put(o, text, (int64_t)strlen(text));
    PyMem_Free(text);
    return r;
}

static inline int rv_ta_valid(const rv_tanode *nd, int64_t j) {
    if (nd->kind == RV_TA_NULL) return 0;
    if (!nd->bits) return 1;
    int64_t b = nd->bit_offset + j;
    return (nd->bits[b >> 3] >> (b & 7)) & 1;
}

static inline int64_t rv_ta_off(const rv_tanode *nd, int64_t j) {
    return (nd->off32 ? (int64_t)nd->off32[nd->offset + j] : nd->off64[nd->offset + j]) - nd->base;
}

static inline int rv_ta_utoa(uint64_t u, char *out) {
    char tmp[24];
    int k = 0, n = 0;
    do {
        tmp[k++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    while (k) out[n++] = tmp[--k];
    return n;
}

/* Element j of node i, which the caller knows is valid: 0, or -1 (out of memory, or a
 * Python error set). */
static int rv_ta_write(const rv_taplan *plan, int64_t i, int64_t j, rv_tbuf *o, int64_t *nan_counter) {
    const rv_tanode *nd = &plan->nodes[i];
    char num[24];
    switch (nd->kind) {
    case RV_TA_INT:
        return rv_tbuf_put(o, num, rv_tpy_itoa(((const int64_t *)nd->values)[j], num));
    case RV_TA_UINT:
        return rv_tbuf_put(o, num, rv_ta_utoa(((const uint64_t *)nd->values)[j], num));
    case RV_TA_FLOAT:
        if (plan->json) return rv_ta_json_double(o, ((const double *)nd->values)[j]);
        return rv_tpy_put_double(o, ((const double *)nd->values)[j], nan_counter);
    case RV_TA_BOOL:
        if (plan->json) return ((const uint8_t *)nd->values)[j] ? rv_tbuf_put(o, "true", 4) : rv_tbuf_put(o, "false", 5);
        return rv_tbuf_putc(o, ((const uint8_t *)nd->values)[j] ? '1' : '0');
    case RV_TA_STRING: {
        int64_t a = rv_ta_off(nd, j);
        if (plan->json) return rv_tbuf_put_json_string(o, nd->data + a, rv_ta_off(nd, j + 1) - a);
        return rv_tbuf_put_quoted_words(o, nd->data + a, rv_ta_off(nd, j + 1) - a);
    }
    case RV_TA_TEXT: {
        int64_t a = rv_ta_off(nd, j);
        return rv_tbuf_put(o, nd->data + a, rv_ta_off(nd, j + 1) - a);
    }
    case RV_TA_STRUCT: {
        int first = 1;
        if (rv_tbuf_putc(o, '{') != 0) return -1;
        for (int64_t f = 0; f < nd->nchildren; f++) {
            int64_t c = plan->kids[nd->first_child + f];
            const rv_tanode *field = &plan->nodes[c];
            int valid = rv_ta_valid(field, j);
            if (!valid && !nd->keep_nulls) continue;
            if (!first && rv_tbuf_putc(o, ',') != 0) return -1;
            first = 0;
            if (rv_tbuf_put(o, field->qname, field->qlen) != 0 || rv_tbuf_putc(o, ':') != 0) return -1;
            if ((valid ? rv_ta_write(plan, c, j, o, nan_counter) : rv_tbuf_put(o, "null", 4)) != 0) return -1;
        }
        return rv_tbuf_putc(o, '}');
    }
    case RV_TA_LIST: {
        int64_t c = plan->kids[nd->first_child];
        const rv_tanode *item = &plan->nodes[c];
        int64_t a = rv_ta_off(nd, j), b = rv_ta_off(nd, j + 1);
        if (rv_tbuf_putc(o, '[') != 0) return -1;
        for (int64_t k = a; k < b; k++) {
            if (k > a && rv_tbuf_putc(o, ',') != 0) return -1;
            int r = rv_ta_valid(item, k) ? rv_ta_write(plan, c, k, o, nan_counter) : rv_tbuf_put(o, "null", 4);
            if (r != 0) return -1;
        }
        return rv_tbuf_putc(o, ']');
    }
    default:
        return rv_tbuf_put(o, "null", 4);
    }
}

/* Whether element j of node i holds a value that is not JSON (a text node's element the
 * canonicaliser refused), so the call's row must take the Python path.  ``bad`` is a
 * text node's values; a struct asks its fields, a valid list its elements. */
static int rv_ta_bad(const rv_taplan *plan, int64_t i, int64_t j) {
    const rv_tanode *nd = &plan->nodes[i];
    switch (nd->kind) {
    case RV_TA_TEXT:
        return ((const uint8_t *)nd->values)[j] != 0;
    case RV_TA_STRUCT:
        for (int64_t f = 0; f < nd->nchildren; f++)
            if (rv_ta_bad(plan, plan->kids[nd->first_child + f], j)) return 1;
        return 0;
    case RV_TA_LIST:
        if (!rv_ta_valid(nd, j)) return 0;
        for (int64_t k = rv_ta_off(nd, j), b = rv_ta_off(nd, j + 1); k < b; k++)
            if (rv_ta_bad(plan, plan->kids[nd->first_child], k)) return 1;
        return 0;
    default:
        return 0;
    }
}

#endif
