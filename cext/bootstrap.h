/* Streaming Poisson bootstrap: every row gets an independent Poisson(1) weight
 * per replicate, so a replicate's sums can be accumulated chunk by chunk without
 * ever holding the corpus.
 *
 * The weight of (row key, replicate b) is a pure function of (seed, key, b): a
 * 64-bit row hash, then a 32-bit mix per replicate, compared against the Poisson(1)
 * upper-tail thresholds.  Each accumulator adds one row at a time, in row order,
 * so the result is the same whatever the chunking or the thread count (threads
 * own disjoint replicate ranges).  The pure-Python twin in
 * respeval/_core_py/bootstrap.py computes the same weights and the same sums.
 */
#ifndef RESPEVAL_BOOTSTRAP_H
#define RESPEVAL_BOOTSTRAP_H

#include <stdint.h>
#include <string.h>

#define RV_PB_MAX_WEIGHT 12

/* round(P(X >= k) * 2^32) for X ~ Poisson(1), k = 1..12 (P(X >= 13) rounds to 0). */
static const uint32_t rv_pb_tail[RV_PB_MAX_WEIGHT] = {
    2714937127u, 1134906959u, 344891874u, 81553513u, 15718922u, 2552004u,
    357518u, 44020u, 4833u, 479u, 43u, 4u};

