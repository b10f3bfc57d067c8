// Box–Muller's arithmetic, z = √(−2 ln u₁)·(cos 2πu₂, sin 2πu₂), once for a scalar pair of uniforms
// and once for two pairs in the f64x2 lanes, with the same IEEE operations in the same order (WASM has
// no FMA outside relaxed SIMD), so a lane's normals are the scalar code's bit for bit. That is what lets
// a chain draw its noise in bulk (rng.ts normalsInto) and still be the chain of one-at-a-time draws.
//
// ln: fdlibm's e_log.c (k·ln2 + log1p(f) with f = m − 1, m ∈ [√2/2, √2), s = f/(2+f) and its degree-14
// polynomial in s), without the branches u ∈ (0, 1) never takes (0, subnormals, ∞, NaN). Error < 1 ulp.
// cos/sin of 2πu₂: the reduction is exact — 4u₂ = q + r with q = nearest integer (q ∈ 0…4) and
// r ∈ [−½, ½] exactly — then sin(πr/2) and cos(πr/2) by their Taylor series (coefficients rounded from
// 200-bit values; truncation error below 2^−56) and a rotation by q quarter turns (a swap and sign
// flips, exact). test/normal.test.ts measures all three in ulps against Math.

export const NORMAL_K = memory.data<f64>([
  6.93147180369123816490e-01, // ln2_hi (low 32 bits zero: k·ln2_hi is exact)
  1.90821492927058770002e-10, // ln2_lo
  6.666666666666735130e-01, // Lg1
  3.999999999940941908e-01, // Lg2
  2.857142874366239149e-01, // Lg3
  2.222219843214978396e-01, // Lg4
  1.818357216161805012e-01, // Lg5
  1.531383769920937332e-01, // Lg6
  1.479819860511658591e-01, // Lg7
  1.5707963267948966, // sin(πr/2) = r·(S0 + r²(S1 + …)), Sk = (−1)^k (π/2)^(2k+1)/(2k+1)!
  -0.6459640975062463,
  0.07969262624616705,
  -0.004681754135318688,
  0.00016044118478735983,
  -3.598843235212085e-06,
  5.692172921967927e-08,
  -6.688035109811468e-10,
  6.0669357311061955e-12,
  -1.2337005501361697, // cos(πr/2) = 1 + r²(C1 + r²(C2 + …)), Ck = (−1)^k (π/2)^(2k)/(2k)!
  0.25366950790104803,
  -0.02086348076335296,
  0.0009192602748394266,
  -2.5202042373060607e-05,
  4.710874778818172e-07,
  -6.386603083791852e-09,
  6.565963114979473e-11,
  6755399441055744.0, // 1.5·2^52: x + this rounds x to an integer in the low bits
  1.0,
  2.0,
  0.5,
  -2.0,
  4.0,
]);

// Indices into NORMAL_K.
const LN2HI = 0, LN2LO = 1, LG = 2, S = 9, C = 18, SHIFT = 26, ONE = 27, TWO = 28, HALF = 29, MTWO = 30, FOUR = 31;

@inline
function k(i: i32): f64 {
  return load<f64>(NORMAL_K + (<usize>i << 3));
}

@inline
function kv(i: i32): v128 {
  return v128.load64_splat(NORMAL_K + (<usize>i << 3));
}

// fdlibm's reduction on the bits: m's high word lands in [0x3fe6a09e, 0x3ff6a09e), k the exponent.
const LOG_OFFSET: i64 = (<i64>(0x3ff00000 - 0x3fe6a09e)) << 32;
const LOG_BASE: i64 = (<i64>0x3fe6a09e) << 32;
const MANT: i64 = 0x000fffffffffffff;

