/* The trajectory readers' tables: the call table, (name id, canonical arguments) bytes ->
 * dense int32 id, first seen first; the memo, a call's text -> what reading it gave; and
 * the memo's hash of a call's text, which the JSON reader's span scanner computes as it
 * scans (trajectory_json.h) and the dict reader for its fingerprints (trajectory_py.h).
 * Growth is buffer.h's (rv_grow); the tables' own policy is only how far they grow.
 */
#ifndef RESPEVAL_TRAJECTORY_TABLE_H
#define RESPEVAL_TRAJECTORY_TABLE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "buffer.h"
#include "dispatch.h"

/* ------------------------------------------------------------------------------------
 * The call table: (name id, canonical arguments) bytes -> dense int32 id, first seen
 * first.  Names are short and hash 8 bytes at a time; keys of 64 bytes and more (most
 * calls' arguments) take rv_tj_buf_hash, a 64-byte block a step.
 */

/* The memo's hash of a call's text.  The text is read as 64-byte blocks of eight 8-byte
 * words, zero-padded at the end; word l of every block is added into accumulator l as
 * the product of its key-mixed halves plus its neighbour word (l ^ 1), and the eight
 * accumulators and the length are mixed once at the end.  No accumulator depends on
 * another, and none on the previous block but through an addition, so a vector path
 * takes a whole block in a few instructions; the two-lane multiply chain this replaced
 * was ~60% of the scan's time.  A block's words past the text's last 16-byte piece are
 * not added, so the 16-, 32- and 64-byte scans and the plain one give the same hash. */
static const uint64_t rv_tj_hkey[8] = {0x76FBA653E3D3BB33ULL, 0x15930763BE7BC931ULL, 0xBF9A35FD7FF5CD69ULL,
                                       0xB3A97E39D89696D5ULL, 0x1D0B18948E99C2EBULL, 0x894E2B5616AD2F4BULL,
                                       0x27EBA9FEB6CC669BULL, 0x69A36F60687A80B3ULL};
static const uint64_t rv_tj_hmix[8] = {0x59EA14252DEDCDC3ULL, 0xE91A20CF7CB549BBULL, 0x1A6746D51F51029FULL,
                                       0x9AE4DA91D763B4ADULL, 0x61CCF5F446AB9603ULL, 0xBEF89A29E01B52FBULL,
                                       0x35C3460A9632E78DULL, 0x7447CBBE1EF5E247ULL};

/* Piece j (0..3) of a block, its words w0 w1, into the accumulators. */
static inline void rv_tj_hash_piece(uint64_t acc[8], int j, uint64_t w0, uint64_t w1) {
    uint64_t k0 = w0 ^ rv_tj_hkey[2 * j], k1 = w1 ^ rv_tj_hkey[2 * j + 1];
    acc[2 * j] += w1 + (k0 & 0xFFFFFFFFu) * (k0 >> 32);
    acc[2 * j + 1] += w0 + (k1 & 0xFFFFFFFFu) * (k1 >> 32);
}

/* The 128-bit product of a and b, its halves xored. */
static inline uint64_t rv_tj_mul_fold(uint64_t a, uint64_t b) {
#if defined(__SIZEOF_INT128__)
    __uint128_t p = (__uint128_t)a * b;
    return (uint64_t)p ^ (uint64_t)(p >> 64);
#else
    uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
    uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;
    return (((mid << 32) | (uint32_t)ll)) ^ (hh + (lh >> 32) + (hl >> 32) + (mid >> 32));
#endif
}

static inline uint64_t rv_tj_hash_end(const uint64_t acc[8], int64_t len) {
    uint64_t h = (uint64_t)len * 0x9E3779B97F4A7C15ULL;
    for (int l = 0; l < 8; l += 2) h += rv_tj_mul_fold(acc[l] ^ rv_tj_hmix[l], acc[l + 1] ^ rv_tj_hmix[l + 1]);
    h ^= h >> 37;
    h *= 0x165667919E3779F9ULL;
    h ^= h >> 32;
    return h;
}

