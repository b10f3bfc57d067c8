// The clique streams of bucket elimination, block by block: linear tables (bucketBlock) and log
// tables (bucketBlockLog), and the per-message steps around them (the planning and the layouts are
// in bindings/exact/bucket-elimination.ts).
//
// Every table is laid out in elimination order (the first-eliminated variable slowest), so within
// a clique the latest-eliminated variables are the fastest digits of every table containing them.
// The clique's digits are split into outer digits (an odometer) and a block: the trailing digits,
// B configurations. Seen over the block, each table is a run of R entries repeated over B/R
// segments: contiguous (kind 0: the table holds the block's last digits, entries at seg[s] + r) or
// constant (kind 1: it holds none of them, one entry at seg[s] per segment; kind 2: the same with
// seg[s] = s, the table holding the block's other digits contiguously — a child's message that
// lacks the last separator variable — read two segments per f64x2 load, without the offsets). So for every outer
// configuration the product of the inputs over the whole block is formed with f64x2 loads and
// multiplies, a table holding no block digit costs one multiply per block, and the offsets are
// moved once per block, never per configuration; then each output gathers the block (sum or max)
// into its own entries the same way. Nothing of the clique's size is stored: the block buffer is
// the only workspace.

import { expPairK } from '../core/vmath';

// Byte offset of segment s: s itself for kind 2 (consecutive entries), else read from segs.
// @ts-ignore: decorator
@inline function segAt(kind: i32, segs: usize, s: i32): usize {
  return kind == 2 ? <usize>s << 3 : <usize>load<i32>(segs + (<usize>s << 2)) << 3;
}

// buf ·= (op 0) or += (op 1) one input over the block through its runs; the first input writes
// buf, with c (the block's scalar inputs) folded in.
// @ts-ignore: decorator
@inline function segRun(kind: i32, R: i32, segs: usize, nSeg: i32, base: usize, buf: usize, first: bool, c: f64, op: i32): void {
  const rb = <usize>R << 3;
  if (kind == 2 && R == 2 && (nSeg & 1) == 0) {
    // Two consecutive entries per load, each duplicated over its run of two.
    const cv = f64x2.splat(op == 0 ? (first ? c : 1) : (first ? c : 0));
    let b = buf, a = base;
    const e = buf + (<usize>nSeg << 4);
    for (; b < e; b += 32, a += 16) {
      const y = v128.load(a);
      const x0 = op == 0 ? f64x2.mul(v128.shuffle<i64>(y, y, 0, 0), cv) : f64x2.add(v128.shuffle<i64>(y, y, 0, 0), cv);
      const x1 = op == 0 ? f64x2.mul(v128.shuffle<i64>(y, y, 1, 1), cv) : f64x2.add(v128.shuffle<i64>(y, y, 1, 1), cv);
      if (first) {
        v128.store(b, x0);
        v128.store(b, x1, 16);
      } else if (op == 0) {
        v128.store(b, f64x2.mul(v128.load(b), x0));
        v128.store(b, f64x2.mul(v128.load(b, 16), x1), 16);
      } else {
        v128.store(b, f64x2.add(v128.load(b), x0));
        v128.store(b, f64x2.add(v128.load(b, 16), x1), 16);
      }
    }
  } else if (kind != 0) {
    // Constant over each run: one entry per segment.
    let b = buf;
    for (let s = 0; s < nSeg; s++) {
      const y = load<f64>(base + segAt(kind, segs, s));
      const x = op == 0 ? y * (first ? c : 1) : y + (first ? c : 0);
      const e = b + rb;
      if ((R & 1) == 0) {
        const xv = f64x2.splat(x);
        if (first) for (; b < e; b += 16) v128.store(b, xv);
        else if (op == 0) for (; b < e; b += 16) v128.store(b, f64x2.mul(v128.load(b), xv));
        else for (; b < e; b += 16) v128.store(b, f64x2.add(v128.load(b), xv));
      } else {
        if (first) for (; b < e; b += 8) store<f64>(b, x);
        else if (op == 0) for (; b < e; b += 8) store<f64>(b, load<f64>(b) * x);
        else for (; b < e; b += 8) store<f64>(b, load<f64>(b) + x);
      }
    }
  } else {
    let b = buf;
    const cv = f64x2.splat(c);
    for (let s = 0; s < nSeg; s++) {
      let a = base + (<usize>load<i32>(segs + (<usize>s << 2)) << 3);
      const e = b + rb;
      if ((R & 1) == 0) {
        if (first) for (; b < e; b += 16, a += 16) v128.store(b, op == 0 ? f64x2.mul(v128.load(a), cv) : f64x2.add(v128.load(a), cv));
        else if (op == 0) for (; b < e; b += 16, a += 16) v128.store(b, f64x2.mul(v128.load(b), v128.load(a)));
        else for (; b < e; b += 16, a += 16) v128.store(b, f64x2.add(v128.load(b), v128.load(a)));
      } else {
        if (first) for (; b < e; b += 8, a += 8) store<f64>(b, op == 0 ? load<f64>(a) * c : load<f64>(a) + c);
        else if (op == 0) for (; b < e; b += 8, a += 8) store<f64>(b, load<f64>(b) * load<f64>(a));
        else for (; b < e; b += 8, a += 8) store<f64>(b, load<f64>(b) + load<f64>(a));
      }
    }
  }
}

