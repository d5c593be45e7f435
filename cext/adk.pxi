# ADK EvalSet files read for their tool uses: one pass over the file's bytes, nothing per
# invocation but bytes in buffers (cext/adk_evalset.h).  Included from _core.pyx.  Twin:
# src/respeval/_core_py/adk.py (same name, same results; its docstring is the reference).

cdef extern from "adk_evalset.h":
    ctypedef struct rv_adk:
        rv_i64buf case_id_off
        rv_tbuf case_ids
        rv_tbuf case_kinds
        rv_i64buf case_first
        rv_i64buf inv_id_off
        rv_tbuf inv_ids
        rv_i64buf tool_start
        rv_i64buf tool_end
    int RV_ADK_OK, RV_ADK_NOMEM
    int rv_adk_read(rv_adk* a, const char* s, int64_t n) noexcept nogil
    void rv_adk_free(rv_adk* a) noexcept nogil


cdef inline bytes _adk_i64(rv_i64buf* b):
    return PyBytes_FromStringAndSize(<char*>b.data, b.n * 8)


cdef inline bytes _adk_text(rv_tbuf* b):
    return PyBytes_FromStringAndSize(b.data if b.n else _TRAJ_EMPTY, b.n)


def adk_eval_set_tool_uses(const uint8_t[::1] data):
    """The cases and invocations of an ADK EvalSet file's bytes, or None when the Python
    loader must read it (see the twin's ``adk_eval_set_tool_uses``)."""
    cdef rv_adk a
    cdef int r
    cdef int64_t n = data.shape[0]
    cdef const char* p = <const char*>&data[0] if n else _TRAJ_EMPTY
    memset(&a, 0, sizeof(a))
    try:
        with nogil:
            r = rv_adk_read(&a, p, n)
        if r == RV_ADK_NOMEM:
            raise MemoryError("out of memory reading an ADK eval set")
        if r != RV_ADK_OK:
            return None
        return (_adk_i64(&a.case_id_off), _adk_text(&a.case_ids), _adk_text(&a.case_kinds),
                _adk_i64(&a.case_first), _adk_i64(&a.inv_id_off), _adk_text(&a.inv_ids),
                _adk_i64(&a.tool_start), _adk_i64(&a.tool_end))
    finally:
        rv_adk_free(&a)
