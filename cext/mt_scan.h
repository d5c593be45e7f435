/* sacreBLEU's 13a tokenizer and chrF++'s word split as byte scanners, straight to
 * vocabulary ids (what tokenize_13a_ids and chrf_words_ids return).
 *
 * mt_tokenize.h's normalizers stream one code point at a time through the regex
 * stages and then mt_ids.h encodes each token again; here a text is
 *   1. encoded to UTF-8 once (a block of ASCII code units a vector step; the others
 *      one at a time), into a buffer padded so every key can be read with 16-byte
 *      loads (vocab.h);
 *   2. classified 64 bytes at a time into bit masks (whitespace, ASCII punctuation,
 *      '.' and ',', '-', digits, apostrophe, and the rare bytes '&' '<' '\n');
 *   3. cut into tokens with count-trailing-zeros on those masks, each token's key
 *      built in place and its vocabulary slot prefetched a batch at a time (the ROUGE
 *      tokenizer's habits, tokenize.h).
 * The classification and the ASCII steps of the encoding have one version per
 * instruction set (dispatch.h); every path gives the same masks and bytes.
 *
 * Why bytes give sacreBLEU's tokens: every character the rules look at is ASCII, and a
 * non-ASCII code point's UTF-8 bytes are all >= 0x80, so each of them is "not a digit,
 * not '.', ',' or '-', not a symbol, not a space" exactly as the code point is (see
 * rv_13a_word_stages for the regex stages).  The one exception is non-ASCII
 * whitespace (U+0085, U+00A0, U+2000...): step 1 reports it and the text takes the
 * code-point path (mt_tokenize.h + mt_ids.h), which gives the same ids; so does a 13a
 * text with '&' (entities) or '\n' before its trailing whitespace or "<skipped>".  Either
 * way nothing has been added to the vocabulary before that decision.
 *
 * 13a on such a text (rv_sacrebleu_13a's comment has the argument): every symbol
 * ([\{-\~\[-\` -\&\(-\+\:-\@\/] without the space) is a token; a word (a run of other
 * non-space bytes) without '.' or ',' and without a digit before a '-' is one token as
 * it is; a word whose only such byte is a final '.' or ',' gives the word without it
 * and the '.' or ','; any other word goes through the regex stages 2-4 on " word "
 * (rv_13a_word_stages) and is split on the spaces.
 *
 * chrF++ (sacrebleu's CHRF.extract_word_ngrams' split): str.split(), then a word of
 * more than one character loses its last character if that is ASCII punctuation, else
 * its first if that is.  A word's last (first) byte is ASCII punctuation exactly when
 * its last (first) code point is, and then the word has more than one code point
 * exactly when it has more than one byte.
 */
#ifndef RESPEVAL_MT_SCAN_H
#define RESPEVAL_MT_SCAN_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "dispatch.h"
#include "mt_tokenize.h"
#include "vocab.h"

#define RV_SCAN_BATCH 64
#define RV_SCAN_FALLBACK 1 /* the text takes the code-point path; nothing was appended */

/* Per 64 bytes, bit j for byte 64 * w + j. */
typedef struct {
    uint64_t ws;    /* ASCII whitespace: 0x09-0x0D, 0x1C-0x20 (str.isspace) */
    uint64_t punct; /* string.punctuation: 0x21-0x2F, 0x3A-0x40, 0x5B-0x60, 0x7B-0x7E */
    uint64_t pc;    /* '.' ',' */
    uint64_t dash;  /* '-' */
    uint64_t dig;   /* '0'-'9' */
    uint64_t apos;  /* '\'' */
    uint64_t rare;  /* '&' '<' '\n': entities, <skipped>, newlines (13a's step 1) */
} rv_scan_block;

typedef struct {
    uint8_t *u8; int64_t u8_cap;             /* the text as UTF-8, padded */
    rv_scan_block *blk; int64_t blk_cap;
    uint64_t *word, *sym, *spec;              /* word bytes; 13a: symbols, special bytes */
    int64_t word_cap, sym_cap, spec_cap;
    uint8_t *ta, *tb; int64_t ta_cap, tb_cap; /* a word's regex stages */
    rv_key keys[RV_SCAN_BATCH];              /* tokens waiting for their ids ... */
    const uint8_t *ptr[RV_SCAN_BATCH];       /* ... and their bytes */
    int nk;
} rv_scan;

static inline void rv_scan_free(rv_scan *sc) {
    free(sc->u8); free(sc->blk); free(sc->word); free(sc->sym); free(sc->spec); free(sc->ta); free(sc->tb);
    memset(sc, 0, sizeof(*sc));
}

/* ------------------------------------------------------------------ UTF-8 */

/* Code units s[i..n) of a kind-`kind` string, one at a time, appended at out[o]:
 * the new o, or -1 on a non-ASCII whitespace code point. */
