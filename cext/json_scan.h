/* The core's one JSON scanner: the lexical rules of JSON as Python's json.loads reads
 * them, for every reader of JSON text in the core (jsonl.h's line checker, the
 * trajectory reader's canonical writer in trajectory_json.h).
 *
 *   rv_jcur c = {s, n, 0};             a cursor over s[0:n]
 *   rv_json_ws(&c)                     skips JSON whitespace (space, tab, LF, CR)
 *   rv_json_utf8_len(s, n)             the length of the valid UTF-8 sequence at s[0], or 0:
 *                                      the one UTF-8 validator (Python's strict decoder:
 *                                      no overlong forms, no surrogates, nothing past
 *                                      U+10FFFF, nothing cut short); rv_json_utf8_valid
 *   rv_json_raw_string(&c, ...)        a string without escapes: its text, in place
 *   rv_json_string(&c, ...)            any string, checked (escapes included), skipped
 *   rv_json_decode_string(&c, ..., o)  any string decoded onto a text buffer
 *   rv_json_number(&c, &num)           a number's grammar, and what kind of number it is
 *   rv_json_literal(&c, "true", 4)     true, false, null
 *   rv_json_skip(&c, depth, check)     a whole value checked and skipped
 *
 * Strings are scanned 16 bytes a step on the SSE2, AVX2 and AVX-512 paths (dispatch.h)
 * and a byte a step through a class table on the portable one; every path stops at the
 * same byte.  `check_utf8`: validate the UTF-8 of non-ASCII bytes inside strings (bytes
 * from a file or an Arrow buffer); 0 for the UTF-8 of a str, which CPython made valid.
 * Non-ASCII bytes outside strings are never valid JSON.  Every read is checked against
 * the text's length, and nothing here allocates except rv_json_decode_string's output.
 */
#ifndef RESPEVAL_JSON_SCAN_H
#define RESPEVAL_JSON_SCAN_H

#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "buffer.h"
#include "dispatch.h"

/* Containers nest at most this deep (json.loads goes deeper, until its recursion limit:
 * deeper text is the caller's to hand to Python). */
#define RV_JSON_MAX_DEPTH 64
/* Integers of at most this many digits (int() refuses more than sys.int_info's 4300). */
#define RV_JSON_MAX_INT_DIGITS 4000

typedef struct {
    const char *s;
    int64_t n, i;
} rv_jcur;

static inline void rv_json_ws(rv_jcur *c) {
    while (c->i < c->n) {
        char ch = c->s[c->i];
        if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r') break;
        c->i++;
    }
}

static inline int rv_json_hex(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* The four hex digits at c->s[at]: 0 (their value in *out), or -1. */
static inline int rv_json_u4(const rv_jcur *c, int64_t at, uint32_t *out) {
    if (at + 4 > c->n) return -1;
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) {
        int h = rv_json_hex(c->s[at + k]);
        if (h < 0) return -1;
        v = (v << 4) | (uint32_t)h;
    }
    *out = v;
    return 0;
}

/* The length of the valid UTF-8 sequence at s[0] (n >= 1 bytes readable), or 0. */
static inline int rv_json_utf8_len(const unsigned char *s, int64_t n) {
    unsigned char b0 = s[0];
    if (b0 < 0x80) return 1;
    if (b0 >= 0xC2 && b0 <= 0xDF) return (n >= 2 && (s[1] & 0xC0) == 0x80) ? 2 : 0;
    if (b0 >= 0xE0 && b0 <= 0xEF) {
        if (n < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80) return 0;
        if (b0 == 0xE0 && s[1] < 0xA0) return 0;  /* overlong */
        if (b0 == 0xED && s[1] >= 0xA0) return 0; /* surrogate */
        return 3;
    }
    if (b0 >= 0xF0 && b0 <= 0xF4) {
        if (n < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80) return 0;
        if (b0 == 0xF0 && s[1] < 0x90) return 0;  /* overlong */
        if (b0 == 0xF4 && s[1] >= 0x90) return 0; /* > U+10FFFF */
        return 4;
    }
    return 0;
}

