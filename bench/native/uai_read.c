/*
 * Native reference of readUAI's parse (bindings/io/formats.ts, tokens.ts), for bench/io.ts: the
 * file read whole, whitespace-separated tokens, integers by strtol, table entries by strtod and
 * their natural log stored; scopes and tables in flat arrays. No duplicate-scope merging and no
 * checks beyond the counts: a lower bound for the same parse.
 * Usage: uai_read.out FILE REPEATS — prints "seconds sum" (the median of the repeats' seconds, and
 * the sum of the finite logs, so the work is not optimised away). Build: gcc -O3 -march=...
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char *text;
static size_t len, pos;

static char *token(void) {
  while (pos < len && (text[pos] == ' ' || (text[pos] >= 9 && text[pos] <= 13))) pos++;
  if (pos >= len) { fprintf(stderr, "unexpected end of input\n"); exit(1); }
  return text + pos;
}

static long integer(void) {
  char *s = token(), *end;
  long x = strtol(s, &end, 10);
  pos = end - text;
  return x;
}

static double entry(void) {
  char *s = token(), *end;
  double x = strtod(s, &end);
  pos = end - text;
  return x;
}

static double parse(void) {
  pos = 0;
  token();
  while (pos < len && !(text[pos] == ' ' || (text[pos] >= 9 && text[pos] <= 13))) pos++; /* MARKOV */
  long n = integer();
  int *card = malloc(sizeof(int) * n);
  for (long v = 0; v < n; v++) card[v] = (int)integer();
  long F = integer();
  long *scopeStart = malloc(sizeof(long) * (F + 1));
  int *scopeVars = malloc(sizeof(int) * (4 * F + 16));
  long cap = 4 * F + 16, S = 0;
  scopeStart[0] = 0;
  for (long f = 0; f < F; f++) {
    long a = integer();
    if (S + a > cap) { cap = 2 * (S + a); scopeVars = realloc(scopeVars, sizeof(int) * cap); }
    for (long k = 0; k < a; k++) scopeVars[S++] = (int)integer();
    scopeStart[f + 1] = S;
  }
  long tcap = 4 * F + 16, T = 0;
  double *tables = malloc(sizeof(double) * tcap), sum = 0;
  for (long f = 0; f < F; f++) {
    long size = integer();
    if (T + size > tcap) { tcap = 2 * (T + size); tables = realloc(tables, sizeof(double) * tcap); }
    for (long k = 0; k < size; k++) {
      double l = log(entry());
      tables[T++] = l;
      if (isfinite(l)) sum += l;
    }
  }
  free(card); free(scopeStart); free(scopeVars); free(tables);
  return sum;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: uai_read.out FILE REPEATS\n"); return 2; }
  FILE *fp = fopen(argv[1], "rb");
  if (!fp) { perror(argv[1]); return 1; }
  fseek(fp, 0, SEEK_END);
  len = (size_t)ftell(fp);
  fseek(fp, 0, SEEK_SET);
  text = malloc(len + 1);
  if (fread(text, 1, len, fp) != len) { fprintf(stderr, "short read\n"); return 1; }
  text[len] = 0;
  fclose(fp);
  int R = atoi(argv[2]);
  double *secs = malloc(sizeof(double) * R), sum = 0;
  for (int r = 0; r < R; r++) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    sum = parse();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    secs[r] = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
  }
  qsort(secs, R, sizeof(double), cmp);
  printf("%.6f %.17g\n", secs[R / 2], sum);
  return 0;
}
