/* MinHash signatures of word shingles, for near-duplicate removal (respeval.traces.dedupe).
 *
 * The twin, respeval/_core_py/minhash.py, states the same arithmetic in Python; both give
 * identical signatures (tests/traces/test_minhash.py).
 *
 * A text is UTF-8 bytes.  Its words are the maximal runs of word bytes: ASCII letters and
 * digits, and every byte >= 0x80 (so any non-ASCII character belongs to a word); ASCII
 * letters are lowered.  A word's hash is FNV-1a (64-bit) over its bytes.  A shingle is k
 * consecutive words (a text of fewer than k words, but at least one, is one shingle of all
 * of them); its value is
 *
 *     x = RV_MH_SHINGLE_INIT;  for each word w:  x = mix64(x ^ fnv1a(w));  x = x mod P
 *
 * with P = 2^61 - 1 and mix64 the splitmix64 finaliser.  Permutation i is the universal hash
 * h_i(x) = (a_i * x + b_i) mod P, where (a_i, b_i) are drawn from splitmix64 seeded with the
 * caller's seed (a_i = 1 + next % (P - 1), b_i = next % P, in that order, i = 0, 1, ...).
 * Signature entry i is the minimum of h_i over the text's shingles; a text without words has
 * every entry RV_MH_EMPTY.
 */
#ifndef RESPEVAL_MINHASH_H
#define RESPEVAL_MINHASH_H

#include <stdint.h>
#include <stddef.h>

#define RV_MH_PRIME 0x1FFFFFFFFFFFFFFFULL /* 2^61 - 1 */
#define RV_MH_EMPTY 0xFFFFFFFFFFFFFFFFULL
#define RV_MH_SHINGLE_INIT 0x9E3779B97F4A7C15ULL
#define RV_MH_FNV_OFFSET 0xCBF29CE484222325ULL
#define RV_MH_FNV_PRIME 0x100000001B3ULL

static inline uint64_t rv_mh_mix64(uint64_t z) {
    z ^= z >> 30; z *= 0xBF58476D1CE4E5B9ULL;
    z ^= z >> 27; z *= 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline uint64_t rv_mh_splitmix_next(uint64_t* state) {
    *state += 0x9E3779B97F4A7C15ULL;
    return rv_mh_mix64(*state);
}

/* x mod P for any 64-bit x */
static inline uint64_t rv_mh_mod_p(uint64_t x) {
    x = (x & RV_MH_PRIME) + (x >> 61);
    return x >= RV_MH_PRIME ? x - RV_MH_PRIME : x;
}

/* (a * x + b) mod P for a, x, b < P, with 32-bit limbs: a*x = ah*xh*2^64 + (ah*xl + al*xh)*2^32
 * + al*xl, each piece folded mod P (2^64 = 8 mod P; mid*2^32 = (mid >> 29)*2^61 + (mid mod 2^29)*2^32).
 * The path of compilers without a 128-bit integer; tests/traces/c/minhash_perm.c checks it
 * against the 128-bit one. */
static inline uint64_t rv_mh_perm_limbs(uint64_t a, uint64_t b, uint64_t x) {
    uint64_t ah = a >> 32, al = a & 0xFFFFFFFFULL, xh = x >> 32, xl = x & 0xFFFFFFFFULL;
    uint64_t hh = ah * xh, mid = ah * xl + al * xh, ll = al * xl; /* mid < 2^62 as a, x < 2^61 */
    uint64_t r = rv_mh_mod_p(hh << 3);
    r = rv_mh_mod_p(r + (mid >> 29));
    r = rv_mh_mod_p(r + ((mid & 0x1FFFFFFFULL) << 32));
    r = rv_mh_mod_p(r + rv_mh_mod_p(ll));
    return rv_mh_mod_p(r + b);
}

/* (a * x + b) mod P for a, x, b < P */
static inline uint64_t rv_mh_perm(uint64_t a, uint64_t b, uint64_t x) {
#if defined(__SIZEOF_INT128__)
    unsigned __int128 t = (unsigned __int128)a * x + b;
    uint64_t r = ((uint64_t)t & RV_MH_PRIME) + (uint64_t)(t >> 61); /* < 2^62 + 1 */
    r = (r & RV_MH_PRIME) + (r >> 61);
    return r >= RV_MH_PRIME ? r - RV_MH_PRIME : r;
#else
    return rv_mh_perm_limbs(a, b, x);
#endif
}

/* The (a_i, b_i) of num_perm permutations from seed, interleaved: coef[2i] = a_i, coef[2i+1] = b_i. */
static inline void rv_mh_coefficients(uint64_t seed, int64_t num_perm, uint64_t* coef) {
    uint64_t state = seed;
    int64_t i;
    for (i = 0; i < num_perm; i++) {
        coef[2 * i] = 1 + rv_mh_splitmix_next(&state) % (RV_MH_PRIME - 1);
        coef[2 * i + 1] = rv_mh_splitmix_next(&state) % RV_MH_PRIME;
    }
}

static inline int rv_mh_word_byte(uint8_t c) {
    return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* The FNV-1a hashes of the words of text[0:n] into words (capacity n / 2 + 1 is enough:
 * every word but the last is followed by a separator); returns the word count. */
static inline int64_t rv_mh_words(const uint8_t* text, int64_t n, uint64_t* words) {
    int64_t i = 0, count = 0;
    while (i < n) {
        uint64_t h;
        while (i < n && !rv_mh_word_byte(text[i])) i++;
        if (i >= n) break;
        h = RV_MH_FNV_OFFSET;
        while (i < n && rv_mh_word_byte(text[i])) {
            uint8_t c = text[i++];
            if (c >= 'A' && c <= 'Z') c = (uint8_t)(c + 32);
            h = (h ^ c) * RV_MH_FNV_PRIME;
        }
        words[count++] = h;
    }
    return count;
}

/* The signature of one text (out[num_perm]); words is scratch of n / 2 + 1 entries. */
static inline void rv_mh_signature(const uint8_t* text, int64_t n, int64_t shingle, const uint64_t* coef,
                                   int64_t num_perm, uint64_t* words, uint64_t* out) {
    int64_t n_words = rv_mh_words(text, n, words), n_shingles, s, j, i;
    for (i = 0; i < num_perm; i++) out[i] = RV_MH_EMPTY;
    if (n_words == 0) return;
    if (shingle > n_words) shingle = n_words;
    n_shingles = n_words - shingle + 1;
    for (s = 0; s < n_shingles; s++) {
        uint64_t x = RV_MH_SHINGLE_INIT;
        for (j = 0; j < shingle; j++) x = rv_mh_mix64(x ^ words[s + j]);
        x = rv_mh_mod_p(x);
        for (i = 0; i < num_perm; i++) {
            uint64_t h = rv_mh_perm(coef[2 * i], coef[2 * i + 1], x);
            if (h < out[i]) out[i] = h;
        }
    }
}

#endif /* RESPEVAL_MINHASH_H */
