/* Tool calls from JSON text: each call's name and the canonical JSON of its arguments,
 * written straight from the text (no Python objects), on the one JSON scanner
 * (json_scan.h); and the memo's two passes over a row (the span scanner, then the calls
 * the memo does not know).
 */
#ifndef RESPEVAL_TRAJECTORY_JSON_H
#define RESPEVAL_TRAJECTORY_JSON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "buffer.h"
#include "dispatch.h"
#include "json_scan.h"
#include "trajectory_table.h"

/* ------------------------------------------------------------------------------------
 * Canonical calls straight from JSON text (no Python objects).
 *
 * rv_tjson_trajectory reads one trajectory, a JSON list of call objects, and writes per
 * call its name (decoded UTF-8) and its arguments' canonical JSON: the bytes the Python
 * path (json.loads, then the twin's canonical_args) produces.  It handles the common
 * subset of JSON and answers RV_TJ_FALLBACK for everything else: a syntax error, a
 * missing or duplicated name or arguments key, arguments that are not an object or
 * null, NaN/Infinity literals, integers beyond 18 digits, escapes that make lone
 * surrogates, control characters in strings, invalid UTF-8 (checked when asked), deeper
 * nesting than RV_TJ_MAX_DEPTH.  The caller then takes the Python path for that row,
 * which reproduces Python's result or error exactly.
 *
 * Non-integral numbers go through dbl_canon (the caller's: Python's float() and repr()).
 * Every read is checked against the text's length.
 */

enum { RV_TJ_OK = 0, RV_TJ_FALLBACK = 1, RV_TJ_NOMEM = -1 };
#define RV_TJ_MAX_DEPTH 64

/* "s" with \ and " escaped: the twin's _quote of the decoded string */
static inline int rv_tbuf_put_quoted(rv_tbuf *b, const char *s, int64_t n) {
    if (rv_tbuf_reserve(b, 2 * n + 2) != 0) return -1;
    char *o = b->data + b->n;
    *o++ = '"';
    for (int64_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '"' || c == '\\') *o++ = '\\';
        *o++ = c;
    }
    *o++ = '"';
    b->n = o - b->data;
    return 0;
}

/* Whether the 8 bytes of w hold a " or a \ (zero bytes hold neither). */
static inline int rv_word_needs_escape(uint64_t w) {
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t a = w ^ (ones * (uint64_t)'"'), c = w ^ (ones * (uint64_t)'\\');
    return (((a - ones) & ~a) | ((c - ones) & ~c)) & highs ? 1 : 0;
}

/* rv_tbuf_put_quoted, for strings that are mostly free of \ and " (values read from
 * Python objects): such a string is copied whole once a word-at-a-time scan has said so. */
static inline int rv_tbuf_put_quoted_words(rv_tbuf *b, const char *s, int64_t n) {
    int64_t i = 0;
    int escape = 0;
    for (; i + 8 <= n && !escape; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        escape = rv_word_needs_escape(w);
    }
    /* the last n - i < 8 bytes: loads that stay inside s, overlapping what was checked
     * (never a copy through memory: a load spanning two stores stalls) */
    if (!escape && i < n) {
        if (n >= 8) {
            uint64_t w;
            memcpy(&w, s + n - 8, 8);
            escape = rv_word_needs_escape(w);
        } else if (n >= 4) {
            uint32_t lo, hi;
            memcpy(&lo, s, 4);
            memcpy(&hi, s + n - 4, 4);
            escape = rv_word_needs_escape((uint64_t)lo | ((uint64_t)hi << 32));
        } else {
            for (; i < n; i++) escape |= s[i] == '"' || s[i] == '\\';
        }
    }
    if (escape) return rv_tbuf_put_quoted(b, s, n);
    if (rv_tbuf_reserve(b, n + 2) != 0) return -1;
    b->data[b->n] = '"';
    rv_copy_short(b->data + b->n + 1, s, n);
    b->data[b->n + 1 + n] = '"';
    b->n += n + 2;
    return 0;
}

/* Appends the canonical form of the JSON number text s[0:n] that has a fraction or an
 * exponent (integral values as integers, others by repr); 0, or -1 on failure. */
typedef int (*rv_dbl_canon_fn)(const char *s, int64_t n, rv_tbuf *out);

typedef struct {
    int64_t koff, klen;    /* the decoded key (inside its quotes) */
    int64_t mstart, mend;  /* the member's canonical text "key":value */
    int64_t order;
} rv_tmember;

/* Calls' texts in rows of JSON text: per call its span (start, end) in its row and the
 * span's rv_tj_text_hash, for the rows of a group back to back (buffer.h's RV_BUF). */
typedef struct {
    int64_t start, end;
    uint64_t hash;
} rv_tjspan;
typedef RV_BUF(rv_tjspan) rv_tjspans;

typedef struct {
    rv_tbuf names;      /* decoded call names, back to back */
    rv_tbuf args;       /* per call: 4 bytes for the name id, then the canonical arguments */
    int64_t *name_end;  /* per call: end of its name in names, of its args in args */
    int64_t *args_end;
    uint64_t *memo;     /* per call: what the memo gave for its text, or RV_TRAJ_MEMO_MISS */
    int64_t *raw_start; /* per call: its text in the input, and that text's hash */
    int64_t *raw_end;
    uint64_t *raw_hash;
    rv_tjspans row_spans; /* with a memo: the row's calls' spans, when they were not found ahead */
    int64_t ncalls, calls_cap;
    rv_tbuf tmp, key;
    rv_tmember *mem, *mem_tmp;
    int64_t mem_n, mem_cap;
    rv_dbl_canon_fn dbl_canon;
    int check_utf8;     /* validate UTF-8 inside strings (bytes from Arrow, not from a str) */
} rv_tjson;

