# Trajectory kernels: interning tool calls, per-row trajectory statistics, name alignments.
# Included from _core.pyx.  Twin: src/respeval/_core_py/trajectory.py (same names, same
# results; its docstrings are the reference).  Every entry point checks lengths and
# offsets before the C kernels (cext/trajectory_rows.h) run without checks; the readers
# are trajectory_table.h, trajectory_json.h, trajectory_py.h and trajectory_arrow.h.

from cpython.dict cimport PyDict_Check, PyDict_GetItem
from cpython.float cimport PyFloat_AS_DOUBLE, PyFloat_Check
from cpython.list cimport PyList_Check, PyList_CheckExact, PyList_GET_ITEM, PyList_GET_SIZE
from cpython.long cimport PyLong_Check
from cpython.exc cimport PyErr_Occurred
from cpython.unicode cimport PyUnicode_DecodeUTF8
from cpython.object cimport PyObject
from cpython.tuple cimport PyTuple_Check, PyTuple_GET_ITEM, PyTuple_GET_SIZE
from libc.math cimport floor, isinf
from libc.stdio cimport snprintf
from libc.string cimport memcmp, memset, strlen

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object o, Py_ssize_t* size) except? NULL
    long long PyLong_AsLongLongAndOverflow(object o, int* overflow) except? -1
    int PyDict_Next(object p, Py_ssize_t* ppos, PyObject** pkey, PyObject** pvalue)
    Py_ssize_t PyDict_GET_SIZE(object p)
    int PyDict_Contains(object p, object key) except -1
    PyObject* PyDict_GetItemWithError(object p, object key) except? NULL

cdef struct _TrajKey:
    const char* utf8
    Py_ssize_t n
    PyObject* value


cdef inline bint _traj_key_less(_TrajKey* a, _TrajKey* b) noexcept nogil:
    """UTF-8 byte order is code point order, which is how Python sorts str keys."""
    cdef Py_ssize_t m = a.n if a.n < b.n else b.n
    cdef int c = memcmp(a.utf8, b.utf8, m)
    if c != 0:
        return c < 0
    return a.n < b.n

cdef extern from "buffer.h":
    # the text buffer (RV_BUF(char)) and buffer.h's growth, which every array here uses
    ctypedef struct rv_tbuf:
        char* data
        int64_t n
        int64_t cap
    int rv_tbuf_put(rv_tbuf* b, const char* s, int64_t n) noexcept
    int rv_grow(void** p, int64_t* cap, int64_t need, size_t elem) noexcept
    int rv_grow_parallel(void** const* ps, const size_t* elem, int k, int64_t* cap, int64_t need) noexcept

cdef extern from "json_scan.h":
    int rv_json_utf8_valid(const unsigned char* s, int64_t n) noexcept

cdef extern from "trajectory_table.h":
    ctypedef struct rv_traj_table:
        char* arena
        int64_t* start
        int32_t n
    int rv_traj_table_init(rv_traj_table* t) noexcept
    void rv_traj_table_free(rv_traj_table* t) noexcept
    int rv_traj_table_init_spare(rv_traj_table* t) noexcept
    void rv_prefetch_bytes(const char* p, int64_t n) noexcept
    int64_t RV_PREFETCH_ROW_BYTES
    Py_ssize_t RV_PREFETCH_ROWS_AHEAD
    void rv_traj_table_release(rv_traj_table* t) noexcept
    int32_t rv_traj_table_add(rv_traj_table* t, const char* s, int64_t n) noexcept
    int32_t rv_traj_table_find(const rv_traj_table* t, const char* s, int64_t n) noexcept
    int rv_traj_table_add_many(rv_traj_table* t, const char* base, const int64_t* start, const int64_t* end,
                               int64_t k, uint64_t* hashes, int32_t* out) noexcept
    ctypedef struct rv_traj_memo:
        rv_traj_table raw
    uint64_t RV_TRAJ_MEMO_MISS
    int rv_traj_memo_init(rv_traj_memo* m) noexcept
    void rv_traj_memo_free(rv_traj_memo* m) noexcept
    int rv_traj_memo_add(rv_traj_memo* m, const char* s, int64_t n, uint64_t h, uint64_t v) noexcept
    uint64_t rv_traj_memo_pack(int32_t name_id, int32_t call_id) noexcept
    int32_t rv_traj_memo_name(uint64_t v) noexcept
    int32_t rv_traj_memo_call(uint64_t v) noexcept

cdef extern from "trajectory_json.h":
    ctypedef int (*rv_dbl_canon_fn)(const char* s, int64_t n, rv_tbuf* out) noexcept
    ctypedef struct rv_tjson:
        rv_tbuf names
        rv_tbuf args
        int64_t* name_end
        int64_t* args_end
        uint64_t* memo
        int64_t* raw_start
        int64_t* raw_end
        uint64_t* raw_hash
        int64_t ncalls
        rv_dbl_canon_fn dbl_canon
        int check_utf8
    int RV_TJ_OK
    int RV_TJ_FALLBACK
    int RV_TJ_NOMEM
    void rv_tjson_free(rv_tjson* t) noexcept
    int rv_tjson_trajectory(rv_tjson* t, const char* s, int64_t n, const char* name_key, int64_t name_len,
                            const char* args_key, int64_t args_len, int args_required,
                            const rv_traj_memo* memo) noexcept
    int rv_tbuf_put_quoted(rv_tbuf* b, const char* s, int64_t n) noexcept
    int rv_tbuf_put_quoted_words(rv_tbuf* b, const char* s, int64_t n) noexcept

cdef extern from "trajectory_rows.h":
    ctypedef struct rv_traj_scratch:
        pass
    void rv_traj_scratch_free(rv_traj_scratch* s) noexcept nogil
    int64_t rv_traj_rows(rv_traj_scratch* s, const int32_t* pc, const int32_t* pn, const int64_t* po,
                         const int32_t* rc, const int32_t* rn, const int64_t* ro, int64_t r0, int64_t r1,
                         int64_t* out, uint8_t* pm, uint8_t* rm) noexcept nogil
    int64_t rv_traj_substitutions(rv_traj_scratch* s, const int32_t* r, int64_t nr, const int32_t* p,
                                  int64_t np, int32_t* out_ref, int32_t* out_pred) noexcept nogil
    int RV_T_NSTATS

import json as _traj_json
from collections.abc import Mapping as _TrajMapping

# The leaves: how rows read and what makes one unreadable (the twin states the same);
# nothing above them, so loading the core loads neither the twin nor io.
from respeval._arrow_json import (arrow_rows as _traj_arrow_rows, check_arrow as _traj_check_arrow,
                                  maps_as_objects as _traj_maps_as_objects,
                                  records_with_objects as _traj_records_with_objects,
                                  written_from_buffers as _traj_written_from_buffers)
from respeval._tool_calls import (ARGS_MODES, MAX_ARGS_DEPTH as _TRAJ_MAX_ARGS_DEPTH, TRAJECTORY_STATS,
                                  JsonSpans as _TrajJsonSpans, describe_bad_trajectory as _traj_describe_bad)

cdef int _TRAJ_MAX_DEPTH = _TRAJ_MAX_ARGS_DEPTH
_TRAJ_MAX_ROW = 2**31 - 1  # positions are packed in 32 bits by the kernels


class _TrajBadRow(Exception):
    """A row that cannot be interned; the twin's describe_bad_trajectory says why."""


cdef inline int _traj_put(rv_tbuf* b, const char* s, Py_ssize_t n) except -1:
    if rv_tbuf_put(b, s, n) != 0:
        raise MemoryError()
    return 0


cdef int _traj_put_str(rv_tbuf* b, object s) except -1:
    """UTF-8 of ``s`` (lone surrogates kept, as the twin's str keys keep them)."""
    cdef Py_ssize_t n
    cdef const char* p
    try:
        p = PyUnicode_AsUTF8AndSize(s, &n)
    except UnicodeEncodeError:
        raw = (<str>s).encode("utf-8", "surrogatepass")
        return _traj_put(b, raw, len(raw))
    return _traj_put(b, p, n)


cdef inline int _traj_put_quoted_utf8(rv_tbuf* b, const char* p, Py_ssize_t n) except -1:
    if rv_tbuf_put_quoted(b, p, n) != 0:
        raise MemoryError()
    return 0


cdef int _traj_put_quoted(rv_tbuf* b, object s) except -1:
    cdef Py_ssize_t n
    cdef const char* p
    try:
        p = PyUnicode_AsUTF8AndSize(s, &n)
    except UnicodeEncodeError:
        raw = (<str>s).encode("utf-8", "surrogatepass")
        return _traj_put_quoted_utf8(b, raw, len(raw))
    return _traj_put_quoted_utf8(b, p, n)


