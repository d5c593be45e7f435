# Trajectory kernels: interning tool calls, per-row trajectory statistics, name alignments.
# Included from _core.pyx.  Twin: src/respeval/_core_py/trajectory.py (same names, same
# results; its docstrings are the reference).  Every entry point checks lengths and
# offsets before the C kernels (cext/trajectory.h) run without checks.

from cpython.dict cimport PyDict_Check, PyDict_GetItem
from cpython.float cimport PyFloat_AS_DOUBLE, PyFloat_Check
from cpython.list cimport PyList_Check, PyList_GET_ITEM, PyList_GET_SIZE
from cpython.long cimport PyLong_Check
from cpython.object cimport PyObject
from cpython.tuple cimport PyTuple_Check, PyTuple_GET_ITEM, PyTuple_GET_SIZE
from libc.math cimport floor, isinf
from libc.stdio cimport snprintf
from libc.string cimport memcmp, memset

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

cdef extern from "trajectory.h":
    ctypedef struct rv_traj_scratch:
        pass
    void rv_traj_scratch_free(rv_traj_scratch* s) noexcept nogil
    int rv_traj_row(rv_traj_scratch* s, const int32_t* pc, const int32_t* pn, int64_t np,
                    const int32_t* rc, const int32_t* rn, int64_t nr, int64_t* out,
                    uint8_t* pm, uint8_t* rm) noexcept nogil
    int64_t rv_traj_substitutions(rv_traj_scratch* s, const int32_t* r, int64_t nr, const int32_t* p,
                                  int64_t np, int32_t* out_ref, int32_t* out_pred) noexcept nogil
    int RV_T_NSTATS

import json as _traj_json
from collections.abc import Mapping as _TrajMapping

from respeval._core_py import trajectory as _traj_twin

ARGS_MODES = _traj_twin.ARGS_MODES
TRAJECTORY_STATS = _traj_twin.TRAJECTORY_STATS
cdef int _TRAJ_MAX_DEPTH = _traj_twin.MAX_ARGS_DEPTH
_TRAJ_MAX_ROW = 2**31 - 1  # positions are packed in 32 bits by the kernels


class _TrajBadRow(Exception):
    """A row that cannot be interned; the twin's describe_bad_trajectory says why."""


cdef struct _TrajBuf:
    char* data
    Py_ssize_t n
    Py_ssize_t cap


cdef int _traj_grow(_TrajBuf* b, Py_ssize_t extra) except -1:
    cdef Py_ssize_t cap
    cdef char* d
    if b.n + extra <= b.cap:
        return 0
    cap = max(b.cap * 2, b.n + extra, 256)
    d = <char*>realloc(b.data, cap)
    if d == NULL:
        raise MemoryError()
    b.data = d
    b.cap = cap
    return 0


cdef inline int _traj_put(_TrajBuf* b, const char* s, Py_ssize_t n) except -1:
    _traj_grow(b, n)
    memcpy(b.data + b.n, s, n)
    b.n += n
    return 0


cdef int _traj_put_str(_TrajBuf* b, object s) except -1:
    """UTF-8 of ``s`` (lone surrogates kept, as the twin's str keys keep them)."""
    cdef Py_ssize_t n
    cdef const char* p
    try:
        p = PyUnicode_AsUTF8AndSize(s, &n)
    except UnicodeEncodeError:
        raw = (<str>s).encode("utf-8", "surrogatepass")
        return _traj_put(b, raw, len(raw))
    return _traj_put(b, p, n)


cdef int _traj_put_quoted_utf8(_TrajBuf* b, const char* p, Py_ssize_t n) except -1:
    cdef Py_ssize_t i
    cdef char c
    _traj_grow(b, 2 * n + 2)
    b.data[b.n] = b'"'
    b.n += 1
    for i in range(n):
        c = p[i]
        if c == b'"' or c == b'\\':
            b.data[b.n] = b'\\'
            b.n += 1
        b.data[b.n] = c
        b.n += 1
    b.data[b.n] = b'"'
    b.n += 1
    return 0


cdef int _traj_put_quoted(_TrajBuf* b, object s) except -1:
    cdef Py_ssize_t n, i
    cdef const char* p
    cdef char c
    try:
        p = PyUnicode_AsUTF8AndSize(s, &n)
    except UnicodeEncodeError:
        raw = (<str>s).encode("utf-8", "surrogatepass")
        p = raw
        n = len(raw)
    _traj_grow(b, 2 * n + 2)
    b.data[b.n] = b'"'
    b.n += 1
    for i in range(n):
        c = p[i]
        if c == b'"' or c == b'\\':
            b.data[b.n] = b'\\'
            b.n += 1
        b.data[b.n] = c
        b.n += 1
    b.data[b.n] = b'"'
    b.n += 1
    return 0


