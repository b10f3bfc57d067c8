/*
 * Native reference of one PCD epoch (bindings/learn/learn.ts with sequential Gibbs particles), for
 * bench/learn.ts. The SAME algorithm as assembly/learn/stats.ts and bench/js/learn.ts: the machine's
 * canonical CSR form (read from the file bench/common.ts writeFormFile writes), statistics
 * x_p (visible bits, hidden units at sigma(u_p)) summed eight samples at a time (x stored bit-major,
 * one pass over W's rows per chunk), 100 persistent particles advanced by systematic-scan Gibbs with
 * Philox uniforms, then theta += rate (pos / B - neg / P). Build: gcc -O3 -march=x86-64-v2 (or
 * -march=native) -ffp-contract=off.
 *
 * Usage: learn.out MODEL DATA nVisible rows batch particles sweeps reps
 *   DATA: rows * nVisible bytes of 0/1. Prints the median seconds of an epoch over reps epochs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROGRAM "learn.out"
#include "csr_form.h"
#include "philox.h"

#define CHUNK 8

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static inline double sigmoid(double u) { return 1.0 / (1.0 + exp(-u)); }

static inline double localField(const Form *m, const uint8_t *s, int32_t p) {
  double u = m->a[p];
  for (int32_t k = m->rowPtr[p]; k < m->rowPtr[p + 1]; k++) u += s[m->col[k]] ? m->val[k] : 0.0;
  return u;
}

/* Adds the statistics of `count` samples (sample i at base + idx(i) * stride) into statA, statW. */
static void accumulate(const Form *m, int nV, const uint8_t *base, size_t stride, const int32_t *rows, int count, double *statA, double *statW, double *x) {
  const int n = m->nBits;
  for (int i0 = 0; i0 < count; i0 += CHUNK) {
    const int c = count - i0 < CHUNK ? count - i0 : CHUNK;
    if (c < CHUNK) memset(x, 0, sizeof(double) * n * CHUNK);
    for (int j = 0; j < c; j++) {
      const uint8_t *s = base + (size_t)(rows ? rows[i0 + j] : i0 + j) * stride;
      for (int p = 0; p < nV; p++) x[p * CHUNK + j] = s[p];
      for (int p = nV; p < n; p++) x[p * CHUNK + j] = sigmoid(localField(m, s, p));
    }
    for (int p = 0; p < n; p++) {
      const double *xp = x + p * CHUNK;
      double sum = 0;
      for (int j = 0; j < CHUNK; j++) sum += xp[j];
      if (sum == 0) continue;
      statA[p] += sum;
      for (int32_t k = m->rowPtr[p]; k < m->rowPtr[p + 1]; k++) {
        const double *xq = x + m->col[k] * CHUNK;
        double t = 0;
        for (int j = 0; j < CHUNK; j++) t += xp[j] * xq[j];
        statW[k] += t;
      }
    }
  }
}

int main(int argc, char **argv) {
  if (argc != 9) die("usage: learn.out MODEL DATA nVisible rows batch particles sweeps reps");
  Form m = readForm(argv[1]);
  const int nV = atoi(argv[3]), rows = atoi(argv[4]), B = atoi(argv[5]), P = atoi(argv[6]), sweeps = atoi(argv[7]), reps = atoi(argv[8]);
  const int n = m.nBits;
  uint8_t *data = malloc((size_t)rows * nV);
  FILE *f = fopen(argv[2], "rb");
  if (!f || fread(data, 1, (size_t)rows * nV, f) != (size_t)rows * nV) die("cannot read the data file");
  fclose(f);
  uint8_t *chains = malloc((size_t)P * n);
  Philox *rng = malloc(sizeof(Philox) * P);
  for (int c = 0; c < P; c++) {
    Philox r = {1, 0, 0, 0, (uint32_t)c, 31, {0}, 4};
    rng[c] = r;
    for (int p = 0; p < n; p++) chains[(size_t)c * n + p] = uniform32(&rng[c]) < 0.5;
  }
  double *posA = calloc(n, 8), *negA = calloc(n, 8), *posW = calloc(m.nnz, 8), *negW = calloc(m.nnz, 8), *x = calloc((size_t)n * CHUNK, 8);
  int32_t *order = malloc(4 * (size_t)rows);
  for (int r = 0; r < rows; r++) order[r] = r;
  double *times = malloc(8 * (size_t)reps);
  const double rate = 0.01;
  for (int rep = 0; rep < reps; rep++) {
    const double t0 = now();
    for (int lo = 0; lo < rows; lo += B) {
      const int cnt = rows - lo < B ? rows - lo : B;
      accumulate(&m, nV, data, nV, order + lo, cnt, posA, posW, x);
      for (int c = 0; c < P; c++) {
        uint8_t *s = chains + (size_t)c * n;
        for (int t = 0; t < sweeps; t++)
          for (int p = 0; p < n; p++) s[p] = uniform32(&rng[c]) < sigmoid(localField(&m, s, p));
      }
      accumulate(&m, nV, chains, n, NULL, P, negA, negW, x);
      for (int p = 0; p < n; p++) {
        m.a[p] += rate * (posA[p] / cnt - negA[p] / P);
        posA[p] = negA[p] = 0;
      }
      for (int k = 0; k < m.nnz; k++) {
        m.val[k] += rate * (posW[k] / cnt - negW[k] / P);
        posW[k] = negW[k] = 0;
      }
    }
    times[rep] = now() - t0;
  }
  for (int i = 1; i < reps; i++)
    for (int j = i; j > 0 && times[j] < times[j - 1]; j--) {
      double t = times[j];
      times[j] = times[j - 1];
      times[j - 1] = t;
    }
  printf("%.6f\n", times[reps / 2]);
  return 0;
}