// out op= the block (op: + in mode 0, max in mode 1), through the output's runs; first: out = the
// block's (its entries are visited for the first time, so the output needs no prefill).
// @ts-ignore: decorator
@inline function segGather(kind: i32, R: i32, segs: usize, nSeg: i32, base: usize, buf: usize, mode: i32, init: f64, first: bool): void {
  const rb = <usize>R << 3;
  let b = buf;
  if (kind == 2 && R == 2 && (nSeg & 1) == 0) {
    // Runs of two: two outputs per step, each the sum (max) of its pair, as the general path forms it.
    const iv = f64x2.splat(init);
    let a = base;
    const e = buf + (<usize>nSeg << 4);
    for (; b < e; b += 32, a += 16) {
      const u = v128.load(b), w = v128.load(b, 16);
      const l0 = mode == 0 ? f64x2.add(iv, v128.shuffle<i64>(u, w, 0, 2)) : f64x2.pmax(iv, v128.shuffle<i64>(u, w, 0, 2));
      const l1 = mode == 0 ? f64x2.add(iv, v128.shuffle<i64>(u, w, 1, 3)) : f64x2.pmax(iv, v128.shuffle<i64>(u, w, 1, 3));
      const y = mode == 0 ? f64x2.add(f64x2.add(iv, l0), l1) : f64x2.max(iv, f64x2.max(l0, l1));
      if (first) v128.store(a, y);
      else v128.store(a, mode == 0 ? f64x2.add(v128.load(a), y) : f64x2.max(v128.load(a), y));
    }
  } else if (kind != 0) {
    for (let s = 0; s < nSeg; s++) {
      const e = b + rb;
      let acc = f64x2.splat(init);
      let a1: f64 = init;
      if ((R & 1) == 0) {
        if (mode == 0) for (; b < e; b += 16) acc = f64x2.add(acc, v128.load(b));
        else for (; b < e; b += 16) acc = f64x2.pmax(acc, v128.load(b));
      } else {
        if (mode == 0) for (; b < e; b += 8) a1 += load<f64>(b);
        else for (; b < e; b += 8) a1 = max(a1, load<f64>(b));
      }
      const p = base + segAt(kind, segs, s);
      const l0 = f64x2.extract_lane(acc, 0), l1 = f64x2.extract_lane(acc, 1);
      const y = mode == 0 ? a1 + l0 + l1 : max(a1, max(l0, l1));
      if (first) store<f64>(p, y);
      else store<f64>(p, mode == 0 ? load<f64>(p) + y : max(load<f64>(p), y));
    }
  } else {
    for (let s = 0; s < nSeg; s++) {
      let a = base + (<usize>load<i32>(segs + (<usize>s << 2)) << 3);
      const e = b + rb;
      if (first) {
        memory.copy(a, b, <usize>R << 3);
        b = e;
      } else if ((R & 1) == 0) {
        if (mode == 0) for (; b < e; b += 16, a += 16) v128.store(a, f64x2.add(v128.load(a), v128.load(b)));
        else for (; b < e; b += 16, a += 16) v128.store(a, f64x2.pmax(v128.load(a), v128.load(b)));
      } else {
        if (mode == 0) for (; b < e; b += 8, a += 8) store<f64>(a, load<f64>(a) + load<f64>(b));
        else for (; b < e; b += 8, a += 8) store<f64>(a, max(load<f64>(a), load<f64>(b)));
      }
    }
  }
}