static inline int64_t rv_scan_utf8_units(int kind, const void *data, int64_t i, int64_t n, uint8_t *out, int64_t o) {
    for (; i < n; i++) {
        uint32_t c = rv_cp_at(kind, data, i);
        if (c < 0x80) {
            out[o++] = (uint8_t)c;
            continue;
        }
        if (rv_is_space(c)) return -1;
        if (c < 0x800) {
            out[o++] = (uint8_t)(0xC0 | (c >> 6));
            out[o++] = (uint8_t)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) { /* lone surrogates as 3 bytes, as rv_mt_ids */
            out[o++] = (uint8_t)(0xE0 | (c >> 12));
            out[o++] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
            out[o++] = (uint8_t)(0x80 | (c & 0x3F));
        } else {
            out[o++] = (uint8_t)(0xF0 | (c >> 18));
            out[o++] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
            out[o++] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
            out[o++] = (uint8_t)(0x80 | (c & 0x3F));
        }
    }
    return o;
}

static inline int64_t rv_scan_utf8_portable(int kind, const void *data, int64_t n, uint8_t *out) {
    int64_t i = 0, o = 0;
    if (kind == 1) { /* 8 ASCII bytes a step */
        const uint8_t *s = (const uint8_t *)data;
        for (; i + 8 <= n; i += 8) {
            uint64_t x;
            memcpy(&x, s + i, 8);
            if (x & 0x8080808080808080ULL) {
                o = rv_scan_utf8_units(1, data, i, i + 8, out, o);
                if (o < 0) return -1;
            } else {
                memcpy(out + o, &x, 8);
                o += 8;
            }
        }
    }
    return rv_scan_utf8_units(kind, data, i, n, out, o);
}

#ifdef RV_X86
RV_TARGET_SSE2 static int64_t rv_scan_utf8_sse2(int kind, const void *data, int64_t n, uint8_t *out) {
    int64_t i = 0, o = 0;
    const __m128i z = _mm_setzero_si128();
    if (kind == 1) {
        const uint8_t *s = (const uint8_t *)data;
        for (; i + 16 <= n; i += 16) {
            __m128i c = _mm_loadu_si128((const __m128i *)(s + i));
            if (_mm_movemask_epi8(c)) {
                if ((o = rv_scan_utf8_units(1, data, i, i + 16, out, o)) < 0) return -1;
            } else {
                _mm_storeu_si128((__m128i *)(out + o), c);
                o += 16;
            }
        }
    } else if (kind == 2) {
        const uint16_t *s = (const uint16_t *)data;
        const __m128i hi = _mm_set1_epi16((short)0xFF80);
        for (; i + 8 <= n; i += 8) {
            __m128i c = _mm_loadu_si128((const __m128i *)(s + i));
            if (_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(c, hi), z)) != 0xFFFF) {
                if ((o = rv_scan_utf8_units(2, data, i, i + 8, out, o)) < 0) return -1;
            } else {
                _mm_storel_epi64((__m128i *)(out + o), _mm_packus_epi16(c, c));
                o += 8;
            }
        }
    } else {
        const uint32_t *s = (const uint32_t *)data;
        const __m128i hi = _mm_set1_epi32((int)0xFFFFFF80);
        for (; i + 4 <= n; i += 4) {
            __m128i c = _mm_loadu_si128((const __m128i *)(s + i));
            if (_mm_movemask_epi8(_mm_cmpeq_epi32(_mm_and_si128(c, hi), z)) != 0xFFFF) {
                if ((o = rv_scan_utf8_units(4, data, i, i + 4, out, o)) < 0) return -1;
            } else {
                __m128i x = _mm_packs_epi32(c, c); /* values < 128: no saturation */
                x = _mm_packus_epi16(x, x);
                uint32_t four = (uint32_t)_mm_cvtsi128_si32(x);
                memcpy(out + o, &four, 4);
                o += 4;
            }
        }
    }
    return rv_scan_utf8_units(kind, data, i, n, out, o);
}

RV_TARGET_AVX2 static int64_t rv_scan_utf8_avx2(int kind, const void *data, int64_t n, uint8_t *out) {
    int64_t i = 0, o = 0;
    const __m256i z = _mm256_setzero_si256();
    if (kind == 1) {
        const uint8_t *s = (const uint8_t *)data;
        for (; i + 32 <= n; i += 32) {
            __m256i c = _mm256_loadu_si256((const __m256i *)(s + i));
            if (_mm256_movemask_epi8(c)) {
                if ((o = rv_scan_utf8_units(1, data, i, i + 32, out, o)) < 0) return -1;
            } else {
                _mm256_storeu_si256((__m256i *)(out + o), c);
                o += 32;
            }
        }
    } else if (kind == 2) {
        const uint16_t *s = (const uint16_t *)data;
        const __m256i hi = _mm256_set1_epi16((short)0xFF80);
        for (; i + 16 <= n; i += 16) {
            __m256i c = _mm256_loadu_si256((const __m256i *)(s + i));
            if ((uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi16(_mm256_and_si256(c, hi), z)) != 0xFFFFFFFFu) {
                if ((o = rv_scan_utf8_units(2, data, i, i + 16, out, o)) < 0) return -1;
            } else {
                __m128i p = _mm_packus_epi16(_mm256_castsi256_si128(c), _mm256_extracti128_si256(c, 1));
                _mm_storeu_si128((__m128i *)(out + o), p);
                o += 16;
            }
        }
    } else {
        const uint32_t *s = (const uint32_t *)data;
        const __m256i hi = _mm256_set1_epi32((int)0xFFFFFF80);
        for (; i + 8 <= n; i += 8) {
            __m256i c = _mm256_loadu_si256((const __m256i *)(s + i));
            if ((uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi32(_mm256_and_si256(c, hi), z)) != 0xFFFFFFFFu) {
                if ((o = rv_scan_utf8_units(4, data, i, i + 8, out, o)) < 0) return -1;
            } else {
                __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(c), _mm256_extracti128_si256(c, 1));
                _mm_storel_epi64((__m128i *)(out + o), _mm_packus_epi16(w16, w16));
                o += 8;
            }
        }
    }
    return rv_scan_utf8_units(kind, data, i, n, out, o);
}

