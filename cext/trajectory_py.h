/* Tool calls from Python objects: a row given as a list of dicts (what a library caller
 * passes, or json.loads gives) read into call keys without a Python-level step.
 *
 * A call's key is 4 bytes for its name id, then the canonical JSON of its arguments, as
 * respeval._core_py's canonical_args writes it.  rv_tpy_shape takes one row's names and
 * arguments, the caller's name normaliser says which calls stay, rv_tpy_keys writes
 * their keys with the name-id bytes left for the caller to fill, and the caller interns
 * the names and then the keys, together (rv_traj_table_add_many).
 *
 * Only exact built-in types are read here: list, tuple, dict, str, int, float, bool and
 * None.  Anything else (subclasses, mappings that are not dicts, big integers, strings
 * with lone surrogates, nesting past the depth limit) gives 0: the caller reads the row
 * through its Python path instead, which knows every rule and every error message.  Such
 * a row commits nothing here, so the Python path starts from the same state (the NaN
 * counter is put back).
 *
 * No Python code runs while a row is read (no __eq__, __hash__ or __repr__ of a user
 * type: those types are refused), so the borrowed references stay valid throughout. */
#ifndef RESPEVAL_TRAJECTORY_PY_H
#define RESPEVAL_TRAJECTORY_PY_H

#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "trajectory.h"

typedef struct {
    const char *utf8;
    int64_t n;
    PyObject *value;  /* borrowed */
} rv_tpy_member;

typedef struct {
    rv_tbuf keys;          /* call i's key: keys.d[start[i] : end[i]] */
    int64_t *start, *end;
    const char **name;     /* call i's name, UTF-8 of the str object (borrowed) */
    int64_t *name_n;
    PyObject **args;       /* call i's arguments (borrowed; NULL: absent) */
    int64_t ncalls, cap;
    rv_tpy_member *members;  /* a stack of the objects being written, one frame per depth */
    int64_t nmembers, members_cap;
} rv_tpy;

static inline void rv_tpy_free(rv_tpy *t) {
    free(t->keys.d); free(t->start); free(t->end); free((void *)t->name); free(t->name_n); free(t->args); free(t->members);
    memset(t, 0, sizeof(*t));
}

#define RV_TPY_GROW(field, type, cap)                                         \
    do {                                                                      \
        type *g_ = (type *)realloc((void *)(field), sizeof(type) * (size_t)(cap)); \
        if (!g_) return -1;                                                   \
        (field) = g_;                                                         \
    } while (0)

static int rv_tpy_reserve_calls(rv_tpy *t, int64_t n) {
    if (n <= t->cap) return 0;
    int64_t cap = t->cap ? t->cap : 16;
    while (cap < n) cap *= 2;
    RV_TPY_GROW(t->start, int64_t, cap);
    RV_TPY_GROW(t->end, int64_t, cap);
    RV_TPY_GROW(t->name, const char *, cap);
    RV_TPY_GROW(t->name_n, int64_t, cap);
    RV_TPY_GROW(t->args, PyObject *, cap);
    t->cap = cap;
    return 0;
}