static inline uint64_t rv_pb_mix64(uint64_t z) {
    z ^= z >> 30; z *= 0xBF58476D1CE4E5B9ULL;
    z ^= z >> 27; z *= 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* The row's 64-bit hash: its key mixed with the run's seed. */
static inline uint64_t rv_pb_row_hash(uint64_t seed, uint64_t key) {
    return rv_pb_mix64(rv_pb_mix64(seed) ^ (key * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL));
}

static inline uint32_t rv_pb_weight(uint64_t row_hash, uint32_t b) {
    uint32_t x = ((uint32_t)row_hash ^ (b * 0x9E3779B9u)) + (uint32_t)(row_hash >> 32);
    uint32_t w = 0;
    int k;
    x ^= x >> 16; x *= 0x85EBCA6Bu;
    x ^= x >> 13; x *= 0xC2B2AE35u;
    x ^= x >> 16;
    for (k = 0; k < RV_PB_MAX_WEIGHT; k++)
        w += x < rv_pb_tail[k];
    return w;
}

#define RV_PB_TILE 8  /* rows whose weights are drawn before they are added */
#define RV_PB_BLOCK 256  /* replicates whose weights are drawn together (a multiple of 32) */

typedef uint32_t rv_pb_u8x __attribute__((vector_size(32)));
typedef int32_t rv_pb_i8x __attribute__((vector_size(32)));
typedef int32_t rv_pb_i4x __attribute__((vector_size(16)));
typedef double rv_pb_d8x __attribute__((vector_size(64)));

/* The mixed 32-bit uniforms of replicates first .. first + 7 (rv_pb_weight's mix). */
static inline void rv_pb_mix8(uint32_t lo, uint32_t hi, uint32_t first, rv_pb_u8x* out) {
    rv_pb_u8x x = {0, 1, 2, 3, 4, 5, 6, 7};
    x += first;
    x = (lo ^ (x * 0x9E3779B9u)) + hi;
    x ^= x >> 16; x *= 0x85EBCA6Bu;
    x ^= x >> 13; x *= 0xC2B2AE35u;
    *out = x ^ (x >> 16);
}

#define RV_PB_S(k) ((int32_t)(rv_pb_tail[k] ^ 0x80000000u))

/* Weights of replicates [b0, b0 + width) for one row, as doubles, 32 at a time:
 * the mix, then the five common thresholds (unsigned x < T is the signed compare
 * (x ^ 2^31) < (T ^ 2^31)).  P(w >= 6) is 6e-4, so a block of 32 has such a lane
 * 2% of the time; only then are its lanes finished one by one.  Same values as
 * rv_pb_weight. */
static inline void rv_pb_row_weights(uint64_t h, int64_t b0, int64_t width, int32_t* iw, double* w) {
    const uint32_t lo = (uint32_t)h, hi = (uint32_t)(h >> 32);
    int64_t b = 0, j;
    for (; b + 32 <= width; b += 32) {
        rv_pb_u8x x[4];
        rv_pb_i8x xs, k, rare = {0, 0, 0, 0, 0, 0, 0, 0};
        uint64_t any[4];
        int q, t;
        for (q = 0; q < 4; q++) {
            rv_pb_mix8(lo, hi, (uint32_t)(b0 + b + 8 * q), &x[q]);
            xs = (rv_pb_i8x)(x[q] ^ 0x80000000u);
            k = -(xs < RV_PB_S(0)) - (xs < RV_PB_S(1)) - (xs < RV_PB_S(2)) - (xs < RV_PB_S(3)) - (xs < RV_PB_S(4));
            rare |= xs < RV_PB_S(5);
            memcpy(iw + b + 8 * q, &k, sizeof k);
        }
        memcpy(any, &rare, sizeof any);
        if (any[0] | any[1] | any[2] | any[3]) {
            for (q = 0; q < 4; q++)
                for (j = 0; j < 8; j++)
                    for (t = 5; t < RV_PB_MAX_WEIGHT; t++)
                        iw[b + 8 * q + j] += x[q][j] < rv_pb_tail[t];
        }
    }
    for (; b < width; b++)
        iw[b] = (int32_t)rv_pb_weight(h, (uint32_t)(b0 + b));
    for (b = 0; b < width; b++)
        w[b] = (double)iw[b];
}

/* Add rows [0, rows) of ``x`` (row-major, ``cols`` statistics per row) to the
 * accumulators of replicates [b0, b1).  ``acc`` is (cols + 1) x n_rep, row-major:
 * acc[c * n_rep + b] sums weight * x[., c]; the last row sums the weights (each
 * replicate's resample size).  ``scratch`` holds (RV_PB_TILE + 1) * (b1 - b0)
 * doubles.  Every accumulator gets its rows added one at a time in row order (no
 * fused multiply-add: the build sets -ffp-contract=off), so the tiling, which
 * keeps four accumulators in a register across a tile of rows, changes the speed,
 * never the sums. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void rv_pb_accumulate(const double* x, int64_t rows, int64_t cols, const int64_t* keys,
                             uint64_t seed, double* acc, int64_t n_rep, int64_t b0, int64_t b1,
                             double* scratch) {
    int64_t width = b1 - b0, r0, r, c, b, tile, bb, bw;
    /* a tile's weights a block of replicates at a time, so they stay in L1 while every
     * statistic is added (all of them, 8 x 1000 doubles, came from L2 once per statistic) */
    int64_t stride = width < RV_PB_BLOCK ? width : RV_PB_BLOCK;
    int32_t* iw = (int32_t*)(scratch + RV_PB_TILE * stride);
    uint64_t h[RV_PB_TILE];
    for (r0 = 0; r0 < rows; r0 += RV_PB_TILE) {
        double v[RV_PB_TILE];
        tile = rows - r0 < RV_PB_TILE ? rows - r0 : RV_PB_TILE;
        for (r = 0; r < tile; r++) h[r] = rv_pb_row_hash(seed, (uint64_t)keys[r0 + r]);
        for (bb = 0; bb < width; bb += stride) {
            bw = width - bb < stride ? width - bb : stride;
            for (r = 0; r < tile; r++) rv_pb_row_weights(h[r], b0 + bb, bw, iw, scratch + r * stride);
            for (c = 0; c <= cols; c++) {
                double* a = acc + c * n_rep + b0 + bb;
                for (r = 0; r < tile; r++)
                    v[r] = c < cols ? x[(r0 + r) * cols + c] : 1.0;
                /* four sums at a time: one sum's adds wait on each other, row after row of
                 * the tile; four sums' adds overlap */
                for (b = 0; b + 32 <= bw; b += 32) {
                    rv_pb_d8x s0, s1, s2, s3, w;
                    memcpy(&s0, a + b, sizeof s0);
                    memcpy(&s1, a + b + 8, sizeof s1);
                    memcpy(&s2, a + b + 16, sizeof s2);
                    memcpy(&s3, a + b + 24, sizeof s3);
                    for (r = 0; r < tile; r++) {
                        const double* wr = scratch + r * stride + b;
                        memcpy(&w, wr, sizeof w);
                        s0 += w * v[r];
                        memcpy(&w, wr + 8, sizeof w);
                        s1 += w * v[r];
                        memcpy(&w, wr + 16, sizeof w);
                        s2 += w * v[r];
                        memcpy(&w, wr + 24, sizeof w);
                        s3 += w * v[r];
                    }
                    memcpy(a + b, &s0, sizeof s0);
                    memcpy(a + b + 8, &s1, sizeof s1);
                    memcpy(a + b + 16, &s2, sizeof s2);
                    memcpy(a + b + 24, &s3, sizeof s3);
                }
                for (; b + 8 <= bw; b += 8) {
                    rv_pb_d8x sum, w;
                    memcpy(&sum, a + b, sizeof sum);
                    for (r = 0; r < tile; r++) {
                        memcpy(&w, scratch + r * stride + b, sizeof w);
                        sum += w * v[r];
                    }
                    memcpy(a + b, &sum, sizeof sum);
                }
                for (; b < bw; b++)
                    for (r = 0; r < tile; r++)
                        a[b] += scratch[r * stride + b] * v[r];
            }
        }
    }
}

#endif
