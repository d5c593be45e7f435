/* The least any reader of a trajectory column must do: visit every object of every row
 * (lists, dicts, their keys and values) and read every string's characters, or, for rows
 * of JSON text, read every byte of the text; nothing is compared, canonicalised or
 * interned.  benchmarks/trajectory_floor.py builds this with the C compiler and times it
 * beside the native reader and the pure-Python twin, on the same rows.  Only exact
 * built-in types are walked (what the workload holds); the sums keep the reads from
 * being optimised away. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

static uint64_t sum_bytes(const unsigned char *d, Py_ssize_t n) {
    uint64_t s = (uint64_t)n, w;
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, d + i, 8);
        s += w;
    }
    for (; i < n; i++) s += d[i];
    return s;
}

static uint64_t visit(PyObject *o) {
    PyTypeObject *t = Py_TYPE(o);
    if (t == &PyUnicode_Type)
        return sum_bytes(PyUnicode_DATA(o), PyUnicode_GET_LENGTH(o) * PyUnicode_KIND(o));
    if (t == &PyList_Type) {
        uint64_t s = 0;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(o); i++) s += visit(PyList_GET_ITEM(o, i));
        return s;
    }
    if (t == &PyDict_Type) {
        uint64_t s = 0;
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        while (PyDict_Next(o, &pos, &k, &v)) s += visit(k) + visit(v);
        return s;
    }
    if (t == &PyLong_Type) return (uint64_t)PyLong_AsLongLong(o);
    if (t == &PyFloat_Type) {
        double x = PyFloat_AS_DOUBLE(o);
        uint64_t u;
        memcpy(&u, &x, 8);
        return u;
    }
    return (uint64_t)(uintptr_t)t;
}

/* touch_objects(rows): every object of every row visited. */
static PyObject *touch_objects(PyObject *self, PyObject *rows) {
    (void)self;
    if (!PyList_CheckExact(rows)) {
        PyErr_SetString(PyExc_TypeError, "rows must be a list");
        return NULL;
    }
    uint64_t s = visit(rows);
    if (PyErr_Occurred()) return NULL;
    return PyLong_FromUnsignedLongLong(s);
}

/* touch_texts(rows): every byte of every row's UTF-8 text read (a str per row). */
static PyObject *touch_texts(PyObject *self, PyObject *rows) {
    (void)self;
    if (!PyList_CheckExact(rows)) {
        PyErr_SetString(PyExc_TypeError, "rows must be a list");
        return NULL;
    }
    uint64_t s = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(rows); i++) {
        Py_ssize_t n;
        const char *p = PyUnicode_AsUTF8AndSize(PyList_GET_ITEM(rows, i), &n);
        if (!p) return NULL;
        s += sum_bytes((const unsigned char *)p, n);
    }
    return PyLong_FromUnsignedLongLong(s);
}

static PyMethodDef methods[] = {
    {"touch_objects", touch_objects, METH_O, "Visit every object of every row."},
    {"touch_texts", touch_texts, METH_O, "Read every byte of every row's text."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "respeval_touch", NULL, -1, methods};

PyMODINIT_FUNC PyInit_respeval_touch(void) { return PyModule_Create(&module); }
