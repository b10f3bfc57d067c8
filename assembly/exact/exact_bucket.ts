// Bucket elimination on factor graphs of any arity: the one kernel every pass uses
// (bindings/exact/bucket-elimination.ts plans the passes and the memory).
//
// A "clique" is a list of nd variables (digits, the last one fastest) with their cardinalities; the
// first nKeep digits are kept, the others are summed (or maximised) out. Every input table (log
// domain, f64) and the output table see the clique through one stride per digit (0 where the table
// does not contain that digit's variable), so a table of any scope and layout is read in place.
//
//   out[kept config] = log Σ_{summed configs} exp(Σ_i in_i[config])        (mode 0)
//                    = max_{summed configs} Σ_i in_i[config]               (mode 1)
//
// The clique's configurations are streamed: nothing of the clique's size is ever stored, so memory
// is bounded by the tables themselves. Arithmetic is in log space with a running maximum per output
// entry (one exp per configuration, no overflow or underflow for any dynamic range; −∞ entries,
// i.e. zero potentials, are exact). The fastest digit (always summed) is the innermost loop: each
// input adds its K values into a K-entry buffer, then the buffer is folded into (m, s) with
// s·e^m = the running sum.

import { Philox, uniform } from '../core/rng';

// Odometer step over digits [lo, hi] (hi fastest): returns false when the digits wrapped to 0.
// Moves every input offset (i32 per input in `off`) and the output offset (stored after them).
// @ts-ignore: decorator
@inline function advance(lo: i32, hi: i32, nd: i32, cards: usize, digit: usize, nIn: i32, strides: usize, off: usize, outStrides: usize): bool {
  for (let j = hi; j >= lo; j--) {
    const d = load<i32>(digit + (<usize>j << 2)) + 1;
    const K = load<i32>(cards + (<usize>j << 2));
    if (d < K) {
      store<i32>(digit + (<usize>j << 2), d);
      for (let i = 0; i < nIn; i++) {
        const p = off + (<usize>i << 2);
        store<i32>(p, load<i32>(p) + load<i32>(strides + (<usize>(i * nd + j) << 2)));
      }
      const po = off + (<usize>nIn << 2);
      store<i32>(po, load<i32>(po) + load<i32>(outStrides + (<usize>j << 2)));
      return true;
    }
    store<i32>(digit + (<usize>j << 2), 0);
    const back = K - 1;
    for (let i = 0; i < nIn; i++) {
      const p = off + (<usize>i << 2);
      store<i32>(p, load<i32>(p) - back * load<i32>(strides + (<usize>(i * nd + j) << 2)));
    }
    const po = off + (<usize>nIn << 2);
    store<i32>(po, load<i32>(po) - back * load<i32>(outStrides + (<usize>j << 2)));
  }
  return false;
}

// One output entry in log space: the summed digits [nKeep, nd − 1] walked from the current offsets
// (restored on return). Linear inputs are read as log(x) + scale.
// @ts-ignore: decorator
@inline function logEntry(
  nd: i32, cards: usize, nKeep: i32, nIn: i32, tables: usize, strides: usize, outStrides: usize, mode: i32,
  digit: usize, off: usize, buf: usize, linear: usize, scale: usize,
): f64 {
  const last = nd - 1;
  const K = load<i32>(cards + (<usize>last << 2));
  const bufEnd = buf + (<usize>K << 3);
  let m: f64 = -Infinity;
  let s: f64 = 0;
  while (true) {
    for (let b = buf; b < bufEnd; b += 8) store<f64>(b, 0);
    for (let i = 0; i < nIn; i++) {
      let at = <usize>load<u32>(tables + (<usize>i << 2)) + (<usize>load<i32>(off + (<usize>i << 2)) << 3);
      const step = <usize>load<i32>(strides + (<usize>(i * nd + last) << 2)) << 3;
      if (load<i32>(linear + (<usize>i << 2))) {
        const sc = load<f64>(scale + (<usize>i << 3));
        for (let b = buf; b < bufEnd; b += 8) {
          store<f64>(b, load<f64>(b) + (Math.log(load<f64>(at)) + sc));
          at += step;
        }
      } else {
        for (let b = buf; b < bufEnd; b += 8) {
          store<f64>(b, load<f64>(b) + load<f64>(at));
          at += step;
        }
      }
    }
    let cm: f64 = -Infinity;
    for (let b = buf; b < bufEnd; b += 8) cm = max(cm, load<f64>(b));
    if (mode == 0) {
      if (cm > m) {
        if (m > -Infinity) s *= Math.exp(m - cm);
        m = cm;
      }
      if (m > -Infinity) for (let b = buf; b < bufEnd; b += 8) s += Math.exp(load<f64>(b) - m);
    } else if (cm > m) m = cm;
    if (last - 1 < nKeep || !advance(nKeep, last - 1, nd, cards, digit, nIn, strides, off, outStrides)) break;
  }
  return mode == 0 && m > -Infinity ? m + Math.log(s) : m;
}

