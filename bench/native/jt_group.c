/*
 * Native reference of the junction tree's upward step as relaxmrf runs it (elimTableOp in mode 3
 * with an innermost pair summed, assembly/exact/exact_elim.ts: innerGroup with k = 2 and B
 * contiguous like A, under the outer odometer), for bench/exact-kernel.ts: out[j] = A[2j] B[2j] +
 * A[2j + 1] B[2j + 1] over the two inner dimensions, each output written once and the largest
 * tracked, the odometer moving every operand's offset per inner call.
 * Input file (little-endian): i32 nd; i32 len[nd], so[nd], sa[nd], sb[nd] (element strides; the
 * first two dimensions are the summed pair and the outputs' run); i32 sizeA, sizeB, sizeOut;
 * f64 A[sizeA], B[sizeB]. Usage: jt_group.out FILE REPEATS — one untimed run, then prints "seconds sum max" (the median
 * of the repeats' seconds; sum: every output entry added up). Build: gcc -O3 -march=...
 * -ffp-contract=off.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int32_t nd, *len, *so, *sa, *sb;
static double *A, *B, *out;

static void *readArr(FILE *fp, size_t count, size_t size) {
  void *p = malloc(count * size + 16);
  if (fread(p, size, count, fp) != count) { fprintf(stderr, "short file\n"); exit(1); }
  return p;
}

static double run(int32_t *cnt) {
  const int m = len[1];
  double mx = 0;
  size_t po = 0, pa = 0, pb = 0;
  for (int d = 0; d < nd; d++) cnt[d] = 0;
  for (;;) {
    const double *a = A + pa, *b = B + pb;
    double *o = out + po;
    for (int j = 0; j < m; j++) {
      const double s = a[2 * j] * b[2 * j] + a[2 * j + 1] * b[2 * j + 1];
      o[j] = s;
      mx = s > mx ? s : mx;
    }
    int d = 2;
    for (; d < nd; d++) {
      if (++cnt[d] < len[d]) {
        po += so[d]; pa += sa[d]; pb += sb[d];
        break;
      }
      cnt[d] = 0;
      po -= (size_t)so[d] * (len[d] - 1); pa -= (size_t)sa[d] * (len[d] - 1); pb -= (size_t)sb[d] * (len[d] - 1);
    }
    if (d == nd) break;
  }
  return mx;
}

static int cmp(const void *x, const void *y) {
  const double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s FILE REPEATS\n", argv[0]); return 2; }
  FILE *fp = fopen(argv[1], "rb");
  if (!fp) { perror(argv[1]); return 2; }
  int32_t *n = readArr(fp, 1, 4);
  nd = n[0];
  len = readArr(fp, nd, 4); so = readArr(fp, nd, 4); sa = readArr(fp, nd, 4); sb = readArr(fp, nd, 4);
  int32_t *sizes = readArr(fp, 3, 4);
  A = readArr(fp, sizes[0], 8); B = readArr(fp, sizes[1], 8);
  out = malloc((size_t)sizes[2] * 8 + 16);
  for (int32_t i = 0; i < sizes[2]; i++) out[i] = 0; /* memory touched before timing, as in the bench's WASM */
  fclose(fp);
  const int reps = atoi(argv[2]);
  double *secs = malloc(sizeof(double) * reps), mx = 0;
  int32_t cnt[64];
  /* One untimed run first, as the bench does for WASM: code and tables warm in every build. */
  run(cnt);
  for (int r = 0; r < reps; r++) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    mx = run(cnt);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    secs[r] = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
  }
  qsort(secs, reps, sizeof(double), cmp);
  double sum = 0;
  for (int32_t i = 0; i < sizes[2]; i++) sum += out[i];
  printf("%.9g %.17g %.17g\n", secs[reps / 2], sum, mx);
  return 0;
}
