# JSON lines checked and split in C (jsonl.h): where each wanted top-level field of a
# line is, for readers that hand a field's JSON text on.  Twin: respeval/_core_py/jsonl.py.

cdef extern from "jsonl.h":
    int rv_jl_fields(const char* p, int64_t n, const char* const* keys, const int64_t* key_len, int64_t nkeys,
                     int64_t* spans) noexcept nogil


def jsonl_field_spans(list lines, list keys):
    """For each line (bytes) of a JSONL file: whether it is certainly one JSON object as
    ``json.loads`` reads it (valid UTF-8, JSON's grammar exactly; 0: unsure, read it with
    ``json.loads``), and where each key's value is (the byte range of its last occurrence;
    -1, -1 when absent).  Returns ``(ok, spans)``: a uint8 per line, and int64
    ``[line][key][start, end]``."""
    cdef Py_ssize_t i, n = len(lines), k, nkeys = len(keys)
    encoded = [key.encode("utf-8") for key in keys]
    cdef const char** key_p = <const char**>malloc(max(nkeys, 1) * sizeof(char*))
    cdef int64_t* key_len = <int64_t*>malloc(max(nkeys, 1) * sizeof(int64_t))
    ok = bytearray(n)
    spans = bytearray(n * nkeys * 2 * 8)
    cdef unsigned char[::1] ok_v = ok
    cdef int64_t* spans_p = <int64_t*>(<char*>spans) if n * nkeys else NULL
    cdef const char* p
    cdef Py_ssize_t length
    cdef int64_t scratch[2]
    try:
        if key_p == NULL or key_len == NULL:
            raise MemoryError()
        for k in range(nkeys):
            key_p[k] = encoded[k]
            key_len[k] = len(encoded[k])
        for i in range(n):
            line = lines[i]
            if not PyBytes_CheckExact(line):
                raise TypeError(f"line {i} is a {type(line).__name__}, expected bytes")
            p = PyBytes_AS_STRING(line)
            length = PyBytes_GET_SIZE(line)
            ok_v[i] = rv_jl_fields(p, length, key_p, key_len, nkeys, spans_p + i * nkeys * 2 if spans_p else scratch)
            if not ok_v[i]:
                for k in range(2 * nkeys):
                    spans_p[i * nkeys * 2 + k] = -1  # an unsure line has no spans
    finally:
        free(key_p)
        free(key_len)
    return bytes(ok), bytes(spans)


cdef extern from "jsonl.h":
    int RV_JL_TEXT, RV_JL_STRING, RV_JL_INT, RV_JL_ESCAPED
    int rv_jl_value_kind(const char* p, int64_t start, int64_t end, char kind) noexcept nogil
    int rv_jl_surrogate_escape(const char* p, int64_t n) noexcept nogil
    int rv_jl_unescape(const char* p, int64_t start, int64_t end, rv_tbuf* o) noexcept nogil
    void rv_free_tbuf "rv_buf_free"(rv_tbuf* b) noexcept nogil


cdef inline long long _jl_digits(const char* p, int64_t n) noexcept:
    cdef long long v = 0
    cdef int64_t i
    for i in range(n):
        v = v * 10 + (p[i] - 48)
    return v


cdef tuple _jl_arrow_column(const char** line_p, const unsigned char* ok, const int64_t* spans,
                            const unsigned char* codes, const char* decoded, Py_ssize_t n, Py_ssize_t nkeys,
                            Py_ssize_t k):
    """Key k's string values of the lines taken, as (int64 offsets, UTF-8 data) bytes."""
    cdef Py_ssize_t i, taken = 0
    cdef int64_t total = 0, start, end, at = 0
    for i in range(n):
        if ok[i]:
            taken += 1
            start, end = spans[(i * nkeys + k) * 2], spans[(i * nkeys + k) * 2 + 1]
            total += end - start - (2 if codes[i * nkeys + k] == RV_JL_STRING else 0)
    off_b = PyBytes_FromStringAndSize(NULL, (taken + 1) * 8)
    data_b = PyBytes_FromStringAndSize(NULL, total)
    cdef int64_t* off = <int64_t*>PyBytes_AS_STRING(off_b)
    cdef char* data = PyBytes_AS_STRING(data_b)
    taken = 0
    off[0] = 0
    for i in range(n):
        if not ok[i]:
            continue
        start, end = spans[(i * nkeys + k) * 2], spans[(i * nkeys + k) * 2 + 1]
        if codes[i * nkeys + k] == RV_JL_STRING:
            memcpy(data + at, line_p[i] + start + 1, end - start - 2)
            at += end - start - 2
        else:  # RV_JL_ESCAPED: decoded[start:end]
            memcpy(data + at, decoded + start, end - start)
            at += end - start
        taken += 1
        off[taken] = at
    return off_b, data_b


