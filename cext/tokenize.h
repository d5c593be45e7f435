/* rouge-score's default tokenizer, run over CPython's own string storage.
 *
 * rouge-score computes re.sub("[^a-z0-9]+", " ", text.lower()).  The only code
 * points whose lowercase contains [a-z0-9] are ASCII letters and digits, U+0130
 * (lowercases to "i" + U+0307, so it ends a token after an "i") and the Kelvin sign
 * U+212A (lowercases to "k").  Every other code point separates tokens.
 *
 * A str is 1, 2 or 4 bytes per code point (PEP 393).  A 2- or 4-byte string is first
 * narrowed to one byte per code point (ASCII kept, U+212A -> 'k', anything else -> 0,
 * a separator), many code points per instruction; a string holding U+0130 takes a
 * scalar narrowing that writes "i" and a separator for it.  Then, 64 bytes per step,
 * the bytes are classified ([A-Za-z0-9] and '\n' bit masks) and lowercased; tokens
 * are runs of set bits found with count-trailing-zeros; their ids are looked up in
 * batches whose vocabulary slots are prefetched first.  The classification and the
 * narrowing have one version per instruction set (dispatch.h); the results are the
 * same bytes and masks on every path.
 */
#ifndef RESPEVAL_TOKENIZE_H
#define RESPEVAL_TOKENIZE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "dispatch.h"
#include "vocab.h"

#define RV_TOK_BATCH 64

typedef struct {
    uint8_t *lb; int64_t lb_cap;       /* lowercased bytes, + 64 zero bytes of padding */
    uint64_t *tm, *nl; int64_t tm_cap, nl_cap;   /* per 64 bytes: token chars, newlines */
    uint8_t *nb; int64_t nb_cap;       /* a 2/4-byte string narrowed to bytes */
    rv_key keys[RV_TOK_BATCH];         /* tokens waiting for their ids ... */
    int64_t pos[RV_TOK_BATCH];         /* ... and where they start in lb */
} rv_tok;

static inline void rv_tok_free(rv_tok *t) {
    free(t->lb); free(t->tm); free(t->nl); free(t->nb);
    t->lb = NULL; t->tm = t->nl = NULL; t->nb = NULL;
    t->lb_cap = t->tm_cap = t->nl_cap = t->nb_cap = 0;
}

/* ------------------------------------------------------------------ classification */
/* lb[i] = lowercase of s[i] for [A-Za-z0-9] (anything for other bytes); bit i%64 of
 * tm[i/64] set for [A-Za-z0-9], of nl[i/64] for '\n'; nw = ceil(L / 64) words.
 * Reads s[0..L) only. */

static const uint8_t rv_rouge_lower[256] = {
    ['0'] = '0', ['1'] = '1', ['2'] = '2', ['3'] = '3', ['4'] = '4',
    ['5'] = '5', ['6'] = '6', ['7'] = '7', ['8'] = '8', ['9'] = '9',
    ['a'] = 'a', ['b'] = 'b', ['c'] = 'c', ['d'] = 'd', ['e'] = 'e', ['f'] = 'f', ['g'] = 'g',
    ['h'] = 'h', ['i'] = 'i', ['j'] = 'j', ['k'] = 'k', ['l'] = 'l', ['m'] = 'm', ['n'] = 'n',
    ['o'] = 'o', ['p'] = 'p', ['q'] = 'q', ['r'] = 'r', ['s'] = 's', ['t'] = 't', ['u'] = 'u',
    ['v'] = 'v', ['w'] = 'w', ['x'] = 'x', ['y'] = 'y', ['z'] = 'z',
    ['A'] = 'a', ['B'] = 'b', ['C'] = 'c', ['D'] = 'd', ['E'] = 'e', ['F'] = 'f', ['G'] = 'g',
    ['H'] = 'h', ['I'] = 'i', ['J'] = 'j', ['K'] = 'k', ['L'] = 'l', ['M'] = 'm', ['N'] = 'n',
    ['O'] = 'o', ['P'] = 'p', ['Q'] = 'q', ['R'] = 'r', ['S'] = 's', ['T'] = 't', ['U'] = 'u',
    ['V'] = 'v', ['W'] = 'w', ['X'] = 'x', ['Y'] = 'y', ['Z'] = 'z',
};