static inline void rv_tjson_free(rv_tjson *t) {
    free(t->names.data); free(t->args.data); free(t->name_end); free(t->args_end);
    free(t->memo); free(t->raw_start); free(t->raw_end); free(t->raw_hash);
    rv_buf_free(&t->row_spans);
    free(t->tmp.data); free(t->key.data); free(t->mem); free(t->mem_tmp);
    memset(t, 0, sizeof(*t));
}

/* The string at c->s[c->i] == '"' decoded onto o (json_scan.h's decoder, in this
 * reader's codes). */
static inline int rv_tj_string(rv_tjson *t, rv_jcur *c, rv_tbuf *o) {
    int r = rv_json_decode_string(c, t->check_utf8, o);
    return r == RV_JSON_RAW ? RV_TJ_OK : r < 0 ? RV_TJ_NOMEM : RV_TJ_FALLBACK;
}

/* The string at c->s[c->i] == '"', without escapes: RV_TJ_OK (its text
 * c->s[*start : *start + *len], c->i past it), 1 (it has escapes: c->i unchanged, for
 * rv_tj_string), or RV_TJ_FALLBACK (malformed). */
static inline int rv_tj_raw_string(const rv_tjson *t, rv_jcur *c, int64_t *start, int64_t *len) {
    int r = rv_json_raw_string(c, t->check_utf8, start, len);
    return r == RV_JSON_RAW ? RV_TJ_OK : r == RV_JSON_ESCAPED ? 1 : RV_TJ_FALLBACK;
}

static inline int rv_tj_literal(rv_jcur *c, const char *word, int64_t len) {
    return rv_json_literal(c, word, len) ? RV_TJ_OK : RV_TJ_FALLBACK;
}

/* The string at c->s[c->i] == '"' in canonical form (quoted, \ and " escaped).  A JSON
 * string without escapes is already that: it is copied as it stands. */
static int rv_tj_string_canon(rv_tjson *t, rv_jcur *c, rv_tbuf *o) {
    int64_t start, len, open = c->i;
    int r = rv_tj_raw_string(t, c, &start, &len);
    if (r == RV_TJ_OK) return rv_tbuf_put(o, c->s + open, len + 2) == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
    if (r != 1) return r;
    /* escapes: decode, then quote */
    int64_t at = t->key.n;
    r = rv_tj_string(t, c, &t->key);
    if (r != RV_TJ_OK) return r;
    r = rv_tbuf_put_quoted(o, t->key.data + at, t->key.n - at) == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
    t->key.n = at;
    return r;
}

/* A number in canonical form: an integer of at most 18 digits as written ("-0" as 0),
 * a fraction or an exponent through dbl_canon (Python's float() and repr()); longer
 * integers and anything unusual are left to Python. */
