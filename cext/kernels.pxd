# Declarations of the core's C kernels (cext/*.h) and the CPython internals they
# read, shared by every per-family .pxi of _core.pyx (`from kernels cimport *`).
# Only declarations live here: nothing in this file exists at run time.

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t

cdef extern from *:
    """
    static inline void rv_prefetch_object(const void *o) {
    #if defined(__GNUC__) || defined(__clang__)
        __builtin_prefetch(o);
    #endif
    }
    """
    void rv_prefetch_object(const void* o) noexcept nogil

cdef extern from "Python.h":
    # PEP 393 storage, read in place: 1, 2 or 4 bytes per code point
    int PyUnicode_KIND(object o)
    void* PyUnicode_DATA(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)
    char* PyBytes_AS_STRING(object o)
    object PyUnicode_FromKindAndData(int kind, const void* buffer, Py_ssize_t size)
    # the cyclic collector, paused while a kernel builds many lists (Python >= 3.10)
    int PyGC_Disable()
    int PyGC_Enable()

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static int rv_omp_max_threads(void) { return omp_get_max_threads(); }
    #else
    static int rv_omp_max_threads(void) { return 1; }
    #endif
    """
    int rv_omp_max_threads() noexcept nogil

cdef extern from "buffer.h":
    # one growable buffer type (data, n, cap), typed per element
    ctypedef struct rv_i32buf:
        int32_t* data
        int64_t n
        int64_t cap
    ctypedef struct rv_i64buf:
        int64_t* data
        int64_t n
        int64_t cap
    ctypedef struct rv_u32buf:
        uint32_t* data
        int64_t n
        int64_t cap
    int rv_push_i32 "rv_buf_push"(rv_i32buf* b, int32_t x) noexcept nogil
    int rv_push_i64 "rv_buf_push"(rv_i64buf* b, int64_t x) noexcept nogil
    void rv_free_i32 "rv_buf_free"(rv_i32buf* b) noexcept nogil
    void rv_free_i64 "rv_buf_free"(rv_i64buf* b) noexcept nogil
    void rv_free_u32 "rv_buf_free"(rv_u32buf* b) noexcept nogil

cdef extern from "dispatch.h":
    int rv_dispatch_init(const char* forced) noexcept nogil
    int rv_isa_supported(int isa) noexcept nogil
    int rv_isa
    const char* rv_isa_names[4]
    int RV_ISA_COUNT

cdef extern from "vocab.h":
    ctypedef struct rv_vocab:
        char* arena
        int64_t* start
        int32_t n
    int rv_vocab_init(rv_vocab* v) noexcept nogil
    void rv_vocab_free(rv_vocab* v) noexcept nogil
    int32_t rv_vocab_add(rv_vocab* v, const char* s, int64_t length) noexcept nogil
    int32_t rv_vocab_find(rv_vocab* v, const char* s, int64_t length) noexcept nogil
    int32_t rv_vocab_stem(rv_vocab* v, int32_t id) noexcept nogil

cdef extern from "porter.h":
    int respeval_porter_stem(const char* word, int length, char* out, int out_cap) noexcept nogil

cdef extern from "tokenize.h":
    ctypedef struct rv_tok:
        pass
    void rv_tok_free(rv_tok* t) noexcept nogil
    int rv_tokenize_rouge(rv_vocab* v, int stem, int kind, const void* data, int64_t length,
                          rv_tok* t, rv_i32buf* ids, rv_i64buf* sents) noexcept nogil

cdef extern from "scratch.h":
    ctypedef struct rv_scratch:
        pass
    int rv_scratch_init(rv_scratch* s, int64_t vocab_size) noexcept nogil
    void rv_scratch_free(rv_scratch* s) noexcept nogil

cdef extern from "ngram.h":
    int rv_ngram_overlaps(rv_scratch* s, const int32_t* a, int64_t la,
                          const int32_t* b, int64_t lb, int max_order,
                          int64_t* overlap) noexcept nogil

cdef extern from "lcs.h":
    int64_t RV_LCS_MAX_CELLS
    int64_t rv_lcs_length(rv_scratch* s, const int32_t* a, int64_t la,
                          const int32_t* b, int64_t lb) noexcept nogil
    int64_t rv_lsum_hits(rv_scratch* s, const int32_t* ref, const int64_t* ref_sent,
                         int64_t nrs, const int32_t* cand, const int64_t* cand_sent,
                         int64_t ncs) noexcept nogil

cdef extern from "rouge.h":
    ctypedef struct rv_pair_scratch:
        rv_scratch s
    int rv_pair_scratch_init(rv_pair_scratch* ps, int64_t vocab_size) noexcept nogil
    void rv_pair_scratch_free(rv_pair_scratch* ps) noexcept nogil
    int rv_pair_stats(rv_pair_scratch* ps, const int32_t* a, int64_t la, const int32_t* b, int64_t lb,
                      int64_t vocab_size, int max_order, int want_lcs, int64_t* ov, int64_t* lcs) noexcept nogil

cdef extern from "rouge_texts.h":
    ctypedef struct rv_rouge_job:
        int max_order
        int want_lcs
        int want_lsum
        int stem
        int64_t ncols
        const int* kinds_p
        const void** datas_p
        const int64_t* lens_p
        const int* kinds_r
        const void** datas_r
        const int64_t* lens_r
        const int64_t* pair_pred
        int64_t nref
        const int64_t* group_start
        const int64_t* order
        int64_t* stats
        int64_t* lengths
    ctypedef struct rv_rouge_worker:
        pass
    int rv_rouge_worker_init(rv_rouge_worker* w) noexcept nogil
    void rv_rouge_worker_free(rv_rouge_worker* w) noexcept nogil
    int rv_rouge_group(rv_rouge_worker* w, const rv_rouge_job* job, int64_t r) noexcept nogil

cdef extern from "bleu.h":
    int rv_ngram_clip_maxref(rv_scratch* s, const int32_t* a, int64_t la, const int32_t* refs,
                             const int64_t* ref_off, int64_t nrefs, int max_order,
                             int64_t* correct) noexcept nogil
    enum:
        RV_SMOOTH_NONE
        RV_SMOOTH_FLOOR
        RV_SMOOTH_ADD_K
        RV_SMOOTH_EXP
    double rv_bleu_sentence_score(const int64_t* row, int max_order, int smooth, double value,
                                  int effective_order, int compensated) noexcept nogil

cdef extern from "mt_tokenize.h":
    int rv_is_space(uint32_t c) noexcept nogil
    int64_t rv_sacrebleu_13a(int kind, const void* data, int64_t length,
                             rv_u32buf* work1, rv_u32buf* work2,
                             rv_u32buf* out_cps, rv_i64buf* out_ends) noexcept nogil
    int64_t rv_squad_normalize(int kind, const void* data, int64_t length,
                               rv_u32buf* work, rv_u32buf* out_cps, rv_i64buf* out_ends) noexcept nogil
    int64_t rv_chrf_chars(int kind, const void* data, int64_t length, int keep_space,
                          rv_u32buf* out) noexcept nogil
    int64_t rv_chrf_words(int kind, const void* data, int64_t length, rv_u32buf* out_cps,
                          rv_i64buf* out_ends) noexcept nogil
    int64_t rv_tercom(int kind, const void* data, int64_t length, int flags, rv_u32buf* work1,
                      rv_u32buf* work2, rv_u32buf* out_cps, rv_i64buf* out_ends) noexcept nogil
    int64_t rv_tercom_twice(int kind, const void* data, int64_t length, int flags, rv_u32buf* work1,
                            rv_u32buf* work2, rv_u32buf* joined, rv_u32buf* out_cps,
                            rv_i64buf* out_ends) noexcept nogil
    int RV_TERCOM_NORMALIZED
    int RV_TERCOM_NO_PUNCT
    int RV_TERCOM_ASIAN
    int64_t rv_utf8_len(const uint32_t* cps, int64_t n) noexcept nogil
    int64_t rv_utf8_encode(const uint32_t* cps, int64_t n, char* out) noexcept nogil

cdef extern from "mt_ids.h":
    ctypedef struct rv_mt_ids_state:
        pass
    void rv_mt_ids_free(rv_mt_ids_state* st) noexcept nogil
    int rv_mt_ids(rv_vocab* v, rv_mt_ids_state* st, const uint32_t* cps, int64_t c0, const int64_t* ends,
                  int64_t ntok, rv_i32buf* ids) noexcept nogil

cdef extern from "mt_scan.h":
    ctypedef struct rv_scan:
        pass
    int RV_SCAN_FALLBACK
    void rv_scan_free(rv_scan* sc) noexcept nogil
    int rv_scan_13a_ids(rv_vocab* v, rv_scan* sc, int kind, const void* data, int64_t length,
                        rv_i32buf* ids) noexcept nogil
    int rv_scan_chrf_words_ids(rv_vocab* v, rv_scan* sc, int kind, const void* data, int64_t length,
                               rv_i32buf* ids) noexcept nogil
    int64_t rv_scan_chrf_chars(int kind, const void* data, int64_t length, int keep_space,
                               rv_u32buf* out) noexcept nogil

cdef extern from "ter.h":
    ctypedef struct rv_ter_scratch:
        pass
    void rv_ter_scratch_free(rv_ter_scratch* t) noexcept nogil
    int64_t rv_ter_edits(rv_ter_scratch* t, const int32_t* hyp, int64_t n, const int32_t* ref,
                         int64_t m) noexcept nogil
    int RV_TER_MAX_WORDS

cdef extern from "bootstrap.h":
    uint64_t rv_pb_row_hash(uint64_t seed, uint64_t key) noexcept nogil
    uint32_t rv_pb_weight(uint64_t row_hash, uint32_t b) noexcept nogil
    void rv_pb_accumulate(const double* x, int64_t rows, int64_t cols, const int64_t* keys, uint64_t seed,
                          double* acc, int64_t n_rep, int64_t b0, int64_t b1, double* scratch) noexcept nogil
    int RV_PB_TILE
