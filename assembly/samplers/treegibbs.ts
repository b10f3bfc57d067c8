// Tree-block Gibbs (Hamze & de Freitas 2004, "From fields to trees") on the canonical form p(s):
// the variables are partitioned into blocks each inducing a forest of the interaction graph
// (bindings/treeblocks.ts), and each block in turn is redrawn jointly and exactly from its
// conditional given the rest by forward filtering / backward sampling:
//
//   1. the block's bits are cleared, so localField sees only neighbours outside the block: the
//      unary log-potential of variable v in state k is φ_v(k) = field of v's bit for k (free bit:
//      φ(0) = 0, φ(1) = field);
//   2. upward pass, leaves first (reverse breadth-first order): h_v = φ_v + Σ_children messages,
//      m_{v→p}(l) = log Σ_k exp(h_v(k) + ψ_vp(k, l)), added into h_p;
//   3. downward pass, roots first: x_root ~ exp(h_root), x_v ~ exp(h_v(k) + ψ_vp(k, x_p));
//   4. when marginals are accumulated (Rao–Blackwellised, as the single-site sampler's): each block
//      variable's exact conditional π_v(k) = p(x_v = k | x_outside the block), roots first:
//      π_root ∝ exp(h_root), π_v(k) = Σ_l π_p(l) q_v(k | l) with q_v(k | l) ∝ exp(h_v(k) + ψ_vp(k, l))
//      the within-block conditional that step 3 draws from (the downward message written out:
//      exp(b_p(l) − m_{v→p}(l)) ∝ π_p(l) / Σ_k exp(h_v(k) + ψ_vp(k, l))). The upward pass already
//      exponentiates these weights (its log-sum-exps) and keeps them, so the step costs no
//      transcendental call past the roots. These probabilities, not the drawn states, go into acc.
//      They depend only on the variables outside the block, so averaged over sweeps they estimate
//      the marginals without bias, and states too rare to be drawn still read their probability.
//
// ψ_vp(k, l) is W between the bit of (v, k) and the bit of (p, l) (0 where either is a free bit's
// state 0 or W holds no entry), read through per-edge index tables built by the bindings, so the
// same tables serve a tempered copy of the form (assembly/ais.ts rewrites a and W in place).
// Everything is in log space with max-shifted log-sum-exp: −∞ (zero potentials) propagates as −∞,
// a log-sum-exp over only −∞ is −∞, and no +∞ can arise, so no NaN. A block whose every joint state
// is impossible given the rest (a chain started outside the support) is redrawn uniformly, as the
// single-site sampler does (assembly/gibbs.ts); once in the support a chain stays there.
//
// Chain state layout: the Gibbs sampler's ([Philox, 64 B][s: u8 per bit]).

import { Philox, PHILOX_BYTES, uniform32 } from '../core/rng';
import { PairwiseForm, localField } from '../core/pairwise';

/** The partition as the kernel reads it (arrays owned by the bindings). */
@unmanaged
export class TreeBlocks {
  nTreeBlocks: i32;
  nStates: i32; // Σ_v K_v
  maxCard: i32;
  pad: i32; // unused
  blockPtr: usize; // i32[nTreeBlocks + 1]: each block's slice of order
  order: usize; // i32[nBlocks]: variables block by block, breadth-first within each block's trees
  parent: usize; // i32[nBlocks]: tree parent, −1 at a root
  stateStart: usize; // i32[nBlocks + 1]: offsets of each variable's states in h
  pairOff: usize; // i32[nBlocks]: offset of v's edge table (to its parent) in pairIdx
  pairIdx: usize; // i32[…]: per non-root v, K_v × K_parent entries: index into W's val, or −1
  coup: usize; // f64[nBlocks]: free bits only: W between v and its parent (0 at a root), as of treeRefresh
  expCoup: usize; // f64[nBlocks]: exp of coup
}

export function treeBlocksBytes(): usize {
  return offsetof<TreeBlocks>();
}

