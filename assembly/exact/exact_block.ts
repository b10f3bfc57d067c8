// The linear-arithmetic clique stream of bucket elimination, block by block (the planning and the
// layouts are in bindings/exact/bucket-elimination.ts).
//
// Every table is laid out in elimination order (the first-eliminated variable slowest), so within
// a clique the latest-eliminated variables are the fastest digits of every table containing them.
// The clique's digits are split into outer digits (an odometer) and a block: the trailing digits,
// B configurations. Seen over the block, each table is a run of R entries repeated over B/R
// segments: contiguous (kind 0: the table holds the block's last digits, entries at seg[s] + r) or
// constant (kind 1: it holds none of them, one entry at seg[s] per segment). So for every outer
// configuration the product of the inputs over the whole block is formed with f64x2 loads and
// multiplies, a table holding no block digit costs one multiply per block, and the offsets are
// moved once per block, never per configuration; then each output gathers the block (sum or max)
// into its own entries the same way. Nothing of the clique's size is stored: the block buffer is
// the only workspace.

// @ts-ignore: decorator
@inline function segRun(kind: i32, R: i32, segs: usize, nSeg: i32, base: usize, buf: usize, first: bool, c: f64): void {
  const rb = <usize>R << 3;
  if (kind == 1) {
    // Constant over each run: one entry per segment.
    let b = buf;
    for (let s = 0; s < nSeg; s++) {
      const x = load<f64>(base + (<usize>load<i32>(segs + (<usize>s << 2)) << 3)) * (first ? c : 1);
      const e = b + rb;
      if ((R & 1) == 0) {
        const xv = f64x2.splat(x);
        if (first) for (; b < e; b += 16) v128.store(b, xv);
        else for (; b < e; b += 16) v128.store(b, f64x2.mul(v128.load(b), xv));
      } else {
        if (first) for (; b < e; b += 8) store<f64>(b, x);
        else for (; b < e; b += 8) store<f64>(b, load<f64>(b) * x);
      }
    }
  } else {
    let b = buf;
    const cv = f64x2.splat(c);
    for (let s = 0; s < nSeg; s++) {
      let a = base + (<usize>load<i32>(segs + (<usize>s << 2)) << 3);
      const e = b + rb;
      if ((R & 1) == 0) {
        if (first) for (; b < e; b += 16, a += 16) v128.store(b, f64x2.mul(v128.load(a), cv));
        else for (; b < e; b += 16, a += 16) v128.store(b, f64x2.mul(v128.load(b), v128.load(a)));
      } else {
        if (first) for (; b < e; b += 8, a += 8) store<f64>(b, load<f64>(a) * c);
        else for (; b < e; b += 8, a += 8) store<f64>(b, load<f64>(b) * load<f64>(a));
      }
    }
  }
}