/**
 * Streams a clique block by block: for every configuration of the nOuter outer digits (cards:
 * i32[nOuter], the last fastest), the product of the nIn linear inputs over the B block
 * configurations, added (mode 0) or maxed (mode 1) into each of the nOut outputs. Tables
 * t = 0 … nIn − 1 are the inputs, nIn … nIn + nOut − 1 the outputs: addr u32[t] (byte address of
 * the entry at the all-zero configuration), strides i32[t · nOuter + j] (entries per step of outer
 * digit j), runs i32[3 t …] = (kind, R, byte address of the i32[B / R] segment offsets) as in the
 * file header; an input of kind 1 with R = B (no block digit) is a scalar factor of the block.
 * zmask i32[nOut] (or 0: every output prefilled by the caller): bit j set where output q lacks
 * outer digit j, or −1 where the caller prefilled it; an output with zmask ≥ 0 (its segments
 * distinct, nOuter ≤ 30) is written, not added to, on its entries' first visit (every digit it
 * lacks at 0), and, unless stats = 0, on their last visit (every such digit at its largest) its
 * largest entry and smallest positive one are gathered into stats f64[2 q], f64[2 q + 1] — the
 * final values, read while still in cache. Workspace: digit i32[nOuter], off i32[nIn + nOut], buf f64[B].
 */
export function bucketBlock(
  nOuter: i32, cards: usize, nIn: i32, nOut: i32, addr: usize, strides: usize, B: i32, runs: usize, mode: i32,
  digit: usize, off: usize, buf: usize, zmask: usize, stats: usize,
): void {
  const nT = nIn + nOut;
  for (let j = 0; j < nOuter; j++) store<i32>(digit + (<usize>j << 2), 0);
  for (let t = 0; t < nT; t++) store<i32>(off + (<usize>t << 2), 0);
  if (stats) for (let q = 0; q < nOut; q++) if (load<i32>(zmask + (<usize>q << 2)) >= 0) {
    store<f64>(stats + (<usize>q << 4), 0);
    store<f64>(stats + (<usize>q << 4), Infinity, 8);
  }
  while (true) {
    combine(nIn, addr, B, runs, off, buf, 0);
    // Digits not at 0 (bit j), and digits at their largest value.
    let nz = 0, top = 0;
    for (let j = 0; j < nOuter; j++) {
      const d = load<i32>(digit + (<usize>j << 2));
      if (d != 0) nz |= 1 << j;
      if (d == load<i32>(cards + (<usize>j << 2)) - 1) top |= 1 << j;
    }
    for (let t = nIn; t < nT; t++) {
      const r = runs + <usize>(t * 12);
      const kind = load<i32>(r), R = load<i32>(r, 4), segs = <usize>load<u32>(r, 8), nSeg = B / R;
      const base = <usize>load<u32>(addr + (<usize>t << 2)) + (<usize>load<i32>(off + (<usize>t << 2)) << 3);
      const zm = zmask ? load<i32>(zmask + (<usize>(t - nIn) << 2)) : -1;
      segGather(kind, R, segs, nSeg, base, buf, mode, 0, zm >= 0 && (zm & nz) == 0);
      if (stats && zm >= 0 && (zm & top) == zm) segRange(kind, R, segs, nSeg, base, stats + (<usize>(t - nIn) << 4));
    }
    if (!nextOuter(nOuter, cards, nT, strides, digit, off)) break;
  }
}

// The largest entry and smallest positive one of an output's entries over the block (through its
// runs), folded into st f64[2].
// @ts-ignore: decorator
@inline function segRange(kind: i32, R: i32, segs: usize, nSeg: i32, base: usize, st: usize): void {
  for (let s = 0; s < nSeg; s++) {
    const a = base + segAt(kind, segs, s);
    if (kind != 0) {
      const x = load<f64>(a);
      store<f64>(st, max(load<f64>(st), x));
      if (x > 0) store<f64>(st, min(load<f64>(st, 8), x), 8);
    } else rangeOf(a, a + (<usize>R << 3), st);
  }
}

