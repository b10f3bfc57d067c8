// Math.log1p on both f64x2 lanes for x ∈ [0, 1] ∪ {NaN} (softplus's log1p(e^−|u|)), bit-identical to
// AssemblyScript's scalar Math.log1p (musl's log1p.c): both of its paths for such x are evaluated and
// selected per lane, with the same IEEE operations in the same order (no FMA), so a lane's result is
// Math.log1p's bit for bit (test/vlog1p.test.ts checks it). The paths: x < 2^−53 returns x; x below
// 0.41421… takes f = x, k = 0, c = 0; above, f and k from the bits of 1 + x with the correction
// c = (x − ((1 + x) − 1)) / (1 + x) (k ≤ 1 here, so musl's k ≥ 2 and k ≥ 54 branches never run). NaN
// returns x itself.

const LOG1P_K = memory.data<f64>([
  6.93147180369123816490e-01, // ln2_hi
  1.90821492927058770002e-10, // ln2_lo
  6.666666666666735130e-01, // Lg1 … Lg7
  3.999999999940941908e-01,
  2.857142874366239149e-01,
  2.222219843214978396e-01,
  1.818357216161805012e-01,
  1.531383769920937332e-01,
  1.479819860511658591e-01,
  1.0,
  2.0,
  0.5,
]);

const LN2HI = 0, LN2LO = 1, LG = 2, ONE = 9, TWO = 10, HALF = 11;

@inline
function kv(i: i32): v128 {
  return v128.load64_splat(LOG1P_K + (<usize>i << 3));
}

/** The bits below which log1p(x) = x (high word 0x3CA00000: x < 2^−53). */
const TINY: i64 = 0x3ca0000000000000;
/** The bits from which musl reduces 1 + x (high word 0x3FDA827A: x ≥ 0.41421…). */
const REDUCE: i64 = 0x3fda827a00000000;
const INF_BITS: i64 = 0x7ff0000000000000;
const OFFSET: i64 = (<i64>(0x3ff00000 - 0x3fe6a09e)) << 32;
const BASE: i64 = (<i64>0x3fe6a09e) << 32;
const MANT: i64 = 0x000fffffffffffff;

/** log1p on both lanes, x ∈ [0, 1] or NaN. */
@inline
export function log1pUnitPair(x: v128): v128 {
  const big = i64x2.ge_s(x, i64x2.splat(REDUCE));
  // The reduced path, on every lane (its result is kept where big).
  const uf = f64x2.add(kv(ONE), x);
  const hu = i64x2.add(uf, i64x2.splat(OFFSET));
  const ki = i32x4.sub(i32x4.shr_s(v128.shuffle<i32>(hu, hu, 1, 3, 1, 3), 20), i32x4.splat(0x3ff));
  const kb = f64x2.convert_low_i32x4_s(ki);
  const cb = f64x2.div(f64x2.sub(x, f64x2.sub(uf, kv(ONE))), uf);
  const fb = f64x2.sub(i64x2.add(v128.and(hu, i64x2.splat(MANT)), i64x2.splat(BASE)), kv(ONE));
  const f = v128.bitselect(fb, x, big);
  const c = v128.and(cb, big);
  const dk = v128.and(kb, big);
  const hfsq = f64x2.mul(f64x2.mul(kv(HALF), f), f);
  const s = f64x2.div(f, f64x2.add(kv(TWO), f));
  const z = f64x2.mul(s, s);
  const w = f64x2.mul(z, z);
  const t1 = f64x2.mul(w, f64x2.add(kv(LG + 1), f64x2.mul(w, f64x2.add(kv(LG + 3), f64x2.mul(w, kv(LG + 5))))));
  const t2 = f64x2.mul(z, f64x2.add(kv(LG), f64x2.mul(w, f64x2.add(kv(LG + 2), f64x2.mul(w, f64x2.add(kv(LG + 4), f64x2.mul(w, kv(LG + 6))))))));
  const r = f64x2.add(t2, t1);
  // s·(hfsq + r) + (dk·ln2_lo + c) − hfsq + f + dk·ln2_hi, left to right.
  let y = f64x2.add(f64x2.mul(s, f64x2.add(hfsq, r)), f64x2.add(f64x2.mul(dk, kv(LN2LO)), c));
  y = f64x2.add(f64x2.add(f64x2.sub(y, hfsq), f), f64x2.mul(dk, kv(LN2HI)));
  const same = v128.or(i64x2.lt_s(x, i64x2.splat(TINY)), i64x2.ge_s(x, i64x2.splat(INF_BITS)));
  return v128.bitselect(x, y, same);
}

// Test entry points (test/vlog1p.test.ts): n values from src to dst (n even for the pair form).

export function vlog1pPair(src: usize, dst: usize, n: i32): void {
  for (let i = 0; i < n; i += 2) v128.store(dst + (<usize>i << 3), log1pUnitPair(v128.load(src + (<usize>i << 3))));
}

export function vlog1pScalar(src: usize, dst: usize, n: i32): void {
  for (let i = 0; i < n; i++) store<f64>(dst + (<usize>i << 3), Math.log1p(load<f64>(src + (<usize>i << 3))));
}
