/* A dict's entries in iteration order, as PyDict_Next gives them, read from the dict's
 * own table where the interpreter's layout is known (CPython 3.11, 3.12 and 3.13 with the
 * GIL), through PyDict_Next elsewhere.
 *
 * Why: the tool-call readers visit every dict of every row (calls and their arguments,
 * a few entries each), and PyDict_Next costs a call and its checks per entry: reading
 * tau-bench-shaped rows of dicts takes 11% less time on 3.11, 10% on 3.12 and 6% on 3.13
 * with the direct reading (benchmarks/ab_pydict.py; cext/README.md).
 *
 * Only exact dicts with a combined table are read directly (a split table, an instance's
 * __dict__, goes through PyDict_Next).  The layout below is Include/internal/pycore_dict.h's
 * struct _dictkeysobject, which an extension cannot include; it is the same in 3.11, 3.12
 * and 3.13 (3.13's free-threaded build adds a lock and changes who may write a table, so
 * it is excluded, as are 3.14 and later, whose layout this file does not know).  The
 * module compares both ways of reading on dicts of every kind when it loads and turns the
 * direct reading off if they ever differ.  Nothing here runs Python code or changes a
 * dict, and the GIL is held throughout, so the table cannot change under the reader. */
#ifndef RESPEVAL_PYDICT_H
#define RESPEVAL_PYDICT_H

#include <Python.h>
#include <stdint.h>

#if PY_VERSION_HEX >= 0x030B00F0 && PY_VERSION_HEX < 0x030E0000 && !defined(Py_LIMITED_API) && !defined(Py_GIL_DISABLED)
#define RV_DICT_DIRECT 1
typedef struct {
    Py_ssize_t dk_refcnt;
    uint8_t dk_log2_size;
    uint8_t dk_log2_index_bytes;
    uint8_t dk_kind; /* 0 general (hash, key, value entries), 1 str keys (key, value), 2 split */
    uint32_t dk_version;
    Py_ssize_t dk_usable;
    Py_ssize_t dk_nentries;
    char dk_indices[];
} rv_dict_keys;
#else
#define RV_DICT_DIRECT 0
#endif

static int rv_dict_direct_ok = RV_DICT_DIRECT; /* 0 once a self-check has disagreed */
static int rv_dict_direct_on = RV_DICT_DIRECT;

typedef struct {
    PyObject *dict;
    PyObject **entry; /* direct: the next entry's key slot; its value follows */
    PyObject **end;
    int stride;       /* direct: pointers from one entry to the next */
    Py_ssize_t pos;   /* otherwise: PyDict_Next's position */
} rv_dict_iter;

static inline void rv_dict_iter_init(rv_dict_iter *it, PyObject *d) {
    it->dict = d;
    it->pos = 0;
    it->entry = it->end = NULL;
    it->stride = 0;
#if RV_DICT_DIRECT
    PyDictObject *mp = (PyDictObject *)d;
    if (rv_dict_direct_on && PyDict_CheckExact(d) && mp->ma_values == NULL) {
        const rv_dict_keys *k = (const rv_dict_keys *)mp->ma_keys;
        if (k->dk_kind == 0 || k->dk_kind == 1) {
            char *entries = (char *)k->dk_indices + ((size_t)1 << k->dk_log2_index_bytes);
            it->stride = k->dk_kind == 0 ? 3 : 2;
            /* a general entry is (hash, key, value): start at its key */
            it->entry = (PyObject **)entries + (k->dk_kind == 0 ? 1 : 0);
            it->end = it->entry + it->stride * k->dk_nentries;
        }
    }
#endif
}

/* The next (key, value), borrowed: 1, or 0 at the end. */
static inline int rv_dict_iter_next(rv_dict_iter *it, PyObject **key, PyObject **value) {
    if (it->stride) {
        while (it->entry < it->end) {
            PyObject **e = it->entry;
            it->entry += it->stride;
            if (e[1]) {
                *key = e[0];
                *value = e[1];
                return 1;
            }
        }
        return 0;
    }
    return PyDict_Next(it->dict, &it->pos, key, value);
}

/* Whether rv_dict_iter reads exact dict d as PyDict_Next does (the module checks this on
 * dicts of every kind when it loads, and calls rv_dict_direct_off if one disagrees). */
static int rv_dict_iter_agrees(PyObject *d) {
    PyObject *k1, *v1, *k2, *v2;
    rv_dict_iter it;
    Py_ssize_t pos = 0;
    int more;
    rv_dict_iter_init(&it, d);
    do {
        more = PyDict_Next(d, &pos, &k1, &v1);
        if (more != rv_dict_iter_next(&it, &k2, &v2) || (more && (k1 != k2 || v1 != v2))) return 0;
    } while (more);
    return 1;
}

static inline void rv_dict_direct_off(void) { rv_dict_direct_ok = rv_dict_direct_on = 0; }
static inline int rv_dict_direct(void) { return rv_dict_direct_on; }
/* For the A/B benchmark (benchmarks/ab_pydict.py): the direct reading on or off, where it
 * is compiled in and the self-check passed; the new state. */
static inline int rv_dict_direct_set(int on) { return rv_dict_direct_on = on && rv_dict_direct_ok; }

#endif