export function treeBlocksInit(
  hdr: usize, nTreeBlocks: i32, nStates: i32, maxCard: i32,
  blockPtr: usize, order: usize, parent: usize, stateStart: usize, pairOff: usize, pairIdx: usize, coup: usize, expCoup: usize,
): void {
  const t = changetype<TreeBlocks>(hdr);
  t.nTreeBlocks = nTreeBlocks;
  t.nStates = nStates;
  t.maxCard = maxCard;
  t.blockPtr = blockPtr;
  t.order = order;
  t.parent = parent;
  t.stateStart = stateStart;
  t.pairOff = pairOff;
  t.pairIdx = pairIdx;
  t.coup = coup;
  t.expCoup = expCoup;
}

/**
 * Caches each free bit's coupling to its parent, and its exp, from the form's current values: the
 * free-bit path reads these. Call after every change of W's values (AIS: after each tempering).
 */
export function treeRefresh(model: usize, tree: usize): void {
  const m = changetype<PairwiseForm>(model);
  const t = changetype<TreeBlocks>(tree);
  if (!m.allFree) return;
  for (let v = 0; v < m.nBlocks; v++) {
    let w: f64 = 0;
    if (ld32(t.parent, v) >= 0) {
      const idx = ld32(t.pairIdx, ld32(t.pairOff, v) + 3); // entry (k, l) = (1, 1) of the 2 × 2 table
      if (idx >= 0) w = load<f64>(m.val + (<usize>idx << 3));
    }
    store<f64>(t.coup + (<usize>v << 3), w);
    store<f64>(t.expCoup + (<usize>v << 3), Math.exp(w));
  }
}

/**
 * Bytes of the work buffer treeSweeps needs: h (f64 per state), weights (f64 per state of the
 * largest variable), states (i32 per variable), and f64 per variable more for the free-bit path
 * (which uses three f64 per variable: λ, e^{−λ} and the outside field); then, with keep (the
 * Rao–Blackwellised sweeps of treeGibbsStep, rb) on the general path, the weights
 * exp(h_v(k) + ψ_vp(k, l) − max_k) kept for the marginals (f64 per entry of the edge tables of the
 * largest block). A buffer sized without keep must not be given to sweeps with rb and an accumulator.
 */
export function treeWorkBytes(model: usize, tree: usize, keep: i32): usize {
  const m = changetype<PairwiseForm>(model);
  const t = changetype<TreeBlocks>(tree);
  // The kept weights only where they are written: Rao–Blackwellised sweeps (keep) on the general
  // path (free bits take ratios; AIS and learning pass no accumulator). 28 → 49 MB on a 10⁶ lattice.
  if (keep == 0 || m.allFree) return tableOffset(m, t);
  let most: usize = 0;
  for (let tb = 0; tb < t.nTreeBlocks; tb++) most = max(most, blockEdgeEntries(t, tb));
  return tableOffset(m, t) + (most << 3);
}

/** Offset of the kept weights in the work buffer. */
@inline
function tableOffset(m: PairwiseForm, t: TreeBlocks): usize {
  return (<usize>t.nStates << 3) + (<usize>t.maxCard << 3) + (<usize>m.nBlocks << 2) + (<usize>m.nBlocks << 3);
}

/** Σ over block tb's non-root variables v of K_v K_parent: the entries of its edge tables. */
function blockEdgeEntries(t: TreeBlocks, tb: i32): usize {
  let n: usize = 0;
  const st = t.stateStart;
  for (let i = ld32(t.blockPtr, tb), hi = ld32(t.blockPtr, tb + 1); i < hi; i++) {
    const v = ld32(t.order, i), p = ld32(t.parent, v);
    if (p >= 0) n += <usize>(ld32(st, v + 1) - ld32(st, v)) * <usize>(ld32(st, p + 1) - ld32(st, p));
  }
  return n;
}

@inline
function ld32(p: usize, i: i32): i32 {
  return load<i32>(p + (<usize>i << 2));
}

