# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Compiled core of respeval (private: use the public API in ``respeval``).

Entry points validate every buffer and offset they are given, then run C
kernels with the GIL released.  Anything that could index out of bounds is
rejected here with a ValueError, so the kernels carry no checks.
"""
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.unicode cimport PyUnicode_Check
from cython.parallel cimport parallel, prange
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object s, Py_ssize_t* size) except NULL

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static int rv_omp_max_threads(void) { return omp_get_max_threads(); }
    #else
    static int rv_omp_max_threads(void) { return 1; }
    #endif
    """
    int rv_omp_max_threads() noexcept nogil

cdef extern from "vocab.h":
    ctypedef struct rv_vocab:
        char* arena
        int64_t* start
        int32_t n
    int rv_vocab_init(rv_vocab* v) noexcept nogil
    void rv_vocab_free(rv_vocab* v) noexcept nogil
    int32_t rv_vocab_add(rv_vocab* v, const char* s, int64_t length) noexcept nogil
    int32_t rv_vocab_find(const rv_vocab* v, const char* s, int64_t length) noexcept nogil

cdef extern from "porter.h":
    int respeval_porter_stem(const char* word, int length, char* out, int out_cap) noexcept nogil

cdef extern from "rouge_kernels.h":
    ctypedef struct rv_scratch:
        pass
    int rv_scratch_init(rv_scratch* s, int64_t vocab_size) noexcept nogil
    void rv_scratch_free(rv_scratch* s) noexcept nogil
    int rv_ngram_overlaps(rv_scratch* s, const int32_t* a, int64_t la,
                          const int32_t* b, int64_t lb, int max_order,
                          int64_t* overlap) noexcept nogil
    int64_t rv_lcs_length(rv_scratch* s, const int32_t* a, int64_t la,
                          const int32_t* b, int64_t lb) noexcept nogil
    int64_t rv_lsum_hits(rv_scratch* s, const int32_t* ref, const int64_t* ref_sent,
                         int64_t nrs, const int32_t* cand, const int64_t* cand_sent,
                         int64_t ncs) noexcept nogil

cdef enum:
    # Below this many rows per thread the OpenMP team costs more than it saves.
    _MIN_ROWS_PER_THREAD = 64
    _STEM_NOT_SET = -1


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
    cdef int32_t* stem_of
    cdef int64_t stem_cap

    def __cinit__(self):
        if rv_vocab_init(&self.v) != 0:
            raise MemoryError("cannot allocate the vocabulary")
        self.stem_of = NULL
        self.stem_cap = 0

    def __dealloc__(self):
        rv_vocab_free(&self.v)
        free(self.stem_of)

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

    cdef int _ensure_stem_cap(self, int64_t need) noexcept nogil:
        cdef int64_t cap, i
        cdef int32_t* p
        if need <= self.stem_cap:
            return 0
        cap = self.stem_cap * 2 if self.stem_cap else 4096
        while cap < need:
            cap *= 2
        p = <int32_t*>realloc(self.stem_of, cap * sizeof(int32_t))
        if p == NULL:
            return -1
        for i in range(self.stem_cap, cap):
            p[i] = _STEM_NOT_SET
        self.stem_of = p
        self.stem_cap = cap
        return 0

    cdef int32_t _stem_id(self, int32_t tid, char* buf, int buf_cap) noexcept nogil:
        """Id of the Porter stem of ASCII token ``tid`` (tokens of length > 3 only;
        rouge-score leaves shorter ones alone).  -1 on failure."""
        cdef int64_t length
        cdef int slen
        cdef int32_t sid
        if self._ensure_stem_cap(<int64_t>tid + 1) != 0:
            return -1
        if self.stem_of[tid] != _STEM_NOT_SET:
            return self.stem_of[tid]
        length = self.v.start[tid + 1] - self.v.start[tid]
        if length <= 3:
            self.stem_of[tid] = tid
            return tid
        if length + 8 > buf_cap:
            return -2
        # the stem goes to a separate buffer: adding it may move the arena
        slen = respeval_porter_stem(self.v.arena + self.v.start[tid], <int>length, buf, buf_cap)
        if slen < 0:
            return -1
        sid = rv_vocab_add(&self.v, buf, slen)
        if sid < 0:
            return -1
        self.stem_of[tid] = sid
        return sid


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


# ---------------------------------------------------------------------------
# Tokenization (rouge-score's default tokenizer) straight to ids
# ---------------------------------------------------------------------------

cdef struct _IntBuf:
    char* data
    int64_t n
    int64_t cap
    int64_t item


