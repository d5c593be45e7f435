/* Fuzzes the call scanner of cext/trajectory_json.h (rv_tj_object_span): the SSE2, AVX2 and
 * AVX-512 paths (each where the CPU has it) must find the same end and hash as the portable one,
 * the hash must be rv_tj_text_hash of the span, and no path may read outside the text
 * (built with -fsanitize=address, every text is its own exact-size allocation).  It also
 * checks that rv_tj_buf_hash (the calls table's and the fingerprints' hash) is that
 * hash on every path, and that rv_tbuf_put_quoted_words (the word-at-a-time quoting of the dict reader)
 * writes what the byte loop rv_tbuf_put_quoted writes, for every text and for short
 * strings of every length, without reading outside them, and that json_scan.h's checker
 * (the one JSON scanner: strings 16 bytes a step, or a byte a step) gives the same verdict
 * and end on both paths.
 * Usage: json_span_fuzz ITERATIONS SEED; prints "ok N M PATH" (N texts, M with an end,
 * the widest path compared), or the first mismatch and exits 1. */
#include <stdio.h>
#include <stdlib.h>

#include "json_scan.h"
#include "trajectory_json.h"

static uint64_t state;

static uint64_t next(void) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

/* json_scan.h's checker on the vector path (16 bytes a step through strings) and the
 * portable one (a class table a byte): the same verdict and the same end, for the text
 * as it is and as a string (its first byte a quote), with and without UTF-8 checks. */
static int scanner_alike(char *s, int64_t n) {
    for (int as_string = 0; as_string < 2; as_string++) {
        char first = s[0];
        if (as_string) s[0] = '"';
        for (int check = 0; check < 2; check++) {
            int got[2];
            int64_t end[2];
            for (int path = 0; path < 2; path++) {
                rv_isa = path ? RV_ISA_SSE2 : RV_ISA_PORTABLE;
                rv_jcur c = {s, n, 0};
                got[path] = rv_json_skip(&c, 0, check);
                end[path] = c.i;
            }
            if (got[0] != got[1] || (got[0] && end[0] != end[1])) {
                printf("the JSON scanner's paths differ (check_utf8 %d): portable %d at %lld, sse2 %d at %lld: ", check,
                       got[0], (long long)end[0], got[1], (long long)end[1]);
                fwrite(s, 1, (size_t)n, stdout);
                printf("\n");
                return 0;
            }
        }
        s[0] = first;
    }
    return 1;
}

static int quoted_alike(const char *s, int64_t n) {
    rv_tbuf a = {0}, b = {0};
    int same = rv_tbuf_put_quoted(&a, s, n) == 0 && rv_tbuf_put_quoted_words(&b, s, n) == 0 && a.n == b.n &&
               memcmp(a.data, b.data, (size_t)a.n) == 0;
    if (!same) {
        printf("quoting differs for %lld bytes: ", (long long)n);
        fwrite(s, 1, (size_t)n, stdout);
        printf("\n");
    }
    free(a.data);
    free(b.data);
    return same;
}

int main(int argc, char **argv) {
    long iterations = argc > 1 ? atol(argv[1]) : 100000;
    state = argc > 2 ? strtoull(argv[2], NULL, 10) | 1 : 88172645463325252ULL;
    /* weighted towards plain bytes, so objects run across several 16-byte blocks */
    static const char alphabet[] = "{}[]\"\\aaaaaaaaaaaaaaaaaaaa:,  \"\"{{\x01\xc3\xa9";
    long ends = 0;
    int avx2 = rv_isa_supported(RV_ISA_AVX2), avx512 = rv_isa_supported(RV_ISA_AVX512);
    for (long it = 0; it < iterations; it++) {
        int64_t n = (int64_t)(next() % 300) + 1;  /* up to ~5 blocks of 64 bytes */
        char *text = (char *)malloc((size_t)n);
        if (!text) return 2;
        text[0] = '{';
        for (int64_t k = 1; k < n; k++) text[k] = alphabet[next() % (sizeof(alphabet) - 1)];
        uint64_t h1 = 0, h2 = 0;
        int64_t e1 = rv_tj_object_span_portable(text, n, 0, &h1);
#if defined(__SSE2__)
        int64_t e2 = rv_tj_object_span_sse2(text, n, 0, &h2);
#else
        int64_t e2 = rv_tj_object_span_portable(text, n, 0, &h2);
#endif
        uint64_t h3 = h2, h4 = h2;
        int64_t e3 = e2, e4 = e2;
#ifdef RV_TJ_SPAN_VECTOR
        if (avx2) e3 = rv_tj_object_span_avx2(text, n, 0, &h3);
        if (avx512) e4 = rv_tj_object_span_avx512(text, n, 0, &h4);
#endif
        if (e1 != e2 || e1 != e3 || e1 != e4 ||
            (e1 >= 0 && (h1 != h2 || h1 != h3 || h1 != h4 || h1 != rv_tj_text_hash(text, e1)))) {
            printf("mismatch at %ld: portable %lld, sse2 %lld, avx2 %lld, avx512 %lld; text: ", it, (long long)e1,
                   (long long)e2, (long long)e3, (long long)e4);
            fwrite(text, 1, (size_t)n, stdout);
            printf("\n");
            return 1;
        }
        ends += e1 >= 0;
        /* the buffer hash of every path is the span hash, reading nothing past the text */
        uint64_t want = rv_tj_text_hash(text, n), got[3] = {want, want, want};
#ifdef RV_TJ_SPAN_VECTOR
        if (avx2) got[1] = rv_tj_buf_hash_avx2(text, n);
        if (avx512) got[2] = rv_tj_buf_hash_avx512(text, n);
#endif
        if (n >= 64) got[0] = rv_traj_hash(text, n);
        if (got[0] != want || got[1] != want || got[2] != want) {
            printf("buffer hash differs at %ld for %lld bytes\n", it, (long long)n);
            return 1;
        }
        if (!quoted_alike(text, n)) return 1;
        if (!scanner_alike(text, n)) return 1;
        rv_isa = -1;
        free(text);
        int64_t m = (int64_t)(next() % 24);
        char *word = (char *)malloc((size_t)(m ? m : 1));
        if (!word) return 2;
        for (int64_t k = 0; k < m; k++) word[k] = "ab\"\\"[next() % 3 ? 0 : 1 + next() % 3];
        if (!quoted_alike(word, m)) return 1;
        free(word);
    }
    printf("ok %ld %ld %s\n", iterations, ends, avx512 ? "avx512" : avx2 ? "avx2" : "sse2");
    return 0;
}
