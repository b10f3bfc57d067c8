/*
 * Native reference of relaxmrf's parallel BP sweep for binary pairs without damping
 * (assembly/variational/bp_odds.ts, linearSweep), for bench/bp.ts. The SAME algorithm and data
 * layout as the WASM kernel, for the factors the bench's grid has (unary factors and pairs of binary
 * variables; anything else is refused):
 *   - the setup of bp.ts: log-messages per (factor, scope position, state), shifted to max 0, unary
 *     factors' messages set once (their table); pair constants (c, A, B) per factor and direction;
 *   - the sweep on ratios: per pair k a record (r0, r1, e^c0, A0, B0, e^c1, A1, B1) and its variables;
 *     belief ratios R_v = e^{U_v} Π r (U_v the unary part), checked to be in the double range; each
 *     pair's two messages r = e^c (r_in + A R)/(r_in + B R) (R the other variable's belief ratio,
 *     r_in the message it got from this pair), committed at once, with the residual
 *     max_k |e^{m_new(k)} − e^{m_old(k)}| of the messages shifted to max 0 computed from the ratios;
 *   - at the end back to log-messages and beliefs, for the marginals.
 * Build: gcc -O3 -march=x86-64-v2 (or -march=native) -ffp-contract=off.
 *
 * Usage: bp.out MODEL SWEEPS OUT — reads the factor graph the bench wrote, runs SWEEPS parallel
 * sweeps (timed), prints "seconds_per_sweep cpu_seconds_per_sweep residual" and writes the node marginals (f64, by variable and
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
static double *fac2var, *var2fac, *belief, *pc;

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

/* The process's CPU time: the figure to compare on a loaded machine. */
static double cpuNow(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
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

/* Pair records (r0, r1, e^c0, A0, B0, e^c1, A1, B1), the pairs' factor and variables, e^U, R. */
static double *rec, *eU, *R;
static int32_t *pairF, *pairU, *pairV;
static int P;

static inline double pairRatio(double ec, double A, double B, double Rv, double r) {
  double x = ec * ((r + A * Rv) / (r + B * Rv));
  if (x < INFINITY && x == x) return x;
  if (Rv <= r) { double t = Rv / r; return ec * ((1.0 + A * t) / (1.0 + B * t)); }
  double t = r / Rv;
  return ec * ((t + A) / (t + B));
}

static inline double ratioResidual(double o, double x, double res) {
  double d;
  if (o > 1.0) d = x > 1.0 ? fabs(x - o) / (x * o) : fmax(1.0 - 1.0 / o, 1.0 - x);
  else d = x > 1.0 ? fmax(1.0 - 1.0 / x, 1.0 - o) : fabs(x - o);
  return d > res ? d : res;
}

static double sweep(void) {
  memcpy(R, eU, 8 * (size_t)n);
  for (int k = 0; k < P; k++) {
    R[pairU[k]] *= rec[8 * k];
    R[pairV[k]] *= rec[8 * k + 1];
  }
  for (int v = 0; v < n; v++)
    if (!(R[v] >= 2.2250738585072014e-308 && R[v] < INFINITY)) { fprintf(stderr, "belief ratio out of range\n"); exit(3); }
  double res = 0.0;
  for (int k = 0; k < P; k++) {
    double *r = rec + 8 * k;
    double r0 = r[0], r1 = r[1];
    double x0 = pairRatio(r[2], r[3], r[4], R[pairV[k]], r1);
    double x1 = pairRatio(r[5], r[6], r[7], R[pairU[k]], r0);
    res = ratioResidual(r0, x0, res);
    res = ratioResidual(r1, x1, res);
    r[0] = x0;
    r[1] = x1;
  }
  return res;
}

static inline void storeDelta(double *out, double d) {
  if (d > 0.0) { out[0] = -d; out[1] = 0.0; } else { out[0] = 0.0; out[1] = d; }
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
  double t0 = now(), c0 = cpuNow(), res = 0.0;
  /* Setup as bp_odds.ts (oddsSetup, linearSetup), inside the timed region as the kernel's. */
  rec = malloc(8 * 8 * (size_t)F);
  pairF = malloc(4 * (size_t)F); pairU = malloc(4 * (size_t)F); pairV = malloc(4 * (size_t)F);
  eU = malloc(8 * (size_t)n); R = malloc(8 * (size_t)n);
  for (int v = 0; v < n; v++) eU[v] = 0.0;
  P = 0;
  for (int g = 0; g < F; g++) {
    int p = scopeStart[g];
    if (arity(g) == 1) {
      const double *m = fac2var + msgStart[p];
      eU[scopeVars[p]] += m[1] - m[0];
      continue;
    }
    double *r = rec + 8 * P, *c = pc + 6 * g;
    const double *m0 = fac2var + msgStart[p], *m1 = fac2var + msgStart[p + 1];
    r[0] = exp(m0[1] - m0[0]); r[1] = exp(m1[1] - m1[0]);
    for (int j = 0; j < 2; j++) { r[2 + 3 * j] = exp(c[3 * j]); r[3 + 3 * j] = c[3 * j + 1]; r[4 + 3 * j] = c[3 * j + 2]; }
    pairF[P] = g; pairU[P] = scopeVars[p]; pairV[P] = scopeVars[p + 1];
    P++;
  }
  for (int v = 0; v < n; v++) eU[v] = exp(eU[v]);
  for (int s = 0; s < sweeps; s++) res = sweep();
  for (int k = 0; k < P; k++) {
    int p = scopeStart[pairF[k]];
    storeDelta(fac2var + msgStart[p], log(rec[8 * k]));
    storeDelta(fac2var + msgStart[p + 1], log(rec[8 * k + 1]));
  }
  double secs = (now() - t0) / sweeps, cpuSecs = (cpuNow() - c0) / sweeps;
  refreshAll(0);
  FILE *out = fopen(argv[3], "wb");
  for (int v = 0; v < n; v++) {
    double z = 0.0, *b = belief + belStart[v];
    for (int k = 0; k < card[v]; k++) z += exp(b[k]);
    for (int k = 0; k < card[v]; k++) { double p = exp(b[k]) / z; fwrite(&p, 8, 1, out); }
  }
  fclose(out);
  printf("%.9g %.9g %.3g\n", secs, cpuSecs, res);
  return 0;
}
