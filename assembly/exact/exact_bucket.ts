// Bucket elimination on factor graphs of any arity: the tables' forms and backward decoding
// (bindings/exact/bucket-elimination.ts plans the passes; the cliques are streamed by
// exact_block.ts).
//
// Every table (factor, message) is held linearly, e^(x − scale) with its largest entry 1, where its
// finite log values span at most 700 nats, else as log values; bucketLinearise chooses.

import { Philox, uniform } from '../core/rng';

/** Finite entries spanning at most this many nats are stored linearly (all ≥ e^−700 after the shift). */
const LINEAR_RANGE: f64 = 700;

/**
 * Turns a log table into e^(x − max) in place when its finite entries span at most 700 nats (−∞
 * becomes 0); res (f64[3]) = [1 if converted else 0, max, max − min of the finite entries]. A
 * table with no finite entry becomes all zeros with scale 0.
 */
export function bucketLinearise(p: usize, len: i32, res: usize): void {
  let hi: f64 = -Infinity, lo: f64 = Infinity;
  const end = p + (<usize>len << 3);
  for (let q = p; q < end; q += 8) {
    const x = load<f64>(q);
    if (x > -Infinity) {
      hi = max(hi, x);
      lo = min(lo, x);
    }
  }
  const span = hi == -Infinity ? 0 : hi - lo;
  store<f64>(res + 16, span);
  if (hi == -Infinity) hi = 0;
  else if (span > LINEAR_RANGE) {
    store<f64>(res, 0);
    store<f64>(res + 8, 0);
    return;
  }
  for (let q = p; q < end; q += 8) store<f64>(q, Math.exp(load<f64>(q) - hi));
  store<f64>(res, 1);
  store<f64>(res + 8, hi);
}

/**
 * Backward decoding along the elimination order (after an upward pass), `count` times: for
 * t = nv − 1 … 0, v = order[t], every variable of v's bucket but v is already set, and x_v is
 * drawn from (mode 0) or chosen to maximise (mode 1; first maximum) Σ_q in_q(x_v, rest), the
 * bucket's inputs: an exact sample of the model, or a MAP configuration.
 * Bucket of position t: inputs bStart[t] … bStart[t + 1] − 1; input q: table byte address addr[q]
 * (u32), linear[q] (i32: 1 if it holds e^(value − scale[q])) and scale[q] (f64), scope entries sStart[q] …
 * sStart[q + 1] − 1 of (sVar, sStride) pairs (i32 each), v's own among them. out: i32[count · n],
 * each row prefilled (fixed variables at their states). rng: a seeded Philox state. buf: f64[K_max].
 */
export function bucketDecode(
  nv: i32, order: usize, card: usize, bStart: usize, addr: usize, linear: usize, scale: usize, sStart: usize,
  sVar: usize, sStride: usize, n: i32, count: i32, mode: i32, rng: usize, out: usize, buf: usize,
): void {
  const r = changetype<Philox>(rng);
  for (let c = 0; c < count; c++) {
    const x = out + (<usize>c * <usize>n << 2);
    for (let t = nv - 1; t >= 0; t--) {
      const v = load<i32>(order + (<usize>t << 2));
      const K = load<i32>(card + (<usize>v << 2));
      for (let k = 0; k < K; k++) store<f64>(buf + (<usize>k << 3), 0);
      const qEnd = load<i32>(bStart + (<usize>(t + 1) << 2));
      for (let q = load<i32>(bStart + (<usize>t << 2)); q < qEnd; q++) {
        let at: i32 = 0, step: i32 = 0;
        const e = load<i32>(sStart + (<usize>(q + 1) << 2));
        for (let p = load<i32>(sStart + (<usize>q << 2)); p < e; p++) {
          const u = load<i32>(sVar + (<usize>p << 2));
          const st = load<i32>(sStride + (<usize>p << 2));
          if (u == v) step += st;
          else at += load<i32>(x + (<usize>u << 2)) * st;
        }
        let a = <usize>load<u32>(addr + (<usize>q << 2)) + (<usize>at << 3);
        const lin = load<i32>(linear + (<usize>q << 2));
        const sc = load<f64>(scale + (<usize>q << 3));
        for (let k = 0; k < K; k++) {
          const y = load<f64>(a);
          store<f64>(buf + (<usize>k << 3), load<f64>(buf + (<usize>k << 3)) + (lin ? Math.log(y) + sc : y));
          a += <usize>step << 3;
        }
      }
      let m: f64 = -Infinity, best = 0;
      for (let k = 0; k < K; k++) {
        const y = load<f64>(buf + (<usize>k << 3));
        if (y > m) (m = y), (best = k);
      }
      if (mode == 0 && m > -Infinity) {
        let s: f64 = 0;
        for (let k = 0; k < K; k++) s += Math.exp(load<f64>(buf + (<usize>k << 3)) - m);
        let u = uniform(r) * s;
        best = K - 1;
        for (let k = 0; k < K; k++) {
          const w = Math.exp(load<f64>(buf + (<usize>k << 3)) - m);
          if (u < w && w > 0) {
            best = k;
            break;
          }
          u -= w;
        }
        // Rounding can leave u past the last weight: the last state of positive weight.
        if (Math.exp(load<f64>(buf + (<usize>best << 3)) - m) == 0) for (let k = K - 1; k >= 0; k--) if (load<f64>(buf + (<usize>k << 3)) > -Infinity) { best = k; break; }
      }
      store<i32>(x + (<usize>v << 2), best);
    }
  }
}