static int rv_tj_number(rv_tjson *t, rv_jcur *c, rv_tbuf *o) {
    rv_json_num num;
    if (!rv_json_number(c, &num)) return RV_TJ_FALLBACK; /* "-Infinity" and the like */
    /* Python reads "01" as 0 followed by extra data: leave that to Python */
    if (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') return RV_TJ_FALLBACK;
    if (num.is_float) {
        if (!t->dbl_canon) return RV_TJ_FALLBACK;
        return t->dbl_canon(c->s + num.start, c->i - num.start, o) == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
    }
    if (num.int_digits > 18) return RV_TJ_FALLBACK;
    if (num.neg && num.int_digits == 1 && c->s[num.int_start] == '0')
        return rv_tbuf_putc(o, '0') == 0 ? RV_TJ_OK : RV_TJ_NOMEM; /* int("-0") == 0 */
    return rv_tbuf_put(o, c->s + num.start, c->i - num.start) == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
}

/* -1, 0, 1 as the byte strings a[0:na], b[0:nb] compare (unsigned bytes, then length);
 * object keys are short, so a plain loop beats a call to memcmp */
static inline int rv_tj_cmp(const char *a, int64_t na, const char *b, int64_t nb) {
    int64_t m = na < nb ? na : nb;
    for (int64_t k = 0; k < m; k++) {
        unsigned char x = (unsigned char)a[k], y = (unsigned char)b[k];
        if (x != y) return x < y ? -1 : 1;
    }
    return (na > nb) - (na < nb);
}

static inline int rv_tj_key_less(const char *base, const rv_tmember *a, const rv_tmember *b) {
    int cmp = rv_tj_cmp(base + a->koff, a->klen, base + b->koff, b->klen);
    if (cmp != 0) return cmp < 0;
    return a->order < b->order;
}

/* Stable sort of members by key bytes (UTF-8 byte order is code point order), then by
 * position, so among duplicate keys the last one written comes last. */
static void rv_tj_sort_members(const char *base, rv_tmember *m, rv_tmember *tmp, int64_t n) {
    if (n <= 16) {
        for (int64_t i = 1; i < n; i++) {
            rv_tmember v = m[i];
            int64_t j = i - 1;
            while (j >= 0 && rv_tj_key_less(base, &v, &m[j])) { m[j + 1] = m[j]; j--; }
            m[j + 1] = v;
        }
        return;
    }
    int64_t half = n / 2;
    rv_tj_sort_members(base, m, tmp, half);
    rv_tj_sort_members(base, m + half, tmp, n - half);
    int64_t a = 0, b = half, k = 0;
    while (a < half && b < n) tmp[k++] = rv_tj_key_less(base, &m[b], &m[a]) ? m[b++] : m[a++];
    while (a < half) tmp[k++] = m[a++];
    while (b < n) tmp[k++] = m[b++];
    memcpy(m, tmp, sizeof(rv_tmember) * (size_t)n);
}

static int rv_tj_value(rv_tjson *t, rv_jcur *c, rv_tbuf *o, int depth);

static int rv_tj_push_member(rv_tjson *t, rv_tmember m) {
    if (t->mem_n >= t->mem_cap) {
        void **arrays[2] = {(void **)&t->mem, (void **)&t->mem_tmp};
        const size_t elem[2] = {sizeof(rv_tmember), sizeof(rv_tmember)};
        if (rv_grow_parallel(arrays, elem, 2, &t->mem_cap, t->mem_n + 1)) return -1;
    }
    t->mem[t->mem_n++] = m;
    return 0;
}

/* An object at c->s[c->i] == '{', written as it is read ({"key":value,...}); only when
 * its keys are not already in order (or repeat) is it rebuilt with sorted members, the
 * last of duplicate keys kept.  Keys containing " or \ are left to Python (their quoted
 * form would not sort like their text). */
static int rv_tj_object(rv_tjson *t, rv_jcur *c, rv_tbuf *o, int depth) {
    int64_t start = o->n, base = t->mem_n, order = 0;
    int in_order = 1, r;
    c->i++;
    rv_json_ws(c);
    if (rv_tbuf_putc(o, '{') != 0) return RV_TJ_NOMEM;
    if (c->i < c->n && c->s[c->i] == '}') {
        c->i++;
        return rv_tbuf_putc(o, '}') == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
    }
    for (;;) {
        rv_tmember m;
        if (c->i >= c->n || c->s[c->i] != '"') return RV_TJ_FALLBACK;
        if (order && rv_tbuf_putc(o, ',') != 0) return RV_TJ_NOMEM;
        m.mstart = o->n;
        int64_t kstart, klen;
        int64_t open = c->i;
        r = rv_tj_raw_string(t, c, &kstart, &klen);
        if (r == RV_TJ_OK) {
            if (rv_tbuf_put(o, c->s + open, klen + 2) != 0) return RV_TJ_NOMEM;
        } else if (r == 1) {
            if (rv_tbuf_putc(o, '"') != 0) return RV_TJ_NOMEM;
            int64_t at = o->n;
            if ((r = rv_tj_string(t, c, o)) != RV_TJ_OK) return r;
            for (int64_t k = at; k < o->n; k++)
                if (o->data[k] == '"' || o->data[k] == '\\') return RV_TJ_FALLBACK;
            if (rv_tbuf_putc(o, '"') != 0) return RV_TJ_NOMEM;
        } else {
            return r;
        }
        m.koff = m.mstart + 1;
        m.klen = o->n - 1 - m.koff;
        rv_json_ws(c);
        if (c->i >= c->n || c->s[c->i] != ':') return RV_TJ_FALLBACK;
        c->i++;
        rv_json_ws(c);
        if (rv_tbuf_putc(o, ':') != 0) return RV_TJ_NOMEM;
        if ((r = rv_tj_value(t, c, o, depth + 1)) != RV_TJ_OK) return r;
        m.mend = o->n;
        m.order = order++;
        if (t->mem_n > base && !rv_tj_key_less(o->data, &t->mem[t->mem_n - 1], &m)) in_order = 0;
        if (in_order && t->mem_n > base) {
            /* equal keys: order breaks the tie, so check the bytes too */
            const rv_tmember *p = &t->mem[t->mem_n - 1];
            if (rv_tj_cmp(o->data + p->koff, p->klen, o->data + m.koff, m.klen) == 0) in_order = 0;
        }
        if (rv_tj_push_member(t, m) != 0) return RV_TJ_NOMEM;
        rv_json_ws(c);
        if (c->i >= c->n) return RV_TJ_FALLBACK;
        if (c->s[c->i] == ',') { c->i++; rv_json_ws(c); continue; }
        if (c->s[c->i] == '}') { c->i++; break; }
        return RV_TJ_FALLBACK;
    }
    int64_t count = t->mem_n - base;
    rv_tmember *mm = t->mem + base;
    if (in_order) {
        t->mem_n = base;
        return rv_tbuf_putc(o, '}') == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
    }
    rv_tj_sort_members(o->data, mm, t->mem_tmp, count);
    t->tmp.n = 0;
    if (rv_tbuf_putc(&t->tmp, '{') != 0) return RV_TJ_NOMEM;
    int first = 1;
    for (int64_t k = 0; k < count; k++) {
        if (k + 1 < count && mm[k].klen == mm[k + 1].klen &&
            (mm[k].klen == 0 || memcmp(o->data + mm[k].koff, o->data + mm[k + 1].koff, (size_t)mm[k].klen) == 0))
            continue; /* a later duplicate wins */
        if (!first && rv_tbuf_putc(&t->tmp, ',') != 0) return RV_TJ_NOMEM;
        first = 0;
        if (rv_tbuf_put(&t->tmp, o->data + mm[k].mstart, mm[k].mend - mm[k].mstart) != 0) return RV_TJ_NOMEM;
    }
    if (rv_tbuf_putc(&t->tmp, '}') != 0) return RV_TJ_NOMEM;
    t->mem_n = base;
    o->n = start;
    return rv_tbuf_put(o, t->tmp.data, t->tmp.n) == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
}

static int rv_tj_value(rv_tjson *t, rv_jcur *c, rv_tbuf *o, int depth) {
    int r;
    if (depth > RV_TJ_MAX_DEPTH || c->i >= c->n) return RV_TJ_FALLBACK;
    char ch = c->s[c->i];
    switch (ch) {
        case '{':
            return rv_tj_object(t, c, o, depth);
        case '[':
            c->i++;
            if (rv_tbuf_putc(o, '[') != 0) return RV_TJ_NOMEM;
            rv_json_ws(c);
            if (c->i < c->n && c->s[c->i] == ']') {
                c->i++;
                return rv_tbuf_putc(o, ']') == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
            }
            for (;;) {
                if ((r = rv_tj_value(t, c, o, depth + 1)) != RV_TJ_OK) return r;
                rv_json_ws(c);
                if (c->i >= c->n) return RV_TJ_FALLBACK;
                if (c->s[c->i] == ',') {
                    c->i++;
                    rv_json_ws(c);
                    if (rv_tbuf_putc(o, ',') != 0) return RV_TJ_NOMEM;
                    continue;
                }
                if (c->s[c->i] == ']') {
                    c->i++;
                    return rv_tbuf_putc(o, ']') == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
                }
                return RV_TJ_FALLBACK;
            }
        case '"':
            return rv_tj_string_canon(t, c, o);
        case 't':
            if ((r = rv_tj_literal(c, "true", 4)) != RV_TJ_OK) return r;
            return rv_tbuf_putc(o, '1') == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
        case 'f':
            if ((r = rv_tj_literal(c, "false", 5)) != RV_TJ_OK) return r;
            return rv_tbuf_putc(o, '0') == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
        case 'n':
            if ((r = rv_tj_literal(c, "null", 4)) != RV_TJ_OK) return r;
            return rv_tbuf_put(o, "null", 4) == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
        default:
            if (ch == '-' || (ch >= '0' && ch <= '9')) return rv_tj_number(t, c, o);
            return RV_TJ_FALLBACK;
    }
}

/* Ends the call being read: its name and arguments end where names and args do now. */
static int rv_tj_push_call(rv_tjson *t) {
    if (t->ncalls >= t->calls_cap) {
        void **arrays[6] = {(void **)&t->name_end, (void **)&t->args_end, (void **)&t->memo,
                            (void **)&t->raw_start, (void **)&t->raw_end, (void **)&t->raw_hash};
        const size_t elem[6] = {sizeof(int64_t), sizeof(int64_t), sizeof(uint64_t),
                                sizeof(int64_t), sizeof(int64_t), sizeof(uint64_t)};
        if (rv_grow_parallel(arrays, elem, 6, &t->calls_cap, t->ncalls + 1)) return -1;
    }
    t->name_end[t->ncalls] = t->names.n;
    t->args_end[t->ncalls] = t->args.n;
    t->memo[t->ncalls] = RV_TRAJ_MEMO_MISS;
    t->ncalls++;
    return 0;
}


/* One past the '}' that closes the object at s[i] == '{', matching braces and brackets
 * outside strings, with the text's rv_tj_text_hash in *hash; -1 if the text ends first.
 * Nothing else is checked: the memo only answers for texts that were read in full
 * before, byte for byte. */
static inline int64_t rv_tj_object_span_portable(const char *text, int64_t n, int64_t i, uint64_t *hash) {
    const unsigned char *s = (const unsigned char *)text;
    int64_t open = i, depth = 0;
    while (i < n) {
        switch (s[i]) {
            default:
                i++;
                break;
            case '"':
                i++;
                for (;;) {
                    while (i < n && s[i] != '"' && s[i] != '\\') i++;
                    if (i >= n) return -1;
                    if (s[i] == '"') break;
                    i += 2; /* an escape: the next byte cannot end the string */
                }
                i++;
                break;
            case '{':
            case '[':
                depth++;
                i++;
                break;
            case '}':
            case ']':
                i++;
                if (--depth == 0) {
                    *hash = rv_tj_text_hash(text + open, i - open);
                    return i;
                }
        }
    }
    return -1;
}

/* The scanner's state between blocks, and one block of it: masks of the block's quotes,
 * backslashes, openers ({ [) and closers (} ]), bit k for byte k of `width` (16, 32 or
 * 64).  Quotes toggle an inside-a-string mask (a prefix XOR), so only the braces and
 * brackets outside strings are visited; a block with a backslash is walked mark by mark
 * instead, so an escaped byte is skipped (across blocks too).  Returns one past the
 * closing brace within the block (1..width), or 0. */
typedef struct {
    int64_t depth;
    int in_string, skip_first;
} rv_tj_nest;

static RV_ALWAYS_INLINE int rv_tj_nest_block(rv_tj_nest *st, uint64_t q, uint64_t e, uint64_t o, uint64_t c,
                                             int width) {
    const uint64_t all = width == 64 ? ~0ULL : (1ULL << width) - 1;
    if (e == 0) {
        if (st->skip_first) q &= ~1ULL; /* byte 0 is escaped */
        st->skip_first = 0;
        uint64_t inside = q;
        inside ^= inside << 1;
        inside ^= inside << 2;
        inside ^= inside << 4;
        inside ^= inside << 8;
        if (width > 16) inside ^= inside << 16;
        if (width > 32) inside ^= inside << 32;
        inside &= all;
        if (st->in_string) inside ^= all;
        uint64_t marks = (o | c) & ~inside;
        while (marks) {
            int k = __builtin_ctzll(marks);
            marks &= marks - 1;
            if (o >> k & 1u) {
                st->depth++;
            } else if (--st->depth == 0) {
                return k + 1;
            }
        }
        st->in_string = (int)(inside >> (width - 1) & 1u);
        return 0;
    }
    uint64_t any = q | e | o | c;
    if (st->skip_first) any &= ~1ULL;
    st->skip_first = 0;
    while (any) {
        int k = __builtin_ctzll(any);
        uint64_t bit = 1ULL << k;
        any &= any - 1;
        if (st->in_string) {
            if (e & bit) {
                if (k == width - 1) st->skip_first = 1; /* the escaped byte opens the next block */
                else any &= ~(bit << 1);
            } else if (q & bit) {
                st->in_string = 0;
            }
        } else if (q & bit) {
            st->in_string = 1;
        } else if (o & bit) {
            st->depth++;
        } else if ((c & bit) && --st->depth == 0) {
            return k + 1;
        }
    }
    return 0;
}

#if defined(__SSE2__)
/* The first `keep` bytes of v, the rest zero. */
static inline __m128i rv_tj_keep(__m128i v, int keep) {
    const __m128i index = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    return _mm_and_si128(v, _mm_cmplt_epi8(index, _mm_set1_epi8((char)keep)));
}

/* rv_tj_hash_piece on a vector of 16 bytes: each word's halves multiplied, the
 * neighbour word added. */
static inline __m128i rv_tj_hash_add128(__m128i acc, __m128i v, __m128i key) {
    __m128i k = _mm_xor_si128(v, key);
    __m128i prod = _mm_mul_epu32(k, _mm_srli_epi64(k, 32));
    return _mm_add_epi64(acc, _mm_add_epi64(_mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2)), prod));
}