// The largest entry and smallest positive one of [a, e) folded into st f64[2], two lanes at a time
// (zeros read as +∞ for the minimum).
// @ts-ignore: decorator
@inline function rangeOf(a: usize, e: usize, st: usize): void {
  const inf = f64x2.splat(Infinity), zero = f64x2.splat(0);
  let hv = zero, lv = inf;
  let hi = load<f64>(st), lo = load<f64>(st, 8);
  let q = a;
  for (; q + 16 <= e; q += 16) {
    const x = v128.load(q);
    hv = f64x2.pmax(hv, x);
    lv = f64x2.pmin(lv, v128.bitselect(x, inf, f64x2.gt(x, zero)));
  }
  if (q < e) {
    const x = load<f64>(q);
    hi = max(hi, x);
    if (x > 0) lo = min(lo, x);
  }
  store<f64>(st, max(hi, max(f64x2.extract_lane(hv, 0), f64x2.extract_lane(hv, 1))));
  store<f64>(st, min(lo, min(f64x2.extract_lane(lv, 0), f64x2.extract_lane(lv, 1))), 8);
}

// The block's product (op 0: linear inputs multiplied) or sum (op 1: log inputs added) into buf:
// inputs holding no block digit first, as one scalar; the first block input writes the buffer.
// @ts-ignore: decorator
@inline function combine(nIn: i32, addr: usize, B: i32, runs: usize, off: usize, buf: usize, op: i32): void {
  let c: f64 = op == 0 ? 1 : 0;
  for (let t = 0; t < nIn; t++) {
    const r = runs + <usize>(t * 12);
    if (load<i32>(r) == 1 && load<i32>(r, 4) == B) {
      const x = load<f64>(<usize>load<u32>(addr + (<usize>t << 2)) + (<usize>load<i32>(off + (<usize>t << 2)) << 3));
      c = op == 0 ? c * x : c + x;
    }
  }
  let first = true;
  for (let t = 0; t < nIn; t++) {
    const r = runs + <usize>(t * 12);
    const kind = load<i32>(r), R = load<i32>(r, 4);
    if (kind == 1 && R == B) continue;
    const base = <usize>load<u32>(addr + (<usize>t << 2)) + (<usize>load<i32>(off + (<usize>t << 2)) << 3);
    segRun(kind, R, <usize>load<u32>(r, 8), B / R, base, buf, first, c, op);
    first = false;
  }
  if (first) {
    const bufEnd = buf + (<usize>B << 3);
    for (let b = buf; b < bufEnd; b += 8) store<f64>(b, c);
  }
}

// Outer odometer step (last digit fastest), moving every table's offset; false once it wrapped.
// @ts-ignore: decorator
@inline function nextOuter(nOuter: i32, cards: usize, nT: i32, strides: usize, digit: usize, off: usize): bool {
  let j = nOuter - 1;
  for (; j >= 0; j--) {
    const d = load<i32>(digit + (<usize>j << 2)) + 1;
    const K = load<i32>(cards + (<usize>j << 2));
    const back = d < K ? -1 : K - 1;
    store<i32>(digit + (<usize>j << 2), d < K ? d : 0);
    for (let t = 0; t < nT; t++) {
      const p = off + (<usize>t << 2);
      store<i32>(p, load<i32>(p) - back * load<i32>(strides + (<usize>(t * nOuter + j) << 2)));
    }
    if (d < K) break;
  }
  return j >= 0;
}

/**
 * bucketBlock over log tables, for cliques whose linear products could underflow: the block's
 * log-products are sums. Pass 0: each output entry (prefilled with −∞) becomes the largest
 * log-product it gathers (also max-product elimination). Pass 1: s-tables (one per output at
 * sAddr u32[nOut], laid out as the output, zero-filled) gather Σ exp(x − max) with the maxima of
 * pass 0 read from the outputs: out = max + log s then (bucketLogFinish). One exp per
 * configuration and output, every term ≤ 1 and the largest = 1: exact for any dynamic range.
 */