cdef int _traj_canon(object v, _TrajBuf* b, int depth, int64_t* nan_counter) except -1:
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


cdef int _traj_canon_dict_slow(object v, _TrajBuf* b, int depth, int64_t* nan_counter) except -1:
    keys = sorted(v)
    _traj_put(b, "{", 1)
    for i, key in enumerate(keys):
        if i:
            _traj_put(b, ",", 1)
        _traj_put_quoted(b, key)
        _traj_put(b, ":", 1)
        _traj_canon(v[key], b, depth + 1, nan_counter)
    return _traj_put(b, "}", 1)


cdef int _traj_canon_dict(object v, _TrajBuf* b, int depth, int64_t* nan_counter) except -1:
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


cdef class CallTable:
    """Interns tool calls into dense ids (see ``respeval._core_py.trajectory.CallTable``)."""
    cdef rv_vocab names_v
    cdef rv_vocab calls_v
    cdef dict name_cache
    cdef int64_t nan_counter

    def __cinit__(self):
        if rv_vocab_init(&self.names_v) != 0 or rv_vocab_init(&self.calls_v) != 0:
            raise MemoryError("cannot allocate the call table")
        self.name_cache = {}
        self.nan_counter = 0

    def __dealloc__(self):
        rv_vocab_free(&self.names_v)
        rv_vocab_free(&self.calls_v)

    def __len__(self):
        return self.calls_v.n

    @property
    def n_names(self):
        return self.names_v.n

    def name(self, Py_ssize_t i):
        if i < 0 or i >= self.names_v.n:
            raise IndexError(f"name id {i} out of range for {self.names_v.n} names")
        return self.names_v.arena[self.names_v.start[i]:self.names_v.start[i + 1]].decode("utf-8", "surrogatepass")

    def names(self):
        return [self.name(i) for i in range(self.names_v.n)]

    def name_id(self, str name, default=-1):
        cdef bytes raw = name.encode("utf-8", "surrogatepass")
        cdef int32_t r = rv_vocab_find(&self.names_v, raw, len(raw))
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
        r = rv_vocab_add(&self.names_v, p, n)
        if r < 0:
            raise MemoryError("too many tool names")
        return r

    def intern(self, trajectories, str name_key="tool_name", str args_key="tool_input",
               bint args_required=True, str args_mode="json", name_fn=None):
        """Call ids, name ids and row offsets (int32, int32, int64 buffers), and the rows
        that could not be read as ``(row, reason)`` (see the twin's ``CallTable.intern``)."""
        cdef Py_ssize_t nrows, row, i, ncalls, mark, cap = 0
        cdef _TrajBuf key
        cdef rv_i32buf calls, names
        cdef int64_t* offsets = NULL
        cdef PyObject** row_names = NULL
        cdef PyObject** row_args = NULL
        cdef PyObject** grown
        cdef PyObject* found
        cdef int32_t nid, cid
        cdef bint string_mode
        cdef object traj, call, name, args, mapped
        if args_mode not in ARGS_MODES:
            raise ValueError(f"args_mode must be one of {ARGS_MODES}, not {args_mode!r}")
        string_mode = args_mode == "string"
        seq = trajectories if isinstance(trajectories, list) else list(trajectories)
        nrows = len(seq)
        errors = []
        key.data = NULL; key.n = 0; key.cap = 0
        calls.data = NULL; calls.n = 0; calls.cap = 0
        names.data = NULL; names.n = 0; names.cap = 0
        offsets = <int64_t*>malloc((nrows + 1) * sizeof(int64_t))
        if offsets == NULL:
            raise MemoryError()
        name_key_o = name_key
        args_key_o = args_key
        cache = self.name_cache
        try:
            offsets[0] = 0
            for row in range(nrows):
                traj = seq[row]
                mark = calls.n
                try:
                    # pass 1: the row's shape (the twin's read_trajectory), nothing interned
                    if PyUnicode_Check(traj):
                        traj = _traj_json.loads(traj)
                    if PyList_Check(traj) or PyTuple_Check(traj):
                        pass
                    else:
                        raise _TrajBadRow()
                    ncalls = PyList_GET_SIZE(traj) if PyList_Check(traj) else PyTuple_GET_SIZE(traj)
                    if ncalls > _TRAJ_MAX_ROW:
                        raise _TrajBadRow()
                    if ncalls > cap:
                        cap = max(ncalls, 2 * cap, 16)
                        grown = <PyObject**>realloc(row_names, cap * sizeof(PyObject*))
                        if grown == NULL:
                            raise MemoryError()
                        row_names = grown
                        grown = <PyObject**>realloc(row_args, cap * sizeof(PyObject*))
                        if grown == NULL:
                            raise MemoryError()
                        row_args = grown
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
                        row_names[i] = <PyObject*>name
                        row_args[i] = <PyObject*>args
                    # pass 2: normalise names, canonicalise arguments, intern
                    for i in range(ncalls):
                        name = <object>row_names[i]
                        args = <object>row_args[i]
                        if name_fn is not None:
                            if name in cache:
                                mapped = cache[name]
                            else:
                                mapped = name_fn(name)
                                if mapped is not None and not PyUnicode_Check(mapped):
                                    raise _TrajBadRow()
                                cache[name] = mapped
                            if mapped is None:
                                continue
                            name = mapped
                        key.n = 0
                        _traj_grow(&key, 4)
                        key.n = 4
                        if string_mode:
                            _traj_put_str(&key, _traj_json.dumps(args))
                        else:
                            _traj_canon(args, &key, 0, &self.nan_counter)
                        nid = self._name(name)
                        memcpy(key.data, &nid, 4)
                        cid = rv_vocab_add(&self.calls_v, key.data, key.n)
                        if cid < 0:
                            raise MemoryError("too many distinct tool calls")
                        if rv_push32(&calls, cid) != 0 or rv_push32(&names, nid) != 0:
                            raise MemoryError()
                except (_TrajBadRow, TypeError, ValueError, RecursionError):
                    calls.n = mark
                    names.n = mark
                    errors.append((row, _traj_twin.describe_bad_trajectory(
                        seq[row], name_key, args_key, args_required, args_mode, name_fn)))
                offsets[row + 1] = calls.n
            return (PyBytes_FromStringAndSize(<char*>calls.data, calls.n * 4),
                    PyBytes_FromStringAndSize(<char*>names.data, names.n * 4),
                    PyBytes_FromStringAndSize(<char*>offsets, (nrows + 1) * 8),
                    errors)
        finally:
            free(key.data)
            free(calls.data)
            free(names.data)
            free(offsets)
            free(row_names)
            free(row_args)


