/* Runtime dispatch between instruction sets.
 *
 * The core is compiled for the baseline of its platform (x86-64 without POPCNT, or
 * aarch64), so a wheel built once runs on any CPU.  The few functions that gain from
 * newer instructions (the tokenizer's byte classification, and the popcount-heavy
 * LCS kernels) are compiled several times with GCC/clang target attributes, and
 * rv_dispatch_init() picks, once, the best path this CPU supports:
 *
 *   avx512    AVX-512 F/BW/VL (+ AVX2, BMI1/2, POPCNT): 64 bytes per step
 *   avx2      AVX2, BMI1/2, POPCNT: 32 bytes per step
 *   sse2      SSE2 (+ POPCNT): 16 bytes per step
 *   portable  plain C: a table per byte, the compiler's popcount
 *
 * RESPEVAL_SIMD=<path> forces a path (tests run every path this CPU supports and
 * compare them); forcing a path the CPU cannot run is an error, never a crash.
 * Off x86 (e.g. aarch64) only the portable path exists; its popcount is the
 * hardware one there.
 */
#ifndef RESPEVAL_DISPATCH_H
#define RESPEVAL_DISPATCH_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { RV_ISA_PORTABLE = 0, RV_ISA_SSE2 = 1, RV_ISA_AVX2 = 2, RV_ISA_AVX512 = 3, RV_ISA_COUNT = 4 };

static const char *const rv_isa_names[RV_ISA_COUNT] = {"portable", "sse2", "avx2", "avx512"};

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define RV_X86 1
#include <immintrin.h>
#define RV_TARGET_SSE2 __attribute__((target("sse2,popcnt")))
#define RV_TARGET_AVX2 __attribute__((target("avx2,bmi,bmi2,popcnt,lzcnt")))
#define RV_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,bmi,bmi2,popcnt,lzcnt")))
#endif

#if defined(__GNUC__) || defined(__clang__)
#define RV_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define RV_ALWAYS_INLINE inline
#endif

/* The `width` bytes of the block at s[i0] of s[0..L): in place, or (the last, short block)
 * copied into `tail` (width bytes) and zero-padded, so vector loads never read past the
 * string.  The vector paths of the tokenizer and the trajectory call scanner read their
 * blocks through it. */
static inline const uint8_t *rv_block(const uint8_t *s, int64_t L, int64_t i0, int width, uint8_t *tail) {
    if (L - i0 >= width) return s + i0;
    memset(tail, 0, (size_t)width);
    memcpy(tail, s + i0, (size_t)(L - i0));
    return tail;
}

/* The bits of the `width`-byte block at i0 (width <= 32) that are inside s[0..L). */
static inline uint32_t rv_valid32(int64_t L, int64_t i0, int width) {
    int64_t k = L - i0 < width ? L - i0 : width;
    return k >= 32 ? 0xFFFFFFFFu : (1u << k) - 1;
}

/* Whether this CPU (and OS) can run the path. */
static inline int rv_isa_supported(int isa) {
    if (isa == RV_ISA_PORTABLE) return 1;
#ifdef RV_X86
    __builtin_cpu_init();
    int sse2 = __builtin_cpu_supports("sse2") && __builtin_cpu_supports("popcnt");
    int avx2 = sse2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
               __builtin_cpu_supports("bmi2");
    int avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512vl");
    if (isa == RV_ISA_SSE2) return sse2;
    if (isa == RV_ISA_AVX2) return avx2;
    if (isa == RV_ISA_AVX512) return avx512;
#endif
    return 0;
}

static int rv_isa = -1;  /* the active path, set once by rv_dispatch_init */

/* Pick the path: `forced` (a name above, or NULL/"" for the best supported one).
 * 0, -1 for an unknown name, -2 for a path this CPU cannot run. */
static inline int rv_dispatch_init(const char *forced) {
    if (forced && forced[0]) {
        for (int isa = 0; isa < RV_ISA_COUNT; isa++) {
            if (strcmp(forced, rv_isa_names[isa]) == 0) {
                if (!rv_isa_supported(isa)) return -2;
                rv_isa = isa;
                return 0;
            }
        }
        return -1;
    }
    rv_isa = RV_ISA_PORTABLE;
    for (int isa = RV_ISA_COUNT - 1; isa > RV_ISA_PORTABLE; isa--) {
        if (rv_isa_supported(isa)) { rv_isa = isa; break; }
    }
    return 0;
}

/* One function, compiled once per path: `name##_body` is an always-inline function
 * (static RV_ALWAYS_INLINE ret name##_body(params)); this defines name##_portable,
 * name##_sse2, ... and `name`, which calls the active path's copy.  Inlined into a
 * target-attributed wrapper, the body's __builtin_popcountll (and everything else)
 * is compiled for that target. */
#ifdef RV_X86
#define RV_MULTIVERSION(ret, name, params, args)                                        \
    static ret name##_portable params { return name##_body args; }                      \
    RV_TARGET_SSE2 static ret name##_sse2 params { return name##_body args; }           \
    RV_TARGET_AVX2 static ret name##_avx2 params { return name##_body args; }           \
    RV_TARGET_AVX512 static ret name##_avx512 params { return name##_body args; }       \
    static inline ret name params {                                                      \
        switch (rv_isa) {                                                                \
        case RV_ISA_AVX512: return name##_avx512 args;                                   \
        case RV_ISA_AVX2: return name##_avx2 args;                                       \
        case RV_ISA_SSE2: return name##_sse2 args;                                       \
        default: return name##_portable args;                                            \
        }                                                                                \
    }
#else
#define RV_MULTIVERSION(ret, name, params, args) \
    static inline ret name params { return name##_body args; }
#endif

#endif
