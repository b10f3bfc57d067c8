/*
 * The Philox4x32-10 stream of the engine (assembly/core/rng.ts) for the native references: key = seed
 * words, counter words 2-3 = chain id and stream tag, one 32-bit word per draw, uniform32(x) =
 * (x + 0.5) * 2^-32.
 */
#include <stdint.h>

typedef struct {
  uint32_t key0, key1, ctr0, ctr1, ctr2, ctr3;
  uint32_t out[4];
  uint32_t pos;
} Philox;

static inline void refill(Philox *r) {
  uint32_t c0 = r->ctr0, c1 = r->ctr1, c2 = r->ctr2, c3 = r->ctr3, k0 = r->key0, k1 = r->key1;
  for (int i = 0; i < 10; i++) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c0;
    uint64_t p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
    uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    c0 = n0;
    c1 = (uint32_t)p1;
    c2 = n2;
    c3 = (uint32_t)p0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  r->out[0] = c0;
  r->out[1] = c1;
  r->out[2] = c2;
  r->out[3] = c3;
  if (++r->ctr0 == 0) r->ctr1++;
  r->pos = 0;
}

static inline uint32_t next32(Philox *r) {
  if (r->pos >= 4) refill(r);
  return r->out[r->pos++];
}

static inline double uniform32(Philox *r) {
  return ((double)next32(r) + 0.5) * 2.3283064365386963e-10; /* 2^-32 */
}

