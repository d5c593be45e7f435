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
 * where it is last, as json.loads keeps the last.
 *
 * The JSON rules are json_scan.h's, the scanner the trajectory reader uses too. */
#ifndef RESPEVAL_JSONL_H
#define RESPEVAL_JSONL_H

#include <stdint.h>
#include <string.h>

#include "json_scan.h"

#define RV_JL_MAX_DEPTH RV_JSON_MAX_DEPTH
#define RV_JL_MAX_INT_DIGITS RV_JSON_MAX_INT_DIGITS

/* Line p[0:n]: 1 when it is certainly one JSON object as json.loads reads it, with
 * spans[2k], spans[2k + 1] the byte range of key k's value (where it is last; -1, -1 when
 * absent); 0 when unsure (the caller reads the line with json.loads). */
static int rv_jl_fields(const char *p, int64_t n, const char *const *keys, const int64_t *key_len, int64_t nkeys,
                        int64_t *spans) {
    rv_jcur c = {p, n, 0};
    for (int64_t k = 0; k < 2 * nkeys; k++) spans[k] = -1;
    rv_json_ws(&c);
    if (c.i >= c.n || c.s[c.i] != '{') return 0;
    c.i++;
    rv_json_ws(&c);
    if (c.i < c.n && c.s[c.i] == '}') {
        c.i++;
    } else {
        for (;;) {
            int64_t key_at, key_n, value_at;
            /* a key with an escape is left to json.loads (its text is not its value) */
            if (c.i >= c.n || c.s[c.i] != '"' || rv_json_raw_string(&c, 1, &key_at, &key_n) != RV_JSON_RAW) return 0;
            rv_json_ws(&c);
            if (c.i >= c.n || c.s[c.i] != ':') return 0;
            c.i++;
            rv_json_ws(&c);
            value_at = c.i;
            if (!rv_json_skip(&c, 1, 1)) return 0;
            for (int64_t k = 0; k < nkeys; k++) {
                if (key_len[k] == key_n && memcmp(keys[k], p + key_at, (size_t)key_n) == 0) {
                    spans[2 * k] = value_at;
                    spans[2 * k + 1] = c.i;
                }
            }
            rv_json_ws(&c);
            if (c.i >= c.n) return 0;
            if (c.s[c.i] == '}') {
                c.i++;
                break;
            }
            if (c.s[c.i] != ',') return 0;
            c.i++;
            rv_json_ws(&c);
        }
    }
    rv_json_ws(&c);
    return c.i == c.n;
}

/* How a reader may take the value p[start:end] of a line rv_jl_fields passed, for a field
 * of the given kind ('r' raw: any JSON value, 'k' key: a string or an integer, 't' text:
 * a string), without json.loads and with the same result:
 *   RV_JL_TEXT    the bytes themselves as a str (a raw array or object's JSON text; a key's
 *                 integer, whose str() is its digits, as the checker allows no leading 0);
 *   RV_JL_STRING  the bytes inside the quotes as a str (a string without escapes);
 *   RV_JL_INT     a raw non-negative integer of at most 18 digits, as an int;
 *   RV_JL_ESCAPED a string with escapes: rv_jl_unescape decodes it (on a line without
 *                 rv_jl_surrogate_escape, so without a lone surrogate);
 *   RV_JL_OTHER   anything else (null, booleans, floats, a mismatched kind): the caller
 *                 reads the line with json.loads, which gives the value or the error. */
enum { RV_JL_OTHER = 0, RV_JL_TEXT = 1, RV_JL_STRING = 2, RV_JL_INT = 3, RV_JL_ESCAPED = 4 };

/* 1 when the line p[0:n] has "\\u" then d/D then 8-f: an escape of a UTF-16 surrogate,
 * the only way a lone one gets into a str.  Such a line is read by json.loads and walked by
 * the reader's lone-surrogate rule (which looks at every field, selected or not: the
 * record is bad), as readers._SURROGATE_ESCAPE finds it. */
static inline int rv_jl_surrogate_escape(const char *p, int64_t n) {
    const char *s = p, *end = p + n;
    while ((s = (const char *)memchr(s, '\\', (size_t)(end - s))) != NULL) {
        if (end - s >= 4 && s[1] == 'u' && (s[2] == 'd' || s[2] == 'D')) {
            char c = s[3];
            if ((c >= '8' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')) return 1;
        }
        s++;
    }
    return 0;
}

/* The string p[start:end] (quotes included, escapes inside) decoded as json.loads decodes
 * it, its UTF-8 appended to o: 0, 1 when it holds a lone surrogate (not taken), -1 when out
 * of memory.  The line's UTF-8 was checked by rv_jl_fields. */
static inline int rv_jl_unescape(const char *p, int64_t start, int64_t end, rv_tbuf *o) {
    rv_jcur c = {p, end, start};
    int r = rv_json_decode_string(&c, 0, o);
    if (r < 0) return -1;
    return r == RV_JSON_RAW && c.i == end ? 0 : 1;
}

static inline int rv_jl_value_kind(const char *p, int64_t start, int64_t end, char kind) {
    if (start < 0 || end <= start) return RV_JL_OTHER;
    unsigned char first = (unsigned char)p[start];
    if (first == '"')
        return memchr(p + start + 1, '\\', (size_t)(end - start - 2)) ? RV_JL_ESCAPED : RV_JL_STRING;
    if (kind == 'r' && (first == '[' || first == '{')) return RV_JL_TEXT;
    if (first < '0' || first > '9' || (kind != 'r' && kind != 'k')) return RV_JL_OTHER;
    for (int64_t i = start; i < end; i++)
        if (p[i] < '0' || p[i] > '9') return RV_JL_OTHER;
    if (kind == 'k') return RV_JL_TEXT;
    return end - start <= 18 ? RV_JL_INT : RV_JL_OTHER;
}

#endif
