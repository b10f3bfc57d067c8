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

/**
 * Streams the clique into `out` (see the file header). cards: i32[nd]; tables: u32[nIn] byte
 * addresses of the inputs (their entry for the all-zero clique configuration); strides:
 * i32[nIn · nd] (input i's stride for digit j at i·nd + j, in entries); outStrides: i32[nd] (0 for
 * the summed digits). Requires nKeep < nd. Workspace: digit i32[nd], off i32[nIn + 1],
 * buf f64[cards[nd − 1]].
 */
export function bucketStream(
  nd: i32, cards: usize, nKeep: i32, nIn: i32, tables: usize, strides: usize, out: usize, outStrides: usize,
  mode: i32, digit: usize, off: usize, buf: usize,
): void {
  for (let j = 0; j < nd; j++) store<i32>(digit + (<usize>j << 2), 0);
  for (let i = 0; i <= nIn; i++) store<i32>(off + (<usize>i << 2), 0);
  const last = nd - 1;
  const K = load<i32>(cards + (<usize>last << 2));
  const bufEnd = buf + (<usize>K << 3);
  while (true) {
    let m: f64 = -Infinity;
    let s: f64 = 0;
    while (true) {
      for (let b = buf; b < bufEnd; b += 8) store<f64>(b, 0);
      for (let i = 0; i < nIn; i++) {
        let at = <usize>load<u32>(tables + (<usize>i << 2)) + (<usize>load<i32>(off + (<usize>i << 2)) << 3);
        const step = <usize>load<i32>(strides + (<usize>(i * nd + last) << 2)) << 3;
        for (let b = buf; b < bufEnd; b += 8) {
          store<f64>(b, load<f64>(b) + load<f64>(at));
          at += step;
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
    const o = load<i32>(off + (<usize>nIn << 2));
    store<f64>(out + (<usize>o << 3), mode == 0 && m > -Infinity ? m + Math.log(s) : m);
    if (nKeep == 0 || !advance(0, nKeep - 1, nd, cards, digit, nIn, strides, off, outStrides)) break;
  }
}