RV_TARGET_AVX512 static int64_t rv_scan_utf8_avx512(int kind, const void *data, int64_t n, uint8_t *out) {
    int64_t i = 0, o = 0;
    if (kind == 1) {
        const uint8_t *s = (const uint8_t *)data;
        for (; i + 64 <= n; i += 64) {
            __m512i c = _mm512_loadu_si512((const void *)(s + i));
            if (_mm512_movepi8_mask(c)) {
                if ((o = rv_scan_utf8_units(1, data, i, i + 64, out, o)) < 0) return -1;
            } else {
                _mm512_storeu_si512((void *)(out + o), c);
                o += 64;
            }
        }
    } else if (kind == 2) {
        const uint16_t *s = (const uint16_t *)data;
        const __m512i k128 = _mm512_set1_epi16(128);
        for (; i + 32 <= n; i += 32) {
            __m512i c = _mm512_loadu_si512((const void *)(s + i));
            if (_mm512_cmpge_epu16_mask(c, k128)) {
                if ((o = rv_scan_utf8_units(2, data, i, i + 32, out, o)) < 0) return -1;
            } else {
                _mm256_storeu_si256((__m256i *)(out + o), _mm512_cvtepi16_epi8(c));
                o += 32;
            }
        }
    } else {
        const uint32_t *s = (const uint32_t *)data;
        const __m512i k128 = _mm512_set1_epi32(128);
        for (; i + 16 <= n; i += 16) {
            __m512i c = _mm512_loadu_si512((const void *)(s + i));
            if (_mm512_cmpge_epu32_mask(c, k128)) {
                if ((o = rv_scan_utf8_units(4, data, i, i + 16, out, o)) < 0) return -1;
            } else {
                _mm_storeu_si128((__m128i *)(out + o), _mm512_cvtepi32_epi8(c));
                o += 16;
            }
        }
    }
    return rv_scan_utf8_units(kind, data, i, n, out, o);
}
#endif

/* The text as UTF-8 in out (room for 4 bytes a code unit): its length, or -1 when it
 * holds non-ASCII whitespace. */
static inline int64_t rv_scan_utf8(int kind, const void *data, int64_t n, uint8_t *out) {
#ifdef RV_X86
    switch (rv_isa) {
    case RV_ISA_AVX512: return rv_scan_utf8_avx512(kind, data, n, out);
    case RV_ISA_AVX2: return rv_scan_utf8_avx2(kind, data, n, out);
    case RV_ISA_SSE2: return rv_scan_utf8_sse2(kind, data, n, out);
    default: break;
    }
#endif
    return rv_scan_utf8_portable(kind, data, n, out);
}

/* ------------------------------------------------------------------ classification */
/* blk[w] for the bytes s[64w .. 64w + 64) of s[0..L); bits at and past L are clear.
 * Reads s[0..L) only. */

static inline void rv_scan_classify_portable(const uint8_t *s, int64_t L, rv_scan_block *blk) {
    for (int64_t w = 0; w * 64 < L; w++) {
        int64_t i0 = w * 64, k = L - i0 < 64 ? L - i0 : 64;
        rv_scan_block b = {0, 0, 0, 0, 0, 0, 0};
        for (int64_t j = 0; j < k; j++) {
            uint8_t c = s[i0 + j];
            uint64_t bit = 1ULL << j;
            int dig = (uint8_t)(c - '0') < 10, alpha = (uint8_t)((c | 0x20) - 'a') < 26;
            if ((uint8_t)(c - 0x09) < 5 || (uint8_t)(c - 0x1C) < 5) b.ws |= bit;
            if ((uint8_t)(c - 0x21) < 94 && !dig && !alpha) b.punct |= bit;
            if (c == '.' || c == ',') b.pc |= bit;
            if (c == '-') b.dash |= bit;
            if (dig) b.dig |= bit;
            if (c == '\'') b.apos |= bit;
            if (c == '&' || c == '<' || c == '\n') b.rare |= bit;
        }
        blk[w] = b;
    }
}

