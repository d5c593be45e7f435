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