/* 1 if s[0:n] is valid UTF-8. */
static inline int rv_json_utf8_valid(const unsigned char *s, int64_t n) {
    int64_t i = 0;
    while (i < n) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        int k = rv_json_utf8_len(s + i, n - i);
        if (k == 0) return 0;
        i += k;
    }
    return 1;
}

/* Byte classes inside a string: 0 plain, 1 stops the scan (" \ or a control character),
 * 2 starts a multi-byte UTF-8 sequence to validate (rv_json_cls[1]: check_utf8 only). */
#define RV_J1 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1
#define RV_J0 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
#define RV_J2 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2
/* rows of 16: 0x00 0x10 (control characters), 0x20 (" at 0x22), 0x30 0x40, 0x50 (\ at 0x5C), 0x60 0x70 */
#define RV_J_ASCII                                                                                \
    RV_J1, RV_J1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, RV_J0, RV_J0, 0, 0, 0, 0, 0, 0, 0, 0, \
        0, 0, 0, 0, 1, 0, 0, 0, RV_J0, RV_J0
static const unsigned char rv_json_cls[2][256] = {
    {RV_J_ASCII, RV_J0, RV_J0, RV_J0, RV_J0, RV_J0, RV_J0, RV_J0, RV_J0},
    {RV_J_ASCII, RV_J2, RV_J2, RV_J2, RV_J2, RV_J2, RV_J2, RV_J2, RV_J2},
};
#undef RV_J_ASCII
#undef RV_J0
#undef RV_J1
#undef RV_J2

/* The first i' >= i with a byte of class != 0 (cls: rv_json_cls[check_utf8]), or n;
 * with SSE2, 16 bytes per step. */
static inline int64_t rv_json_plain_run(const unsigned char *s, int64_t i, int64_t n, const unsigned char *cls,
                                        int check_utf8) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), ctl = _mm_set1_epi8(0x1F);
    const uint32_t high = check_utf8 ? 0xFFFFu : 0u;
    while (rv_isa != RV_ISA_PORTABLE && n - i >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                                    _mm_cmpeq_epi8(_mm_min_epu8(v, ctl), v)); /* v <= 0x1F */
        uint32_t m = (uint32_t)_mm_movemask_epi8(stop) | ((uint32_t)_mm_movemask_epi8(v) & high);
        if (m) return i + __builtin_ctz(m);
        i += 16;
    }
#else
    (void)check_utf8;
#endif
    while (i < n && cls[s[i]] == 0) i++;
    return i;
}

enum { RV_JSON_RAW = 0, RV_JSON_ESCAPED = 1, RV_JSON_BAD = 2 };

/* The string at c->s[c->i] == '"'.  RV_JSON_RAW: it has no escapes; its text (inside the
 * quotes) is s[*start : *start + *len] and c->i is past it.  RV_JSON_ESCAPED: it has a
 * backslash (c->i unchanged).  RV_JSON_BAD: unterminated, a control character, or (with
 * check_utf8) invalid UTF-8 before the first backslash. */
static inline int rv_json_raw_string(rv_jcur *c, int check_utf8, int64_t *start, int64_t *len) {
    const unsigned char *s = (const unsigned char *)c->s;
    const unsigned char *cls = rv_json_cls[check_utf8 ? 1 : 0];
    int64_t i = c->i + 1, n = c->n;
    for (;;) {
        i = rv_json_plain_run(s, i, n, cls, check_utf8);
        if (i >= n) return RV_JSON_BAD;
        if (cls[s[i]] == 2) {
            int k = rv_json_utf8_len(s + i, n - i);
            if (k == 0) return RV_JSON_BAD;
            i += k;
            continue;
        }
        break;
    }
    if (s[i] == '"') {
        *start = c->i + 1;
        *len = i - c->i - 1;
        c->i = i + 1;
        return RV_JSON_RAW;
    }
    return s[i] == '\\' ? RV_JSON_ESCAPED : RV_JSON_BAD;
}

/* The escape at s[i] == '\\': its length (6 for \uXXXX, 2 for \" \\ \/ \b \f \n \r \t),
 * or 0 for anything else. */
