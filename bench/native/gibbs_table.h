/*
 * Native reference of relaxmrf's probability-table Gibbs kernel (assembly/samplers/gibbs_table.ts),
 * included by gibbs_lanes.c: per free-bit site of degree ≤ 8, p for every neighbour pattern (the
 * kernels' arithmetic: a + Σ (bit ? W : +0.0) in CSR order, AssemblyScript's exp, the division) and
 * its accept threshold T = #{w : w + 0.5 < p·2^32}; identical sites (degree, bias, couplings, bit for
 * bit) share a table; the sweeps gather the chains' patterns one byte per chain, compare each word
 * with T and add p; sites of higher degree sum their fields. The same chains as sweepsF64.
 */

#define TABLE_MAX_DEGREE 8

static int sameSite(const Form *m, int32_t i, int32_t j) {
  const int32_t d = m->rowPtr[i + 1] - m->rowPtr[i];
  if (d != m->rowPtr[j + 1] - m->rowPtr[j]) return 0;
  if (memcmp(&m->a[i], &m->a[j], 8)) return 0;
  return memcmp(&m->val[m->rowPtr[i]], &m->val[m->rowPtr[j]], 8 * (size_t)d) == 0;
}

static uint64_t mix(uint64_t h, uint64_t x) {
  h ^= x;
  h *= 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 29);
}

static uint64_t siteHash(const Form *m, int32_t i) {
  const int32_t d = m->rowPtr[i + 1] - m->rowPtr[i];
  uint64_t h = mix(0x243F6A8885A308D3ull, (uint64_t)d), x;
  memcpy(&x, &m->a[i], 8);
  h = mix(h, x);
  for (int32_t k = 0; k < d; k++) memcpy(&x, &m->val[m->rowPtr[i] + k], 8), h = mix(h, x);
  return h;
}

static void tableEntry(double *e, double p) {
  const double P = p * 4294967296.0;
  int64_t T = 0;
  if (P > 0) {
    const double f = floor(P);
    T = (int64_t)f + (f + 0.5 < P);
    if (T > 4294967296ll) T = 4294967296ll;
  }
  e[0] = p;
  memcpy(&e[1], &T, 8);
}

static void tableBuild(Batch *bt) {
  const Form *m = bt->m;
  const int32_t n = m->nBits;
  if (!m->allFree) die("f64table needs a model of free bits");
  int32_t *off = malloc(4 * (size_t)n + 4);
  size_t cap = 1;
  while (cap <= 2 * (size_t)n) cap <<= 1;
  int32_t *hash = calloc(cap, 4);
  int64_t total = 0;
  for (int32_t i = 0; i < n; i++) {
    const int32_t d = m->rowPtr[i + 1] - m->rowPtr[i];
    if (d > TABLE_MAX_DEGREE) {
      off[i] = -1;
      continue;
    }
    size_t slot = siteHash(m, i) & (cap - 1);
    int32_t rep = -1;
    for (; hash[slot]; slot = (slot + 1) & (cap - 1)) {
      if (sameSite(m, hash[slot] - 1, i)) {
        rep = hash[slot] - 1;
        break;
      }
    }
    if (rep >= 0) {
      off[i] = off[rep];
      continue;
    }
    hash[slot] = i + 1;
    off[i] = (int32_t)total;
    total += (int64_t)1 << d;
  }
  free(hash);
  double *table = aligned_alloc(16, 16 * (size_t)(total + 1));
  int32_t next = 0;
  for (int32_t i = 0; i < n; i++) {
    if (off[i] != next) continue;
    const int32_t d = m->rowPtr[i + 1] - m->rowPtr[i], k0 = m->rowPtr[i];
    for (int32_t P = 0; P < 1 << d; P++) {
      double u = m->a[i];
      for (int32_t k = 0; k < d; k++) u += ((P >> k) & 1) ? m->val[k0 + k] : 0.0;
      const v2d p = (v2d){1.0, 1.0} / ((v2d){1.0, 1.0} + expPair(-((v2d){0, 0} + u)));
      tableEntry(table + 2 * (size_t)(next + P), p[0]);
    }
    next += 1 << d;
  }
  bt->table.off = off;
  bt->table.table = table;
}

static inline __attribute__((always_inline)) void sweepsTable(Batch *bt, int32_t sweeps, const int quad) {
  const Form *m = bt->m;
  const int32_t B = quad ? 4 : 2, n = m->nBits;
  uint8_t *s = bt->s;
  double *acc = bt->acc;
  const int32_t *off = bt->table.off, *rowPtr = m->rowPtr, *col = m->col;
  const double *table = bt->table.table;
  const v2d one = {1.0, 1.0}, zero = {0.0, 0.0};
  int64_t changed[4] = {0, 0, 0, 0}; /* locals: stores through s could alias the batch's counters */
  for (int32_t t = 0; t < sweeps; t++) {
    for (int32_t i = 0; i < n; i++) {
      const int32_t k0 = rowPtr[i], kEnd = rowPtr[i + 1], o = off[i];
      const v4u *words = streamsNext(&bt->st);
      const v4u w = words[0];
      uint32_t nu = 0;
      double p[4];
      if (o >= 0) {
        uint32_t idx = 0;
        for (int32_t k = k0; k < kEnd; k++) {
          const uint8_t *q = s + (size_t)col[k] * B;
          uint32_t x;
          if (quad) memcpy(&x, q, 4);
          else x = (uint32_t)q[0] | ((uint32_t)q[1] << 8);
          idx += x << (k - k0);
        }
        const double *tab = table + 2 * (size_t)o;
        for (int c = 0; c < B; c++) {
          const double *e = tab + 2 * ((idx >> (8 * c)) & 255);
          int64_t T;
          memcpy(&T, &e[1], 8);
          nu |= (uint32_t)((int64_t)w[c] < T) << (8 * c);
          p[c] = e[0];
        }
      } else {
        v2d uA = zero + m->a[i], uB = uA;
        for (int32_t k = k0; k < kEnd; k++) {
          const uint8_t *q = s + (size_t)col[k] * B;
          const v2i wk = (v2i)(zero + m->val[k]);
          uA += (v2d)(wk & (v2i){-(int64_t)q[0], -(int64_t)q[1]});
          if (quad) uB += (v2d)(wk & (v2i){-(int64_t)q[2], -(int64_t)q[3]});
        }
        const v2d pA = one / (one + expPair(-uA));
        const v2i yesA = uniform2(words, 0) < pA;
        nu = (uint32_t)(yesA[0] & 1) | ((uint32_t)(yesA[1] & 1) << 8);
        p[0] = pA[0], p[1] = pA[1];
        if (quad) {
          const v2d pB = one / (one + expPair(-uB));
          const v2i yesB = uniform2(words, 2) < pB;
          nu |= ((uint32_t)(yesB[0] & 1) << 16) | ((uint32_t)(yesB[1] & 1) << 24);
          p[2] = pB[0], p[3] = pB[1];
        }
      }
      uint8_t *at = s + (size_t)i * B;
      uint32_t old;
      if (quad) memcpy(&old, at, 4), memcpy(at, &nu, 4);
      else old = (uint32_t)at[0] | ((uint32_t)at[1] << 8), at[0] = (uint8_t)nu, at[1] = (uint8_t)(nu >> 8);
      const uint32_t diff = old ^ nu;
      for (int c = 0; c < B; c++) changed[c] += (diff >> (8 * c)) & 1;
      if (acc) {
        double *q = acc + (size_t)i * B;
        for (int c = 0; c < B; c++) q[c] += p[c];
      }
    }
  }
  for (int c = 0; c < B; c++) bt->changed[c] += changed[c];
}