#ifdef RV_X86
/* x in [lo, lo + n) for bytes compared as signed: (x - lo) - 128 < n - 128. */
#define RV_SCAN_IN_SSE2(c, lo, n) \
    _mm_cmplt_epi8(_mm_add_epi8((c), _mm_set1_epi8((char)(-128 - (lo)))), _mm_set1_epi8((char)(-128 + (n))))
#define RV_SCAN_IN_AVX2(c, lo, n) \
    _mm256_cmpgt_epi8(_mm256_set1_epi8((char)(-128 + (n))), _mm256_add_epi8((c), _mm256_set1_epi8((char)(-128 - (lo)))))

RV_TARGET_SSE2 static void rv_scan_classify_sse2(const uint8_t *s, int64_t L, rv_scan_block *blk) {
    uint8_t tail[64];
    const __m128i x20 = _mm_set1_epi8(0x20);
    for (int64_t w = 0; w * 64 < L; w++) {
        int64_t i0 = w * 64;
        const uint8_t *p = rv_block(s, L, i0, 64, tail);
        rv_scan_block b = {0, 0, 0, 0, 0, 0, 0};
        for (int q = 0; q < 4; q++) {
            __m128i c = _mm_loadu_si128((const __m128i *)(p + 16 * q));
            __m128i dig = RV_SCAN_IN_SSE2(c, '0', 10);
            __m128i alpha = RV_SCAN_IN_SSE2(_mm_or_si128(c, x20), 'a', 26);
            __m128i ws = _mm_or_si128(RV_SCAN_IN_SSE2(c, 0x09, 5), RV_SCAN_IN_SSE2(c, 0x1C, 5));
            __m128i punct = _mm_andnot_si128(_mm_or_si128(dig, alpha), RV_SCAN_IN_SSE2(c, 0x21, 94));
            __m128i pc = _mm_or_si128(_mm_cmpeq_epi8(c, _mm_set1_epi8('.')), _mm_cmpeq_epi8(c, _mm_set1_epi8(',')));
            __m128i rare = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(c, _mm_set1_epi8('&')), _mm_cmpeq_epi8(c, _mm_set1_epi8('<'))),
                                        _mm_cmpeq_epi8(c, _mm_set1_epi8('\n')));
            int sh = 16 * q;
            b.ws |= (uint64_t)(uint16_t)_mm_movemask_epi8(ws) << sh;
            b.punct |= (uint64_t)(uint16_t)_mm_movemask_epi8(punct) << sh;
            b.pc |= (uint64_t)(uint16_t)_mm_movemask_epi8(pc) << sh;
            b.dash |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(c, _mm_set1_epi8('-'))) << sh;
            b.dig |= (uint64_t)(uint16_t)_mm_movemask_epi8(dig) << sh;
            b.apos |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(c, _mm_set1_epi8('\''))) << sh;
            b.rare |= (uint64_t)(uint16_t)_mm_movemask_epi8(rare) << sh;
        }
        /* the zero padding of a short block is no class at all */
        blk[w] = b;
    }
}

RV_TARGET_AVX2 static void rv_scan_classify_avx2(const uint8_t *s, int64_t L, rv_scan_block *blk) {
    uint8_t tail[64];
    const __m256i x20 = _mm256_set1_epi8(0x20);
    for (int64_t w = 0; w * 64 < L; w++) {
        int64_t i0 = w * 64;
        const uint8_t *p = rv_block(s, L, i0, 64, tail);
        rv_scan_block b = {0, 0, 0, 0, 0, 0, 0};
        for (int q = 0; q < 2; q++) {
            __m256i c = _mm256_loadu_si256((const __m256i *)(p + 32 * q));
            __m256i dig = RV_SCAN_IN_AVX2(c, '0', 10);
            __m256i alpha = RV_SCAN_IN_AVX2(_mm256_or_si256(c, x20), 'a', 26);
            __m256i ws = _mm256_or_si256(RV_SCAN_IN_AVX2(c, 0x09, 5), RV_SCAN_IN_AVX2(c, 0x1C, 5));
            __m256i punct = _mm256_andnot_si256(_mm256_or_si256(dig, alpha), RV_SCAN_IN_AVX2(c, 0x21, 94));
            __m256i pc = _mm256_or_si256(_mm256_cmpeq_epi8(c, _mm256_set1_epi8('.')),
                                         _mm256_cmpeq_epi8(c, _mm256_set1_epi8(',')));
            __m256i rare = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(c, _mm256_set1_epi8('&')),
                                                           _mm256_cmpeq_epi8(c, _mm256_set1_epi8('<'))),
                                           _mm256_cmpeq_epi8(c, _mm256_set1_epi8('\n')));
            int sh = 32 * q;
            b.ws |= (uint64_t)(uint32_t)_mm256_movemask_epi8(ws) << sh;
            b.punct |= (uint64_t)(uint32_t)_mm256_movemask_epi8(punct) << sh;
            b.pc |= (uint64_t)(uint32_t)_mm256_movemask_epi8(pc) << sh;
            b.dash |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(c, _mm256_set1_epi8('-'))) << sh;
            b.dig |= (uint64_t)(uint32_t)_mm256_movemask_epi8(dig) << sh;
            b.apos |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(c, _mm256_set1_epi8('\''))) << sh;
            b.rare |= (uint64_t)(uint32_t)_mm256_movemask_epi8(rare) << sh;
        }
        blk[w] = b;
    }
}