static inline int rv_json_escape_len(const rv_jcur *c, int64_t i) {
    uint32_t unused;
    if (i + 1 >= c->n) return 0;
    switch (c->s[i + 1]) {
        case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
            return 2;
        case 'u':
            return rv_json_u4(c, i + 2, &unused) == 0 ? 6 : 0;
        default:
            return 0;
    }
}

/* The string at c->s[c->i] == '"', checked and skipped: 1 (c->i past it; *escaped set
 * when it has a backslash), or 0.  Escapes are checked for their form only: \uD800 alone
 * is a string to json.loads (a str with a lone surrogate). */
static inline int rv_json_string(rv_jcur *c, int check_utf8, int *escaped) {
    const unsigned char *s = (const unsigned char *)c->s;
    const unsigned char *cls = rv_json_cls[check_utf8 ? 1 : 0];
    int64_t i = c->i + 1, n = c->n;
    for (;;) {
        i = rv_json_plain_run(s, i, n, cls, check_utf8);
        if (i >= n) return 0;
        unsigned char ch = s[i];
        if (ch == '"') {
            c->i = i + 1;
            return 1;
        }
        int k;
        if (ch == '\\') {
            *escaped = 1;
            k = rv_json_escape_len(c, i);
        } else if (ch >= 0x80) {
            k = rv_json_utf8_len(s + i, n - i);
        } else {
            return 0; /* a control character (strict JSON) */
        }
        if (k == 0) return 0;
        i += k;
    }
}

static inline int rv_json_put_cp(rv_tbuf *o, uint32_t cp) {
    char u[4];
    int k;
    if (cp < 0x80) {
        u[0] = (char)cp;
        k = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3F));
        k = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        k = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        k = 4;
    }
    return rv_tbuf_put(o, u, k);
}

/* The string at c->s[c->i] == '"' decoded onto o as UTF-8: RV_JSON_RAW (c->i past it),
 * RV_JSON_BAD (malformed, or an escape that leaves a lone surrogate, which UTF-8 cannot
 * hold), or -1 (no memory). */
static int rv_json_decode_string(rv_jcur *c, int check_utf8, rv_tbuf *o) {
    c->i++; /* the opening quote */
    for (;;) {
        int64_t run = c->i;
        while (c->i < c->n) {
            unsigned char ch = (unsigned char)c->s[c->i];
            if (ch == '"' || ch == '\\' || ch < 0x20) break;
            if (ch >= 0x80 && check_utf8) {
                int k = rv_json_utf8_len((const unsigned char *)c->s + c->i, c->n - c->i);
                if (k == 0) return RV_JSON_BAD;
                c->i += k;
            } else {
                c->i++;
            }
        }
        if (rv_tbuf_put(o, c->s + run, c->i - run) != 0) return -1;
        if (c->i >= c->n) return RV_JSON_BAD; /* unterminated */
        char ch = c->s[c->i];
        if (ch == '"') {
            c->i++;
            return RV_JSON_RAW;
        }
        if (ch != '\\') return RV_JSON_BAD; /* a control character (strict JSON) */
        if (c->i + 1 >= c->n) return RV_JSON_BAD;
        char e = c->s[c->i + 1], lit = 0;
        switch (e) {
            case '"': lit = '"'; break;
            case '\\': lit = '\\'; break;
            case '/': lit = '/'; break;
            case 'b': lit = '\b'; break;
            case 'f': lit = '\f'; break;
            case 'n': lit = '\n'; break;
            case 'r': lit = '\r'; break;
            case 't': lit = '\t'; break;
            case 'u': break;
            default: return RV_JSON_BAD;
        }
        if (e != 'u') {
            if (rv_tbuf_putc(o, lit) != 0) return -1;
            c->i += 2;
            continue;
        }
        uint32_t cp, lo;
        if (rv_json_u4(c, c->i + 2, &cp) != 0) return RV_JSON_BAD;
        c->i += 6;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            /* a pair only as \uD8xx\uDCxx; anything else leaves a lone surrogate */
            if (c->i + 1 < c->n && c->s[c->i] == '\\' && c->s[c->i + 1] == 'u' && rv_json_u4(c, c->i + 2, &lo) == 0 &&
                lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                c->i += 6;
            } else {
                return RV_JSON_BAD;
            }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return RV_JSON_BAD;
        }
        if (rv_json_put_cp(o, cp) != 0) return -1;
    }
}

