# CSV lines split in C (csvline.h): the csv module's default dialect, one physical line per
# record, for the lines it certainly reads that way.  Twin: respeval/_core_py/csvline.py.

cdef extern from "csvline.h":
    int64_t rv_csv_plain(const char* p, int64_t n, int64_t ncols, char* out, int64_t* start,
                         int64_t* end) noexcept nogil


def csv_plain_rows(list lines, Py_ssize_t ncols):
    """For each line (bytes) of a CSV file, its ``ncols`` fields (a list of str) when the
    csv module's default dialect certainly reads that line as one whole record of
    ``ncols`` fields (see ``csvline.h``), else None: the caller reads that record with the
    csv module."""
    cdef Py_ssize_t i, n = len(lines), k, size, cap = 0
    cdef int64_t got
    cdef char* out = NULL
    cdef char* grown
    if ncols <= 0:
        raise ValueError(f"ncols must be positive, got {ncols}")
    cdef int64_t* start = <int64_t*>malloc(ncols * sizeof(int64_t))
    cdef int64_t* end = <int64_t*>malloc(ncols * sizeof(int64_t))
    rows = [None] * n
    try:
        if start == NULL or end == NULL:
            raise MemoryError()
        for i in range(n):
            line = lines[i]
            if not PyBytes_CheckExact(line):
                raise TypeError(f"line {i} is a {type(line).__name__}, expected bytes")
            size = PyBytes_GET_SIZE(line)
            if size + 8 > cap:
                cap = max(size + 8, 2 * cap)
                grown = <char*>realloc(out, cap)
                if grown == NULL:
                    raise MemoryError()
                out = grown
            got = rv_csv_plain(PyBytes_AS_STRING(line), size, ncols, out, start, end)
            if got == ncols:
                # the line's UTF-8 was checked whole, and fields split only at ASCII bytes
                rows[i] = [PyUnicode_DecodeUTF8(out + start[k], end[k] - start[k], NULL) for k in range(ncols)]
    finally:
        free(start)
        free(end)
        free(out)
    return rows


def csv_columns(list lines, Py_ssize_t ncols, list indices, bytes kinds=b""):
    """The fields ``indices`` of a block of CSV lines (bytes), column by column, for the lines
    ``csv_plain_rows`` splits (one whole record of ``ncols`` fields each).  Returns
    ``(fallback, columns)``: the indices of the other lines, for the caller to read with the
    csv module, and one column per index of the values of the rest, in line order: a list of
    str, or, where ``kinds`` has an ``a`` for the index, ``(offsets, data)``: int64 offsets and
    the UTF-8 of the values back to back, the buffers of an Arrow ``large_string`` array (no
    Python object per value).  The lines are split without the GIL, a batch of about a
    megabyte at a time (the batch's fields are written to one buffer, reused)."""
    cdef Py_ssize_t i, n = len(lines), k, nsel = len(indices), b0, b1, need, cap = 0
    cdef int64_t got, at
    if ncols <= 0:
        raise ValueError(f"ncols must be positive, got {ncols}")
    for k in range(nsel):
        if not 0 <= indices[k] < ncols:
            raise ValueError(f"field index {indices[k]} is outside 0..{ncols - 1}")
    cdef const char** line_p = <const char**>malloc(max(n, 1) * sizeof(char*))
    cdef int64_t* line_n = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
    cdef int64_t* out_at = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
    cdef int64_t* spans = <int64_t*>malloc(max(n * ncols * 2, 2) * sizeof(int64_t))
    cdef Py_ssize_t* sel = <Py_ssize_t*>malloc(max(nsel, 1) * sizeof(Py_ssize_t))
    cdef unsigned char* ok = <unsigned char*>malloc(max(n, 1))
    cdef char* out = NULL
    cdef char* grown
    cdef int64_t s0, s1
    if kinds and len(kinds) != nsel:
        raise ValueError(f"{nsel} indices but {len(kinds)} kinds")
    cdef bytes arrow = bytes(1 if kinds and kinds[k] == 97 else 0 for k in range(nsel))
    cdef const char* arrow_p = arrow
    cdef rv_tbuf* adata = <rv_tbuf*>calloc(max(nsel, 1), sizeof(rv_tbuf))
    cdef rv_i64buf* aoff = <rv_i64buf*>calloc(max(nsel, 1), sizeof(rv_i64buf))
    fallback = []
    columns = [[] for _ in range(nsel)]
    try:
        if not (line_p and line_n and out_at and spans and sel and ok and adata and aoff):
            raise MemoryError()
        for k in range(nsel):
            if arrow_p[k] and rv_push_i64(&aoff[k], 0) != 0:
                raise MemoryError()
        for k in range(nsel):
            sel[k] = indices[k]
        for i in range(n):
            line = lines[i]
            if not PyBytes_CheckExact(line):
                raise TypeError(f"line {i} is a {type(line).__name__}, expected bytes")
            line_p[i] = PyBytes_AS_STRING(line)
            line_n[i] = PyBytes_GET_SIZE(line)
        b0 = 0
        while b0 < n:
            # lines [b0, b1): at least one, up to ~1 MB of fields (a line's never take more
            # bytes than the line)
            need = 0
            b1 = b0
            while b1 < n and (b1 == b0 or need + line_n[b1] + 8 <= 1 << 20):
                out_at[b1] = need
                need += line_n[b1] + 8
                b1 += 1
            if need > cap:
                grown = <char*>realloc(out, need)
                if grown == NULL:
                    raise MemoryError()
                out, cap = grown, need
            # `lines` holds every bytes object, and no Python code runs until the GIL is back
            with nogil:
                for i in range(b0, b1):
                    got = rv_csv_plain(line_p[i], line_n[i], ncols, out + out_at[i], spans + i * ncols * 2,
                                       spans + i * ncols * 2 + ncols)
                    ok[i] = got == ncols
            for i in range(b0, b1):
                if not ok[i]:
                    fallback.append(i)
                    continue
                at = out_at[i]
                for k in range(nsel):
                    s0, s1 = spans[i * ncols * 2 + sel[k]], spans[i * ncols * 2 + ncols + sel[k]]
                    if arrow_p[k]:
                        if rv_tbuf_put(&adata[k], out + at + s0, s1 - s0) != 0 or rv_push_i64(&aoff[k], adata[k].n):
                            raise MemoryError()
                    else:
                        (<list>columns[k]).append(PyUnicode_DecodeUTF8(out + at + s0, s1 - s0, NULL))
            b0 = b1
        for k in range(nsel):
            if arrow_p[k]:
                columns[k] = (PyBytes_FromStringAndSize(<char*>aoff[k].data, aoff[k].n * 8),
                              adata[k].data[:adata[k].n] if adata[k].n else b"")
    finally:
        free(line_p)
        free(line_n)
        free(out_at)
        free(spans)
        free(sel)
        free(ok)
        free(out)
        for k in range(nsel):
            if adata != NULL:
                rv_free_tbuf(&adata[k])
            if aoff != NULL:
                rv_free_i64(&aoff[k])
        free(adata)
        free(aoff)
    return fallback, columns
