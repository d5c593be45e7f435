/* Exact native twins of two text normalizers, run over CPython's own string
 * storage (PEP 393: `kind` 1, 2 or 4 bytes per code point, `len` in code
 * points).  No Python objects are touched and nothing here needs the GIL.
 *
 *   rv_sacrebleu_13a   sacrebleu 2.6.0: Tokenizer13a()(line.rstrip()).split()
 *                      (what BLEU._preprocess_segment does after the optional
 *                      lower(), which the caller does in Python beforehand)
 *   rv_squad_normalize SQuAD v1.1 normalize_answer(s).split() for an s that
 *                      the caller has ALREADY lowercased (s.lower() in Python)
 *   rv_utf8_encode     code points -> UTF-8, lone surrogates as 3 bytes
 *                      (Python's "surrogatepass")
 *
 * Both tokenizers append the tokens' code points to `out_cps` and, per token,
 * its end offset (absolute index into out_cps->data) to `out_ends`; a token
 * starts where the previous one ended (the first one at out_cps->n as it was
 * on entry).  Tokens are never empty.  They return the number of tokens
 * appended (>= 0), -1 when out of memory (out_cps->n and out_ends->n are then
 * restored to their values on entry) or -2 for a bad kind or length.
 * Work buffers are scratch: their contents are clobbered, their capacity kept
 * for the next call.  Free every buffer with rv_buf_free.
 *
 * This header includes <Python.h>, only for Py_UNICODE_ISALNUM (the Unicode
 * database lookup that Python's `re` uses for \w and str.isalnum()): a pure
 * table lookup, safe without the GIL.  Define RV_MT_ISALNUM(ch) before
 * including this header to use another predicate instead of Python.h.
 */
#ifndef RESPEVAL_MT_TOKENIZE_H
#define RESPEVAL_MT_TOKENIZE_H

#ifndef RV_MT_ISALNUM
#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>
#define RV_MT_ISALNUM(ch) Py_UNICODE_ISALNUM((Py_UCS4)(ch))
#endif

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"

/* str.isspace() for one code point: what str.split(), str.strip() and
 * str.rstrip() (without arguments) treat as whitespace.  Generated with
 *   python3 -c "import sys; print([hex(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()])"
 * (CPython 3.11, Unicode 14; the set is unchanged since Unicode 6.3 / Python 3.4):
 * 0x9-0xd, 0x1c-0x20, 0x85, 0xa0, 0x1680, 0x2000-0x200a, 0x2028, 0x2029,
 * 0x202f, 0x205f, 0x3000. */