static inline void rv_classify_portable(const uint8_t *s, int64_t L, uint8_t *lb, uint64_t *tm, uint64_t *nl) {
    for (int64_t w = 0; w * 64 < L; w++) {
        int64_t i0 = w * 64, k = L - i0 < 64 ? L - i0 : 64;
        uint64_t t = 0, n = 0;
        for (int64_t j = 0; j < k; j++) {
            uint8_t c = s[i0 + j], lo = rv_rouge_lower[c];
            lb[i0 + j] = lo;
            t |= (uint64_t)(lo != 0) << j;
            n |= (uint64_t)(c == '\n') << j;
        }
        tm[w] = t;
        nl[w] = n;
    }
}

/* U+0130 (lowercases to 'i' + a separating combining dot) makes a string one byte
 * longer per occurrence; such strings are narrowed here, one code point at a time. */
static inline int64_t rv_narrow_scalar(int kind, const void *d, int64_t L, uint8_t *out) {
    int64_t o = 0;
    for (int64_t i = 0; i < L; i++) {
        uint32_t c = kind == 2 ? ((const uint16_t *)d)[i] : ((const uint32_t *)d)[i];
        if (c < 128) out[o++] = (uint8_t)c;
        else if (c == 0x212A) out[o++] = 'k';
        else if (c == 0x130) { out[o++] = 'i'; out[o++] = 0; }
        else out[o++] = 0;
    }
    return o;
}

/* A 2/4-byte string to bytes (ASCII kept, U+212A -> 'k', else 0); -1 if it holds U+0130. */
static inline int64_t rv_narrow_portable(int kind, const void *d, int64_t L, uint8_t *out) {
    for (int64_t i = 0; i < L; i++) {
        uint32_t c = kind == 2 ? ((const uint16_t *)d)[i] : ((const uint32_t *)d)[i];
        if (c == 0x130) return -1;
        out[i] = c < 128 ? (uint8_t)c : c == 0x212A ? 'k' : 0;
    }
    return L;
}

/* The 64 bytes of block i0 of s[0..L): in place, or (the last, short block) copied into
 * `tail` and zero-padded, so vector loads never read past the string. */
static inline const uint8_t *rv_block64(const uint8_t *s, int64_t L, int64_t i0, uint8_t tail[64]) {
    return rv_block(s, L, i0, 64, tail);
}

/* The bits of block i0 that are inside s[0..L). */
static inline uint64_t rv_valid64(int64_t L, int64_t i0) {
    return L - i0 >= 64 ? ~0ULL : (1ULL << (L - i0)) - 1;
}

#ifdef RV_X86
/* SSE2 and AVX2 compare bytes as signed: x in [lo, lo + n) iff (x - lo) - 128 < n - 128 (signed). */
RV_TARGET_SSE2 static void rv_classify_sse2(const uint8_t *s, int64_t L, uint8_t *lb, uint64_t *tm, uint64_t *nl) {
    const __m128i bA = _mm_set1_epi8((char)(-128 - 'A')), ba = _mm_set1_epi8((char)(-128 - 'a'));
    const __m128i b0 = _mm_set1_epi8((char)(-128 - '0')), n26 = _mm_set1_epi8((char)(-128 + 26));
    const __m128i n10 = _mm_set1_epi8((char)(-128 + 10)), x20 = _mm_set1_epi8(0x20), lf = _mm_set1_epi8('\n');
    uint8_t tail[64];
    for (int64_t w = 0; w * 64 < L; w++) {
        int64_t i0 = w * 64;
        const uint8_t *p = rv_block64(s, L, i0, tail);
        uint64_t t = 0, n = 0;
        for (int q = 0; q < 4; q++) {
            __m128i c = _mm_loadu_si128((const __m128i *)(p + 16 * q));
            __m128i up = _mm_cmplt_epi8(_mm_add_epi8(c, bA), n26);
            __m128i lo = _mm_cmplt_epi8(_mm_add_epi8(c, ba), n26);
            __m128i dg = _mm_cmplt_epi8(_mm_add_epi8(c, b0), n10);
            _mm_storeu_si128((__m128i *)(lb + i0 + 16 * q), _mm_add_epi8(c, _mm_and_si128(up, x20)));
            t |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(up, lo), dg)) << (16 * q);
            n |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(c, lf)) << (16 * q);
        }
        t &= rv_valid64(L, i0);
        n &= rv_valid64(L, i0);
        tm[w] = t;
        nl[w] = n;
    }
}