cdef int _traj_canon(object v, rv_tbuf* b, int depth, int64_t* nan_counter) except -1:
    """Canonical JSON of a decoded value (the twin's ``canonical_args``)."""
    cdef double d
    cdef long long ll
    cdef int overflow = 0
    cdef char num[40]
    cdef int k
    cdef Py_ssize_t i, n
    if depth > _TRAJ_MAX_DEPTH:
        raise _TrajBadRow()
    if v is None:
        return _traj_put(b, "null", 4)
    if v is True:
        return _traj_put(b, "1", 1)
    if v is False:
        return _traj_put(b, "0", 1)
    if PyUnicode_Check(v):
        return _traj_put_quoted(b, v)
    if PyLong_Check(v):
        ll = PyLong_AsLongLongAndOverflow(v, &overflow)
        if overflow:
            return _traj_put_str(b, str(int(v)))
        k = snprintf(num, 40, "%lld", ll)
        return _traj_put(b, num, k)
    if PyFloat_Check(v):
        d = PyFloat_AS_DOUBLE(v)
        if d != d:
            nan_counter[0] += 1
            k = snprintf(num, 40, "NaN#%lld", <long long>nan_counter[0])
            return _traj_put(b, num, k)
        if isinf(d):
            if d > 0:
                return _traj_put(b, "Infinity", 8)
            return _traj_put(b, "-Infinity", 9)
        if d == floor(d):
            if -9.0e18 < d < 9.0e18:
                k = snprintf(num, 40, "%lld", <long long>d)
                return _traj_put(b, num, k)
            return _traj_put_str(b, str(int(v)))
        return _traj_put_str(b, repr(v))
    if PyList_Check(v) or PyTuple_Check(v):
        _traj_put(b, "[", 1)
        n = len(v)
        for i in range(n):
            if i:
                _traj_put(b, ",", 1)
            _traj_canon(v[i], b, depth + 1, nan_counter)
        return _traj_put(b, "]", 1)
    if PyDict_Check(v):
        return _traj_canon_dict(v, b, depth, nan_counter)
    raise _TrajBadRow()


cdef int _traj_canon_dict_slow(object v, rv_tbuf* b, int depth, int64_t* nan_counter) except -1:
    keys = sorted(v)
    _traj_put(b, "{", 1)
    for i, key in enumerate(keys):
        if i:
            _traj_put(b, ",", 1)
        _traj_put_quoted(b, key)
        _traj_put(b, ":", 1)
        _traj_canon(v[key], b, depth + 1, nan_counter)
    return _traj_put(b, "}", 1)


cdef int _traj_canon_dict(object v, rv_tbuf* b, int depth, int64_t* nan_counter) except -1:
    """``{"k":v,...}`` with keys in code point order (the twin sorts its str keys)."""
    cdef Py_ssize_t n = PyDict_GET_SIZE(v), pos = 0, i = 0, j, klen
    cdef PyObject* key
    cdef PyObject* value
    cdef _TrajKey small[16]
    cdef _TrajKey* keys = small
    cdef _TrajKey tmp
    cdef const char* p
    if n > 16:
        keys = <_TrajKey*>malloc(n * sizeof(_TrajKey))
        if keys == NULL:
            raise MemoryError()
    try:
        while PyDict_Next(v, &pos, &key, &value):
            if not PyUnicode_Check(<object>key):
                raise _TrajBadRow()
            try:
                p = PyUnicode_AsUTF8AndSize(<object>key, &klen)
            except UnicodeEncodeError:
                return _traj_canon_dict_slow(v, b, depth, nan_counter)  # a lone surrogate in a key
            keys[i].utf8 = p
            keys[i].n = klen
            keys[i].value = value
            i += 1
        for i in range(1, n):
            tmp = keys[i]
            j = i - 1
            while j >= 0 and _traj_key_less(&tmp, &keys[j]):
                keys[j + 1] = keys[j]
                j -= 1
            keys[j + 1] = tmp
        _traj_put(b, "{", 1)
        for i in range(n):
            if i:
                _traj_put(b, ",", 1)
            _traj_put_quoted_utf8(b, keys[i].utf8, keys[i].n)
            _traj_put(b, ":", 1)
            _traj_canon(<object>keys[i].value, b, depth + 1, nan_counter)
        return _traj_put(b, "}", 1)
    finally:
        if keys != small:
            free(keys)


cdef extern from "Python.h":
    double PyOS_string_to_double(const char* s, char** endptr, PyObject* overflow_exception) except? -1.0
    char* PyOS_double_to_string(double val, char format_code, int precision, int flags, int* ptype)
    void PyMem_Free(void* p)
    int Py_DTSF_ADD_DOT_0


cdef int _traj_put_double(rv_tbuf* out, double d, int64_t* nan_counter) except -1:
    """The canonical form of a float: integral values as integers, others by repr."""
    if rv_tpy_put_double(out, d, nan_counter) != 0:
        if PyErr_Occurred():
            return -1
        raise MemoryError()
    return 0


cdef int _traj_dbl_canon(const char* s, int64_t n, rv_tbuf* out) noexcept:
    """rv_dbl_canon_fn: a JSON number with a fraction or exponent, as Python's float() reads
    it, canonicalised.  0, 1 (leave the row to Python) or -1 (no memory)."""
    cdef char num[400]
    cdef char* end = NULL
    cdef double d
    cdef int64_t unused = 0
    if n <= 0 or n >= 400:
        return 1
    memcpy(num, s, n)
    num[n] = 0  # the text need not be terminated (an Arrow buffer): parse a copy
    try:
        d = PyOS_string_to_double(num, &end, NULL)
        if end != num + n or d != d:
            return 1
        _traj_put_double(out, d, &unused)
    except MemoryError:
        return -1
    except Exception:
        return 1
    return 0


cdef extern from "trajectory_py.h":
    ctypedef struct rv_tpy:
        rv_tbuf keys
        int64_t* start
        int64_t* end
        const char** name
        int64_t* name_n
        int64_t ncalls
        rv_tbuf fp
        int64_t* fp_start
        int64_t* fp_end
        uint64_t* fp_hash
        uint64_t* memo
    void rv_tpy_free(rv_tpy* t)
    void rv_tpy_hold(rv_tpy* t, int hold)
    int rv_tpy_memo_row(rv_tpy* t, object row, object name_key, object args_key, int args_required,
                        const rv_traj_memo* memo, int max_depth, int64_t* misses)
    int rv_tpy_shape(rv_tpy* t, object row, object name_key, object args_key, int args_required)
    int rv_tpy_keys(rv_tpy* t, const uint8_t* keep, int64_t upto, int max_depth, int64_t* nan_counter)


cdef struct _TrajState:
    rv_tbuf key
    rv_i32buf calls
    rv_i32buf names
    rv_i64buf offsets
    PyObject** row_names
    PyObject** row_args
    int64_t cap
    rv_tjson tj
    rv_tpy tpy
    # one row's calls, interned together (rv_traj_table_add_many)
    int64_t* batch_start
    int64_t* batch_end
    uint64_t* batch_hash
    int32_t* batch_ids
    int32_t* batch_names
    int32_t* call_names  # per call of the row: its name id (-1 dropped)
    uint8_t* call_keep   # per call of a row of dicts: the name normaliser keeps it
    int64_t batch_cap


cdef int _traj_batch_grow(_TrajState* st, int64_t need) except -1:
    cdef void** arrays[7]
    cdef size_t elem[7]
    arrays[0] = <void**>&st.batch_start; elem[0] = sizeof(int64_t)
    arrays[1] = <void**>&st.batch_end; elem[1] = sizeof(int64_t)
    arrays[2] = <void**>&st.batch_hash; elem[2] = sizeof(uint64_t)
    arrays[3] = <void**>&st.batch_ids; elem[3] = sizeof(int32_t)
    arrays[4] = <void**>&st.call_keep; elem[4] = sizeof(uint8_t)
    arrays[5] = <void**>&st.batch_names; elem[5] = sizeof(int32_t)
    arrays[6] = <void**>&st.call_names; elem[6] = sizeof(int32_t)
    if rv_grow_parallel(arrays, elem, 7, &st.batch_cap, need) != 0:
        raise MemoryError()
    return 0


cdef inline bint _traj_is_arrow(object values):
    return type(values).__module__.startswith("pyarrow") and hasattr(values, "type")


cdef extern from "trajectory_arrow.h":
    enum:
        RV_TA_NULL
        RV_TA_INT
        RV_TA_UINT
        RV_TA_FLOAT
        RV_TA_BOOL
        RV_TA_STRING
        RV_TA_STRUCT
        RV_TA_LIST
        RV_TA_TEXT
    ctypedef struct rv_tanode:
        int kind
        const uint8_t* bits
        int64_t bit_offset
        const void* values
        const int32_t* off32
        const int64_t* off64
        int64_t offset
        int64_t base
        const char* data
        const char* qname
        int64_t qlen
        int64_t first_child
        int64_t nchildren
        int keep_nulls
    ctypedef struct rv_taplan:
        const rv_tanode* nodes
        const int64_t* kids
        int json
    int rv_tbuf_put_json_string(rv_tbuf* b, const char* s, int64_t n) noexcept
    int rv_ta_valid(const rv_tanode* nd, int64_t j) noexcept
    int rv_ta_write(const rv_taplan* plan, int64_t i, int64_t j, rv_tbuf* o, int64_t* nan_counter) noexcept
    int rv_ta_bad(const rv_taplan* plan, int64_t i, int64_t j) noexcept
    int rv_tpy_put_double(rv_tbuf* o, double d, int64_t* nan_counter) noexcept


cdef const char* _TRAJ_EMPTY = b""


cdef const void* _traj_data(object a):
    """The first byte of a contiguous numpy array or a bytes-like object (never NULL)."""
    cdef const uint8_t[::1] view
    if a is None:
        return _TRAJ_EMPTY
    view = memoryview(a).cast("B")
    return <const void*>&view[0] if view.shape[0] else _TRAJ_EMPTY