static inline int rv_is_space(uint32_t c) {
    if (c <= 0x20) return (c - 0x09u) <= (0x0Du - 0x09u) || c >= 0x1C;
    if (c < 0x1680) return c == 0x85 || c == 0xA0;
    if (c < 0x2000) return c == 0x1680;
    if (c <= 0x200A) return 1;
    return c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/* Code point i of a PEP 393 string of the given kind. */
static inline uint32_t rv_cp_at(int kind, const void *data, int64_t i) {
    if (kind == 1) return ((const uint8_t *)data)[i];
    if (kind == 2) return ((const uint16_t *)data)[i];
    return ((const uint32_t *)data)[i];
}

/* ------------------------------------------------------------------------- */
/* sacreBLEU 13a                                                             */
/* ------------------------------------------------------------------------- */

/* str.replace(pat, repl) with a single-code-point repl: leftmost
 * non-overlapping occurrences, scanning resumes after each one. */
static inline int rv_mt_replace1(const uint32_t *s, int64_t n, const char *pat, int64_t m,
                                 uint32_t repl, rv_u32buf *dst) {
    int64_t o = 0, i = 0;
    if (rv_buf_reserve(dst, n)) return -1;
    while (i < n) {
        if (s[i] == (uint32_t)(unsigned char)pat[0] && n - i >= m) {
            int64_t k = 1;
            while (k < m && s[i + k] == (uint32_t)(unsigned char)pat[k]) k++;
            if (k == m) {
                dst->data[o++] = repl;
                i += m;
                continue;
            }
        }
        dst->data[o++] = s[i++];
    }
    dst->n = o;
    return 0;
}

/* The first regex's class [\{-\~\[-\` -\&\(-\+\:-\@\/]: ' ' ! " # $ % & ( ) * +
 * / : ; < = > ? @ [ \ ] ^ _ ` { | } ~ (every ASCII symbol but ' , - . and
 * digits/letters; space itself is in it).  Bit c of the mask for c < 128. */
static inline int rv_13a_sym(uint32_t c) {
    static const uint64_t lo = /* 0x20-0x26, 0x28-0x2B, 0x2F, 0x3A-0x3F */
        (0x7FULL << 0x20) | (0xFULL << 0x28) | (1ULL << 0x2F) | (0x3FULL << 0x3A);
    static const uint64_t hi = /* 0x40, 0x5B-0x60, 0x7B-0x7E (bit c - 64) */
        (1ULL << 0) | (0x3FULL << (0x5B - 64)) | (0xFULL << (0x7B - 64));
    if (c < 64) return (int)((lo >> c) & 1);
    if (c < 128) return (int)((hi >> (c - 64)) & 1);
    return 0;
}

static inline int rv_13a_digit(uint32_t c) { return (c - '0') < 10u; }   /* [0-9]: ASCII only */
static inline int rv_13a_dotcomma(uint32_t c) { return c == '.' || c == ','; }

/* Step 1: rstrip(), then replace('<skipped>', ''), replace('-\n', ''),
 * replace('\n', ' ') -- the last two fused: each pass works on the previous
 * pass's output, and since '-' != '\n' the occurrences of "-\n" are exactly the
 * '\n's whose predecessor in the <skipped>-free text is a '-' (tracked by
 * `dash`, which is not the same as "the last char written is '-'": in "--\n\n"
 * only the middle pair goes, giving "- "). */
#define RV_13A_STEP1(T)                                                         \
    do {                                                                        \
        const T *src = (const T *)data;                                         \
        int64_t e = len;                                                        \
        while (e > 0 && rv_is_space(src[e - 1])) e--;                           \
        for (int64_t i = 0; i < e;) {                                           \
            uint32_t c = src[i];                                                \
            if (c == '<' && e - i >= 9 &&                                       \
                src[i + 1] == 's' && src[i + 2] == 'k' && src[i + 3] == 'i' &&  \
                src[i + 4] == 'p' && src[i + 5] == 'p' && src[i + 6] == 'e' &&  \
                src[i + 7] == 'd' && src[i + 8] == '>') {                       \
                i += 9;                                                         \
                continue;                                                       \
            }                                                                   \
            i++;                                                                \
            if (c == '\n') {                                                    \
                if (dash) o--;                                                  \
                else d[o++] = ' ';                                              \
                dash = 0;                                                       \
                continue;                                                       \
            }                                                                   \
            dash = c == '-';                                                    \
            amp |= c == '&';                                                    \
            d[o++] = c;                                                         \
        }                                                                       \
    } while (0)

/* The padding and the four regex substitutions, fused into one pass.
 *
 * Each re.sub here matches a fixed two-character window (or one character)
 * and only inserts spaces, so each is exactly a left-to-right transducer with
 * one character of lookahead: hold the pending character; when the next one
 * arrives, either the pair matches (emit the replacement, hold nothing:
 * scanning resumes after the match) or it does not (emit the pending
 * character, hold the new one).  Stage k's output is stage k+1's input, spaces
 * included (they take part in the later matches), and the last stage feeds
 * str.split().  Characters reach out->data only from the split stage, which
 * drops whitespace, so out needs room for just the non-space characters.
 *   stage 1  ([\{-\~\[-\` -\&\(-\+\:-\@\/])  -> " \1 "  (one character)
 *   stage 2  ([^0-9])([\.,])                 -> "\1 \2 "
 *   stage 3  ([\.,])([^0-9])                 -> " \1 \2"
 *   stage 4  ([0-9])(-)                      -> "\1 \2 "
 *   stage 5  str.split()
 */
typedef struct {
    uint32_t p2, p3, p4;   /* pending character of stages 2-4 ... */
    int h2, h3, h4;        /* ... and whether there is one */
    int in_tok, err;
    /* Tercom (TER's normaliser) adds two stages: "'s " -> " 's " after stage 1 (its
     * pending "'" or "'s" counted by ns), and a per-character stage before the split
     * (CJK characters padded with spaces, punctuation deleted) */
    int tercom, ns, asian_pad, no_punct, asian;
    uint32_t *out;         /* token characters, capacity checked by the caller */
    int64_t o, count;
    rv_i64buf *ends;
} rv_13a_stream;

static inline void rv_13a_feed5(rv_13a_stream *st, uint32_t c) {
    if (rv_is_space(c)) {
        if (st->in_tok) {
            if (rv_buf_push(st->ends, st->o)) st->err = 1;
            st->count++;
            st->in_tok = 0;
        }
    } else {
        st->out[st->o++] = c;
        st->in_tok = 1;
    }
}

/* Tercom's character classes (sacrebleu/tokenizers/tokenizer_ter.py). */
static inline int rv_tercom_punct(uint32_t c) {  /* [.,?:;!"()] */
    return c == '.' || c == ',' || c == '?' || c == ':' || c == ';' || c == '!' || c == '"' || c == '(' || c == ')';
}
static inline int rv_tercom_asian_punct(uint32_t c) {
    /* [\u3001\u3002\u3008-\u3011\u3014-\u301f\uff61-\uff65\u30fb] and the full-width
     * [\uff0e\uff0c\uff1f\uff1a\uff1b\uff01\uff02\uff08\uff09] */
    return c == 0x3001 || c == 0x3002 || (c >= 0x3008 && c <= 0x3011) || (c >= 0x3014 && c <= 0x301F) ||
           (c >= 0xFF61 && c <= 0xFF65) || c == 0x30FB || c == 0xFF0E || c == 0xFF0C || c == 0xFF1F ||
           c == 0xFF1A || c == 0xFF1B || c == 0xFF01 || c == 0xFF02 || c == 0xFF08 || c == 0xFF09;
}
static inline int rv_tercom_asian(uint32_t c) {
    /* every class Tercom pads with spaces in its Asian rules (the kana-run rules can
     * only match a line starting with kana, which the padding never leaves) */
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x31C0 && c <= 0x31EF) ||
           (c >= 0x2E80 && c <= 0x2EFF) || (c >= 0x3300 && c <= 0x33FF) || (c >= 0xF900 && c <= 0xFAFF) ||
           (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0x3200 && c <= 0x3F22) || rv_tercom_asian_punct(c);
}