cdef int _buf_push32(_IntBuf* b, int32_t x) noexcept nogil:
    cdef char* p
    if b.n == b.cap:
        b.cap = b.cap * 2 if b.cap else 1024
        p = <char*>realloc(b.data, b.cap * 4)
        if p == NULL:
            return -1
        b.data = p
    (<int32_t*>b.data)[b.n] = x
    b.n += 1
    return 0


cdef int _buf_push64(_IntBuf* b, int64_t x) noexcept nogil:
    cdef char* p
    if b.n == b.cap:
        b.cap = b.cap * 2 if b.cap else 1024
        p = <char*>realloc(b.data, b.cap * 8)
        if p == NULL:
            return -1
        b.data = p
    (<int64_t*>b.data)[b.n] = x
    b.n += 1
    return 0


cdef int _emit(Vocab vocab, char* tok, int64_t tlen, bint stem, char* stembuf,
               int stembuf_cap, _IntBuf* ids) noexcept nogil:
    cdef int32_t tid = rv_vocab_add(&vocab.v, tok, tlen)
    if tid < 0:
        return -1
    if stem and tlen > 3:
        tid = vocab._stem_id(tid, stembuf, stembuf_cap)
        if tid < 0:
            return -1
    return _buf_push32(ids, tid)


cdef int _tokenize_one(Vocab vocab, const unsigned char* s, Py_ssize_t n, bint stem,
                       char* tok, char* stembuf, int buf_cap,
                       _IntBuf* ids, _IntBuf* sent_off) noexcept nogil:
    """Tokenize one text like rouge-score (lower(), [^a-z0-9]+ separates), and cut
    sentences at '\\n' (rouge-score's rougeLsum).  Token-less sentences are not
    recorded: they cannot change any ROUGE statistic.  ``tok`` holds at least
    ``n + 1`` bytes.  Returns 0, or -1 on allocation failure."""
    cdef Py_ssize_t p = 0
    cdef int64_t tlen = 0
    cdef int64_t sent_start = ids.n
    cdef unsigned char c
    cdef uint64_t cp
    cdef int extra, k
    while p < n:
        c = s[p]
        if c < 0x80:
            if (c >= 97 and c <= 122) or (c >= 48 and c <= 57):
                tok[tlen] = <char>c
                tlen += 1
            elif c >= 65 and c <= 90:
                tok[tlen] = <char>(c + 32)
                tlen += 1
            else:
                if tlen:
                    if _emit(vocab, tok, tlen, stem, stembuf, buf_cap, ids) != 0:
                        return -1
                    tlen = 0
                if c == 10 and ids.n > sent_start:
                    if _buf_push64(sent_off, ids.n) != 0:
                        return -1
                    sent_start = ids.n
            p += 1
            continue
        # Non-ASCII: str.lower() maps only U+0130 (to "i" + U+0307) and the Kelvin
        # sign U+212A (to "k") into [a-z0-9]; every other code point separates.
        if c >= 0xF0:
            extra = 3
            cp = c & 0x07
        elif c >= 0xE0:
            extra = 2
            cp = c & 0x0F
        elif c >= 0xC0:
            extra = 1
            cp = c & 0x1F
        else:
            extra = 0
            cp = 0
        if p + extra >= n:
            extra = <int>(n - p - 1)
        for k in range(extra):
            cp = (cp << 6) | (s[p + 1 + k] & 0x3F)
        p += 1 + extra
        if cp == 0x212A:
            tok[tlen] = 107  # 'k'
            tlen += 1
            continue
        if cp == 0x130:
            tok[tlen] = 105  # 'i'
            tlen += 1
        if tlen:
            if _emit(vocab, tok, tlen, stem, stembuf, buf_cap, ids) != 0:
                return -1
            tlen = 0
    if tlen:
        if _emit(vocab, tok, tlen, stem, stembuf, buf_cap, ids) != 0:
            return -1
    if ids.n > sent_start:
        if _buf_push64(sent_off, ids.n) != 0:
            return -1
    return 0