/* The object's end within a 16-byte block (1..16), or 0: the block's quotes, backslashes
 * and brackets ([ ] are { } without 0x20) handed to rv_tj_nest_block. */
static inline int rv_tj_block_sse2(rv_tj_nest *st, __m128i v, uint32_t valid) {
    __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
    return rv_tj_nest_block(st, (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('"'))) & valid,
                            (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))) & valid,
                            (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(folded, _mm_set1_epi8('{'))) & valid,
                            (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(folded, _mm_set1_epi8('}'))) & valid, 16);
}

/* rv_tj_object_span_portable, 16 bytes per step (SSE2 is in every x86-64 CPU), hashing
 * each piece as it is read (piece j of a block into accumulators 2j, 2j + 1). */
static inline int64_t rv_tj_object_span_sse2(const char *text, int64_t n, int64_t i, uint64_t *hash) {
    __m128i acc[4], key[4];
    for (int j = 0; j < 4; j++) {
        acc[j] = _mm_setzero_si128();
        key[j] = _mm_loadu_si128((const __m128i *)(rv_tj_hkey + 2 * j));
    }
    rv_tj_nest st = {0, 0, 0};
    uint8_t tail[16];
    int j = 0;
    for (int64_t at = i; at < n; at += 16, j = (j + 1) & 3) {
        __m128i v = _mm_loadu_si128((const __m128i *)rv_block((const uint8_t *)text, n, at, 16, tail));
        int end = rv_tj_block_sse2(&st, v, rv_valid32(n, at, 16));
        if (end) v = rv_tj_keep(v, end);
        acc[j] = rv_tj_hash_add128(acc[j], v, key[j]);
        if (end) {
            uint64_t a[8];
            for (int k = 0; k < 4; k++) _mm_storeu_si128((__m128i *)(a + 2 * k), acc[k]);
            *hash = rv_tj_hash_end(a, at + end - i);
            return at + end;
        }
    }
    return -1;
}
#endif