static inline uint64_t rv_tj_text_hash(const char *s, int64_t len) {
    uint64_t acc[8] = {0, 0, 0, 0, 0, 0, 0, 0}, w[2];
    int j = 0;
    for (int64_t k = 0; k < len; k += 16, j = (j + 1) & 3) {
        w[0] = w[1] = 0;
        memcpy(w, s + k, (size_t)(len - k < 16 ? len - k : 16));
        rv_tj_hash_piece(acc, j, w[0], w[1]);
    }
    return rv_tj_hash_end(acc, len);
}

/* rv_tj_text_hash of a buffer s[0:n], a whole 64-byte block a step on the vector paths
 * (the span scanners' lanes without the scanning): the calls table's long keys and the
 * dict reader's fingerprints.  A short text costs less through a plain serial hash (the
 * final mixing here is ~20 cycles), so the callers take this one from 64 bytes on. */
#if defined(RV_X86) && defined(__SSE2__)
RV_TARGET_AVX512 static uint64_t rv_tj_buf_hash_avx512(const char *s, int64_t n) {
    const __m512i key = _mm512_loadu_si512((const void *)rv_tj_hkey);
    __m512i acc = _mm512_setzero_si512();
    for (int64_t i = 0; i < n; i += 64) {
        __mmask8 words = 0xFF;
        __m512i v;
        if (n - i >= 64) {
            v = _mm512_loadu_si512((const void *)(s + i));
        } else {
            v = _mm512_maskz_loadu_epi8((1ULL << (n - i)) - 1, s + i); /* reads no byte past s[n - 1] */
            words = (__mmask8)((1u << (2 * ((n - i + 15) >> 4))) - 1);
        }
        __m512i k = _mm512_xor_si512(v, key);
        __m512i add = _mm512_add_epi64(_mm512_shuffle_epi32(v, _MM_PERM_BADC),
                                       _mm512_mul_epu32(k, _mm512_srli_epi64(k, 32)));
        acc = _mm512_mask_add_epi64(acc, words, acc, add);
    }
    uint64_t a[8];
    _mm512_storeu_si512((void *)a, acc);
    return rv_tj_hash_end(a, n);
}

RV_TARGET_AVX2 static uint64_t rv_tj_buf_hash_avx2(const char *s, int64_t n) {
    const __m256i key0 = _mm256_loadu_si256((const __m256i *)rv_tj_hkey);
    const __m256i key1 = _mm256_loadu_si256((const __m256i *)(rv_tj_hkey + 4));
    __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m256i v0 = _mm256_loadu_si256((const __m256i *)(s + i));
        __m256i v1 = _mm256_loadu_si256((const __m256i *)(s + i + 32));
        __m256i k0 = _mm256_xor_si256(v0, key0), k1 = _mm256_xor_si256(v1, key1);
        acc0 = _mm256_add_epi64(acc0, _mm256_add_epi64(_mm256_shuffle_epi32(v0, _MM_SHUFFLE(1, 0, 3, 2)),
                                                       _mm256_mul_epu32(k0, _mm256_srli_epi64(k0, 32))));
        acc1 = _mm256_add_epi64(acc1, _mm256_add_epi64(_mm256_shuffle_epi32(v1, _MM_SHUFFLE(1, 0, 3, 2)),
                                                       _mm256_mul_epu32(k1, _mm256_srli_epi64(k1, 32))));
    }
    uint64_t a[8];
    _mm256_storeu_si256((__m256i *)a, acc0);
    _mm256_storeu_si256((__m256i *)(a + 4), acc1);
    /* the last, partial block a 16-byte piece at a time, zero-padded */
    for (int j = 0; i < n; i += 16, j++) {
        uint64_t w[2] = {0, 0};
        memcpy(w, s + i, (size_t)(n - i < 16 ? n - i : 16));
        rv_tj_hash_piece(a, j, w[0], w[1]);
    }
    return rv_tj_hash_end(a, n);
}
#endif

static inline uint64_t rv_tj_buf_hash(const char *s, int64_t n) {
#if defined(RV_X86) && defined(__SSE2__)
    if (rv_isa >= RV_ISA_AVX512) return rv_tj_buf_hash_avx512(s, n);
    if (rv_isa >= RV_ISA_AVX2) return rv_tj_buf_hash_avx2(s, n);
#endif
    return rv_tj_text_hash(s, n);
}