def tokenize_rouge(Vocab vocab, list texts, bint stem=False):
    """Tokenize ``texts`` with rouge-score's default tokenizer into ``vocab`` ids.

    Returns ``(ids, offsets, sent_offsets, row_sents)`` as bytes buffers of
    int32, int64, int64, int64: row ``k`` is ``ids[offsets[k]:offsets[k+1]]``;
    its non-empty newline-separated sentences are
    ``sent_offsets[row_sents[k]] .. sent_offsets[row_sents[k+1]]`` (token
    positions; consecutive values bound one sentence).
    """
    cdef Py_ssize_t n = len(texts), i, L, maxlen = 0
    cdef const char** ptrs = <const char**>malloc(max(n, 1) * sizeof(char*))
    cdef Py_ssize_t* lens = <Py_ssize_t*>malloc(max(n, 1) * sizeof(Py_ssize_t))
    cdef int64_t* offsets = <int64_t*>malloc((n + 1) * sizeof(int64_t))
    cdef int64_t* row_sents = <int64_t*>malloc((n + 1) * sizeof(int64_t))
    cdef _IntBuf ids
    cdef _IntBuf sent_off
    cdef char* tok = NULL
    cdef char* stembuf = NULL
    cdef int buf_cap
    cdef int rc = 0
    cdef list keep = []
    ids.data = NULL; ids.n = 0; ids.cap = 0; ids.item = 4
    sent_off.data = NULL; sent_off.n = 0; sent_off.cap = 0; sent_off.item = 8
    try:
        if ptrs == NULL or lens == NULL or offsets == NULL or row_sents == NULL:
            raise MemoryError()
        for i in range(n):
            t = texts[i]
            if not PyUnicode_Check(t):
                raise TypeError(f"text at row {i} is {type(t).__name__}, not str")
            try:
                ptrs[i] = PyUnicode_AsUTF8AndSize(t, &L)
            except UnicodeEncodeError:
                # lone surrogates: encode them anyway; as non-letters they only separate
                b = (<str>t).encode("utf-8", "surrogatepass")
                keep.append(b)
                ptrs[i] = b
                L = len(b)
            lens[i] = L
            if L > maxlen:
                maxlen = L
        buf_cap = <int>min(maxlen + 16, 2147483000)
        tok = <char*>malloc(maxlen + 16)
        stembuf = <char*>malloc(maxlen + 16)
        if tok == NULL or stembuf == NULL or _buf_push64(&sent_off, 0) != 0:
            raise MemoryError()
        with nogil:
            for i in range(n):
                offsets[i] = ids.n
                row_sents[i] = sent_off.n - 1
                rc = _tokenize_one(vocab, <const unsigned char*>ptrs[i], lens[i], stem,
                                   tok, stembuf, buf_cap, &ids, &sent_off)
                if rc != 0:
                    break
            offsets[n] = ids.n
            row_sents[n] = sent_off.n - 1
        if rc != 0:
            raise MemoryError("out of memory while tokenizing")
        return (PyBytes_FromStringAndSize(ids.data, ids.n * 4),
                PyBytes_FromStringAndSize(<char*>offsets, (n + 1) * 8),
                PyBytes_FromStringAndSize(sent_off.data, sent_off.n * 8),
                PyBytes_FromStringAndSize(<char*>row_sents, (n + 1) * 8))
    finally:
        free(ptrs); free(lens); free(offsets); free(row_sents)
        free(ids.data); free(sent_off.data); free(tok); free(stembuf)


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


# ---------------------------------------------------------------------------
# ROUGE statistics
# ---------------------------------------------------------------------------

def rouge_pair_stats(const int32_t[::1] pred_ids, const int64_t[::1] pred_off,
                     const int32_t[::1] ref_ids, const int64_t[::1] ref_off,
                     const int64_t[::1] pair_pred, const int64_t[::1] pair_ref,
                     int max_order, bint want_lcs, int64_t vocab_size,
                     int64_t[:, ::1] overlaps, int64_t[::1] lcs, threads=None):
    """Clipped n-gram overlaps (orders 1..max_order) and LCS lengths per pair.

    Pair ``k`` compares prediction row ``pair_pred[k]`` with reference row
    ``pair_ref[k]``.  ``overlaps`` is ``int64[pairs, max_order]``; ``lcs`` is
    ``int64[pairs]`` (written only when ``want_lcs``).
    """
    cdef Py_ssize_t npairs = pair_pred.shape[0], k
    cdef int nt
    cdef int64_t failures = 0
    cdef int64_t pa, pr, r
    cdef rv_scratch* sc
    cdef bint ok
    if max_order < 0 or max_order > 64:
        raise ValueError(f"max_order must be in 0..64, got {max_order}")
    if vocab_size < 0:
        raise ValueError("vocab_size must be >= 0")
    _check_ids(pred_ids, vocab_size, "pred_ids")
    _check_ids(ref_ids, vocab_size, "ref_ids")
    _check_offsets(pred_off, pred_ids.shape[0], "pred_off", "len(pred_ids)")
    _check_offsets(ref_off, ref_ids.shape[0], "ref_off", "len(ref_ids)")
    _check_pairs(pair_pred, pair_ref, pred_off.shape[0] - 1, ref_off.shape[0] - 1)
    if overlaps.shape[0] != npairs or (overlaps.shape[1] != max_order and npairs > 0):
        raise ValueError(f"overlaps must have shape ({npairs}, {max_order})")
    if want_lcs and lcs.shape[0] != npairs:
        raise ValueError(f"lcs must have length {npairs}")
    if npairs == 0:
        return
    cdef const int32_t* P = &pred_ids[0] if pred_ids.shape[0] else NULL
    cdef const int32_t* R = &ref_ids[0] if ref_ids.shape[0] else NULL
    nt = _resolve_threads(threads, npairs)
    with nogil, parallel(num_threads=nt):
        sc = <rv_scratch*>malloc(sizeof(rv_scratch))
        ok = sc != NULL and rv_scratch_init(sc, vocab_size) == 0
        for k in prange(npairs, schedule="dynamic", chunksize=32):
            if not ok:
                failures += 1
            else:
                pa = pair_pred[k]
                pr = pair_ref[k]
                if max_order > 0:
                    if rv_ngram_overlaps(sc, P + pred_off[pa], pred_off[pa + 1] - pred_off[pa],
                                         R + ref_off[pr], ref_off[pr + 1] - ref_off[pr],
                                         max_order, &overlaps[k, 0]) != 0:
                        failures += 1
                if want_lcs:
                    r = rv_lcs_length(sc, P + pred_off[pa], pred_off[pa + 1] - pred_off[pa],
                                      R + ref_off[pr], ref_off[pr + 1] - ref_off[pr])
                    if r < 0:
                        failures += 1
                    lcs[k] = r
        if sc != NULL:
            rv_scratch_free(sc)
            free(sc)
    if failures:
        raise MemoryError("out of memory in rouge_pair_stats")


