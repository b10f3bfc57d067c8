/*
 * Native reference of relaxmrf's linear-algebra kernels (assembly/linalg/) for bench/linalg.ts: the
 * SAME loops on the same layouts.
 *   - dense Cholesky (cholesky.ts): row-major n x n, column by column, L_ij = (A_ij - dot) / L_jj,
 *     every dot product of two contiguous rows in four partial sums (k mod 4; the lanes of the
 *     kernel's two f64x2 accumulators, GCC vector extensions here), combined as ((s0 + s2) + (s1 + s3)),
 *     then the tail; rows i two at a time against row j;
 *   - sparse numeric Cholesky (sparse_cholesky.ts choleskyNumeric): left-looking over the symbolic
 *     pattern (George & Liu's linked lists), P (W + D) P^T with W in CSR over bits.
 * With -ffp-contract=off (WASM has no fused multiply-add without relaxed SIMD) the arithmetic is the
 * kernels', bit for bit.
 *
 * Input file (written by the bench, little-endian): "RMRFLIN1", i32 kind;
 *   kind 0 (dense):  i32 n, f64 A[n*n];
 *   kind 1 (sparse): i32 n, i32 nnzA, i32 nnzL, i32 rowPtr[n+1], i32 col[nnzA], f64 val[nnzA],
 *                    f64 d[n], i32 perm[n], i32 pos[n], i32 colPtr[n+1], i32 rowIdx[nnzL].
 * Usage:
 *   linalg.out verify FILE OUT     writes L (dense: f64 n*n; sparse: f64 Lx[nnzL], f64 diag[n]) to OUT
 *   linalg.out time FILE CALLS     one untimed call, then CALLS timed calls; prints "seconds checksum"
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  int32_t kind, n, nnzA, nnzL;
  double *A;                 /* dense */
  int32_t *rowPtr, *col;     /* sparse */
  double *val, *d;
  int32_t *perm, *pos, *colPtr, *rowIdx;
  double *L, *Lx, *diag, *w; /* outputs and workspace */
  int32_t *headL, *link, *nextEntry;
} Problem;

static void die(const char *msg) {
  fprintf(stderr, "linalg.out: %s\n", msg);
  exit(2);
}

static void *readN(FILE *f, size_t bytes) {
  void *p = aligned_alloc(64, bytes ? (bytes + 63) / 64 * 64 : 64);
  if (!p) die("out of memory");
  if (bytes && fread(p, 1, bytes, f) != bytes) die("input file truncated");
  return p;
}

static void *zeroed(size_t bytes) {
  void *p = aligned_alloc(64, bytes ? (bytes + 63) / 64 * 64 : 64);
  if (!p) die("out of memory");
  memset(p, 0, bytes);
  return p;
}

static Problem readProblem(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) die("cannot open input file");
  char magic[8];
  if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "RMRFLIN1", 8) != 0) die("bad magic");
  Problem P;
  memset(&P, 0, sizeof P);
  if (fread(&P.kind, 4, 1, f) != 1 || fread(&P.n, 4, 1, f) != 1) die("truncated header");
  const size_t n = (size_t)P.n;
  if (P.kind == 0) {
    P.A = readN(f, n * n * 8);
    P.L = zeroed(n * n * 8);
  } else if (P.kind == 1) {
    if (fread(&P.nnzA, 4, 1, f) != 1 || fread(&P.nnzL, 4, 1, f) != 1) die("truncated header");
    P.rowPtr = readN(f, (n + 1) * 4);
    P.col = readN(f, (size_t)P.nnzA * 4);
    P.val = readN(f, (size_t)P.nnzA * 8);
    P.d = readN(f, n * 8);
    P.perm = readN(f, n * 4);
    P.pos = readN(f, n * 4);
    P.colPtr = readN(f, (n + 1) * 4);
    P.rowIdx = readN(f, (size_t)P.nnzL * 4);
    P.Lx = zeroed((size_t)P.nnzL * 8);
    P.diag = zeroed(n * 8);
    P.w = zeroed(n * 8);
    P.headL = zeroed(n * 4);
    P.link = zeroed(n * 4);
    P.nextEntry = zeroed(n * 4);
  } else die("unknown kind");
  fclose(f);
  return P;
}

/* Two-lane f64 vectors (GCC vector extensions; unaligned loads like v128.load): the kernel's f64x2. */
typedef double v2df __attribute__((vector_size(16), aligned(8)));
#define LD(p) (*(const v2df *)(p))

static inline double rowDot(const double *restrict a, const double *restrict b, int len) {
  v2df acc0 = {0.0, 0.0}, acc1 = {0.0, 0.0};
  int k = 0;
  for (; k + 3 < len; k += 4) {
    acc0 = acc0 + LD(a + k) * LD(b + k);
    acc1 = acc1 + LD(a + k + 2) * LD(b + k + 2);
  }
  const v2df acc = acc0 + acc1;
  double s = acc[0] + acc[1];
  for (; k < len; k++) s += a[k] * b[k];
  return s;
}