cdef class _TrajPlan:
    """The arguments' Arrow type as a tree of ``rv_tanode`` (trajectory_arrow.h), over the
    arrays' own buffers, which ``keep`` holds alive.  Node 0 is the root."""
    cdef rv_tanode* nodes
    cdef int64_t n, cap
    cdef int64_t* kids
    cdef int64_t nkids, kids_cap
    cdef list keep
    cdef bint may_be_bad  # a text node has a value that is not JSON
    cdef bint strict  # no text nodes: a type that needs one raises _TrajNotWritable
    cdef rv_taplan plan

    def __cinit__(self):
        self.keep = []

    def __dealloc__(self):
        free(self.nodes)
        free(self.kids)

    cdef int64_t _new(self, int kind, object arr) except -1:
        cdef void* p
        cdef rv_tanode* nd
        if rv_grow(<void**>&self.nodes, &self.cap, self.n + 1, sizeof(rv_tanode)) != 0:
            raise MemoryError()
        nd = &self.nodes[self.n]
        memset(nd, 0, sizeof(rv_tanode))
        nd.kind = kind
        nd.qname = _TRAJ_EMPTY
        if kind != RV_TA_NULL and arr.null_count:
            bitmap = arr.buffers()[0] if kind != RV_TA_TEXT else None
            if bitmap is None:
                import numpy as np
                bitmap = np.packbits(_traj_validity(arr), bitorder="little")
                nd.bit_offset = 0
            else:
                nd.bit_offset = arr.offset
            self.keep.append(bitmap)
            nd.bits = <const uint8_t*>_traj_data(bitmap)
        self.n += 1
        return self.n - 1

    cdef int _children(self, int64_t i, list children) except -1:
        cdef void* p
        cdef int64_t c
        if rv_grow(<void**>&self.kids, &self.kids_cap, self.nkids + len(children), sizeof(int64_t)) != 0:
            raise MemoryError()
        self.nodes[i].first_child = self.nkids
        self.nodes[i].nchildren = len(children)
        for c in children:
            self.kids[self.nkids] = c
            self.nkids += 1
        return 0

    cdef int64_t struct_node(self, object arr, int64_t* nan_counter, int depth) except -1:
        """A struct's node, its fields (sorted by UTF-8, as canonical JSON sorts keys) at
        ``depth``."""
        cdef rv_tbuf out
        typ = arr.type
        named = sorted(zip([typ.field(f).name for f in range(typ.num_fields)], arr.flatten()),
                       key=lambda p: p[0].encode("utf-8", "surrogatepass"))
        i = self._new(RV_TA_STRUCT, arr)
        children = []
        for name, child in named:
            c = self.node(child, nan_counter, depth)
            raw = name.encode("utf-8", "surrogatepass")
            memset(&out, 0, sizeof(out))
            try:
                if (rv_tbuf_put_json_string(&out, raw, len(raw)) if self.plan.json
                        else rv_tbuf_put_quoted(&out, raw, len(raw))) != 0:
                    raise MemoryError()
                quoted = out.data[:out.n]
            finally:
                free(out.data)
            self.keep.append(quoted)
            self.nodes[c].qname = quoted
            self.nodes[c].qlen = len(quoted)
            children.append(c)
        self._children(i, children)
        return i

    cdef int64_t node(self, object arr, int64_t* nan_counter, int depth) except -1:
        """The node of an Arrow array whose values sit at ``depth`` (1: an argument).
        Scalars, strings, structs and lists are read from their buffers; other types (and
        nesting at depth 60) are canonicalised now, through their Python values."""
        import numpy as np
        import pyarrow as pa
        cdef int64_t i
        typ = arr.type
        m = len(arr)
        if pa.types.is_null(typ) or m == 0:
            return self._new(RV_TA_NULL, arr)
        if pa.types.is_struct(typ) and depth < 60 and _traj_unique_fields(typ):
            return self.struct_node(arr, nan_counter, depth + 1)
        if (pa.types.is_list(typ) or pa.types.is_large_list(typ)) and depth < 60:
            off = np.frombuffer(arr.buffers()[1], np.int64 if pa.types.is_large_list(typ) else np.int32)
            first = int(off[arr.offset])
            child = self.node(arr.values.slice(first, int(off[arr.offset + m]) - first), nan_counter, depth + 1)
            i = self._new(RV_TA_LIST, arr)
            self._offsets(i, off, arr.offset)
            self.nodes[i].base = first
            self._children(i, [child])
            return i
        if pa.types.is_string(typ) or pa.types.is_large_string(typ):
            bufs = arr.buffers()
            if bufs[1] is not None:
                i = self._new(RV_TA_STRING, arr)
                self._offsets(i, np.frombuffer(bufs[1], np.int64 if pa.types.is_large_string(typ) else np.int32),
                              arr.offset)
                self.keep.append(bufs[2])
                self.nodes[i].data = <const char*>_traj_data(bufs[2])
                return i
        for test, kind, dtype, fill in ((pa.types.is_signed_integer, RV_TA_INT, np.int64, 0),
                                        (pa.types.is_unsigned_integer, RV_TA_UINT, np.uint64, 0),
                                        (pa.types.is_floating, RV_TA_FLOAT, np.float64, 0),
                                        (pa.types.is_boolean, RV_TA_BOOL, np.uint8, False)):
            if test(typ) and not pa.types.is_float16(typ):
                values = np.ascontiguousarray(
                    (arr.fill_null(fill) if arr.null_count else arr).to_numpy(zero_copy_only=False), dtype=dtype)
                i = self._new(kind, arr)
                self.keep.append(values)
                self.nodes[i].values = _traj_data(values)
                return i
        if self.strict:
            raise _TrajNotWritable(str(typ))
        return self._text_node(arr, nan_counter, depth)

    cdef int _offsets(self, int64_t i, object off, int64_t offset) except -1:
        self.keep.append(off)
        if off.dtype.itemsize == 4:
            self.nodes[i].off32 = <const int32_t*>_traj_data(off)
        else:
            self.nodes[i].off64 = <const int64_t*>_traj_data(off)
        self.nodes[i].offset = offset
        return 0

    cdef int64_t _text_node(self, object arr, int64_t* nan_counter, int depth) except -1:
        """Any other type: each value's canonical text, from its Python value (a value that
        is not JSON marked bad: its row takes the Python path)."""
        import numpy as np
        cdef Py_ssize_t j, m = len(arr)
        cdef rv_tbuf pybuf
        cdef rv_tbuf out
        cdef int64_t[::1] offsets
        cdef uint8_t[::1] bad
        cdef int64_t i
        off = np.zeros(m + 1, np.int64)
        bad_a = np.zeros(m, np.uint8)
        offsets = off
        bad = bad_a
        values = _traj_maps_as_objects(arr.to_pylist(), arr.type)  # a map is the object it stands for
        memset(&out, 0, sizeof(out))
        memset(&pybuf, 0, sizeof(pybuf))
        try:
            for j in range(m):
                v = values[j]
                if v is not None:
                    pybuf.n = 0
                    try:
                        _traj_canon(v, &pybuf, depth, nan_counter)
                    except (_TrajBadRow, TypeError, ValueError, RecursionError):
                        bad[j] = 1
                        pybuf.n = 0
                    if rv_tbuf_put(&out, pybuf.data, pybuf.n) != 0:
                        raise MemoryError()
                offsets[j + 1] = out.n
            text = out.data[:out.n] if out.n else b""
        finally:
            free(pybuf.data)
            free(out.data)
        i = self._new(RV_TA_TEXT, arr)
        self._offsets(i, off, 0)
        self.keep.append(text)
        self.keep.append(bad_a)
        self.nodes[i].data = text
        self.nodes[i].values = _traj_data(bad_a)
        self.may_be_bad = self.may_be_bad or bool(bad_a.any())
        return i

    cdef const rv_taplan* ready(self):
        self.plan.nodes = self.nodes
        self.plan.kids = self.kids
        return &self.plan

    cdef void set_keep_nulls(self, int64_t i, bint keep) noexcept:
        """Every struct under node ``i`` writes its null fields as null (``keep``) or
        leaves them out."""
        cdef int64_t f
        if self.nodes[i].kind == RV_TA_STRUCT:
            self.nodes[i].keep_nulls = keep
        for f in range(self.nodes[i].nchildren):
            self.set_keep_nulls(self.kids[self.nodes[i].first_child + f], keep)


class _TrajNotWritable(Exception):
    """An Arrow type the buffer writer leaves to Python values."""


def arrow_json_texts(object column):
    """The JSON text of each value of a nested Arrow column (a list or struct type), as
    ``json.dumps`` writes ``respeval._arrow_json.json_values`` of it (null rows: None); None
    for a column of another type, or holding types written only through Python values
    (maps, timestamps, nesting 60 deep, ...).  A malformed column is refused, as
    ``check_arrow`` refuses it."""
    import pyarrow as pa
    cdef _TrajPlan plan
    cdef const rv_taplan* ready
    cdef rv_tbuf out
    cdef int64_t unused = 0, root
    cdef Py_ssize_t j, m
    typ = column.type
    if not (pa.types.is_list(typ) or pa.types.is_large_list(typ) or pa.types.is_struct(typ)):
        return None
    _traj_check_arrow(column)
    if not _traj_written_from_buffers(typ):  # the one rule, shared with the twin
        return None
    # json_values drops null fields inside a list of records' object-valued fields only
    records = _traj_records_with_objects(typ)
    texts = []
    memset(&out, 0, sizeof(out))
    try:
        for chunk in (column.chunks if hasattr(column, "chunks") else [column]):
            plan = _TrajPlan()
            plan.strict = True
            plan.plan.json = 1
            try:
                root = plan.node(chunk, &unused, 0)
            except _TrajNotWritable:
                return None
            ready = plan.ready()
            # the records keep their null fields, the objects inside them do not
            plan.set_keep_nulls(root, not records)
            if records and plan.nodes[root].kind == RV_TA_LIST:  # (an empty chunk has no records)
                plan.nodes[plan.kids[plan.nodes[root].first_child]].keep_nulls = 1
            m = len(chunk)
            for j in range(m):
                if not rv_ta_valid(&plan.nodes[root], j):
                    texts.append(None)
                    continue
                out.n = 0
                _traj_write_node(ready, root, j, &out, &unused)
                texts.append(PyUnicode_DecodeUTF8(out.data, out.n, "strict"))
    finally:
        free(out.data)
    return texts