/* What rv_json_number read: the text s[start : c->i], the integer part's digits
 * s[int_start : int_start + int_digits], a sign, and whether a fraction or an exponent
 * makes it a float to Python. */
typedef struct {
    int64_t start, int_start, int_digits;
    int neg, is_float;
} rv_json_num;

/* A number at c->s[c->i] per JSON's grammar, -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?:
 * 1 (c->i past it, *num filled), or 0.  What follows is not looked at ("01" reads as 0
 * followed by a 1, which the caller's grammar refuses). */
static inline int rv_json_number(rv_jcur *c, rv_json_num *num) {
    const char *s = c->s;
    int64_t i = c->i, n = c->n;
    num->start = i;
    num->neg = 0;
    num->is_float = 0;
    if (i < n && s[i] == '-') {
        num->neg = 1;
        i++;
    }
    num->int_start = i;
    if (i >= n) return 0;
    if (s[i] == '0') {
        i++;
    } else if (s[i] >= '1' && s[i] <= '9') {
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    } else {
        return 0; /* -Infinity, or not a number */
    }
    num->int_digits = i - num->int_start;
    if (i < n && s[i] == '.') {
        int64_t f = ++i;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
        if (i == f) return 0;
        num->is_float = 1;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        int64_t e = i;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
        if (i == e) return 0;
        num->is_float = 1;
    }
    c->i = i;
    return 1;
}

/* The literal word[0:len] (true, false, null) at c->s[c->i]: 1 (c->i past it), or 0. */
static inline int rv_json_literal(rv_jcur *c, const char *word, int64_t len) {
    if (c->n - c->i < len || memcmp(c->s + c->i, word, (size_t)len) != 0) return 0;
    c->i += len;
    return 1;
}

static int rv_json_skip(rv_jcur *c, int depth, int check_utf8);

/* The object or array at c->s[c->i] (its depth: `depth`), checked and skipped: 1, or 0. */
static int rv_json_skip_container(rv_jcur *c, int depth, int check_utf8) {
    int object = c->s[c->i] == '{', escaped = 0;
    char close = object ? '}' : ']';
    if (depth >= RV_JSON_MAX_DEPTH) return 0;
    c->i++;
    rv_json_ws(c);
    if (c->i < c->n && c->s[c->i] == close) {
        c->i++;
        return 1;
    }
    for (;;) {
        if (object) {
            if (c->i >= c->n || c->s[c->i] != '"' || !rv_json_string(c, check_utf8, &escaped)) return 0;
            rv_json_ws(c);
            if (c->i >= c->n || c->s[c->i] != ':') return 0;
            c->i++;
            rv_json_ws(c);
        }
        if (!rv_json_skip(c, depth + 1, check_utf8)) return 0;
        rv_json_ws(c);
        if (c->i >= c->n) return 0;
        if (c->s[c->i] == close) {
            c->i++;
            return 1;
        }
        if (c->s[c->i] != ',') return 0;
        c->i++;
        rv_json_ws(c);
    }
}

/* The value at c->s[c->i], checked and skipped: 1 when json.loads certainly reads it (no
 * NaN or Infinity, which it reads too, integers of at most RV_JSON_MAX_INT_DIGITS digits,
 * containers nested below RV_JSON_MAX_DEPTH), else 0. */
static int rv_json_skip(rv_jcur *c, int depth, int check_utf8) {
    int escaped = 0;
    rv_json_num num;
    if (c->i >= c->n) return 0;
    switch (c->s[c->i]) {
        case '"':
            return rv_json_string(c, check_utf8, &escaped);
        case '{':
        case '[':
            return rv_json_skip_container(c, depth, check_utf8);
        case 't':
            return rv_json_literal(c, "true", 4);
        case 'f':
            return rv_json_literal(c, "false", 5);
        case 'n':
            return rv_json_literal(c, "null", 4);
        default:
            return rv_json_number(c, &num) && num.int_digits <= RV_JSON_MAX_INT_DIGITS;
    }
}

#endif