RV_TARGET_AVX2 static void rv_classify_avx2(const uint8_t *s, int64_t L, uint8_t *lb, uint64_t *tm, uint64_t *nl) {
    const __m256i bA = _mm256_set1_epi8((char)(-128 - 'A')), ba = _mm256_set1_epi8((char)(-128 - 'a'));
    const __m256i b0 = _mm256_set1_epi8((char)(-128 - '0')), n26 = _mm256_set1_epi8((char)(-128 + 26));
    const __m256i n10 = _mm256_set1_epi8((char)(-128 + 10)), x20 = _mm256_set1_epi8(0x20);
    const __m256i lf = _mm256_set1_epi8('\n');
    uint8_t tail[64];
    for (int64_t w = 0; w * 64 < L; w++) {
        int64_t i0 = w * 64;
        const uint8_t *p = rv_block64(s, L, i0, tail);
        uint64_t t = 0, n = 0;
        for (int q = 0; q < 2; q++) {
            __m256i c = _mm256_loadu_si256((const __m256i *)(p + 32 * q));
            __m256i up = _mm256_cmpgt_epi8(n26, _mm256_add_epi8(c, bA));
            __m256i lo = _mm256_cmpgt_epi8(n26, _mm256_add_epi8(c, ba));
            __m256i dg = _mm256_cmpgt_epi8(n10, _mm256_add_epi8(c, b0));
            _mm256_storeu_si256((__m256i *)(lb + i0 + 32 * q), _mm256_add_epi8(c, _mm256_and_si256(up, x20)));
            t |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_or_si256(_mm256_or_si256(up, lo), dg)) << (32 * q);
            n |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(c, lf)) << (32 * q);
        }
        t &= rv_valid64(L, i0);
        n &= rv_valid64(L, i0);
        tm[w] = t;
        nl[w] = n;
    }
}

RV_TARGET_AVX512 static void rv_classify_avx512(const uint8_t *s, int64_t L, uint8_t *lb, uint64_t *tm, uint64_t *nl) {
    const __m512i ca = _mm512_set1_epi8('a'), cA = _mm512_set1_epi8('A'), c0 = _mm512_set1_epi8('0');
    const __m512i n26 = _mm512_set1_epi8(26), n10 = _mm512_set1_epi8(10), x20 = _mm512_set1_epi8(0x20);
    const __m512i lf = _mm512_set1_epi8('\n');
    for (int64_t w = 0; w * 64 < L; w++) {
        int64_t i0 = w * 64, k = L - i0;
        __mmask64 valid = k >= 64 ? ~0ULL : ((1ULL << k) - 1);
        __m512i c = _mm512_maskz_loadu_epi8(valid, s + i0);
        __mmask64 up = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(c, cA), n26);
        __mmask64 lo = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(c, ca), n26);
        __mmask64 dg = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(c, c0), n10);
        _mm512_storeu_si512((void *)(lb + i0), _mm512_mask_add_epi8(c, up, c, x20));
        tm[w] = (up | lo | dg) & valid;
        nl[w] = _mm512_cmpeq_epi8_mask(c, lf) & valid;
    }
}

