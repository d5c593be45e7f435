# The drivers of the MT text normalizers in cext/mt_tokenize.h (sacreBLEU's 13a,
# SQuAD's normalize_answer, chrF++'s words, TER's Tercom): every text read in place
# with the GIL released, then either token lists or ids of a vocabulary.  Used by
# bleu.pxi, squad.pxi, chrf.pxi and ter.pxi.

cdef enum:
    _MT_13A = 0
    _MT_SQUAD = 1
    _MT_CHRF_WORDS = 2
    _MT_TERCOM = 3        # flags: RV_TERCOM_* | _TERCOM_TWICE
    _MT_TERCOM_TWICE = 8


cdef struct _MtWork:
    rv_u32buf w1
    rv_u32buf w2
    rv_u32buf cps      # the tokens' code points, back to back
    rv_i64buf ends     # each token's end in cps
    rv_u32buf joined   # Tercom's first pass, joined for the second


cdef void _mt_work_free(_MtWork* w) noexcept nogil:
    rv_free_u32(&w.w1)
    rv_free_u32(&w.w2)
    rv_free_u32(&w.cps)
    rv_free_i64(&w.ends)
    rv_free_u32(&w.joined)


cdef inline int64_t _mt_tokenize(_MtWork* w, int which, int flags, int kind, const void* data,
                                 int64_t length) noexcept nogil:
    """Append one text's tokens to w.cps / w.ends: their count, or < 0 on failure."""
    if which == _MT_TERCOM:
        if flags & _MT_TERCOM_TWICE:
            return rv_tercom_twice(kind, data, length, flags, &w.w1, &w.w2, &w.joined, &w.cps, &w.ends)
        return rv_tercom(kind, data, length, flags, &w.w1, &w.w2, &w.cps, &w.ends)
    if which == _MT_13A:
        return rv_sacrebleu_13a(kind, data, length, &w.w1, &w.w2, &w.cps, &w.ends)
    if which == _MT_SQUAD:
        return rv_squad_normalize(kind, data, length, &w.w1, &w.cps, &w.ends)
    return rv_chrf_words(kind, data, length, &w.cps, &w.ends)


cdef list _mt_token_lists(object texts, int which, int flags=0):
    """Runs one tokenizer over every text (GIL released), then builds the lists."""
    cdef Py_ssize_t n, i = 0, k
    cdef _Texts t
    cdef _MtWork w
    cdef int64_t* ntok = NULL
    cdef int64_t r = 0, tok = 0, start = 0, end
    cdef int gc_was_running
    cdef list out, row
    memset(&w, 0, sizeof(w))
    _texts_init(&t)
    try:
        _texts_read(&t, texts)
        n = t.n
        ntok = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
        if ntok == NULL:
            raise MemoryError()
        with nogil:
            for i in range(n):
                r = _mt_tokenize(&w, which, flags, t.kinds[i], t.datas[i], t.lens[i])
                if r < 0:
                    break
                ntok[i] = r
        if r == -1:
            raise MemoryError("out of memory while tokenizing")
        if r < 0:
            raise ValueError(f"cannot tokenize the text at row {i} (code {r})")
        out = []
        gc_was_running = _gc_pause()  # a list per text
        try:
            for i in range(n):
                row = []
                for k in range(ntok[i]):
                    end = w.ends.data[tok]
                    row.append(PyUnicode_FromKindAndData(4, w.cps.data + start, end - start))
                    start = end
                    tok += 1
                out.append(row)
        finally:
            _gc_resume(gc_was_running)
        return out
    finally:
        free(ntok)
        _texts_free(&t)
        _mt_work_free(&w)


cdef object _mt_ids(Vocab vocab, object texts, int which, int flags=0):
    """Tokens of every text as ids of ``vocab``: ``(int32 ids, int64 offsets)`` bytes buffers."""
    cdef Py_ssize_t n, i
    cdef _Texts t
    cdef _MtWork w
    cdef int64_t* offsets = NULL
    cdef rv_i32buf ids
    cdef rv_mt_ids_state mst
    cdef rv_scan sc
    cdef int64_t r = 0
    cdef int failed = 0, scanned = 0
    memset(&w, 0, sizeof(w))
    memset(&ids, 0, sizeof(ids))
    memset(&mst, 0, sizeof(mst))
    memset(&sc, 0, sizeof(sc))
    _texts_init(&t)
    try:
        _texts_read(&t, texts)
        n = t.n
        offsets = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        if offsets == NULL:
            raise MemoryError()
        with nogil:
            for i in range(n):
                offsets[i] = ids.n
                # the byte scanners (mt_scan.h) first; a text they leave takes the code points
                scanned = RV_SCAN_FALLBACK
                if which == _MT_13A:
                    scanned = rv_scan_13a_ids(&vocab.v, &sc, t.kinds[i], t.datas[i], t.lens[i], &ids)
                elif which == _MT_CHRF_WORDS:
                    scanned = rv_scan_chrf_words_ids(&vocab.v, &sc, t.kinds[i], t.datas[i], t.lens[i], &ids)
                if scanned == 0:
                    continue
                if scanned != RV_SCAN_FALLBACK:
                    failed = 1
                    break
                w.cps.n = 0
                w.ends.n = 0
                r = _mt_tokenize(&w, which, flags, t.kinds[i], t.datas[i], t.lens[i])
                if r < 0 or rv_mt_ids(&vocab.v, &mst, w.cps.data, 0, w.ends.data, w.ends.n, &ids) != 0:
                    failed = 1
                    break
            offsets[n] = ids.n
        if failed:
            raise MemoryError("out of memory while tokenizing")
        return (PyBytes_FromStringAndSize(<char*>ids.data, ids.n * 4),
                PyBytes_FromStringAndSize(<char*>offsets, (n + 1) * 8))
    finally:
        _mt_work_free(&w)
        rv_free_i32(&ids)
        rv_mt_ids_free(&mst)
        rv_scan_free(&sc)
        _texts_free(&t)
        free(offsets)
