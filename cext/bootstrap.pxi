# Exact sums and the streaming (Poisson) bootstrap.  Twin: respeval/_core_py/bootstrap.py.


def exact_sum_bins(const double[:] values, int64_t[:, ::1] out):
    """Add ``values`` into exponent bins for an exactly rounded sum.

    ``out`` is int64[3, 2048]: bin E (a biased float64 exponent) receives the signed
    53-bit integer mantissa in three 18-bit pieces (high, middle, low), so nothing
    is rounded; ``respeval._exact`` turns the bins into one exact integer.
    Returns -1, or the position of the first non-finite value (then nothing is added).
    """
    cdef Py_ssize_t n = values.shape[0], i
    cdef uint64_t bits, mant
    cdef int64_t sm
    cdef int e
    cdef Py_ssize_t bad = -1
    if out.shape[0] != 3 or out.shape[1] != 2048:
        raise ValueError("out must have shape (3, 2048)")
    if n >= 2**44:
        raise ValueError("too many values for one call")
    with nogil:
        for i in range(n):
            memcpy(&bits, &values[i], 8)
            if ((bits >> 52) & 0x7FF) == 0x7FF:
                bad = i
                break
    if bad >= 0:
        return bad
    with nogil:
        for i in range(n):
            memcpy(&bits, &values[i], 8)
            e = <int>((bits >> 52) & 0x7FF)
            mant = bits & 0xFFFFFFFFFFFFFULL
            if e:
                mant |= 0x10000000000000ULL
            sm = <int64_t>mant
            if bits >> 63:
                out[0, e] -= sm >> 36
                out[1, e] -= (sm >> 18) & 0x3FFFF
                out[2, e] -= sm & 0x3FFFF
            else:
                out[0, e] += sm >> 36
                out[1, e] += (sm >> 18) & 0x3FFFF
                out[2, e] += sm & 0x3FFFF
    return -1


def poisson_weights(const int64_t[::1] keys, uint64_t seed, Py_ssize_t n_replicates):
    """The Poisson(1) weight of every (row key, replicate): uint8 bytes, rows x replicates."""
    cdef Py_ssize_t rows = keys.shape[0], i, b
    cdef uint64_t h
    if n_replicates < 0 or n_replicates >= 2**32:
        raise ValueError("n_replicates must be in [0, 2**32)")
    out = bytearray(rows * n_replicates)
    cdef uint8_t[::1] view = out
    with nogil:
        for i in range(rows):
            h = rv_pb_row_hash(seed, <uint64_t>keys[i])
            for b in range(n_replicates):
                view[i * n_replicates + b] = <uint8_t>rv_pb_weight(h, <uint32_t>b)
    return bytes(out)


def poisson_bootstrap_add(const double[:, ::1] stats, const int64_t[::1] keys, uint64_t seed,
                          double[:, ::1] acc, threads=None):
    """Add the rows of ``stats`` (rows x cols) to Poisson bootstrap accumulators.

    ``acc`` is (cols + 1) x replicates: ``acc[c, b] += w(key, b) * stats[., c]``
    and ``acc[cols, b] += w(key, b)``, row by row in row order, so the sums do not
    depend on how the rows are split into calls or on the thread count.
    """
    cdef Py_ssize_t rows = stats.shape[0], cols = stats.shape[1], n_rep = acc.shape[1]
    cdef Py_ssize_t per, t
    cdef int nt, failures = 0
    cdef int64_t b0, b1
    cdef double* scratch
    if keys.shape[0] != rows:
        raise ValueError(f"keys has {keys.shape[0]} entries for {rows} rows")
    if acc.shape[0] != cols + 1:
        raise ValueError(f"acc must have {cols + 1} rows (one per statistic, then the weights), got {acc.shape[0]}")
    if n_rep >= 2**32:
        raise ValueError("too many replicates")
    if rows == 0 or n_rep == 0:
        return
    nt = _resolve_threads(threads, rows * (n_rep // 16 + 1))
    # threads own disjoint replicate ranges, each a multiple of 8 wide
    per = ((n_rep + nt - 1) // nt + 7) // 8 * 8
    nt = <int>((n_rep + per - 1) // per)
    with nogil:
        for t in prange(nt, schedule="static", chunksize=1, num_threads=nt):
            b0 = t * per
            b1 = min(b0 + per, n_rep)
            scratch = <double*>malloc((RV_PB_TILE + 1) * (b1 - b0) * sizeof(double))
            if scratch == NULL:
                failures += 1
            else:
                rv_pb_accumulate(&stats[0, 0], rows, cols, &keys[0], seed, &acc[0, 0], n_rep, b0, b1, scratch)
                free(scratch)
    if failures:
        raise MemoryError("out of memory in poisson_bootstrap_add")