def lsum_pair_stats(const int32_t[::1] pred_ids, const int64_t[::1] pred_sent_off,
                    const int64_t[::1] pred_row_sents,
                    const int32_t[::1] ref_ids, const int64_t[::1] ref_sent_off,
                    const int64_t[::1] ref_row_sents,
                    const int64_t[::1] pair_pred, const int64_t[::1] pair_ref,
                    int64_t vocab_size, int64_t[::1] hits, threads=None):
    """rouge-score's summary-level union-LCS hits per pair (ROUGE-Lsum)."""
    cdef Py_ssize_t npairs = pair_pred.shape[0], k
    cdef int nt
    cdef int64_t failures = 0
    cdef int64_t pa, pr, r
    cdef rv_scratch* sc
    cdef bint ok
    if vocab_size < 0:
        raise ValueError("vocab_size must be >= 0")
    _check_ids(pred_ids, vocab_size, "pred_ids")
    _check_ids(ref_ids, vocab_size, "ref_ids")
    _check_offsets(pred_sent_off, pred_ids.shape[0], "pred_sent_off", "len(pred_ids)")
    _check_offsets(ref_sent_off, ref_ids.shape[0], "ref_sent_off", "len(ref_ids)")
    _check_offsets(pred_row_sents, pred_sent_off.shape[0] - 1, "pred_row_sents", "len(pred_sent_off) - 1")
    _check_offsets(ref_row_sents, ref_sent_off.shape[0] - 1, "ref_row_sents", "len(ref_sent_off) - 1")
    _check_pairs(pair_pred, pair_ref, pred_row_sents.shape[0] - 1, ref_row_sents.shape[0] - 1)
    if hits.shape[0] != npairs:
        raise ValueError(f"hits must have length {npairs}")
    if npairs == 0:
        return
    cdef const int32_t* P = &pred_ids[0] if pred_ids.shape[0] else NULL
    cdef const int32_t* R = &ref_ids[0] if ref_ids.shape[0] else NULL
    nt = _resolve_threads(threads, npairs)
    with nogil, parallel(num_threads=nt):
        sc = <rv_scratch*>malloc(sizeof(rv_scratch))
        ok = sc != NULL and rv_scratch_init(sc, vocab_size) == 0
        for k in prange(npairs, schedule="dynamic", chunksize=8):
            if not ok:
                failures += 1
            else:
                pa = pair_pred[k]
                pr = pair_ref[k]
                r = rv_lsum_hits(sc, R, &ref_sent_off[ref_row_sents[pr]],
                                 ref_row_sents[pr + 1] - ref_row_sents[pr],
                                 P, &pred_sent_off[pred_row_sents[pa]],
                                 pred_row_sents[pa + 1] - pred_row_sents[pa])
                if r < 0:
                    failures += 1
                hits[k] = r
        if sc != NULL:
            rv_scratch_free(sc)
            free(sc)
    if failures:
        raise MemoryError("out of memory in lsum_pair_stats")