def jsonl_columns(list lines, list keys, bytes kinds):
    """The selected fields of a block of JSONL lines (bytes), column by column, for the
    lines whose values can be taken without ``json.loads`` and mean what it would give:
    lines ``jsonl_field_spans`` passes, without an escape of a UTF-16 surrogate anywhere
    (``\\uD800``-``\\uDFFF``, which the readers' lone-surrogate rule must see), whose every
    value is, by its key's kind (a byte of ``kinds``: ``r`` raw, ``k`` key, ``t`` text), a
    string (a str, its escapes decoded), a raw array or object (its JSON text, a str), a
    key's integer (its digits, a str) or a raw integer of at most 18 digits (an int); a key
    of kind ``a`` (text for Arrow) takes strings as ``t`` does, and its column is
    ``(offsets, data)``: int64 offsets and the UTF-8 of the values back to back, the
    buffers of an Arrow ``large_string`` array (no Python object per value).
    Returns ``(fallback, columns)``: the indices of the other lines, for the caller to read
    with ``json.loads``, and one column per key of the values of the rest, in line order.
    The lines are checked, and escaped strings decoded, without the GIL."""
    cdef Py_ssize_t i, n = len(lines)
    cdef const char** line_p = <const char**>malloc(max(n, 1) * sizeof(char*))
    cdef int64_t* line_n = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
    try:
        if not (line_p and line_n):
            raise MemoryError()
        for i in range(n):
            line = lines[i]
            if not PyBytes_CheckExact(line):
                raise TypeError(f"line {i} is a {type(line).__name__}, expected bytes")
            line_p[i] = PyBytes_AS_STRING(line)
            line_n[i] = PyBytes_GET_SIZE(line)
        # `lines` holds every bytes object, and no Python code runs until the GIL is back
        return _jl_columns(line_p, line_n, n, keys, kinds)
    finally:
        free(line_p)
        free(line_n)


def line_block(const unsigned char[::1] data, Py_ssize_t start, Py_ssize_t max_lines, bint final):
    """``(lines, end)``: how many of the lines of ``data[start:]`` (each ending with ``\\n``;
    with ``final``, the last may end with the data instead) are taken, at most
    ``max_lines``, and the offset just past them."""
    cdef Py_ssize_t n = data.shape[0], lines = 0, at = start
    cdef const unsigned char* base = &data[0] if n else NULL
    cdef const unsigned char* nl
    if start < 0 or start > n or max_lines < 0:
        raise ValueError(f"start {start} and max_lines {max_lines} do not fit data of {n} bytes")
    with nogil:
        while lines < max_lines and at < n:
            nl = <const unsigned char*>memchr(base + at, 10, n - at)
            if nl == NULL:
                if final:
                    lines += 1
                    at = n
                break
            lines += 1
            at = nl - base + 1
    return lines, at


def jsonl_block_columns(const unsigned char[::1] block, list keys, bytes kinds):
    """``jsonl_columns`` of the lines of ``block`` (each ending with ``\\n``, the last
    perhaps not: a block ``line_block`` measured), read in place, without a bytes object
    per line.  Returns ``(fallback, columns)``, each line left to ``json.loads`` as
    ``(index, start, end)``: its place in the block."""
    cdef Py_ssize_t size = block.shape[0], n = 0, i, at = 0
    cdef const char* base = <const char*>&block[0] if size else NULL
    cdef const char* nl
    cdef const char** line_p = NULL
    cdef int64_t* line_n = NULL
    with nogil:
        while at < size:
            nl = <const char*>memchr(base + at, 10, size - at)
            n += 1
            at = size if nl == NULL else nl - base + 1
    line_p = <const char**>malloc(max(n, 1) * sizeof(char*))
    line_n = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
    try:
        if not (line_p and line_n):
            raise MemoryError()
        at = 0
        with nogil:
            for i in range(n):
                nl = <const char*>memchr(base + at, 10, size - at)
                line_p[i] = base + at
                at = size if nl == NULL else nl - base + 1
                line_n[i] = base + at - line_p[i]
        fallback, columns = _jl_columns(line_p, line_n, n, keys, kinds)
        return [(i, line_p[i] - base, line_p[i] - base + line_n[i]) for i in fallback], columns
    finally:
        free(line_p)
        free(line_n)


