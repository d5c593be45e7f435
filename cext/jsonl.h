/* JSON lines checked and split without Python objects: where the top-level fields of one
 * JSONL line are, so a reader can hand a field's JSON text to a metric that reads JSON
 * text itself (the trajectory family) instead of building its Python value first.
 *
 * rv_jl_fields answers 1 only for a line that json.loads certainly reads as an object:
 * valid UTF-8 as Python's strict decoder takes it (non-ASCII bytes inside strings only),
 * JSON's grammar exactly (strings without control characters, escapes \" \\ \/ \b \f \n
 * \r \t \uXXXX, numbers -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, true, false, null),
 * nesting at most RV_JL_MAX_DEPTH deep, integers of at most RV_JL_MAX_INT_DIGITS digits,
 * top-level keys without escapes.  Anything else (NaN and Infinity, which Python reads
 * too, a byte order mark, a malformed line) gives 0: the caller reads that line with
 * json.loads, which knows every rule and every error message.  A key given twice counts
 * where it is last, as json.loads keeps the last. */
#ifndef RESPEVAL_JSONL_H
#define RESPEVAL_JSONL_H

#include <stdint.h>
#include <string.h>

#define RV_JL_MAX_DEPTH 64
#define RV_JL_MAX_INT_DIGITS 4000

typedef struct {
    const unsigned char *s;
    int64_t i, n;
} rv_jl;

static inline int rv_jl_is_ws(unsigned char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }

static inline void rv_jl_ws(rv_jl *c) {
    while (c->i < c->n && rv_jl_is_ws(c->s[c->i])) c->i++;
}

static inline int rv_jl_is_hex(unsigned char ch) {
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

/* The length of the UTF-8 sequence at s[i] (a byte >= 0x80), or 0 when it is not one that
 * Python's strict decoder takes (overlong forms, surrogates, past U+10FFFF, cut short). */
static inline int64_t rv_jl_utf8(const unsigned char *s, int64_t i, int64_t n) {
    unsigned char b = s[i];
    int64_t len;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) {
        len = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
        len = 3;
        if (b == 0xE0) lo = 0xA0;
        if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
        len = 4;
        if (b == 0xF0) lo = 0x90;
        if (b == 0xF4) hi = 0x8F;
    } else {
        return 0;
    }
    if (i + len > n || s[i + 1] < lo || s[i + 1] > hi) return 0;
    for (int64_t k = 2; k < len; k++)
        if (s[i + k] < 0x80 || s[i + k] > 0xBF) return 0;
    return len;
}

/* At '"': 1 past the closing quote (*escaped: the string had a backslash), or 0. */
static int rv_jl_string(rv_jl *c, int *escaped) {
    const unsigned char *s = c->s;
    int64_t i = c->i + 1, n = c->n;
    while (i < n) {
        unsigned char ch = s[i];
        if (ch == '"') {
            c->i = i + 1;
            return 1;
        }
        if (ch < 0x20) return 0;
        if (ch >= 0x80) {
            int64_t len = rv_jl_utf8(s, i, n);
            if (!len) return 0;
            i += len;
            continue;
        }
        if (ch == '\\') {
            *escaped = 1;
            if (i + 1 >= n) return 0;
            ch = s[i + 1];
            if (ch == 'u') {
                if (i + 5 >= n || !rv_jl_is_hex(s[i + 2]) || !rv_jl_is_hex(s[i + 3]) || !rv_jl_is_hex(s[i + 4]) ||
                    !rv_jl_is_hex(s[i + 5]))
                    return 0;
                i += 6;
            } else if (ch == '"' || ch == '\\' || ch == '/' || ch == 'b' || ch == 'f' || ch == 'n' || ch == 'r' ||
                       ch == 't') {
                i += 2;
            } else {
                return 0;
            }
            continue;
        }
        i++;
    }
    return 0;
}

static inline int64_t rv_jl_digits(const rv_jl *c, int64_t i) {
    while (i < c->n && c->s[i] >= '0' && c->s[i] <= '9') i++;
    return i;
}

static int rv_jl_number(rv_jl *c) {
    int64_t i = c->i, j;
    if (i < c->n && c->s[i] == '-') i++;
    if (i >= c->n) return 0;
    if (c->s[i] == '0') {
        i++;
    } else if (c->s[i] >= '1' && c->s[i] <= '9') {
        j = rv_jl_digits(c, i + 1);
        if (j - i > RV_JL_MAX_INT_DIGITS) return 0;  /* int() would refuse it (sys.int_info) */
        i = j;
    } else {
        return 0;  /* -Infinity, or not a number */
    }
    if (i < c->n && c->s[i] == '.') {
        j = rv_jl_digits(c, i + 1);
        if (j == i + 1) return 0;
        i = j;
    }
    if (i < c->n && (c->s[i] == 'e' || c->s[i] == 'E')) {
        i++;
        if (i < c->n && (c->s[i] == '+' || c->s[i] == '-')) i++;
        j = rv_jl_digits(c, i);
        if (j == i) return 0;
        i = j;
    }
    c->i = i;
    return 1;
}

static inline int rv_jl_word(rv_jl *c, const char *word, int64_t len) {
    if (c->n - c->i < len || memcmp(c->s + c->i, word, (size_t)len) != 0) return 0;
    c->i += len;
    return 1;
}

static int rv_jl_value(rv_jl *c, int depth);