RV_TARGET_AVX512 static void rv_scan_classify_avx512(const uint8_t *s, int64_t L, rv_scan_block *blk) {
#define RV_SCAN_IN_512(c, lo, n) _mm512_cmplt_epu8_mask(_mm512_sub_epi8((c), _mm512_set1_epi8((char)(lo))), _mm512_set1_epi8((char)(n)))
#define RV_SCAN_EQ_512(c, x) _mm512_cmpeq_epi8_mask((c), _mm512_set1_epi8((char)(x)))
    const __m512i x20 = _mm512_set1_epi8(0x20);
    for (int64_t w = 0; w * 64 < L; w++) {
        int64_t i0 = w * 64, k = L - i0;
        __mmask64 valid = k >= 64 ? ~0ULL : ((1ULL << k) - 1);
        __m512i c = _mm512_maskz_loadu_epi8(valid, s + i0);
        __mmask64 dig = RV_SCAN_IN_512(c, '0', 10);
        __mmask64 alpha = RV_SCAN_IN_512(_mm512_or_si512(c, x20), 'a', 26);
        rv_scan_block b;
        b.ws = RV_SCAN_IN_512(c, 0x09, 5) | RV_SCAN_IN_512(c, 0x1C, 5);
        b.punct = RV_SCAN_IN_512(c, 0x21, 94) & ~(dig | alpha);
        b.pc = RV_SCAN_EQ_512(c, '.') | RV_SCAN_EQ_512(c, ',');
        b.dash = RV_SCAN_EQ_512(c, '-');
        b.dig = dig;
        b.apos = RV_SCAN_EQ_512(c, '\'');
        b.rare = RV_SCAN_EQ_512(c, '&') | RV_SCAN_EQ_512(c, '<') | RV_SCAN_EQ_512(c, '\n');
        blk[w] = b;
    }
#undef RV_SCAN_IN_512
#undef RV_SCAN_EQ_512
}
#undef RV_SCAN_IN_SSE2
#undef RV_SCAN_IN_AVX2
#endif

static inline void rv_scan_classify(const uint8_t *s, int64_t L, rv_scan_block *blk) {
#ifdef RV_X86
    switch (rv_isa) {
    case RV_ISA_AVX512: rv_scan_classify_avx512(s, L, blk); return;
    case RV_ISA_AVX2: rv_scan_classify_avx2(s, L, blk); return;
    case RV_ISA_SSE2: rv_scan_classify_sse2(s, L, blk); return;
    default: break;
    }
#endif
    rv_scan_classify_portable(s, L, blk);
}

/* ------------------------------------------------------------------ tokens to ids */

static inline int rv_scan_flush(rv_vocab *v, rv_scan *sc, rv_i32buf *ids) {
    if (rv_buf_reserve(ids, ids->n + sc->nk)) return -1;
    for (int j = 0; j < sc->nk; j++) {
        int32_t id = rv_vocab_lookup(v, (const char *)sc->ptr[j], &sc->keys[j], 1);
        if (id < 0) return -1;
        ids->data[ids->n++] = id;
    }
    sc->nk = 0;
    return 0;
}

/* Queue the token s[0..len) (16 bytes readable from s); its id comes with the batch. */
static inline int rv_scan_push(rv_vocab *v, rv_scan *sc, const uint8_t *s, int64_t len, rv_i32buf *ids) {
    rv_key_padded(s, len, &sc->keys[sc->nk]);
    sc->ptr[sc->nk] = s;
    rv_vocab_prefetch(v, &sc->keys[sc->nk]);
    if (++sc->nk == RV_SCAN_BATCH) return rv_scan_flush(v, sc, ids);
    return 0;
}

/* The prepared text: UTF-8 in sc->u8 (16 zero bytes after it) and its blocks; the
 * length, or -1 when out of memory, -2 when the text needs the code-point path.  With
 * `rstrip`, trailing ASCII whitespace is left out. */
