/*
 * Native reference of relaxmrf's sequential Gibbs sweep on the factor graph
 * (assembly/samplers/factorgibbs.ts), for bench/factor-gibbs.ts. The SAME algorithm as the WASM
 * kernel and bench/js/factor-gibbs.ts:
 *   - the model's factor graph (card, scopes, table offsets, log tables; last scope variable
 *     fastest), read from a binary file the bench writes; scope strides and the variable -> factor
 *     incidence rows built here exactly as bindings/core/bound-fg.ts builds them (factors in
 *     increasing order per variable), so every sum runs in the same order;
 *   - a systematic scan over the variables; variable v's conditional log-potentials summed factor
 *     by factor along its incidence row, max-shifted, exp'd and drawn by one uniform32 word
 *     (cumulative weights, first index whose cumulative weight exceeds the target, never a
 *     zero-weight state); all states forbidden -> uniform weights; one-state variables draw nothing;
 *   - Philox4x32-10 (key = seed words, counter words 2-3 = chain id, stream tag);
 *   - Rao-Blackwellised accumulation acc += w_k * (1 / total).
 * exp() is the C library's (glibc >= 2.28: the same table-driven algorithm as AssemblyScript's).
 * Build: gcc -O3 -march=... -ffp-contract=off.
 *
 * Usage:
 *   factorgibbs.out verify MODEL SEEDLO SEEDHI CHAIN TAG SWEEPS OUT
 *       init, SWEEPS sweeps with accumulation; writes to OUT: f64 changed, i32[n] initial states,
 *       i32[n] final states, f64[sum of cards] accumulator.
 *   factorgibbs.out time MODEL SEEDLO SEEDHI CHAIN TAG SWEEPS WARMUP
 *       init, WARMUP untimed sweeps, SWEEPS timed sweeps (with accumulation); prints "seconds changed".
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  int32_t n, nFactors, nScope, nTable, maxCard, nStates;
  int32_t *card, *scopeStart, *scopeVars, *scopeStride, *tableStart;
  double *tables;
  int32_t *incStart, *incFactor, *incStride;
} Graph;

#include "philox.h"

static void die(const char *msg) {
  fprintf(stderr, "factorgibbs.out: %s\n", msg);
  exit(2);
}

static void *readN(FILE *f, size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) die("out of memory");
  if (bytes && fread(p, 1, bytes, f) != bytes) die("model file truncated");
  return p;
}

/* Model file: "RMRFFG01", i32 n nFactors nScope nTable, then card, scopeStart, scopeVars, tableStart, tables. */
static Graph readGraph(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) die("cannot open model file");
  char magic[8];
  if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "RMRFFG01", 8) != 0) die("bad model file magic");
  int32_t h[4];
  if (fread(h, 4, 4, f) != 4) die("model file truncated");
  Graph g = {0};
  g.n = h[0], g.nFactors = h[1], g.nScope = h[2], g.nTable = h[3];
  g.card = readN(f, 4 * (size_t)g.n);
  g.scopeStart = readN(f, 4 * (size_t)(g.nFactors + 1));
  g.scopeVars = readN(f, 4 * (size_t)g.nScope);
  g.tableStart = readN(f, 4 * (size_t)g.nFactors);
  g.tables = readN(f, 8 * (size_t)g.nTable);
  fclose(f);
  g.scopeStride = malloc(4 * (size_t)(g.nScope + 1));
  for (int32_t fa = 0; fa < g.nFactors; fa++) {
    int32_t stride = 1;
    for (int32_t p = g.scopeStart[fa + 1] - 1; p >= g.scopeStart[fa]; p--) {
      g.scopeStride[p] = stride;
      stride *= g.card[g.scopeVars[p]];
    }
  }
  g.incStart = calloc((size_t)g.n + 1, 4);
  for (int32_t p = 0; p < g.nScope; p++) g.incStart[g.scopeVars[p] + 1]++;
  for (int32_t v = 0; v < g.n; v++) g.incStart[v + 1] += g.incStart[v];
  g.incFactor = malloc(4 * (size_t)(g.nScope + 1));
  g.incStride = malloc(4 * (size_t)(g.nScope + 1));
  int32_t *fill = malloc(4 * (size_t)(g.n + 1));
  memcpy(fill, g.incStart, 4 * (size_t)g.n);
  for (int32_t fa = 0; fa < g.nFactors; fa++)
    for (int32_t p = g.scopeStart[fa]; p < g.scopeStart[fa + 1]; p++) {
      const int32_t q = fill[g.scopeVars[p]]++;
      g.incFactor[q] = fa;
      g.incStride[q] = g.scopeStride[p];
    }
  free(fill);
  g.maxCard = 1;
  for (int32_t v = 0; v < g.n; v++) {
    if (g.card[v] > g.maxCard) g.maxCard = g.card[v];
    g.nStates += g.card[v];
  }
  return g;
}