/** ψ(k, l): the coupling entry through the edge table, 0 where there is none. */
@inline
function psi(m: PairwiseForm, pairIdx: usize, off: i32, Kp: i32, k: i32, l: i32): f64 {
  const idx = ld32(pairIdx, off + k * Kp + l);
  return idx < 0 ? 0.0 : load<f64>(m.val + (<usize>idx << 3));
}

/**
 * Draws an index from weights exp(x_k − top), k < K, x at w (overwritten by the weights). top is
 * max x_k; when top = −∞ (no state possible) the draw is uniform.
 */
function drawLog(r: Philox, w: usize, K: i32, top: f64): i32 {
  if (top == -Infinity) return min<i32>(<i32>(uniform32(r) * <f64>K), K - 1);
  let total: f64 = 0;
  let last = 0;
  for (let k = 0; k < K; k++) {
    const q = w + (<usize>k << 3);
    const e = Math.exp(load<f64>(q) - top);
    store<f64>(q, e);
    total += e;
    if (e > 0) last = k;
  }
  const target = uniform32(r) * total;
  let cum: f64 = 0;
  for (let k = 0; k < K; k++) {
    const e = load<f64>(w + (<usize>k << 3));
    cum += e;
    // Never a zero-weight state (a rounding shortfall of the sum falls to the last possible one).
    if (target < cum && e > 0) return k;
  }
  return last;
}

/**
 * Steps 1–3 for tree block tb: records the block's states in xs and clears its bits, fills h with
 * the unary terms and the upward messages. Returns Σ over the block's roots of log Σ_k exp(h_root(k)):
 * the log of the block's conditional normaliser given the rest (−∞ when no joint state is possible).
 * kept (or 0): receives each non-root v's weights exp(h_v(k) + ψ_vp(k, l) − max_k) at [l·K_v + k],
 * leaves first, one table after another (the same arithmetic either way).
 */
function upward(m: PairwiseForm, t: TreeBlocks, s: usize, tb: i32, h: usize, w: usize, xs: usize, kept: usize = 0): f64 {
  const bs = m.blockStart, oneHot = m.oneHot;
  const order = t.order, parent = t.parent, st = t.stateStart, pairOff = t.pairOff, pairIdx = t.pairIdx;
  const lo = ld32(t.blockPtr, tb), hi = ld32(t.blockPtr, tb + 1);
  // Step 1: record and clear the block's states.
  for (let i = lo; i < hi; i++) {
    const v = ld32(order, i);
    const b = ld32(bs, v), nb = ld32(bs, v + 1) - b;
    let x = 0;
    if (!load<u8>(oneHot + <usize>v)) x = <i32>load<u8>(s + <usize>b);
    else for (let k = 0; k < nb; k++) x = select<i32>(k, x, load<u8>(s + <usize>(b + k)) != 0);
    store<i32>(xs + (<usize>v << 2), x);
    memory.fill(s + <usize>b, 0, <usize>nb);
  }
  // Step 1: the unary terms from outside the block.
  for (let i = lo; i < hi; i++) {
    const v = ld32(order, i);
    const b = ld32(bs, v), h0 = h + (<usize>ld32(st, v) << 3);
    if (!load<u8>(oneHot + <usize>v)) {
      store<f64>(h0, 0.0);
      store<f64>(h0, localField(m, s, b), 8);
    } else {
      const nb = ld32(bs, v + 1) - b;
      for (let k = 0; k < nb; k++) store<f64>(h0 + (<usize>k << 3), localField(m, s, b + k));
    }
  }
  // Step 2: upward messages, leaves first; at a root, its log normaliser.
  let logZ: f64 = 0;
  for (let i = hi - 1; i >= lo; i--) {
    const v = ld32(order, i);
    const p = ld32(parent, v);
    const hv = h + (<usize>ld32(st, v) << 3);
    const Kv = ld32(st, v + 1) - ld32(st, v);
    if (p < 0) {
      logZ += logSumExp(hv, Kv);
      continue;
    }
    const hp = h + (<usize>ld32(st, p) << 3);
    const Kp = ld32(st, p + 1) - ld32(st, p);
    const off = ld32(pairOff, v);
    for (let l = 0; l < Kp; l++) {
      for (let k = 0; k < Kv; k++) store<f64>(w + (<usize>k << 3), load<f64>(hv + (<usize>k << 3)) + psi(m, pairIdx, off, Kp, k, l));
      const q = hp + (<usize>l << 3);
      store<f64>(q, load<f64>(q) + logSumExp(w, Kv, kept));
      if (kept) kept += <usize>Kv << 3;
    }
  }
  return logZ;
}