RV_TARGET_SSE2 static int64_t rv_narrow_sse2(int kind, const void *d, int64_t L, uint8_t *out) {
    const __m128i idot = _mm_set1_epi16(0x130), kel = _mm_set1_epi16(0x212A), k = _mm_set1_epi16('k');
    int64_t i = 0;
    if (kind == 2) {
        const uint16_t *s = (const uint16_t *)d;
        for (; i + 8 <= L; i += 8) {
            __m128i c = _mm_loadu_si128((const __m128i *)(s + i));
            if (_mm_movemask_epi8(_mm_cmpeq_epi16(c, idot))) return -1;
            /* ASCII: c < 128 (as unsigned: no bit above 6 set) */
            __m128i asc = _mm_cmpeq_epi16(_mm_and_si128(c, _mm_set1_epi16((short)0xFF80)), _mm_setzero_si128());
            __m128i x = _mm_or_si128(_mm_and_si128(asc, c), _mm_and_si128(_mm_cmpeq_epi16(c, kel), k));
            _mm_storel_epi64((__m128i *)(out + i), _mm_packus_epi16(x, x));
        }
    } else {
        const uint32_t *s = (const uint32_t *)d;
        const __m128i idot4 = _mm_set1_epi32(0x130), kel4 = _mm_set1_epi32(0x212A), k4 = _mm_set1_epi32('k');
        const __m128i hi = _mm_set1_epi32((int)0xFFFFFF80);
        (void)idot; (void)kel; (void)k;
        for (; i + 4 <= L; i += 4) {
            __m128i c = _mm_loadu_si128((const __m128i *)(s + i));
            if (_mm_movemask_epi8(_mm_cmpeq_epi32(c, idot4))) return -1;
            __m128i asc = _mm_cmpeq_epi32(_mm_and_si128(c, hi), _mm_setzero_si128());
            __m128i x = _mm_or_si128(_mm_and_si128(asc, c), _mm_and_si128(_mm_cmpeq_epi32(c, kel4), k4));
            x = _mm_packs_epi32(x, x);   /* values <= 127: no saturation */
            x = _mm_packus_epi16(x, x);
            uint32_t four = (uint32_t)_mm_cvtsi128_si32(x);
            memcpy(out + i, &four, 4);
        }
    }
    int64_t r = rv_narrow_portable(kind, kind == 2 ? (const void *)((const uint16_t *)d + i)
                                                   : (const void *)((const uint32_t *)d + i), L - i, out + i);
    return r < 0 ? -1 : L;
}

