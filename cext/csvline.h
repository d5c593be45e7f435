/* CSV lines split without the csv module: one physical line that is one whole record of
 * the csv module's default dialect (delimiter ',', quote '"', quotes doubled inside quoted
 * fields), for a reader that parses a file's common lines here and the rest with the
 * csv module.
 *
 * rv_csv_plain answers with the record's field spans only for a line the csv module
 * certainly reads as that one record, fields unquoted or quoted: valid UTF-8 (Python's
 * strict decoder), ended by "\n", "\r\n" or the end of the file, no other '\r' or '\n'
 * (a quoted field spanning lines), no NUL (the csv module's error), no quote inside an
 * unquoted field and nothing between a closing quote and the next ',' (the module's
 * lenient readings of both), not empty (an empty record), exactly `ncols` fields.
 * Anything else gives -1: the caller reads the record with the csv module, which knows
 * every rule and every error. */
#ifndef RESPEVAL_CSVLINE_H
#define RESPEVAL_CSVLINE_H

#include <stdint.h>
#include <string.h>

#include "dispatch.h"
#include "json_scan.h" /* the one UTF-8 validator */

/* 1 when one of the 8 bytes of w equals the byte in every lane of pattern. */
static inline int rv_csv_has_byte(uint64_t w, uint64_t pattern) {
    uint64_t x = w ^ pattern;
    return ((x - 0x0101010101010101ULL) & ~x & 0x8080808080808080ULL) != 0;
}

/* A quoted field's content, from s[j] (just past its opening quote), copied to out[*o]
 * with doubled quotes undone: the index of the closing quote (*o past the copy), or -1
 * when the line ends inside the quotes.  8 bytes a step where there is no quote. */
static inline int64_t rv_csv_quoted_portable(const unsigned char *s, int64_t n, int64_t j, char *out, int64_t *o) {
    const uint64_t quotes = 0x2222222222222222ULL;
    int64_t k = *o;
    for (;;) {
        uint64_t w;
        if (j + 8 <= n) {
            memcpy(&w, s + j, 8);
            if (!rv_csv_has_byte(w, quotes)) {
                memcpy(out + k, &w, 8);
                k += 8;
                j += 8;
                continue;
            }
        }
        if (j >= n) return -1;
        if (s[j] == '"') {
            if (j + 1 < n && s[j + 1] == '"') {
                out[k++] = '"';
                j += 2;
                continue;
            }
            *o = k;
            return j;
        }
        out[k++] = (char)s[j++];
    }
}

#ifdef RV_X86
/* The same, 16 bytes a step: each block is stored whole and the copy advanced to its first
 * quote (JSON in CSV has a quote every few bytes, so a step per quote, not per byte).  The
 * store stays inside out: k < j <= n - 16 there, and out holds n bytes. */
RV_TARGET_SSE2 static int64_t rv_csv_quoted_sse2(const unsigned char *s, int64_t n, int64_t j, char *out,
                                                 int64_t *o) {
    const __m128i quote = _mm_set1_epi8('"');
    int64_t k = *o;
    for (;;) {
        if (j + 16 <= n) {
            __m128i v = _mm_loadu_si128((const __m128i *)(s + j));
            _mm_storeu_si128((__m128i *)(out + k), v);
            unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote));
            if (!m) {
                j += 16;
                k += 16;
                continue;
            }
            int t = __builtin_ctz(m);
            j += t;
            k += t;
        } else {
            while (j < n && s[j] != '"') out[k++] = (char)s[j++];
            if (j >= n) return -1;
        }
        if (j + 1 < n && s[j + 1] == '"') {
            out[k++] = '"';
            j += 2;
            continue;
        }
        *o = k;
        return j;
    }
}
#endif

/* Line p[0:n]: the number of fields (== ncols) with field k's value (doubled quotes
 * undone) written to out[start[k]:end[k]] (out holds n bytes), or -1. */
static int64_t rv_csv_plain(const char *p, int64_t n, int64_t ncols, char *out, int64_t *start, int64_t *end) {
    const unsigned char *s = (const unsigned char *)p;
    if (n && s[n - 1] == '\n') n -= (n >= 2 && s[n - 2] == '\r') ? 2 : 1;
    if (n == 0 || ncols <= 0) return -1;
    /* libc's memchr reads many bytes a step: one pass per byte the csv module treats apart */
    if (memchr(s, '\r', (size_t)n) || memchr(s, '\n', (size_t)n) || memchr(s, 0, (size_t)n)) return -1;
    for (int64_t i = 0; i < n;) {
        uint64_t w;
        if (i + 8 <= n) {
            memcpy(&w, s + i, 8);
            if (!(w & 0x8080808080808080ULL)) {
                i += 8;
                continue;
            }
        }
        if (s[i] < 0x80) {
            i++;
        } else {
            int64_t len = rv_json_utf8_len(s + i, n - i);
            if (!len) return -1;
            i += len;
        }
    }
    int64_t k = 0, i = 0, o = 0;
    for (;;) {
        if (k == ncols) return -1;
        start[k] = o;
        if (i < n && s[i] == '"') {
#ifdef RV_X86
            int64_t j = rv_isa != RV_ISA_PORTABLE ? rv_csv_quoted_sse2(s, n, i + 1, out, &o)
                                                  : rv_csv_quoted_portable(s, n, i + 1, out, &o);
#else
            int64_t j = rv_csv_quoted_portable(s, n, i + 1, out, &o);
#endif
            if (j < 0) return -1;  /* open quotes at the end of the line: a record spanning lines */
            i = j + 1;
            if (i < n && s[i] != ',') return -1;
        } else {
            while (i < n && s[i] != ',') {
                if (s[i] == '"') return -1;
                out[o++] = (char)s[i++];
            }
        }
        end[k] = o;
        k++;
        if (i >= n) break;
        i++;  /* past ',': a field follows, empty at the end of the line */
    }
    return k == ncols ? k : -1;
}

#endif