#if defined(RV_X86) && defined(__SSE2__)
#define RV_TJ_SPAN_VECTOR 1
/* The same, 32 bytes per step (AVX2): a block's two halves into two accumulator
 * vectors, the second half's words left out when the object ends in the first. */
RV_TARGET_AVX2 static RV_ALWAYS_INLINE int rv_tj_step_avx2(rv_tj_nest *st, const uint8_t *s, int64_t n, int64_t i, __m256i *acc,
                                            __m256i key) {
    const __m256i index = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
                                           20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
    uint8_t tail[32];
    __m256i v = _mm256_loadu_si256((const __m256i *)rv_block(s, n, i, 32, tail));
    uint32_t valid = rv_valid32(n, i, 32);
    __m256i folded = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
    int end = rv_tj_nest_block(
        st, (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('"'))) & valid,
        (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('\\'))) & valid,
        (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(folded, _mm256_set1_epi8('{'))) & valid,
        (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(folded, _mm256_set1_epi8('}'))) & valid, 32);
    if (end) v = _mm256_and_si256(v, _mm256_cmpgt_epi8(_mm256_set1_epi8((char)end), index));
    __m256i k = _mm256_xor_si256(v, key);
    __m256i add = _mm256_add_epi64(_mm256_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2)),
                                   _mm256_mul_epu32(k, _mm256_srli_epi64(k, 32)));
    if (end && end <= 16) add = _mm256_blend_epi32(add, _mm256_setzero_si256(), 0xF0);
    *acc = _mm256_add_epi64(*acc, add);
    return end;
}