cdef int _traj_check_csr(const int32_t[::1] ids, const int32_t[::1] names, const int64_t[::1] off,
                         str what) except -1:
    cdef Py_ssize_t k, rows = off.shape[0] - 1
    if off.shape[0] < 1 or off[0] != 0 or off[rows] != ids.shape[0]:
        raise ValueError(f"{what}: offsets must start at 0 and end at the number of calls (one name per call)")
    if names.shape[0] != ids.shape[0]:
        raise ValueError(f"{what}: offsets must start at 0 and end at the number of calls (one name per call)")
    for k in range(rows):
        if off[k] > off[k + 1]:
            raise ValueError(f"{what}: offsets must not decrease (row {k})")
        if off[k + 1] - off[k] > _TRAJ_MAX_ROW:
            raise ValueError(f"{what}: row {k} has more than 2**31 - 1 calls")
    return 0


def trajectory_pair_stats(const int32_t[::1] pred_calls, const int32_t[::1] pred_names,
                          const int64_t[::1] pred_off, const int32_t[::1] ref_calls,
                          const int32_t[::1] ref_names, const int64_t[::1] ref_off,
                          int64_t[:, ::1] out, uint8_t[::1] pred_matched=None,
                          uint8_t[::1] ref_matched=None, threads=None):
    """Per-row ``TRAJECTORY_STATS`` (see the twin's ``trajectory_pair_stats``)."""
    cdef Py_ssize_t rows = pred_off.shape[0] - 1, r
    cdef int nt
    cdef int64_t failures = 0
    cdef rv_traj_scratch* sc
    cdef uint8_t* pm
    cdef uint8_t* rm
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
    nt = _resolve_threads(threads, rows)
    with nogil, parallel(num_threads=nt):
        sc = <rv_traj_scratch*>calloc(1, sizeof(rv_traj_scratch))
        for r in prange(rows, schedule="dynamic", chunksize=256):
            if sc == NULL:
                failures += 1
            else:
                pm = PM + pred_off[r] if PM != NULL else NULL
                rm = RM + ref_off[r] if RM != NULL else NULL
                if rv_traj_row(sc, PC + pred_off[r] if PC != NULL else NULL,
                               PN + pred_off[r] if PN != NULL else NULL, pred_off[r + 1] - pred_off[r],
                               RC + ref_off[r] if RC != NULL else NULL,
                               RN + ref_off[r] if RN != NULL else NULL, ref_off[r + 1] - ref_off[r],
                               &out[r, 0], pm, rm) != 0:
                    failures += 1
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
