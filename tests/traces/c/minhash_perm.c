/* rv_mh_perm's two paths (128-bit integers, 32-bit limbs) agree, and equal (a*x+b) mod P
 * computed independently by long division on 128 bits.  Usage: minhash_perm N SEED */
#include <stdio.h>
#include <stdlib.h>
#include "minhash.h"

int main(int argc, char** argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    uint64_t state = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    long i;
    for (i = 0; i < n; i++) {
        uint64_t a = rv_mh_splitmix_next(&state) % RV_MH_PRIME, b = rv_mh_splitmix_next(&state) % RV_MH_PRIME;
        uint64_t x = rv_mh_splitmix_next(&state) % RV_MH_PRIME;
        unsigned __int128 t;
        uint64_t want;
        if (i % 7 == 0) a = RV_MH_PRIME - 1 - (i & 3);  /* the largest values */
        if (i % 11 == 0) x = RV_MH_PRIME - 1 - (i & 1);
        t = (unsigned __int128)a * x + b;
        want = (uint64_t)(t % RV_MH_PRIME);
        if (rv_mh_perm(a, b, x) != want || rv_mh_perm_limbs(a, b, x) != want) {
            printf("mismatch a=%llu b=%llu x=%llu\n", (unsigned long long)a, (unsigned long long)b,
                   (unsigned long long)x);
            return 1;
        }
    }
    printf("ok %ld\n", n);
    return 0;
}