/**
 * Step 4 for tree block tb, after upward(…, kept) and the draws: turns h into the conditional
 * marginals π, roots first, and adds them into acc (a free bit its p(x = 1), a one-hot block each
 * state's). keptEnd: where upward's weights ended (they are read back roots first). A column l
 * whose weights are all 0 (no state of v allows p = l) has π_p(l) = 0 and adds nothing. A variable
 * whose π sums to 0 — its tree has no possible state given the rest: a chain not yet in the
 * support — adds its drawn state instead (its children then read that state as π).
 */
function marginals(m: PairwiseForm, t: TreeBlocks, tb: i32, h: usize, xs: usize, keptEnd: usize, acc: usize): void {
  const order = t.order, parent = t.parent, st = t.stateStart;
  const lo = ld32(t.blockPtr, tb), hi = ld32(t.blockPtr, tb + 1);
  let kept = keptEnd;
  for (let i = lo; i < hi; i++) {
    const v = ld32(order, i);
    const p = ld32(parent, v);
    const hv = h + (<usize>ld32(st, v) << 3);
    const Kv = ld32(st, v + 1) - ld32(st, v);
    let total: f64 = 0;
    if (p < 0) {
      let top = -Infinity;
      for (let k = 0; k < Kv; k++) top = max(top, load<f64>(hv + (<usize>k << 3)));
      if (top > -Infinity) {
        for (let k = 0; k < Kv; k++) {
          const q = hv + (<usize>k << 3);
          const e = Math.exp(load<f64>(q) - top);
          store<f64>(q, e);
          total += e;
        }
        const inv = 1.0 / total;
        for (let k = 0; k < Kv; k++) store<f64>(hv + (<usize>k << 3), load<f64>(hv + (<usize>k << 3)) * inv);
      }
    } else {
      const hp = h + (<usize>ld32(st, p) << 3);
      const Kp = ld32(st, p + 1) - ld32(st, p);
      kept -= (<usize>Kv * <usize>Kp) << 3; // this variable's table (upward kept them leaves first)
      for (let k = 0; k < Kv; k++) store<f64>(hv + (<usize>k << 3), 0.0);
      for (let l = 0; l < Kp; l++) {
        const col = kept + ((<usize>l * <usize>Kv) << 3);
        let z: f64 = 0;
        for (let k = 0; k < Kv; k++) z += load<f64>(col + (<usize>k << 3));
        const pl = load<f64>(hp + (<usize>l << 3));
        if (z == 0 || pl == 0) continue;
        const a = pl / z;
        for (let k = 0; k < Kv; k++) {
          const q = hv + (<usize>k << 3);
          store<f64>(q, load<f64>(q) + a * load<f64>(col + (<usize>k << 3)));
        }
      }
      for (let k = 0; k < Kv; k++) total += load<f64>(hv + (<usize>k << 3));
    }
    const b = ld32(m.blockStart, v);
    const free = !load<u8>(m.oneHot + <usize>v);
    if (!(total > 0)) {
      const x = load<i32>(xs + (<usize>v << 2));
      for (let k = 0; k < Kv; k++) store<f64>(hv + (<usize>k << 3), select<f64>(1.0, 0.0, k == x));
    }
    if (free) addTo(acc, b, load<f64>(hv, 8));
    else for (let k = 0; k < Kv; k++) addTo(acc, b + k, load<f64>(hv + (<usize>k << 3)));
  }
}