cdef tuple _jl_columns(const char** line_p, const int64_t* line_n, Py_ssize_t n, list keys, bytes kinds):
    """``jsonl_columns`` of the ``n`` lines at ``line_p`` (``line_n`` bytes each)."""
    cdef Py_ssize_t i, k, nkeys = len(keys)
    cdef int64_t start, end
    cdef int code
    cdef const char* p
    if len(kinds) != nkeys:
        raise ValueError(f"{nkeys} keys but {len(kinds)} kinds")
    encoded = [key.encode("utf-8") for key in keys]
    cdef const char* kind_p = kinds
    cdef const char** key_p = <const char**>malloc(max(nkeys, 1) * sizeof(char*))
    cdef int64_t* key_len = <int64_t*>malloc(max(nkeys, 1) * sizeof(int64_t))
    cdef unsigned char* ok = <unsigned char*>malloc(max(n, 1))
    cdef int64_t* spans = <int64_t*>malloc(max(n * nkeys * 2, 2) * sizeof(int64_t))
    cdef unsigned char* codes = <unsigned char*>malloc(max(n * nkeys, 1))
    cdef rv_tbuf decoded
    cdef int64_t at
    cdef int failed = 0
    memset(&decoded, 0, sizeof(decoded))
    fallback = []
    columns = [[] for _ in range(nkeys)]
    try:
        if not (key_p and key_len and ok and spans and codes):
            raise MemoryError()
        for k in range(nkeys):
            key_p[k] = encoded[k]
            key_len[k] = len(encoded[k])
        with nogil:
            for i in range(n):
                ok[i] = rv_jl_fields(line_p[i], line_n[i], key_p, key_len, nkeys, spans + i * nkeys * 2)
                if ok[i] and rv_jl_surrogate_escape(line_p[i], line_n[i]):
                    ok[i] = 0
                for k in range(nkeys):
                    if ok[i]:
                        code = rv_jl_value_kind(line_p[i], spans[(i * nkeys + k) * 2], spans[(i * nkeys + k) * 2 + 1],
                                                kind_p[k])
                        codes[i * nkeys + k] = <unsigned char>code
                        if code == 0:
                            ok[i] = 0
                        elif code == RV_JL_ESCAPED:
                            # decoded here; the span becomes the text's place in `decoded`
                            at = decoded.n
                            code = rv_jl_unescape(line_p[i], spans[(i * nkeys + k) * 2],
                                                  spans[(i * nkeys + k) * 2 + 1], &decoded)
                            if code < 0:
                                failed = 1
                            elif code > 0:
                                ok[i] = 0
                            spans[(i * nkeys + k) * 2] = at
                            spans[(i * nkeys + k) * 2 + 1] = decoded.n
        if failed:
            raise MemoryError("out of memory while reading JSON lines")
        for k in range(nkeys):
            if kind_p[k] == 97:  # 'a': the column as Arrow buffers
                columns[k] = _jl_arrow_column(line_p, ok, spans, codes, decoded.data, n, nkeys, k)
        for i in range(n):
            if not ok[i]:
                fallback.append(i)
                continue
            p = line_p[i]
            for k in range(nkeys):
                if kind_p[k] == 97:
                    continue
                start = spans[(i * nkeys + k) * 2]
                end = spans[(i * nkeys + k) * 2 + 1]
                code = codes[i * nkeys + k]
                if code == RV_JL_STRING:
                    value = PyUnicode_DecodeUTF8(p + start + 1, end - start - 2, NULL)
                elif code == RV_JL_ESCAPED:
                    value = PyUnicode_DecodeUTF8(decoded.data + start, end - start, NULL)
                elif code == RV_JL_INT:
                    value = PyLong_FromLongLong(_jl_digits(p + start, end - start))
                else:
                    value = PyUnicode_DecodeUTF8(p + start, end - start, NULL)
                (<list>columns[k]).append(value)
    finally:
        free(key_p)
        free(key_len)
        free(ok)
        free(spans)
        free(codes)
        rv_free_tbuf(&decoded)
    return fallback, columns
