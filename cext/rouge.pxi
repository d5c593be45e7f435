# ROUGE: rouge-score's tokenizer straight to ids, clipped n-gram overlaps, the
# bit-parallel LCS and the summary-level union LCS.  Twin: respeval/_core_py/rouge.py.

# ---------------------------------------------------------------------------
# Tokenization (rouge-score's default tokenizer) straight to ids
# ---------------------------------------------------------------------------

cdef struct _TokChunk:
    rv_vocab vocab
    rv_tok tok
    rv_i32buf ids
    rv_i64buf sents
    int64_t* row_off
    int64_t* row_sent
    int32_t* gmap
    Py_ssize_t first
    Py_ssize_t last
    int64_t ids_base
    int64_t sent_base
    int failed


cdef void _tok_chunk_free(_TokChunk* ch) noexcept nogil:
    rv_vocab_free(&ch.vocab)
    rv_tok_free(&ch.tok)
    rv_free_i32(&ch.ids)
    rv_free_i64(&ch.sents)
    free(ch.row_off)
    free(ch.row_sent)
    free(ch.gmap)


cdef int _tokenize_chunk(_TokChunk* ch, const _Texts* t, bint stem) noexcept nogil:
    """Tokenize rows [first, last) into the chunk's own vocabulary (local ids)."""
    cdef Py_ssize_t r, nrows = ch.last - ch.first
    ch.row_off = <int64_t*>malloc((nrows + 1) * sizeof(int64_t))
    ch.row_sent = <int64_t*>malloc((nrows + 1) * sizeof(int64_t))
    if ch.row_off == NULL or ch.row_sent == NULL or rv_vocab_init(&ch.vocab) != 0:
        return -1
    for r in range(nrows):
        ch.row_off[r] = ch.ids.n
        ch.row_sent[r] = ch.sents.n
        if rv_tokenize_rouge(&ch.vocab, stem, t.kinds[ch.first + r], t.datas[ch.first + r],
                             t.lens[ch.first + r], &ch.tok, &ch.ids, &ch.sents) != 0:
            return -1
    ch.row_off[nrows] = ch.ids.n
    ch.row_sent[nrows] = ch.sents.n
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
        g = rv_vocab_add(glob, ch.vocab.arena + ch.vocab.start[j], ch.vocab.start[j + 1] - ch.vocab.start[j])
        if g < 0:
            return -1
        ch.gmap[j] = g
    return 0


