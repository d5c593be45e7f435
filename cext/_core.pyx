# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Compiled core of respeval (private: use the public API in ``respeval``).

Entry points validate every buffer and offset they are given, then run C
kernels with the GIL released.  Anything that could index out of bounds is
rejected here with a ValueError, so the kernels carry no checks.
"""
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.unicode cimport PyUnicode_Check
from cython.parallel cimport parallel, prange
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcpy

cdef extern from "Python.h":
    # PEP 393 storage, read in place: 1, 2 or 4 bytes per code point
    int PyUnicode_KIND(object o)
    void* PyUnicode_DATA(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)
    char* PyBytes_AS_STRING(object o)

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
        uint64_t* hash
        int32_t n
    int rv_vocab_init(rv_vocab* v) noexcept nogil
    void rv_vocab_free(rv_vocab* v) noexcept nogil
    int32_t rv_vocab_add(rv_vocab* v, const char* s, int64_t length) noexcept nogil
    int32_t rv_vocab_add_h(rv_vocab* v, const char* s, int64_t length, uint64_t h) noexcept nogil
    int32_t rv_vocab_find(const rv_vocab* v, const char* s, int64_t length) noexcept nogil

cdef extern from "tokenize.h":
    ctypedef struct rv_i32buf:
        int32_t* data
        int64_t n
        int64_t cap
    ctypedef struct rv_i64buf:
        int64_t* data
        int64_t n
        int64_t cap
    int rv_tokenize_rouge(rv_vocab* v, int stem, int kind, const void* data, int64_t length,
                          char* tok, rv_i32buf* ids, rv_i64buf* sents) noexcept nogil
    int rv_push32(rv_i32buf* b, int32_t x) noexcept nogil

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
    int rv_ngram_clip_maxref(rv_scratch* s, const int32_t* a, int64_t la, const int32_t* refs,
                             const int64_t* ref_off, int64_t nrefs, int max_order,
                             int64_t* correct) noexcept nogil
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


# ---------------------------------------------------------------------------
# Tokenization (rouge-score's default tokenizer) straight to ids
# ---------------------------------------------------------------------------

cdef struct _TokChunk:
    rv_vocab vocab
    rv_i32buf ids
    rv_i64buf sents
    int64_t* row_off
    int64_t* row_sent
    int32_t* gmap
    Py_ssize_t first
    Py_ssize_t last
    int64_t maxlen
    int64_t ids_base
    int64_t sent_base
    int failed


cdef void _tok_chunk_free(_TokChunk* ch) noexcept nogil:
    rv_vocab_free(&ch.vocab)
    free(ch.ids.data)
    free(ch.sents.data)
    free(ch.row_off)
    free(ch.row_sent)
    free(ch.gmap)


cdef int _tokenize_chunk(_TokChunk* ch, const int* kinds, const void** datas,
                         const Py_ssize_t* lens, bint stem) noexcept nogil:
    """Tokenize rows [first, last) into the chunk's own vocabulary (local ids)."""
    cdef Py_ssize_t r, nrows = ch.last - ch.first
    cdef char* tok
    ch.row_off = <int64_t*>malloc((nrows + 1) * sizeof(int64_t))
    ch.row_sent = <int64_t*>malloc((nrows + 1) * sizeof(int64_t))
    tok = <char*>malloc(ch.maxlen + 8)  # rv_emit reads 8 bytes at a token's start
    if ch.row_off == NULL or ch.row_sent == NULL or tok == NULL or rv_vocab_init(&ch.vocab) != 0:
        free(tok)
        return -1
    for r in range(nrows):
        ch.row_off[r] = ch.ids.n
        ch.row_sent[r] = ch.sents.n
        if rv_tokenize_rouge(&ch.vocab, stem, kinds[ch.first + r], datas[ch.first + r],
                             lens[ch.first + r], tok, &ch.ids, &ch.sents) != 0:
            free(tok)
            return -1
    ch.row_off[nrows] = ch.ids.n
    ch.row_sent[nrows] = ch.sents.n
    free(tok)
    return 0