/* Decimal text of v into out (at least 20 bytes); its length. */
static inline int rv_tpy_itoa(long long v, char *out) {
    char tmp[24];
    int k = 0, n = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[k++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    if (v < 0) out[n++] = '-';
    while (k) out[n++] = tmp[--k];
    return n;
}

/* The canonical form of a float: integral values as integers, others by repr (NaN
 * numbered by the counter): 0, or -1 (out of memory, or a Python error set). */
static int rv_tpy_put_double(rv_tbuf *o, double d, int64_t *nan_counter) {
    char num[40];
    if (d != d) {
        nan_counter[0] += 1;
        int k = snprintf(num, sizeof num, "NaN#%lld", (long long)nan_counter[0]);
        return rv_tbuf_put(o, num, k);
    }
    if (d == HUGE_VAL) return rv_tbuf_put(o, "Infinity", 8);
    if (d == -HUGE_VAL) return rv_tbuf_put(o, "-Infinity", 9);
    if (d == floor(d)) {
        if (-9.0e18 < d && d < 9.0e18) return rv_tbuf_put(o, num, rv_tpy_itoa((long long)d, num));
        /* str(int(d)) */
        PyObject *as_int = PyLong_FromDouble(d), *text = as_int ? PyObject_Str(as_int) : NULL;
        Py_XDECREF(as_int);
        if (!text) return -1;
        Py_ssize_t n;
        const char *p = PyUnicode_AsUTF8AndSize(text, &n);
        int r = p ? rv_tbuf_put(o, p, (int64_t)n) : -1;
        Py_DECREF(text);
        return r;
    }
    char *text = PyOS_double_to_string(d, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (!text) return -1;
    int r = rv_tbuf_put(o, text, (int64_t)strlen(text));
    PyMem_Free(text);
    return r;
}

/* 1: the UTF-8 of str s; 0: it has lone surrogates (the Python path's business).  An
 * ASCII string is its own UTF-8, read in place. */
static inline int rv_tpy_utf8(PyObject *s, const char **p, int64_t *n) {
    if (PyUnicode_IS_COMPACT_ASCII(s)) {
        *p = (const char *)(((PyASCIIObject *)s) + 1);
        *n = (int64_t)PyUnicode_GET_LENGTH(s);
        return 1;
    }
    Py_ssize_t len;
    const char *u = PyUnicode_AsUTF8AndSize(s, &len);
    if (!u) {
        PyErr_Clear();
        return 0;
    }
    *p = u;
    *n = (int64_t)len;
    return 1;
}

static int rv_tpy_value(rv_tpy *t, PyObject *v, int depth, int max_depth, int64_t *nan_counter);

static inline uint64_t rv_tpy_big_endian(uint64_t x) {
#if defined(__GNUC__)
    return __builtin_bswap64(x);
#else
    uint64_t r = 0;
    for (int k = 0; k < 8; k++) r = (r << 8) | ((x >> (8 * k)) & 0xff);
    return r;
#endif
}

/* Byte order of two keys (keys are short: compared here, 8 bytes a step, not by memcmp). */
static inline int rv_tpy_member_less(const rv_tpy_member *a, const rv_tpy_member *b) {
    int64_t m = a->n < b->n ? a->n : b->n, i = 0;
    for (; i + 8 <= m; i += 8) {
        uint64_t x, y;
        memcpy(&x, a->utf8 + i, 8);
        memcpy(&y, b->utf8 + i, 8);
        if (x != y) return rv_tpy_big_endian(x) < rv_tpy_big_endian(y);
    }
    for (; i < m; i++)
        if (a->utf8[i] != b->utf8[i]) return (unsigned char)a->utf8[i] < (unsigned char)b->utf8[i];
    return a->n < b->n;
}

/* {"k":v,...} with keys in code point order (UTF-8 byte order is code point order). */
static int rv_tpy_dict(rv_tpy *t, PyObject *v, int depth, int max_depth, int64_t *nan_counter) {
    Py_ssize_t pos = 0, size = PyDict_GET_SIZE(v);
    PyObject *key, *value;
    int64_t base = t->nmembers, i = 0;
    if (base + size > t->members_cap) {
        int64_t cap = t->members_cap ? t->members_cap : 64;
        while (cap < base + size) cap *= 2;
        RV_TPY_GROW(t->members, rv_tpy_member, cap);
        t->members_cap = cap;
    }
    while (PyDict_Next(v, &pos, &key, &value)) {
        rv_tpy_member m;
        if (!PyUnicode_CheckExact(key) || !rv_tpy_utf8(key, &m.utf8, &m.n)) return 0;
        m.value = value;
        int64_t j = i;
        while (j > 0 && rv_tpy_member_less(&m, &t->members[base + j - 1])) {
            t->members[base + j] = t->members[base + j - 1];
            j--;
        }
        t->members[base + j] = m;
        i++;
    }
    t->nmembers = base + i;
    int r = 1;
    if (rv_tbuf_putc(&t->keys, '{') != 0) return -1;
    for (int64_t k = 0; k < i && r == 1; k++) {
        /* re-read the frame each time: a nested object may have moved the stack */
        const rv_tpy_member *m = &t->members[base + k];
        if ((k && rv_tbuf_putc(&t->keys, ',') != 0) || rv_tbuf_put_quoted_words(&t->keys, m->utf8, m->n) != 0 ||
            rv_tbuf_putc(&t->keys, ':') != 0)
            return -1;
        r = rv_tpy_value(t, t->members[base + k].value, depth + 1, max_depth, nan_counter);
    }
    t->nmembers = base;
    if (r != 1) return r;
    return rv_tbuf_putc(&t->keys, '}') != 0 ? -1 : 1;
}

static int rv_tpy_value(rv_tpy *t, PyObject *v, int depth, int max_depth, int64_t *nan_counter) {
    rv_tbuf *o = &t->keys;
    char num[32];
    if (depth > max_depth) return 0;
    if (v == Py_None) return rv_tbuf_put(o, "null", 4) != 0 ? -1 : 1;
    if (v == Py_True) return rv_tbuf_putc(o, '1') != 0 ? -1 : 1;
    if (v == Py_False) return rv_tbuf_putc(o, '0') != 0 ? -1 : 1;
    if (PyUnicode_CheckExact(v)) {
        const char *p;
        int64_t n;
        if (!rv_tpy_utf8(v, &p, &n)) return 0;
        return rv_tbuf_put_quoted_words(o, p, n) != 0 ? -1 : 1;
    }
    if (PyLong_CheckExact(v)) {
        int overflow = 0;
        long long ll = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || (ll == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 0;  /* str(int(v)) of a big integer: the Python path */
        }
        return rv_tbuf_put(o, num, rv_tpy_itoa(ll, num)) != 0 ? -1 : 1;
    }
    if (PyFloat_CheckExact(v)) return rv_tpy_put_double(o, PyFloat_AS_DOUBLE(v), nan_counter) != 0 ? -1 : 1;
    if (PyList_CheckExact(v) || PyTuple_CheckExact(v)) {
        int is_list = PyList_CheckExact(v);
        Py_ssize_t n = is_list ? PyList_GET_SIZE(v) : PyTuple_GET_SIZE(v);
        if (rv_tbuf_putc(o, '[') != 0) return -1;
        for (Py_ssize_t i = 0; i < n; i++) {
            if (i && rv_tbuf_putc(&t->keys, ',') != 0) return -1;
            int r = rv_tpy_value(t, is_list ? PyList_GET_ITEM(v, i) : PyTuple_GET_ITEM(v, i), depth + 1, max_depth,
                                 nan_counter);
            if (r != 1) return r;
        }
        return rv_tbuf_putc(&t->keys, ']') != 0 ? -1 : 1;
    }
    if (PyDict_CheckExact(v)) return rv_tpy_dict(t, v, depth, max_depth, nan_counter);
    return 0;
}

/* A row's shape (an exact list of exact dicts, each with an exact str under name_key and
 * an exact dict, or None when args are not required, under args_key): 1 read, the names
 * and arguments of its t->ncalls calls taken; 0 leave the row to the Python path; -1 out
 * of memory.  Nothing is canonicalised yet: the caller first asks its name normaliser
 * which calls it keeps (a dropped call's arguments are never read, as in the twin). */
static int rv_tpy_shape(rv_tpy *t, PyObject *row, PyObject *name_key, PyObject *args_key, int args_required) {
    Py_ssize_t n = PyList_GET_SIZE(row);
    t->ncalls = 0;
    if (n > INT32_MAX) return 0;
    if (rv_tpy_reserve_calls(t, n) != 0) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *call = PyList_GET_ITEM(row, i), *name, *args;
        if (!PyDict_CheckExact(call)) return 0;
        name = PyDict_GetItemWithError(call, name_key);
        if (!name || !PyUnicode_CheckExact(name) || !rv_tpy_utf8(name, &t->name[i], &t->name_n[i])) {
            PyErr_Clear();
            return 0;
        }
        args = t->args[i] = PyDict_GetItemWithError(call, args_key);
        if (!args) {
            if (PyErr_Occurred() || args_required) {
                PyErr_Clear();
                return 0;
            }
        } else if (args != Py_None && !PyDict_CheckExact(args)) {
            return 0;
        }
    }
    t->ncalls = n;
    return 1;
}

/* The keys of the first `upto` calls that keep[i] says are kept (keep NULL: all), each
 * with 4 bytes left at its front for its name id: 1 done; 0 leave the row to the Python
 * path (the NaN counter put back); -1 out of memory. */
static int rv_tpy_keys(rv_tpy *t, const uint8_t *keep, int64_t upto, int max_depth, int64_t *nan_counter) {
    int64_t nan_was = *nan_counter;
    t->keys.n = 0;
    t->nmembers = 0;
    for (int64_t i = 0; i < upto; i++) {
        PyObject *args = t->args[i];
        if (keep && !keep[i]) continue;
        if (rv_tbuf_reserve(&t->keys, 4) != 0) return -1;
        t->start[i] = t->keys.n;
        t->keys.n += 4;
        int r = args ? rv_tpy_value(t, args, 0, max_depth, nan_counter) : (rv_tbuf_put(&t->keys, "null", 4) ? -1 : 1);
        if (r != 1) {
            *nan_counter = nan_was;
            return r;
        }
        t->end[i] = t->keys.n;
    }
    return 1;
}

#endif