export function bucketBlockLog(
  nOuter: i32, cards: usize, nIn: i32, nOut: i32, addr: usize, strides: usize, B: i32, runs: usize, pass: i32, sAddr: usize,
  digit: usize, off: usize, buf: usize,
): void {
  const nT = nIn + nOut;
  for (let j = 0; j < nOuter; j++) store<i32>(digit + (<usize>j << 2), 0);
  for (let t = 0; t < nT; t++) store<i32>(off + (<usize>t << 2), 0);
  const ninf = f64x2.splat(-Infinity);
  while (true) {
    combine(nIn, addr, B, runs, off, buf, 1);
    for (let t = nIn; t < nT; t++) {
      const r = runs + <usize>(t * 12);
      const kind = load<i32>(r), R = load<i32>(r, 4), segs = <usize>load<u32>(r, 8), nSeg = B / R;
      const o = <usize>load<i32>(off + (<usize>t << 2)) << 3;
      const base = <usize>load<u32>(addr + (<usize>t << 2)) + o;
      if (pass == 0) {
        segGather(kind, R, segs, nSeg, base, buf, 1, -Infinity, false);
        continue;
      }
      const sBase = <usize>load<u32>(sAddr + (<usize>(t - nIn) << 2)) + o;
      let b = buf;
      for (let s = 0; s < nSeg; s++) {
        const so = segAt(kind, segs, s);
        const e = b + (<usize>R << 3);
        if (kind != 0) {
          // One entry gathers the run: Σ exp(x − m), nothing where m = −∞ (every term is 0).
          const m = load<f64>(base + so);
          if (m == -Infinity) {
            b = e;
            continue;
          }
          let acc: f64 = 0;
          for (; b < e; b += 8) acc += Math.exp(load<f64>(b) - m);
          store<f64>(sBase + so, load<f64>(sBase + so) + acc);
        } else {
          let a = so;
          if ((R & 1) == 0) {
            for (; b < e; b += 16, a += 16) {
              const m = v128.load(base + a);
              const x = v128.and(expPairK(f64x2.sub(v128.load(b), m)), f64x2.gt(m, ninf));
              v128.store(sBase + a, f64x2.add(v128.load(sBase + a), x));
            }
          } else {
            for (; b < e; b += 8, a += 8) {
              const m = load<f64>(base + a);
              if (m > -Infinity) store<f64>(sBase + a, load<f64>(sBase + a) + Math.exp(load<f64>(b) - m));
            }
          }
        }
      }
    }
    if (!nextOuter(nOuter, cards, nT, strides, digit, off)) break;
  }
}

/** m[e] += log s[e] where m[e] > −∞ (bucketBlockLog's last step). */
export function bucketLogFinish(m: usize, s: usize, len: i32): void {
  for (let e: usize = 0; e < <usize>len << 3; e += 8) {
    const x = load<f64>(m + e);
    if (x > -Infinity) store<f64>(m + e, x + Math.log(load<f64>(s + e)));
  }
}

/**
 * A linear table relative to e^shift (entries ≥ 0) put into the form bucketLinearise gives:
 * when its positive entries span at most 700 nats, divided by its maximum in place, res (f64[3]) =
 * [1, shift + log max, log(max / min positive)]; else turned into logs (log x + shift, −∞ for 0),
 * res = [0, 0, span]. An all-zero table stays zero with res = [1, 0, 0].
 */
export function bucketRescale(p: usize, len: i32, shift: f64, res: usize): void {
  store<f64>(res, 0);
  store<f64>(res, Infinity, 8);
  rangeOf(p, p + (<usize>len << 3), res);
  bucketScale(p, len, shift, load<f64>(res), load<f64>(res, 8), res);
}

/** st f64[2] = the largest entry of p f64[len] and its smallest positive one. */
export function bucketRange(p: usize, len: i32, st: usize): void {
  store<f64>(st, 0);
  store<f64>(st, Infinity, 8);
  rangeOf(p, p + (<usize>len << 3), st);
}

/** bucketRescale given the table's largest entry hi and smallest positive one lo (already gathered). */
export function bucketScale(p: usize, len: i32, shift: f64, hi: f64, lo: f64, res: usize): void {
  const end = p + (<usize>len << 3);
  if (hi == 0) {
    store<f64>(res, 1);
    store<f64>(res, 0, 8);
    store<f64>(res, 0, 16);
    return;
  }
  const span = Math.log(hi / lo);
  store<f64>(res, span, 16);
  if (span <= 700) {
    const inv = f64x2.splat(1 / hi);
    let q = p;
    for (; q + 16 <= end; q += 16) v128.store(q, f64x2.mul(v128.load(q), inv));
    if (q < end) store<f64>(q, load<f64>(q) * (1 / hi));
    store<f64>(res, 1);
    store<f64>(res, shift + Math.log(hi), 8);
  } else {
    for (let q = p; q < end; q += 8) {
      const x = load<f64>(q);
      store<f64>(q, x > 0 ? Math.log(x) + shift : -Infinity);
    }
    store<f64>(res, 0);
    store<f64>(res, 0, 8);
  }
}