/* Tercom's per-character stage: the Asian padding (normalized), then the removal of
 * punctuation (no_punct), then the split. */
static inline void rv_tercom_post(rv_13a_stream *st, uint32_t c) {
    int pad = st->asian_pad && rv_tercom_asian(c);
    int drop = st->no_punct && (rv_tercom_punct(c) || (st->asian && rv_tercom_asian_punct(c)));
    if (pad) rv_13a_feed5(st, ' ');
    if (!drop) rv_13a_feed5(st, c);
    if (pad) rv_13a_feed5(st, ' ');
}

/* What stage 4 emits goes to the split, through Tercom's per-character stage. */
static inline void rv_13a_out(rv_13a_stream *st, uint32_t c) {
    if (st->tercom) rv_tercom_post(st, c);
    else rv_13a_feed5(st, c);
}

static inline void rv_13a_feed4(rv_13a_stream *st, uint32_t c) {
    if (!st->h4) {
        st->p4 = c;
        st->h4 = 1;
    } else if (rv_13a_digit(st->p4) && c == '-') {
        rv_13a_out(st, st->p4); rv_13a_out(st, ' '); rv_13a_out(st, '-'); rv_13a_out(st, ' ');
        st->h4 = 0;
    } else {
        rv_13a_out(st, st->p4);
        st->p4 = c;
    }
}