cdef int _merge_chunk(rv_vocab* glob, _TokChunk* ch) noexcept nogil:
    """Map the chunk's local ids to ids of the shared vocabulary, in local id order
    (which is first-seen order, so ids come out as a serial run would give them)."""
    cdef int32_t j, n = ch.vocab.n
    cdef int32_t g
    ch.gmap = <int32_t*>malloc(max(n, 1) * sizeof(int32_t))
    if ch.gmap == NULL:
        return -1
    for j in range(n):
        g = rv_vocab_add_h(glob, ch.vocab.arena + ch.vocab.start[j],
                           ch.vocab.start[j + 1] - ch.vocab.start[j], ch.vocab.hash[j])
        if g < 0:
            return -1
        ch.gmap[j] = g
    return 0


def tokenize_rouge(Vocab vocab, list texts, bint stem=False, threads=None):
    """Tokenize ``texts`` with rouge-score's default tokenizer into ``vocab`` ids.

    Returns ``(ids, offsets, sent_offsets, row_sents)`` as bytes buffers of
    int32, int64, int64, int64: row ``k`` is ``ids[offsets[k]:offsets[k+1]]``;
    its non-empty newline-separated sentences are bounded by
    ``sent_offsets[row_sents[k] : row_sents[k+1] + 1]`` (token positions).
    Rows are tokenized in parallel chunks, each with its own vocabulary, merged
    in order afterwards, so ids do not depend on the thread count.
    """
    cdef Py_ssize_t n = len(texts), i, c, r, k, nrows
    cdef int nt = _resolve_threads(threads, n // 32)
    cdef Py_ssize_t nchunks = 1 if nt == 1 else min(nt * 4, max(n // 1024, 1))
    cdef int* kinds = <int*>malloc(max(n, 1) * sizeof(int))
    cdef const void** datas = <const void**>malloc(max(n, 1) * sizeof(void*))
    cdef Py_ssize_t* lens = <Py_ssize_t*>malloc(max(n, 1) * sizeof(Py_ssize_t))
    cdef _TokChunk* chunks = <_TokChunk*>calloc(nchunks, sizeof(_TokChunk))
    cdef int64_t total_ids = 0, total_sents = 0
    cdef int failures = 0
    cdef _TokChunk* ch
    cdef int32_t* out_ids
    cdef int64_t* out_off
    cdef int64_t* out_sent
    cdef int64_t* out_rows
    try:
        if kinds == NULL or datas == NULL or lens == NULL or chunks == NULL:
            raise MemoryError()
        for i in range(n):
            t = texts[i]
            if not PyUnicode_Check(t):
                what = "None" if t is None else type(t).__name__
                raise TypeError(f"text at row {i} is {what}, not str")
            kinds[i] = PyUnicode_KIND(t)
            datas[i] = PyUnicode_DATA(t)
            lens[i] = PyUnicode_GET_LENGTH(t)
        for c in range(nchunks):
            chunks[c].first = n * c // nchunks
            chunks[c].last = n * (c + 1) // nchunks
            for i in range(chunks[c].first, chunks[c].last):
                if lens[i] > chunks[c].maxlen:
                    chunks[c].maxlen = lens[i]
        with nogil:
            if nchunks == 1:
                failures += _tokenize_chunk(&chunks[0], kinds, datas, lens, stem) != 0
            else:
                for c in prange(nchunks, schedule="dynamic", num_threads=nt):
                    failures += _tokenize_chunk(&chunks[c], kinds, datas, lens, stem) != 0
            if failures == 0:
                for c in range(nchunks):
                    if _merge_chunk(&vocab.v, &chunks[c]) != 0:
                        failures += 1
                        break
                    chunks[c].ids_base = total_ids
                    chunks[c].sent_base = total_sents
                    total_ids += chunks[c].ids.n
                    total_sents += chunks[c].sents.n
        if failures:
            raise MemoryError("out of memory while tokenizing")
        ids_b = PyBytes_FromStringAndSize(NULL, total_ids * 4)
        off_b = PyBytes_FromStringAndSize(NULL, (n + 1) * 8)
        sent_b = PyBytes_FromStringAndSize(NULL, (total_sents + 1) * 8)
        rows_b = PyBytes_FromStringAndSize(NULL, (n + 1) * 8)
        out_ids = <int32_t*>PyBytes_AS_STRING(ids_b)
        out_off = <int64_t*>PyBytes_AS_STRING(off_b)
        out_sent = <int64_t*>PyBytes_AS_STRING(sent_b)
        out_rows = <int64_t*>PyBytes_AS_STRING(rows_b)
        with nogil:
            out_sent[0] = 0
            out_off[n] = total_ids
            out_rows[n] = total_sents
            for c in prange(nchunks, schedule="static", num_threads=nt if nchunks > 1 else 1):
                ch = &chunks[c]
                for k in range(ch.ids.n):
                    out_ids[ch.ids_base + k] = ch.gmap[ch.ids.data[k]]
                for k in range(ch.sents.n):
                    out_sent[1 + ch.sent_base + k] = ch.ids_base + ch.sents.data[k]
                nrows = ch.last - ch.first
                for r in range(nrows):
                    out_off[ch.first + r] = ch.ids_base + ch.row_off[r]
                    out_rows[ch.first + r] = ch.sent_base + ch.row_sent[r]
        return ids_b, off_b, sent_b, rows_b
    finally:
        if chunks != NULL:
            for c in range(nchunks):
                _tok_chunk_free(&chunks[c])
        free(chunks); free(kinds); free(datas); free(lens)


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
    _check_csr(pred_ids, pred_off, vocab_size, "pred_ids", "pred_off")
    _check_csr(ref_ids, ref_off, vocab_size, "ref_ids", "ref_off")
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
    _check_csr(pred_ids, pred_sent_off, vocab_size, "pred_ids", "pred_sent_off")
    _check_csr(ref_ids, ref_sent_off, vocab_size, "ref_ids", "ref_sent_off")
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


# ---------------------------------------------------------------------------
# BLEU statistics
# ---------------------------------------------------------------------------

def bleu_clipped_counts(const int32_t[::1] hyp_ids, const int64_t[::1] hyp_off,
                        const int32_t[::1] ref_ids, const int64_t[::1] ref_off,
                        const int64_t[::1] row_refs, int max_order, int64_t vocab_size,
                        int64_t[:, ::1] correct, threads=None):
    """sacrebleu's clipped n-gram matches per row, clipping by the maximum count
    over the row's references: row ``k``'s references are reference rows
    ``row_refs[k] .. row_refs[k+1]``.  ``correct`` is ``int64[rows, max_order]``."""
    cdef Py_ssize_t n = hyp_off.shape[0] - 1, k
    cdef int nt
    cdef int64_t failures = 0
    cdef rv_scratch* sc
    cdef bint ok
    if max_order < 1 or max_order > 64:
        raise ValueError(f"max_order must be in 1..64, got {max_order}")
    if vocab_size < 0:
        raise ValueError("vocab_size must be >= 0")
    _check_csr(hyp_ids, hyp_off, vocab_size, "hyp_ids", "hyp_off")
    _check_csr(ref_ids, ref_off, vocab_size, "ref_ids", "ref_off")
    _check_offsets(row_refs, ref_off.shape[0] - 1, "row_refs", "len(ref_off) - 1")
    if row_refs.shape[0] != n + 1:
        raise ValueError(f"row_refs must have length rows + 1 = {n + 1}")
    if correct.shape[0] != n or (n > 0 and correct.shape[1] != max_order):
        raise ValueError(f"correct must have shape ({n}, {max_order})")
    if n == 0:
        return
    cdef const int32_t* H = &hyp_ids[0] if hyp_ids.shape[0] else NULL
    cdef const int32_t* R = &ref_ids[0] if ref_ids.shape[0] else NULL
    nt = _resolve_threads(threads, n)
    with nogil, parallel(num_threads=nt):
        sc = <rv_scratch*>malloc(sizeof(rv_scratch))
        ok = sc != NULL and rv_scratch_init(sc, vocab_size) == 0
        for k in prange(n, schedule="dynamic", chunksize=32):
            if not ok:
                failures += 1
            elif rv_ngram_clip_maxref(sc, H + hyp_off[k], hyp_off[k + 1] - hyp_off[k], R,
                                      &ref_off[row_refs[k]], row_refs[k + 1] - row_refs[k],
                                      max_order, &correct[k, 0]) != 0:
                failures += 1
        if sc != NULL:
            rv_scratch_free(sc)
            free(sc)
    if failures:
        raise MemoryError("out of memory in bleu_clipped_counts")


# ---------------------------------------------------------------------------
# Row pairing
# ---------------------------------------------------------------------------

def first_non_str(list items):
    """Index of the first item that is not a str (subclasses count as str), or -1."""
    cdef Py_ssize_t i, n = len(items)
    for i in range(n):
        if not PyUnicode_Check(items[i]):
            return i
    return -1


def pair_single_references(list predictions, list references):
    """Fast path of the row pairing for one str reference per row.

    Returns ``(distinct_references, pair_ref)`` with ``pair_ref`` an int64 bytes
    buffer (pair ``k`` is row ``k``), or None when a row is not a plain str (the
    caller's general path then names the offending row).  Distinct texts are
    found with a dict, so a reference shared by many rows is tokenized once.
    """
    cdef Py_ssize_t n = len(references), i
    cdef dict index = {}
    cdef list distinct = []
    cdef object found
    if len(predictions) != n:
        return None
    for i in range(n):
        if not PyUnicode_Check(predictions[i]):
            return None
    out = PyBytes_FromStringAndSize(NULL, n * 8)
    cdef int64_t* pair_ref = <int64_t*>PyBytes_AS_STRING(out)
    for i in range(n):
        r = references[i]
        if not PyUnicode_Check(r):
            return None
        found = index.get(r)
        if found is None:
            found = len(distinct)
            index[r] = found
            distinct.append(r)
        pair_ref[i] = <int64_t>found
    return distinct, out


# ---------------------------------------------------------------------------
# Exact sums and the streaming (Poisson) bootstrap
# ---------------------------------------------------------------------------

def exact_sum_bins(const double[:] values, int64_t[:, ::1] out):
    """Add ``values`` into exponent bins for an exactly rounded sum.

    ``out`` is int64[3, 2048]: bin E (a biased float64 exponent) receives the signed
    53-bit integer mantissa in three 18-bit pieces (high, middle, low), so nothing
    is rounded; ``respeval._exact`` turns the bins into one exact integer.
    Returns -1, or the position of the first non-finite value (then nothing is added).
    """
    cdef Py_ssize_t n = values.shape[0], i
    cdef uint64_t bits, mant
    cdef int64_t sm
    cdef int e
    cdef Py_ssize_t bad = -1
    if out.shape[0] != 3 or out.shape[1] != 2048:
        raise ValueError("out must have shape (3, 2048)")
    if n >= 2**44:
        raise ValueError("too many values for one call")
    with nogil:
        for i in range(n):
            memcpy(&bits, &values[i], 8)
            if ((bits >> 52) & 0x7FF) == 0x7FF:
                bad = i
                break
    if bad >= 0:
        return bad
    with nogil:
        for i in range(n):
            memcpy(&bits, &values[i], 8)
            e = <int>((bits >> 52) & 0x7FF)
            mant = bits & 0xFFFFFFFFFFFFFULL
            if e:
                mant |= 0x10000000000000ULL
            sm = <int64_t>mant
            if bits >> 63:
                out[0, e] -= sm >> 36
                out[1, e] -= (sm >> 18) & 0x3FFFF
                out[2, e] -= sm & 0x3FFFF
            else:
                out[0, e] += sm >> 36
                out[1, e] += (sm >> 18) & 0x3FFFF
                out[2, e] += sm & 0x3FFFF
    return -1


cdef extern from "poisson_bootstrap.h":
    uint64_t rv_pb_row_hash(uint64_t seed, uint64_t key) noexcept nogil
    uint32_t rv_pb_weight(uint64_t row_hash, uint32_t b) noexcept nogil
    void rv_pb_accumulate(const double* x, int64_t rows, int64_t cols, const int64_t* keys, uint64_t seed,
                          double* acc, int64_t n_rep, int64_t b0, int64_t b1, double* scratch) noexcept nogil
    int RV_PB_TILE


def poisson_weights(const int64_t[::1] keys, uint64_t seed, Py_ssize_t n_replicates):
    """The Poisson(1) weight of every (row key, replicate): uint8 bytes, rows x replicates."""
    cdef Py_ssize_t rows = keys.shape[0], i, b
    cdef uint64_t h
    if n_replicates < 0 or n_replicates >= 2**32:
        raise ValueError("n_replicates must be in [0, 2**32)")
    out = bytearray(rows * n_replicates)
    cdef uint8_t[::1] view = out
    with nogil:
        for i in range(rows):
            h = rv_pb_row_hash(seed, <uint64_t>keys[i])
            for b in range(n_replicates):
                view[i * n_replicates + b] = <uint8_t>rv_pb_weight(h, <uint32_t>b)
    return bytes(out)


def poisson_bootstrap_add(const double[:, ::1] stats, const int64_t[::1] keys, uint64_t seed,
                          double[:, ::1] acc, threads=None):
    """Add the rows of ``stats`` (rows x cols) to Poisson bootstrap accumulators.

    ``acc`` is (cols + 1) x replicates: ``acc[c, b] += w(key, b) * stats[., c]``
    and ``acc[cols, b] += w(key, b)``, row by row in row order, so the sums do not
    depend on how the rows are split into calls or on the thread count.
    """
    cdef Py_ssize_t rows = stats.shape[0], cols = stats.shape[1], n_rep = acc.shape[1]
    cdef Py_ssize_t per, t
    cdef int nt, failures = 0
    cdef int64_t b0, b1
    cdef double* scratch
    if keys.shape[0] != rows:
        raise ValueError(f"keys has {keys.shape[0]} entries for {rows} rows")
    if acc.shape[0] != cols + 1:
        raise ValueError(f"acc must have {cols + 1} rows (one per statistic, then the weights), got {acc.shape[0]}")
    if n_rep >= 2**32:
        raise ValueError("too many replicates")
    if rows == 0 or n_rep == 0:
        return
    nt = _resolve_threads(threads, rows * (n_rep // 16 + 1))
    # threads own disjoint replicate ranges, each a multiple of 8 wide
    per = ((n_rep + nt - 1) // nt + 7) // 8 * 8
    nt = <int>((n_rep + per - 1) // per)
    with nogil:
        for t in prange(nt, schedule="static", chunksize=1, num_threads=nt):
            b0 = t * per
            b1 = min(b0 + per, n_rep)
            scratch = <double*>malloc((RV_PB_TILE + 1) * (b1 - b0) * sizeof(double))
            if scratch == NULL:
                failures += 1
            else:
                rv_pb_accumulate(&stats[0, 0], rows, cols, &keys[0], seed, &acc[0, 0], n_rep, b0, b1, scratch)
                free(scratch)
    if failures:
        raise MemoryError("out of memory in poisson_bootstrap_add")


# ---------------------------------------------------------------------------
# sacreBLEU 13a and SQuAD tokens straight to ids
# ---------------------------------------------------------------------------

include "_mt_wrappers.pxi"


cdef object _mt_ids(Vocab vocab, object texts, int which):
    """Tokens of every text (13a or SQuAD-normalized) as ids of ``vocab``:
    ``(int32 ids, int64 offsets)`` bytes buffers."""
    cdef tuple seq = tuple(texts)
    cdef Py_ssize_t n = len(seq), i
    cdef int* kinds = <int*>malloc(max(n, 1) * sizeof(int))
    cdef const void** datas = <const void**>malloc(max(n, 1) * sizeof(void*))
    cdef int64_t* lens = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
    cdef int64_t* offsets = <int64_t*>malloc((n + 1) * sizeof(int64_t))
    cdef rv_u32buf w1, w2, cps
    cdef rv_s64buf ends
    cdef rv_i32buf ids
    cdef char* utf8 = NULL
    cdef int64_t utf8_cap = 0, r = 0, t, start, nbytes
    cdef int32_t tid
    cdef int failed = 0
    w1.data = NULL; w1.n = 0; w1.cap = 0
    w2.data = NULL; w2.n = 0; w2.cap = 0
    cps.data = NULL; cps.n = 0; cps.cap = 0
    ends.data = NULL; ends.n = 0; ends.cap = 0
    ids.data = NULL; ids.n = 0; ids.cap = 0
    try:
        if kinds == NULL or datas == NULL or lens == NULL or offsets == NULL:
            raise MemoryError()
        for i in range(n):
            s = seq[i]
            if not PyUnicode_Check(s):
                what = "None" if s is None else type(s).__name__
                raise TypeError(f"text at row {i} is {what}, not str")
            kinds[i] = PyUnicode_KIND(s)
            datas[i] = PyUnicode_DATA(s)
            lens[i] = PyUnicode_GET_LENGTH(s)
        with nogil:
            for i in range(n):
                offsets[i] = ids.n
                cps.n = 0
                ends.n = 0
                if which == _MT_13A:
                    r = rv_sacrebleu_13a(kinds[i], datas[i], lens[i], &w1, &w2, &cps, &ends)
                elif which == _MT_SQUAD:
                    r = rv_squad_normalize(kinds[i], datas[i], lens[i], &w1, &cps, &ends)
                else:
                    r = rv_chrf_words(kinds[i], datas[i], lens[i], &cps, &ends)
                if r < 0:
                    failed = 1
                    break
                start = 0
                for t in range(ends.n):
                    nbytes = rv_utf8_len(cps.data + start, ends.data[t] - start)
                    if nbytes > utf8_cap:
                        free(utf8)
                        utf8_cap = nbytes * 2 + 64
                        utf8 = <char*>malloc(utf8_cap)
                        if utf8 == NULL:
                            failed = 1
                            break
                    rv_utf8_encode(cps.data + start, ends.data[t] - start, utf8)
                    tid = rv_vocab_add(&vocab.v, utf8, nbytes)
                    if tid < 0 or rv_push32(&ids, tid) != 0:
                        failed = 1
                        break
                    start = ends.data[t]
                if failed:
                    break
            offsets[n] = ids.n
        if failed:
            raise MemoryError("out of memory while tokenizing")
        return (PyBytes_FromStringAndSize(<char*>ids.data, ids.n * 4),
                PyBytes_FromStringAndSize(<char*>offsets, (n + 1) * 8))
    finally:
        rv_u32buf_free(&w1); rv_u32buf_free(&w2); rv_u32buf_free(&cps); rv_s64buf_free(&ends)
        free(ids.data); free(utf8); free(kinds); free(datas); free(lens); free(offsets)


def tokenize_13a_ids(Vocab vocab, texts):
    """sacreBLEU's ``tokenize_13a(text.rstrip()).split()`` of every text, as ids."""
    return _mt_ids(vocab, texts, _MT_13A)


def squad_normalize_ids(Vocab vocab, texts):
    """``normalize_answer(text).split()`` of every (already lowercased) text, as ids."""
    return _mt_ids(vocab, texts, _MT_SQUAD)


def chrf_words_ids(Vocab vocab, texts):
    """chrF++'s punctuation-split words of every text, as ids."""
    return _mt_ids(vocab, texts, _MT_CHRF_WORDS)


def chrf_chars(texts, bint whitespace=False):
    """Code points of every text (whitespace removed unless ``whitespace``):
    ``(int32 code points, int64 offsets)`` bytes buffers."""
    cdef tuple seq = tuple(texts)
    cdef Py_ssize_t n = len(seq), i
    cdef rv_u32buf out
    cdef int64_t* offsets = <int64_t*>malloc((n + 1) * sizeof(int64_t))
    cdef int failed = 0
    out.data = NULL; out.n = 0; out.cap = 0
    try:
        if offsets == NULL:
            raise MemoryError()
        for i in range(n):
            s = seq[i]
            if not PyUnicode_Check(s):
                what = "None" if s is None else type(s).__name__
                raise TypeError(f"text at row {i} is {what}, not str")
            offsets[i] = out.n
            if rv_chrf_chars(PyUnicode_KIND(s), PyUnicode_DATA(s), PyUnicode_GET_LENGTH(s), whitespace, &out) < 0:
                raise MemoryError()
        offsets[n] = out.n
        # code points are < 0x110000, so they fit int32 ids as they are
        return (PyBytes_FromStringAndSize(<char*>out.data, out.n * 4),
                PyBytes_FromStringAndSize(<char*>offsets, (n + 1) * 8))
    finally:
        rv_u32buf_free(&out)
        free(offsets)


include "trajectory.pxi"