static inline int64_t rv_scan_prepare(rv_scan *sc, int kind, const void *data, int64_t len, int rstrip) {
    if ((kind != 1 && kind != 2 && kind != 4) || len < 0 || len > RV_MAX_ELEMS || (len > 0 && !data)) return -2;
    if (rv_grow((void **)&sc->u8, &sc->u8_cap, (int64_t)kind * len + len + 64, 1)) return -1;
    int64_t L = rv_scan_utf8(kind, data, len, sc->u8);
    if (L < 0) return -2;
    if (rstrip)
        while (L > 0 && ((uint8_t)(sc->u8[L - 1] - 0x09) < 5 || (uint8_t)(sc->u8[L - 1] - 0x1C) < 5)) L--;
    memset(sc->u8 + L, 0, 16);
    int64_t nw = (L + 63) / 64;
    if (rv_grow((void **)&sc->blk, &sc->blk_cap, nw + 1, sizeof(rv_scan_block))) return -1;
    rv_scan_classify(sc->u8, L, sc->blk);
    memset(&sc->blk[nw], 0, sizeof(rv_scan_block));
    return L;
}

/* Any bit of m in positions [a, b)? */
static inline int rv_scan_any(const uint64_t *m, int64_t a, int64_t b) {
    while (a < b) {
        int64_t w = a >> 6, off = a & 63, k = b - a < 64 - off ? b - a : 64 - off;
        uint64_t bits = m[w] >> off;
        if (k < 64) bits &= (1ULL << k) - 1;
        if (bits) return 1;
        a += k;
    }
    return 0;
}

/* Length of the run of set bits of m from position st (m[nw] == 0 ends every run). */
static inline int64_t rv_scan_run(const uint64_t *m, int64_t st) {
    int64_t w = st >> 6;
    int b = (int)(st & 63);
    uint64_t rest = ~m[w] >> b;
    if (rest) return __builtin_ctzll(rest);
    int64_t tl = 64 - b;
    w++;
    while (m[w] == ~0ULL) { tl += 64; w++; }
    return tl + __builtin_ctzll(~m[w]);
}

/* ------------------------------------------------------------------ 13a */

/* One byte pass of a regex substitution, as re.sub: leftmost, non-overlapping, scanning
 * resumes after each match.  Stage 2 ([^0-9])([\.,]) -> "\1 \2 ", stage 3 ([\.,])([^0-9])
 * -> " \1 \2", stage 4 ([0-9])(-) -> "\1 \2 ".  Returns the output length (<= 2 n). */
static inline int64_t rv_13a_stage(int stage, const uint8_t *s, int64_t n, uint8_t *out) {
    int64_t o = 0, i = 0;
    while (i < n) {
        if (i + 1 < n) {
            uint8_t a = s[i], b = s[i + 1];
            int adig = (uint8_t)(a - '0') < 10, bdig = (uint8_t)(b - '0') < 10;
            int hit = stage == 2 ? (!adig && (b == '.' || b == ',')) :
                      stage == 3 ? ((a == '.' || a == ',') && !bdig) : (adig && b == '-');
            if (hit) {
                if (stage == 3) {
                    out[o++] = ' '; out[o++] = a; out[o++] = ' '; out[o++] = b;
                } else {
                    out[o++] = a; out[o++] = ' '; out[o++] = b; out[o++] = ' ';
                }
                i += 2;
                continue;
            }
        }
        out[o++] = s[i++];
    }
    return o;
}

/* The ids of the tokens of a word w[0..m) (no whitespace, no 13a symbol) as stages 2-4
 * of 13a give them on " w " (then split()), looked up in order. */
static inline int rv_13a_word_stages(rv_vocab *v, rv_scan *sc, const uint8_t *w, int64_t m, rv_i32buf *ids) {
    int64_t cap = 8 * (m + 2) + 16;
    if (rv_grow((void **)&sc->ta, &sc->ta_cap, cap, 1) || rv_grow((void **)&sc->tb, &sc->tb_cap, cap, 1)) return -1;
    uint8_t *a = sc->ta, *b = sc->tb;
    a[0] = ' ';
    memcpy(a + 1, w, (size_t)m);
    a[m + 1] = ' ';
    int64_t n = rv_13a_stage(2, a, m + 2, b);
    n = rv_13a_stage(3, b, n, a);
    n = rv_13a_stage(4, a, n, b);
    memset(b + n, 0, 16);
    for (int64_t i = 0; i < n;) {
        if (b[i] == ' ') { i++; continue; }
        int64_t j = i;
        while (j < n && b[j] != ' ') j++;
        rv_key q;
        rv_key_padded(b + i, j - i, &q);
        if (rv_buf_reserve(ids, ids->n + 1)) return -1;
        int32_t id = rv_vocab_lookup(v, (const char *)b + i, &q, 1);
        if (id < 0) return -1;
        ids->data[ids->n++] = id;
        i = j;
    }
    return 0;
}

/* The ids of sacrebleu 2.6.0's Tokenizer13a()(text.rstrip()).split(), appended to ids:
 * 0, -1 when out of memory, or RV_SCAN_FALLBACK (nothing appended, the vocabulary
 * untouched) for a text the code-point path must take. */