static inline void rv_13a_feed3(rv_13a_stream *st, uint32_t c) {
    if (!st->h3) {
        st->p3 = c;
        st->h3 = 1;
    } else if (rv_13a_dotcomma(st->p3) && !rv_13a_digit(c)) {
        rv_13a_feed4(st, ' '); rv_13a_feed4(st, st->p3); rv_13a_feed4(st, ' '); rv_13a_feed4(st, c);
        st->h3 = 0;
    } else {
        rv_13a_feed4(st, st->p3);
        st->p3 = c;
    }
}

static inline void rv_13a_feed2(rv_13a_stream *st, uint32_t c) {
    if (!st->h2) {
        st->p2 = c;
        st->h2 = 1;
    } else if (!rv_13a_digit(st->p2) && rv_13a_dotcomma(c)) {
        rv_13a_feed3(st, st->p2); rv_13a_feed3(st, ' '); rv_13a_feed3(st, c); rv_13a_feed3(st, ' ');
        st->h2 = 0;
    } else {
        rv_13a_feed3(st, st->p2);
        st->p2 = c;
    }
}

/* Tercom's "'s " -> " 's " (re.sub of a 3-character literal: leftmost, non-overlapping). */
static inline void rv_tercom_s(rv_13a_stream *st, uint32_t c) {
    if (st->ns == 0) {
        if (c == '\'') st->ns = 1;
        else rv_13a_feed2(st, c);
    } else if (st->ns == 1) {
        if (c == 's') { st->ns = 2; return; }
        rv_13a_feed2(st, '\'');
        st->ns = 0;
        rv_tercom_s(st, c);
    } else if (c == ' ') {
        rv_13a_feed2(st, ' '); rv_13a_feed2(st, '\''); rv_13a_feed2(st, 's'); rv_13a_feed2(st, ' ');
        st->ns = 0;
    } else {
        rv_13a_feed2(st, '\'');
        rv_13a_feed2(st, 's');
        st->ns = 0;
        rv_tercom_s(st, c);
    }
}

static inline void rv_13a_feed1(rv_13a_stream *st, uint32_t c) {
    if (rv_13a_sym(c)) {
        if (st->tercom) { rv_tercom_s(st, ' '); rv_tercom_s(st, c); rv_tercom_s(st, ' '); }
        else { rv_13a_feed2(st, ' '); rv_13a_feed2(st, c); rv_13a_feed2(st, ' '); }
    } else if (st->tercom) {
        rv_tercom_s(st, c);
    } else {
        rv_13a_feed2(st, c);
    }
}

/* End of input: flush each stage's pending characters, in stage order. */
static inline void rv_13a_finish(rv_13a_stream *st) {
    if (st->ns) {
        rv_13a_feed2(st, '\'');
        if (st->ns == 2) rv_13a_feed2(st, 's');
        st->ns = 0;
    }
    if (st->h2) { st->h2 = 0; rv_13a_feed3(st, st->p2); }
    if (st->h3) { st->h3 = 0; rv_13a_feed4(st, st->p3); }
    if (st->h4) { st->h4 = 0; rv_13a_out(st, st->p4); }
    if (st->in_tok) {
        if (rv_buf_push(st->ends, st->o)) st->err = 1;
        st->count++;
        st->in_tok = 0;
    }
}

/* Tokens of sacrebleu 2.6.0's Tokenizer13a()(line.rstrip()).split(), i.e.
 * the segment as BLEU sees it (lowercase in Python first if wanted). */
