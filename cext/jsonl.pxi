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
