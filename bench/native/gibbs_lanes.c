/*
 * Native reference of relaxmrf's batched Gibbs kernel (assembly/samplers/gibbs_lanes.ts), for
 * bench/lanes.ts: the SAME algorithm — B chains in lockstep, one chain per SIMD lane (f64: two
 * chains per 128-bit vector; f32: four), bit-major states s[i*B + c], the four-chain Philox
 * evaluation (lane = chain), the f64x2 exp (AssemblyScript's Math.exp, copied operation by
 * operation) or the f32x4 exp, masked neighbour sums in CSR order, the same one-hot softmax, and an
 * optional visiting order (colored scans). Written with GCC vector extensions, which compile to SSE
 * at -march=x86-64-v2 (128-bit, like WASM SIMD) and to AVX encodings of the same 128-bit
 * operations at -march=native. Build with -ffp-contract=off (WASM has no fused multiply-add).
 *
 * Usage:
 *   gibbs_lanes.out verify MODEL SEEDLO SEEDHI B TAG SWEEPS OUT PRECISION ORDER
 *       init, SWEEPS sweeps with accumulation; writes f64 changed[B], u8 s[nBits*B], f64 acc[nBits*B].
 *   gibbs_lanes.out time MODEL SEEDLO SEEDHI B TAG SWEEPS WARMUP PRECISION ORDER
 *       prints "seconds cpu-seconds" (wall clock, this process's CPU time) for SWEEPS timed sweeps after WARMUP untimed ones.
 * PRECISION: f64 | f32 | f64table (f64 with the probability table, gibbs_table.h). ORDER: a file of i32 block indices (a colored scan), or "-" (0, 1, …).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <smmintrin.h>

#define PROGRAM "gibbs_lanes.out"
#include "csr_form.h"

typedef double v2d __attribute__((vector_size(16)));
typedef int64_t v2i __attribute__((vector_size(16)));
typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));
typedef uint32_t v4u __attribute__((vector_size(16)));

/* The form's a and W values rounded to f32 (for the f32 lanes). */
typedef struct {
  float *a, *val;
} Form32;

static Form32 toF32(const Form *m) {
  Form32 f = {malloc(4 * (size_t)m->nBits + 4), malloc(4 * (size_t)m->nnz + 4)};
  for (int32_t i = 0; i < m->nBits; i++) f.a[i] = (float)m->a[i];
  for (int32_t k = 0; k < m->nnz; k++) f.val[k] = (float)m->val[k];
  return f;
}

/* ---- Philox4x32-10 for four chains at once (lane = chain), lockstep counters ---- */

typedef struct {
  uint32_t key0, key1, tag;
  uint64_t ctr;
  uint32_t pos;
  int32_t G;
  int pairs;  /* at most two chains: philoxPairs */
  v4u *ids;   /* G */
  v4u *words; /* G * 16: word vector 4b + k of group g = block b's word k */
} Streams;

/* 32×32 → 64-bit products of four lanes by a constant m: high and low words (pmuludq on even and odd lanes). */
static inline void mulhilo4(v4u x, __m128i m, v4u *hi, v4u *lo) {
  const __m128i pe = _mm_mul_epu32((__m128i)x, m), po = _mm_mul_epu32(_mm_srli_epi64((__m128i)x, 32), m);
  *lo = (v4u)_mm_blend_epi16(pe, _mm_slli_epi64(po, 32), 0xCC);
  *hi = (v4u)_mm_blend_epi16(_mm_srli_epi64(pe, 32), po, 0xCC);
}

