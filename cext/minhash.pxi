# MinHash signatures of word shingles (near-duplicate removal in respeval.traces).
# Kernel: minhash.h.  Twin: respeval/_core_py/minhash.py.

cdef extern from "minhash.h":
    void rv_mh_coefficients(uint64_t seed, int64_t num_perm, uint64_t* coef) noexcept nogil
    void rv_mh_signature(const uint8_t* text, int64_t n, int64_t shingle, const uint64_t* coef,
                         int64_t num_perm, uint64_t* words, uint64_t* out) noexcept nogil


def minhash_signatures(list texts, Py_ssize_t shingle, Py_ssize_t num_perm, uint64_t seed, threads=None):
    """The MinHash signature of each text: ``num_perm`` uint64 values per text, rows in text
    order, as native-endian bytes (``len(texts) * num_perm * 8`` of them).  See minhash.h for
    the words, shingles and permutations."""
    cdef Py_ssize_t n = len(texts), i, longest = 0
    cdef list encoded = []
    cdef bytes b
    cdef const uint8_t** ptrs
    cdef int64_t* lens
    cdef uint64_t* coef
    cdef uint64_t* words
    cdef uint64_t* sig
    cdef int nt, failures = 0
    if shingle < 1:
        raise ValueError(f"shingle must be >= 1, got {shingle}")
    if num_perm < 1:
        raise ValueError(f"num_perm must be >= 1, got {num_perm}")
    for i in range(n):
        t = texts[i]
        if not isinstance(t, str):
            raise TypeError(f"texts[{i}] is a {type(t).__name__}, expected a str")
        b = (<str>t).encode("utf-8", "surrogatepass")
        encoded.append(b)
        if len(b) > longest:
            longest = len(b)
    out = bytearray(n * num_perm * 8)
    if n == 0:
        return bytes(out)
    ptrs = <const uint8_t**>malloc(n * sizeof(uint8_t*))
    lens = <int64_t*>malloc(n * sizeof(int64_t))
    coef = <uint64_t*>malloc(2 * num_perm * sizeof(uint64_t))
    if ptrs == NULL or lens == NULL or coef == NULL:
        free(ptrs); free(lens); free(coef)
        raise MemoryError("out of memory in minhash_signatures")
    for i in range(n):
        b = encoded[i]
        ptrs[i] = <const uint8_t*><const char*>b
        lens[i] = len(b)
    rv_mh_coefficients(seed, num_perm, coef)
    cdef uint64_t[::1] view = memoryview(out).cast("Q")
    sig = &view[0]
    nt = _resolve_threads(threads, n)
    with nogil, parallel(num_threads=nt):
        words = <uint64_t*>malloc((longest // 2 + 1) * sizeof(uint64_t))
        # every thread of the team reaches the loop (a work-sharing construct), allocated or not
        for i in prange(n, schedule="dynamic", chunksize=16):
            if words == NULL:
                failures += 1
            else:
                rv_mh_signature(ptrs[i], lens[i], shingle, coef, num_perm, words, sig + i * num_perm)
        free(words)
    free(ptrs); free(lens); free(coef)
    if failures:
        raise MemoryError("out of memory in minhash_signatures")
    return bytes(out)