static inline int64_t rv_sacrebleu_13a(int kind, const void *data, int64_t len,
                                       rv_u32buf *work1, rv_u32buf *work2,
                                       rv_u32buf *out_cps, rv_i64buf *out_ends) {
    const int64_t out_n0 = out_cps->n, ends_n0 = out_ends->n;
    rv_u32buf *a = work1, *b = work2, *t;
    int64_t n, o = 0, count;
    int dash = 0, amp = 0;
    uint32_t *d;
    const uint32_t *s;

    if ((kind != 1 && kind != 2 && kind != 4) || len < 0 || len > RV_MAX_ELEMS) return -2;
    if (len > 0 && !data) return -2;

    /* rstrip, <skipped>, -\n, \n  ->  a */
    if (rv_buf_reserve(a, len)) goto oom;
    d = a->data;
    if (kind == 1) RV_13A_STEP1(uint8_t);
    else if (kind == 2) RV_13A_STEP1(uint16_t);
    else RV_13A_STEP1(uint32_t);
    a->n = o;

    /* HTML entities, four sequential str.replace passes (only if '&' occurs:
     * otherwise none of them can match).  Order matters: "&amp;lt;" -> "&lt;"
     * -> "<", but "&amp;quot;" -> "&quot;" (quot was already done) and
     * "&amp;amp;" -> "&amp;" (one pass never rescans its own output). */
    if (amp) {
        static const char *const pats[4] = {"&quot;", "&amp;", "&lt;", "&gt;"};
        static const int64_t plen[4] = {6, 5, 4, 4};
        static const uint32_t repl[4] = {'"', '&', '<', '>'};
        for (int k = 0; k < 4; k++) {
            if (rv_mt_replace1(a->data, a->n, pats[k], plen[k], repl[k], b)) goto oom;
            t = a; a = b; b = t;
        }
    }

    /* f' {line} ', then the four regex substitutions and split() (the pipeline
     * above), one word at a time: stage 1 pads every symbol with spaces, so each
     * symbol is a token and the rest falls into words (runs without whitespace or
     * symbol) that stages 2-4 see between spaces.  Stages 2-4 only act around '.',
     * ',' and '-', and a space can neither complete one of their matches nor carry
     * one over (it is no digit, '.' or ','), so a word without those three
     * characters is one token as it is, and a word with them gives the tokens of
     * " word " streamed through stages 2-5 alone. */
    n = a->n;
    s = a->data;
    if (rv_buf_reserve(out_cps, out_cps->n + n)) goto oom;
    {
        rv_13a_stream st;
        memset(&st, 0, sizeof st);
        st.out = out_cps->data;
        st.o = out_cps->n;
        st.ends = out_ends;
        for (int64_t i = 0; i < n;) {
            uint32_t c = s[i];
            if (rv_is_space(c)) { i++; continue; }
            int64_t j = i;
            int special = 0;
            if (rv_13a_sym(c)) {
                j = i + 1;
            } else {
                while (j < n && !rv_13a_sym(s[j]) && !rv_is_space(s[j])) {
                    special |= s[j] == '.' || s[j] == ',' || s[j] == '-';
                    j++;
                }
            }
            if (!special) {  /* one token, as it is */
                for (int64_t k = i; k < j; k++) st.out[st.o++] = s[k];
                if (rv_buf_push(st.ends, st.o)) goto oom;
                st.count++;
            } else {
                rv_13a_feed2(&st, ' ');
                for (int64_t k = i; k < j; k++) rv_13a_feed2(&st, s[k]);
                rv_13a_feed2(&st, ' ');
                rv_13a_finish(&st);
                if (st.err) goto oom;
            }
            i = j;
        }
        out_cps->n = st.o;
        count = st.count;
    }
    return count;

oom:
    out_cps->n = out_n0;
    out_ends->n = ends_n0;
    return -1;
}

#undef RV_13A_STEP1

/* ------------------------------------------------------------------------- */
/* Tercom (sacreBLEU's TER normaliser), on text the caller has lowercased      */
/* (unless case-sensitive)                                                    */
/* ------------------------------------------------------------------------- */

#define RV_TERCOM_NORMALIZED 1
#define RV_TERCOM_NO_PUNCT 2
#define RV_TERCOM_ASIAN 4

/* Tokens of sacrebleu 2.6.0's TercomTokenizer(**flags)(text.rstrip()).split()
 * for a `text` already lowercased (or case-sensitive), appended as in
 * rv_sacrebleu_13a.  Returns the count, -1 when out of memory, -2 for bad input. */