/**
 * A clique's one child c: d (f64[len], δ_c streamed without m_c, relative to e^shift; st f64[2]
 * its largest entry and smallest positive one) is put in the form bucketScale gives and copied over
 * m (m_c, whose first digit is the clique's eliminated variable, K states): marg f64[K] gets
 * Σ d · m over each state's slab (the variable's unnormalised marginal) before m is overwritten.
 * One pass in the linear case: no quotient belief / m_c and no separate rescaling.
 */
export function bucketDelta(d: usize, m: usize, len: i32, K: i32, shift: f64, st: usize, marg: usize, res: usize): void {
  const hi = load<f64>(st), lo = load<f64>(st, 8);
  const slab = <usize>(len / K) << 3;
  const span = hi > 0 ? Math.log(hi / lo) : 0;
  const copy = hi > 0 && span <= 700;
  const inv = f64x2.splat(copy ? 1 / hi : 1);
  for (let k = 0; k < K; k++) {
    const a = <usize>k * slab;
    let acc = f64x2.splat(0);
    let e: usize = 0;
    for (; e + 16 <= slab; e += 16) {
      const x = v128.load(d + a + e);
      acc = f64x2.add(acc, f64x2.mul(x, v128.load(m + a + e)));
      if (copy) v128.store(m + a + e, f64x2.mul(x, inv));
    }
    let y = f64x2.extract_lane(acc, 0) + f64x2.extract_lane(acc, 1);
    if (e < slab) {
      const x = load<f64>(d + a + e);
      y += x * load<f64>(m + a + e);
      if (copy) store<f64>(m + a + e, x * (1 / hi));
    }
    store<f64>(marg + (<usize>k << 3), y);
  }
  if (copy) {
    store<f64>(res, 1);
    store<f64>(res, shift + Math.log(hi), 8);
    store<f64>(res, span, 16);
  } else {
    // All zero, or past the linear range: bucketScale's other forms, then the copy.
    bucketScale(d, len, shift, hi, lo, res);
    memory.copy(m, d, <usize>len << 3);
  }
}

/**
 * dst[e] = belief[e] / m[e] where m[e] > 0, else 0: a separator belief over the child's linear
 * upward message (dst may be m: the downward message then takes the upward one's place); st
 * (f64[2]) = the largest result and the smallest positive one (bucketScale's hi and lo).
 */
export function bucketQuotient(belief: usize, len: i32, m: usize, dst: usize, st: usize): void {
  const bytes = <usize>len << 3, zero = f64x2.splat(0), inf = f64x2.splat(Infinity);
  let hv = zero, lv = inf;
  let e: usize = 0;
  for (; e + 16 <= bytes; e += 16) {
    const x = v128.load(m + e);
    const y = v128.and(f64x2.div(v128.load(belief + e), x), f64x2.gt(x, zero));
    v128.store(dst + e, y);
    hv = f64x2.pmax(hv, y);
    lv = f64x2.pmin(lv, v128.bitselect(y, inf, f64x2.gt(y, zero)));
  }
  let hi = max(f64x2.extract_lane(hv, 0), f64x2.extract_lane(hv, 1));
  let lo = min(f64x2.extract_lane(lv, 0), f64x2.extract_lane(lv, 1));
  if (e < bytes) {
    const x = load<f64>(m + e);
    const y = x > 0 ? load<f64>(belief + e) / x : 0;
    store<f64>(dst + e, y);
    hi = max(hi, y);
    if (y > 0) lo = min(lo, y);
  }
  store<f64>(st, hi);
  store<f64>(st, lo, 8);
}

/** p[e] = log(p[e]) + scale (−∞ for 0): a linear table back to the log domain, in place. */
export function bucketToLog(p: usize, len: i32, scale: f64): void {
  const end = p + (<usize>len << 3);
  for (let q = p; q < end; q += 8) {
    const x = load<f64>(q);
    store<f64>(q, x > 0 ? Math.log(x) + scale : -Infinity);
  }
}

/** dst[e] = belief[e] − m[e] where both are > −∞, else −∞ (bucketQuotient in the log domain; dst may be m). */
export function bucketLogQuotient(belief: usize, len: i32, m: usize, dst: usize): void {
  for (let e: usize = 0; e < <usize>len << 3; e += 8) {
    const x = load<f64>(m + e), b = load<f64>(belief + e);
    store<f64>(dst + e, x > -Infinity && b > -Infinity ? b - x : -Infinity);
  }
}
