/*
 * The canonical binary pairwise form as the native references read it (bench/common.ts
 * writeFormFile): "RMRFCSR1", i32 nBlocks nBits nnz allFree maxBlock, then the arrays in Form order.
 * Define PROGRAM (the executable's name, for messages) before including.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int32_t nBlocks, nBits, nnz, allFree, maxBlock;
  int32_t *blockStart; /* nBlocks + 1 */
  uint8_t *oneHot;     /* nBlocks */
  double *a;           /* nBits */
  int32_t *rowPtr;     /* nBits + 1 */
  int32_t *col;        /* nnz */
  double *val;         /* nnz */
} Form;

static void die(const char *msg) {
  fprintf(stderr, PROGRAM ": %s\n", msg);
  exit(2);
}

static void *readN(FILE *f, size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) die("out of memory");
  if (bytes && fread(p, 1, bytes, f) != bytes) die("file truncated");
  return p;
}

static Form readForm(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) die("cannot open model file");
  char magic[8];
  if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "RMRFCSR1", 8) != 0) die("bad model file magic");
  int32_t h[5];
  if (fread(h, 4, 5, f) != 5) die("model file truncated");
  Form m = {h[0], h[1], h[2], h[3], h[4], 0, 0, 0, 0, 0, 0};
  m.blockStart = readN(f, 4 * (size_t)(m.nBlocks + 1));
  m.oneHot = readN(f, (size_t)m.nBlocks);
  m.a = readN(f, 8 * (size_t)m.nBits);
  m.rowPtr = readN(f, 4 * (size_t)(m.nBits + 1));
  m.col = readN(f, 4 * (size_t)m.nnz);
  m.val = readN(f, 8 * (size_t)m.nnz);
  fclose(f);
  return m;
}
