/*
 * Native reference of relaxmrf's sequential Gibbs sweep (assembly/gibbs.ts), for the benchmark in
 * bench/run.ts. The SAME algorithm as the WASM kernel and bench/js/gibbs.ts:
 *   - the canonical CSR form (bindings/canonical.ts), read from a binary file the bench writes;
 *   - a systematic scan over the blocks; free bits drawn as Bernoulli(p), p = 1/(1+exp(-u)),
 *     u = a_i + sum of W_ij over neighbours with s_j = 1 (added as `s_j ? W_ij : 0.0`, in CSR order);
 *     one-hot blocks drawn from the softmax of their fields, exactly as oneHotUpdate does;
 *   - the Philox4x32-10 stream (key = seed words, counter words 2-3 = chain id, stream tag), one
 *     word per accept test, uniform32(x) = (x + 0.5) * 2^-32, accepted when uniform32 < p;
 *   - Rao-Blackwellised accumulation acc_i += p (one-hot: acc += w_k / total).
 * exp() is the C library's. glibc >= 2.28 uses the same algorithm as AssemblyScript's Math.exp
 * (Szabolcs Nagy's table-driven exp, 2^7 entries) so results agree to the ulp or nearly; the
 * bench measures how often they differ. Build: gcc -O3 -march=native -ffp-contract=off (no FMA
 * contraction: WASM has no fused multiply-add without relaxed SIMD, and a fused acc += w * inv
 * would round differently; every other expression in the sweep has no a*b+c shape anyway).
 *
 * Usage:
 *   gibbs.out verify MODEL SEEDLO SEEDHI CHAIN TAG SWEEPS OUT
 *       init, SWEEPS sweeps with accumulation; writes to OUT: f64 changed, u8[nBits] initial
 *       bits, u8[nBits] final bits, f64[nBits] accumulator, u32 ctr0 ctr1 pos out0..out3 (the
 *       generator's state, to compare with the WASM chain's).
 *   gibbs.out time MODEL SEEDLO SEEDHI CHAIN TAG SWEEPS WARMUP
 *       init, WARMUP untimed sweeps, then SWEEPS timed sweeps (with accumulation); prints
 *       "seconds changed cpu-seconds" on stdout (wall clock, changes, this process's CPU time).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROGRAM "gibbs.out"
#include "csr_form.h"

#include "philox.h"

static inline double localField(const Form *m, const uint8_t *s, int32_t p) {
  double u = m->a[p];
  const int32_t end = m->rowPtr[p + 1];
  for (int32_t k = m->rowPtr[p]; k < end; k++) u += s[m->col[k]] ? m->val[k] : 0.0;
  return u;
}

static void chainInit(const Form *m, Philox *r, uint8_t *s) {
  memset(s, 0, (size_t)m->nBits);
  for (int32_t v = 0; v < m->nBlocks; v++) {
    const int32_t b = m->blockStart[v];
    if (m->oneHot[v]) {
      const int32_t K = m->blockStart[v + 1] - b;
      int32_t k = (int32_t)(uniform32(r) * (double)K);
      if (k > K - 1) k = K - 1;
      s[b + k] = 1;
    } else {
      s[b] = uniform32(r) < 0.5 ? 1 : 0;
    }
  }
}

static int oneHotUpdate(const Form *m, uint8_t *s, Philox *r, int32_t b, int32_t K, double *acc, double *scratch) {
  int32_t old = 0;
  double top = -INFINITY;
  for (int32_t k = 0; k < K; k++) {
    if (s[b + k]) old = k;
    const double u = localField(m, s, b + k);
    scratch[k] = u;
    if (u > top) top = u;
  }
  const int lost = top == -INFINITY;
  double total = 0.0;
  for (int32_t k = 0; k < K; k++) {
    const double w = lost ? 1.0 : exp(scratch[k] - top);
    scratch[k] = w;
    total += w;
  }
  const double target = uniform32(r) * total;
  int32_t pick = K - 1;
  double cum = 0.0;
  for (int32_t k = 0; k < K; k++) {
    cum += scratch[k];
    if (target < cum) {
      pick = k;
      break;
    }
  }
  while (scratch[pick] == 0.0) pick--;
  s[b + old] = 0;
  s[b + pick] = 1;
  if (acc) {
    const double inv = 1.0 / total;
    for (int32_t k = 0; k < K; k++) acc[b + k] += scratch[k] * inv;
  }
  return pick != old;
}

static double sweeps(const Form *m, Philox *r, uint8_t *s, int32_t nSweeps, double *acc, double *scratch) {
  double changed = 0;
  if (m->allFree) {
    const int32_t n = m->nBits;
    for (int32_t t = 0; t < nSweeps; t++) {
      int32_t c = 0;
      for (int32_t i = 0; i < n; i++) {
        const double p = 1.0 / (1.0 + exp(-localField(m, s, i)));
        const uint8_t bit = uniform32(r) < p ? 1 : 0;
        c += bit != s[i];
        s[i] = bit;
        if (acc) acc[i] += p;
      }
      changed += (double)c;
    }
    return changed;
  }
  for (int32_t t = 0; t < nSweeps; t++) {
    for (int32_t v = 0; v < m->nBlocks; v++) {
      const int32_t b = m->blockStart[v];
      if (!m->oneHot[v]) {
        const double p = 1.0 / (1.0 + exp(-localField(m, s, b)));
        const uint8_t bit = uniform32(r) < p ? 1 : 0;
        if (bit != s[b]) changed += 1;
        s[b] = bit;
        if (acc) acc[b] += p;
        continue;
      }
      changed += oneHotUpdate(m, s, r, b, m->blockStart[v + 1] - b, acc, scratch);
    }
  }
  return changed;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* This process's CPU time: unlike the wall clock, not stretched when other jobs share the core. */