static inline int rv_scan_13a_ids(rv_vocab *v, rv_scan *sc, int kind, const void *data, int64_t len, rv_i32buf *ids) {
    int64_t L = rv_scan_prepare(sc, kind, data, len, 1);
    if (L == -1) return -1;
    if (L < 0) return RV_SCAN_FALLBACK;
    int64_t nw = (L + 63) / 64;
    const rv_scan_block *blk = sc->blk;
    uint64_t rare = 0;
    for (int64_t w = 0; w < nw; w++) rare |= blk[w].rare;
    if (rare) { /* '&' or '\n' anywhere, or "<skipped>": step 1 changes the text */
        const uint8_t *u = sc->u8;
        if (memchr(u, '&', (size_t)L) || memchr(u, '\n', (size_t)L)) return RV_SCAN_FALLBACK;
        for (const uint8_t *p = u; (p = (const uint8_t *)memchr(p, '<', (size_t)(u + L - p))) != NULL; p++)
            if (u + L - p >= 9 && memcmp(p, "<skipped>", 9) == 0) return RV_SCAN_FALLBACK;
    }
    if (rv_grow((void **)&sc->word, &sc->word_cap, nw + 1, sizeof(uint64_t)) ||
        rv_grow((void **)&sc->sym, &sc->sym_cap, nw + 1, sizeof(uint64_t)) ||
        rv_grow((void **)&sc->spec, &sc->spec_cap, nw + 1, sizeof(uint64_t)))
        return -1;
    /* symbols: punctuation but ' , - . ; a word byte: neither whitespace nor symbol;
     * special: '.' ',' and a '-' after a digit */
    uint64_t *word = sc->word, *sym = sc->sym, *spec = sc->spec, digit_carry = 0;
    for (int64_t w = 0; w < nw; w++) {
        rv_scan_block b = blk[w];
        int64_t k = L - 64 * w;
        uint64_t valid = k >= 64 ? ~0ULL : (1ULL << k) - 1;
        sym[w] = b.punct & ~(b.pc | b.dash | b.apos);
        word[w] = ~(b.ws | sym[w]) & valid;
        spec[w] = b.pc | (b.dash & ((b.dig << 1) | digit_carry));
        digit_carry = b.dig >> 63;
    }
    word[nw] = sym[nw] = spec[nw] = 0;
    const uint8_t *u = sc->u8;
    sc->nk = 0;
    for (int64_t w = 0; w < nw; w++) {
        uint64_t m = word[w];
        uint64_t starts = (m & ~((m << 1) | (w ? word[w - 1] >> 63 : 0))) | sym[w];
        while (starts) {
            int b = __builtin_ctzll(starts);
            starts &= starts - 1;
            int64_t st = w * 64 + b;
            if ((sym[w] >> b) & 1) {
                if (rv_scan_push(v, sc, u + st, 1, ids)) return -1;
                continue;
            }
            int64_t tl = rv_scan_run(word, st);
            if (!rv_scan_any(spec, st, st + tl)) {
                if (rv_scan_push(v, sc, u + st, tl, ids)) return -1;
            } else if ((u[st + tl - 1] == '.' || u[st + tl - 1] == ',') && !rv_scan_any(spec, st, st + tl - 1)) {
                if (tl > 1 && rv_scan_push(v, sc, u + st, tl - 1, ids)) return -1;
                if (rv_scan_push(v, sc, u + st + tl - 1, 1, ids)) return -1;
            } else {
                if (rv_scan_flush(v, sc, ids) || rv_13a_word_stages(v, sc, u + st, tl, ids)) return -1;
            }
        }
    }
    return rv_scan_flush(v, sc, ids);
}

/* ------------------------------------------------------------------ chrF++ words */

/* The ids of chrF++'s words of the text (rv_chrf_words), appended to ids: 0, -1 when
 * out of memory, or RV_SCAN_FALLBACK (nothing appended) for the code-point path. */
static inline int rv_scan_chrf_words_ids(rv_vocab *v, rv_scan *sc, int kind, const void *data, int64_t len,
                                         rv_i32buf *ids) {
    int64_t L = rv_scan_prepare(sc, kind, data, len, 0);
    if (L == -1) return -1;
    if (L < 0) return RV_SCAN_FALLBACK;
    int64_t nw = (L + 63) / 64;
    if (rv_grow((void **)&sc->word, &sc->word_cap, nw + 1, sizeof(uint64_t))) return -1;
    uint64_t *word = sc->word;
    const rv_scan_block *blk = sc->blk;
    for (int64_t w = 0; w < nw; w++) {
        int64_t k = L - 64 * w;
        word[w] = ~blk[w].ws & (k >= 64 ? ~0ULL : (1ULL << k) - 1);
    }
    word[nw] = 0;
    const uint8_t *u = sc->u8;
    sc->nk = 0;
    for (int64_t w = 0; w < nw; w++) {
        uint64_t m = word[w];
        uint64_t starts = m & ~((m << 1) | (w ? word[w - 1] >> 63 : 0));
        while (starts) {
            int b = __builtin_ctzll(starts);
            starts &= starts - 1;
            int64_t a = w * 64 + b, tl = rv_scan_run(word, a), e = a + tl - 1;
            int r;
            if (tl > 1 && ((blk[e >> 6].punct >> (e & 63)) & 1))
                r = rv_scan_push(v, sc, u + a, tl - 1, ids) || rv_scan_push(v, sc, u + e, 1, ids);
            else if (tl > 1 && ((blk[w].punct >> b) & 1))
                r = rv_scan_push(v, sc, u + a, 1, ids) || rv_scan_push(v, sc, u + a + 1, tl - 1, ids);
            else
                r = rv_scan_push(v, sc, u + a, tl, ids);
            if (r) return -1;
        }
    }
    return rv_scan_flush(v, sc, ids);
}