RV_TARGET_AVX2 static int64_t rv_tj_object_span_avx2(const char *text, int64_t n, int64_t i, uint64_t *hash) {
    const uint8_t *s = (const uint8_t *)text;
    const __m256i key0 = _mm256_loadu_si256((const __m256i *)rv_tj_hkey);
    const __m256i key1 = _mm256_loadu_si256((const __m256i *)(rv_tj_hkey + 4));
    __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
    int64_t open = i;
    rv_tj_nest st = {0, 0, 0};
    for (; i < n; i += 64) {
        int end = rv_tj_step_avx2(&st, s, n, i, &acc0, key0), at = 0;
        if (!end && i + 32 < n) {
            end = rv_tj_step_avx2(&st, s, n, i + 32, &acc1, key1);
            at = 32;
        }
        if (end) {
            uint64_t a[8];
            _mm256_storeu_si256((__m256i *)a, acc0);
            _mm256_storeu_si256((__m256i *)(a + 4), acc1);
            *hash = rv_tj_hash_end(a, i + at + end - open);
            return i + at + end;
        }
    }
    return -1;
}

/* The same, 64 bytes per step (AVX-512 BW): one block, one accumulator vector. */
RV_TARGET_AVX512 static int64_t rv_tj_object_span_avx512(const char *text, int64_t n, int64_t i, uint64_t *hash) {
    const uint8_t *s = (const uint8_t *)text;
    const __m512i quote = _mm512_set1_epi8('"'), bslash = _mm512_set1_epi8('\\'), lower = _mm512_set1_epi8(0x20);
    const __m512i open_b = _mm512_set1_epi8('{'), close_b = _mm512_set1_epi8('}');
    const __m512i key = _mm512_loadu_si512((const void *)rv_tj_hkey);
    __m512i acc = _mm512_setzero_si512();
    int64_t open = i;
    rv_tj_nest st = {0, 0, 0};
    for (; i < n; i += 64) {
        /* a masked load reads no byte past the text (and faults on none) */
        uint64_t valid = n - i >= 64 ? ~0ULL : (1ULL << (n - i)) - 1;
        __m512i v = _mm512_maskz_loadu_epi8(valid, s + i);
        __m512i folded = _mm512_or_si512(v, lower);
        int end = rv_tj_nest_block(&st, _mm512_cmpeq_epi8_mask(v, quote), _mm512_cmpeq_epi8_mask(v, bslash),
                                   _mm512_cmpeq_epi8_mask(folded, open_b), _mm512_cmpeq_epi8_mask(folded, close_b),
                                   64);
        __mmask8 words = 0xFF;
        if (end) {
            v = _mm512_maskz_mov_epi8(end == 64 ? ~0ULL : (1ULL << end) - 1, v);
            words = (__mmask8)((1u << (2 * ((end + 15) >> 4))) - 1);
        }
        __m512i k = _mm512_xor_si512(v, key);
        __m512i add = _mm512_add_epi64(_mm512_shuffle_epi32(v, _MM_PERM_BADC),
                                       _mm512_mul_epu32(k, _mm512_srli_epi64(k, 32)));
        acc = _mm512_mask_add_epi64(acc, words, acc, add);
        if (end) {
            uint64_t a[8];
            _mm512_storeu_si512((void *)a, acc);
            *hash = rv_tj_hash_end(a, i + end - open);
            return i + end;
        }
    }
    return -1;
}
#endif

static inline int64_t rv_tj_object_span(const char *text, int64_t n, int64_t i, uint64_t *hash) {
#ifdef RV_TJ_SPAN_VECTOR
    if (rv_isa >= RV_ISA_AVX512) return rv_tj_object_span_avx512(text, n, i, hash);
    if (rv_isa >= RV_ISA_AVX2) return rv_tj_object_span_avx2(text, n, i, hash);
#endif
#if defined(__SSE2__)
    if (rv_isa != RV_ISA_PORTABLE) return rv_tj_object_span_sse2(text, n, i, hash);
#endif
    return rv_tj_object_span_portable(text, n, i, hash);
}