static inline int64_t rv_tercom(int kind, const void *data, int64_t len, int flags, rv_u32buf *work1,
                                rv_u32buf *work2, rv_u32buf *out_cps, rv_i64buf *out_ends) {
    const int64_t out_n0 = out_cps->n, ends_n0 = out_ends->n;
    rv_u32buf *a = work1, *b = work2, *t;
    int normalized = flags & RV_TERCOM_NORMALIZED;
    int64_t e = len, o = 0;
    int amp = 0;
    if ((kind != 1 && kind != 2 && kind != 4) || len < 0 || len > RV_MAX_ELEMS) return -2;
    if (len > 0 && !data) return -2;
    while (e > 0 && rv_is_space(rv_cp_at(kind, data, e - 1))) e--;  /* rstrip() */
    if (rv_buf_reserve(a, e)) goto oom;
    /* normalized: re.sub("\n-", "") then re.sub("\n", " "), fused */
    for (int64_t i = 0; i < e; i++) {
        uint32_t c = rv_cp_at(kind, data, i);
        if (normalized && c == '\n') {
            if (i + 1 < e && rv_cp_at(kind, data, i + 1) == '-') { i++; continue; }
            c = ' ';
        }
        amp |= c == '&';
        a->data[o++] = c;
    }
    a->n = o;
    if (normalized && amp) {  /* the four entities, one sequential replace each (as 13a) */
        static const char *const pats[4] = {"&quot;", "&amp;", "&lt;", "&gt;"};
        static const int64_t plen[4] = {6, 5, 4, 4};
        static const uint32_t repl[4] = {'"', '&', '<', '>'};
        for (int k = 0; k < 4; k++) {
            if (rv_mt_replace1(a->data, a->n, pats[k], plen[k], repl[k], b)) goto oom;
            t = a; a = b; b = t;
        }
    }
    if (rv_buf_reserve(out_cps, out_cps->n + a->n)) goto oom;
    {
        rv_13a_stream st;
        memset(&st, 0, sizeof st);
        st.out = out_cps->data;
        st.o = out_cps->n;
        st.ends = out_ends;
        st.tercom = 1;
        st.asian = (flags & RV_TERCOM_ASIAN) != 0;
        st.asian_pad = normalized && st.asian;
        st.no_punct = (flags & RV_TERCOM_NO_PUNCT) != 0;
        if (normalized) {  /* the Western rules on f" {text} ", then the per-character stage */
            rv_13a_feed1(&st, ' ');
            for (int64_t i = 0; i < a->n; i++) rv_13a_feed1(&st, a->data[i]);
            rv_13a_feed1(&st, ' ');
        } else {
            for (int64_t i = 0; i < a->n; i++) rv_tercom_post(&st, a->data[i]);
        }
        rv_13a_finish(&st);
        if (st.err) goto oom;
        out_cps->n = st.o;
        return st.count;
    }
oom:
    out_cps->n = out_n0;
    out_ends->n = ends_n0;
    return -1;
}

/* rv_tercom applied twice, the second time to the first pass's words joined by
 * spaces: what sacreBLEU does to a reference (it normalises references when it
 * caches them and again when it splits them). */
static inline int64_t rv_tercom_twice(int kind, const void *data, int64_t len, int flags, rv_u32buf *work1,
                                      rv_u32buf *work2, rv_u32buf *joined, rv_u32buf *out_cps, rv_i64buf *out_ends) {
    const int64_t out_n0 = out_cps->n, ends_n0 = out_ends->n;
    int64_t count = rv_tercom(kind, data, len, flags, work1, work2, out_cps, out_ends);
    if (count <= 0) return count;
    /* " ".join(words) of the first pass, then the second pass in its place */
    int64_t start = out_n0;
    joined->n = 0;
    if (rv_buf_reserve(joined, (out_cps->n - out_n0) + count)) goto oom;
    for (int64_t k = 0; k < count; k++) {
        int64_t end = out_ends->data[ends_n0 + k];
        if (k) joined->data[joined->n++] = ' ';
        for (int64_t i = start; i < end; i++) joined->data[joined->n++] = out_cps->data[i];
        start = end;
    }
    out_cps->n = out_n0;
    out_ends->n = ends_n0;
    return rv_tercom(4, joined->data, joined->n, flags, work1, work2, out_cps, out_ends);
oom:
    out_cps->n = out_n0;
    out_ends->n = ends_n0;
    return -1;
}

/* ------------------------------------------------------------------------- */
/* SQuAD v1.1 normalize_answer                                               */
/* ------------------------------------------------------------------------- */