@inline
function addTo(acc: usize, bit: i32, x: f64): void {
  const q = acc + (<usize>bit << 3);
  store<f64>(q, load<f64>(q) + x);
}

/** log Σ_k exp(x_k), max-shifted; −∞ when every x_k is −∞. out (or 0): receives exp(x_k − max) (0s for −∞). */
function logSumExp(x: usize, K: i32, out: usize = 0): f64 {
  let top = -Infinity;
  for (let k = 0; k < K; k++) top = max(top, load<f64>(x + (<usize>k << 3)));
  if (top == -Infinity) {
    if (out) memory.fill(out, 0, <usize>K << 3);
    return top;
  }
  let sum: f64 = 0;
  for (let k = 0; k < K; k++) {
    const e = Math.exp(load<f64>(x + (<usize>k << 3)) - top);
    if (out) store<f64>(out + (<usize>k << 3), e);
    sum += e;
  }
  return top + Math.log(sum);
}

/** Sets the bits of the block's variables from xs. */
function writeBits(m: PairwiseForm, t: TreeBlocks, s: usize, tb: i32, xs: usize): void {
  const lo = ld32(t.blockPtr, tb), hi = ld32(t.blockPtr, tb + 1);
  for (let i = lo; i < hi; i++) {
    const v = ld32(t.order, i);
    const b = ld32(m.blockStart, v), x = load<i32>(xs + (<usize>v << 2));
    if (!load<u8>(m.oneHot + <usize>v)) store<u8>(s + <usize>b, <u8>x);
    else store<u8>(s + <usize>(b + x), 1);
  }
}

/**
 * The log normaliser of tree block tb's conditional given the rest, log Σ_{x_block} f(x_block, rest),
 * at the chain's state. Leaves the block's bits cleared (and its states in the work buffer) when
 * restore is false, for the caller to look at the rest alone; restoreBlock puts them back.
 */
export function blockLogNormaliser(m: PairwiseForm, t: TreeBlocks, chain: usize, work: usize, tb: i32, restore: bool): f64 {
  const s = chain + PHILOX_BYTES;
  const h = work, w = work + (<usize>t.nStates << 3), xs = w + (<usize>t.maxCard << 3);
  const z = upward(m, t, s, tb, h, w, xs);
  if (restore) writeBits(m, t, s, tb, xs);
  return z;
}

/** Puts back the bits blockLogNormaliser(…, restore = false) cleared. */
export function restoreBlock(m: PairwiseForm, t: TreeBlocks, chain: usize, work: usize, tb: i32): void {
  writeBits(m, t, chain + PHILOX_BYTES, tb, work + (<usize>t.nStates << 3) + (<usize>t.maxCard << 3));
}

/**
 * Runs `sweeps` passes over the tree blocks (in block order). Free-bit forms take the fast path,
 * which needs treeRefresh after any change of W's values. acc: f64 per bit, or 0; with rb, each
 * sweep adds every bit's conditional probability given the other blocks (step 4: Rao–Blackwellised
 * marginals), without, each bit's value after the sweep (empirical marginals). work: treeWorkBytes.
 * Returns the number of variable updates that changed the variable's state. firstLogZ: f64
 * receiving block 0's log normaliser at the start of the first pass (blockLogNormaliser at the
 * state on entry), or 0. dE: f64 receiving the change of aᵀs + ½ sᵀWs (of m's values) over the call
 * on the free-bit path, NaN on the general path (the caller then recomputes the energy), or 0. The
 * draws are the same with rb or without.
 */
