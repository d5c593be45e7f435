/* Tokens of the MT normalizers (code points, mt_tokenize.h) to vocabulary ids.
 *
 * A text's tokens are encoded to UTF-8 back to back in one buffer with 16 bytes of
 * zero padding, so every token's key can be read with 16-byte loads (vocab.h); keys
 * are computed and their slots prefetched a batch at a time before the lookups, which
 * hides the table's cache misses.  ASCII code points are copied as they are.
 */
#ifndef RESPEVAL_MT_IDS_H
#define RESPEVAL_MT_IDS_H

#include <stdint.h>
#include <string.h>

#include "buffer.h"
#include "vocab.h"

#define RV_MT_BATCH 64

typedef struct {
    uint8_t *u8; int64_t u8_cap;   /* the tokens' UTF-8 bytes, padded */
    int64_t *off; int64_t off_cap; /* token k is u8[off[k] .. off[k+1]) */
    rv_key keys[RV_MT_BATCH];
} rv_mt_ids_state;

static inline void rv_mt_ids_free(rv_mt_ids_state *st) {
    free(st->u8); free(st->off);
    st->u8 = NULL; st->off = NULL;
    st->u8_cap = st->off_cap = 0;
}

/* Append to `ids` the ids of ntok tokens whose code points are cps[c0 ..] with token
 * k ending at ends[k] (absolute index into cps).  Lone surrogates are encoded as
 * three bytes (Python's "surrogatepass").  0, or -1 when out of memory. */
static inline int rv_mt_ids(rv_vocab *v, rv_mt_ids_state *st, const uint32_t *cps, int64_t c0, const int64_t *ends,
                            int64_t ntok, rv_i32buf *ids) {
    if (ntok == 0) return 0;
    int64_t ncp = ends[ntok - 1] - c0;
    if (rv_grow((void **)&st->u8, &st->u8_cap, 4 * ncp + 16, 1) ||
        rv_grow((void **)&st->off, &st->off_cap, ntok + 1, sizeof(int64_t)) ||
        rv_buf_reserve(ids, ids->n + ntok))
        return -1;
    uint8_t *p = st->u8;
    int64_t start = c0;
    for (int64_t k = 0; k < ntok; k++) {
        st->off[k] = p - st->u8;
        for (int64_t i = start; i < ends[k]; i++) {
            uint32_t c = cps[i];
            if (c < 0x80) {
                *p++ = (uint8_t)c;
            } else if (c < 0x800) {
                *p++ = (uint8_t)(0xC0 | (c >> 6));
                *p++ = (uint8_t)(0x80 | (c & 0x3F));
            } else if (c < 0x10000) {
                *p++ = (uint8_t)(0xE0 | (c >> 12));
                *p++ = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
                *p++ = (uint8_t)(0x80 | (c & 0x3F));
            } else {
                *p++ = (uint8_t)(0xF0 | (c >> 18));
                *p++ = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
                *p++ = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
                *p++ = (uint8_t)(0x80 | (c & 0x3F));
            }
        }
        start = ends[k];
    }
    st->off[ntok] = p - st->u8;
    memset(p, 0, 16);
    for (int64_t b0 = 0; b0 < ntok; b0 += RV_MT_BATCH) {
        int64_t b1 = b0 + RV_MT_BATCH < ntok ? b0 + RV_MT_BATCH : ntok;
        for (int64_t k = b0; k < b1; k++) {
            rv_key_padded(st->u8 + st->off[k], st->off[k + 1] - st->off[k], &st->keys[k - b0]);
            rv_vocab_prefetch(v, &st->keys[k - b0]);
        }
        for (int64_t k = b0; k < b1; k++) {
            int32_t id = rv_vocab_lookup(v, (const char *)st->u8 + st->off[k], &st->keys[k - b0], 1);
            if (id < 0) return -1;
            ids->data[ids->n++] = id;
        }
    }
    return 0;
}

#endif