// buf[0 … K) *= the K table entries from `at`, `step` bytes apart (two lanes at a time when K is even).
// @ts-ignore: decorator
@inline function mulInto(buf: usize, bufEnd: usize, K: i32, at: usize, step: usize): void {
  if ((K & 1) == 0) {
    const step2 = step << 1;
    if (step == 8) {
      for (let b = buf; b < bufEnd; b += 16) {
        v128.store(b, f64x2.mul(v128.load(b), v128.load(at)));
        at += 16;
      }
    } else {
      for (let b = buf; b < bufEnd; b += 16) {
        const t = f64x2.replace_lane(f64x2.splat(load<f64>(at)), 1, load<f64>(at + step));
        v128.store(b, f64x2.mul(v128.load(b), t));
        at += step2;
      }
    }
  } else {
    for (let b = buf; b < bufEnd; b += 8) {
      store<f64>(b, load<f64>(b) * load<f64>(at));
      at += step;
    }
  }
}

// One output entry from linear inputs (each in [e^−700, 1] or 0): the sum (mode 0) or the maximum
// (mode 1) of the products, relative to e^(Σ scales).
// @ts-ignore: decorator
@inline function linearEntry(
  nd: i32, cards: usize, nKeep: i32, nIn: i32, tables: usize, strides: usize, outStrides: usize, mode: i32,
  digit: usize, off: usize, buf: usize,
): f64 {
  const last = nd - 1;
  const K = load<i32>(cards + (<usize>last << 2));
  const bufEnd = buf + (<usize>K << 3);
  let s: f64 = 0;
  while (true) {
    for (let b = buf; b < bufEnd; b += 8) store<f64>(b, 1);
    for (let i = 0; i < nIn; i++) {
      const at = <usize>load<u32>(tables + (<usize>i << 2)) + (<usize>load<i32>(off + (<usize>i << 2)) << 3);
      mulInto(buf, bufEnd, K, at, <usize>load<i32>(strides + (<usize>(i * nd + last) << 2)) << 3);
    }
    if (mode == 0) for (let b = buf; b < bufEnd; b += 8) s += load<f64>(b);
    else for (let b = buf; b < bufEnd; b += 8) s = max(s, load<f64>(b));
    if (last - 1 < nKeep || !advance(nKeep, last - 1, nd, cards, digit, nIn, strides, off, outStrides)) break;
  }
  return s;
}

/**
 * Streams the clique into `out` (log domain; see the file header). cards: i32[nd]; tables: u32[nIn]
 * byte addresses of the inputs (their entry for the all-zero clique configuration); strides:
 * i32[nIn · nd] (input i's stride for digit j at i·nd + j, in entries); outStrides: i32[nd] (0 for
 * the summed digits); linear: i32[nIn] (1: input i holds e^(value − scale[i]), see
 * bucketLinearise; 0: it holds log values); scale, ranges: f64[nIn] (ranges: the span of
 * input i's finite log values). When every input is linear and the ranges add up to at most 700
 * nats the products are formed without exp or log (no product can underflow); otherwise every
 * entry is computed in log space. Requires nKeep < nd. Workspace: digit i32[nd], off i32[nIn + 1], buf f64[cards[nd − 1]].
 */
export function bucketStream(
  nd: i32, cards: usize, nKeep: i32, nIn: i32, tables: usize, strides: usize, out: usize, outStrides: usize,
  mode: i32, digit: usize, off: usize, buf: usize, linear: usize, scale: usize, ranges: usize,
): void {
  for (let j = 0; j < nd; j++) store<i32>(digit + (<usize>j << 2), 0);
  for (let i = 0; i <= nIn; i++) store<i32>(off + (<usize>i << 2), 0);
  // Linear products are exact when every input is linear and their ranges add up to ≤ 700 nats:
  // each nonzero product is then ≥ e^−700, a normal number, and a zero product is a true zero.
  let fast = true;
  let shift: f64 = 0, range: f64 = 0;
  for (let i = 0; i < nIn; i++) {
    if (load<i32>(linear + (<usize>i << 2)) == 0) fast = false;
    shift += load<f64>(scale + (<usize>i << 3));
    range += load<f64>(ranges + (<usize>i << 3));
  }
  if (range > LINEAR_RANGE) fast = false;
  while (true) {
    let v: f64 = 0;
    if (fast) {
      const s = linearEntry(nd, cards, nKeep, nIn, tables, strides, outStrides, mode, digit, off, buf);
      v = s > 0 ? Math.log(s) + shift : -Infinity;
    } else v = logEntry(nd, cards, nKeep, nIn, tables, strides, outStrides, mode, digit, off, buf, linear, scale);
    const o = load<i32>(off + (<usize>nIn << 2));
    store<f64>(out + (<usize>o << 3), v);
    if (nKeep == 0 || !advance(0, nKeep - 1, nd, cards, digit, nIn, strides, off, outStrides)) break;
  }
}

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
 * The downward pass's one stream per clique (linear inputs whose ranges add up to ≤ 700 nats, as
 * bucketStream's fast case): every clique configuration's product is added into each of nOut
 * linear outputs (zeroed here) through its strides (outStrides: i32[nOut · nd], outs: u32[nOut]
 * byte addresses, lens: i32[nOut] entries). The outputs are the clique's belief summed to each
 * output's scope, relative to e^(Σ scales of the inputs).
 */
