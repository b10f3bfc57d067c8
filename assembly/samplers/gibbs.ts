// Sequential single-site Gibbs on the discrete model p(s): a systematic scan over the blocks, each
// redrawn from its conditional — Bernoulli(σ(u)) for a free bit, softmax over a one-hot block.
//
// Chain state layout (one chain, arena memory): [Philox stream, 64 B][s: u8 per bit].
// While accumulating, the conditional probabilities p(s_i = 1 | s_−i) are summed into acc
// (Rao–Blackwellised marginals: lower variance than counting sampled bits).

import { Philox, PHILOX_BYTES, uniform32 } from '../core/rng';
import { PairwiseForm, localField } from '../core/pairwise';
import { EXP_K, expPair, expPairK } from '../core/vmath';
import { philox4Blocks } from '../core/rng_lanes';
import { tablePattern } from './gibbs_table';

export function gibbsChainBytes(m: PairwiseForm): usize {
  return PHILOX_BYTES + <usize>m.nBits;
}

/** Uniformly random valid starting configuration, drawn from the chain's own stream. */
export function gibbsChainInit(m: PairwiseForm, chain: usize): void {
  const r = changetype<Philox>(chain);
  const s = chain + PHILOX_BYTES;
  memory.fill(s, 0, <usize>m.nBits);
  for (let v = 0; v < m.nBlocks; v++) {
    const b = load<i32>(m.blockStart + (<usize>v << 2));
    if (load<u8>(m.oneHot + <usize>v)) {
      const K = load<i32>(m.blockStart + (<usize>(v + 1) << 2)) - b;
      const k = min<i32>(<i32>(uniform32(r) * <f64>K), K - 1);
      store<u8>(s + <usize>(b + k), 1);
    } else {
      store<u8>(s + <usize>b, uniform32(r) < 0.5 ? 1 : 0);
    }
  }
}

/**
 * Runs `sweeps` full scans. acc: f64 per bit to add conditional probabilities into, or 0.
 * scratch: f64 per bit of the largest block. off, table: a probability table (gibbs_table.ts) of
 * this all-free-bit model, or 0 — the same chain either way. Returns the number of variables whose
 * state changed.
 */
export function gibbsSweeps(m: PairwiseForm, chain: usize, sweeps: i32, acc: usize, scratch: usize, off: usize = 0, table: usize = 0): f64 {
  const r = changetype<Philox>(chain);
  const s = chain + PHILOX_BYTES;
  if (m.allFree) return table ? freeBitSweeps<f64>(m, r, s, sweeps, acc, off, table) : freeBitSweeps<u8>(m, r, s, sweeps, acc, 0, 0);
  let changed: f64 = 0;
  for (let t = 0; t < sweeps; t++) {
    for (let v = 0; v < m.nBlocks; v++) {
      const b = load<i32>(m.blockStart + (<usize>v << 2));
      if (!load<u8>(m.oneHot + <usize>v)) {
        const p = 1.0 / (1.0 + Math.exp(-localField(m, s, b)));
        const bit: u8 = uniform32(r) < p ? 1 : 0;
        if (bit != load<u8>(s + <usize>b)) changed += 1;
        store<u8>(s + <usize>b, bit);
        if (acc) store<f64>(acc + (<usize>b << 3), load<f64>(acc + (<usize>b << 3)) + p);
        continue;
      }
      changed += <f64>oneHotUpdate(m, s, r, b, load<i32>(m.blockStart + (<usize>(v + 1) << 2)) - b, acc, scratch);
    }
  }
  return changed;
}

// ---------------------------------------------------------------------------------------------
// Free-bit fast path (every block a single bit: Ising models, Boltzmann machines, RBMs).
//
// It draws exactly what the plain scan above does — per bit i in order: u = a_i + Σ_j (s_j ? W_ij
// : +0.0) in CSR order, p = 1/(1+exp(−u)), accept when uniform32 < p, acc_i += p — but the plain
// loop is latency-bound: bit i−1, just drawn, feeds u_i, which feeds exp, the division, the
// compare and bit i (~80 cycles a bit, with little else to overlap). Here u_i is computed for BOTH
// values of s_{i−1} at once (f64x2 lanes: lane 0 as if s_{i−1} = 0, lane 1 as if 1; the other
// neighbours are read from memory, where they are final), through one two-lane exp and division,
// and the freshly drawn bit i−1 then only selects a lane. Bit i's arithmetic no longer waits for
// bit i−1, so consecutive bits overlap. Each lane does the same IEEE operations in the same order
// as the scalar code and expPair is Math.exp lane by lane, so p, every draw, the accumulator and
// the generator's state are bit-identical to the plain scan (bench/run.ts checks this against a C
// and a JS reference, across split calls, and expPair against the general path's Math.exp).
// Other costs removed: the generator's words come four Philox blocks at a time (SIMD), its
// position lives in a local, and no branch depends on a random bit (a float `select` compiles to a
// branch in V8; integer selects and lane masks do not).

