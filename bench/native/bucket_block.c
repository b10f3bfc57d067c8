/*
 * Native reference of relaxmrf's block kernel of bucket elimination (bucketBlock in
 * assembly/exact/exact_block.ts), for bench/exact-kernel.ts: the same outer odometer, runs and
 * segments, scalar inputs folded into one factor, products over the block, then the outputs'
 * gathers, in the same order of operations (a kind-1 run is summed in two lanes, as f64x2 does).
 * Input file (little-endian): i32 nOuter, nIn, nOut, B; i32 cards[nOuter]; then per table
 * (inputs, then outputs): i32 size, kind, R; i32 strides[nOuter]; i32 segs[B / R]; f64 data[size]
 * (outputs: zeros). Usage: bucket_block.out FILE REPEATS — one untimed run, then prints "seconds sum" (the median of the
 * repeats' seconds; sum: every output entry added up). Build: gcc -O3 -march=... -ffp-contract=off.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct { int32_t size, kind, R; int32_t *strides, *segs; double *data; } Table;

static int32_t nOuter, nIn, nOut, B;
static int32_t *cards;
static Table *tab;

static void *readArr(FILE *fp, size_t count, size_t size) {
  void *p = malloc(count * size + 16);
  if (fread(p, size, count, fp) != count) { fprintf(stderr, "short file\n"); exit(1); }
  return p;
}

static void run(double *buf, int32_t *digit, int32_t *off) {
  const int nT = nIn + nOut;
  for (int j = 0; j < nOuter; j++) digit[j] = 0;
  for (int t = 0; t < nT; t++) off[t] = 0;
  for (;;) {
    double c = 1;
    for (int t = 0; t < nIn; t++) if (tab[t].kind == 1 && tab[t].R == B) c *= tab[t].data[off[t]];
    int first = 1;
    for (int t = 0; t < nIn; t++) {
      const Table *T = &tab[t];
      const int R = T->R, nSeg = B / R;
      if (T->kind == 1 && R == B) continue;
      const double *base = T->data + off[t];
      double *b = buf;
      for (int s = 0; s < nSeg; s++, b += R) {
        if (T->kind == 1) {
          const double x = base[T->segs[s]] * (first ? c : 1);
          if (first) for (int r = 0; r < R; r++) b[r] = x;
          else for (int r = 0; r < R; r++) b[r] *= x;
        } else {
          const double *a = base + T->segs[s];
          if (first) for (int r = 0; r < R; r++) b[r] = a[r] * c;
          else for (int r = 0; r < R; r++) b[r] *= a[r];
        }
      }
      first = 0;
    }
    if (first) for (int b = 0; b < B; b++) buf[b] = c;
    for (int t = nIn; t < nT; t++) {
      const Table *T = &tab[t];
      const int R = T->R, nSeg = B / R;
      double *base = T->data + off[t];
      const double *b = buf;
      for (int s = 0; s < nSeg; s++, b += R) {
        if (T->kind == 1) {
          double l0 = 0, l1 = 0, a1 = 0;
          if ((R & 1) == 0) for (int r = 0; r < R; r += 2) { l0 += b[r]; l1 += b[r + 1]; }
          else for (int r = 0; r < R; r++) a1 += b[r];
          base[T->segs[s]] += a1 + l0 + l1;
        } else {
          double *a = base + T->segs[s];
          for (int r = 0; r < R; r++) a[r] += b[r];
        }
      }
    }
    int j = nOuter - 1;
    for (; j >= 0; j--) {
      const int d = digit[j] + 1, K = cards[j];
      const int back = d < K ? -1 : K - 1;
      digit[j] = d < K ? d : 0;
      for (int t = 0; t < nT; t++) off[t] -= back * tab[t].strides[j];
      if (d < K) break;
    }
    if (j < 0) break;
  }
}

static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: bucket_block.out FILE REPEATS\n"); return 2; }
  FILE *fp = fopen(argv[1], "rb");
  if (!fp) { perror(argv[1]); return 1; }
  int32_t *head = readArr(fp, 4, 4);
  nOuter = head[0], nIn = head[1], nOut = head[2], B = head[3];
  cards = readArr(fp, nOuter > 0 ? nOuter : 1, 4);
  if (nOuter == 0) cards[0] = 1;
  tab = calloc(nIn + nOut, sizeof(Table));
  for (int t = 0; t < nIn + nOut; t++) {
    int32_t *h = readArr(fp, 3, 4);
    tab[t].size = h[0], tab[t].kind = h[1], tab[t].R = h[2];
    tab[t].strides = readArr(fp, nOuter, 4);
    tab[t].segs = readArr(fp, B / h[2], 4);
    tab[t].data = readArr(fp, h[0], 8);
  }
  fclose(fp);
  const int reps = atoi(argv[2]);
  double *buf = aligned_alloc(64, ((size_t)B * 8 + 63) / 64 * 64), *secs = malloc(sizeof(double) * reps);
  int32_t *digit = malloc(4 * (nOuter + 1)), *off = malloc(4 * (nIn + nOut));
  /* One untimed run first, as the bench does for WASM: code and tables warm in every build. */
  for (int t = nIn; t < nIn + nOut; t++) memset(tab[t].data, 0, 8 * (size_t)tab[t].size);
  run(buf, digit, off);
  for (int k = 0; k < reps; k++) {
    for (int t = nIn; t < nIn + nOut; t++) memset(tab[t].data, 0, 8 * (size_t)tab[t].size);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    run(buf, digit, off);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    secs[k] = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
  }
  qsort(secs, reps, sizeof(double), cmp);
  double sum = 0;
  for (int t = nIn; t < nIn + nOut; t++) for (int e = 0; e < tab[t].size; e++) sum += tab[t].data[e];
  printf("%.9f %.17g\n", secs[reps / 2], sum);
  return 0;
}