static inline uint64_t rv_traj_hash(const char *s, int64_t n) {
    if (n >= 64) return rv_tj_buf_hash(s, n);
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n, w;
    while (n >= 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 31;
        s += 8;
        n -= 8;
    }
    if (n > 0) {
        w = 0;
        memcpy(&w, s, (size_t)n);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
    }
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93ULL;
    h ^= h >> 32;
    return h;
}

typedef struct {
    uint64_t hash;
    int64_t off;  /* the key's bytes in the arena: a match reads them without start[id] */
    int32_t id;
    int32_t len;
} rv_traj_slot;

typedef struct {
    char *arena;
    int64_t arena_len, arena_cap;
    int64_t *start;  /* start[id] .. start[id + 1] in arena: n + 1 entries */
    int64_t start_cap;
    uint64_t *hash;
    int64_t hash_cap;
    int32_t n;
    rv_traj_slot *slots;
    int64_t nslots;
} rv_traj_table;

static inline void rv_traj_table_free(rv_traj_table *t) {
    free(t->arena); free(t->start); free(t->hash); free(t->slots);
    memset(t, 0, sizeof(*t));
}

static inline int rv_traj_table_init(rv_traj_table *t) {
    memset(t, 0, sizeof(*t));
    t->arena_cap = 1 << 16;
    t->hash_cap = 1 << 10;
    t->start_cap = t->hash_cap + 1;
    t->nslots = 1 << 11;
    t->arena = (char *)malloc((size_t)t->arena_cap);
    t->start = (int64_t *)malloc(sizeof(int64_t) * (size_t)t->start_cap);
    t->hash = (uint64_t *)malloc(sizeof(uint64_t) * (size_t)t->hash_cap);
    t->slots = (rv_traj_slot *)malloc(sizeof(rv_traj_slot) * (size_t)t->nslots);
    if (!t->arena || !t->start || !t->hash || !t->slots) {
        rv_traj_table_free(t);
        return -1;
    }
    memset(t->slots, 0xff, sizeof(rv_traj_slot) * (size_t)t->nslots);
    t->start[0] = 0;
    return 0;
}

/* Asks for p[0:n] to be on its way into the cache.  A prefetch never faults, so p may
 * point anywhere: the JSON reader prefetches the objects of rows a few places ahead
 * blindly, as reading each row's text front to back first waits on memory (~5% of the
 * reading time, measured interleaved). */
#define RV_PREFETCH_ROW_BYTES 1024
#define RV_PREFETCH_ROWS_AHEAD 4
static inline void rv_prefetch_bytes(const char *p, int64_t n) {
#if defined(__GNUC__)
    for (int64_t k = 0; k < n; k += 64) __builtin_prefetch(p + k);
#else
    (void)p;
    (void)n;
#endif
}

/* Spare tables.  The bulk pipeline and the benchmarks intern chunk after chunk, each in a
 * new CallTable whose two big tables (calls and the memo) reach tens of MB; fresh memory
 * costs a page fault per 4 KB, ~10% of the reading time.  So up to RV_TRAJ_SPARES freed
 * tables of at most RV_TRAJ_SPARE_BYTES each are kept, emptied, for the next ones to
 * start from.  Called only with the GIL held (CallTable's constructor and destructor). */
#define RV_TRAJ_SPARES 2
#define RV_TRAJ_SPARE_BYTES ((int64_t)32 << 20)
static rv_traj_table rv_traj_spares[RV_TRAJ_SPARES];
static int rv_traj_nspares = 0;

static inline int64_t rv_traj_table_bytes(const rv_traj_table *t) {
    return t->arena_cap + (t->start_cap + t->hash_cap) * 8 + t->nslots * (int64_t)sizeof(rv_traj_slot);
}

/* rv_traj_table_init, from a spare table if there is one. */
static inline int rv_traj_table_init_spare(rv_traj_table *t) {
    if (rv_traj_nspares == 0) return rv_traj_table_init(t);
    *t = rv_traj_spares[--rv_traj_nspares];
    t->n = 0;
    t->arena_len = 0;
    t->start[0] = 0;
    memset(t->slots, 0xff, sizeof(rv_traj_slot) * (size_t)t->nslots);
    return 0;
}