export function bucketScatter(
  nd: i32, cards: usize, nIn: i32, tables: usize, strides: usize, nOut: i32, outs: usize, lens: usize, outStrides: usize,
  digit: usize, off: usize, buf: usize,
): void {
  for (let j = 0; j < nOut; j++) {
    const p = <usize>load<u32>(outs + (<usize>j << 2));
    const e = p + (<usize>load<i32>(lens + (<usize>j << 2)) << 3);
    for (let q = p; q < e; q += 8) store<f64>(q, 0);
  }
  for (let j = 0; j < nd; j++) store<i32>(digit + (<usize>j << 2), 0);
  // Offsets: nIn inputs, then nOut outputs (their strides follow the inputs' in one array walk).
  for (let i = 0; i < nIn + nOut; i++) store<i32>(off + (<usize>i << 2), 0);
  const last = nd - 1;
  const K = load<i32>(cards + (<usize>last << 2));
  const bufEnd = buf + (<usize>K << 3);
  const nAll = nIn + nOut;
  while (true) {
    for (let b = buf; b < bufEnd; b += 8) store<f64>(b, 1);
    for (let i = 0; i < nIn; i++) {
      const at = <usize>load<u32>(tables + (<usize>i << 2)) + (<usize>load<i32>(off + (<usize>i << 2)) << 3);
      mulInto(buf, bufEnd, K, at, <usize>load<i32>(strides + (<usize>(i * nd + last) << 2)) << 3);
    }
    let sum: f64 = 0;
    let summed = false;
    for (let j = 0; j < nOut; j++) {
      let at = <usize>load<u32>(outs + (<usize>j << 2)) + (<usize>load<i32>(off + (<usize>(nIn + j) << 2)) << 3);
      const step = <usize>load<i32>(outStrides + (<usize>(j * nd + last) << 2)) << 3;
      if (step == 0) {
        if (!summed) {
          for (let b = buf; b < bufEnd; b += 8) sum += load<f64>(b);
          summed = true;
        }
        store<f64>(at, load<f64>(at) + sum);
      } else {
        for (let b = buf; b < bufEnd; b += 8) {
          store<f64>(at, load<f64>(at) + load<f64>(b));
          at += step;
        }
      }
    }
    // Odometer over digits [0, nd − 2] moving inputs and outputs alike (strides in two arrays).
    let j = last - 1;
    for (; j >= 0; j--) {
      const d = load<i32>(digit + (<usize>j << 2)) + 1;
      const Kj = load<i32>(cards + (<usize>j << 2));
      const back = d < Kj ? -1 : Kj - 1;
      if (d < Kj) store<i32>(digit + (<usize>j << 2), d);
      else store<i32>(digit + (<usize>j << 2), 0);
      for (let i = 0; i < nAll; i++) {
        const st = i < nIn ? load<i32>(strides + (<usize>(i * nd + j) << 2)) : load<i32>(outStrides + (<usize>((i - nIn) * nd + j) << 2));
        const p = off + (<usize>i << 2);
        store<i32>(p, load<i32>(p) - back * st);
      }
      if (d < Kj) break;
    }
    if (j < 0) break;
  }
}

/**
 * A downward message from its separator belief: out[e] = log(belief[e]) + shift − log m[e] (m the
 * child's upward message, linear with scale mScale if mLinear, else log), −∞ where the belief is 0
 * (then m is 0 too and the value is never used). In place over len entries.
 */
export function bucketDivide(out: usize, len: i32, shift: f64, m: usize, mLinear: i32, mScale: f64): void {
  for (let e = 0; e < len; e++) {
    const b = load<f64>(out + (<usize>e << 3));
    const x = load<f64>(m + (<usize>e << 3));
    const lm = mLinear ? Math.log(x) + mScale : x;
    store<f64>(out + (<usize>e << 3), b > 0 ? Math.log(b) + shift - lm : -Infinity);
  }
}

/**
 * Backward decoding along the elimination order (after an upward pass), `count` times: for
 * t = nv − 1 … 0, v = order[t], every variable of v's bucket but v is already set, and x_v is
 * drawn from (mode 0) or chosen to maximise (mode 1; first maximum) Σ_q in_q(x_v, rest), the
 * bucket's inputs: an exact sample of the model, or a MAP configuration.
 * Bucket of position t: inputs bStart[t] … bStart[t + 1] − 1; input q: table byte address addr[q]
 * (u32), linear[q] (i32) and scale[q] (f64) as in bucketStream, scope entries sStart[q] …
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