// out op= the block (op: + in mode 0, max in mode 1), through the output's runs.
// @ts-ignore: decorator
@inline function segGather(kind: i32, R: i32, segs: usize, nSeg: i32, base: usize, buf: usize, mode: i32): void {
  const rb = <usize>R << 3;
  let b = buf;
  if (kind == 1) {
    for (let s = 0; s < nSeg; s++) {
      const e = b + rb;
      let acc = f64x2.splat(0);
      let a1: f64 = 0;
      if ((R & 1) == 0) {
        if (mode == 0) for (; b < e; b += 16) acc = f64x2.add(acc, v128.load(b));
        else for (; b < e; b += 16) acc = f64x2.pmax(acc, v128.load(b));
      } else {
        if (mode == 0) for (; b < e; b += 8) a1 += load<f64>(b);
        else for (; b < e; b += 8) a1 = max(a1, load<f64>(b));
      }
      const p = base + (<usize>load<i32>(segs + (<usize>s << 2)) << 3);
      const l0 = f64x2.extract_lane(acc, 0), l1 = f64x2.extract_lane(acc, 1);
      if (mode == 0) store<f64>(p, load<f64>(p) + (a1 + l0 + l1));
      else store<f64>(p, max(load<f64>(p), max(a1, max(l0, l1))));
    }
  } else {
    for (let s = 0; s < nSeg; s++) {
      let a = base + (<usize>load<i32>(segs + (<usize>s << 2)) << 3);
      const e = b + rb;
      if ((R & 1) == 0) {
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
 * configurations, added (mode 0) or maxed (mode 1) into each of the nOut outputs (prefilled by
 * the caller, usually with zeros). Tables t = 0 … nIn − 1 are the inputs, nIn … nIn + nOut − 1
 * the outputs: addr u32[t] (byte address of the entry at the all-zero configuration), strides
 * i32[t · nOuter + j] (entries per step of outer digit j), runs i32[3 t …] = (kind, R, byte
 * address of the i32[B / R] segment offsets) as in the file header; an input of kind 1 with
 * R = B (no block digit) is a scalar factor of the block. Workspace: digit i32[nOuter],
 * off i32[nIn + nOut], buf f64[B].
 */
export function bucketBlock(
  nOuter: i32, cards: usize, nIn: i32, nOut: i32, addr: usize, strides: usize, B: i32, runs: usize, mode: i32,
  digit: usize, off: usize, buf: usize,
): void {
  const nT = nIn + nOut;
  for (let j = 0; j < nOuter; j++) store<i32>(digit + (<usize>j << 2), 0);
  for (let t = 0; t < nT; t++) store<i32>(off + (<usize>t << 2), 0);
  while (true) {
    // Scalar inputs first, then the block inputs (the first one writes the buffer).
    let c: f64 = 1;
    for (let t = 0; t < nIn; t++) {
      const r = runs + <usize>(t * 12);
      if (load<i32>(r) == 1 && load<i32>(r, 4) == B) c *= load<f64>(<usize>load<u32>(addr + (<usize>t << 2)) + (<usize>load<i32>(off + (<usize>t << 2)) << 3));
    }
    let first = true;
    for (let t = 0; t < nIn; t++) {
      const r = runs + <usize>(t * 12);
      const kind = load<i32>(r), R = load<i32>(r, 4);
      if (kind == 1 && R == B) continue;
      const base = <usize>load<u32>(addr + (<usize>t << 2)) + (<usize>load<i32>(off + (<usize>t << 2)) << 3);
      segRun(kind, R, <usize>load<u32>(r, 8), B / R, base, buf, first, c);
      first = false;
    }
    if (first) {
      const bufEnd = buf + (<usize>B << 3);
      for (let b = buf; b < bufEnd; b += 8) store<f64>(b, c);
    }
    for (let t = nIn; t < nT; t++) {
      const r = runs + <usize>(t * 12);
      const R = load<i32>(r, 4);
      const base = <usize>load<u32>(addr + (<usize>t << 2)) + (<usize>load<i32>(off + (<usize>t << 2)) << 3);
      segGather(load<i32>(r), R, <usize>load<u32>(r, 8), B / R, base, buf, mode);
    }
    // Outer odometer (last digit fastest), moving every table's offset.
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
    if (j < 0) break;
  }
}

/**
 * A linear table relative to e^shift (entries ≥ 0) put into the form bucketLinearise gives:
 * when its positive entries span at most 700 nats, divided by its maximum in place, res (f64[3]) =
 * [1, shift + log max, log(max / min positive)]; else turned into logs (log x + shift, −∞ for 0),
 * res = [0, 0, span]. An all-zero table stays zero with res = [1, 0, 0].
 */
export function bucketRescale(p: usize, len: i32, shift: f64, res: usize): void {
  const end = p + (<usize>len << 3);
  // Largest entry and smallest positive one, two lanes at a time (zeros read as +∞ for the minimum).
  const inf = f64x2.splat(Infinity), zero = f64x2.splat(0);
  let hv = zero, lv = inf;
  let q = p;
  for (; q + 16 <= end; q += 16) {
    const x = v128.load(q);
    hv = f64x2.pmax(hv, x);
    lv = f64x2.pmin(lv, v128.bitselect(x, inf, f64x2.gt(x, zero)));
  }
  let hi = max(f64x2.extract_lane(hv, 0), f64x2.extract_lane(hv, 1));
  let lo = min(f64x2.extract_lane(lv, 0), f64x2.extract_lane(lv, 1));
  if (q < end) {
    const x = load<f64>(q);
    hi = max(hi, x);
    if (x > 0) lo = min(lo, x);
  }
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
    q = p;
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
 * dst[e] = belief[e] / m[e] where m[e] > 0, else 0: a separator belief over the child's linear
 * upward message (dst may be m: the downward message then takes the upward one's place).
 */
export function bucketQuotient(belief: usize, len: i32, m: usize, dst: usize): void {
  const bytes = <usize>len << 3, zero = f64x2.splat(0);
  let e: usize = 0;
  for (; e + 16 <= bytes; e += 16) {
    const x = v128.load(m + e);
    v128.store(dst + e, v128.and(f64x2.div(v128.load(belief + e), x), f64x2.gt(x, zero)));
  }
  if (e < bytes) {
    const x = load<f64>(m + e);
    store<f64>(dst + e, x > 0 ? load<f64>(belief + e) / x : 0);
  }
}