cdef _TrajPlan _traj_args_plan(object args_arr, int64_t* nan_counter):
    """The plan of a struct column of arguments (root: node 0, its fields at depth 1)."""
    cdef _TrajPlan plan = _TrajPlan()
    plan.struct_node(args_arr, nan_counter, 1)
    return plan


cdef int _traj_write_node(const rv_taplan* plan, int64_t i, int64_t j, rv_tbuf* out,
                          int64_t* nan_counter) except -1:
    """Element ``j`` of node ``i`` (valid) appended to ``out``."""
    if rv_ta_write(plan, i, j, out, nan_counter) != 0:
        if PyErr_Occurred():
            return -1  # str(int(d)) of a huge float failed: its Python error
        raise MemoryError()
    return 0


cdef bint _traj_unique_fields(object struct_type):
    names = [struct_type.field(i).name for i in range(struct_type.num_fields)]
    return len(set(names)) == len(names)


cdef object _traj_struct_layout(object struct_type, str name_key, str args_key):
    """None when a list<struct> column cannot take the column-wise path (the name is not a
    string field, a key appears twice, the arguments are neither a struct nor null)."""
    import pyarrow as pa
    names = [struct_type.field(i).name for i in range(struct_type.num_fields)]
    if names.count(name_key) != 1 or names.count(args_key) > 1:
        return None
    name_type = struct_type.field(name_key).type
    if not (pa.types.is_string(name_type) or pa.types.is_large_string(name_type)):
        return None
    if args_key in names:
        args_type = struct_type.field(args_key).type
        if pa.types.is_struct(args_type):
            fields = [args_type.field(i).name for i in range(args_type.num_fields)]
            if len(set(fields)) != len(fields):
                return None
        elif not pa.types.is_null(args_type):
            return None
    return True


cdef tuple _traj_arrow_strings(object arr):
    """(offsets int64, data bytes, valid uint8) of an Arrow string or large_string array,
    read from its buffers (offsets shifted by the array's slice offset)."""
    import numpy as np
    import pyarrow as pa
    bufs = arr.buffers()
    n = len(arr)
    width = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    if n == 0 or bufs[1] is None:
        return np.zeros(n + 1, np.int64), np.zeros(0, np.uint8), np.zeros(n, np.uint8)
    off = np.frombuffer(bufs[1], dtype=width)[arr.offset : arr.offset + n + 1].astype(np.int64)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None and bufs[2].size else np.zeros(0, np.uint8)
    if len(off) != n + 1 or (n and (off[0] < 0 or off[-1] > len(data) or np.any(np.diff(off) < 0))):
        raise ValueError("malformed Arrow string array (offsets out of range)")
    valid = _traj_validity(arr)
    return off, data, valid


cdef object _traj_validity(object arr):
    """uint8 per element, 1 where it is not null: the validity bitmap unpacked (numpy's
    bit unpacking, much faster than converting ``is_valid()`` element by element)."""
    import numpy as np
    import pyarrow as pa
    n = len(arr)
    if arr.null_count == 0:
        return np.ones(n, np.uint8)
    bitmap = arr.buffers()[0] if not pa.types.is_null(arr.type) else None
    if bitmap is None:
        return np.ascontiguousarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=np.uint8)
    bits = np.unpackbits(np.frombuffer(bitmap, np.uint8), count=arr.offset + n, bitorder="little")
    return np.ascontiguousarray(bits[arr.offset :])


class _TrajBadColumn(Exception):
    """An Arrow value that Arrow's full validation refuses (the whole column is refused)."""


cdef bint _traj_reads_text(object arr, str name_key, str args_key, str args_mode):
    """Whether an Arrow column is read as JSON text by ``_arrow_text``."""
    import pyarrow as pa
    typ = arr.type
    return (args_mode == "json" and name_key != args_key
            and (pa.types.is_string(typ) or pa.types.is_large_string(typ)))


cdef bint _traj_is_null_type(object arr):
    import pyarrow as pa
    return pa.types.is_null(arr.type)


cdef str _traj_describe_arrow(object arr, Py_ssize_t row, str name_key, str args_key, bint args_required,
                              str args_mode, object name_fn):
    try:
        value = _traj_arrow_value(arr, row)
    except ValueError as exc:
        return str(exc)
    return _traj_describe_bad(value, name_key, args_key, args_required, args_mode, name_fn)


cdef object _traj_arrow_value(object arr, Py_ssize_t row):
    """Row ``row`` of an Arrow column as the twin reads it (``arrow_rows``)."""
    try:
        return _traj_arrow_rows(arr.slice(row, 1))[0]
    except Exception as exc:  # an Arrow value Python cannot represent
        raise ValueError(f"unreadable Arrow value: {exc}") from None


