/* Streaming Poisson bootstrap: every row gets an independent Poisson(1) weight
 * per replicate, so a replicate's sums can be accumulated chunk by chunk without
 * ever holding the corpus.
 *
 * The weight of (row key, replicate b) is a pure function of (seed, key, b): a
 * 64-bit row hash, then a 32-bit mix per replicate, compared against the Poisson(1)
 * upper-tail thresholds.  Each accumulator adds one row at a time, in row order,
 * so the result is the same whatever the chunking or the thread count (threads
 * own disjoint replicate ranges).  The pure-Python twin in
 * respeval/_reference/bootstrap.py computes the same weights and the same sums.
 */
#ifndef RV_POISSON_BOOTSTRAP_H
#define RV_POISSON_BOOTSTRAP_H

#include <stdint.h>

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

/* Add rows [0, rows) of ``x`` (row-major, ``cols`` statistics per row) to the
 * accumulators of replicates [b0, b1).  ``acc`` is (cols + 1) x n_rep, row-major:
 * acc[c * n_rep + b] sums weight * x[., c]; the last row sums the weights (each
 * replicate's resample size).  ``scratch`` holds RV_PB_TILE * (b1 - b0) doubles.
 * Additions happen row by row in row order (no fused multiply-add: the build
 * sets -ffp-contract=off), so tiling changes speed, never the sums. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
static void rv_pb_accumulate(const double* x, int64_t rows, int64_t cols, const int64_t* keys,
                             uint64_t seed, double* acc, int64_t n_rep, int64_t b0, int64_t b1,
                             double* scratch) {
    int64_t width = b1 - b0, r0, r, c, b, tile;
    for (r0 = 0; r0 < rows; r0 += RV_PB_TILE) {
        tile = rows - r0 < RV_PB_TILE ? rows - r0 : RV_PB_TILE;
        for (r = 0; r < tile; r++) {
            uint64_t h = rv_pb_row_hash(seed, (uint64_t)keys[r0 + r]);
            double* w = scratch + r * width;
            for (b = 0; b < width; b++)
                w[b] = (double)rv_pb_weight(h, (uint32_t)(b0 + b));
        }
        for (c = 0; c <= cols; c++) {
            double* a = acc + c * n_rep + b0;
            for (r = 0; r < tile; r++) {
                const double* w = scratch + r * width;
                if (c < cols) {
                    double v = x[(r0 + r) * cols + c];
                    for (b = 0; b < width; b++)
                        a[b] += w[b] * v;
                } else {
                    for (b = 0; b < width; b++)
                        a[b] += w[b];
                }
            }
        }
    }
}

#endif