/** ln u for u ∈ (0, 1) normal (fdlibm's log, its main path). */
@inline
export function logUnit(u: f64): f64 {
  const hx = reinterpret<i64>(u) + LOG_OFFSET;
  const dk = <f64>(<i32>(hx >> 52) - 0x3ff);
  const f = reinterpret<f64>((hx & MANT) + LOG_BASE) - k(ONE);
  const s = f / (k(TWO) + f);
  const z = s * s;
  const w = z * z;
  const t1 = w * (k(LG + 1) + w * (k(LG + 3) + w * k(LG + 5)));
  const t2 = z * (k(LG) + w * (k(LG + 2) + w * (k(LG + 4) + w * k(LG + 6))));
  const R = t2 + t1;
  const hfsq = k(HALF) * f * f;
  return s * (hfsq + R) + dk * k(LN2LO) - hfsq + f + dk * k(LN2HI);
}

/** logUnit on both lanes. */
@inline
export function logUnitPair(u: v128): v128 {
  const hx = i64x2.add(u, i64x2.splat(LOG_OFFSET));
  // k = (hx >> 52) − 1023 ≥ −1077 fits i32: lanes 1 and 3 of the i32x4 view are the high words.
  const ki = i32x4.sub(i32x4.shr_s(v128.shuffle<i32>(hx, hx, 1, 3, 1, 3), 20), i32x4.splat(0x3ff));
  const dk = f64x2.convert_low_i32x4_s(ki);
  const f = f64x2.sub(i64x2.add(v128.and(hx, i64x2.splat(MANT)), i64x2.splat(LOG_BASE)), kv(ONE));
  return logTailPair(f, dk, f64x2.splat(0));
}

/**
 * fdlibm's log after the reduction, on both lanes: s·(hfsq + R) + (dk·ln2_lo + c) − hfsq + f + dk·ln2_hi
 * with s = f/(2+f), hfsq = ½f², R its polynomial in s. c is log1p's correction (vlog1p.ts); log passes
 * 0, which changes no value (dk·ln2_lo is never −0).
 */
@inline
export function logTailPair(f: v128, dk: v128, c: v128): v128 {
  const s = f64x2.div(f, f64x2.add(kv(TWO), f));
  const z = f64x2.mul(s, s);
  const w = f64x2.mul(z, z);
  const t1 = f64x2.mul(w, f64x2.add(kv(LG + 1), f64x2.mul(w, f64x2.add(kv(LG + 3), f64x2.mul(w, kv(LG + 5))))));
  const t2 = f64x2.mul(z, f64x2.add(kv(LG), f64x2.mul(w, f64x2.add(kv(LG + 2), f64x2.mul(w, f64x2.add(kv(LG + 4), f64x2.mul(w, kv(LG + 6))))))));
  const R = f64x2.add(t2, t1);
  const hfsq = f64x2.mul(f64x2.mul(kv(HALF), f), f);
  return f64x2.add(
    f64x2.add(f64x2.sub(f64x2.add(f64x2.mul(s, f64x2.add(hfsq, R)), f64x2.add(f64x2.mul(dk, kv(LN2LO)), c)), hfsq), f),
    f64x2.mul(dk, kv(LN2HI)),
  );
}

/** sin(πr/2) for |r| ≤ ½, given r and r². */
@inline
function sinQuarter(r: f64, r2: f64): f64 {
  let p = k(S + 8);
  for (let i = 7; i >= 0; i--) p = k(S + i) + r2 * p;
  return r * p;
}

/** cos(πr/2) for |r| ≤ ½, given r². */
@inline
function cosQuarter(r2: f64): f64 {
  let p = k(C + 7);
  for (let i = 6; i >= 0; i--) p = k(C + i) + r2 * p;
  return k(ONE) + r2 * p;
}

/** The quarter-turn count q = nearest(4u) as the bits of 4u + 1.5·2^52 (ties to even, as f64x2 does). */
@inline
function quarterBits(y: f64): i64 {
  return reinterpret<i64>(y + k(SHIFT));
}

/** (cos 2πu, sin 2πu) into out[0], out[1]. */
@inline
export function turn(u: f64, out: usize): void {
  const y = k(FOUR) * u;
  const qb = quarterBits(y);
  const r = y - (reinterpret<f64>(qb) - k(SHIFT));
  const r2 = r * r;
  let s = sinQuarter(r, r2), c = cosQuarter(r2);
  const q = <i32>qb & 3;
  if (q & 1) {
    const t = c;
    c = -s;
    s = t;
  }
  if (q & 2) {
    c = -c;
    s = -s;
  }
  store<f64>(out, c);
  store<f64>(out, s, 8);
}

