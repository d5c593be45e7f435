# Shared pieces of the core: thread counts, the vocabulary, Porter stems, the
# checks every entry point runs on its buffers, and the launch block of the id
# kernels.  Twin: respeval/_core_py/common.py and checks.py.

cdef enum:
    # Below this many rows per thread the OpenMP team costs more than it saves.
    _MIN_ROWS_PER_THREAD = 64


def simd_path():
    """The instruction-set path the core runs (RESPEVAL_SIMD forces one)."""
    return rv_isa_names[rv_isa].decode()


def simd_paths():
    """Every path this CPU can run, portable first."""
    return [rv_isa_names[i].decode() for i in range(RV_ISA_COUNT) if rv_isa_supported(i)]


import os as _os

# the instruction-set path, picked once at import
_simd_status = rv_dispatch_init(_os.environ.get("RESPEVAL_SIMD", "").encode("ascii", "replace"))
if _simd_status != 0:
    _wanted = _os.environ.get("RESPEVAL_SIMD")
    _known = ", ".join(rv_isa_names[i].decode() for i in range(RV_ISA_COUNT))
    if _simd_status == -1:
        raise RuntimeError(f"RESPEVAL_SIMD={_wanted!r} is not a path of the core (choose one of {_known}, or unset it)")
    raise RuntimeError(f"RESPEVAL_SIMD={_wanted!r}: this CPU cannot run that path (it can run: "
                       f"{', '.join(simd_paths())}); unset RESPEVAL_SIMD to pick the best one")


def openmp_threads():
    """Threads an unrestricted parallel loop would use (1 without OpenMP)."""
    return rv_omp_max_threads()