// Lane masks for a neighbour's term, 16 bytes each: s_j = 0, s_j = 1, and the s_{i−1} term
// ([+0.0, W]). Indexed by the state byte, so chain bits must be exactly 0 or 1 — they are: only
// gibbsChainInit and these sweeps write them.
const MASKS = memory.data<u64>([0, 0, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0, 0xFFFFFFFFFFFFFFFF]);

const RNG_BUF = memory.data(64, 16);

// T = f64: p is read from the probability table (off, table) at the neighbours' pattern instead
// (gibbs_table.ts: the same p, bit for bit); T = u8: the fields are summed as described above.
function freeBitSweeps<T>(m: PairwiseForm, r: Philox, s: usize, sweeps: i32, acc: usize, off: usize, table: usize): f64 {
  const fromTable = sizeof<T>() == 8;
  const n = m.nBits;
  if (sweeps <= 0 || n <= 0) return 0; // draws nothing: the chain's state stays as it is
  const a = m.a, rowPtr = m.rowPtr, col = m.col, val = m.val;
  const outWords = changetype<usize>(r) + offsetof<Philox>('out0');
  // The stream, for the whole call, four blocks at a time in RNG_BUF. On entry the buffer's last
  // block is the chain's current one (r.out*, next word r.pos); on exit the chain's state is set to
  // exactly what word-by-word next32 calls would have left.
  v128.store(RNG_BUF, v128.load(outWords), 48);
  let ctr = (<u64>r.ctr1 << 32) | <u64>r.ctr0; // next block to generate
  let pos = 12 + r.pos; // next word in RNG_BUF (16: used up)
  const ctr2 = r.ctr2, ctr3 = r.ctr3, k0 = r.key0, k1 = r.key1;
  const one = v128.load64_splat(EXP_K, 72);
  const kInv = v128.load64_splat(EXP_K, 0), kShift = v128.load64_splat(EXP_K, 8);
  const kHi = v128.load64_splat(EXP_K, 16), kLo = v128.load64_splat(EXP_K, 24);
  const c2 = v128.load64_splat(EXP_K, 32), c3 = v128.load64_splat(EXP_K, 40);
  const c4 = v128.load64_splat(EXP_K, 48), c5 = v128.load64_splat(EXP_K, 56);
  const lim = v128.load64_splat(EXP_K, 64);
  let changed: f64 = 0;
  for (let t = 0; t < sweeps; t++) {
    let c = 0;
    let prev = 0; // bit i−1 as just drawn (bit 0 has no such neighbour: its two lanes are equal)
    let cp = col + (<usize>load<i32>(rowPtr) << 2); // CSR cursor: column, and value at the same k
    let vp = val + (<usize>load<i32>(rowPtr) << 3);
    for (let i = 0; i < n; i++) {
      let p: f64;
      let e: usize = 0; // the table entry [p, accept threshold]
      if (fromTable) {
        const o = load<i32>(off + (<usize>i << 2));
        if (o >= 0) {
          const row0 = load<i32>(rowPtr + (<usize>i << 2)), row1 = load<i32>(rowPtr + (<usize>(i + 1) << 2));
          e = table + (<usize>(o + tablePattern(m, s, row0, row1)) << 4);
          p = load<f64>(e);
        } else {
          p = 1.0 / (1.0 + Math.exp(-localField(m, s, i))); // no table (degree > TABLE_MAX_DEGREE)
        }
      } else {
        const cend = col + (<usize>load<i32>(rowPtr + (<usize>(i + 1) << 2)) << 2);
        const im1 = i - 1;
        let u = v128.load64_splat(a + (<usize>i << 3));
        for (; cp < cend; cp += 4, vp += 8) {
          const j = load<i32>(cp);
          // Never read s_{i−1} here: that read would put bit i−1 back on bit i's critical path. (This
          // branch is predictable; a branch on s_j would not be.)
          const mask = j == im1 ? <usize>32 : <usize>load<u8>(s + <usize>j) << 4;
          u = f64x2.add(u, v128.and(v128.load64_splat(vp), v128.load(MASKS + mask)));
        }
        const pp = f64x2.div(one, f64x2.add(one, expPair(f64x2.neg(u), kInv, kShift, kHi, kLo, c2, c3, c4, c5, lim)));
        // Pick the lane with an integer select (a cmov): a float select would be a branch on the
        // random bit i−1, and each misprediction would throw away the overlapped work.
        p = reinterpret<f64>(select<i64>(i64x2.extract_lane(pp, 1), i64x2.extract_lane(pp, 0), prev != 0));
      }
      if (pos >= 16) {
        philox4Blocks(RNG_BUF, ctr, ctr2, ctr3, k0, k1);
        ctr += 4;
        pos = 0;
      }
      const w = load<u32>(RNG_BUF + (<usize>pos << 2));
      pos++;
      // uniform32(w) < p; with a table entry: the same test on the integer word (gibbs_table.ts).
      const bit = fromTable && e ? <i32>(<i64>w < load<i64>(e, 8)) : <i32>((<f64>w + 0.5) * 2.3283064365386963e-10 < p);
      c += <i32>(bit != <i32>load<u8>(s + <usize>i));
      store<u8>(s + <usize>i, <u8>bit);
      prev = bit;
      if (acc) store<f64>(acc + (<usize>i << 3), load<f64>(acc + (<usize>i << 3)) + p);
    }
    changed += <f64>c;
  }
  // The block holding the last word drawn becomes the chain's current block (at least one word
  // was drawn, so pos ≥ 13, or 1…16 after a refill).
  const q = (pos - 1) >> 2;
  v128.store(outWords, v128.load(RNG_BUF + (<usize>q << 4)));
  const cur = ctr - 3 + <u64>q; // that block's counter + 1
  r.ctr0 = <u32>cur;
  r.ctr1 = <u32>(cur >>> 32);
  r.pos = pos - (q << 2);
  return changed;
}