/* One call object at c->s[c->i] == '{'. */
static int rv_tj_call(rv_tjson *t, rv_jcur *c, const char *name_key, int64_t name_len, const char *args_key,
                      int64_t args_len, int args_required) {
    int have_name = 0, have_args = 0, r;
    int64_t kstart, klen;
    const char *key;
    static const char slot[4] = {0, 0, 0, 0};
    /* 4 bytes before the arguments, for the caller to write the name id into: the call's
     * key (name id, canonical arguments) is then one span, interned without a copy */
    if (rv_tbuf_put(&t->args, slot, 4) != 0) return RV_TJ_NOMEM;
    c->i++;
    rv_json_ws(c);
    if (c->i < c->n && c->s[c->i] == '}') return RV_TJ_FALLBACK; /* no name */
    for (;;) {
        if (c->i >= c->n || c->s[c->i] != '"') return RV_TJ_FALLBACK;
        r = rv_tj_raw_string(t, c, &kstart, &klen);
        if (r == RV_TJ_OK) {
            key = c->s + kstart;
        } else if (r == 1) {
            t->key.n = 0;
            if ((r = rv_tj_string(t, c, &t->key)) != RV_TJ_OK) return r;
            key = t->key.data;
            klen = t->key.n;
        } else {
            return r;
        }
        int is_name = klen == name_len && memcmp(key, name_key, (size_t)klen) == 0;
        int is_args = klen == args_len && memcmp(key, args_key, (size_t)klen) == 0;
        rv_json_ws(c);
        if (c->i >= c->n || c->s[c->i] != ':') return RV_TJ_FALLBACK;
        c->i++;
        rv_json_ws(c);
        if (c->i >= c->n) return RV_TJ_FALLBACK;
        if (is_name) {
            if (have_name || c->s[c->i] != '"') return RV_TJ_FALLBACK; /* duplicate, or not a string */
            r = rv_tj_raw_string(t, c, &kstart, &klen);
            if (r == RV_TJ_OK) {
                if (rv_tbuf_put(&t->names, c->s + kstart, klen) != 0) return RV_TJ_NOMEM;
            } else if (r == 1) {
                if ((r = rv_tj_string(t, c, &t->names)) != RV_TJ_OK) return r;
            } else {
                return r;
            }
            have_name = 1;
        } else if (is_args) {
            if (have_args) return RV_TJ_FALLBACK;
            char ch = c->s[c->i];
            if (ch == '{') {
                if ((r = rv_tj_object(t, c, &t->args, 1)) != RV_TJ_OK) return r;
            } else if (ch == 'n') {
                if ((r = rv_tj_literal(c, "null", 4)) != RV_TJ_OK) return r;
                if (rv_tbuf_put(&t->args, "null", 4) != 0) return RV_TJ_NOMEM;
            } else {
                return RV_TJ_FALLBACK; /* arguments that are not an object */
            }
            have_args = 1;
        } else if (!rv_json_skip(c, 1, t->check_utf8)) {
            return RV_TJ_FALLBACK; /* another key's value: checked and skipped */
        }
        rv_json_ws(c);
        if (c->i >= c->n) return RV_TJ_FALLBACK;
        if (c->s[c->i] == ',') { c->i++; rv_json_ws(c); continue; }
        if (c->s[c->i] == '}') { c->i++; break; }
        return RV_TJ_FALLBACK;
    }
    if (!have_name) return RV_TJ_FALLBACK;
    if (!have_args) {
        if (args_required) return RV_TJ_FALLBACK;
        if (rv_tbuf_put(&t->args, "null", 4) != 0) return RV_TJ_NOMEM;
    }
    return rv_tj_push_call(t) == 0 ? RV_TJ_OK : RV_TJ_NOMEM;
}

/* The trajectory's list syntax around its calls: c at the '[' (after whitespace), each
 * call handed to visit(t, ctx, c) at its '{' (it moves c past the call).  Whitespace,
 * commas and the closing ']' are checked here; anything else is RV_TJ_FALLBACK. */
typedef int (*rv_tj_visit_fn)(rv_tjson *t, void *ctx, rv_jcur *c);

static int rv_tj_list(rv_tjson *t, rv_jcur *c, rv_tj_visit_fn visit, void *ctx) {
    int r;
    rv_json_ws(c);
    if (c->i >= c->n || c->s[c->i] != '[') return RV_TJ_FALLBACK;
    c->i++;
    rv_json_ws(c);
    if (c->i < c->n && c->s[c->i] == ']') {
        c->i++;
    } else {
        for (;;) {
            if (c->i >= c->n || c->s[c->i] != '{') return RV_TJ_FALLBACK;
            if ((r = visit(t, ctx, c)) != RV_TJ_OK) return r;
            rv_json_ws(c);
            if (c->i >= c->n) return RV_TJ_FALLBACK;
            if (c->s[c->i] == ',') { c->i++; rv_json_ws(c); continue; }
            if (c->s[c->i] == ']') { c->i++; break; }
            return RV_TJ_FALLBACK;
        }
    }
    rv_json_ws(c);
    return c->i == c->n ? RV_TJ_OK : RV_TJ_FALLBACK;
}

typedef struct {
    const char *name_key, *args_key;
    int64_t name_len, args_len;
    int args_required;
    const rv_traj_memo *memo;
} rv_tj_opts;

static int rv_tj_visit_read(rv_tjson *t, void *ctx, rv_jcur *c) {
    const rv_tj_opts *o = (const rv_tj_opts *)ctx;
    return rv_tj_call(t, c, o->name_key, o->name_len, o->args_key, o->args_len, o->args_required);
}

/* Pass 1 with a memo: each call's span and hash appended to the group's spans, its memo
 * slot prefetched, so the row's cache misses overlap (and, when the rows of a group are
 * found ahead of reading them, those of the rows before it). */