RV_TARGET_AVX2 static int64_t rv_narrow_avx2(int kind, const void *d, int64_t L, uint8_t *out) {
    int64_t i = 0;
    if (kind == 2) {
        const uint16_t *s = (const uint16_t *)d;
        const __m256i idot = _mm256_set1_epi16(0x130), kel = _mm256_set1_epi16(0x212A), k = _mm256_set1_epi16('k');
        const __m256i hi = _mm256_set1_epi16((short)0xFF80);
        for (; i + 16 <= L; i += 16) {
            __m256i c = _mm256_loadu_si256((const __m256i *)(s + i));
            if (_mm256_movemask_epi8(_mm256_cmpeq_epi16(c, idot))) return -1;
            __m256i asc = _mm256_cmpeq_epi16(_mm256_and_si256(c, hi), _mm256_setzero_si256());
            __m256i x = _mm256_or_si256(_mm256_and_si256(asc, c), _mm256_and_si256(_mm256_cmpeq_epi16(c, kel), k));
            __m128i packed = _mm_packus_epi16(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
            _mm_storeu_si128((__m128i *)(out + i), packed);
        }
    } else {
        const uint32_t *s = (const uint32_t *)d;
        const __m256i idot = _mm256_set1_epi32(0x130), kel = _mm256_set1_epi32(0x212A), k = _mm256_set1_epi32('k');
        const __m256i hi = _mm256_set1_epi32((int)0xFFFFFF80);
        for (; i + 8 <= L; i += 8) {
            __m256i c = _mm256_loadu_si256((const __m256i *)(s + i));
            if (_mm256_movemask_epi8(_mm256_cmpeq_epi32(c, idot))) return -1;
            __m256i asc = _mm256_cmpeq_epi32(_mm256_and_si256(c, hi), _mm256_setzero_si256());
            __m256i x = _mm256_or_si256(_mm256_and_si256(asc, c), _mm256_and_si256(_mm256_cmpeq_epi32(c, kel), k));
            __m128i lo = _mm256_castsi256_si128(x), hi128 = _mm256_extracti128_si256(x, 1);
            __m128i w16 = _mm_packs_epi32(lo, hi128);
            __m128i b8 = _mm_packus_epi16(w16, w16);
            _mm_storel_epi64((__m128i *)(out + i), b8);
        }
    }
    int64_t r = rv_narrow_portable(kind, kind == 2 ? (const void *)((const uint16_t *)d + i)
                                                   : (const void *)((const uint32_t *)d + i), L - i, out + i);
    return r < 0 ? -1 : L;
}

RV_TARGET_AVX512 static int64_t rv_narrow_avx512(int kind, const void *d, int64_t L, uint8_t *out) {
    int64_t i = 0;
    if (kind == 2) {
        const uint16_t *s = (const uint16_t *)d;
        const __m512i idot = _mm512_set1_epi16(0x130), kel = _mm512_set1_epi16(0x212A), k128 = _mm512_set1_epi16(128);
        const __m512i kk = _mm512_set1_epi16('k');
        for (; i < L; i += 32) {
            int64_t left = L - i;
            __mmask32 valid = left >= 32 ? 0xFFFFFFFFu : ((1u << left) - 1);
            __m512i c = _mm512_maskz_loadu_epi16(valid, s + i);
            if (_mm512_mask_cmpeq_epi16_mask(valid, c, idot)) return -1;
            __mmask32 asc = _mm512_cmplt_epu16_mask(c, k128), kv = _mm512_cmpeq_epi16_mask(c, kel);
            __m512i x = _mm512_maskz_mov_epi16(asc, c);
            x = _mm512_mask_mov_epi16(x, kv, kk);
            _mm256_mask_storeu_epi8(out + i, valid, _mm512_cvtepi16_epi8(x));
        }
    } else {
        const uint32_t *s = (const uint32_t *)d;
        const __m512i idot = _mm512_set1_epi32(0x130), kel = _mm512_set1_epi32(0x212A), k128 = _mm512_set1_epi32(128);
        const __m512i kk = _mm512_set1_epi32('k');
        for (; i < L; i += 16) {
            int64_t left = L - i;
            __mmask16 valid = left >= 16 ? 0xFFFF : (__mmask16)((1u << left) - 1);
            __m512i c = _mm512_maskz_loadu_epi32(valid, s + i);
            if (_mm512_mask_cmpeq_epi32_mask(valid, c, idot)) return -1;
            __mmask16 asc = _mm512_cmplt_epu32_mask(c, k128), kv = _mm512_cmpeq_epi32_mask(c, kel);
            __m512i x = _mm512_maskz_mov_epi32(asc, c);
            x = _mm512_mask_mov_epi32(x, kv, kk);
            _mm_mask_storeu_epi8(out + i, valid, _mm512_cvtepi32_epi8(x));
        }
    }
    return L;
}
#endif

static inline void rv_classify(const uint8_t *s, int64_t L, uint8_t *lb, uint64_t *tm, uint64_t *nl) {
#ifdef RV_X86
    switch (rv_isa) {
    case RV_ISA_AVX512: rv_classify_avx512(s, L, lb, tm, nl); return;
    case RV_ISA_AVX2: rv_classify_avx2(s, L, lb, tm, nl); return;
    case RV_ISA_SSE2: rv_classify_sse2(s, L, lb, tm, nl); return;
    default: break;
    }
#endif
    rv_classify_portable(s, L, lb, tm, nl);
}

static inline int64_t rv_narrow(int kind, const void *d, int64_t L, uint8_t *out) {
#ifdef RV_X86
    switch (rv_isa) {
    case RV_ISA_AVX512: return rv_narrow_avx512(kind, d, L, out);
    case RV_ISA_AVX2: return rv_narrow_avx2(kind, d, L, out);
    case RV_ISA_SSE2: return rv_narrow_sse2(kind, d, L, out);
    default: break;
    }
#endif
    return rv_narrow_portable(kind, d, L, out);
}

/* ------------------------------------------------------------------ tokens to ids */

/* Resolve the batched keys (their slots are being fetched) and append the ids;
 * without `add`, a token the vocabulary does not hold gets the id `absent`. */
static inline int rv_tok_flush(rv_vocab *v, rv_tok *t, int nk, int stem, int add, int32_t absent,
                               rv_i32buf *ids) {
    if (rv_buf_reserve(ids, ids->n + nk)) return -1;
    for (int j = 0; j < nk; j++) {
        int32_t id = rv_vocab_lookup(v, (const char *)t->lb + t->pos[j], &t->keys[j], add);
        if (!add && id == -1) {
            ids->data[ids->n++] = absent;
            continue;
        }
        if (id < 0) return -1;
        if (stem && t->keys[j].len > 3) {
            id = rv_vocab_stem(v, id);
            if (id < 0) return -1;
        }
        ids->data[ids->n++] = id;
    }
    return 0;
}

/* Tokenize one text into ids appended to `ids` (new tokens added to the vocabulary
 * when `add`, else given the id `absent`); with `sents`, the end (an index into ids)
 * of every non-empty newline-separated sentence is appended to it (rougeLsum's
 * sentences; token-less ones cannot change any statistic).  0, or -1 when out of
 * memory. */
static inline int rv_tokenize_rouge_into(rv_vocab *v, int stem, int add, int32_t absent, int kind, const void *data,
                                         int64_t len, rv_tok *t, rv_i32buf *ids, rv_i64buf *sents) {
    const uint8_t *src = (const uint8_t *)data;
    int64_t L = len;
    if (kind != 1) {
        if (rv_grow((void **)&t->nb, &t->nb_cap, 2 * len + 64, 1)) return -1;
        if (rv_narrow(kind, data, len, t->nb) < 0) L = rv_narrow_scalar(kind, data, len, t->nb);
        src = t->nb;
    }
    int64_t nw = (L + 63) / 64;
    if (rv_grow((void **)&t->lb, &t->lb_cap, nw * 64 + 64, 1) ||
        rv_grow((void **)&t->tm, &t->tm_cap, nw + 1, sizeof(uint64_t)) ||
        rv_grow((void **)&t->nl, &t->nl_cap, nw + 1, sizeof(uint64_t)))
        return -1;
    rv_classify(src, L, t->lb, t->tm, t->nl);
    memset(t->lb + L, 0, 16);  /* keys read 16 bytes from a token's start (and mask them) */
    t->tm[nw] = 0;
    const uint64_t *tm = t->tm;
    int64_t sent_start = ids->n;
    int nk = 0;
    for (int64_t w = 0; w < nw; w++) {
        uint64_t m = tm[w];
        uint64_t starts = m & ~((m << 1) | (w ? tm[w - 1] >> 63 : 0));
        uint64_t nls = sents ? t->nl[w] : 0;
        while (starts | nls) {
            int b = starts ? __builtin_ctzll(starts) : 64;
            if (nls && __builtin_ctzll(nls) < b) {  /* a newline closes a sentence */
                nls &= nls - 1;
                int64_t here = ids->n + nk;
                if (here > sent_start) {
                    if (rv_buf_push(sents, here)) return -1;
                    sent_start = here;
                }
                continue;
            }
            starts &= starts - 1;
            int64_t st = w * 64 + b, tl;
            uint64_t rest = ~m >> b;  /* bit j: position st + j is not a token byte (zeros shifted in) */
            if (rest) {
                tl = __builtin_ctzll(rest);
            } else {  /* runs on past this word */
                tl = 64 - b;
                int64_t ww = w + 1;
                while (ww < nw && tm[ww] == ~0ULL) { tl += 64; ww++; }
                tl += __builtin_ctzll(~tm[ww]);  /* tm[nw] == 0 */
            }
            rv_key_padded(t->lb + st, tl, &t->keys[nk]);
            t->pos[nk] = st;
            rv_vocab_prefetch(v, &t->keys[nk]);
            if (++nk == RV_TOK_BATCH) {
                if (rv_tok_flush(v, t, nk, stem, add, absent, ids)) return -1;
                nk = 0;
            }
        }
    }
    if (nk && rv_tok_flush(v, t, nk, stem, add, absent, ids)) return -1;
    if (sents && ids->n > sent_start && rv_buf_push(sents, ids->n)) return -1;
    return 0;
}

static inline int rv_tokenize_rouge(rv_vocab *v, int stem, int kind, const void *data, int64_t len, rv_tok *t,
                                    rv_i32buf *ids, rv_i64buf *sents) {
    return rv_tokenize_rouge_into(v, stem, 1, 0, kind, data, len, t, ids, sents);
}

#endif