static double cpuNow(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc != 9) die("usage: gibbs.out verify|time MODEL SEEDLO SEEDHI CHAIN TAG SWEEPS OUT|WARMUP");
  const Form m = readForm(argv[2]);
  Philox r;
  memset(&r, 0, sizeof r);
  r.key0 = (uint32_t)strtoul(argv[3], 0, 10);
  r.key1 = (uint32_t)strtoul(argv[4], 0, 10);
  r.ctr2 = (uint32_t)strtoul(argv[5], 0, 10);
  r.ctr3 = (uint32_t)strtoul(argv[6], 0, 10);
  r.pos = 4;
  const int32_t nSweeps = (int32_t)atol(argv[7]);
  uint8_t *s = calloc((size_t)m.nBits + 1, 1);
  double *acc = calloc((size_t)m.nBits + 1, 8);
  double *scratch = calloc((size_t)m.maxBlock + 1, 8);
  if (!s || !acc || !scratch) die("out of memory");
  chainInit(&m, &r, s);
  if (strcmp(argv[1], "verify") == 0) {
    uint8_t *s0 = malloc((size_t)m.nBits + 1);
    memcpy(s0, s, (size_t)m.nBits);
    const double changed = sweeps(&m, &r, s, nSweeps, acc, scratch);
    FILE *f = fopen(argv[8], "wb");
    if (!f) die("cannot open output file");
    fwrite(&changed, 8, 1, f);
    fwrite(s0, 1, (size_t)m.nBits, f);
    fwrite(s, 1, (size_t)m.nBits, f);
    fwrite(acc, 8, (size_t)m.nBits, f);
    const uint32_t rng[7] = {r.ctr0, r.ctr1, r.pos, r.out[0], r.out[1], r.out[2], r.out[3]};
    fwrite(rng, 4, 7, f);
    fclose(f);
    return 0;
  }
  if (strcmp(argv[1], "time") == 0) {
    sweeps(&m, &r, s, (int32_t)atol(argv[8]), acc, scratch);
    const double t0 = now(), c0 = cpuNow();
    const double changed = sweeps(&m, &r, s, nSweeps, acc, scratch);
    const double t1 = now(), c1 = cpuNow();
    printf("%.9f %.0f %.9f\n", t1 - t0, changed, c1 - c0);
    return 0;
  }
  die("mode must be verify or time");
  return 2;
}
