# Native sacreBLEU-13a and SQuAD-v1.1 tokenizers (cext/mt_tokenize.h).
#
# Included from _core.pyx with
#     include "_mt_wrappers.pxi"
# after its `cdef extern from "Python.h"` block, whose PyUnicode_KIND,
# PyUnicode_DATA and PyUnicode_GET_LENGTH (and the PyUnicode_Check cimport)
# this file uses.  mt_tokenize.h includes Python.h itself (for
# Py_UNICODE_ISALNUM, a table lookup that needs no GIL).

from cpython.unicode cimport PyUnicode_Check
from libc.stdint cimport int64_t, uint32_t
from libc.stdlib cimport free, malloc

cdef extern from "Python.h":
    object PyUnicode_FromKindAndData(int kind, const void* buffer, Py_ssize_t size)

cdef extern from "mt_tokenize.h":
    ctypedef struct rv_u32buf:
        uint32_t* data
        int64_t n
        int64_t cap
    ctypedef struct rv_s64buf:
        int64_t* data
        int64_t n
        int64_t cap
    void rv_u32buf_free(rv_u32buf* b) noexcept nogil
    void rv_s64buf_free(rv_s64buf* b) noexcept nogil
    int rv_is_space(uint32_t c) noexcept nogil
    int64_t rv_sacrebleu_13a(int kind, const void* data, int64_t length,
                             rv_u32buf* work1, rv_u32buf* work2,
                             rv_u32buf* out_cps, rv_s64buf* out_ends) noexcept nogil
    int64_t rv_squad_normalize(int kind, const void* data, int64_t length,
                               rv_u32buf* work, rv_u32buf* out_cps, rv_s64buf* out_ends) noexcept nogil
    int64_t rv_chrf_chars(int kind, const void* data, int64_t length, int keep_space,
                          rv_u32buf* out) noexcept nogil
    int64_t rv_chrf_words(int kind, const void* data, int64_t length, rv_u32buf* out_cps,
                          rv_s64buf* out_ends) noexcept nogil
    int64_t rv_utf8_len(const uint32_t* cps, int64_t n) noexcept nogil
    int64_t rv_utf8_encode(const uint32_t* cps, int64_t n, char* out) noexcept nogil

cdef enum:
    _MT_13A = 0
    _MT_SQUAD = 1
    _MT_CHRF_WORDS = 2


cdef list _mt_token_lists(object texts, int which):
    """Runs one tokenizer over every text (GIL released), then builds the lists."""
    # The tuple keeps every str alive (and unchanged) while the GIL is released.
    cdef tuple seq = tuple(texts)
    cdef Py_ssize_t n = len(seq), i, k
    cdef int* kinds = <int*>malloc(max(n, 1) * sizeof(int))
    cdef const void** datas = <const void**>malloc(max(n, 1) * sizeof(void*))
    cdef int64_t* lens = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
    cdef int64_t* ntok = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
    cdef rv_u32buf w1, w2, cps
    cdef rv_s64buf ends
    cdef int64_t r = 0, tok = 0, start = 0, end
    cdef list out, row
    w1.data = NULL; w1.n = 0; w1.cap = 0
    w2.data = NULL; w2.n = 0; w2.cap = 0
    cps.data = NULL; cps.n = 0; cps.cap = 0
    ends.data = NULL; ends.n = 0; ends.cap = 0
    try:
        if kinds == NULL or datas == NULL or lens == NULL or ntok == NULL:
            raise MemoryError()
        for i in range(n):
            t = seq[i]
            if not PyUnicode_Check(t):
                what = "None" if t is None else type(t).__name__
                raise TypeError(f"text at row {i} is {what}, not str")
            kinds[i] = PyUnicode_KIND(t)
            datas[i] = PyUnicode_DATA(t)
            lens[i] = PyUnicode_GET_LENGTH(t)
        with nogil:
            for i in range(n):
                if which == _MT_13A:
                    r = rv_sacrebleu_13a(kinds[i], datas[i], lens[i], &w1, &w2, &cps, &ends)
                else:
                    r = rv_squad_normalize(kinds[i], datas[i], lens[i], &w1, &cps, &ends)
                if r < 0:
                    break
                ntok[i] = r
        if r == -1:
            raise MemoryError("out of memory while tokenizing")
        if r < 0:
            raise ValueError(f"cannot tokenize the text at row {i} (code {r})")
        out = []
        for i in range(n):
            row = []
            for k in range(ntok[i]):
                end = ends.data[tok]
                row.append(PyUnicode_FromKindAndData(4, cps.data + start, end - start))
                start = end
                tok += 1
            out.append(row)
        return out
    finally:
        free(kinds)
        free(datas)
        free(lens)
        free(ntok)
        rv_u32buf_free(&w1)
        rv_u32buf_free(&w2)
        rv_u32buf_free(&cps)
        rv_s64buf_free(&ends)


def tokenize_13a_tokens(texts):
    """sacrebleu 2.6.0's ``Tokenizer13a()(t.rstrip()).split()`` for every text.

    Exactly the tokens sacreBLEU's BLEU counts with ``tokenize='13a'`` (lowercase
    the texts first for ``lowercase=True``).  Returns ``list[list[str]]``.
    """
    return _mt_token_lists(texts, _MT_13A)


def squad_normalize_tokens(texts):
    """SQuAD v1.1 ``normalize_answer(t).split()`` for texts ALREADY lowercased.

    Pass ``[t.lower() for t in texts]``: the C code does not lowercase.  Returns
    ``list[list[str]]``; ``" ".join(tokens)`` is ``normalize_answer(t)``.
    """
    return _mt_token_lists(texts, _MT_SQUAD)