static void chainInit(const Graph *g, Philox *r, int32_t *x) {
  for (int32_t v = 0; v < g->n; v++) {
    const int32_t K = g->card[v];
    int32_t k = 0;
    if (K != 1) {
      k = (int32_t)(uniform32(r) * (double)K);
      if (k > K - 1) k = K - 1;
    }
    x[v] = k;
  }
}

static inline int32_t factorEntry(const Graph *g, int32_t f, const int32_t *x) {
  int32_t idx = g->tableStart[f];
  for (int32_t p = g->scopeStart[f]; p < g->scopeStart[f + 1]; p++) idx += x[g->scopeVars[p]] * g->scopeStride[p];
  return idx;
}

static double sweeps(const Graph *g, Philox *r, int32_t *x, int64_t count, double *acc, double *w) {
  double changed = 0;
  for (int64_t t = 0; t < count; t++) {
    double *row = acc;
    for (int32_t v = 0; v < g->n; v++) {
      const int32_t K = g->card[v];
      if (K == 1) {
        if (row) row[0] += 1.0;
        row += acc ? 1 : 0;
        continue;
      }
      for (int32_t k = 0; k < K; k++) w[k] = 0.0;
      const int32_t xv = x[v];
      for (int32_t q = g->incStart[v]; q < g->incStart[v + 1]; q++) {
        const int32_t stride = g->incStride[q];
        const double *at = g->tables + (factorEntry(g, g->incFactor[q], x) - xv * stride);
        for (int32_t k = 0; k < K; k++) w[k] += at[(int64_t)k * stride];
      }
      double top = -INFINITY;
      for (int32_t k = 0; k < K; k++) top = w[k] > top ? w[k] : top;
      const int lost = top == -INFINITY;
      double total = 0.0;
      for (int32_t k = 0; k < K; k++) {
        w[k] = lost ? 1.0 : exp(w[k] - top);
        total += w[k];
      }
      const double target = uniform32(r) * total;
      double cum = 0.0;
      int32_t below = 0;
      for (int32_t k = 0; k < K; k++) {
        cum += w[k];
        below += !(target < cum);
      }
      int32_t pick = below < K - 1 ? below : K - 1;
      while (w[pick] == 0.0) pick--;
      if (pick != xv) changed += 1;
      x[v] = pick;
      if (row) {
        const double inv = 1.0 / total;
        for (int32_t k = 0; k < K; k++) row[k] += w[k] * inv;
        row += K;
      }
    }
  }
  return changed;
}

int main(int argc, char **argv) {
  if (argc < 9) die("usage: verify|time MODEL SEEDLO SEEDHI CHAIN TAG SWEEPS OUT|WARMUP");
  const Graph g = readGraph(argv[2]);
  Philox r = {(uint32_t)strtoul(argv[3], 0, 10), (uint32_t)strtoul(argv[4], 0, 10), 0, 0, (uint32_t)strtoul(argv[5], 0, 10), (uint32_t)strtoul(argv[6], 0, 10), {0, 0, 0, 0}, 4};
  const int64_t n = strtoll(argv[7], 0, 10);
  int32_t *x = malloc(4 * (size_t)g.n), *x0 = malloc(4 * (size_t)g.n);
  double *acc = calloc((size_t)g.nStates, 8), *w = malloc(8 * (size_t)g.maxCard);
  chainInit(&g, &r, x);
  if (strcmp(argv[1], "verify") == 0) {
    memcpy(x0, x, 4 * (size_t)g.n);
    const double changed = sweeps(&g, &r, x, n, acc, w);
    FILE *f = fopen(argv[8], "wb");
    if (!f) die("cannot write output");
    fwrite(&changed, 8, 1, f);
    fwrite(x0, 4, (size_t)g.n, f);
    fwrite(x, 4, (size_t)g.n, f);
    fwrite(acc, 8, (size_t)g.nStates, f);
    fclose(f);
    return 0;
  }
  if (strcmp(argv[1], "time") == 0) {
    sweeps(&g, &r, x, strtoll(argv[8], 0, 10), acc, w);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    const double changed = sweeps(&g, &r, x, n, acc, w);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.9f %.0f\n", (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec), changed);
    return 0;
  }
  die("first argument must be verify or time");
  return 2;
}
