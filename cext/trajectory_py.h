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
 * type: those types are refused), so the borrowed references stay valid throughout;
 * the one exception, the caller's name normaliser between a row's shape and its keys,
 * runs while the caller holds the row's names and arguments (rv_tpy_hold). */
#ifndef RESPEVAL_TRAJECTORY_PY_H
#define RESPEVAL_TRAJECTORY_PY_H

#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pydict.h"
#include "trajectory_json.h"
#include "trajectory_table.h"

typedef struct {
    const char *utf8;
    int64_t n;
    PyObject *value;  /* borrowed */
} rv_tpy_member;

typedef struct {
    rv_tbuf keys;          /* call i's key: keys.data[start[i] : end[i]] */
    int64_t *start, *end;
    const char **name;     /* call i's name, UTF-8 of the str object (borrowed) */
    int64_t *name_n;
    PyObject **args;       /* call i's arguments (borrowed; NULL: absent) */
    PyObject **name_obj;   /* call i's name (borrowed) */
    int64_t ncalls, cap;
    rv_tpy_member *members;  /* a stack of the objects being written, one frame per depth */
    int64_t nmembers, members_cap;
    /* rv_tpy_memo_row's, per call: the fingerprint fp.data[fp_start[i] : fp_end[i]] (fp_end[i]
     * < 0: none), its hash, and what the memo gave */
    rv_tbuf fp;
    int64_t *fp_start, *fp_end;
    uint64_t *fp_hash, *memo;
} rv_tpy;

static inline void rv_tpy_free(rv_tpy *t) {
    free(t->keys.data); free(t->start); free(t->end); free((void *)t->name); free(t->name_n); free(t->args); free(t->members);
    free(t->name_obj);
    free(t->fp.data); free(t->fp_start); free(t->fp_end); free(t->fp_hash); free(t->memo);
    memset(t, 0, sizeof(*t));
}