typedef struct {
    rv_tjspans *spans;
    const rv_traj_memo *memo;
} rv_tj_span_ctx;

static int rv_tj_visit_span(rv_tjson *t, void *ctx, rv_jcur *c) {
    const rv_tj_span_ctx *x = (const rv_tj_span_ctx *)ctx;
    uint64_t h;
    int64_t open = c->i, end = rv_tj_object_span(c->s, c->n, open, &h);
    (void)t;
    if (end < 0) return RV_TJ_FALLBACK;
    rv_tjspan span = {open, end, h};
    if (rv_buf_push(x->spans, span) != 0) return RV_TJ_NOMEM;
#if defined(__GNUC__)
    const rv_traj_table *m = &x->memo->raw;
    __builtin_prefetch(&m->slots[h & (uint64_t)(m->nslots - 1)]);
#endif
    c->i = end;
    return RV_TJ_OK;
}

/* Pass 1 of the trajectory s[0:n]: its calls' spans appended to g.  Reads nothing but s
 * (and prefetches), so it may run ahead of the rows before it.  RV_TJ_OK; otherwise g is
 * left as it was and the row is for the caller's other path. */
static int rv_tjson_spans(rv_tjspans *g, const char *s, int64_t n, const rv_traj_memo *memo) {
    rv_jcur c = {s, n, 0};
    rv_tj_span_ctx x = {g, memo};
    int64_t mark = g->n;
    int r = rv_tj_list(NULL, &c, rv_tj_visit_span, &x);
    if (r != RV_TJ_OK) g->n = mark;
    return r;
}

/* The texts of the memo entries that calls g[from:to) may be, on their way into the cache
 * for the comparisons (their slots were prefetched by rv_tjson_spans). */
static inline void rv_tjson_prefetch_texts(const rv_tjspans *g, int64_t from, int64_t to, const rv_traj_memo *memo) {
#if defined(__GNUC__)
    const rv_traj_table *m = &memo->raw;
    for (int64_t k = from; k < to; k++) {
        const rv_traj_slot *sl = &m->slots[g->data[k].hash & (uint64_t)(m->nslots - 1)];
        if (sl->id >= 0 && sl->hash == g->data[k].hash) __builtin_prefetch(m->arena + sl->off);
    }
#else
    (void)g; (void)from; (void)to; (void)memo;
#endif
}

/* Pass 2 of the trajectory s[0:n] whose calls' spans are g[from:to) (rv_tjson_spans):
 * calls appended to t (its counts are reset first).  A call whose text the memo knows is
 * not read: t->memo[k] holds what the memo gave; every call read in full has its text's
 * span and hash in raw_start/raw_end/raw_hash, for the caller to remember once it has
 * ids. */
static int rv_tjson_read_spans(rv_tjson *t, const char *s, int64_t n, const char *name_key, int64_t name_len,
                               const char *args_key, int64_t args_len, int args_required, const rv_traj_memo *memo,
                               const rv_tjspans *g, int64_t from, int64_t to) {
    rv_jcur c = {s, n, 0};
    int r;
    t->names.n = t->args.n = t->ncalls = 0;
    t->mem_n = 0;
    t->key.n = 0;
    for (int64_t k = from; k < to; k++) {
        int64_t open = g->data[k].start, end = g->data[k].end;
        uint64_t h = g->data[k].hash;
        uint64_t v = rv_traj_memo_find(memo, s + open, end - open, h);
        if (v != RV_TRAJ_MEMO_MISS) {
            if (rv_tj_push_call(t) != 0) return RV_TJ_NOMEM;
            t->memo[t->ncalls - 1] = v;
            continue;
        }
        c.i = open;
        if ((r = rv_tj_call(t, &c, name_key, name_len, args_key, args_len, args_required)) != RV_TJ_OK) return r;
        if (c.i != end) return RV_TJ_FALLBACK;
        t->raw_start[t->ncalls - 1] = open;
        t->raw_end[t->ncalls - 1] = end;
        t->raw_hash[t->ncalls - 1] = h;
    }
    return RV_TJ_OK;
}

/* One trajectory from JSON text s[0:n]: calls appended to t (its counts are reset first);
 * with a memo, both passes above, one after the other. */
static int rv_tjson_trajectory(rv_tjson *t, const char *s, int64_t n, const char *name_key, int64_t name_len,
                               const char *args_key, int64_t args_len, int args_required,
                               const rv_traj_memo *memo) {
    int r;
    if (!memo) {
        rv_jcur c = {s, n, 0};
        rv_tj_opts o = {name_key, args_key, name_len, args_len, args_required, memo};
            t->names.n = t->args.n = t->ncalls = 0;
        t->mem_n = 0;
        t->key.n = 0;
        return rv_tj_list(t, &c, rv_tj_visit_read, &o);
    }
    t->row_spans.n = 0;
    if ((r = rv_tjson_spans(&t->row_spans, s, n, memo)) != RV_TJ_OK) return r;
    rv_tjson_prefetch_texts(&t->row_spans, 0, t->row_spans.n, memo);
    return rv_tjson_read_spans(t, s, n, name_key, name_len, args_key, args_len, args_required, memo, &t->row_spans, 0,
                               t->row_spans.n);
}

#endif