/** turn on both lanes of u: (cos, sin) of lane 0, then of lane 1, into out (4 × f64). */
@inline
export function turnPair(u: v128, out: usize): void {
  const y = f64x2.mul(kv(FOUR), u);
  const qb = f64x2.add(y, kv(SHIFT));
  const r = f64x2.sub(y, f64x2.sub(qb, kv(SHIFT)));
  const r2 = f64x2.mul(r, r);
  let ps = kv(S + 8);
  for (let i = 7; i >= 0; i--) ps = f64x2.add(kv(S + i), f64x2.mul(r2, ps));
  const sn = f64x2.mul(r, ps);
  let pc = kv(C + 7);
  for (let i = 6; i >= 0; i--) pc = f64x2.add(kv(C + i), f64x2.mul(r2, pc));
  const cs = f64x2.add(kv(ONE), f64x2.mul(r2, pc));
  // Rotate by q quarter turns: odd q maps (c, s) to (−s, c); q & 2 negates both.
  const odd = i64x2.neg(v128.and(qb, i64x2.splat(1)));
  const neg2 = i64x2.shl(v128.and(qb, i64x2.splat(2)), 62);
  const c1 = v128.xor(v128.bitselect(sn, cs, odd), v128.xor(neg2, v128.and(odd, i64x2.splat(i64.MIN_VALUE))));
  const s1 = v128.xor(v128.bitselect(cs, sn, odd), neg2);
  v128.store(out, v128.shuffle<i64>(c1, s1, 0, 2));
  v128.store(out, v128.shuffle<i64>(c1, s1, 1, 3), 16);
}

/** A Box–Muller pair from uniforms u1 (radius) and u2 (angle): (cos, sin)·√(−2 ln u1) into out[0], out[1]. */
@inline
export function boxMuller(u1: f64, u2: f64, out: usize): void {
  const rad = Math.sqrt(k(MTWO) * logUnit(u1));
  turn(u2, out);
  store<f64>(out, rad * load<f64>(out));
  store<f64>(out, rad * load<f64>(out, 8), 8);
}

/** boxMuller on two pairs (lane l: u1[l], u2[l]): pair 0's (cos, sin), then pair 1's, into out (4 × f64). */
@inline
export function boxMullerPair(u1: v128, u2: v128, out: usize): void {
  const rad = f64x2.sqrt(f64x2.mul(kv(MTWO), logUnitPair(u1)));
  turnPair(u2, out);
  v128.store(out, f64x2.mul(v128.shuffle<i64>(rad, rad, 0, 0), v128.load(out)));
  v128.store(out, f64x2.mul(v128.shuffle<i64>(rad, rad, 1, 1), v128.load(out, 16)), 16);
}

// Test entry points (test/normal.test.ts): n values from `src` to `dst` (n even for the pair forms).

export function vnormalLogScalar(src: usize, dst: usize, n: i32): void {
  for (let i = 0; i < n; i++) store<f64>(dst + (<usize>i << 3), logUnit(load<f64>(src + (<usize>i << 3))));
}

export function vnormalLogPair(src: usize, dst: usize, n: i32): void {
  for (let i = 0; i < n; i += 2) v128.store(dst + (<usize>i << 3), logUnitPair(v128.load(src + (<usize>i << 3))));
}

/** (cos 2πu, sin 2πu) of each u into dst (2n f64), scalar. */
export function vnormalTurnScalar(src: usize, dst: usize, n: i32): void {
  for (let i = 0; i < n; i++) turn(load<f64>(src + (<usize>i << 3)), dst + (<usize>i << 4));
}

/** The same through turnPair (n even). */
export function vnormalTurnPair(src: usize, dst: usize, n: i32): void {
  for (let i = 0; i < n; i += 2) turnPair(v128.load(src + (<usize>i << 3)), dst + (<usize>i << 4));
}
