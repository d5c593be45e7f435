/* rouge-score's default tokenizer, run over CPython's own string storage.
 *
 * A str is 1, 2 or 4 bytes per code point (PEP 393); reading it in place
 * avoids building a UTF-8 copy of every text.  rouge-score computes
 * re.sub("[^a-z0-9]+", " ", text.lower()): the only code points whose
 * lowercase contains [a-z0-9] are ASCII letters and digits, U+0130 (lowercases
 * to "i" + U+0307, so it ends a token after an "i") and the Kelvin sign U+212A
 * (lowercases to "k").  Every other code point separates tokens.
 */
#ifndef RESPEVAL_TOKENIZE_H
#define RESPEVAL_TOKENIZE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "vocab.h"

/* rouge-score's character classes for one byte: the lowercase ASCII letter or
 * digit it stands for, or 0 for a separator.  Latin-1 bytes >= 0x80 all separate. */
static const unsigned char rv_rouge_class[256] = {
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

static inline uint32_t rv_code_unit(int kind, const void *data, int64_t i) {
    if (kind == 1) return ((const uint8_t *)data)[i];
    if (kind == 2) return ((const uint16_t *)data)[i];
    return ((const uint32_t *)data)[i];
}

#define RV_FNV_OFFSET 1469598103934665603ULL
#define RV_FNV_PRIME 1099511628211ULL

static inline uint64_t rv_hash_finish(uint64_t h) {
    h ^= h >> 33; h *= 0xff51afd7ed558ccdULL; h ^= h >> 33;
    return h;
}

/* `tok` must be readable for 8 bytes past the token start (callers size it
 * len + 8), so a short token packs into one word with a single load. */
static inline int rv_emit(rv_vocab *v, int stem, const char *tok, int64_t len, uint64_t h,
                          rv_i32buf *ids) {
    int32_t id;
    h = rv_hash_finish(h);
    if (len <= 8) {
        uint64_t key;
        memcpy(&key, tok, 8);
        key &= len == 8 ? ~0ULL : ((1ULL << (8 * len)) - 1);
        rv_cache_entry *e = &v->cache[h & (RV_CACHE_SIZE - 1)];
        if (e->len == len && e->key == key) {
            id = e->id;
        } else {
            id = rv_vocab_add_h(v, tok, len, h);
            if (id < 0) return -1;
            e->key = key;
            e->len = (int32_t)len;
            e->id = id;
        }
    } else {
        id = rv_vocab_add_h(v, tok, len, h);
        if (id < 0) return -1;
    }
    if (stem && len > 3) {
        id = rv_vocab_stem(v, id);
        if (id < 0) return -1;
    }
    return rv_buf_push(ids, id);
}

/* Tokenize one text into ids (appended to `ids`), and record the end of every
 * non-empty newline-separated sentence in `sents` (rougeLsum's sentences;
 * token-less ones cannot change any statistic).  `tok` holds >= len + 8 bytes.
 * Returns 0, or -1 when out of memory. */
/* The same for a 1-byte-per-code-point (Latin-1/ASCII) string: a table lookup
 * per character, since neither U+0130 nor U+212A can occur. */
static inline int rv_tokenize_rouge_ucs1(rv_vocab *v, int stem, const unsigned char *s, int64_t len,
                                         char *tok, rv_i32buf *ids, rv_i64buf *sents) {
    int64_t tlen = 0;
    int64_t sent_start = ids->n;
    uint64_t h = RV_FNV_OFFSET;
    for (int64_t i = 0; i < len; i++) {
        unsigned char lower = rv_rouge_class[s[i]];
        if (lower) {
            tok[tlen++] = (char)lower;
            h = (h ^ lower) * RV_FNV_PRIME;
            continue;
        }
        if (tlen) {
            if (rv_emit(v, stem, tok, tlen, h, ids)) return -1;
            tlen = 0;
            h = RV_FNV_OFFSET;
        }
        if (s[i] == '\n' && ids->n > sent_start) {
            if (rv_buf_push(sents, ids->n)) return -1;
            sent_start = ids->n;
        }
    }
    if (tlen && rv_emit(v, stem, tok, tlen, h, ids)) return -1;
    if (ids->n > sent_start && rv_buf_push(sents, ids->n)) return -1;
    return 0;
}

static inline int rv_tokenize_rouge(rv_vocab *v, int stem, int kind, const void *data, int64_t len,
                                    char *tok, rv_i32buf *ids, rv_i64buf *sents) {
    if (kind == 1) return rv_tokenize_rouge_ucs1(v, stem, (const unsigned char *)data, len, tok, ids, sents);
    int64_t tlen = 0;
    int64_t sent_start = ids->n;
    uint64_t h = RV_FNV_OFFSET;
    for (int64_t i = 0; i < len; i++) {
        uint32_t c = rv_code_unit(kind, data, i);
        uint32_t lower;
        if ((c - 'a') < 26u || (c - '0') < 10u) {
            lower = c;
        } else if ((c - 'A') < 26u) {
            lower = c + 32;
        } else if (c == 0x212A) {
            lower = 'k';
        } else {
            if (c == 0x130) {  /* "i" then a combining dot, which separates */
                tok[tlen++] = 'i';
                h = (h ^ 'i') * RV_FNV_PRIME;
            }
            if (tlen) {
                if (rv_emit(v, stem, tok, tlen, h, ids)) return -1;
                tlen = 0;
                h = RV_FNV_OFFSET;
            }
            if (c == '\n' && ids->n > sent_start) {
                if (rv_buf_push(sents, ids->n)) return -1;
                sent_start = ids->n;
            }
            continue;
        }
        tok[tlen++] = (char)lower;
        h = (h ^ lower) * RV_FNV_PRIME;
    }
    if (tlen && rv_emit(v, stem, tok, tlen, h, ids)) return -1;
    if (ids->n > sent_start && rv_buf_push(sents, ids->n)) return -1;
    return 0;
}

#endif