def tokenize_rouge(Vocab vocab, texts, bint stem=False, threads=None):
    """Tokenize ``texts`` with rouge-score's default tokenizer into ``vocab`` ids.

    Returns ``(ids, offsets, sent_offsets, row_sents)`` as bytes buffers of
    int32, int64, int64, int64: row ``k`` is ``ids[offsets[k]:offsets[k+1]]``;
    its non-empty newline-separated sentences are bounded by
    ``sent_offsets[row_sents[k] : row_sents[k+1] + 1]`` (token positions).
    Rows are tokenized in parallel chunks, each with its own vocabulary, merged
    in order afterwards, so ids do not depend on the thread count.
    """
    cdef Py_ssize_t n, i, c, r, k, nrows, nchunks = 0
    cdef int nt
    cdef _Texts t
    cdef _TokChunk* chunks = NULL
    cdef int64_t total_ids = 0, total_sents = 0
    cdef int failures = 0
    cdef _TokChunk* ch
    cdef int32_t* out_ids
    cdef int64_t* out_off
    cdef int64_t* out_sent
    cdef int64_t* out_rows
    _texts_init(&t)
    try:
        _texts_read(&t, texts)
        n = t.n
        nt = _resolve_threads(threads, n // 32)
        nchunks = 1 if nt == 1 else min(nt * 4, max(n // 1024, 1))
        chunks = <_TokChunk*>calloc(nchunks, sizeof(_TokChunk))
        if chunks == NULL:
            raise MemoryError()
        for c in range(nchunks):
            chunks[c].first = n * c // nchunks
            chunks[c].last = n * (c + 1) // nchunks
        with nogil:
            if nchunks == 1:
                failures += _tokenize_chunk(&chunks[0], &t, stem) != 0
            else:
                for c in prange(nchunks, schedule="dynamic", num_threads=nt):
                    failures += _tokenize_chunk(&chunks[c], &t, stem) != 0
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
        free(chunks)
        _texts_free(&t)


# ---------------------------------------------------------------------------
# Arrow string arrays read in place
# ---------------------------------------------------------------------------

cdef inline bint _rouge_utf8_special(const unsigned char* p, int64_t n) noexcept nogil:
    """UTF-8 p[0:n] holds U+0130 (C4 B0) or U+212A (E2 84 AA): the two code points beyond
    ASCII whose lowercase holds [a-z0-9] (tokenize.h)."""
    cdef const unsigned char* q = p
    cdef const unsigned char* end = p + n
    while q < end:
        q = <const unsigned char*>memchr(q, 0xC4, end - q)
        if q == NULL:
            break
        if q + 1 < end and q[1] == 0xB0:
            return True
        q += 1
    q = p
    while q < end:
        q = <const unsigned char*>memchr(q, 0xE2, end - q)
        if q == NULL:
            break
        if q + 2 < end and q[1] == 0x84 and q[2] == 0xAA:
            return True
        q += 1
    return False


cdef bint _is_arrow_strings(object texts):
    return type(texts).__module__.startswith("pyarrow") and hasattr(texts, "buffers") and str(texts.type) in (
        "string", "large_string")


cdef int _texts_read_rouge(_Texts* t, object texts, list keep) except -1:
    """``_texts_read`` for rouge-score's tokenizer, which also reads an Arrow string array
    in place: a row's UTF-8 bytes as 1-byte text, since the tokenizer separates tokens at
    every non-ASCII code point as it does at every byte >= 0x80 (a code point's UTF-8 bytes
    are all >= 0x80); a row holding U+0130 or U+212A (which lowercase to ASCII letters)
    is decoded to a str, held in ``keep``.  The array's UTF-8 must be valid (Arrow's full
    validation checks it); a null names its row as a None would."""
    if not _is_arrow_strings(texts):
        return _texts_read(t, texts)
    cdef Py_ssize_t i, n = len(texts), base = texts.offset
    cdef bint large = str(texts.type) == "large_string"
    cdef const int32_t* off32 = NULL
    cdef const int64_t* off64 = NULL
    cdef const unsigned char* data = NULL
    cdef int64_t start, end
    cdef object o
    if texts.null_count:
        for i in range(n):
            if not texts[i].is_valid:
                raise TypeError(f"text at row {i} is None, not str")
    buffers = texts.buffers()
    t.n = n
    t.kinds = <int*>malloc(max(n, 1) * sizeof(int))
    t.datas = <const void**>malloc(max(n, 1) * sizeof(void*))
    t.lens = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
    if t.kinds == NULL or t.datas == NULL or t.lens == NULL:
        raise MemoryError()
    if n == 0:
        return 0
    if large:
        off64 = <const int64_t*><uintptr_t>buffers[1].address
    else:
        off32 = <const int32_t*><uintptr_t>buffers[1].address
    if buffers[2] is not None:
        data = <const unsigned char*><uintptr_t>buffers[2].address
    for i in range(n):
        if large:
            start, end = off64[base + i], off64[base + i + 1]
        else:
            start, end = off32[base + i], off32[base + i + 1]
        if end > start and _rouge_utf8_special(data + start, end - start):
            o = PyUnicode_DecodeUTF8(<const char*>data + start, end - start, NULL)
            keep.append(o)
            t.kinds[i] = PyUnicode_KIND(o)
            t.datas[i] = PyUnicode_DATA(o)
            t.lens[i] = PyUnicode_GET_LENGTH(o)
        else:
            t.kinds[i] = 1
            t.datas[i] = data + start if data != NULL else <const void*>b""
            t.lens[i] = end - start
    return 0


cdef inline uint64_t _bytes_hash(const unsigned char* p, int64_t n) noexcept nogil:
    cdef uint64_t h = 0x9E3779B97F4A7C15ULL ^ <uint64_t>n, w
    cdef int64_t i = 0
    while i + 8 <= n:
        memcpy(&w, p + i, 8)
        h = (h ^ w) * 0xFF51AFD7ED558CCDULL
        h ^= h >> 32
        i += 8
    w = 0
    if i < n:
        memcpy(&w, p + i, n - i)
        h = (h ^ w) * 0xFF51AFD7ED558CCDULL
    h ^= h >> 29
    h *= 0xC4CEB9FE1A85EC53ULL
    return h ^ (h >> 32)


def arrow_first_rows(texts):
    """For each row of an Arrow string array (no nulls), the first row holding the same
    text, as int64 bytes: the rows sharing a reference point at one of them, so it is
    tokenized once (the kernels take the array itself as the references)."""
    cdef _Texts t
    cdef list keep = []
    cdef Py_ssize_t n, i
    cdef uint64_t cap = 16, mask, j, h
    cdef int64_t* slots = NULL
    cdef uint64_t* hashes = NULL
    cdef int64_t* first
    cdef int64_t r
    if not _is_arrow_strings(texts):
        raise TypeError(f"expected an Arrow string array, got {type(texts).__name__}")
    _texts_init(&t)
    try:
        _texts_read_rouge(&t, texts, keep)
        n = t.n
        out = PyBytes_FromStringAndSize(NULL, n * 8)
        first = <int64_t*>PyBytes_AS_STRING(out)
        while cap < 2 * <uint64_t>n:
            cap *= 2
        mask = cap - 1
        slots = <int64_t*>malloc(cap * sizeof(int64_t))
        hashes = <uint64_t*>malloc(cap * sizeof(uint64_t))
        if slots == NULL or hashes == NULL:
            raise MemoryError()
        with nogil:
            memset(slots, 0xFF, cap * sizeof(int64_t))  # -1: empty
            for i in range(n):
                # a row of U+0130 or U+212A was decoded to a str: compare code units, not bytes
                h = _bytes_hash(<const unsigned char*>t.datas[i], t.lens[i] * t.kinds[i]) + <uint64_t>t.kinds[i]
                j = h & mask
                while True:
                    r = slots[j]
                    if r < 0:
                        slots[j], hashes[j] = i, h
                        first[i] = i
                        break
                    if hashes[j] == h and t.kinds[r] == t.kinds[i] and t.lens[r] == t.lens[i] and memcmp(
                            t.datas[r], t.datas[i], t.lens[i] * t.kinds[i]) == 0:
                        first[i] = r
                        break
                    j = (j + 1) & mask
        return out
    finally:
        free(slots)
        free(hashes)
        _texts_free(&t)


# ---------------------------------------------------------------------------
# ROUGE from texts, grouped by reference
# ---------------------------------------------------------------------------

def rouge_text_stats(predictions, references, const int64_t[::1] pair_pred, const int64_t[::1] pair_ref,
                     int max_order, bint want_lcs, bint want_lsum, bint stem,
                     int64_t[:, ::1] stats, int64_t[:, ::1] lengths, threads=None):
    """ROUGE statistics of (prediction, reference) pairs, straight from the texts.

    Pair ``k`` is ``predictions[pair_pred[k]]`` against ``references[pair_ref[k]]``,
    both tokenized with rouge-score's tokenizer (Porter-stemmed when ``stem``); either may
    be a sequence of str or an Arrow string array, read in place.
    ``stats[k]`` receives the clipped n-gram hits of orders 1..max_order, then the
    LCS length if ``want_lcs``, then rougeLsum's union-LCS hits if ``want_lsum``;
    ``lengths[k]`` the prediction's and the reference's token counts.  Pairs are
    scored grouped by reference, each thread with its own vocabulary.  A pair whose
    LCS table (tokens x tokens) would exceed ``respeval.limits.LCS_MAX_CELLS`` raises
    RowTooLongError naming its prediction row.
    """
    cdef Py_ssize_t npairs = pair_pred.shape[0], nref, k, r
    cdef int64_t ncols = max_order + want_lcs + want_lsum, failures = 0
    cdef _Texts tp, tr
    cdef rv_rouge_job job
    cdef rv_rouge_worker* wk
    cdef int64_t* group_start = NULL
    cdef int64_t* order = NULL
    cdef int nt
    if max_order < 0 or max_order > 64:
        raise ValueError(f"max_order must be in 0..64, got {max_order}")
    if stats.shape[0] != npairs or (npairs > 0 and stats.shape[1] != ncols):
        raise ValueError(f"stats must have shape ({npairs}, {ncols})")
    if lengths.shape[0] != npairs or (npairs > 0 and lengths.shape[1] != 2):
        raise ValueError(f"lengths must have shape ({npairs}, 2)")
    cdef list keep = []
    _texts_init(&tp)
    _texts_init(&tr)
    try:
        _texts_read_rouge(&tp, predictions, keep)
        _texts_read_rouge(&tr, references, keep)
        nref = tr.n
        _check_pairs(pair_pred, pair_ref, tp.n, nref)
        if npairs == 0:
            return
        # pairs grouped by reference (a counting sort, stable: row order within a group)
        group_start = <int64_t*>calloc(nref + 2, sizeof(int64_t))
        order = <int64_t*>malloc(npairs * sizeof(int64_t))
        if group_start == NULL or order == NULL:
            raise MemoryError()
        for k in range(npairs):
            group_start[pair_ref[k] + 2] += 1
        for r in range(nref):
            group_start[r + 2] += group_start[r + 1]
        for k in range(npairs):
            order[group_start[pair_ref[k] + 1]] = k
            group_start[pair_ref[k] + 1] += 1
        job.max_order, job.want_lcs, job.want_lsum, job.stem, job.ncols = max_order, want_lcs, want_lsum, stem, ncols
        job.kinds_p, job.datas_p, job.lens_p = tp.kinds, tp.datas, tp.lens
        job.kinds_r, job.datas_r, job.lens_r = tr.kinds, tr.datas, tr.lens
        job.pair_pred, job.nref, job.group_start, job.order = &pair_pred[0], nref, group_start, order
        job.stats = &stats[0, 0] if ncols > 0 else NULL
        job.lengths = &lengths[0, 0]
        nt = _resolve_threads(threads, npairs)
        with nogil, parallel(num_threads=nt):
            wk = <rv_rouge_worker*>malloc(sizeof(rv_rouge_worker))
            if wk != NULL and rv_rouge_worker_init(wk) != 0:
                rv_rouge_worker_free(wk)
                free(wk)
                wk = NULL
            for r in prange(nref, schedule="dynamic", chunksize=16):
                if wk == NULL or rv_rouge_group(wk, &job, r) != 0:
                    failures += 1
            if wk != NULL:
                rv_rouge_worker_free(wk)
                free(wk)
        if failures:
            raise MemoryError("out of memory in rouge_text_stats")
        if want_lcs or want_lsum:
            _check_lcs_cells(&lengths[0, 0], &pair_pred[0], npairs, "ROUGE-L" if want_lcs else "ROUGE-Lsum")
    finally:
        _texts_free(&tp)
        _texts_free(&tr)
        free(group_start)
        free(order)


cdef struct _ScoresCtx:
    const int64_t* stats
    Py_ssize_t ncols
    const int64_t* lengths
    const int64_t* columns
    const int64_t* orders
    Py_ssize_t ntypes
    Py_ssize_t npairs
    double* scores


cdef int _scores_row(void* ctx, void* scratch, Py_ssize_t k) noexcept nogil:
    cdef _ScoresCtx* x = <_ScoresCtx*>ctx
    cdef Py_ssize_t t
    cdef int64_t n, hits, dp, dr
    cdef double p, r, total
    for t in range(x.ntypes):
        n = x.orders[t]
        hits = x.stats[k * x.ncols + x.columns[t]]
        # n-grams: n - 1 fewer than tokens; LCS types (n = 0): the token counts
        dp = x.lengths[2 * k] - (n - 1 if n > 0 else 0)
        dr = x.lengths[2 * k + 1] - (n - 1 if n > 0 else 0)
        p = <double>hits / <double>(dp if dp > 1 else 1)
        r = <double>hits / <double>(dr if dr > 1 else 1)
        total = p + r
        x.scores[(3 * t) * x.npairs + k] = p
        x.scores[(3 * t + 1) * x.npairs + k] = r
        x.scores[(3 * t + 2) * x.npairs + k] = 2 * p * r / total if total > 0 else 0.0
    return 0


cdef void* _no_scratch(int64_t vocab_size) noexcept nogil:
    return <void*>1


cdef void _no_scratch_free(void* sc) noexcept nogil:
    pass


def rouge_scores(const int64_t[:, ::1] stats, const int64_t[:, ::1] lengths, const int64_t[::1] columns,
                 const int64_t[::1] orders, double[:, ::1] scores, threads=None):
    """rouge-score's precision, recall and F of every pair for each type t: its hits are
    ``stats[:, columns[t]]``; ``orders[t]`` is n for rouge-N (totals: token counts
    minus n - 1) or 0 for rougeL / rougeLsum (totals: the token counts); ``lengths``
    holds each pair's prediction and reference token counts.  ``scores`` is
    ``float64[3 * types, pairs]``: rows p, r, f of type 0, then of type 1, ..."""
    cdef Py_ssize_t npairs = stats.shape[0], ntypes = columns.shape[0], t
    cdef _ScoresCtx x
    if lengths.shape[0] != npairs or (npairs > 0 and lengths.shape[1] != 2):
        raise ValueError(f"lengths must have shape ({npairs}, 2)")
    if orders.shape[0] != ntypes:
        raise ValueError(f"orders must have one entry per column ({ntypes})")
    if scores.shape[0] != 3 * ntypes or (ntypes > 0 and scores.shape[1] != npairs):
        raise ValueError(f"scores must have shape ({3 * ntypes}, {npairs})")
    for t in range(ntypes):
        if columns[t] < 0 or columns[t] >= stats.shape[1]:
            raise ValueError(f"columns[{t}] = {columns[t]} is not a column of stats ({stats.shape[1]} columns)")
        if orders[t] < 0 or orders[t] > 64:
            raise ValueError(f"orders[{t}] = {orders[t]} is not in 0..64")
    if npairs == 0 or ntypes == 0:
        return
    x.stats, x.ncols, x.lengths = &stats[0, 0], stats.shape[1], &lengths[0, 0]
    x.columns, x.orders, x.ntypes, x.npairs, x.scores = &columns[0], &orders[0], ntypes, npairs, &scores[0, 0]
    _run_rows(npairs, _resolve_threads(threads, npairs // 16), 1024, _scores_row, &x,
              _no_scratch, _no_scratch_free, 0, "rouge_scores")


cdef int _check_lcs_cells(const int64_t* lengths, const int64_t* pair_pred, Py_ssize_t npairs,
                          str metric) except -1:
    """RowTooLongError for the first pair whose LCS table exceeds the documented limit."""
    cdef Py_ssize_t k
    cdef int64_t a, b
    for k in range(npairs):
        a, b = lengths[2 * k], lengths[2 * k + 1]
        if a > 0 and b > RV_LCS_MAX_CELLS // a:
            raise _RowTooLongError(
                pair_pred[k], f"the LCS table of the prediction ({a:,} tokens) and its reference ({b:,} tokens)",
                a * b, RV_LCS_MAX_CELLS, metric, "cells")
    return 0


# ---------------------------------------------------------------------------
# ROUGE statistics
# ---------------------------------------------------------------------------

cdef struct _PairCtx:
    const int32_t* P
    const int64_t* poff
    const int32_t* R
    const int64_t* roff
    const int64_t* pair_pred
    const int64_t* pair_ref
    int max_order
    bint want_lcs
    int64_t vocab_size
    int64_t* overlaps      # [pairs, max_order]
    int64_t* lcs           # [pairs]
    # rougeLsum: sentence bounds of each row
    const int64_t* psent
    const int64_t* prows
    const int64_t* rsent
    const int64_t* rrows


cdef int _rouge_pair_row(void* ctx, void* scratch, Py_ssize_t k) noexcept nogil:
    cdef _PairCtx* x = <_PairCtx*>ctx
    cdef int64_t pa = x.pair_pred[k], pr = x.pair_ref[k]
    return rv_pair_stats(<rv_pair_scratch*>scratch, x.P + x.poff[pa], x.poff[pa + 1] - x.poff[pa],
                         x.R + x.roff[pr], x.roff[pr + 1] - x.roff[pr], x.vocab_size, x.max_order, x.want_lcs,
                         x.overlaps + k * x.max_order, x.lcs + k if x.want_lcs else NULL)


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
    cdef Py_ssize_t npairs = pair_pred.shape[0]
    cdef _PairCtx x
    if max_order < 0 or max_order > 64:
        raise ValueError(f"max_order must be in 0..64, got {max_order}")
    _check_vocab_size(vocab_size)
    _check_csr(pred_ids, pred_off, vocab_size, "pred_ids", "pred_off")
    _check_csr(ref_ids, ref_off, vocab_size, "ref_ids", "ref_off")
    _check_pairs(pair_pred, pair_ref, pred_off.shape[0] - 1, ref_off.shape[0] - 1)
    if overlaps.shape[0] != npairs or (overlaps.shape[1] != max_order and npairs > 0):
        raise ValueError(f"overlaps must have shape ({npairs}, {max_order})")
    if want_lcs and lcs.shape[0] != npairs:
        raise ValueError(f"lcs must have length {npairs}")
    if npairs == 0:
        return
    x.P, x.poff, x.R, x.roff = _ids_ptr(pred_ids), &pred_off[0], _ids_ptr(ref_ids), &ref_off[0]
    x.pair_pred, x.pair_ref = &pair_pred[0], &pair_ref[0]
    x.max_order, x.want_lcs, x.vocab_size = max_order, want_lcs, vocab_size
    x.overlaps = &overlaps[0, 0] if max_order > 0 else NULL
    x.lcs = &lcs[0] if want_lcs else NULL
    _run_rows(npairs, _resolve_threads(threads, npairs), 32, _rouge_pair_row, &x,
              _id_scratch_new, _id_scratch_free, vocab_size, "rouge_pair_stats")


cdef int _lsum_pair_row(void* ctx, void* scratch, Py_ssize_t k) noexcept nogil:
    cdef _PairCtx* x = <_PairCtx*>ctx
    cdef int64_t pa = x.pair_pred[k], pr = x.pair_ref[k]
    cdef int64_t r = rv_lsum_hits(&(<rv_pair_scratch*>scratch).s, x.R, &x.rsent[x.rrows[pr]], x.rrows[pr + 1] - x.rrows[pr],
                                  x.P, &x.psent[x.prows[pa]], x.prows[pa + 1] - x.prows[pa])
    if r < 0:
        return -1
    x.lcs[k] = r
    return 0


def lsum_pair_stats(const int32_t[::1] pred_ids, const int64_t[::1] pred_sent_off,
                    const int64_t[::1] pred_row_sents,
                    const int32_t[::1] ref_ids, const int64_t[::1] ref_sent_off,
                    const int64_t[::1] ref_row_sents,
                    const int64_t[::1] pair_pred, const int64_t[::1] pair_ref,
                    int64_t vocab_size, int64_t[::1] hits, threads=None):
    """rouge-score's summary-level union-LCS hits per pair (ROUGE-Lsum)."""
    cdef Py_ssize_t npairs = pair_pred.shape[0]
    cdef _PairCtx x
    _check_vocab_size(vocab_size)
    _check_csr(pred_ids, pred_sent_off, vocab_size, "pred_ids", "pred_sent_off")
    _check_csr(ref_ids, ref_sent_off, vocab_size, "ref_ids", "ref_sent_off")
    _check_offsets(pred_row_sents, pred_sent_off.shape[0] - 1, "pred_row_sents", "len(pred_sent_off) - 1")
    _check_offsets(ref_row_sents, ref_sent_off.shape[0] - 1, "ref_row_sents", "len(ref_sent_off) - 1")
    _check_pairs(pair_pred, pair_ref, pred_row_sents.shape[0] - 1, ref_row_sents.shape[0] - 1)
    if hits.shape[0] != npairs:
        raise ValueError(f"hits must have length {npairs}")
    if npairs == 0:
        return
    x.P, x.R = _ids_ptr(pred_ids), _ids_ptr(ref_ids)
    x.psent, x.prows, x.rsent, x.rrows = &pred_sent_off[0], &pred_row_sents[0], &ref_sent_off[0], &ref_row_sents[0]
    x.pair_pred, x.pair_ref = &pair_pred[0], &pair_ref[0]
    x.lcs = &hits[0]
    _run_rows(npairs, _resolve_threads(threads, npairs), 8, _lsum_pair_row, &x,
              _id_scratch_new, _id_scratch_free, vocab_size, "lsum_pair_stats")


# ---------------------------------------------------------------------------
# Row pairing
# ---------------------------------------------------------------------------

cdef extern from *:
    """
    typedef struct { Py_hash_t h; PyObject *o; int64_t idx; } rv_dedup_slot;
    /* Equal exact str objects: PEP 393 strings are stored in their narrowest kind,
     * so equal strings have equal kinds, lengths and bytes. */
    static inline int rv_str_equal(PyObject *a, PyObject *b) {
        if (a == b) return 1;
        Py_ssize_t n = PyUnicode_GET_LENGTH(a);
        int kind = PyUnicode_KIND(a);
        return n == PyUnicode_GET_LENGTH(b) && kind == PyUnicode_KIND(b) &&
               memcmp(PyUnicode_DATA(a), PyUnicode_DATA(b), (size_t)n * kind) == 0;
    }
    """
    ctypedef struct rv_dedup_slot:
        Py_hash_t h
        void* o
        int64_t idx
    bint rv_str_equal(object a, object b) noexcept
    bint PyUnicode_CheckExact(object o)
    void* PyList_GET_ITEM(object lst, Py_ssize_t i)


def pair_single_references(list predictions, list references):
    """Fast path of the row pairing for one str reference per row.

    Returns ``(distinct_references, pair_ref)`` with ``pair_ref`` an int64 bytes
    buffer (pair ``k`` is row ``k``), or None when a row is not a plain str (the
    caller's general path then names the offending row).  Distinct texts are found
    with a hash table on the strings' cached hashes, so a reference shared by many
    rows is tokenized once.
    """
    cdef Py_ssize_t n = len(references), i
    cdef list distinct = []
    cdef uint64_t cap = 16, mask, j
    cdef int shift = 60
    cdef rv_dedup_slot* slots
    cdef Py_hash_t h
    cdef object r
    if len(predictions) != n:
        return None
    for i in range(n):
        if i + 24 < n:
            rv_prefetch_object(PyList_GET_ITEM(predictions, i + 24))
        if not PyUnicode_Check(<object>PyList_GET_ITEM(predictions, i)):
            return None
    while cap < 2 * <uint64_t>n:
        cap *= 2
        shift -= 1
    mask = cap - 1
    slots = <rv_dedup_slot*>calloc(cap, sizeof(rv_dedup_slot))
    if slots == NULL:
        raise MemoryError()
    out = PyBytes_FromStringAndSize(NULL, n * 8)
    cdef int64_t* pair_ref = <int64_t*>PyBytes_AS_STRING(out)
    cdef uint64_t* slot_of = <uint64_t*>malloc(max(n, 1) * sizeof(uint64_t))
    try:
        if slot_of == NULL:
            raise MemoryError()
        # three stages a few rows apart, so neither the string objects nor the table
        # slots (both scattered in memory) are waited for: fetch the object, then read
        # its cached hash and fetch its slot, then probe
        for i in range(min(n, 32)):
            rv_prefetch_object(PyList_GET_ITEM(references, i))
        for i in range(min(n, 16)):
            slot_of[i] = _dedup_slot(<object>PyList_GET_ITEM(references, i), slots, shift)
        for i in range(n):
            if i + 32 < n:
                rv_prefetch_object(PyList_GET_ITEM(references, i + 32))
            if i + 16 < n:
                slot_of[i + 16] = _dedup_slot(<object>PyList_GET_ITEM(references, i + 16), slots, shift)
            r = <object>PyList_GET_ITEM(references, i)
            if not PyUnicode_CheckExact(r):  # a str subclass may define its own equality
                return _pair_single_references_dict(references) if PyUnicode_Check(r) else None
            h = hash(r)
            j = slot_of[i]
            while True:
                if slots[j].o == NULL:
                    slots[j].h, slots[j].o, slots[j].idx = h, <void*>r, len(distinct)
                    distinct.append(r)  # keeps slots[j].o alive
                    pair_ref[i] = slots[j].idx
                    break
                if slots[j].h == h and rv_str_equal(<object>slots[j].o, r):
                    pair_ref[i] = slots[j].idx
                    break
                j = (j + 1) & mask
    finally:
        free(slots)
        free(slot_of)
    return distinct, out


cdef inline uint64_t _dedup_slot(object r, rv_dedup_slot* slots, int shift):
    """The table slot of ``r``'s cached hash, fetched ahead of its probe (0 for a
    non-str: the main loop stops at it before its slot matters)."""
    if not PyUnicode_Check(r):
        return 0
    cdef uint64_t j = ((<uint64_t>hash(r)) * 0x9E3779B97F4A7C15ULL) >> shift
    rv_prefetch_object(&slots[j])
    return j


cdef object _pair_single_references_dict(list references):
    """The pairing through a dict, which honours a str subclass's own __eq__ and __hash__."""
    cdef Py_ssize_t n = len(references), i
    cdef dict index = {}
    cdef list distinct = []
    cdef object found
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