/* ASCII string.punctuation: !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~ */
static inline int rv_squad_punct(uint32_t c) {
    static const uint64_t lo = /* 0x21-0x2F, 0x3A-0x3F */
        (0x7FFFULL << 0x21) | (0x3FULL << 0x3A);
    static const uint64_t hi = /* 0x40, 0x5B-0x60, 0x7B-0x7E (bit c - 64) */
        (1ULL << 0) | (0x3FULL << (0x5B - 64)) | (0xFULL << (0x7B - 64));
    if (c < 64) return (int)((lo >> c) & 1);
    if (c < 128) return (int)((hi >> (c - 64)) & 1);
    return 0;
}

/* Python re's Unicode \w: str.isalnum() or '_' (sre's SRE_UNI_IS_WORD). */
static inline int rv_re_word(uint32_t c) {
    if (c < 128)
        return (c - '0') < 10u || ((c | 0x20u) - 'a') < 26u || c == '_';
    return RV_MT_ISALNUM(c) ? 1 : 0;
}

/* Tokens of normalize_answer(s).split() where `data` holds s.lower():
 * remove_punc, then re.sub(r'\b(a|an|the)\b', ' ', ...) evaluated on the
 * punctuation-free text (leftmost, non-overlapping, alternatives tried in the
 * order a, an, the; \b looks at the un-substituted text), then split(). */
static inline int64_t rv_squad_normalize(int kind, const void *data, int64_t len,
                                         rv_u32buf *work, rv_u32buf *out_cps, rv_i64buf *out_ends) {
    const int64_t out_n0 = out_cps->n, ends_n0 = out_ends->n;
    int64_t n = 0, o, count = 0;
    int in_tok = 0;
    const uint32_t *s;

    if ((kind != 1 && kind != 2 && kind != 4) || len < 0 || len > RV_MAX_ELEMS) return -2;
    if (len > 0 && !data) return -2;

    /* remove_punc -> work */
    if (rv_buf_reserve(work, len)) goto oom;
#define RV_SQUAD_DEPUNCT(T)                                                     \
    do {                                                                        \
        const T *src = (const T *)data;                                         \
        uint32_t *dst = work->data;                                             \
        for (int64_t i = 0; i < len; i++) {                                     \
            uint32_t c = src[i];                                                \
            dst[n] = c;                                                         \
            n += !rv_squad_punct(c);                                            \
        }                                                                       \
    } while (0)
    if (kind == 1) RV_SQUAD_DEPUNCT(uint8_t);
    else if (kind == 2) RV_SQUAD_DEPUNCT(uint16_t);
    else RV_SQUAD_DEPUNCT(uint32_t);
#undef RV_SQUAD_DEPUNCT
    work->n = n;
    s = work->data;

    /* remove_articles + split, fused: a matched article is a separator */
    if (rv_buf_reserve(out_cps, out_cps->n + n)) goto oom;
    o = out_cps->n;
    for (int64_t i = 0; i < n;) {
        uint32_t c = s[i];
        int64_t m = 0;  /* length of an article matched at i */
        if ((c == 'a' || c == 't') && !(i > 0 && rv_re_word(s[i - 1]))) {
            /* \b at i holds (s[i] is a word char, s[i-1] is not) */
            if (c == 'a') {
                if (!(i + 1 < n && rv_re_word(s[i + 1]))) m = 1;
                else if (s[i + 1] == 'n' && !(i + 2 < n && rv_re_word(s[i + 2]))) m = 2;
            } else if (i + 2 < n && s[i + 1] == 'h' && s[i + 2] == 'e' &&
                       !(i + 3 < n && rv_re_word(s[i + 3]))) {
                m = 3;
            }
        }
        if (m || rv_is_space(c)) {
            if (in_tok) {
                if (rv_buf_push(out_ends, o)) goto oom;
                count++;
                in_tok = 0;
            }
            i += m ? m : 1;
        } else {
            out_cps->data[o++] = c;
            in_tok = 1;
            i++;
        }
    }
    if (in_tok) {
        if (rv_buf_push(out_ends, o)) goto oom;
        count++;
    }
    out_cps->n = o;
    return count;

oom:
    out_cps->n = out_n0;
    out_ends->n = ends_n0;
    return -1;
}