/* At '{' or '[': 1 past the closing bracket, or 0. */
static int rv_jl_container(rv_jl *c, int depth) {
    int object = c->s[c->i] == '{', escaped = 0;
    unsigned char close = object ? '}' : ']';
    if (depth >= RV_JL_MAX_DEPTH) return 0;
    c->i++;
    rv_jl_ws(c);
    if (c->i < c->n && c->s[c->i] == close) {
        c->i++;
        return 1;
    }
    for (;;) {
        if (object) {
            if (c->i >= c->n || c->s[c->i] != '"' || !rv_jl_string(c, &escaped)) return 0;
            rv_jl_ws(c);
            if (c->i >= c->n || c->s[c->i] != ':') return 0;
            c->i++;
            rv_jl_ws(c);
        }
        if (!rv_jl_value(c, depth + 1)) return 0;
        rv_jl_ws(c);
        if (c->i >= c->n) return 0;
        if (c->s[c->i] == close) {
            c->i++;
            return 1;
        }
        if (c->s[c->i] != ',') return 0;
        c->i++;
        rv_jl_ws(c);
    }
}

static int rv_jl_value(rv_jl *c, int depth) {
    int escaped = 0;
    if (c->i >= c->n) return 0;
    switch (c->s[c->i]) {
    case '"':
        return rv_jl_string(c, &escaped);
    case '{':
    case '[':
        return rv_jl_container(c, depth);
    case 't':
        return rv_jl_word(c, "true", 4);
    case 'f':
        return rv_jl_word(c, "false", 5);
    case 'n':
        return rv_jl_word(c, "null", 4);
    default:
        return rv_jl_number(c);
    }
}

/* Line p[0:n]: 1 when it is certainly one JSON object as json.loads reads it, with
 * spans[2k], spans[2k + 1] the byte range of key k's value (where it is last; -1, -1 when
 * absent); 0 when unsure (the caller reads the line with json.loads). */
static int rv_jl_fields(const char *p, int64_t n, const char *const *keys, const int64_t *key_len, int64_t nkeys,
                        int64_t *spans) {
    rv_jl c = {(const unsigned char *)p, 0, n};
    for (int64_t k = 0; k < 2 * nkeys; k++) spans[k] = -1;
    rv_jl_ws(&c);
    if (c.i >= c.n || c.s[c.i] != '{') return 0;
    c.i++;
    rv_jl_ws(&c);
    if (c.i < c.n && c.s[c.i] == '}') {
        c.i++;
    } else {
        for (;;) {
            int escaped = 0;
            int64_t key_at = c.i + 1, value_at;
            if (c.i >= c.n || c.s[c.i] != '"' || !rv_jl_string(&c, &escaped) || escaped) return 0;
            int64_t key_n = c.i - 1 - key_at;
            rv_jl_ws(&c);
            if (c.i >= c.n || c.s[c.i] != ':') return 0;
            c.i++;
            rv_jl_ws(&c);
            value_at = c.i;
            if (!rv_jl_value(&c, 1)) return 0;
            for (int64_t k = 0; k < nkeys; k++) {
                if (key_len[k] == key_n && memcmp(keys[k], p + key_at, (size_t)key_n) == 0) {
                    spans[2 * k] = value_at;
                    spans[2 * k + 1] = c.i;
                }
            }
            rv_jl_ws(&c);
            if (c.i >= c.n) return 0;
            if (c.s[c.i] == '}') {
                c.i++;
                break;
            }
            if (c.s[c.i] != ',') return 0;
            c.i++;
            rv_jl_ws(&c);
        }
    }
    rv_jl_ws(&c);
    return c.i == c.n;
}

/* How a reader may take the value p[start:end] of a line rv_jl_fields passed, for a field
 * of the given kind ('r' raw: any JSON value, 'k' key: a string or an integer, 't' text:
 * a string), without json.loads and with the same result:
 *   RV_JL_TEXT   the bytes themselves as a str (a raw array or object's JSON text; a key's
 *                integer, whose str() is its digits, as the checker allows no leading 0);
 *   RV_JL_STRING the bytes inside the quotes as a str (a string without escapes);
 *   RV_JL_INT    a raw non-negative integer of at most 18 digits, as an int;
 *   RV_JL_OTHER  anything else (null, booleans, floats, escapes, a mismatched kind): the
 *                caller reads the line with json.loads, which gives the value or the error. */
enum { RV_JL_OTHER = 0, RV_JL_TEXT = 1, RV_JL_STRING = 2, RV_JL_INT = 3 };

static inline int rv_jl_value_kind(const char *p, int64_t start, int64_t end, char kind) {
    if (start < 0 || end <= start) return RV_JL_OTHER;
    unsigned char first = (unsigned char)p[start];
    if (first == '"')
        return memchr(p + start + 1, '\\', (size_t)(end - start - 2)) ? RV_JL_OTHER : RV_JL_STRING;
    if (kind == 'r' && (first == '[' || first == '{')) return RV_JL_TEXT;
    if (first < '0' || first > '9' || (kind != 'r' && kind != 'k')) return RV_JL_OTHER;
    for (int64_t i = start; i < end; i++)
        if (p[i] < '0' || p[i] > '9') return RV_JL_OTHER;
    if (kind == 'k') return RV_JL_TEXT;
    return end - start <= 18 ? RV_JL_INT : RV_JL_OTHER;
}

#endif