cdef class CallTable:
    """Interns tool calls into dense ids (see ``respeval._core_py.trajectory.CallTable``)."""
    cdef rv_traj_table names_v
    cdef rv_traj_table calls_v
    cdef rv_traj_table raw_v  # names as read, before the normaliser (JSON and Arrow paths)
    cdef int32_t* raw_map  # raw name id -> normalised name id, -1 dropped, -2 not yet known
    cdef int64_t raw_cap
    cdef dict name_cache
    cdef int64_t nan_counter
    cdef rv_traj_memo memo_v  # JSON call texts already read (trajectory_table.h)
    cdef tuple memo_options   # the reading options the memo's answers hold for
    cdef int64_t normaliser_calls  # times name_fn has run (_mapped)

    def __cinit__(self):
        if (rv_traj_table_init(&self.names_v) != 0 or rv_traj_table_init_spare(&self.calls_v) != 0
                or rv_traj_table_init(&self.raw_v) != 0 or rv_traj_memo_init(&self.memo_v) != 0):
            raise MemoryError("cannot allocate the call table")
        self.raw_map = NULL
        self.raw_cap = 0
        self.name_cache = {}
        self.nan_counter = 0

    def __dealloc__(self):
        rv_traj_table_free(&self.names_v)
        rv_traj_table_release(&self.calls_v)
        rv_traj_table_free(&self.raw_v)
        rv_traj_memo_free(&self.memo_v)
        free(self.raw_map)

    def __len__(self):
        return self.calls_v.n

    @property
    def n_names(self):
        return self.names_v.n

    @property
    def _memo_entries(self):
        """Call texts and fingerprints the memo holds (for the tests)."""
        return self.memo_v.raw.n

    def name(self, Py_ssize_t i):
        if i < 0 or i >= self.names_v.n:
            raise IndexError(f"name id {i} out of range for {self.names_v.n} names")
        return self.names_v.arena[self.names_v.start[i]:self.names_v.start[i + 1]].decode("utf-8", "surrogatepass")

    def names(self):
        return [self.name(i) for i in range(self.names_v.n)]

    def call(self, Py_ssize_t i):
        """Call ``i`` as (tool name, canonical arguments)."""
        cdef int32_t nid
        if i < 0 or i >= self.calls_v.n:
            raise IndexError(f"call id {i} out of range for {self.calls_v.n} calls")
        key = self.calls_v.arena[self.calls_v.start[i]:self.calls_v.start[i + 1]]
        memcpy(&nid, <const char*>key, 4)
        return self.name(nid), key[4:].decode("utf-8", "surrogatepass")

    def name_id(self, str name, default=-1):
        cdef bytes raw = name.encode("utf-8", "surrogatepass")
        cdef int32_t r = rv_traj_table_find(&self.names_v, raw, len(raw))
        return default if r < 0 else r

    cdef int32_t _name(self, object name) except -2:
        cdef Py_ssize_t n
        cdef const char* p
        cdef int32_t r
        try:
            p = PyUnicode_AsUTF8AndSize(name, &n)
        except UnicodeEncodeError:
            raw = (<str>name).encode("utf-8", "surrogatepass")
            p = raw
            n = len(raw)
        r = rv_traj_table_add(&self.names_v, p, n)
        if r < 0:
            raise MemoryError("too many tool names")
        return r

    cdef object _mapped(self, object name, object name_fn):
        """The normalised name (None: drop the call), cached per raw name."""
        cache = self.name_cache
        if name in cache:
            return cache[name]
        self.normaliser_calls += 1
        mapped = name_fn(name)
        if mapped is not None and not PyUnicode_Check(mapped):
            raise _TrajBadRow()
        cache[name] = mapped
        return mapped

    cdef int32_t _raw_id(self, const char* p, Py_ssize_t n) except -1:
        """Id of a name as read (UTF-8 bytes), with a slot in raw_map (-2 until known)."""
        cdef int32_t raw = rv_traj_table_add(&self.raw_v, p, n)
        cdef int32_t* grown
        cdef Py_ssize_t cap, i
        if raw < 0:
            raise MemoryError("too many tool names")
        if raw >= self.raw_cap:
            was = self.raw_cap
            if rv_grow(<void**>&self.raw_map, &self.raw_cap, raw + 1, sizeof(int32_t)) != 0:
                raise MemoryError()
            for i in range(was, self.raw_cap):
                self.raw_map[i] = -2
        return raw

    cdef bint _keeps(self, const char* p, Py_ssize_t n, object name_fn) except -1:
        """Whether the name normaliser keeps a call named p[0:n], without interning its
        normalised name yet (``_name_bytes`` does, once the call is read)."""
        cdef int32_t raw = self._raw_id(p, n)
        if self.raw_map[raw] != -2:
            return self.raw_map[raw] >= 0
        if self._mapped(p[:n].decode("utf-8"), name_fn) is None:
            self.raw_map[raw] = -1
            return False
        return True

    cdef int32_t _name_bytes(self, const char* p, Py_ssize_t n, object name_fn) except -2:
        """Name id of a call whose name is UTF-8 bytes (valid, no surrogates); -1: drop it."""
        cdef int32_t raw, r
        if name_fn is None:
            r = rv_traj_table_add(&self.names_v, p, n)
            if r < 0:
                raise MemoryError("too many tool names")
            return r
        raw = self._raw_id(p, n)
        if self.raw_map[raw] == -2:
            mapped = self._mapped(p[:n].decode("utf-8"), name_fn)
            self.raw_map[raw] = -1 if mapped is None else self._name(mapped)
        return self.raw_map[raw]

    cdef inline int _push_key(self, _TrajState* st, int32_t nid, const char* key, Py_ssize_t n) except -1:
        """Intern a call whose key (name id, canonical arguments) is key[0:n]."""
        cdef int32_t cid = rv_traj_table_add(&self.calls_v, key, n)
        if cid < 0:
            raise MemoryError("too many distinct tool calls")
        if rv_push_i32(&st.calls, cid) != 0 or rv_push_i32(&st.names, nid) != 0:
            raise MemoryError()
        return 0

    cdef int _emit(self, _TrajState* st, int32_t nid, const char* args, Py_ssize_t n) except -1:
        cdef int32_t cid
        st.key.n = 0
        _traj_put(&st.key, <const char*>&nid, 4)
        _traj_put(&st.key, args, n)
        cid = rv_traj_table_add(&self.calls_v, st.key.data, st.key.n)
        if cid < 0:
            raise MemoryError("too many distinct tool calls")
        if rv_push_i32(&st.calls, cid) != 0 or rv_push_i32(&st.names, nid) != 0:
            raise MemoryError()
        return 0

    cdef int _json_row(self, _TrajState* st, object text, bytes name_key, bytes args_key, bint args_required,
                       object name_fn) except -1:
        """A row of JSON text read without Python objects: 1 done, 0 leave it to Python."""
        cdef Py_ssize_t n
        cdef const char* p
        try:
            p = PyUnicode_AsUTF8AndSize(text, &n)
        except UnicodeEncodeError:
            return 0  # lone surrogates
        return self._json_span(st, p, n, name_key, args_key, args_required, name_fn)

    cdef int _json_span(self, _TrajState* st, const char* p, Py_ssize_t n, bytes name_key, bytes args_key,
                        bint args_required, object name_fn) except -1:
        """A row of JSON text p[0:n]: 1 done, 0 leave it to Python.  Calls the memo knows
        take its ids; the others are read, interned together, then remembered."""
        cdef int r
        cdef int64_t i, name_at = 0, args_at = 0
        cdef int32_t nid, cid
        cdef uint64_t v
        r = rv_tjson_trajectory(&st.tj, p, n, name_key, len(name_key), args_key, len(args_key), args_required,
                                &self.memo_v)
        if r == RV_TJ_NOMEM:
            raise MemoryError()
        if r != RV_TJ_OK:
            return 0
        cdef int64_t k = 0, ncalls = st.tj.ncalls
        if ncalls > st.batch_cap:
            _traj_batch_grow(st, ncalls)
        for i in range(ncalls):
            v = st.tj.memo[i]
            if v != RV_TRAJ_MEMO_MISS:
                nid = rv_traj_memo_name(v)
            else:
                nid = self._name_bytes(st.tj.names.data + name_at, st.tj.name_end[i] - name_at, name_fn)
                if nid >= 0:
                    # the 4 bytes before the arguments take the name id: the call's key, in place
                    memcpy(st.tj.args.data + args_at, &nid, 4)
                    st.batch_start[k] = args_at
                    st.batch_end[k] = st.tj.args_end[i]
                    k += 1
            st.call_names[i] = nid
            name_at = st.tj.name_end[i]
            args_at = st.tj.args_end[i]
        r = rv_traj_table_add_many(&self.calls_v, st.tj.args.data, st.batch_start, st.batch_end, k, st.batch_hash,
                                   st.batch_ids)
        if r < 0:
            raise MemoryError("too many distinct tool calls")
        k = 0
        for i in range(ncalls):
            nid = st.call_names[i]
            v = st.tj.memo[i]
            if v != RV_TRAJ_MEMO_MISS:
                cid = rv_traj_memo_call(v)
            else:
                cid = -1
                if nid >= 0:
                    cid = st.batch_ids[k]
                    k += 1
                if rv_traj_memo_add(&self.memo_v, p + st.tj.raw_start[i], st.tj.raw_end[i] - st.tj.raw_start[i],
                                    st.tj.raw_hash[i], rv_traj_memo_pack(nid, cid)) != 0:
                    raise MemoryError()
            if nid >= 0 and (rv_push_i32(&st.calls, cid) != 0 or rv_push_i32(&st.names, nid) != 0):
                raise MemoryError()
        return 1

    cdef int _dict_row(self, _TrajState* st, list traj, object name_key_o, object args_key_o, bint args_required,
                       object name_fn, bint exact_keys) except -1:
        """A row of dicts read in C (trajectory_py.h): 1 done, 0 leave it to ``_py_row``.
        Calls the memo knows by their fingerprint take its ids; the others go through
        ``_dict_misses``.  ``exact_keys``: the two keys are exact str with their hashes
        computed (rv_tpy_memo_row needs them so)."""
        cdef int64_t i, ncalls, misses = 0
        cdef int32_t nid
        cdef uint64_t v
        cdef int r = 0
        if exact_keys:
            r = rv_tpy_memo_row(&st.tpy, traj, name_key_o, args_key_o, args_required, &self.memo_v, _TRAJ_MAX_DEPTH,
                                &misses)
        if r == 0:
            # not the common shape: rv_tpy_shape decides, and no call is taken from the memo
            r = rv_tpy_shape(&st.tpy, traj, name_key_o, args_key_o, args_required)
            if r == 1:
                misses = st.tpy.ncalls
                for i in range(misses):
                    st.tpy.memo[i] = RV_TRAJ_MEMO_MISS
                    st.tpy.fp_end[i] = -1
        if r < 0:
            raise MemoryError()
        if r == 0:
            return 0
        ncalls = st.tpy.ncalls
        if ncalls > st.batch_cap:
            _traj_batch_grow(st, ncalls)
        if misses == 0:
            for i in range(ncalls):
                v = st.tpy.memo[i]
                nid = rv_traj_memo_name(v)
                if nid >= 0 and (rv_push_i32(&st.calls, rv_traj_memo_call(v)) != 0
                                 or rv_push_i32(&st.names, nid) != 0):
                    raise MemoryError()
            return 1
        if name_fn is None:
            return self._dict_misses(st, name_fn, 0)
        # the normaliser is Python code, and runs while the row's pointers are held: keep
        # the objects they point into alive, whatever it does to the row
        rv_tpy_hold(&st.tpy, 1)
        try:
            return self._dict_misses(st, name_fn, self.normaliser_calls)
        finally:
            rv_tpy_hold(&st.tpy, 0)

    cdef int _dict_misses(self, _TrajState* st, object name_fn, int64_t asked) except -1:
        """``_dict_row`` for a row with calls the memo does not know, in the twin's order:
        the normaliser is asked about each name in turn (a dropped call's arguments are
        never read), the kept calls are canonicalised, then their names and the calls are
        interned, the calls together, and remembered.  ``asked``: how many times the
        normaliser had run before this row; if it runs for this row, the row's calls are
        not remembered (it may have changed them since their fingerprints were taken; a
        later row remembers them)."""
        cdef int64_t i, k = 0, ncalls = st.tpy.ncalls, upto = st.tpy.ncalls
        cdef int32_t nid, cid
        cdef uint64_t v
        cdef uint8_t* keep = st.call_keep
        cdef int r
        failure = None
        for i in range(ncalls):
            keep[i] = st.tpy.memo[i] == RV_TRAJ_MEMO_MISS
        if name_fn is not None:
            for i in range(ncalls):
                if not keep[i]:
                    continue
                try:
                    keep[i] = self._keeps(st.tpy.name[i], st.tpy.name_n[i], name_fn)
                except BaseException as exc:
                    # the twin has read and interned the calls before this one: so do we
                    failure = exc
                    upto = i
                    break
        r = rv_tpy_keys(&st.tpy, keep, upto, _TRAJ_MAX_DEPTH, &self.nan_counter)
        if r < 0:
            raise MemoryError()
        if r == 0:
            return 0  # _py_row meets the same failure (or an earlier one) the twin's way
        for i in range(upto):
            nid = -1
            if keep[i]:
                nid = self._name_bytes(st.tpy.name[i], st.tpy.name_n[i], name_fn)
            st.call_names[i] = nid
            if nid >= 0:
                memcpy(st.tpy.keys.data + st.tpy.start[i], &nid, 4)
                st.batch_start[k] = st.tpy.start[i]
                st.batch_end[k] = st.tpy.end[i]
                k += 1
        if rv_traj_table_add_many(&self.calls_v, st.tpy.keys.data, st.batch_start, st.batch_end, k, st.batch_hash,
                                  st.batch_ids) < 0:
            raise MemoryError("too many distinct tool calls")
        if failure is not None:
            raise failure
        remember = self.normaliser_calls == asked
        k = 0
        for i in range(ncalls):
            v = st.tpy.memo[i]
            if v != RV_TRAJ_MEMO_MISS:
                nid = rv_traj_memo_name(v)
                cid = rv_traj_memo_call(v)
            else:
                nid = st.call_names[i]
                cid = -1
                if nid >= 0:
                    cid = st.batch_ids[k]
                    k += 1
                if remember and st.tpy.fp_end[i] >= 0 and rv_traj_memo_add(
                        &self.memo_v, st.tpy.fp.data + st.tpy.fp_start[i], st.tpy.fp_end[i] - st.tpy.fp_start[i],
                        st.tpy.fp_hash[i], rv_traj_memo_pack(nid, cid)) != 0:
                    raise MemoryError()
            if nid >= 0 and (rv_push_i32(&st.calls, cid) != 0 or rv_push_i32(&st.names, nid) != 0):
                raise MemoryError()
        return 1

    cdef int _py_row(self, _TrajState* st, object traj, object name_key_o, object args_key_o, bint args_required,
                     bint string_mode, object name_fn) except -1:
        """A row of Python objects (lists of dicts; JSON text is decoded first)."""
        cdef Py_ssize_t i, ncalls
        cdef void** arrays[2]
        cdef size_t elem[2]
        elem[0] = elem[1] = sizeof(PyObject*)
        cdef PyObject* found
        cdef int32_t nid
        cdef object call, name, args
        # pass 1: the row's shape (the twin's read_trajectory), nothing interned
        if PyUnicode_Check(traj):
            traj = _traj_json.loads(traj)
        if not (PyList_Check(traj) or PyTuple_Check(traj)):
            raise _TrajBadRow()
        ncalls = PyList_GET_SIZE(traj) if PyList_Check(traj) else PyTuple_GET_SIZE(traj)
        if ncalls > _TRAJ_MAX_ROW:
            raise _TrajBadRow()
        if ncalls > st.cap:
            arrays[0] = <void**>&st.row_names
            arrays[1] = <void**>&st.row_args
            if rv_grow_parallel(arrays, elem, 2, &st.cap, ncalls) != 0:
                raise MemoryError()
        keep = None  # holds converted mappings alive while their items are borrowed
        for i in range(ncalls):
            call = <object>(PyList_GET_ITEM(traj, i) if PyList_Check(traj) else PyTuple_GET_ITEM(traj, i))
            if not PyDict_Check(call):
                if not isinstance(call, _TrajMapping):
                    raise _TrajBadRow()
                call = dict(call)
                if keep is None:
                    keep = []
                keep.append(call)
            found = PyDict_GetItemWithError(call, name_key_o)
            if found == NULL or not PyUnicode_Check(<object>found):
                raise _TrajBadRow()
            name = <object>found
            found = PyDict_GetItemWithError(call, args_key_o)
            if found != NULL:
                args = <object>found
            elif args_required:
                raise _TrajBadRow()
            else:
                args = None
            if args is not None and not PyDict_Check(args):
                raise _TrajBadRow()
            st.row_names[i] = <PyObject*>name
            st.row_args[i] = <PyObject*>args
        # pass 2: normalise names, canonicalise arguments, intern
        for i in range(ncalls):
            name = <object>st.row_names[i]
            args = <object>st.row_args[i]
            if name_fn is not None:
                name = self._mapped(name, name_fn)
                if name is None:
                    continue
            st.key.n = 0
            _traj_put(&st.key, "\0\0\0\0", 4)  # the name id's place
            if string_mode:
                _traj_put_str(&st.key, _traj_json.dumps(args))
            else:
                _traj_canon(args, &st.key, 0, &self.nan_counter)
            nid = self._name(name)
            memcpy(st.key.data, &nid, 4)
            cid = rv_traj_table_add(&self.calls_v, st.key.data, st.key.n)
            if cid < 0:
                raise MemoryError("too many distinct tool calls")
            if rv_push_i32(&st.calls, cid) != 0 or rv_push_i32(&st.names, nid) != 0:
                raise MemoryError()
        return 0

    cdef int _memo_for(self, str name_key, str args_key, bint args_required, object name_fn) except -1:
        """Forget the memo if these reading options differ from the ones it was filled with."""
        cdef tuple was = self.memo_options
        if was is not None and not (was[0] == name_key and was[1] == args_key and was[2] == args_required
                                    and was[3] is name_fn):
            rv_traj_memo_free(&self.memo_v)
            if rv_traj_memo_init(&self.memo_v) != 0:
                raise MemoryError("cannot allocate the call memo")
        self.memo_options = (name_key, args_key, args_required, name_fn)
        return 0

    def intern(self, trajectories, str name_key="tool_name", str args_key="tool_input",
               bint args_required=True, str args_mode="json", name_fn=None):
        """Call ids, name ids and row offsets (int32, int32, int64 buffers), and the rows
        that could not be read as ``(row, reason)`` (see the twin's ``CallTable.intern``).

        JSON text rows (a str per row, spans of one buffer, or an Arrow string column) and
        Arrow list<struct> columns are canonicalised from their bytes; lists of dicts through
        the dicts."""
        cdef _TrajState st
        if args_mode not in ARGS_MODES:
            raise ValueError(f"args_mode must be one of {ARGS_MODES}, not {args_mode!r}")
        self._memo_for(name_key, args_key, args_required, name_fn)
        memset(&st, 0, sizeof(st))
        st.tj.dbl_canon = _traj_dbl_canon
        errors = []
        try:
            if rv_push_i64(&st.offsets, 0) != 0:
                raise MemoryError()
            if _traj_is_arrow(trajectories):
                # the buffers are read directly: refuse broken ones, as the twin refuses them
                # (check_arrow: Arrow's full validation).  A column of JSON text is checked
                # as it is read instead (see _arrow_text), which costs nothing extra.
                if not _traj_reads_text(trajectories, name_key, args_key, args_mode):
                    _traj_check_arrow(trajectories)
                chunks = trajectories.chunks if hasattr(trajectories, "chunks") else [trajectories]
                for chunk in chunks:
                    self._arrow_chunk(&st, chunk, trajectories, name_key, args_key, args_required, args_mode,
                                      name_fn, errors)
            elif isinstance(trajectories, _TrajJsonSpans):
                self._spans(&st, trajectories, name_key, args_key, args_required, args_mode, name_fn, errors)
            else:
                seq = trajectories if isinstance(trajectories, list) else list(trajectories)
                self._rows(&st, seq, 0, name_key, args_key, args_required, args_mode, name_fn, errors)
            return (PyBytes_FromStringAndSize(<char*>st.calls.data, st.calls.n * 4),
                    PyBytes_FromStringAndSize(<char*>st.names.data, st.names.n * 4),
                    PyBytes_FromStringAndSize(<char*>st.offsets.data, st.offsets.n * 8),
                    errors)
        finally:
            free(st.key.data)
            free(st.calls.data)
            free(st.names.data)
            free(st.offsets.data)
            free(st.row_names)
            free(st.row_args)
            free(st.batch_start)
            free(st.batch_end)
            free(st.batch_hash)
            free(st.batch_ids)
            free(st.batch_names)
            free(st.call_names)
            free(st.call_keep)
            rv_tjson_free(&st.tj)
            rv_tpy_free(&st.tpy)

    cdef int _rows(self, _TrajState* st, list seq, Py_ssize_t row_base, str name_key, str args_key,
                   bint args_required, str args_mode, object name_fn, list errors) except -1:
        """Rows of Python values (lists of dicts, JSON text, None, ...)."""
        cdef Py_ssize_t row, mark
        cdef bint done
        cdef bint string_mode = args_mode == "string"
        cdef bint fast = not string_mode and name_key != args_key
        cdef bint exact_keys = type(name_key) is str and type(args_key) is str
        if exact_keys:
            hash(name_key)
            hash(args_key)  # cached in the str, where rv_tpy_memo_row reads it
        cdef bytes nk = name_key.encode("utf-8", "surrogatepass"), ak = args_key.encode("utf-8", "surrogatepass")
        cdef Py_ssize_t n = len(seq)
        for row in range(n):
            traj = seq[row]
            mark = st.calls.n
            if fast and row + RV_PREFETCH_ROWS_AHEAD < n:
                # a str keeps its text right after its header: a few rows ahead, ask for both
                rv_prefetch_bytes(<const char*>PyList_GET_ITEM(seq, row + RV_PREFETCH_ROWS_AHEAD),
                                  RV_PREFETCH_ROW_BYTES)
            try:
                if fast and PyUnicode_Check(traj):
                    done = self._json_row(st, traj, nk, ak, args_required, name_fn)
                elif fast and PyList_CheckExact(traj):
                    done = self._dict_row(st, traj, name_key, args_key, args_required, name_fn, exact_keys)
                else:
                    done = False
                if not done:
                    st.calls.n = mark
                    st.names.n = mark
                    self._py_row(st, traj, name_key, args_key, args_required, string_mode, name_fn)
            except (_TrajBadRow, TypeError, ValueError, RecursionError):
                st.calls.n = mark
                st.names.n = mark
                errors.append((row_base + row, _traj_describe_bad(
                    traj, name_key, args_key, args_required, args_mode, name_fn)))
            if rv_push_i64(&st.offsets, st.calls.n) != 0:
                raise MemoryError()
        return 0

    cdef int _spans(self, _TrajState* st, object spans, str name_key, str args_key, bint args_required,
                    str args_mode, object name_fn, list errors) except -1:
        """Rows of JSON text standing in one buffer (``JsonSpans``, checked when made): each
        span parsed in place, its UTF-8 checked as it is read; a row that does not read
        there is decoded (``JsonSpans.value``) for the Python path, as a str row is."""
        cdef const uint8_t[::1] data = spans.data
        cdef const int64_t[::1] starts = spans.starts
        cdef const int64_t[::1] ends = spans.ends
        cdef Py_ssize_t row, n = starts.shape[0], mark
        cdef const char* base = <const char*>&data[0] if data.shape[0] else _TRAJ_EMPTY
        cdef bint done
        cdef bint fast = args_mode == "json" and name_key != args_key
        cdef bytes nk = name_key.encode("utf-8", "surrogatepass"), ak = args_key.encode("utf-8", "surrogatepass")
        st.tj.check_utf8 = 1
        try:
            for row in range(n):
                mark = st.calls.n
                if starts[row] >= 0:
                    try:
                        done = fast and self._json_span(st, base + starts[row], ends[row] - starts[row], nk, ak,
                                                        args_required, name_fn)
                        if not done:
                            st.calls.n = mark
                            st.names.n = mark
                            self._py_row(st, spans.value(row), name_key, args_key, args_required,
                                         args_mode == "string", name_fn)
                    except (_TrajBadRow, TypeError, ValueError, RecursionError):
                        st.calls.n = mark
                        st.names.n = mark
                        try:
                            reason = _traj_describe_bad(spans.value(row), name_key, args_key, args_required,
                                                        args_mode, name_fn)
                        except ValueError as exc:  # not UTF-8
                            reason = str(exc)
                        errors.append((row, reason))
                if rv_push_i64(&st.offsets, st.calls.n) != 0:
                    raise MemoryError()
        finally:
            st.tj.check_utf8 = 0
        return 0

    cdef int _arrow_chunk(self, _TrajState* st, object arr, object column, str name_key, str args_key,
                          bint args_required, str args_mode, object name_fn, list errors) except -1:
        cdef Py_ssize_t base = st.offsets.n - 1
        import pyarrow as pa
        typ = arr.type
        fast = args_mode == "json" and name_key != args_key
        if _traj_reads_text(arr, name_key, args_key, args_mode):
            return self._arrow_text(st, arr, column, base, name_key, args_key, args_required, args_mode, name_fn,
                                    errors)
        if fast and (pa.types.is_list(typ) or pa.types.is_large_list(typ)) and pa.types.is_struct(typ.value_type):
            if _traj_struct_layout(typ.value_type, name_key, args_key) is not None:
                return self._arrow_calls(st, arr, base, name_key, args_key, args_required, args_mode, name_fn,
                                         errors)
        return self._rows(st, _traj_arrow_rows(arr), base, name_key, args_key, args_required, args_mode,
                          name_fn, errors)

    cdef int _arrow_text(self, _TrajState* st, object arr, object column, Py_ssize_t base, str name_key,
                         str args_key, bint args_required, str args_mode, object name_fn, list errors) except -1:
        """An Arrow string column of JSON text, parsed from its buffers.

        Checked as it is read, to the twin's verdict (Arrow's full validation of ``column``,
        the whole input): the structure by ``validate()``, the offsets by
        ``_traj_arrow_strings``, and the UTF-8 of every non-null value by reading it (a
        row read here had valid UTF-8: its strings were checked as they were parsed, or
        its calls are byte for byte ones the memo took from checked rows).  Any anomaly
        calls ``check_arrow(column)``, which raises the twin's error."""
        cdef Py_ssize_t row, n = len(arr), mark
        cdef const uint8_t[::1] data
        cdef const int64_t[::1] off
        cdef const uint8_t[::1] valid
        cdef const char* text
        cdef bint done
        cdef bytes nk = name_key.encode("utf-8", "surrogatepass"), ak = args_key.encode("utf-8", "surrogatepass")
        try:
            arr.validate()
            off, data, valid = _traj_arrow_strings(arr)
        except Exception:
            _traj_check_arrow(column)  # raises the twin's error
            raise
        st.tj.check_utf8 = 1
        try:
            for row in range(n):
                mark = st.calls.n
                try:
                    done = False
                    if valid[row]:
                        text = <const char*>&data[0] + off[row] if data.shape[0] else _TRAJ_EMPTY
                        done = self._json_span(st, text, off[row + 1] - off[row], nk, ak, args_required, name_fn)
                        if not done and not rv_json_utf8_valid(<const unsigned char*>text, off[row + 1] - off[row]):
                            raise _TrajBadColumn()
                    if not done:
                        st.calls.n = mark
                        st.names.n = mark
                        self._py_row(st, _traj_arrow_value(arr, row), name_key, args_key, args_required, False,
                                     name_fn)
                except _TrajBadColumn:
                    _traj_check_arrow(column)  # raises the twin's error
                    raise AssertionError("Arrow's full validation accepted a value that is not UTF-8")
                except (_TrajBadRow, TypeError, ValueError, RecursionError):
                    st.calls.n = mark
                    st.names.n = mark
                    errors.append((base + row, _traj_describe_arrow(arr, row, name_key, args_key, args_required,
                                                                    args_mode, name_fn)))
                if rv_push_i64(&st.offsets, st.calls.n) != 0:
                    raise MemoryError()
        finally:
            st.tj.check_utf8 = 0
        return 0

    cdef int _arrow_row_calls(self, _TrajState* st, rv_tbuf* keys, int64_t first, int64_t last,
                              const char* name_data, const int64_t* name_off, const rv_taplan* plan,
                              const uint8_t* args_valid, object name_fn) except -1:
        """Calls first .. last of an Arrow struct column (one row): each name asked of the
        normaliser in turn, the kept calls' keys assembled, then interned together.
        ``args_valid`` NULL: no arguments.  (Pointers, not memoryviews: a memoryview
        argument costs a reference count per row.)"""
        cdef int64_t j, k = 0, start
        cdef int32_t nid
        if last - first > st.batch_cap:
            _traj_batch_grow(st, last - first)
        keys.n = 0
        try:
            for j in range(first, last):
                nid = self._name_bytes(name_data + name_off[j], name_off[j + 1] - name_off[j], name_fn)
                st.call_names[j - first] = nid
                if nid < 0:
                    continue
                start = keys.n
                if rv_tbuf_put(keys, <const char*>&nid, 4) != 0:
                    raise MemoryError()
                if args_valid == NULL or not args_valid[j]:
                    if rv_tbuf_put(keys, "null", 4) != 0:
                        raise MemoryError()
                else:
                    _traj_write_node(plan, 0, j, keys, &self.nan_counter)
                st.batch_start[k] = start
                st.batch_end[k] = keys.n
                k += 1
        finally:
            # on a normaliser's error too: the calls before it stay interned, as in the twin
            if rv_traj_table_add_many(&self.calls_v, keys.data, st.batch_start, st.batch_end, k, st.batch_hash,
                                      st.batch_ids) < 0:
                raise MemoryError("too many distinct tool calls")
        k = 0
        for j in range(last - first):
            nid = st.call_names[j]
            if nid >= 0:
                if rv_push_i32(&st.calls, st.batch_ids[k]) != 0 or rv_push_i32(&st.names, nid) != 0:
                    raise MemoryError()
                k += 1
        return 0

    cdef int _arrow_calls(self, _TrajState* st, object arr, Py_ssize_t base, str name_key, str args_key,
                          bint args_required, str args_mode, object name_fn, list errors) except -1:
        """An Arrow list<struct<name, args: struct | null>> column: names from the string
        buffers, each call's ``{...}`` written from the argument columns' buffers
        (``_TrajPlan``; null fields left out, as ``arrow_rows`` drops them).  Rows with
        anything unusual (a null row, call or name, a value that is not JSON) take the
        Python path."""
        cdef Py_ssize_t row, n = len(arr), j, mark, ncalls
        cdef int64_t first_call
        cdef const int64_t[::1] row_off
        cdef const uint8_t[::1] row_valid
        cdef const uint8_t[::1] name_data
        cdef const int64_t[::1] name_off
        cdef const uint8_t[::1] name_valid
        cdef const uint8_t[::1] args_valid
        cdef uint8_t[::1] bad_v
        cdef rv_tbuf args
        cdef bint ok, args_exist, have_args
        cdef _TrajPlan plan = None
        cdef const rv_taplan* ready = NULL
        cdef const char* names_p
        cdef const uint8_t* args_valid_p
        import numpy as np
        offsets = np.asarray(arr.offsets).astype(np.int64)
        first_call = offsets[0] if n else 0
        ncalls = (offsets[n] - first_call) if n else 0
        row_off = offsets - first_call
        row_valid = _traj_validity(arr)
        calls = arr.values.slice(first_call, ncalls)
        flat = dict(zip([calls.type.field(i).name for i in range(calls.type.num_fields)], calls.flatten()))
        name_off, name_data, name_valid = _traj_arrow_strings(flat[name_key])
        args_arr = flat.get(args_key)
        args_exist = args_arr is not None
        have_args = args_exist and not _traj_is_null_type(args_arr)
        bad_v = np.zeros(ncalls, np.uint8)
        if have_args:
            args_valid = _traj_validity(args_arr)
            plan = _traj_args_plan(args_arr, &self.nan_counter)
            ready = plan.ready()
            if plan.may_be_bad:
                for j in range(ncalls):
                    bad_v[j] = rv_ta_bad(ready, 0, j)
        names_p = <const char*>&name_data[0] if name_data.shape[0] else _TRAJ_EMPTY
        args_valid_p = &args_valid[0] if have_args and ncalls else NULL
        memset(&args, 0, sizeof(args))
        try:
            for row in range(n):
                mark = st.calls.n
                ok = row_valid[row] != 0 and (args_exist or not args_required)
                if ok:
                    for j in range(row_off[row], row_off[row + 1]):
                        if not name_valid[j] or bad_v[j]:  # UTF-8: see check_arrow in intern()
                            ok = False
                            break
                try:
                    if ok:
                        self._arrow_row_calls(st, &args, row_off[row], row_off[row + 1], names_p, &name_off[0],
                                              ready, args_valid_p, name_fn)
                    else:
                        self._py_row(st, _traj_arrow_value(arr, row), name_key, args_key, args_required, False,
                                     name_fn)
                except (_TrajBadRow, TypeError, ValueError, RecursionError):
                    st.calls.n = mark
                    st.names.n = mark
                    errors.append((base + row, _traj_describe_arrow(arr, row, name_key, args_key, args_required,
                                                                    args_mode, name_fn)))
                if rv_push_i64(&st.offsets, st.calls.n) != 0:
                    raise MemoryError()
        finally:
            free(args.data)
        return 0