/* rv_traj_table_free, keeping the table as a spare if there is room. */
static inline void rv_traj_table_release(rv_traj_table *t) {
    if (t->slots && rv_traj_nspares < RV_TRAJ_SPARES && rv_traj_table_bytes(t) <= RV_TRAJ_SPARE_BYTES) {
        rv_traj_spares[rv_traj_nspares++] = *t;
        memset(t, 0, sizeof(*t));
        return;
    }
    rv_traj_table_free(t);
}

static inline int rv_traj_table_rehash(rv_traj_table *t, int64_t nslots) {
    rv_traj_slot *slots = (rv_traj_slot *)malloc(sizeof(rv_traj_slot) * (size_t)nslots);
    if (!slots) return -1;
    memset(slots, 0xff, sizeof(rv_traj_slot) * (size_t)nslots);
    uint64_t mask = (uint64_t)nslots - 1;
    for (int32_t id = 0; id < t->n; id++) {
        uint64_t p = t->hash[id] & mask;
        while (slots[p].id >= 0) p = (p + 1) & mask;
        slots[p].hash = t->hash[id];
        slots[p].off = t->start[id];
        slots[p].id = id;
        slots[p].len = (int32_t)(t->start[id + 1] - t->start[id]);
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = nslots;
    return 0;
}

/* The next capacity after cap: x4 while below big, then x2 (rv_grow doubles from cap to
 * at least this).  Each growth of the slots re-inserts every key at a random slot, which
 * costs more than the probes themselves on tables of a few hundred thousand calls;
 * growing faster early makes that rarer. */
static inline int64_t rv_traj_grown(int64_t cap, int64_t big) {
    return cap < big ? cap * 4 : cap * 2;
}

/* The id of key s[0:n] whose rv_traj_hash is h, added if new; -1 no memory, -2 beyond
 * int32 ids or lengths. */
static inline int32_t rv_traj_table_add_h(rv_traj_table *t, const char *s, int64_t n, uint64_t h) {
    if (n > INT32_MAX) return -2;
    uint64_t mask = (uint64_t)t->nslots - 1, p = h & mask;
    for (;;) {
        const rv_traj_slot *sl = &t->slots[p];
        if (sl->id < 0) break;
        if (sl->hash == h && sl->len == n && (n == 0 || memcmp(t->arena + sl->off, s, (size_t)n) == 0))
            return sl->id;
        p = (p + 1) & mask;
    }
    if (t->n >= INT32_MAX - 1) return -2;
    if (t->n >= t->hash_cap) {
        int64_t cap = rv_traj_grown(t->hash_cap, (int64_t)1 << 22);
        if (rv_grow((void **)&t->hash, &t->hash_cap, cap, sizeof(uint64_t)) ||
            rv_grow((void **)&t->start, &t->start_cap, cap + 1, sizeof(int64_t)))
            return -1;
    }
    if (t->arena_len + n > t->arena_cap) {
        int64_t cap = rv_traj_grown(t->arena_cap, (int64_t)1 << 26);
        if (rv_grow((void **)&t->arena, &t->arena_cap, cap > t->arena_len + n ? cap : t->arena_len + n, 1))
            return -1;
    }
    int32_t id = t->n;
    int64_t off = t->arena_len;
    if (n) memcpy(t->arena + off, s, (size_t)n);
    t->arena_len += n;
    t->start[id + 1] = t->arena_len;
    t->hash[id] = h;
    t->n++;
    if ((int64_t)t->n * 2 > t->nslots) {
        if (rv_traj_table_rehash(t, rv_traj_grown(t->nslots, (int64_t)1 << 22)) != 0) return -1;
    } else {
        t->slots[p].hash = h;
        t->slots[p].off = off;
        t->slots[p].id = id;
        t->slots[p].len = (int32_t)n;
    }
    return id;
}

static inline int32_t rv_traj_table_add(rv_traj_table *t, const char *s, int64_t n) {
    return rv_traj_table_add_h(t, s, n, rv_traj_hash(s, n));
}

/* Adds the k keys base[start[i] : end[i]] (a row's calls), ids into out: every key is
 * hashed and its slot prefetched first, so the table's cache misses overlap.  0, or the
 * first failure of rv_traj_table_add. */
static inline int rv_traj_table_add_many(rv_traj_table *t, const char *base, const int64_t *start,
                                         const int64_t *end, int64_t k, uint64_t *hashes, int32_t *out) {
    uint64_t mask = (uint64_t)t->nslots - 1;
    for (int64_t i = 0; i < k; i++) {
        hashes[i] = rv_traj_hash(base + start[i], end[i] - start[i]);
#if defined(__GNUC__)
        __builtin_prefetch(&t->slots[hashes[i] & mask]);
#endif
    }
    for (int64_t i = 0; i < k; i++) {
        int32_t id = rv_traj_table_add_h(t, base + start[i], end[i] - start[i], hashes[i]);
        if (id < 0) return id;
        out[i] = id;
    }
    return 0;
}

/* The id of key s[0:n] whose rv_traj_hash is h, or -1. */
static inline int32_t rv_traj_table_find_h(const rv_traj_table *t, const char *s, int64_t n, uint64_t h) {
    uint64_t mask = (uint64_t)t->nslots - 1, p = h & mask;
    for (;;) {
        const rv_traj_slot *sl = &t->slots[p];
        if (sl->id < 0) return -1;
        if (sl->hash == h && sl->len == n && (n == 0 || memcmp(t->arena + sl->off, s, (size_t)n) == 0))
            return sl->id;
        p = (p + 1) & mask;
    }
}

/* The id of key s[0:n], or -1. */
static inline int32_t rv_traj_table_find(const rv_traj_table *t, const char *s, int64_t n) {
    return rv_traj_table_find_h(t, s, n, rv_traj_hash(s, n));
}

/* ------------------------------------------------------------------------------------
 * The call memo: a call object's exact JSON text -> what reading it gave (its name id
 * and call id, or "dropped" by the name normaliser).  Evaluation data repeats calls byte
 * for byte (a task's reference in every trial, a prediction that copies the reference),
 * and a repeated text needs only to be found, hashed and compared, not parsed and
 * canonicalised again.  Identical bytes read the same way, so a hit gives exactly the
 * ids a full read would.  The memo belongs to one CallTable and one set of reading
 * options; it stops growing at RV_TRAJ_MEMO_MAX_BYTES of text.
 */

#define RV_TRAJ_MEMO_MAX_BYTES ((int64_t)1 << 29)
#define RV_TRAJ_MEMO_MISS UINT64_MAX

typedef struct {
    rv_traj_table raw;  /* call texts as written */
    uint64_t *val;      /* per text: (name id + 1) << 32 | call id; name id + 1 == 0: dropped */
    int64_t val_cap;
} rv_traj_memo;

static inline uint64_t rv_traj_memo_pack(int32_t name_id, int32_t call_id) {
    return ((uint64_t)(uint32_t)(name_id + 1) << 32) | (uint64_t)(uint32_t)call_id;
}

static inline int32_t rv_traj_memo_name(uint64_t v) { return (int32_t)(uint32_t)(v >> 32) - 1; }
static inline int32_t rv_traj_memo_call(uint64_t v) { return (int32_t)(uint32_t)v; }

static inline void rv_traj_memo_free(rv_traj_memo *m) {
    rv_traj_table_release(&m->raw);
    free(m->val);
    memset(m, 0, sizeof(*m));
}

static inline int rv_traj_memo_init(rv_traj_memo *m) {
    memset(m, 0, sizeof(*m));
    return rv_traj_table_init_spare(&m->raw);
}

/* What the call text s[0:n] (hash h) gave, or RV_TRAJ_MEMO_MISS. */
static inline uint64_t rv_traj_memo_find(const rv_traj_memo *m, const char *s, int64_t n, uint64_t h) {
    int32_t id = rv_traj_table_find_h(&m->raw, s, n, h);
    return id < 0 ? RV_TRAJ_MEMO_MISS : m->val[id];
}

/* Remembers that the call text s[0:n] (hash h) gave v; 0, or -1 without memory.  A full
 * memo is left as it is. */
static inline int rv_traj_memo_add(rv_traj_memo *m, const char *s, int64_t n, uint64_t h, uint64_t v) {
    if (m->raw.arena_len + n > RV_TRAJ_MEMO_MAX_BYTES) return 0;
    int32_t id = rv_traj_table_add_h(&m->raw, s, n, h);
    if (id == -2) return 0;
    if (id < 0) return -1;
    if (rv_grow((void **)&m->val, &m->val_cap, (int64_t)id + 1, sizeof(uint64_t))) return -1;
    m->val[id] = v;
    return 0;
}

#endif
