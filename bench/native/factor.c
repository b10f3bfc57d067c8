/*
 * Native reference of relaxmrf's factor products u = M x and g = M^T v (assembly/factor.ts), for
 * bench/relax-speed.ts. The SAME loops as the WASM kernels, on the same layouts:
 *   - dense, row-major n x m: u_i = sum_k M_ik x_k accumulated in two partial sums (even k and odd k,
 *     the two lanes of the kernel's f64x2 accumulator), added at the end, then the odd tail;
 *     g = M^T v four rows per pass, g_k = (((g_k + v_i M_ik) + v_i+1 M_i+1,k) + ...) in row order
 *     (groups whose four v_i are 0 skipped), the remaining rows one at a time;
 *   - sparse CSR (n rows, column indices < m): u_i = sum over the row in CSR order; g likewise
 *     scattered row by row (rows with v_i = 0 skipped).
 * Built by the bench with gcc -O3 -march=native -ffp-contract=off (WASM has no fused multiply-add
 * without relaxed SIMD, so with contraction off the arithmetic is the kernel's, bit for bit) and, for
 * comparison, a second time with -ffp-contract=fast (FMA where the target has it).
 *
 * Input file (written by the bench, little-endian):
 *   "RMRFFAC1", i32 kind (0 dense, 1 sparse), i32 n, i32 m, i32 nnz,
 *   dense: f64 values[n*m]; sparse: i32 rowPtr[n+1], i32 col[nnz], f64 values[nnz];
 *   f64 x[m], f64 v[n].
 * Usage:
 *   factor.out verify FILE OUT     writes f64 u[n] then f64 g[m] to OUT
 *   factor.out time FILE OP CALLS WARM
 *       OP = mul (u = M x) or mult (g = M^T v); WARM untimed calls, then CALLS timed calls;
 *       prints "seconds checksum" on stdout.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  int32_t kind, n, m, nnz;
  double *values;
  int32_t *rowPtr, *col;
  double *x, *v;
} Factor;

static void die(const char *msg) {
  fprintf(stderr, "factor.out: %s\n", msg);
  exit(2);
}

static void *readN(FILE *f, size_t bytes) {
  void *p = aligned_alloc(64, bytes ? (bytes + 63) / 64 * 64 : 64);
  if (!p) die("out of memory");
  if (bytes && fread(p, 1, bytes, f) != bytes) die("input file truncated");
  return p;
}

static Factor readFactor(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) die("cannot open input file");
  char magic[8];
  if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "RMRFFAC1", 8) != 0) die("bad magic");
  Factor F;
  int32_t h[4];
  if (fread(h, 4, 4, f) != 4) die("truncated header");
  F.kind = h[0], F.n = h[1], F.m = h[2], F.nnz = h[3];
  F.rowPtr = NULL, F.col = NULL;
  if (F.kind == 0) {
    F.values = readN(f, (size_t)F.n * (size_t)F.m * 8);
  } else if (F.kind == 1) {
    F.rowPtr = readN(f, (size_t)(F.n + 1) * 4);
    F.col = readN(f, (size_t)F.nnz * 4);
    F.values = readN(f, (size_t)F.nnz * 8);
  } else die("unknown kind");
  F.x = readN(f, (size_t)F.m * 8);
  F.v = readN(f, (size_t)F.n * 8);
  fclose(f);
  return F;
}

__attribute__((noinline)) static void denseApply(const Factor *F, const double *restrict x, double *restrict u) {
  const int n = F->n, m = F->m;
  for (int i = 0; i < n; i++) {
    const double *restrict row = F->values + (size_t)i * (size_t)m;
    double s0 = 0.0, s1 = 0.0; /* the two lanes of the kernel's f64x2 accumulator */
    int k = 0;
    for (; k + 1 < m; k += 2) {
      s0 = s0 + row[k] * x[k];
      s1 = s1 + row[k + 1] * x[k + 1];
    }
    double s = s0 + s1;
    if (k < m) s += row[k] * x[k];
    u[i] = s;
  }
}

