# BLEU: sacreBLEU's 13a tokens and the clipped n-gram matches against the maximum
# count over a row's references.  Twin: respeval/_core_py/bleu.py.


def mt_reference_rows(references):
    """References per row for BLEU, chrF and TER: a row's entry is a str or a sequence
    of str and None (None skipped: a row with fewer references); every row needs one."""
    cdef int gc_was_running = _gc_pause()  # a list per row
    try:
        return _mt_reference_rows(references)
    finally:
        _gc_resume(gc_was_running)


cdef list _mt_reference_rows(object references):
    cdef Py_ssize_t i, j, n
    cdef list out = [], kept
    cdef object rows, item, refs, r
    cdef bint clean
    if PyUnicode_Check(references):
        raise TypeError("references must be a sequence (one entry per row), not a single str")
    rows = references if PyList_CheckExact(references) or PyTuple_CheckExact(references) else list(references)
    n = len(rows)
    for i in range(n):
        item = <object>PySequence_Fast_GET_ITEM(rows, i)
        if PyUnicode_Check(item):
            out.append([item])
            continue
        refs = (item if PyList_CheckExact(item) or PyTuple_CheckExact(item) else list(item)) if item is not None else ()
        clean = len(refs) > 0
        for j in range(len(refs)):
            if not PyUnicode_Check(<object>PySequence_Fast_GET_ITEM(refs, j)):
                clean = False
                break
        if clean:  # the common case: every entry a str
            out.append(list(refs))
            continue
        kept = []
        for j in range(len(refs)):
            r = <object>PySequence_Fast_GET_ITEM(refs, j)
            if r is None:
                continue
            if not PyUnicode_Check(r):
                raise TypeError(f"references[{i}][{j}] is {type(r).__name__}, expected str or None")
            kept.append(r)
        if not kept:
            raise ValueError(f"references[{i}] has no reference (every one is None or the list is empty)")
        out.append(kept)
    return out


def tokenize_13a_tokens(texts):
    """sacrebleu 2.6.0's ``Tokenizer13a()(t.rstrip()).split()`` for every text.

    Exactly the tokens sacreBLEU's BLEU counts with ``tokenize='13a'`` (lowercase
    the texts first for ``lowercase=True``).  Returns ``list[list[str]]``.
    """
    return _mt_token_lists(texts, _MT_13A)


def tokenize_13a_ids(Vocab vocab, texts):
    """sacreBLEU's ``tokenize_13a(text.rstrip()).split()`` of every text, as ids."""
    return _mt_ids(vocab, texts, _MT_13A)


cdef struct _BleuCtx:
    const int32_t* H
    const int64_t* hoff
    const int32_t* R
    const int64_t* roff
    const int64_t* row_refs
    int max_order
    int64_t vocab_size
    int64_t* correct       # [rows, max_order]


cdef int _bleu_row(void* ctx, void* scratch, Py_ssize_t k) noexcept nogil:
    cdef _BleuCtx* x = <_BleuCtx*>ctx
    cdef rv_pair_scratch* ps = <rv_pair_scratch*>scratch
    cdef int64_t j = x.row_refs[k]
    if x.row_refs[k + 1] - j == 1:  # one reference: the clipped overlaps
        return rv_pair_stats(ps, x.H + x.hoff[k], x.hoff[k + 1] - x.hoff[k], x.R + x.roff[j],
                             x.roff[j + 1] - x.roff[j], x.vocab_size, x.max_order, 0,
                             x.correct + k * x.max_order, NULL)
    return rv_ngram_clip_maxref(&ps.s, x.H + x.hoff[k], x.hoff[k + 1] - x.hoff[k], x.R,
                                &x.roff[x.row_refs[k]], x.row_refs[k + 1] - x.row_refs[k],
                                x.max_order, x.correct + k * x.max_order)


def bleu_clipped_counts(const int32_t[::1] hyp_ids, const int64_t[::1] hyp_off,
                        const int32_t[::1] ref_ids, const int64_t[::1] ref_off,
                        const int64_t[::1] row_refs, int max_order, int64_t vocab_size,
                        int64_t[:, ::1] correct, threads=None):
    """sacrebleu's clipped n-gram matches per row, clipping by the maximum count
    over the row's references: row ``k``'s references are reference rows
    ``row_refs[k] .. row_refs[k+1]``.  ``correct`` is ``int64[rows, max_order]``."""
    cdef Py_ssize_t n = hyp_off.shape[0] - 1
    cdef _BleuCtx x
    if max_order < 1 or max_order > 64:
        raise ValueError(f"max_order must be in 1..64, got {max_order}")
    _check_multi_reference(hyp_ids, hyp_off, ref_ids, ref_off, row_refs, vocab_size)
    if correct.shape[0] != n or (n > 0 and correct.shape[1] != max_order):
        raise ValueError(f"correct must have shape ({n}, {max_order})")
    if n == 0:
        return
    x.H, x.hoff, x.R, x.roff, x.row_refs = _ids_ptr(hyp_ids), &hyp_off[0], _ids_ptr(ref_ids), &ref_off[0], &row_refs[0]
    x.max_order, x.vocab_size, x.correct = max_order, vocab_size, &correct[0, 0]
    _run_rows(n, _resolve_threads(threads, n), 32, _bleu_row, &x,
              _id_scratch_new, _id_scratch_free, vocab_size, "bleu_clipped_counts")


_SMOOTH_KINDS = {"none": RV_SMOOTH_NONE, "floor": RV_SMOOTH_FLOOR, "add-k": RV_SMOOTH_ADD_K, "exp": RV_SMOOTH_EXP}
_SMOOTH_DEFAULTS = {"none": None, "floor": 0.1, "add-k": 1, "exp": None}


def bleu_sentence_scores(const int64_t[:, ::1] stats, int max_order, smooth, smooth_value,
                         bint effective_order, double[::1] out):
    """sacreBLEU's ``BLEU.compute_bleu(...).score`` of every row of ``stats``
    (``int64[rows, 2 + 2 * max_order]``: hyp_len, ref_len, correct_1..N, total_1..N) into
    ``out``, in sacreBLEU's float order to the last bit (``smooth``: exp, floor, add-k,
    none; ``smooth_value`` None for sacreBLEU's default)."""
    cdef Py_ssize_t k, n = stats.shape[0]
    cdef int kind
    cdef double value
    cdef int compensated = PY_VERSION_HEX >= 0x030C0000  # sum() of floats is Neumaier's from 3.12
    if max_order < 1 or max_order > 64:
        raise ValueError(f"max_order must be in 1..64, got {max_order}")
    if smooth not in _SMOOTH_KINDS:
        raise ValueError(f"Unknown smooth_method {smooth!r}")
    kind = _SMOOTH_KINDS[smooth]
    if smooth_value is None:
        smooth_value = _SMOOTH_DEFAULTS[smooth]
    value = 0.0 if smooth_value is None else float(smooth_value)
    if n > 0 and stats.shape[1] != 2 + 2 * max_order:
        raise ValueError(f"stats must have {2 + 2 * max_order} columns for max_order={max_order}")
    if out.shape[0] != n:
        raise ValueError(f"out must have {n} rows")
    if n == 0:
        return
    with nogil:
        for k in range(n):
            out[k] = rv_bleu_sentence_score(&stats[k, 0], max_order, kind, value, effective_order, compensated)
