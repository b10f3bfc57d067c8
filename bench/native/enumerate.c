/*
 * Native reference of relaxmrf's enumeration kernel (assembly/exact/exact_enum.ts), for
 * bench/enumeration.ts: the same Gray-code walk over the digits, per-factor entry updates, zero
 * counting, running shift, blocks and compensated sums as the WASM kernel and bench/js/enumerate.ts,
 * on the flat arrays the bench writes:
 *   i32 n, F, S, T, nd, nb; i32 card[n], scopeStart[F+1], scopeVars[S], scopeStride[S],
 *   tableStart[F], incStart[n+1], incFactor[S], incStride[S], digits[nd]; f64 tables[T].
 * Usage: enumerate.out MODEL REPEATS — prints "seconds logZ marg[0] marg[1]" (the median of the
 * repeats' seconds). Build: gcc -O3 -march=... -ffp-contract=off.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int32_t n, F, S, T, nd, nb;
static int32_t *card, *scopeStart, *scopeVars, *scopeStride, *tableStart, *incStart, *incFactor, *incStride, *digits;
static double *tables;

static void *readArr(FILE *fp, size_t count, size_t size) {
  void *p = malloc(count * size + 16);
  if (fread(p, size, count, fp) != count) { fprintf(stderr, "short model file\n"); exit(1); }
  return p;
}

static void kadd(double *s, double *c, int i, double v) {
  double a = s[i], t = a + v;
  c[i] += fabs(a) >= fabs(v) ? (a - t) + v : (v - t) + a;
  s[i] = t;
}

static double run(double *outMarg) {
  int32_t *off = calloc(n, 4), *x = calloc(n, 4), *dir = malloc(4 * (nd + 1)), *entry = calloc(F + 1, 4);
  int entries = 0;
  for (int v = 0; v < n; v++) { off[v] = entries; entries += card[v]; }
  double *marg = calloc(entries, 8), *margC = calloc(entries, 8), *acc = calloc(entries, 8), *start = calloc(n, 8);
  for (int j = 0; j < nd; j++) dir[j] = 1;
  double M = -INFINITY, Sum = 0, Sc = 0;
  for (;;) {
    double phi = 0; int z = 0;
    for (int f = 0; f < F; f++) {
      int e = tableStart[f];
      for (int p = scopeStart[f]; p < scopeStart[f + 1]; p++) e += x[scopeVars[p]] * scopeStride[p];
      entry[f] = e;
      double t = tables[e];
      if (t == -INFINITY) z++; else phi += t;
    }
    double sb = 0;
    for (int j = 0; j < nb; j++) {
      int v = digits[j];
      start[v] = 0;
      for (int t = 0; t < card[v]; t++) acc[off[v] + t] = 0;
    }
    int j = 0;
    for (;;) {
      if (z == 0) {
        if (phi > M + 600) {
          if (M != -INFINITY) {
            double r = exp(M - phi);
            for (int q = 0; q < nb; q++) {
              int v = digits[q];
              start[v] *= r;
              for (int t = 0; t < card[v]; t++) acc[off[v] + t] *= r;
            }
            for (int q = 0; q < nd; q++) {
              int v = digits[q];
              for (int t = 0; t < card[v]; t++) { marg[off[v] + t] *= r; margC[off[v] + t] *= r; }
            }
            Sum *= r; Sc *= r; sb *= r;
          }
          M = phi;
        }
        sb += exp(phi - M);
      }
      j = 0;
      while (j < nd) {
        int v = digits[j], nx = x[v] + dir[j];
        if (nx >= 0 && nx < card[v]) break;
        dir[j] = -dir[j];
        j++;
      }
      if (j >= nb) break;
      int u = digits[j], old = x[u], d = dir[j], ou = off[u];
      acc[ou + old] += sb - start[u];
      start[u] = sb;
      for (int q = incStart[u]; q < incStart[u + 1]; q++) {
        int f = incFactor[q], i0 = entry[f], i1 = i0 + d * incStride[q];
        entry[f] = i1;
        double t0 = tables[i0], t1 = tables[i1];
        if (t0 == -INFINITY) z--; else phi -= t0;
        if (t1 == -INFINITY) z++; else phi += t1;
      }
      x[u] = old + d;
    }
    for (int q = 0; q < nb; q++) {
      int v = digits[q];
      acc[off[v] + x[v]] += sb - start[v];
      for (int t = 0; t < card[v]; t++) kadd(marg, margC, off[v] + t, acc[off[v] + t]);
    }
    for (int q = nb; q < nd; q++) kadd(marg, margC, off[digits[q]] + x[digits[q]], sb);
    double t = Sum + sb;
    Sc += fabs(Sum) >= fabs(sb) ? (Sum - t) + sb : (sb - t) + Sum;
    Sum = t;
    if (j >= nd) break;
    x[digits[j]] += dir[j];
  }
  double total = Sum + Sc;
  for (int i = 0; i < 2 && i < entries; i++) outMarg[i] = (marg[i] + margC[i]) / total;
  free(off); free(x); free(dir); free(entry); free(marg); free(margC); free(acc); free(start);
  return M + log(total);
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: enumerate.out MODEL REPEATS\n"); return 2; }
  FILE *fp = fopen(argv[1], "rb");
  if (!fp) { perror(argv[1]); return 1; }
  int32_t h[6];
  if (fread(h, 4, 6, fp) != 6) { fprintf(stderr, "short model file\n"); return 1; }
  n = h[0]; F = h[1]; S = h[2]; T = h[3]; nd = h[4]; nb = h[5];
  card = readArr(fp, n, 4); scopeStart = readArr(fp, F + 1, 4); scopeVars = readArr(fp, S, 4); scopeStride = readArr(fp, S, 4);
  tableStart = readArr(fp, F, 4); incStart = readArr(fp, n + 1, 4); incFactor = readArr(fp, S, 4); incStride = readArr(fp, S, 4);
  digits = readArr(fp, nd, 4); tables = readArr(fp, T, 8);
  fclose(fp);
  int repeats = atoi(argv[2]);
  double logZ = 0, marg[2] = {0, 0};
  double *secs = malloc(sizeof(double) * (repeats > 0 ? repeats : 1));
  for (int r = 0; r < repeats; r++) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    logZ = run(marg);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
    int i = r;
    while (i > 0 && secs[i - 1] > s) { secs[i] = secs[i - 1]; i--; }
    secs[i] = s;
  }
  double median = repeats % 2 ? secs[repeats / 2] : 0.5 * (secs[repeats / 2 - 1] + secs[repeats / 2]);
  printf("%.9f %.17g %.17g %.17g\n", median, logZ, marg[0], marg[1]);
  return 0;
}