cdef int _traj_check_csr(const int32_t[::1] ids, const int32_t[::1] names, const int64_t[::1] off,
                         str what) except -1:
    cdef Py_ssize_t k, rows = off.shape[0] - 1
    cdef int64_t max_row = _TRAJ_MAX_ROW  # read once: the module global is a Python int
    if off.shape[0] < 1 or off[0] != 0 or off[rows] != ids.shape[0]:
        raise ValueError(f"{what}: offsets must start at 0 and end at the number of calls (one name per call)")
    if names.shape[0] != ids.shape[0]:
        raise ValueError(f"{what}: offsets must start at 0 and end at the number of calls (one name per call)")
    for k in range(rows):
        if off[k] > off[k + 1]:
            raise ValueError(f"{what}: offsets must not decrease (row {k})")
        if off[k + 1] - off[k] > max_row:
            raise ValueError(f"{what}: row {k} has more than 2**31 - 1 calls")
    return 0


cdef enum:
    # rows a thread takes at a time in trajectory_pair_stats (the chunk of its dynamic schedule)
    _TRAJ_BLOCK = 256


def trajectory_pair_stats(const int32_t[::1] pred_calls, const int32_t[::1] pred_names,
                          const int64_t[::1] pred_off, const int32_t[::1] ref_calls,
                          const int32_t[::1] ref_names, const int64_t[::1] ref_off,
                          int64_t[:, ::1] out, uint8_t[::1] pred_matched=None,
                          uint8_t[::1] ref_matched=None, threads=None):
    """Per-row ``TRAJECTORY_STATS`` (see the twin's ``trajectory_pair_stats``)."""
    cdef Py_ssize_t rows = pred_off.shape[0] - 1, b, nblocks
    cdef int nt
    cdef int64_t failures = 0
    cdef rv_traj_scratch* sc
    cdef rv_traj_scratch one
    cdef bint want_pm = pred_matched is not None, want_rm = ref_matched is not None
    if ref_off.shape[0] - 1 != rows:
        raise ValueError(f"{rows} predicted rows but {ref_off.shape[0] - 1} reference rows")
    _traj_check_csr(pred_calls, pred_names, pred_off, "pred")
    _traj_check_csr(ref_calls, ref_names, ref_off, "ref")
    if out.shape[0] != rows or out.shape[1] != RV_T_NSTATS:
        raise ValueError(f"out must be an int64 array of shape ({rows}, {RV_T_NSTATS})")
    if want_pm and pred_matched.shape[0] != pred_calls.shape[0]:
        raise ValueError("pred_matched must have one entry per predicted call")
    if want_rm and ref_matched.shape[0] != ref_calls.shape[0]:
        raise ValueError("ref_matched must have one entry per reference call")
    if rows == 0:
        return
    cdef const int32_t* PC = &pred_calls[0] if pred_calls.shape[0] else NULL
    cdef const int32_t* PN = &pred_names[0] if pred_names.shape[0] else NULL
    cdef const int32_t* RC = &ref_calls[0] if ref_calls.shape[0] else NULL
    cdef const int32_t* RN = &ref_names[0] if ref_names.shape[0] else NULL
    cdef uint8_t* PM = &pred_matched[0] if want_pm and pred_matched.shape[0] else NULL
    cdef uint8_t* RM = &ref_matched[0] if want_rm and ref_matched.shape[0] else NULL
    cdef const int64_t* PO = &pred_off[0]
    cdef const int64_t* RO = &ref_off[0]
    cdef int64_t* OUT = &out[0, 0]
    nt = _resolve_threads(threads, rows)
    if nt == 1:
        # one thread: no OpenMP team to start and no dynamic schedule to ask for work
        memset(&one, 0, sizeof(one))
        with nogil:
            failures = rv_traj_rows(&one, PC, PN, PO, RC, RN, RO, 0, rows, OUT, PM, RM)
        rv_traj_scratch_free(&one)
    else:
        nblocks = (rows + _TRAJ_BLOCK - 1) // _TRAJ_BLOCK
        with nogil, parallel(num_threads=nt):
            sc = <rv_traj_scratch*>calloc(1, sizeof(rv_traj_scratch))
            for b in prange(nblocks, schedule="dynamic"):
                if sc == NULL:
                    failures += 1
                else:
                    failures += rv_traj_rows(sc, PC, PN, PO, RC, RN, RO, b * _TRAJ_BLOCK,
                                             min((b + 1) * _TRAJ_BLOCK, rows), OUT, PM, RM)
            if sc != NULL:
                rv_traj_scratch_free(sc)
                free(sc)
    if failures:
        raise MemoryError("out of memory in trajectory_pair_stats")