/* ------------------------------------------------------------------ chrF's characters */

/* The code points of the text, whitespace left out unless keep_space
 * (''.join(text.split()), as rv_chrf_chars), appended at out[o]: the new o.  out has
 * room for len + 16 more. */
#define RV_CHARS_LOOP(T)                                                        \
    do {                                                                        \
        const T *src = (const T *)data;                                         \
        for (; i < len; i++) {                                                  \
            uint32_t c = src[i];                                                \
            out[o] = c;                                                         \
            o += keep_space || !((c - 0x21u) < (0x85u - 0x21u) ? 0 : rv_is_space(c)); \
        }                                                                       \
    } while (0)

static inline int64_t rv_scan_chars_portable(int kind, const void *data, int64_t len, int keep_space, uint32_t *out,
                                             int64_t o) {
    int64_t i = 0;
    if (kind == 1) RV_CHARS_LOOP(uint8_t);
    else if (kind == 2) RV_CHARS_LOOP(uint16_t);
    else RV_CHARS_LOOP(uint32_t);
    return o;
}

#ifdef RV_X86
/* str.isspace() of 16 code points at once. */
RV_TARGET_AVX512 static inline __mmask16 rv_space16_avx512(__m512i c) {
#define RV_EQ32(x) _mm512_cmpeq_epi32_mask(c, _mm512_set1_epi32(x))
#define RV_IN32(lo, n) _mm512_cmplt_epu32_mask(_mm512_sub_epi32(c, _mm512_set1_epi32(lo)), _mm512_set1_epi32(n))
    __mmask16 ws = RV_IN32(0x09, 5) | RV_IN32(0x1C, 5);
    __mmask16 hi = _mm512_cmpge_epu32_mask(c, _mm512_set1_epi32(0x85));
    if (hi) /* 0x85, 0xa0, 0x1680, 0x2000-0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000 */
        ws |= RV_EQ32(0x85) | RV_EQ32(0xA0) | RV_EQ32(0x1680) | RV_IN32(0x2000, 11) | RV_IN32(0x2028, 2) |
              RV_EQ32(0x202F) | RV_EQ32(0x205F) | RV_EQ32(0x3000);
    return ws;
#undef RV_EQ32
#undef RV_IN32
}

RV_TARGET_AVX512 static int64_t rv_scan_chars_avx512(int kind, const void *data, int64_t len, int keep_space,
                                                     uint32_t *out, int64_t o) {
    int64_t i = 0;
    for (; i + 16 <= len; i += 16) {
        __m512i c;
        if (kind == 1) c = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)((const uint8_t *)data + i)));
        else if (kind == 2) c = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)((const uint16_t *)data + i)));
        else c = _mm512_loadu_si512((const void *)((const uint32_t *)data + i));
        __mmask16 keep = keep_space ? (__mmask16)0xFFFF : (__mmask16)~rv_space16_avx512(c);
        _mm512_storeu_si512((void *)(out + o), _mm512_maskz_compress_epi32(keep, c));
        o += __builtin_popcount((unsigned)keep);
    }
    if (i == len) return o;
    const void *rest = kind == 1 ? (const void *)((const uint8_t *)data + i)
                     : kind == 2 ? (const void *)((const uint16_t *)data + i)
                                 : (const void *)((const uint32_t *)data + i);
    return rv_scan_chars_portable(kind, rest, len - i, keep_space, out, o);
}
#endif

static inline int64_t rv_scan_chars(int kind, const void *data, int64_t len, int keep_space, uint32_t *out, int64_t o) {
#ifdef RV_X86
    if (rv_isa == RV_ISA_AVX512) return rv_scan_chars_avx512(kind, data, len, keep_space, out, o);
#endif
    return rv_scan_chars_portable(kind, data, len, keep_space, out, o);
}

/* rv_chrf_chars, through the path above: the count appended, or -1 when out of memory
 * (or for a bad kind or length). */
static inline int64_t rv_scan_chrf_chars(int kind, const void *data, int64_t len, int keep_space, rv_u32buf *out) {
    if ((kind != 1 && kind != 2 && kind != 4) || len < 0 || len > RV_MAX_ELEMS || (len > 0 && !data)) return -1;
    if (rv_buf_reserve(out, out->n + len + 16)) return -1;
    int64_t before = out->n;
    out->n = rv_scan_chars(kind, data, len, keep_space, out->data, out->n);
    return out->n - before;
}
#undef RV_CHARS_LOOP

#endif
