/*
 * Native reference of relaxmrf's parallel BP sweep (assembly/variational/bp.ts, schedule 0), for
 * bench/bp.ts. The SAME algorithm and data layout as the WASM kernel, for the factors the bench's
 * grid has (unary factors and pairs of binary variables; anything else is refused):
 *   - log-messages per (factor, scope position, state), shifted to max 0; unary factors' messages set
 *     once (their table), pair messages by m(1) − m(0) = c + log((1 + A t)/(1 + B t)), t = e^ν
 *     (ν ≤ 0; else the mirrored form), with (c, A, B) per factor and direction precomputed;
 *   - commit: damping (none here), residual max_k |e^new − e^old| where |new − old| exceeds it;
 *   - then per variable its belief Σ_f m_fv (shifted to max 0) and its var → factor messages b − m
 *     into the non-unary factors.
 * exp/log are the C library's. Build: gcc -O3 -march=x86-64-v2 (or -march=native) -ffp-contract=off.
 *
 * Usage: bp.out MODEL SWEEPS OUT — reads the factor graph the bench wrote, runs SWEEPS parallel
 * sweeps (timed), prints "seconds_per_sweep" and writes the node marginals (f64, by variable and
 * state) to OUT for the bench to compare with the WASM kernel's.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int32_t n, F, S, T;
static int32_t *card, *scopeStart, *scopeVars, *tableStart;
static double *tables;
static int32_t *msgStart, *incStart, *incFactor, *incPos, *belStart;
static double *fac2var, *var2fac, *newMsg, *belief, *pc;

static void *readAll(FILE *f, size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (fread(p, 1, bytes, f) != bytes) { fprintf(stderr, "short model file\n"); exit(2); }
  return p;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void shiftToMax(double *x, int K) {
  double mx = -INFINITY;
  for (int k = 0; k < K; k++) mx = x[k] > mx ? x[k] : mx;
  if (mx == -INFINITY) return;
  for (int k = 0; k < K; k++) x[k] -= mx;
}

static inline int arity(int f) { return scopeStart[f + 1] - scopeStart[f]; }

static void refreshAll(int skipUnary) {
  for (int v = 0; v < n; v++) {
    int K = card[v];
    double *b = belief + belStart[v];
    for (int k = 0; k < K; k++) b[k] = 0.0;
    for (int q = incStart[v]; q < incStart[v + 1]; q++) {
      const double *m = fac2var + msgStart[incPos[q]];
      for (int k = 0; k < K; k++) if (m[k] != 0.0) b[k] += m[k];
    }
    shiftToMax(b, K);
    for (int q = incStart[v]; q < incStart[v + 1]; q++) {
      int f = incFactor[q];
      if (skipUnary && arity(f) == 1) continue;
      int off = msgStart[incPos[q]];
      for (int k = 0; k < K; k++) {
        double mk = fac2var[off + k];
        if (mk != -INFINITY) { var2fac[off + k] = b[k] - mk; continue; }
        double sum = 0.0;
        for (int r = incStart[v]; r < incStart[v + 1]; r++) {
          if (incFactor[r] == f) continue;
          double x = fac2var[msgStart[incPos[r]] + k];
          if (x != 0.0) sum += x;
        }
        var2fac[off + k] = sum;
      }
      shiftToMax(var2fac + off, K);
    }
  }
}

static inline double pairDelta(double c, double A, double B, const double *nin) {
  double nu = nin[1] - nin[0];
  if (nu <= 0.0) {
    double t = exp(nu);
    return c + log((1.0 + A * t) / (1.0 + B * t));
  }
  double t = exp(-nu);
  return c + log((t + A) / (t + B));
}

static inline void storeDelta(double *out, double d) {
  if (d > 0.0) { out[0] = -d; out[1] = 0.0; } else { out[0] = 0.0; out[1] = d; }
}

static double sweep(void) {
  for (int f = 0; f < F; f++) {
    if (arity(f) != 2) continue;
    int p0 = scopeStart[f];
    double *c = pc + 6 * f;
    storeDelta(newMsg + msgStart[p0], pairDelta(c[0], c[1], c[2], var2fac + msgStart[p0 + 1]));
    storeDelta(newMsg + msgStart[p0 + 1], pairDelta(c[3], c[4], c[5], var2fac + msgStart[p0]));
  }
  double res = 0.0;
  for (int f = 0; f < F; f++) {
    if (arity(f) < 2) continue;
    for (int p = scopeStart[f]; p < scopeStart[f + 1]; p++) {
      int K = card[scopeVars[p]], off = msgStart[p];
      for (int k = 0; k < K; k++) {
        double o = fac2var[off + k], x = newMsg[off + k];
        if (o != x && fabs(x - o) > res) { double d = fabs(exp(x) - exp(o)); res = d > res ? d : res; }
        fac2var[off + k] = x;
      }
    }
  }
  refreshAll(1);
  return res;
}

int main(int argc, char **argv) {
  if (argc != 4) { fprintf(stderr, "usage: bp.out MODEL SWEEPS OUT\n"); return 2; }
  FILE *f = fopen(argv[1], "rb");
  if (!f) { perror(argv[1]); return 2; }
  int32_t hdr[4];
  if (fread(hdr, 4, 4, f) != 4) return 2;
  n = hdr[0]; F = hdr[1]; S = hdr[2]; T = hdr[3];
  card = readAll(f, 4 * (size_t)n);
  scopeStart = readAll(f, 4 * (size_t)(F + 1));
  scopeVars = readAll(f, 4 * (size_t)S);
  tableStart = readAll(f, 4 * (size_t)F);
  tables = readAll(f, 8 * (size_t)T);
  fclose(f);
  for (int g = 0; g < F; g++) {
    int a = arity(g);
    if (a > 2 || a == 0 || (a == 2 && (card[scopeVars[scopeStart[g]]] != 2 || card[scopeVars[scopeStart[g] + 1]] != 2))) {
      fprintf(stderr, "factor %d: only unary factors and binary pairs\n", g);
      return 2;
    }
  }
  msgStart = malloc(4 * (size_t)(S + 1));
  msgStart[0] = 0;
  for (int p = 0; p < S; p++) msgStart[p + 1] = msgStart[p] + card[scopeVars[p]];
  belStart = malloc(4 * (size_t)(n + 1));
  belStart[0] = 0;
  for (int v = 0; v < n; v++) belStart[v + 1] = belStart[v] + card[v];
  incStart = calloc((size_t)n + 1, 4);
  for (int p = 0; p < S; p++) incStart[scopeVars[p] + 1]++;
  for (int v = 0; v < n; v++) incStart[v + 1] += incStart[v];
  incFactor = malloc(4 * (size_t)S);
  incPos = malloc(4 * (size_t)S);
  int32_t *fill = calloc((size_t)n, 4);
  for (int g = 0; g < F; g++)
    for (int p = scopeStart[g]; p < scopeStart[g + 1]; p++) {
      int q = incStart[scopeVars[p]] + fill[scopeVars[p]]++;
      incFactor[q] = g;
      incPos[q] = p;
    }
  int M = msgStart[S];
  fac2var = calloc((size_t)M, 8);
  var2fac = calloc((size_t)M, 8);
  newMsg = calloc((size_t)M, 8);
  belief = calloc((size_t)belStart[n], 8);
  pc = calloc(6 * (size_t)F, 8);
  for (int g = 0; g < F; g++) {
    const double *th = tables + tableStart[g];
    int p = scopeStart[g];
    if (arity(g) == 1) {
      for (int k = 0; k < card[scopeVars[p]]; k++) fac2var[msgStart[p] + k] = th[k];
      shiftToMax(fac2var + msgStart[p], card[scopeVars[p]]);
      continue;
    }
    double *c = pc + 6 * g;
    c[0] = th[2] - th[0]; c[1] = exp(th[3] - th[2]); c[2] = exp(th[1] - th[0]);
    c[3] = th[1] - th[0]; c[4] = exp(th[3] - th[1]); c[5] = exp(th[2] - th[0]);
  }
  refreshAll(0);
  int sweeps = atoi(argv[2]);
  double t0 = now(), res = 0.0;
  for (int s = 0; s < sweeps; s++) res = sweep();
  double secs = (now() - t0) / sweeps;
  refreshAll(0);
  FILE *out = fopen(argv[3], "wb");
  for (int v = 0; v < n; v++) {
    double z = 0.0, *b = belief + belStart[v];
    for (int k = 0; k < card[v]; k++) z += exp(b[k]);
    for (int k = 0; k < card[v]; k++) { double p = exp(b[k]) / z; fwrite(&p, 8, 1, out); }
  }
  fclose(out);
  printf("%.9g %.3g\n", secs, res);
  return 0;
}