cdef int _resolve_threads(object threads, Py_ssize_t work) except -1:
    cdef int n
    if threads is None or threads == 0:
        n = rv_omp_max_threads()
    else:
        n = int(threads)
        if n < 0:
            raise ValueError(f"threads must be >= 0, got {threads}")
    if work < _MIN_ROWS_PER_THREAD * 2:
        return 1
    if n > work // _MIN_ROWS_PER_THREAD:
        n = <int>(work // _MIN_ROWS_PER_THREAD)
    return max(n, 1)


cdef inline int _gc_pause() noexcept:
    """Pause the cyclic garbage collector while an entry point builds thousands of lists
    (a collection every 700 of them would walk every young object, none of them in a
    cycle); returns whether it was running, for _gc_resume.  With it, mt_reference_rows
    took 0.23-0.68x and tokenize_13a_tokens 0.88-0.94x the time (benchmarks/ab_mt.py)."""
    return PyGC_Disable()


cdef inline void _gc_resume(int was_running) noexcept:
    if was_running:
        PyGC_Enable()


# ---------------------------------------------------------------------------
# Vocabulary
# ---------------------------------------------------------------------------

cdef class Vocab:
    """Token string -> dense int32 id, shared by everything scored together.

    Ids are assigned in first-seen order and never change.  With stemming, a
    token's stem is interned in the same id space, so a raw "run" and the stem
    of "running" are the same id (as rouge-score compares them).
    """
    cdef rv_vocab v

    def __cinit__(self):
        if rv_vocab_init(&self.v) != 0:
            raise MemoryError("cannot allocate the vocabulary")

    def __dealloc__(self):
        rv_vocab_free(&self.v)

    def __len__(self):
        return self.v.n

    def add(self, str token):
        """Id of ``token``, adding it if new."""
        cdef bytes b = token.encode("utf-8", "surrogatepass")
        cdef int32_t r = rv_vocab_add(&self.v, b, len(b))
        if r < 0:
            raise MemoryError("vocabulary is full")
        return r

    def get(self, str token, default=-1):
        """Id of ``token``, or ``default`` when it was never added."""
        cdef bytes b = token.encode("utf-8", "surrogatepass")
        cdef int32_t r = rv_vocab_find(&self.v, b, len(b))
        return default if r < 0 else r

    def token(self, Py_ssize_t i):
        """The token string with id ``i``."""
        if i < 0 or i >= self.v.n:
            raise IndexError(f"token id {i} out of range for a vocabulary of {self.v.n}")
        return self.v.arena[self.v.start[i]:self.v.start[i + 1]].decode("utf-8", "surrogatepass")

    def tokens(self):
        """All token strings, in id order."""
        return [self.token(i) for i in range(self.v.n)]

    def stem_id(self, Py_ssize_t i):
        """Id of the Porter stem of token ``i`` (interned after it; tokens of at most
        3 characters are their own stem, as rouge-score leaves them unstemmed)."""
        cdef int64_t k, start, end, chars = 0
        cdef bint ascii = True
        cdef int32_t r
        if i < 0 or i >= self.v.n:
            raise IndexError(f"token id {i} out of range for a vocabulary of {self.v.n}")
        start, end = self.v.start[i], self.v.start[i + 1]
        for k in range(start, end):
            chars += (<uint8_t>self.v.arena[k] & 0xC0) != 0x80
            ascii = ascii and <uint8_t>self.v.arena[k] < 0x80
        if chars <= 3:
            return i
        if not ascii:
            raise ValueError(f"cannot stem {self.token(i)!r}: the Porter stemmer takes ASCII words")
        r = rv_vocab_stem(&self.v, <int32_t>i)
        if r < 0:
            raise MemoryError("vocabulary is full")
        return r

    def intern(self, list tokens):
        """Ids (int32 bytes buffer) of a flat list of token strings."""
        cdef Py_ssize_t n = len(tokens), i
        cdef int32_t* out = <int32_t*>malloc(max(n, 1) * sizeof(int32_t))
        cdef int32_t r
        if out == NULL:
            raise MemoryError()
        try:
            for i in range(n):
                t = tokens[i]
                if not PyUnicode_Check(t):
                    raise TypeError(f"token {i} is {type(t).__name__}, not str")
                b = (<str>t).encode("utf-8", "surrogatepass")
                r = rv_vocab_add(&self.v, b, len(b))
                if r < 0:
                    raise MemoryError("vocabulary is full")
                out[i] = r
            return PyBytes_FromStringAndSize(<char*>out, n * sizeof(int32_t))
        finally:
            free(out)


def porter_stem(str word):
    """Porter stem (NLTK_EXTENSIONS mode) of a lowercase ASCII word."""
    cdef bytes b = word.encode("ascii")
    cdef Py_ssize_t n = len(b)
    cdef int cap = <int>n + 16
    cdef char* buf = <char*>malloc(cap)
    cdef const char* src = b
    cdef int r
    if buf == NULL:
        raise MemoryError()
    try:
        with nogil:
            r = respeval_porter_stem(src, <int>n, buf, cap)
        if r < 0:
            raise ValueError(f"cannot stem {word!r}")
        return buf[:r].decode("ascii")
    finally:
        free(buf)


def first_non_str(list items):
    """Index of the first item that is not a str (subclasses count as str), or -1."""
    cdef Py_ssize_t i, n = len(items)
    for i in range(n):
        if not PyUnicode_Check(items[i]):
            return i
    return -1


# ---------------------------------------------------------------------------
# Texts read in place
# ---------------------------------------------------------------------------

cdef extern from "Python.h":
    bint PyList_CheckExact(object o)
    bint PyTuple_CheckExact(object o)
    PyObject* PySequence_Fast_GET_ITEM(object o, Py_ssize_t i)


cdef struct _Texts:
    # the PEP 393 storage of n str objects, each held by a reference of ours (so the
    # storage stays valid with the GIL released, whatever happens to the caller's list)
    Py_ssize_t n
    Py_ssize_t held
    PyObject** objs
    int* kinds
    const void** datas
    int64_t* lens


cdef inline void _texts_init(_Texts* t) noexcept:
    memset(t, 0, sizeof(_Texts))


cdef int _texts_read(_Texts* t, object texts) except -1:
    """Hold every str of ``texts`` and point ``t`` at its storage; a non-str names its row."""
    cdef object seq = texts if PyList_CheckExact(texts) or PyTuple_CheckExact(texts) else tuple(texts)
    cdef Py_ssize_t i, n = len(seq)
    cdef PyObject* o
    t.n = n
    t.objs = <PyObject**>malloc(max(n, 1) * sizeof(PyObject*))
    t.kinds = <int*>malloc(max(n, 1) * sizeof(int))
    t.datas = <const void**>malloc(max(n, 1) * sizeof(void*))
    t.lens = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
    if t.objs == NULL or t.kinds == NULL or t.datas == NULL or t.lens == NULL:
        raise MemoryError()
    for i in range(n):
        if i + 24 < n:  # the objects are scattered in memory: ask for them ahead
            rv_prefetch_object(PySequence_Fast_GET_ITEM(seq, i + 24))
        o = PySequence_Fast_GET_ITEM(seq, i)
        if not PyUnicode_Check(<object>o):
            what = "None" if <object>o is None else type(<object>o).__name__
            raise TypeError(f"text at row {i} is {what}, not str")
        Py_INCREF(<object>o)
        t.objs[i] = o
        t.held = i + 1
        t.kinds[i] = PyUnicode_KIND(<object>o)
        t.datas[i] = PyUnicode_DATA(<object>o)
        t.lens[i] = PyUnicode_GET_LENGTH(<object>o)
    return 0


cdef void _texts_free(_Texts* t) noexcept:
    cdef Py_ssize_t i
    for i in range(t.held):
        Py_DECREF(<object>t.objs[i])
    free(t.objs)
    free(t.kinds)
    free(t.datas)
    free(t.lens)
    _texts_init(t)


# ---------------------------------------------------------------------------
# Validation of caller-provided buffers
# ---------------------------------------------------------------------------

cdef int _check_ids(const int32_t[::1] ids, int64_t vocab_size, str name) except -1:
    cdef Py_ssize_t i, n = ids.shape[0]
    cdef int32_t bad = 0
    cdef Py_ssize_t where = -1
    with nogil:
        for i in range(n):
            if ids[i] < 0 or ids[i] >= vocab_size:
                where = i
                bad = ids[i]
                break
    if where >= 0:
        raise ValueError(f"{name}[{where}] = {bad} is not a token id below vocab_size={vocab_size}")
    return 0


cdef int _check_offsets(const int64_t[::1] off, int64_t limit, str name, str limit_name) except -1:
    cdef Py_ssize_t i, n = off.shape[0]
    cdef Py_ssize_t where = -1
    if n < 1:
        raise ValueError(f"{name} must hold at least one value (it has length rows + 1)")
    with nogil:
        if off[0] < 0 or off[0] > limit:
            where = 0
        else:
            for i in range(1, n):
                if off[i] < off[i - 1] or off[i] > limit:
                    where = i
                    break
    if where >= 0:
        raise ValueError(f"{name}[{where}] = {off[where]} breaks 0 <= offsets nondecreasing <= {limit_name} ({limit})")
    return 0


cdef int _check_csr(const int32_t[::1] ids, const int64_t[::1] off, int64_t vocab_size,
                    str ids_name, str off_name) except -1:
    """A CSR batch every kernel may index without checks: ids below vocab_size,
    offsets nondecreasing within the ids."""
    _check_ids(ids, vocab_size, ids_name)
    _check_offsets(off, ids.shape[0], off_name, f"len({ids_name})")
    return 0


cdef int _check_pairs(const int64_t[::1] pair_a, const int64_t[::1] pair_b,
                      int64_t na, int64_t nb) except -1:
    cdef Py_ssize_t i, n = pair_a.shape[0]
    cdef Py_ssize_t where = -1
    if pair_b.shape[0] != n:
        raise ValueError(f"pair arrays differ in length ({n} vs {pair_b.shape[0]})")
    with nogil:
        for i in range(n):
            if pair_a[i] < 0 or pair_a[i] >= na or pair_b[i] < 0 or pair_b[i] >= nb:
                where = i
                break
    if where >= 0:
        raise ValueError(f"pair {where} = ({pair_a[where]}, {pair_b[where]}) is out of range "
                         f"for {na} predictions and {nb} references")
    return 0


cdef int _check_multi_reference(const int32_t[::1] hyp_ids, const int64_t[::1] hyp_off,
                                const int32_t[::1] ref_ids, const int64_t[::1] ref_off,
                                const int64_t[::1] row_refs, int64_t vocab_size) except -1:
    """A batch of hypotheses whose row k has the reference rows row_refs[k] .. row_refs[k+1]."""
    _check_vocab_size(vocab_size)
    _check_csr(hyp_ids, hyp_off, vocab_size, "hyp_ids", "hyp_off")
    _check_csr(ref_ids, ref_off, vocab_size, "ref_ids", "ref_off")
    _check_offsets(row_refs, ref_off.shape[0] - 1, "row_refs", "len(ref_off) - 1")
    if row_refs.shape[0] != hyp_off.shape[0]:
        raise ValueError(f"row_refs must have length rows + 1 = {hyp_off.shape[0]}")
    return 0


cdef int _check_vocab_size(int64_t vocab_size) except -1:
    if vocab_size < 0:
        raise ValueError("vocab_size must be >= 0")
    return 0


cdef inline const int32_t* _ids_ptr(const int32_t[::1] ids) noexcept:
    return &ids[0] if ids.shape[0] else NULL


# ---------------------------------------------------------------------------
# The launch block of the row kernels
# ---------------------------------------------------------------------------
#
# Every row kernel runs the same way: rows (or pairs) 0..n-1 spread over OpenMP
# threads, each thread with its own scratch, the GIL released, failures counted
# (an exception cannot leave a nogil prange) and raised after the loop.  Entry
# points validate their buffers, fill a context of raw pointers (typed memoryviews
# cannot live in a C struct) and hand _run_rows a per-row cdef function.

ctypedef void* (*_ScratchNew)(int64_t vocab_size) noexcept nogil
ctypedef void (*_ScratchFree)(void* scratch) noexcept nogil
ctypedef int (*_RowFn)(void* ctx, void* scratch, Py_ssize_t k) noexcept nogil


cdef void* _id_scratch_new(int64_t vocab_size) noexcept nogil:
    cdef rv_pair_scratch* sc = <rv_pair_scratch*>malloc(sizeof(rv_pair_scratch))
    if sc != NULL and rv_pair_scratch_init(sc, vocab_size) != 0:
        rv_pair_scratch_free(sc)
        free(sc)
        return NULL
    return sc


cdef void _id_scratch_free(void* sc) noexcept nogil:
    if sc != NULL:
        rv_pair_scratch_free(<rv_pair_scratch*>sc)
        free(sc)


cdef int _run_rows(Py_ssize_t n, int nt, Py_ssize_t chunk, _RowFn row, void* ctx,
                   _ScratchNew new_scratch, _ScratchFree free_scratch, int64_t vocab_size,
                   str name) except -1:
    """row(ctx, scratch, k) for k in 0..n-1 on ``nt`` threads; a row returns 0,
    -1 when out of memory, or -3 on an internal error."""
    cdef int64_t failures = 0, internal = 0
    cdef void* sc
    cdef Py_ssize_t k
    cdef int r
    if n <= 0:
        return 0
    with nogil, parallel(num_threads=nt):
        sc = new_scratch(vocab_size)
        for k in prange(n, schedule="dynamic", chunksize=chunk):
            if sc == NULL:
                failures += 1
            else:
                r = row(ctx, sc, k)
                if r == -1:
                    failures += 1
                elif r != 0:
                    internal += 1
        free_scratch(sc)
    if internal:
        raise RuntimeError(f"{name}: internal error (please report this input)")
    if failures:
        raise MemoryError(f"out of memory in {name}")
    return 0
