// The cost of an elimination order on adjacency bitsets (bindings/exact/order-search.ts: the order
// annealing's evaluations and orderCost): each variable's neighbours gain its other neighbours, one
// OR of W u64 words per neighbour. Work is counted in the budget's unit (bitset words of 32 bits and
// per-neighbour bookkeeping), so a budget buys the same evaluations on every machine.

/** The per-neighbour bookkeeping of an elimination step, in bitset words of the same time. */
const NEIGHBOUR_WORDS: f64 = 4;

/**
 * Eliminates the variables in order (i32[n] at `order`) on a copy of the adjacency bitsets (u64[n ·
 * W] at adj, copied to scratch), stopping once the objective log2 Σ_v |C_v| + penalty · (log2
 * largest message − bound)⁺ passes stopAt. logK: f64[n], log2 of each cardinality. out (f64[6]) =
 * [log2 flops, log2 largest message, treewidth, objective, complete (1/0), work], work in 32-bit
 * words (words32 per set).
 */
export function orderCostRun(adj: usize, scratch: usize, W: i32, words32: i32, n: i32, order: usize, logK: usize, maxLog2Message: f64, penalty: f64, stopAt: f64, out: usize): void {
  const setBytes = <usize>W << 3;
  memory.copy(scratch, adj, <usize>n * setBytes);
  let flops: f64 = 0, maxMsg: f64 = 0, objective: f64 = -Infinity, work: f64 = 0;
  let tw = 0, complete = 1;
  for (let t = 0; t < n; t++) {
    const v = load<i32>(order + (<usize>t << 2));
    const rv = scratch + <usize>v * setBytes;
    let msg: f64 = 0;
    let d = 0;
    for (let w = 0; w < W; w++) {
      let bits = load<u64>(rv + (<usize>w << 3));
      while (bits != 0) {
        const u = (w << 6) + <i32>ctz<u64>(bits);
        bits &= bits - 1;
        msg += load<f64>(logK + (<usize>u << 3));
        d++;
        // u gains v's other neighbours and loses v.
        const ru = scratch + <usize>u * setBytes;
        for (let q: usize = 0; q < setBytes; q += 8) store<u64>(ru + q, load<u64>(ru + q) | load<u64>(rv + q));
        const pu = ru + (<usize>(u >>> 6) << 3), pv = ru + (<usize>(v >>> 6) << 3);
        store<u64>(pu, load<u64>(pu) & ~(<u64>1 << <u64>(u & 63)));
        store<u64>(pv, load<u64>(pv) & ~(<u64>1 << <u64>(v & 63)));
      }
    }
    work += <f64>(d + 1) * (<f64>words32 + NEIGHBOUR_WORDS);
    flops += Math.exp2(msg + load<f64>(logK + (<usize>v << 3)));
    if (msg > maxMsg) maxMsg = msg;
    if (d > tw) tw = d;
    objective = Math.log2(flops) + penalty * max(0, maxMsg - maxLog2Message);
    if (objective > stopAt) {
      complete = 0;
      break;
    }
  }
  store<f64>(out, Math.log2(flops));
  store<f64>(out, maxMsg, 8);
  store<f64>(out, <f64>tw, 16);
  store<f64>(out, objective, 24);
  store<f64>(out, <f64>complete, 32);
  store<f64>(out, work, 40);
}
