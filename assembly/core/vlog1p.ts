// Math.log1p on both f64x2 lanes for x ∈ [0, 1] ∪ {NaN} (softplus's log1p(e^−|u|)), bit-identical to
// AssemblyScript's scalar Math.log1p (musl's log1p.c): both of its paths for such x are evaluated and
// selected per lane, with the same IEEE operations in the same order (no FMA), so a lane's result is
// Math.log1p's bit for bit (test/vlog1p.test.ts checks it). The paths: x < 2^−53 returns x; x below
// 0.41421… takes f = x, k = 0, c = 0; above, f and k from the bits of 1 + x with the correction
// c = (x − ((1 + x) − 1)) / (1 + x) (k ≤ 1 here, so musl's k ≥ 2 and k ≥ 54 branches never run). NaN
// returns x itself.

import { logTailPair } from './vnormal';

const ONE = f64x2.splat(1.0);

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
  const uf = f64x2.add(ONE, x);
  const hu = i64x2.add(uf, i64x2.splat(OFFSET));
  const ki = i32x4.sub(i32x4.shr_s(v128.shuffle<i32>(hu, hu, 1, 3, 1, 3), 20), i32x4.splat(0x3ff));
  const kb = f64x2.convert_low_i32x4_s(ki);
  const cb = f64x2.div(f64x2.sub(x, f64x2.sub(uf, ONE)), uf);
  const fb = f64x2.sub(i64x2.add(v128.and(hu, i64x2.splat(MANT)), i64x2.splat(BASE)), ONE);
  // The common tail (vnormal.ts's logTailPair: fdlibm's polynomial, the same operations as musl's).
  const y = logTailPair(v128.bitselect(fb, x, big), v128.and(kb, big), v128.and(cb, big));
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