/** Softmax update of the one-hot block at bits b … b+K−1; returns 1 if its state changed. */
function oneHotUpdate(m: PairwiseForm, s: usize, r: Philox, b: i32, K: i32, acc: usize, scratch: usize): i32 {
  // Within-block entries of W are not stored, so each field sees only other blocks.
  let old = 0;
  let top = -Infinity;
  // Integer selects (cmov) rather than branches on the random current state and on field order.
  for (let k = 0; k < K; k++) {
    old = select<i32>(k, old, load<u8>(s + <usize>(b + k)) != 0);
    const u = localField(m, s, b + k);
    store<f64>(scratch + (<usize>k << 3), u);
    top = reinterpret<f64>(select<i64>(reinterpret<i64>(u), reinterpret<i64>(top), u > top));
  }
  // Every state impossible given the neighbours: the chain is outside the support (a random start
  // in a model with zeros). Move uniformly over the states the variable's own factors and evidence
  // allow (bias a > −∞: an observed variable never leaves its value) until it gets in; from then on
  // this cannot happen.
  const lost = top == -Infinity;
  let total = 0.0;
  let k = 0;
  if (lost) {
    for (; k < K; k++) {
      const w: f64 = load<f64>(m.a + (<usize>(b + k) << 3)) > -Infinity ? 1.0 : 0.0;
      store<f64>(scratch + (<usize>k << 3), w);
      total += w;
    }
  } else {
    // Weights exp(u_k − top), two states per expPair (Math.exp lane by lane); summed in order.
    const topv = f64x2.splat(top);
    for (; k + 1 < K; k += 2) {
      const q = scratch + (<usize>k << 3);
      const w = expPairK(f64x2.sub(v128.load(q), topv));
      v128.store(q, w);
      total += f64x2.extract_lane(w, 0);
      total += f64x2.extract_lane(w, 1);
    }
    if (k < K) {
      const q = scratch + (<usize>k << 3);
      const w = Math.exp(load<f64>(q) - top);
      store<f64>(q, w);
      total += w;
    }
  }
  // The first state whose cumulative weight passes the target (the last if none does). The
  // cumulative sums never decrease, so that index is the number of sums not past the target:
  // counted without a data-dependent branch.
  const target = uniform32(r) * total;
  let cum = 0.0;
  let below = 0;
  for (k = 0; k < K; k++) {
    cum += load<f64>(scratch + (<usize>k << 3));
    below += <i32>!(target < cum);
  }
  const pick = placeOneHot(s, b, K, old, min(below, K - 1), scratch, total, acc);
  return <i32>(pick != old);
}

/**
 * Moves one-hot block b (K states) from `old` to the drawn state `pick`, stepping back past states
 * of zero weight (the last state can carry zero weight only through rounding), and adds the
 * normalised weights scratch[k] / total into acc (when acc ≠ 0). Returns the state placed.
 * Shared by the Gibbs scan and the tempering replicas (tempering.ts).
 */
@inline
export function placeOneHot(s: usize, b: i32, K: i32, old: i32, pick: i32, scratch: usize, total: f64, acc: usize): i32 {
  while (load<f64>(scratch + (<usize>pick << 3)) == 0.0) pick--;
  store<u8>(s + <usize>(b + old), 0);
  store<u8>(s + <usize>(b + pick), 1);
  if (acc) {
    const inv = 1.0 / total;
    for (let k = 0; k < K; k++) {
      const q = acc + (<usize>(b + k) << 3);
      store<f64>(q, load<f64>(q) + load<f64>(scratch + (<usize>k << 3)) * inv);
    }
  }
  return pick;
}