export function treeSweeps(m: PairwiseForm, t: TreeBlocks, chain: usize, sweeps: i32, acc: usize, work: usize, firstLogZ: usize = 0, dE: usize = 0, rb: bool = false): f64 {
  if (m.allFree && !firstLogZ) return binarySweeps(m, t, chain, sweeps, acc, work, dE, rb);
  if (dE) store<f64>(dE, NaN); // not tracked on this path
  const r = changetype<Philox>(chain);
  const s = chain + PHILOX_BYTES;
  const h = work;
  const w = work + (<usize>t.nStates << 3);
  const xs = w + (<usize>t.maxCard << 3);
  const kept = rb && acc ? work + tableOffset(m, t) : 0;
  const order = t.order, parent = t.parent, st = t.stateStart, pairOff = t.pairOff, pairIdx = t.pairIdx;
  let changed: f64 = 0;
  for (let sw = 0; sw < sweeps; sw++) {
    for (let tb = 0; tb < t.nTreeBlocks; tb++) {
      const z = upward(m, t, s, tb, h, w, xs, kept);
      if (firstLogZ && sw == 0 && tb == 0) store<f64>(firstLogZ, z);
      // Step 3: downward sampling, roots first (a parent's new state is in xs before its children's).
      const lo = ld32(t.blockPtr, tb), hi = ld32(t.blockPtr, tb + 1);
      for (let i = lo; i < hi; i++) {
        const v = ld32(order, i);
        const p = ld32(parent, v);
        const hv = h + (<usize>ld32(st, v) << 3);
        const Kv = ld32(st, v + 1) - ld32(st, v);
        let top = -Infinity;
        if (p < 0) {
          for (let k = 0; k < Kv; k++) {
            const z = load<f64>(hv + (<usize>k << 3));
            store<f64>(w + (<usize>k << 3), z);
            top = max(top, z);
          }
        } else {
          const Kp = ld32(st, p + 1) - ld32(st, p);
          const l = load<i32>(xs + (<usize>p << 2));
          const off = ld32(pairOff, v);
          for (let k = 0; k < Kv; k++) {
            const z = load<f64>(hv + (<usize>k << 3)) + psi(m, pairIdx, off, Kp, k, l);
            store<f64>(w + (<usize>k << 3), z);
            top = max(top, z);
          }
        }
        const x = drawLog(r, w, Kv, top);
        const q = xs + (<usize>v << 2);
        if (x != load<i32>(q)) changed += 1;
        store<i32>(q, x);
      }
      writeBits(m, t, s, tb, xs);
      if (kept) marginals(m, t, tb, h, xs, kept + (blockEdgeEntries(t, tb) << 3), acc);
    }
    if (acc && !rb) {
      for (let p = 0; p < m.nBits; p++) {
        const q = acc + (<usize>p << 3);
        store<f64>(q, load<f64>(q) + <f64>load<u8>(s + <usize>p));
      }
    }
  }
  return changed;
}

// ---------------------------------------------------------------------------------------------
// Free-bit fast path (every variable one free bit, bit v = variable v): the same conditionals in
// log-odds form. With λ_v = h_v(1) − h_v(0) and ψ(k, l) = w·k·l, the upward message changes the
// parent's log-odds by Δ = log((1 + e^{λ+w}) / (1 + e^λ)) = log((e^{−λ} + e^w) / (e^{−λ} + 1)), and
// x_v | x_p ~ Bernoulli(1 / (1 + e^{−λ_v} e^{−w x_p})). With e^w cached per edge (treeRefresh) and
// e^{−λ_v} computed once for both passes that is one exp and one log per variable instead of five
// transcendental calls. Where e^{−λ} or e^w is 0 or ∞ (|λ| or |w| past ~700) the ratios lose their
// meaning and the softplus forms are used instead. Free bits have finite tables: no −∞ here.
//
// The marginals (step 4) in the same form: with β_v = b_v(1) − b_v(0) the belief's log-odds, the
// cavity of v's parent is γ = β_p − Δ_v and β_v = λ_v + log((1 + e^{γ+w}) / (1 + e^γ)). In ratios,
// E_v = e^{−β_v} = e^{−λ_v} (G + 1) / (G + e^w) with G = e^{−γ} = E_p (e^{−λ_v} + e^w) / (e^{−λ_v} + 1)
// (the upward message's ratio): no transcendental call at all, and p(x_v = 1 | rest) = 1 / (1 + E_v).
// Where a ratio is 0 or ∞ the log-odds are computed in softplus form (outsideOdds).