def name_substitutions(const int32_t[::1] pred_names, const int64_t[::1] pred_off,
                       const int32_t[::1] ref_names, const int64_t[::1] ref_off):
    """Substitutions of a minimum edit alignment of each row's tool names (see the twin)."""
    cdef Py_ssize_t rows = pred_off.shape[0] - 1, r, total = 0, m, t
    cdef int64_t got = 0, np, nr
    cdef rv_traj_scratch sc
    if ref_off.shape[0] - 1 != rows:
        raise ValueError(f"{rows} predicted rows but {ref_off.shape[0] - 1} reference rows")
    _traj_check_csr(pred_names, pred_names, pred_off, "pred")
    _traj_check_csr(ref_names, ref_names, ref_off, "ref")
    for r in range(rows):
        total += min(pred_off[r + 1] - pred_off[r], ref_off[r + 1] - ref_off[r])
    cdef int64_t* orow = <int64_t*>malloc(max(total, 1) * 8)
    cdef int32_t* oref = <int32_t*>malloc(max(total, 1) * 4)
    cdef int32_t* opred = <int32_t*>malloc(max(total, 1) * 4)
    memset(&sc, 0, sizeof(sc))
    m = 0
    try:
        if orow == NULL or oref == NULL or opred == NULL:
            raise MemoryError()
        with nogil:
            for r in range(rows):
                np = pred_off[r + 1] - pred_off[r]
                nr = ref_off[r + 1] - ref_off[r]
                if np == 0 or nr == 0:
                    continue
                got = rv_traj_substitutions(&sc, &ref_names[ref_off[r]], nr, &pred_names[pred_off[r]], np,
                                            oref + m, opred + m)
                if got < 0:
                    break
                for t in range(got):
                    orow[m + t] = r
                m += got
        if got < 0:
            raise MemoryError("out of memory in name_substitutions")
        return (PyBytes_FromStringAndSize(<char*>orow, m * 8),
                PyBytes_FromStringAndSize(<char*>oref, m * 4),
                PyBytes_FromStringAndSize(<char*>opred, m * 4))
    finally:
        rv_traj_scratch_free(&sc)
        free(orow)
        free(oref)
        free(opred)