static int rv_tpy_reserve_calls(rv_tpy *t, int64_t n) {
    if (n <= t->cap) return 0;
    void **arrays[10] = {(void **)&t->start,    (void **)&t->end,      (void **)&t->name,     (void **)&t->name_n,
                         (void **)&t->args,     (void **)&t->name_obj, (void **)&t->fp_start, (void **)&t->fp_end,
                         (void **)&t->fp_hash,  (void **)&t->memo};
    const size_t elem[10] = {sizeof(int64_t),    sizeof(int64_t),    sizeof(const char *), sizeof(int64_t),
                             sizeof(PyObject *), sizeof(PyObject *), sizeof(int64_t),      sizeof(int64_t),
                             sizeof(uint64_t),   sizeof(uint64_t)};
    return rv_grow_parallel(arrays, elem, 10, &t->cap, n);
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
    Py_ssize_t size = PyDict_GET_SIZE(v);
    PyObject *key, *value;
    rv_dict_iter it;
    int64_t base = t->nmembers, i = 0;
    if (rv_grow((void **)&t->members, &t->members_cap, base + size, sizeof(rv_tpy_member))) return -1;
    rv_dict_iter_init(&it, v);
    while (rv_dict_iter_next(&it, &key, &value)) {
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
        t->name_obj[i] = name;
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

/* Takes (hold 1) or gives back (hold 0) a reference to each call's name and arguments:
 * the caller holds them while the name normaliser, Python code, runs between the row's
 * shape and its keys, so that a normaliser that changes the row cannot free what the
 * pointers read. */
static inline void rv_tpy_hold(rv_tpy *t, int hold) {
    for (int64_t i = 0; i < t->ncalls; i++) {
        if (hold) {
            Py_INCREF(t->name_obj[i]);
            Py_XINCREF(t->args[i]);
        } else {
            Py_DECREF(t->name_obj[i]);
            Py_XDECREF(t->args[i]);
        }
    }
}

/* ------------------------------------------------------------------------------------
 * The memo for calls read from Python objects.  Rows of dicts repeat calls as JSON text
 * does (a task's reference in every trial, predictions that copy it), but as fresh
 * objects: json.loads or the caller built each row anew.  So a call is remembered in the
 * CallTable's memo (the JSON reader's) under its fingerprint: its name and arguments as
 * they are in memory, in iteration order, each value tagged with its exact type, each
 * string, list and dict with its length, each string's code units as Python stores them.
 * The encoding is prefix-free, so equal fingerprints mean the same types and values key
 * for key, in the same order, which canonicalise to the same key: a hit gives the ids a
 * full read gives.  Arguments in another key order are another fingerprint (the memo
 * maps both to the same ids): the fingerprint is written without sorting or quoting,
 * which is what makes it cheaper than the key.  A fingerprint starts with a 0 byte,
 * which no JSON call text does, so the two kinds of entries never meet.  A NaN has no
 * fingerprint (each NaN is another call); whatever the full read refuses never reaches
 * the memo, as only calls read in full are remembered.
 */

/* Room for n more bytes, and RV_TPY_FP_SLACK beyond them: 0, or -1 (no memory). */
#define RV_TPY_FP_SLACK 16
static inline int rv_tpy_fp_room(rv_tbuf *o, int64_t n) {
    return (o->n + n + RV_TPY_FP_SLACK <= o->cap || rv_tbuf_reserve(o, n + RV_TPY_FP_SLACK) == 0) ? 0 : -1;
}

/* A tag and a count (room for 6 bytes assured): the count in one byte below 255, else
 * 255 and four bytes. */
static inline void rv_tpy_fp_count(rv_tbuf *o, char tag, uint32_t count) {
    char *w = o->data + o->n;
    w[0] = tag;
    if (count < 255) {
        w[1] = (char)count;
        o->n += 2;
    } else {
        w[1] = (char)255;
        memcpy(w + 2, &count, 4);
        o->n += 6;
    }
}

/* A str: its kind (1, 2 or 4 bytes a code unit), its length and its code units.  (One
 * text stored in two kinds would only be two fingerprints for one call.) */
static inline int rv_tpy_fp_str(rv_tbuf *o, PyObject *s) {
    const void *data;
    int64_t len, kind;
    if (PyUnicode_IS_COMPACT_ASCII(s)) {
        data = ((PyASCIIObject *)s) + 1;
        len = ((PyASCIIObject *)s)->length;
        kind = 1;
    } else {
#if PY_VERSION_HEX < 0x030C0000
        if (!PyUnicode_IS_READY(s)) return 0;
#endif
        data = PyUnicode_DATA(s);
        len = (int64_t)PyUnicode_GET_LENGTH(s);
        kind = (int64_t)PyUnicode_KIND(s);
    }
    if (len > INT32_MAX) return 0;
    if (rv_tpy_fp_room(o, 6 + len * kind) != 0) return -1;
    rv_tpy_fp_count(o, (char)kind, (uint32_t)len);
    rv_copy_short(o->data + o->n, (const char *)data, len * kind);
    o->n += len * kind;
    return 1;
}

static int rv_tpy_fp_value(rv_tbuf *o, PyObject *v, int depth, int max_depth);

/* A value that is most often a str. */
static inline int rv_tpy_fp_item(rv_tbuf *o, PyObject *v, int depth, int max_depth) {
    return PyUnicode_CheckExact(v) ? rv_tpy_fp_str(o, v) : rv_tpy_fp_value(o, v, depth, max_depth);
}

/* 1 written, 0 no fingerprint, -1 no memory. */
static int rv_tpy_fp_value(rv_tbuf *o, PyObject *v, int depth, int max_depth) {
    PyTypeObject *tp = Py_TYPE(v);
    if (tp == &PyUnicode_Type) return rv_tpy_fp_str(o, v);
    if (rv_tpy_fp_room(o, 9) != 0) return -1;
    char *w = o->data + o->n;
    if (v == Py_None || v == Py_True || v == Py_False) {
        w[0] = v == Py_None ? 'N' : v == Py_True ? 'T' : 'F';
        o->n += 1;
        return 1;
    }
    if (tp == &PyLong_Type) {
        int overflow = 0;
        long long ll = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || (ll == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 0;
        }
        w[0] = 'i';
        memcpy(w + 1, &ll, 8);
        o->n += 9;
        return 1;
    }
    if (tp == &PyFloat_Type) {
        double d = PyFloat_AS_DOUBLE(v);
        if (d != d) return 0;
        w[0] = 'f';
        memcpy(w + 1, &d, 8);
        o->n += 9;
        return 1;
    }
    if (depth >= max_depth) return 0;
    if (tp == &PyDict_Type) {
        rv_dict_iter it;
        PyObject *key, *value;
        Py_ssize_t n = PyDict_GET_SIZE(v);
        if (n > INT32_MAX) return 0;
        rv_tpy_fp_count(o, '{', (uint32_t)n);
        rv_dict_iter_init(&it, v);
        while (rv_dict_iter_next(&it, &key, &value)) {
            if (!PyUnicode_CheckExact(key)) return 0;
            int r = rv_tpy_fp_str(o, key);
            if (r == 1) r = rv_tpy_fp_item(o, value, depth + 1, max_depth);
            if (r != 1) return r;
        }
        return 1;
    }
    if (tp == &PyList_Type || tp == &PyTuple_Type) {
        /* lists and tuples canonicalise alike */
        PyObject **items = tp == &PyList_Type ? ((PyListObject *)v)->ob_item : ((PyTupleObject *)v)->ob_item;
        Py_ssize_t n = Py_SIZE(v);
        if (n > INT32_MAX) return 0;
        rv_tpy_fp_count(o, '[', (uint32_t)n);
        for (Py_ssize_t i = 0; i < n; i++) {
            int r = rv_tpy_fp_item(o, items[i], depth + 1, max_depth);
            if (r != 1) return r;
        }
        return 1;
    }
    return 0;
}

/* The hash of a fingerprint fp[0:n] (RV_TPY_FP_SLACK readable bytes after it): from 64
 * bytes on rv_tj_buf_hash, a block a step; below, 16-byte blocks folded into two 64-bit
 * lanes, the last block read in place and masked rather than copied, which costs less
 * there than rv_tj_buf_hash's final mixing.  A fingerprint and a call text never have
 * the same bytes (a fingerprint starts with byte 0), so their hashes need not agree. */
static inline void rv_tpy_fold(uint64_t *a, uint64_t *b, uint64_t lo, uint64_t hi) {
    *a = (*a ^ lo) * 0xBF58476D1CE4E5B9ULL;
    *a ^= *a >> 29;
    *b = (*b ^ hi) * 0x94D049BB133111EBULL;
    *b ^= *b >> 31;
}

static inline uint64_t rv_tpy_fp_hash(const char *s, int64_t len) {
    if (len >= 64) return rv_tj_buf_hash(s, len);
    uint64_t a = 0x9E3779B97F4A7C15ULL, b = 0xC2B2AE3D27D4EB4FULL, lo, hi;
    int64_t k = 0;
    for (; k + 16 <= len; k += 16) {
        memcpy(&lo, s + k, 8);
        memcpy(&hi, s + k + 8, 8);
        rv_tpy_fold(&a, &b, lo, hi);
    }
    int64_t rest = len - k;
    if (rest) {
        memcpy(&lo, s + k, 8);
        memcpy(&hi, s + k + 8, 8);
        if (rest < 8) {
            lo &= (~0ULL) >> (64 - 8 * rest);
            hi = 0;
        } else if (rest < 16) {
            hi &= rest == 8 ? 0 : (~0ULL) >> (128 - 8 * rest);
        }
        rv_tpy_fold(&a, &b, lo, hi);
    }
    uint64_t h = a ^ ((b << 23) | (b >> 41)) ^ ((uint64_t)len * 0xD6E8FEB86659FD93ULL);
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93ULL;
    h ^= h >> 29;
    return h;
}

/* Whether str key (a dict's key: its hash is cached) is the str `want` (hash `want_hash`). */
static inline int rv_tpy_key_is(PyObject *key, PyObject *want, Py_hash_t want_hash) {
    if (key == want) return 1;
    if (((PyASCIIObject *)key)->hash != want_hash) return 0;
#if PY_VERSION_HEX < 0x030C0000
    if (!PyUnicode_IS_READY(key)) return 0;
#endif
    Py_ssize_t n = PyUnicode_GET_LENGTH(key);
    return n == PyUnicode_GET_LENGTH(want) && PyUnicode_KIND(key) == PyUnicode_KIND(want) &&
           memcmp(PyUnicode_DATA(key), PyUnicode_DATA(want), (size_t)(n * PyUnicode_KIND(want))) == 0;
}

/* One row, as rv_tpy_shape reads it, and what the memo knows of its calls.  The row's
 * shape, read in one pass over each call's entries (so without a lookup per key, which
 * is what PyDict_GetItem would cost): 0 if it is not the common one (a call that is not
 * an exact dict with exact str keys, an exact str name, and arguments that are an exact
 * dict, None or absent when allowed): rv_tpy_shape then decides.  Then each call's
 * fingerprint (a 0 byte, the name's UTF-8, the arguments or 'A' if absent) and its hash,
 * its memo slot prefetched, and what the memo gives for it (t->memo[i];
 * RV_TRAJ_MEMO_MISS, with fp_end[i] = -1 if the call has no fingerprint).
 * name_key and args_key are exact str with their hashes computed.  1, or -1 (no memory). */
static int rv_tpy_memo_row(rv_tpy *t, PyObject *row, PyObject *name_key, PyObject *args_key, int args_required,
                           const rv_traj_memo *memo, int max_depth, int64_t *misses) {
    const rv_traj_table *m = &memo->raw;
    uint64_t mask = (uint64_t)m->nslots - 1;
    Py_hash_t name_hash = ((PyASCIIObject *)name_key)->hash, args_hash = ((PyASCIIObject *)args_key)->hash;
    Py_ssize_t n = PyList_GET_SIZE(row);
    PyObject *name_seen = NULL, *args_seen = NULL;  /* key objects met in this row */
    t->ncalls = 0;
    if (n > INT32_MAX) return 0;
    if (rv_tpy_reserve_calls(t, n) != 0) return -1;
    t->fp.n = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *call = PyList_GET_ITEM(row, i), *key, *value, *name = NULL, *args = NULL;
        rv_dict_iter it;
        if (!PyDict_CheckExact(call)) return 0;
        rv_dict_iter_init(&it, call);
        while (rv_dict_iter_next(&it, &key, &value)) {
            if (!PyUnicode_CheckExact(key)) return 0;
            /* json.loads gives a row's calls the same key objects: compared once a row */
            if (key == name_seen || (key != args_seen && rv_tpy_key_is(key, name_key, name_hash))) {
                name = value;
                name_seen = key;
            } else if (key == args_seen || rv_tpy_key_is(key, args_key, args_hash)) {
                args = value;
                args_seen = key;
            }
        }
        if (!name || !PyUnicode_CheckExact(name) || !rv_tpy_utf8(name, &t->name[i], &t->name_n[i])) return 0;
        t->name_obj[i] = name;
        if (args ? args != Py_None && !PyDict_CheckExact(args) : args_required) return 0;
        t->args[i] = args;
        int64_t at = t->fp.n;
        if (t->name_n[i] > INT32_MAX) return 0;
        if (rv_tpy_fp_room(&t->fp, 8 + t->name_n[i]) != 0) return -1;
        rv_tpy_fp_count(&t->fp, 0, (uint32_t)t->name_n[i]);
        rv_copy_short(t->fp.data + t->fp.n, t->name[i], t->name_n[i]);
        t->fp.n += t->name_n[i];
        int r = 1;
        if (!args) {
            t->fp.data[t->fp.n++] = 'A';
        } else {
            r = rv_tpy_fp_value(&t->fp, args, 0, max_depth);
        }
        if (r < 0) return -1;
        t->fp_start[i] = at;
        if (r == 0) {
            t->fp.n = at;
            t->fp_end[i] = -1;
            continue;
        }
        t->fp_end[i] = t->fp.n;
        t->fp_hash[i] = rv_tpy_fp_hash(t->fp.data + at, t->fp.n - at);
#if defined(__GNUC__)
        __builtin_prefetch(&m->slots[t->fp_hash[i] & mask]);
#endif
    }
    t->ncalls = n;
    *misses = 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t v = RV_TRAJ_MEMO_MISS;
        if (t->fp_end[i] >= 0)
            v = rv_traj_memo_find(memo, t->fp.data + t->fp_start[i], t->fp_end[i] - t->fp_start[i], t->fp_hash[i]);
        t->memo[i] = v;
        *misses += v == RV_TRAJ_MEMO_MISS;
    }
    return 1;
}

#endif