@inline
function softplus(x: f64): f64 {
  return max(x, 0.0) + Math.log1p(Math.exp(-Math.abs(x)));
}

@inline
function usable(x: f64): bool {
  return x > 0 && x < Infinity;
}

/**
 * E_v = e^{−β_v} of a non-root free bit v from e = e^{−λ_v}, ew = e^w, its parent's Ep = E_p and bp
 * (β_p, or NaN when Ep is usable: β_p = −log E_p), λ_v and w. Stores β_v at lamAt (NaN when the
 * returned E_v is usable). The lanes kernel calls it for a lane whose ratios are not all usable.
 */
export function outsideOdds(e: f64, ew: f64, Ep: f64, bp: f64, lv: f64, w: f64, lamAt: usize): f64 {
  const ok = usable(e) && usable(ew);
  if (ok && usable(Ep)) {
    const G = Ep * ((e + ew) / (e + 1.0));
    const E = e * ((G + 1.0) / (G + ew));
    if (usable(G) && usable(E)) {
      store<f64>(lamAt, NaN);
      return E;
    }
  }
  const b = bp == bp ? bp : -Math.log(Ep);
  const g = b - (ok ? Math.log((e + ew) / (e + 1.0)) : softplus(lv + w) - softplus(lv));
  const beta = lv + (softplus(g + w) - softplus(g));
  store<f64>(lamAt, beta);
  return Math.exp(-beta);
}