__attribute__((noinline)) static void denseApplyT(const Factor *F, const double *restrict v, double *restrict g) {
  const int n = F->n, m = F->m, m2 = m & ~1;
  memset(g, 0, (size_t)m * 8);
  int i = 0;
  /* four rows per pass, each g[k] receiving the rows' terms in row order (as the kernel) */
  for (; i + 3 < n; i += 4) {
    const double v0 = v[i], v1 = v[i + 1], v2 = v[i + 2], v3 = v[i + 3];
    if (v0 == 0 && v1 == 0 && v2 == 0 && v3 == 0) continue;
    const double *restrict r0 = F->values + (size_t)i * (size_t)m;
    const double *restrict r1 = r0 + m, *restrict r2 = r1 + m, *restrict r3 = r2 + m;
    for (int k = 0; k < m2; k++) g[k] = g[k] + v0 * r0[k] + v1 * r1[k] + v2 * r2[k] + v3 * r3[k];
    if (m2 < m) g[m2] = g[m2] + v0 * r0[m2] + v1 * r1[m2] + v2 * r2[m2] + v3 * r3[m2];
  }
  for (; i < n; i++) {
    const double *restrict row = F->values + (size_t)i * (size_t)m;
    const double vi = v[i];
    if (vi == 0) continue;
    for (int k = 0; k < m; k++) g[k] = g[k] + vi * row[k];
  }
}

__attribute__((noinline)) static void sparseApply(const Factor *F, const double *restrict x, double *restrict u) {
  const int32_t *restrict rp = F->rowPtr, *restrict col = F->col;
  const double *restrict val = F->values;
  for (int i = 0; i < F->n; i++) {
    double s = 0.0;
    const int end = rp[i + 1];
    for (int k = rp[i]; k < end; k++) s += val[k] * x[col[k]];
    u[i] = s;
  }
}

__attribute__((noinline)) static void sparseApplyT(const Factor *F, const double *restrict v, double *restrict g) {
  const int32_t *restrict rp = F->rowPtr, *restrict col = F->col;
  const double *restrict val = F->values;
  memset(g, 0, (size_t)F->m * 8);
  for (int i = 0; i < F->n; i++) {
    const double vi = v[i];
    if (vi == 0) continue;
    const int end = rp[i + 1];
    for (int k = rp[i]; k < end; k++) g[col[k]] += vi * val[k];
  }
}

static void mul(const Factor *F, const double *x, double *u) {
  if (F->kind == 0) denseApply(F, x, u);
  else sparseApply(F, x, u);
}

static void mulT(const Factor *F, const double *v, double *g) {
  if (F->kind == 0) denseApplyT(F, v, g);
  else sparseApplyT(F, v, g);
}

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc < 4) die("usage: factor.out verify FILE OUT | time FILE mul|mult CALLS WARM");
  const Factor F = readFactor(argv[2]);
  double *u = aligned_alloc(64, ((size_t)F.n * 8 + 63) / 64 * 64);
  double *g = aligned_alloc(64, ((size_t)F.m * 8 + 63) / 64 * 64);
  if (!u || !g) die("out of memory");
  if (strcmp(argv[1], "verify") == 0) {
    mul(&F, F.x, u);
    mulT(&F, F.v, g);
    FILE *o = fopen(argv[3], "wb");
    if (!o) die("cannot open output file");
    if (fwrite(u, 8, (size_t)F.n, o) != (size_t)F.n || fwrite(g, 8, (size_t)F.m, o) != (size_t)F.m) die("write failed");
    fclose(o);
    return 0;
  }
  if (strcmp(argv[1], "time") == 0 && argc == 6) {
    const int transpose = strcmp(argv[3], "mult") == 0;
    if (!transpose && strcmp(argv[3], "mul") != 0) die("OP must be mul or mult");
    const long calls = atol(argv[4]), warm = atol(argv[5]);
    for (long r = 0; r < warm; r++) transpose ? mulT(&F, F.v, g) : mul(&F, F.x, u);
    const double t0 = seconds();
    for (long r = 0; r < calls; r++) transpose ? mulT(&F, F.v, g) : mul(&F, F.x, u);
    const double t = seconds() - t0;
    double check = 0;
    if (transpose) for (int k = 0; k < F.m; k++) check += g[k];
    else for (int i = 0; i < F.n; i++) check += u[i];
    printf("%.9f %.17g\n", t, check);
    return 0;
  }
  die("usage: factor.out verify FILE OUT | time FILE mul|mult CALLS WARM");
  return 2;
}
