# TER: sacreBLEU's Tercom normaliser, and its beam edit distance and greedy shift
# search on word ids.  Twin: respeval/_core_py/ter.py.


cdef int _tercom_flags(bint normalized, bint no_punct, bint asian_support, bint twice) noexcept:
    return ((RV_TERCOM_NORMALIZED if normalized else 0) | (RV_TERCOM_NO_PUNCT if no_punct else 0) |
            (RV_TERCOM_ASIAN if asian_support else 0) | (_MT_TERCOM_TWICE if twice else 0))


def tercom_tokens(texts, bint normalized=False, bint no_punct=False, bint asian_support=False, bint twice=False):
    """sacrebleu 2.6.0's ``TercomTokenizer(...)(t.rstrip()).split()`` of every text,
    for texts already lowercased (unless TER is case-sensitive); ``twice`` runs the
    normaliser a second time on the joined words, as sacreBLEU does to references."""
    return _mt_token_lists(texts, _MT_TERCOM, _tercom_flags(normalized, no_punct, asian_support, twice))


def tercom_ids(Vocab vocab, texts, bint normalized=False, bint no_punct=False, bint asian_support=False,
               bint twice=False):
    """``tercom_tokens`` of every text as ids of ``vocab``: ``(int32 ids, int64 offsets)``."""
    return _mt_ids(vocab, texts, _MT_TERCOM, _tercom_flags(normalized, no_punct, asian_support, twice))


cdef struct _TerCtx:
    const int32_t* H
    const int64_t* hoff
    const int32_t* R
    const int64_t* roff
    const int64_t* row_refs
    int64_t* edits


cdef void* _ter_scratch_new(int64_t vocab_size) noexcept nogil:
    return calloc(1, sizeof(rv_ter_scratch))


cdef void _ter_scratch_free(void* sc) noexcept nogil:
    if sc != NULL:
        rv_ter_scratch_free(<rv_ter_scratch*>sc)
        free(sc)


cdef int _ter_row(void* ctx, void* scratch, Py_ssize_t k) noexcept nogil:
    """The fewest edits over row k's references."""
    cdef _TerCtx* x = <_TerCtx*>ctx
    cdef int64_t j, e, best = -1
    for j in range(x.row_refs[k], x.row_refs[k + 1]):
        e = rv_ter_edits(<rv_ter_scratch*>scratch, x.H + x.hoff[k], x.hoff[k + 1] - x.hoff[k],
                         x.R + x.roff[j], x.roff[j + 1] - x.roff[j])
        if e < 0:
            return <int>e
        if best < 0 or e < best:
            best = e
    x.edits[k] = best
    return 0


def ter_edits(const int32_t[::1] hyp_ids, const int64_t[::1] hyp_off,
              const int32_t[::1] ref_ids, const int64_t[::1] ref_off,
              const int64_t[::1] row_refs, int64_t vocab_size, int64_t[::1] edits, threads=None):
    """sacreBLEU's TER edits per row: the minimum over the row's references (reference
    rows ``row_refs[k] .. row_refs[k+1]``, at least one) of shifts + edit distance.
    ``edits`` is ``int64[rows]``."""
    cdef Py_ssize_t n = hyp_off.shape[0] - 1, k
    cdef int64_t j, longest
    cdef _TerCtx x
    _check_multi_reference(hyp_ids, hyp_off, ref_ids, ref_off, row_refs, vocab_size)
    for k in range(n):
        if row_refs[k + 1] <= row_refs[k]:
            raise ValueError(f"row {k} has no reference (row_refs[{k}] == row_refs[{k + 1}])")
    if edits.shape[0] != n:
        raise ValueError(f"edits must have length {n}")
    for k in range(n):
        if hyp_off[k + 1] - hyp_off[k] > RV_TER_MAX_WORDS:
            raise _RowTooLongError(k, "the hypothesis", hyp_off[k + 1] - hyp_off[k], RV_TER_MAX_WORDS, "TER")
        longest = 0
        for j in range(row_refs[k], row_refs[k + 1]):
            longest = max(longest, ref_off[j + 1] - ref_off[j])
        if longest > RV_TER_MAX_WORDS:
            raise _RowTooLongError(k, "the reference", longest, RV_TER_MAX_WORDS, "TER")
    if n == 0:
        return
    x.H, x.hoff, x.R, x.roff, x.row_refs = _ids_ptr(hyp_ids), &hyp_off[0], _ids_ptr(ref_ids), &ref_off[0], &row_refs[0]
    x.edits = &edits[0]
    # a TER row is heavy (a shift search): worth a thread from a few rows on
    _run_rows(n, _resolve_threads(threads, n * 16), 4, _ter_row, &x,
              _ter_scratch_new, _ter_scratch_free, vocab_size, "ter_edits")