function binarySweeps(m: PairwiseForm, t: TreeBlocks, chain: usize, sweeps: i32, acc: usize, work: usize, dE: usize, rb: bool): f64 {
  const r = changetype<Philox>(chain);
  const s = chain + PHILOX_BYTES;
  const lam = work; // f64 per variable: λ_v
  const en = work + (<usize>m.nBlocks << 3); // f64 per variable: e^{−λ_v}
  const uo = en + (<usize>m.nBlocks << 3); // f64 per variable: the field from outside the block
  const order = t.order, parent = t.parent, coup = t.coup, expCoup = t.expCoup;
  let changed: f64 = 0;
  let de: f64 = 0;
  for (let sw = 0; sw < sweeps; sw++) {
    for (let tb = 0; tb < t.nTreeBlocks; tb++) {
      const lo = ld32(t.blockPtr, tb), hi = ld32(t.blockPtr, tb + 1);
      // Old states move to the top bit of each byte until the block is done, so the block's bits
      // read as cleared by localFieldLow (which tests bit 0) and the energy change can be summed.
      for (let i = lo; i < hi; i++) {
        const v = ld32(order, i);
        store<u8>(s + <usize>v, load<u8>(s + <usize>v) << 7);
      }
      for (let i = lo; i < hi; i++) {
        const v = ld32(order, i);
        const u = localFieldLow(m, s, v);
        store<f64>(lam + (<usize>v << 3), u);
        store<f64>(uo + (<usize>v << 3), u);
      }
      for (let i = hi - 1; i >= lo; i--) {
        const v = ld32(order, i);
        const lv = load<f64>(lam + (<usize>v << 3));
        const e = Math.exp(-lv);
        store<f64>(en + (<usize>v << 3), e);
        const p = ld32(parent, v);
        if (p < 0) continue;
        const ew = load<f64>(expCoup + (<usize>v << 3));
        const d = usable(e) && usable(ew) ? Math.log((e + ew) / (e + 1.0)) : softplus(lv + load<f64>(coup + (<usize>v << 3))) - softplus(lv);
        const q = lam + (<usize>p << 3);
        store<f64>(q, load<f64>(q) + d);
      }
      for (let i = lo; i < hi; i++) {
        const v = ld32(order, i);
        const p = ld32(parent, v);
        const e = load<f64>(en + (<usize>v << 3));
        let prob: f64;
        if (p < 0 || !(load<u8>(s + <usize>p) & 1)) prob = 1.0 / (1.0 + e);
        else {
          const ew = load<f64>(expCoup + (<usize>v << 3));
          prob = usable(e) && usable(ew) ? 1.0 / (1.0 + e / ew) : 1.0 / (1.0 + Math.exp(-(load<f64>(lam + (<usize>v << 3)) + load<f64>(coup + (<usize>v << 3)))));
        }
        const bit: u8 = uniform32(r) < prob ? 1 : 0;
        store<u8>(s + <usize>v, (load<u8>(s + <usize>v) & 0x80) | bit);
      }
      // Step 4, roots first: e^{−λ} and λ become e^{−β} and β (or NaN: see outsideOdds).
      if (rb && acc) {
        for (let i = lo; i < hi; i++) {
          const v = ld32(order, i);
          const p = ld32(parent, v);
          const at = en + (<usize>v << 3);
          let E = load<f64>(at);
          if (p >= 0) {
            const lamAt = lam + (<usize>v << 3);
            E = outsideOdds(E, load<f64>(expCoup + (<usize>v << 3)), load<f64>(en + (<usize>p << 3)), load<f64>(lam + (<usize>p << 3)), load<f64>(lamAt), load<f64>(coup + (<usize>v << 3)), lamAt);
            store<f64>(at, E);
          }
          const q = acc + (<usize>v << 3);
          store<f64>(q, load<f64>(q) + 1.0 / (1.0 + E));
        }
      }
      // Children before parents: a parent's byte still holds both its states when its children
      // read it. ΔE = Σ_v (x'_v − x_v) u_v + Σ_edges w (x'_v x'_p − x_v x_p).
      for (let i = hi - 1; i >= lo; i--) {
        const v = ld32(order, i);
        const byte = load<u8>(s + <usize>v);
        const x1 = <i32>(byte & 1), x0 = <i32>(byte >> 7);
        if (x1 != x0) {
          changed += 1;
          de += <f64>(x1 - x0) * load<f64>(uo + (<usize>v << 3));
        }
        const p = ld32(parent, v);
        if (p >= 0) {
          const pb = load<u8>(s + <usize>p);
          const d = (x1 & <i32>(pb & 1)) - (x0 & <i32>(pb >> 7));
          if (d) de += <f64>d * load<f64>(coup + (<usize>v << 3));
        }
        store<u8>(s + <usize>v, <u8>x1);
      }
    }
    if (acc && !rb) {
      for (let p = 0; p < m.nBits; p++) {
        const q = acc + (<usize>p << 3);
        store<f64>(q, load<f64>(q) + <f64>load<u8>(s + <usize>p));
      }
    }
  }
  if (dE) store<f64>(dE, de);
  return changed;
}

/** localField counting only neighbours whose byte has its low bit set (0x80: a block bit set aside). */
@inline
function localFieldLow(m: PairwiseForm, s: usize, p: i32): f64 {
  let u = load<f64>(m.a + (<usize>p << 3));
  const end = load<i32>(m.rowPtr + (<usize>(p + 1) << 2));
  for (let k = load<i32>(m.rowPtr + (<usize>p << 2)); k < end; k++) {
    const j = load<i32>(m.col + (<usize>k << 2));
    const mask = -<i64>(load<u8>(s + <usize>j) & 1);
    u += reinterpret<f64>(load<i64>(m.val + (<usize>k << 3)) & mask);
  }
  return u;
}

// Pointer-level entry point for the bindings' sampler (chains are initialised by gibbsInit). rb:
// Rao–Blackwellised marginals into acc (1) or the sampled bits (0).
export function treeGibbsStep(model: usize, tree: usize, chain: usize, sweeps: i32, acc: usize, work: usize, rb: i32): f64 {
  return treeSweeps(changetype<PairwiseForm>(model), changetype<TreeBlocks>(tree), chain, sweeps, acc, work, 0, 0, rb != 0);
}