cdef extern from "pydict.h":
    int rv_dict_iter_agrees(object d)
    void rv_dict_direct_off()
    int rv_dict_direct()
    int rv_dict_direct_set(int on)
    ctypedef struct rv_dict_iter:
        pass
    void rv_dict_iter_init(rv_dict_iter* it, object d)
    int rv_dict_iter_next(rv_dict_iter* it, PyObject** key, PyObject** value)


def _dict_direct_reading(on=None):
    """Whether dicts are read from their tables (cext/pydict.h) rather than by PyDict_Next;
    ``on``: turn that on or off first (for benchmarks/ab_pydict.py; it stays off where the
    layout is not known or the self-check disagreed)."""
    if on is not None:
        rv_dict_direct_set(bool(on))
    return bool(rv_dict_direct())


def _dict_items(dict d):
    """``d``'s items as the readers of dicts see them (for the tests: ``list(d.items())``)."""
    cdef rv_dict_iter it
    cdef PyObject* key
    cdef PyObject* value
    out = []
    rv_dict_iter_init(&it, d)
    while rv_dict_iter_next(&it, &key, &value):
        out.append((<object>key, <object>value))
    return out


def _traj_dict_kinds():
    """Dicts of every kind the readers meet, for the check below."""
    class Instance:
        pass

    grown = {f"k{i}": i for i in range(300)}
    del grown["k0"], grown["k150"]
    mixed = {"a": 1, 2: "b", (3,): None, "d": 4.5}
    del mixed[2]
    obj = Instance()
    obj.x, obj.y = 1, 2
    return [{}, {"tool_name": "f", "tool_input": {"k": [1, "v"]}}, grown, mixed, {i: str(i) for i in range(100)},
            obj.__dict__, dict.fromkeys("abcdefgh")]


for _d in _traj_dict_kinds():
    if not rv_dict_iter_agrees(_d):  # another interpreter's layout: read through PyDict_Next
        rv_dict_direct_off()
        break
del _d