/* ------------------------------------------------------------------------- */
/* UTF-8                                                                     */
/* ------------------------------------------------------------------------- */

/* Bytes rv_utf8_encode will write for these code points (<= 4 * n). */
static inline int64_t rv_utf8_len(const uint32_t *cps, int64_t n) {
    int64_t bytes = 0;
    for (int64_t i = 0; i < n; i++) {
        uint32_t c = cps[i];
        bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    }
    return bytes;
}

/* Encodes code points (each < 0x110000, as in any str) to UTF-8; `out` must
 * hold rv_utf8_len(cps, n) bytes (4 * n always suffice).  Lone surrogates
 * U+D800-U+DFFF become 3-byte sequences, as Python's "surrogatepass".
 * Returns the number of bytes written. */
static inline int64_t rv_utf8_encode(const uint32_t *cps, int64_t n, char *out) {
    unsigned char *p = (unsigned char *)out;
    for (int64_t i = 0; i < n; i++) {
        uint32_t c = cps[i];
        if (c < 0x80) {
            *p++ = (unsigned char)c;
        } else if (c < 0x800) {
            *p++ = (unsigned char)(0xC0 | (c >> 6));
            *p++ = (unsigned char)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            *p++ = (unsigned char)(0xE0 | (c >> 12));
            *p++ = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
            *p++ = (unsigned char)(0x80 | (c & 0x3F));
        } else {
            *p++ = (unsigned char)(0xF0 | (c >> 18));
            *p++ = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
            *p++ = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
            *p++ = (unsigned char)(0x80 | (c & 0x3F));
        }
    }
    return (int64_t)(p - (unsigned char *)out);
}

/* ------------------------------------------------------------------------- */
/* chrF's inputs (sacreBLEU's CHRF).                                          */


/* The code points of the text, without whitespace unless keep_space
 * (''.join(text.split())), appended to out.  Returns the count, or -1. */
static inline int64_t rv_chrf_chars(int kind, const void *data, int64_t len, int keep_space,
                                    rv_u32buf *out) {
    if (rv_buf_reserve(out, out->n + len)) return -1;
    int64_t before = out->n;
    for (int64_t i = 0; i < len; i++) {
        uint32_t c = rv_cp_at(kind, data, i);
        if (keep_space || !rv_is_space(c)) out->data[out->n++] = c;
    }
    return out->n - before;
}

/* chrF++'s words: str.split(), then a word longer than one character loses one
 * ASCII punctuation character, the last if it is one, else the first
 * ("(hi)" -> "(hi", ")").  Tokens as in rv_sacrebleu_13a: code points appended
 * to out_cps, each token's end pushed to out_ends.  Returns the count, or -1. */
static inline int64_t rv_chrf_words(int kind, const void *data, int64_t len, rv_u32buf *out_cps,
                                    rv_i64buf *out_ends) {
    int64_t cps0 = out_cps->n, ends0 = out_ends->n, count = 0, i = 0;
    if (rv_buf_reserve(out_cps, out_cps->n + len)) return -1;
    while (i < len) {
        while (i < len && rv_is_space(rv_cp_at(kind, data, i))) i++;
        if (i >= len) break;
        int64_t a = i;
        while (i < len && !rv_is_space(rv_cp_at(kind, data, i))) i++;
        int64_t b = i, cut = -1;
        if (b - a > 1) {
            if (rv_squad_punct(rv_cp_at(kind, data, b - 1))) cut = b - 1;
            else if (rv_squad_punct(rv_cp_at(kind, data, a))) cut = a + 1;
        }
        for (int64_t k = a; k < b; k++) {
            if (k == cut) {
                if (rv_buf_push(out_ends, out_cps->n)) goto oom;
                count++;
            }
            out_cps->data[out_cps->n++] = rv_cp_at(kind, data, k);
        }
        if (rv_buf_push(out_ends, out_cps->n)) goto oom;
        count++;
    }
    return count;
oom:
    out_cps->n = cps0;
    out_ends->n = ends0;
    return -1;
}

#endif
