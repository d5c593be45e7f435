# chrF's inputs: code points and chrF++'s punctuation-split words.
# Twin: respeval/_core_py/chrf.py.


def chrf_words_ids(Vocab vocab, texts):
    """chrF++'s punctuation-split words of every text, as ids."""
    return _mt_ids(vocab, texts, _MT_CHRF_WORDS)


def chrf_chars(texts, bint whitespace=False):
    """Code points of every text (whitespace removed unless ``whitespace``):
    ``(int32 code points, int64 offsets)`` bytes buffers."""
    cdef Py_ssize_t n, i
    cdef _Texts t
    cdef rv_u32buf out
    cdef int64_t* offsets = NULL
    cdef int failed = 0
    memset(&out, 0, sizeof(out))
    _texts_init(&t)
    try:
        _texts_read(&t, texts)
        n = t.n
        offsets = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        if offsets == NULL:
            raise MemoryError()
        with nogil:
            for i in range(n):
                offsets[i] = out.n
                if rv_scan_chrf_chars(t.kinds[i], t.datas[i], t.lens[i], whitespace, &out) < 0:
                    failed = 1
                    break
            offsets[n] = out.n
        if failed:
            raise MemoryError()
        # code points are < 0x110000, so they fit int32 ids as they are
        return (PyBytes_FromStringAndSize(<char*>out.data, out.n * 4),
                PyBytes_FromStringAndSize(<char*>offsets, (n + 1) * 8))
    finally:
        rv_free_u32(&out)
        _texts_free(&t)
        free(offsets)