/* Philox4x32-10 on four lanes at once: counters (x0, x1), chain ids, tag; out[k] = word k. */
static void philoxLanes(v4u *out, v4u x0, v4u x1, v4u ids, uint32_t tag, uint32_t key0, uint32_t key1) {
  v4u x2 = ids, x3 = (v4u){0, 0, 0, 0} + tag;
  const __m128i m0 = _mm_set1_epi32((int)0xD2511F53u), m1 = _mm_set1_epi32((int)0xCD9E8D57u);
  uint32_t k0 = key0, k1 = key1;
  for (int i = 0; i < 10; i++) {
    v4u h0, l0, h1, l1;
    mulhilo4(x0, m0, &h0, &l0);
    mulhilo4(x2, m1, &h1, &l1);
    const v4u n0 = h1 ^ x1 ^ k0, n2 = h0 ^ x3 ^ k1;
    x0 = n0, x1 = l1, x2 = n2, x3 = l0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = x0, out[1] = x1, out[2] = x2, out[3] = x3;
}

static void philoxChains(v4u *out, uint64_t ctr, v4u ids, uint32_t tag, uint32_t key0, uint32_t key1) {
  for (uint64_t b = 0; b < 4; b++) {
    const v4u x0 = (v4u){0, 0, 0, 0} + (uint32_t)(ctr + b), x1 = (v4u){0, 0, 0, 0} + (uint32_t)((ctr + b) >> 32);
    philoxLanes(out + 4 * b, x0, x1, ids, tag, key0, key1);
  }
}

/*
 * philoxChains for a batch of at most two chains (rng_lanes.ts philoxPairs): each evaluation takes
 * (chain 0, block b), (1, b), (0, b + 1), (1, b + 1); lanes 0, 1 of the word vectors get the words.
 */
static void philoxPairs(v4u *out, uint64_t ctr, v4u ids, uint32_t tag, uint32_t key0, uint32_t key1) {
  const v4u ids2 = {ids[0], ids[1], ids[0], ids[1]};
  for (uint64_t b = 0; b < 4; b += 2) {
    const uint64_t c0 = ctr + b, c1 = ctr + b + 1;
    v4u w[4];
    philoxLanes(w, (v4u){(uint32_t)c0, (uint32_t)c0, (uint32_t)c1, (uint32_t)c1}, (v4u){(uint32_t)(c0 >> 32), (uint32_t)(c0 >> 32), (uint32_t)(c1 >> 32), (uint32_t)(c1 >> 32)}, ids2, tag, key0, key1);
    for (int k = 0; k < 4; k++) {
      out[4 * b + k][0] = w[k][0], out[4 * b + k][1] = w[k][1];
      out[4 * (b + 1) + k][0] = w[k][2], out[4 * (b + 1) + k][1] = w[k][3];
    }
  }
}

/* Word vector of group 0 for this block (group g: + 16 g), refilling every group when used up. */
static inline const v4u *streamsNext(Streams *st) {
  if (st->pos >= 16) {
    if (st->pairs) philoxPairs(st->words, st->ctr, st->ids[0], st->tag, st->key0, st->key1);
    else for (int32_t g = 0; g < st->G; g++) philoxChains(st->words + 16 * g, st->ctr, st->ids[g], st->tag, st->key0, st->key1);
    st->ctr += 4;
    st->pos = 0;
  }
  return st->words + st->pos++;
}

/* ---- exp: AssemblyScript's Math.exp on two lanes (vmath.ts expPair), and expF32x4 ---- */
/* AssemblyScript's EXP_DATA_TAB (from musl's exp_data.c), as assembly/core/vmath.ts copies it. */
static const uint64_t EXP_TAB[256] = {
  0x0000000000000000ull, 0x3FF0000000000000ull, 0x3C9B3B4F1A88BF6Eull, 0x3FEFF63DA9FB3335ull,
  0xBC7160139CD8DC5Dull, 0x3FEFEC9A3E778061ull, 0xBC905E7A108766D1ull, 0x3FEFE315E86E7F85ull,
  0x3C8CD2523567F613ull, 0x3FEFD9B0D3158574ull, 0xBC8BCE8023F98EFAull, 0x3FEFD06B29DDF6DEull,
  0x3C60F74E61E6C861ull, 0x3FEFC74518759BC8ull, 0x3C90A3E45B33D399ull, 0x3FEFBE3ECAC6F383ull,
  0x3C979AA65D837B6Dull, 0x3FEFB5586CF9890Full, 0x3C8EB51A92FDEFFCull, 0x3FEFAC922B7247F7ull,
  0x3C3EBE3D702F9CD1ull, 0x3FEFA3EC32D3D1A2ull, 0xBC6A033489906E0Bull, 0x3FEF9B66AFFED31Bull,
  0xBC9556522A2FBD0Eull, 0x3FEF9301D0125B51ull, 0xBC5080EF8C4EEA55ull, 0x3FEF8ABDC06C31CCull,
  0xBC91C923B9D5F416ull, 0x3FEF829AAEA92DE0ull, 0x3C80D3E3E95C55AFull, 0x3FEF7A98C8A58E51ull,
  0xBC801B15EAA59348ull, 0x3FEF72B83C7D517Bull, 0xBC8F1FF055DE323Dull, 0x3FEF6AF9388C8DEAull,
  0x3C8B898C3F1353BFull, 0x3FEF635BEB6FCB75ull, 0xBC96D99C7611EB26ull, 0x3FEF5BE084045CD4ull,
  0x3C9AECF73E3A2F60ull, 0x3FEF54873168B9AAull, 0xBC8FE782CB86389Dull, 0x3FEF4D5022FCD91Dull,
  0x3C8A6F4144A6C38Dull, 0x3FEF463B88628CD6ull, 0x3C807A05B0E4047Dull, 0x3FEF3F49917DDC96ull,
  0x3C968EFDE3A8A894ull, 0x3FEF387A6E756238ull, 0x3C875E18F274487Dull, 0x3FEF31CE4FB2A63Full,
  0x3C80472B981FE7F2ull, 0x3FEF2B4565E27CDDull, 0xBC96B87B3F71085Eull, 0x3FEF24DFE1F56381ull,
  0x3C82F7E16D09AB31ull, 0x3FEF1E9DF51FDEE1ull, 0xBC3D219B1A6FBFFAull, 0x3FEF187FD0DAD990ull,
  0x3C8B3782720C0AB4ull, 0x3FEF1285A6E4030Bull, 0x3C6E149289CECB8Full, 0x3FEF0CAFA93E2F56ull,
  0x3C834D754DB0ABB6ull, 0x3FEF06FE0A31B715ull, 0x3C864201E2AC744Cull, 0x3FEF0170FC4CD831ull,
  0x3C8FDD395DD3F84Aull, 0x3FEEFC08B26416FFull, 0xBC86A3803B8E5B04ull, 0x3FEEF6C55F929FF1ull,
  0xBC924AEDCC4B5068ull, 0x3FEEF1A7373AA9CBull, 0xBC9907F81B512D8Eull, 0x3FEEECAE6D05D866ull,
  0xBC71D1E83E9436D2ull, 0x3FEEE7DB34E59FF7ull, 0xBC991919B3CE1B15ull, 0x3FEEE32DC313A8E5ull,
  0x3C859F48A72A4C6Dull, 0x3FEEDEA64C123422ull, 0xBC9312607A28698Aull, 0x3FEEDA4504AC801Cull,
  0xBC58A78F4817895Bull, 0x3FEED60A21F72E2Aull, 0xBC7C2C9B67499A1Bull, 0x3FEED1F5D950A897ull,
  0x3C4363ED60C2AC11ull, 0x3FEECE086061892Dull, 0x3C9666093B0664EFull, 0x3FEECA41ED1D0057ull,
  0x3C6ECCE1DAA10379ull, 0x3FEEC6A2B5C13CD0ull, 0x3C93FF8E3F0F1230ull, 0x3FEEC32AF0D7D3DEull,
  0x3C7690CEBB7AAFB0ull, 0x3FEEBFDAD5362A27ull, 0x3C931DBDEB54E077ull, 0x3FEEBCB299FDDD0Dull,
  0xBC8F94340071A38Eull, 0x3FEEB9B2769D2CA7ull, 0xBC87DECCDC93A349ull, 0x3FEEB6DAA2CF6642ull,
  0xBC78DEC6BD0F385Full, 0x3FEEB42B569D4F82ull, 0xBC861246EC7B5CF6ull, 0x3FEEB1A4CA5D920Full,
  0x3C93350518FDD78Eull, 0x3FEEAF4736B527DAull, 0x3C7B98B72F8A9B05ull, 0x3FEEAD12D497C7FDull,
  0x3C9063E1E21C5409ull, 0x3FEEAB07DD485429ull, 0x3C34C7855019C6EAull, 0x3FEEA9268A5946B7ull,
  0x3C9432E62B64C035ull, 0x3FEEA76F15AD2148ull, 0xBC8CE44A6199769Full, 0x3FEEA5E1B976DC09ull,
  0xBC8C33C53BEF4DA8ull, 0x3FEEA47EB03A5585ull, 0xBC845378892BE9AEull, 0x3FEEA34634CCC320ull,
  0xBC93CEDD78565858ull, 0x3FEEA23882552225ull, 0x3C5710AA807E1964ull, 0x3FEEA155D44CA973ull,
  0xBC93B3EFBF5E2228ull, 0x3FEEA09E667F3BCDull, 0xBC6A12AD8734B982ull, 0x3FEEA012750BDABFull,
  0xBC6367EFB86DA9EEull, 0x3FEE9FB23C651A2Full, 0xBC80DC3D54E08851ull, 0x3FEE9F7DF9519484ull,
  0xBC781F647E5A3ECFull, 0x3FEE9F75E8EC5F74ull, 0xBC86EE4AC08B7DB0ull, 0x3FEE9F9A48A58174ull,
  0xBC8619321E55E68Aull, 0x3FEE9FEB564267C9ull, 0x3C909CCB5E09D4D3ull, 0x3FEEA0694FDE5D3Full,
  0xBC7B32DCB94DA51Dull, 0x3FEEA11473EB0187ull, 0x3C94ECFD5467C06Bull, 0x3FEEA1ED0130C132ull,
  0x3C65EBE1ABD66C55ull, 0x3FEEA2F336CF4E62ull, 0xBC88A1C52FB3CF42ull, 0x3FEEA427543E1A12ull,
  0xBC9369B6F13B3734ull, 0x3FEEA589994CCE13ull, 0xBC805E843A19FF1Eull, 0x3FEEA71A4623C7ADull,
  0xBC94D450D872576Eull, 0x3FEEA8D99B4492EDull, 0x3C90AD675B0E8A00ull, 0x3FEEAAC7D98A6699ull,
  0x3C8DB72FC1F0EAB4ull, 0x3FEEACE5422AA0DBull, 0xBC65B6609CC5E7FFull, 0x3FEEAF3216B5448Cull,
  0x3C7BF68359F35F44ull, 0x3FEEB1AE99157736ull, 0xBC93091FA71E3D83ull, 0x3FEEB45B0B91FFC6ull,
  0xBC5DA9B88B6C1E29ull, 0x3FEEB737B0CDC5E5ull, 0xBC6C23F97C90B959ull, 0x3FEEBA44CBC8520Full,
  0xBC92434322F4F9AAull, 0x3FEEBD829FDE4E50ull, 0xBC85CA6CD7668E4Bull, 0x3FEEC0F170CA07BAull,
  0x3C71AFFC2B91CE27ull, 0x3FEEC49182A3F090ull, 0x3C6DD235E10A73BBull, 0x3FEEC86319E32323ull,
  0xBC87C50422622263ull, 0x3FEECC667B5DE565ull, 0x3C8B1C86E3E231D5ull, 0x3FEED09BEC4A2D33ull,
  0xBC91BBD1D3BCBB15ull, 0x3FEED503B23E255Dull, 0x3C90CC319CEE31D2ull, 0x3FEED99E1330B358ull,
  0x3C8469846E735AB3ull, 0x3FEEDE6B5579FDBFull, 0xBC82DFCD978E9DB4ull, 0x3FEEE36BBFD3F37Aull,
  0x3C8C1A7792CB3387ull, 0x3FEEE89F995AD3ADull, 0xBC907B8F4AD1D9FAull, 0x3FEEEE07298DB666ull,
  0xBC55C3D956DCAEBAull, 0x3FEEF3A2B84F15FBull, 0xBC90A40E3DA6F640ull, 0x3FEEF9728DE5593Aull,
  0xBC68D6F438AD9334ull, 0x3FEEFF76F2FB5E47ull, 0xBC91EEE26B588A35ull, 0x3FEF05B030A1064Aull,
  0x3C74FFD70A5FDDCDull, 0x3FEF0C1E904BC1D2ull, 0xBC91BDFBFA9298ACull, 0x3FEF12C25BD71E09ull,
  0x3C736EAE30AF0CB3ull, 0x3FEF199BDD85529Cull, 0x3C8EE3325C9FFD94ull, 0x3FEF20AB5FFFD07Aull,
  0x3C84E08FD10959ACull, 0x3FEF27F12E57D14Bull, 0x3C63CDAF384E1A67ull, 0x3FEF2F6D9406E7B5ull,
  0x3C676B2C6C921968ull, 0x3FEF3720DCEF9069ull, 0xBC808A1883CCB5D2ull, 0x3FEF3F0B555DC3FAull,
  0xBC8FAD5D3FFFFA6Full, 0x3FEF472D4A07897Cull, 0xBC900DAE3875A949ull, 0x3FEF4F87080D89F2ull,
  0x3C74A385A63D07A7ull, 0x3FEF5818DCFBA487ull, 0xBC82919E2040220Full, 0x3FEF60E316C98398ull,
  0x3C8E5A50D5C192ACull, 0x3FEF69E603DB3285ull, 0x3C843A59AC016B4Bull, 0x3FEF7321F301B460ull,
  0xBC82D52107B43E1Full, 0x3FEF7C97337B9B5Full, 0xBC892AB93B470DC9ull, 0x3FEF864614F5A129ull,
  0x3C74B604603A88D3ull, 0x3FEF902EE78B3FF6ull, 0x3C83C5EC519D7271ull, 0x3FEF9A51FBC74C83ull,
  0xBC8FF7128FD391F0ull, 0x3FEFA4AFA2A490DAull, 0xBC8DAE98E223747Dull, 0x3FEFAF482D8E67F1ull,
  0x3C8EC3BC41AA2008ull, 0x3FEFBA1BEE615A27ull, 0x3C842B94C3A9EB32ull, 0x3FEFC52B376BBA97ull,
  0x3C8A64A931D185EEull, 0x3FEFD0765B6E4540ull, 0xBC8E37BAE43BE3EDull, 0x3FEFDBFDAD9CBE14ull,
  0x3C77893B4D91CD9Dull, 0x3FEFE7C1819E90D8ull, 0x3C5305C14160CC89ull, 0x3FEFF3C22B8F71F1ull,
};

static inline double bitsToF64(uint64_t u) {
  double d;
  memcpy(&d, &u, 8);
  return d;
}

static inline v2d expPair(v2d x) {
  if (!(fabs(x[0]) < 512.0 && fabs(x[1]) < 512.0)) return (v2d){exp(x[0]), exp(x[1])};
  const v2d kInv = (v2d){0, 0} + bitsToF64(0x3FF71547652B82FEull) * 128.0, kShift = (v2d){0, 0} + bitsToF64(0x4338000000000000ull);
  const v2d kHi = (v2d){0, 0} + bitsToF64(0xBF762E42FEFA0000ull), kLo = (v2d){0, 0} + bitsToF64(0xBD0CF79ABC9E3B3Aull);
  const v2d c2 = (v2d){0, 0} + bitsToF64(0x3FDFFFFFFFFFFDBDull), c3 = (v2d){0, 0} + bitsToF64(0x3FC555555555543Cull);
  const v2d c4 = (v2d){0, 0} + bitsToF64(0x3FA55555CF172B91ull), c5 = (v2d){0, 0} + bitsToF64(0x3F81111167A4D017ull);
  const v2d kshift = kInv * x + kShift;
  const v2d kd = kshift - kShift;
  const v2d r = (x + kd * kHi) + kd * kLo;
  const v2i ki = (v2i)kshift;
  const v2i idx = ki & 127;
  const v2d tail = (v2d){bitsToF64(EXP_TAB[2 * idx[0]]), bitsToF64(EXP_TAB[2 * idx[1]])};
  const v2i sb = (v2i){(int64_t)EXP_TAB[2 * idx[0] + 1], (int64_t)EXP_TAB[2 * idx[1] + 1]} + (ki << 45);
  const v2d sbits = (v2d)sb;
  const v2d r2 = r * r;
  const v2d tmp = ((tail + r) + r2 * (c2 + r * c3)) + (r2 * r2) * (c4 + r * c5);
  return sbits + sbits * tmp;
}

static inline v4f expF32x4(v4f x) {
  const v4f hi = (v4f){0, 0, 0, 0} + 89.0f, lo = (v4f){0, 0, 0, 0} - 104.0f;
  for (int l = 0; l < 4; l++) x[l] = x[l] > hi[l] ? hi[l] : x[l] < lo[l] ? lo[l] : x[l]; /* NaN passes, as in WASM */
  v4f n;
  const v4f t = x * 1.44269504088896341f;
  for (int l = 0; l < 4; l++) n[l] = nearbyintf(t[l]);
  const v4f r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  v4f p = 1.9875691500e-4f * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = ((p * r) * r + r) + 1.0f;
  v4i ni;
  for (int l = 0; l < 4; l++) ni[l] = (int32_t)n[l];
  const v4i n1 = ni >> 1, n2 = ni - n1;
  const v4f s1 = (v4f)((n1 + 127) << 23), s2 = (v4f)((n2 + 127) << 23);
  return (p * s1) * s2;
}

/* ---- the sweeps ---- */

typedef struct {
  const Form *m;
  Form32 f32;
  int32_t B;
  uint8_t *s;    /* nBits * B */
  double *acc;   /* nBits * B */
  int64_t *changed;
  Streams st;
  const int32_t *order;
  void *scratch; /* 2 maxBlock vectors */
  struct {
    int32_t *off;   /* per bit: first entry of the site's table, -1: none (0: no table) */
    double *table;  /* entries of [p, threshold as int64] */
  } table;
} Batch;

static inline v2d field2(const Form *m, const uint8_t *sq, int32_t B, int32_t i) {
  v2d u = (v2d){0, 0} + m->a[i];
  for (int32_t k = m->rowPtr[i]; k < m->rowPtr[i + 1]; k++) {
    const uint8_t *q = sq + (size_t)m->col[k] * B;
    const v2i mask = (v2i){-(int64_t)q[0], -(int64_t)q[1]};
    u += (v2d)((v2i)((v2d){0, 0} + m->val[k]) & mask);
  }
  return u;
}

static inline v2d uniform2(const v4u *words, int32_t c) {
  const v4u w = words[16 * (c >> 2)];
  const int l = c & 3;
  return ((v2d){(double)w[l], (double)w[l + 1]} + 0.5) * 2.3283064365386963e-10;
}

static void oneHot2(Batch *bt, uint8_t *sq, const v4u *words, int32_t c, int32_t b, int32_t K) {
  const Form *m = bt->m;
  const int32_t B = bt->B;
  v2d *w = bt->scratch;
  int32_t old0 = 0, old1 = 0;
  v2d top = (v2d){-INFINITY, -INFINITY};
  for (int32_t k = 0; k < K; k++) {
    const uint8_t *q = sq + (size_t)(b + k) * B;
    if (q[0]) old0 = k;
    if (q[1]) old1 = k;
    const v2d u = field2(m, sq, B, b + k);
    w[k] = u;
    const v2i gt = u > top;
    top = (v2d)(((v2i)u & gt) | ((v2i)top & ~gt));
  }
  const v2i lost = top == (v2d){-INFINITY, -INFINITY};
  v2d total = (v2d){0, 0};
  for (int32_t k = 0; k < K; k++) {
    const v2d e = expPair(w[k] - top);
    w[k] = (v2d)(((v2i)((v2d){1.0, 1.0}) & lost) | ((v2i)e & ~lost));
    total += w[k];
  }
  const v2d target = uniform2(words, c) * total;
  v2d cum = (v2d){0, 0};
  v2i below = (v2i){0, 0};
  for (int32_t k = 0; k < K; k++) {
    cum += w[k];
    below -= ~(target < cum);
  }
  int32_t pick0 = below[0] < K - 1 ? (int32_t)below[0] : K - 1, pick1 = below[1] < K - 1 ? (int32_t)below[1] : K - 1;
  while (w[pick0][0] == 0.0) pick0--;
  while (w[pick1][1] == 0.0) pick1--;
  sq[(size_t)(b + old0) * B] = 0;
  sq[(size_t)(b + pick0) * B] = 1;
  sq[(size_t)(b + old1) * B + 1] = 0;
  sq[(size_t)(b + pick1) * B + 1] = 1;
  bt->changed[c] += pick0 != old0;
  bt->changed[c + 1] += pick1 != old1;
  if (bt->acc) {
    const v2d inv = (v2d){1.0, 1.0} / total;
    for (int32_t k = 0; k < K; k++) {
      double *q = bt->acc + (size_t)(b + k) * B + c;
      const v2d add = w[k] * inv;
      q[0] += add[0];
      q[1] += add[1];
    }
  }
}

/*
 * The free-bit kernel for 2 or 4 chains (assembly/samplers/gibbs_lanes_free.ts): the field summed
 * for both values of bit i-1 when it is a neighbour (P + 0.0 and P + W through the remaining terms,
 * selected by the lanes' fresh accept masks), four chains as two vectors in one loop body sharing
 * the index, coupling and state loads. The same chains as sweepsF64.
 */
static inline v2i masks2(const uint8_t *q) { return (v2i){-(int64_t)q[0], -(int64_t)q[1]}; }

static inline __attribute__((always_inline)) void sweepsFree(Batch *bt, int32_t sweeps, const int quad) {
  const Form *m = bt->m;
  const int32_t B = quad ? 4 : 2, n = m->nBits;
  uint8_t *s = bt->s;
  const v2d one = {1.0, 1.0}, zero = {0.0, 0.0};
  for (int32_t t = 0; t < sweeps; t++) {
    v2i prevA = {0, 0}, prevB = {0, 0};
    int32_t k = m->rowPtr[0];
    for (int32_t i = 0; i < n; i++) {
      const int32_t kEnd = m->rowPtr[i + 1];
      v2d uA = zero + m->a[i], uB = uA;
      int hit = 0;
      for (; k < kEnd; k++) {
        const int32_t j = m->col[k];
        if (j == i - 1) {
          hit = 1;
          break;
        }
        const uint8_t *q = s + (size_t)j * B;
        const v2i w = (v2i)(zero + m->val[k]);
        uA += (v2d)(w & masks2(q));
        if (quad) uB += (v2d)(w & masks2(q + 2));
      }
      if (hit) {
        const v2d w = zero + m->val[k];
        v2d uA1 = uA + w, uB1 = uB + w;
        uA += zero;
        uB += zero;
        for (k++; k < kEnd; k++) {
          const uint8_t *q = s + (size_t)m->col[k] * B;
          const v2i w = (v2i)(zero + m->val[k]);
          const v2d tA = (v2d)(w & masks2(q));
          uA += tA;
          uA1 += tA;
          if (quad) {
            const v2d tB = (v2d)(w & masks2(q + 2));
            uB += tB;
            uB1 += tB;
          }
        }
        uA = (v2d)(((v2i)uA1 & prevA) | ((v2i)uA & ~prevA));
        if (quad) uB = (v2d)(((v2i)uB1 & prevB) | ((v2i)uB & ~prevB));
      }
      const v4u *words = streamsNext(&bt->st);
      const v2d pA = one / (one + expPair(-uA));
      const v2i yesA = uniform2(words, 0) < pA;
      uint8_t *at = s + (size_t)i * B;
      bt->changed[0] += at[0] != (uint8_t)(yesA[0] & 1);
      bt->changed[1] += at[1] != (uint8_t)(yesA[1] & 1);
      at[0] = (uint8_t)(yesA[0] & 1);
      at[1] = (uint8_t)(yesA[1] & 1);
      prevA = yesA;
      v2d pB = zero;
      if (quad) {
        pB = one / (one + expPair(-uB));
        const v2i yesB = uniform2(words, 2) < pB;
        bt->changed[2] += at[2] != (uint8_t)(yesB[0] & 1);
        bt->changed[3] += at[3] != (uint8_t)(yesB[1] & 1);
        at[2] = (uint8_t)(yesB[0] & 1);
        at[3] = (uint8_t)(yesB[1] & 1);
        prevB = yesB;
      }
      if (bt->acc) {
        v2d *q = (v2d *)(bt->acc + (size_t)i * B);
        q[0] += pA;
        if (quad) q[1] += pB;
      }
    }
  }
}

/*
 * oneHot2 for chains 0, 1 (vector A) and 2, 3 (vector B) of a batch of four in one pass, each
 * neighbour's index, coupling and four state bytes loaded once (gibbs_lanes.ts oneHot4Chains).
 */
static void oneHot4Chains(Batch *bt, const v4u *words, int32_t b, int32_t K) {
  const Form *m = bt->m;
  uint8_t *s = bt->s;
  v2d *w = bt->scratch; /* state k: w[2k] (A), w[2k + 1] (B) */
  int32_t old[4] = {0, 0, 0, 0};
  v2d topA = {-INFINITY, -INFINITY}, topB = topA;
  for (int32_t k = 0; k < K; k++) {
    const int32_t i = b + k;
    for (int l = 0; l < 4; l++)
      if (s[(size_t)i * 4 + l]) old[l] = k;
    v2d uA = (v2d){0, 0} + m->a[i], uB = uA;
    for (int32_t e = m->rowPtr[i]; e < m->rowPtr[i + 1]; e++) {
      const uint8_t *q = s + (size_t)m->col[e] * 4;
      const v2i wv = (v2i)((v2d){0, 0} + m->val[e]);
      uA += (v2d)(wv & masks2(q));
      uB += (v2d)(wv & masks2(q + 2));
    }
    w[2 * k] = uA;
    w[2 * k + 1] = uB;
    const v2i gA = uA > topA, gB = uB > topB;
    topA = (v2d)(((v2i)uA & gA) | ((v2i)topA & ~gA));
    topB = (v2d)(((v2i)uB & gB) | ((v2i)topB & ~gB));
  }
  const v2d ninf = {-INFINITY, -INFINITY}, one = {1.0, 1.0};
  const v2i lostA = topA == ninf, lostB = topB == ninf;
  v2d totalA = {0, 0}, totalB = {0, 0};
  for (int32_t k = 0; k < K; k++) {
    const v2d eA = expPair(w[2 * k] - topA), eB = expPair(w[2 * k + 1] - topB);
    w[2 * k] = (v2d)(((v2i)one & lostA) | ((v2i)eA & ~lostA));
    w[2 * k + 1] = (v2d)(((v2i)one & lostB) | ((v2i)eB & ~lostB));
    totalA += w[2 * k];
    totalB += w[2 * k + 1];
  }
  const v2d targetA = uniform2(words, 0) * totalA, targetB = uniform2(words, 2) * totalB;
  v2d cumA = {0, 0}, cumB = {0, 0};
  v2i belowA = {0, 0}, belowB = {0, 0};
  for (int32_t k = 0; k < K; k++) {
    cumA += w[2 * k];
    cumB += w[2 * k + 1];
    belowA -= ~(targetA < cumA);
    belowB -= ~(targetB < cumB);
  }
  const int64_t below[4] = {belowA[0], belowA[1], belowB[0], belowB[1]};
  const double *wd = (const double *)w;
  for (int l = 0; l < 4; l++) {
    int32_t pick = below[l] < K - 1 ? (int32_t)below[l] : K - 1;
    while (wd[4 * pick + l] == 0.0) pick--;
    s[(size_t)(b + old[l]) * 4 + l] = 0;
    s[(size_t)(b + pick) * 4 + l] = 1;
    bt->changed[l] += pick != old[l];
  }
  if (bt->acc) {
    const v2d invA = one / totalA, invB = one / totalB;
    for (int32_t k = 0; k < K; k++) {
      v2d *q = (v2d *)(bt->acc + (size_t)(b + k) * 4);
      q[0] += w[2 * k] * invA;
      q[1] += w[2 * k + 1] * invB;
    }
  }
}

#include "gibbs_table.h"

static void sweepsF64(Batch *bt, int32_t sweeps) {
  const Form *m = bt->m;
  const int32_t B = bt->B;
  if (bt->table.off && (B == 2 || B == 4) && !bt->order) {
    if (B == 4) sweepsTable(bt, sweeps, 1);
    else sweepsTable(bt, sweeps, 0);
    return;
  }
  if (m->allFree && !bt->order && (B == 2 || B == 4)) {
    if (B == 4) sweepsFree(bt, sweeps, 1);
    else sweepsFree(bt, sweeps, 0);
    return;
  }
  for (int32_t t = 0; t < sweeps; t++) {
    for (int32_t vi = 0; vi < m->nBlocks; vi++) {
      const int32_t v = bt->order ? bt->order[vi] : vi;
      const int32_t b = m->blockStart[v];
      const v4u *words = streamsNext(&bt->st);
      if (m->oneHot[v]) {
        const int32_t K = m->blockStart[v + 1] - b;
        if (B == 4 && K <= 256) oneHot4Chains(bt, words, b, K);
        else for (int32_t c = 0; c < B; c += 2) oneHot2(bt, bt->s + c, words, c, b, K);
        continue;
      }
      for (int32_t c = 0; c < B; c += 2) {
        uint8_t *sq = bt->s + c;
        const v2d u = field2(m, sq, B, b);
        const v2d p = (v2d){1.0, 1.0} / ((v2d){1.0, 1.0} + expPair(-u));
        const v2i yes = uniform2(words, c) < p;
        uint8_t *at = sq + (size_t)b * B;
        bt->changed[c] += at[0] != (uint8_t)(yes[0] & 1);
        bt->changed[c + 1] += at[1] != (uint8_t)(yes[1] & 1);
        at[0] = (uint8_t)(yes[0] & 1);
        at[1] = (uint8_t)(yes[1] & 1);
        if (bt->acc) {
          double *q = bt->acc + (size_t)b * B + c;
          q[0] += p[0];
          q[1] += p[1];
        }
      }
    }
  }
}

static inline v4f field4(const Form *m, const Form32 *m32, const uint8_t *sq, int32_t B, int32_t i) {
  v4f u = (v4f){0, 0, 0, 0} + m32->a[i];
  for (int32_t k = m->rowPtr[i]; k < m->rowPtr[i + 1]; k++) {
    const uint8_t *q = sq + (size_t)m->col[k] * B;
    const v4i mask = (v4i){-(int32_t)q[0], -(int32_t)q[1], -(int32_t)q[2], -(int32_t)q[3]};
    u += (v4f)((v4i)((v4f){0, 0, 0, 0} + m32->val[k]) & mask);
  }
  return u;
}

static inline v4f uniform4(const v4u *words, int32_t c) {
  const v4u w = words[16 * (c >> 2)];
  const v4f f = (v4f){(float)w[0], (float)w[1], (float)w[2], (float)w[3]};
  return (f + 0.5f) * 2.3283064365386963e-10f;
}

static void oneHot4(Batch *bt, uint8_t *sq, const v4u *words, int32_t c, int32_t b, int32_t K) {
  const Form *m = bt->m;
  const int32_t B = bt->B;
  v4f *w = bt->scratch;
  int32_t old[4] = {0, 0, 0, 0};
  v4f top = (v4f){-INFINITY, -INFINITY, -INFINITY, -INFINITY};
  for (int32_t k = 0; k < K; k++) {
    const uint8_t *q = sq + (size_t)(b + k) * B;
    for (int l = 0; l < 4; l++)
      if (q[l]) old[l] = k;
    const v4f u = field4(m, &bt->f32, sq, B, b + k);
    w[k] = u;
    const v4i gt = u > top;
    top = (v4f)(((v4i)u & gt) | ((v4i)top & ~gt));
  }
  const v4i lost = top == (v4f){-INFINITY, -INFINITY, -INFINITY, -INFINITY};
  v4f total = (v4f){0, 0, 0, 0};
  for (int32_t k = 0; k < K; k++) {
    const v4f e = expF32x4(w[k] - top);
    w[k] = (v4f)(((v4i)((v4f){1, 1, 1, 1}) & lost) | ((v4i)e & ~lost));
    total += w[k];
  }
  const v4f target = uniform4(words, c) * total;
  v4f cum = (v4f){0, 0, 0, 0};
  v4i below = (v4i){0, 0, 0, 0};
  for (int32_t k = 0; k < K; k++) {
    cum += w[k];
    below -= ~(target < cum);
  }
  for (int l = 0; l < 4; l++) {
    int32_t p = below[l] < K - 1 ? below[l] : K - 1;
    while (w[p][l] == 0.0f) p--;
    sq[(size_t)(b + old[l]) * B + l] = 0;
    sq[(size_t)(b + p) * B + l] = 1;
    bt->changed[c + l] += p != old[l];
  }
  if (bt->acc) {
    const v4f inv = (v4f){1, 1, 1, 1} / total;
    for (int32_t k = 0; k < K; k++) {
      double *q = bt->acc + (size_t)(b + k) * B + c;
      const v4f add = w[k] * inv;
      for (int l = 0; l < 4; l++) q[l] += (double)add[l];
    }
  }
}

static void sweepsF32(Batch *bt, int32_t sweeps) {
  const Form *m = bt->m;
  const int32_t B = bt->B;
  for (int32_t t = 0; t < sweeps; t++) {
    for (int32_t vi = 0; vi < m->nBlocks; vi++) {
      const int32_t v = bt->order ? bt->order[vi] : vi;
      const int32_t b = m->blockStart[v];
      const v4u *words = streamsNext(&bt->st);
      if (m->oneHot[v]) {
        for (int32_t c = 0; c < B; c += 4) oneHot4(bt, bt->s + c, words, c, b, m->blockStart[v + 1] - b);
        continue;
      }
      for (int32_t c = 0; c < B; c += 4) {
        uint8_t *sq = bt->s + c;
        const v4f u = field4(m, &bt->f32, sq, B, b);
        const v4f p = (v4f){1, 1, 1, 1} / ((v4f){1, 1, 1, 1} + expF32x4(-u));
        const v4i yes = uniform4(words, c) < p;
        uint8_t *at = sq + (size_t)b * B;
        for (int l = 0; l < 4; l++) {
          bt->changed[c + l] += at[l] != (uint8_t)(yes[l] & 1);
          at[l] = (uint8_t)(yes[l] & 1);
        }
        if (bt->acc) {
          double *q = bt->acc + (size_t)b * B + c;
          for (int l = 0; l < 4; l++) q[l] += (double)p[l];
        }
      }
    }
  }
}

/* ---- init (gibbsChainInit's draws, chain by chain from each chain's own scalar stream) ---- */

typedef struct {
  uint32_t key0, key1, ctr0, ctr1, ctr2, ctr3;
  uint32_t out[4];
  uint32_t pos;
} Philox;

static uint32_t next32(Philox *r) {
  if (r->pos >= 4) {
    v4u ids = (v4u){r->ctr2, 0, 0, 0}, out[16];
    philoxChains(out, ((uint64_t)r->ctr1 << 32) | r->ctr0, ids, r->ctr3, r->key0, r->key1);
    for (int k = 0; k < 4; k++) r->out[k] = out[k][0];
    if (++r->ctr0 == 0) r->ctr1++;
    r->pos = 0;
  }
  return r->out[r->pos++];
}

static double uniform32(Philox *r) {
  return ((double)next32(r) + 0.5) * 2.3283064365386963e-10;
}

static void batchInit(Batch *bt, uint32_t key0, uint32_t key1, uint32_t tag) {
  const Form *m = bt->m;
  const int32_t B = bt->B;
  Philox r0;
  for (int32_t c = 0; c < B; c++) {
    Philox r = {key0, key1, 0, 0, (uint32_t)c, tag, {0, 0, 0, 0}, 4};
    for (int32_t v = 0; v < m->nBlocks; v++) {
      const int32_t b = m->blockStart[v];
      if (m->oneHot[v]) {
        const int32_t K = m->blockStart[v + 1] - b;
        int32_t k = (int32_t)(uniform32(&r) * (double)K);
        if (k > K - 1) k = K - 1;
        bt->s[(size_t)(b + k) * B + c] = 1;
      } else {
        bt->s[(size_t)b * B + c] = uniform32(&r) < 0.5 ? 1 : 0;
      }
    }
    if (c == 0) r0 = r;
    /* Every chain is now at the same position; the current block of chain c goes to its lane. */
    for (int k = 0; k < 4; k++) bt->st.words[16 * (c >> 2) + 12 + k][c & 3] = r.out[k];
    bt->st.ids[c >> 2][c & 3] = (uint32_t)c;
  }
  bt->st.ctr = ((uint64_t)r0.ctr1 << 32) | r0.ctr0;
  bt->st.pos = 12 + r0.pos;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* This process's CPU time: unlike the wall clock, not stretched when other jobs share the core. */
static double cpuNow(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc != 11) die("usage: gibbs_lanes.out verify|time MODEL SEEDLO SEEDHI B TAG SWEEPS OUT|WARMUP f64|f32 ORDER|-");
  const Form m = readForm(argv[2]);
  const uint32_t key0 = (uint32_t)strtoul(argv[3], 0, 10), key1 = (uint32_t)strtoul(argv[4], 0, 10);
  const int32_t B = (int32_t)atol(argv[5]);
  const uint32_t tag = (uint32_t)strtoul(argv[6], 0, 10);
  const int32_t nSweeps = (int32_t)atol(argv[7]);
  const int f32 = strcmp(argv[9], "f32") == 0, table = strcmp(argv[9], "f64table") == 0;
  if (B <= 0 || B % (f32 ? 4 : 2)) die("B must be a positive multiple of the lane count");
  Batch bt = {&m, toF32(&m), B, calloc((size_t)m.nBits * B + 1, 1), calloc((size_t)m.nBits * B + 1, 8), calloc((size_t)B, 8), {0}, 0, 0};
  if (strcmp(argv[10], "-") != 0) {
    FILE *f = fopen(argv[10], "rb");
    if (!f) die("cannot open order file");
    bt.order = readN(f, 4 * (size_t)m.nBlocks);
    fclose(f);
  }
  bt.scratch = aligned_alloc(16, 32 * (size_t)(m.maxBlock + 1));
  bt.st.key0 = key0, bt.st.key1 = key1, bt.st.tag = tag;
  bt.st.G = (B + 3) / 4;
  bt.st.pairs = B <= 2;
  bt.st.ids = aligned_alloc(16, 16 * (size_t)bt.st.G);
  bt.st.words = aligned_alloc(16, 256 * (size_t)bt.st.G);
  memset(bt.st.ids, 0, 16 * (size_t)bt.st.G);
  memset(bt.st.words, 0, 256 * (size_t)bt.st.G);
  batchInit(&bt, key0, key1, tag);
  if (table) tableBuild(&bt);
  for (int32_t l = B; l < 4 * bt.st.G; l++) bt.st.ids[l >> 2][l & 3] = (uint32_t)(B - 1);
  if (strcmp(argv[1], "verify") == 0) {
    if (f32) sweepsF32(&bt, nSweeps);
    else sweepsF64(&bt, nSweeps);
    FILE *f = fopen(argv[8], "wb");
    if (!f) die("cannot open output file");
    for (int32_t c = 0; c < B; c++) {
      const double ch = (double)bt.changed[c];
      fwrite(&ch, 8, 1, f);
    }
    fwrite(bt.s, 1, (size_t)m.nBits * B, f);
    fwrite(bt.acc, 8, (size_t)m.nBits * B, f);
    fclose(f);
    return 0;
  }
  if (strcmp(argv[1], "time") == 0) {
    const int32_t warm = (int32_t)atol(argv[8]);
    if (f32) sweepsF32(&bt, warm);
    else sweepsF64(&bt, warm);
    const double t0 = now(), c0 = cpuNow();
    if (f32) sweepsF32(&bt, nSweeps);
    else sweepsF64(&bt, nSweeps);
    printf("%.9f %.9f\n", now() - t0, cpuNow() - c0);
    return 0;
  }
  die("mode must be verify or time");
  return 2;
}