__attribute__((noinline)) static int denseCholesky(const double *restrict A, double *restrict L, int n) {
  memset(L, 0, (size_t)n * (size_t)n * 8);
  for (int j = 0; j < n; j++) {
    double *rj = L + (size_t)j * n;
    const double s = A[(size_t)j * n + j] - rowDot(rj, rj, j);
    if (!(s > 0)) return j;
    const double ljj = sqrt(s);
    rj[j] = ljj;
    int i = j + 1;
    for (; i + 1 < n; i += 2) { /* rows two at a time against row j, each in the kernel's lane order */
      const double *restrict ri = L + (size_t)i * n, *restrict ri1 = ri + n;
      v2df a0 = {0.0, 0.0}, a1 = {0.0, 0.0}, b0 = {0.0, 0.0}, b1 = {0.0, 0.0};
      int k = 0;
      for (; k + 3 < j; k += 4) {
        const v2df x0 = LD(rj + k), x1 = LD(rj + k + 2);
        a0 = a0 + LD(ri + k) * x0;
        a1 = a1 + LD(ri + k + 2) * x1;
        b0 = b0 + LD(ri1 + k) * x0;
        b1 = b1 + LD(ri1 + k + 2) * x1;
      }
      const v2df sa = a0 + a1, sb = b0 + b1;
      double ta = sa[0] + sa[1], tb = sb[0] + sb[1];
      for (; k < j; k++) {
        ta += ri[k] * rj[k];
        tb += ri1[k] * rj[k];
      }
      L[(size_t)i * n + j] = (A[(size_t)i * n + j] - ta) / ljj;
      L[(size_t)(i + 1) * n + j] = (A[(size_t)(i + 1) * n + j] - tb) / ljj;
    }
    if (i < n) {
      double *ri = L + (size_t)i * n;
      ri[j] = (A[(size_t)i * n + j] - rowDot(ri, rj, j)) / ljj;
    }
  }
  return -1;
}

__attribute__((noinline)) static int choleskyNumeric(Problem *P) {
  const int n = P->n;
  const int32_t *restrict rowPtr = P->rowPtr, *restrict col = P->col, *restrict perm = P->perm, *restrict pos = P->pos;
  const int32_t *restrict colPtr = P->colPtr, *restrict rowIdx = P->rowIdx;
  const double *restrict val = P->val, *restrict d = P->d;
  double *restrict Lx = P->Lx, *restrict diag = P->diag, *restrict w = P->w;
  int32_t *restrict headL = P->headL, *restrict link = P->link, *restrict nextEntry = P->nextEntry;
  for (int j = 0; j < n; j++) headL[j] = -1;
  memset(w, 0, (size_t)n * 8);
  for (int j = 0; j < n; j++) {
    const int bit = perm[j];
    w[j] = d[bit];
    for (int q = rowPtr[bit], e = rowPtr[bit + 1]; q < e; q++) {
      const int i = pos[col[q]];
      if (i > j) w[i] = val[q];
    }
    int k = headL[j];
    headL[j] = -1;
    double wj = w[j];
    while (k >= 0) {
      const int nk = link[k];
      const int p = nextEntry[k];
      const double ljk = Lx[p];
      wj -= ljk * ljk;
      const int end = colPtr[k + 1];
      int q = p + 1;
      for (; q + 1 < end; q += 2) { /* two entries per pass, as the kernel */
        const int r0 = rowIdx[q], r1 = rowIdx[q + 1];
        const double x0 = Lx[q], x1 = Lx[q + 1];
        w[r0] = w[r0] - x0 * ljk;
        w[r1] = w[r1] - x1 * ljk;
      }
      if (q < end) {
        const int r = rowIdx[q];
        w[r] = w[r] - Lx[q] * ljk;
      }
      if (p + 1 < end) {
        nextEntry[k] = p + 1;
        const int r = rowIdx[p + 1];
        link[k] = headL[r];
        headL[r] = k;
      }
      k = nk;
    }
    w[j] = 0;
    if (!(wj > 0)) {
      memset(w, 0, (size_t)n * 8);
      return bit;
    }
    const double ljj = sqrt(wj);
    diag[j] = ljj;
    const double inv = 1 / ljj;
    const int lo = colPtr[j], hi = colPtr[j + 1];
    for (int q = lo; q < hi; q++) {
      const int r = rowIdx[q];
      Lx[q] = w[r] * inv;
      w[r] = 0;
    }
    if (hi > lo) {
      nextEntry[j] = lo;
      const int r = rowIdx[lo];
      link[j] = headL[r];
      headL[r] = j;
    }
  }
  return -1;
}

static int run(Problem *P) {
  return P->kind == 0 ? denseCholesky(P->A, P->L, P->n) : choleskyNumeric(P);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc < 4) die("usage: linalg.out verify FILE OUT | time FILE CALLS");
  Problem P = readProblem(argv[2]);
  if (!strcmp(argv[1], "verify")) {
    if (run(&P) >= 0) die("not positive definite");
    FILE *o = fopen(argv[3], "wb");
    if (!o) die("cannot write output");
    if (P.kind == 0) fwrite(P.L, 8, (size_t)P.n * P.n, o);
    else {
      fwrite(P.Lx, 8, (size_t)P.nnzL, o);
      fwrite(P.diag, 8, (size_t)P.n, o);
    }
    fclose(o);
    return 0;
  }
  if (!strcmp(argv[1], "time")) {
    const int calls = atoi(argv[3]);
    run(&P);
    const double t0 = now();
    int rc = 0;
    for (int c = 0; c < calls; c++) rc |= run(&P) >= 0;
    const double t = now() - t0;
    const double check = P.kind == 0 ? P.L[(size_t)P.n * P.n - 1] : P.diag[P.n - 1];
    printf("%.9f %.17g\n", t, rc ? NAN : check);
    return 0;
  }
  die("unknown command");
  return 2;
}
