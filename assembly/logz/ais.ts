// Annealed importance sampling (Neal 2001) on the canonical form, path in β:
//
//   f_β(s) = 1[every set bit has a finite bias] · exp(β E(s)),   E(s) = aᵀs + ½ sᵀWs,   β: 0 → 1.
//
// f_0 is uniform over the support of the biases (a free bit: both values; a one-hot block: the
// states with a finite bias), so Z_0 = Σ_blocks log(#finite states) is known (the bindings add it).
// W may hold −∞ between one-hot blocks: β·(−∞) = −∞ for β > 0, so a run that starts on a state
// the couplings forbid gets log weight −∞ at its first step (returned at once); after that the
// chain never leaves the support. Transitions, on a tempered copy of the form (a' = βa, W' = βW,
// rewritten in place at each temperature: O(nnz), no exp, no randomness), either sequential Gibbs
// sweeps targeting f_β — exactly the Gibbs sampler's scan (assembly/gibbs.ts, its fast path
// included) — or tree-block Gibbs sweeps (assembly/treegibbs.ts): both leave f_β invariant, which is
// all the weights need.
// E(s) is recomputed after the sweeps at each temperature (one masked pass over W) — on the
// free-bit tree path it follows from the change the sweep reports, recomputed every 64 temperatures.
//
// Chain state layout: the Gibbs sampler's ([Philox, 64 B][s: u8 per bit]).

import { Philox, PHILOX_BYTES, uniform32 } from '../core/rng';
import { PairwiseForm } from '../core/pairwise';
import { gibbsSweeps } from '../samplers/gibbs';
import { TreeBlocks, treeSweeps, treeRefresh, blockLogNormaliser, restoreBlock } from '../samplers/treegibbs';

/** Static slot for the tree sweep's energy change (kernels run one at a time). */
const DE_SLOT = memory.data(8, 8);

export function aisStateBytes(model: usize): usize {
  return PHILOX_BYTES + <usize>changetype<PairwiseForm>(model).nBits;
}

/**
 * E(s) = Σ_p s_p (a_p + ½ Σ_q W_pq s_q), masked with integer ANDs (never −∞ · 0, no branch on s).
 * On a state in the support every unmasked term is finite.
 */
export function energy(m: PairwiseForm, s: usize): f64 {
  let e: f64 = 0;
  for (let p = 0; p < m.nBits; p++) {
    let f: f64 = 0;
    const end = load<i32>(m.rowPtr + (<usize>(p + 1) << 2));
    for (let k = load<i32>(m.rowPtr + (<usize>p << 2)); k < end; k++) {
      const mask = -<i64>(load<u8>(s + <usize>load<i32>(m.col + (<usize>k << 2))) != 0);
      f += reinterpret<f64>(load<i64>(m.val + (<usize>k << 3)) & mask);
    }
    const term = load<f64>(m.a + (<usize>p << 3)) + 0.5 * f;
    e += reinterpret<f64>(reinterpret<i64>(term) & -<i64>(load<u8>(s + <usize>p) != 0));
  }
  return e;
}

/** The tempered copy: a' = β a, W' = β W (β > 0 keeps −∞ as −∞ and 0 as 0). */
export function temper(m: PairwiseForm, t: PairwiseForm, beta: f64): void {
  const bv = f64x2.splat(beta);
  const n = m.nBits;
  let p = 0;
  for (; p + 1 < n; p += 2) v128.store(t.a + (<usize>p << 3), f64x2.mul(v128.load(m.a + (<usize>p << 3)), bv));
  if (p < n) store<f64>(t.a + (<usize>p << 3), load<f64>(m.a + (<usize>p << 3)) * beta);
  const nnz = load<i32>(m.rowPtr + (<usize>n << 2));
  let k = 0;
  for (; k + 1 < nnz; k += 2) v128.store(t.val + (<usize>k << 3), f64x2.mul(v128.load(m.val + (<usize>k << 3)), bv));
  if (k < nnz) store<f64>(t.val + (<usize>k << 3), load<f64>(m.val + (<usize>k << 3)) * beta);
}

/** Draws s from f_0: a free bit uniformly, a one-hot block uniformly over its finite-bias states. */
export function initUniform(m: PairwiseForm, r: Philox, s: usize): void {
  memory.fill(s, 0, <usize>m.nBits);
  for (let v = 0; v < m.nBlocks; v++) {
    const b = load<i32>(m.blockStart + (<usize>v << 2));
    if (!load<u8>(m.oneHot + <usize>v)) {
      store<u8>(s + <usize>b, uniform32(r) < 0.5 ? 1 : 0);
      continue;
    }
    const K = load<i32>(m.blockStart + (<usize>(v + 1) << 2)) - b;
    let cnt = 0;
    for (let k = 0; k < K; k++) if (load<f64>(m.a + (<usize>(b + k) << 3)) > -Infinity) cnt++;
    // A block with no finite state makes Z = 0; the bindings reject that before calling.
    let pick = min<i32>(<i32>(uniform32(r) * <f64>cnt), cnt - 1);
    for (let k = 0; k < K; k++) {
      if (!(load<f64>(m.a + (<usize>(b + k) << 3)) > -Infinity)) continue;
      if (pick == 0) {
        store<u8>(s + <usize>(b + k), 1);
        break;
      }
      pick--;
    }
  }
}

/**
 * One AIS run through the whole schedule betas[0 … nBetas−1] (f64, strictly increasing, 0 → 1):
 * draws s from f_0 with the chain's stream (seeded by the bindings), then for t = 1 … nBetas−1 adds
 * (β_t − β_{t−1}) E(s) to the log weight and, except after the last, runs `sweeps` Gibbs scans at β_t.
 * Returns log w (E[w] = Z_1/Z_0); −∞ when the run starts outside the support.
 * tempered: a second PairwiseForm header sharing the model's structure (blockStart, oneHot, rowPtr,
 * col) with its own a and val buffers, which this kernel overwrites. scratch: f64 per bit of the
 * largest block. energies: f64 × nBetas or 0; receives E(s) as used at each step (entry t: the state
 * the weight update of step t saw; entry 0: the start). The final energy is stored at `out` (f64) when out ≠ 0.
 * tree: a TreeBlocks header (tree-block transitions, treeWork: its work buffer) or 0 (single-site Gibbs).
 */
export function aisRun(model: usize, tempered: usize, chain: usize, betas: usize, nBetas: i32, sweeps: i32, scratch: usize, energies: usize, out: usize, tree: usize, treeWork: usize): f64 {
  const m = changetype<PairwiseForm>(model);
  const tm = changetype<PairwiseForm>(tempered);
  const r = changetype<Philox>(chain);
  const s = chain + PHILOX_BYTES;
  initUniform(m, r, s);
  let e = energy(m, s);
  let logw: f64 = 0;
  let prev = load<f64>(betas);
  if (energies) store<f64>(energies, e);
  for (let t = 1; t < nBetas; t++) {
    if (energies) store<f64>(energies + (<usize>t << 3), e);
    const beta = load<f64>(betas + (<usize>t << 3));
    if (e == -Infinity) {
      logw = -Infinity;
      break;
    }
    logw += (beta - prev) * e;
    prev = beta;
    if (t < nBetas - 1) {
      temper(m, tm, beta);
      if (tree) {
        // The free-bit tree path reports the change of β E, from which E follows.
        treeRefresh(tempered, tree);
        treeSweeps(tm, changetype<TreeBlocks>(tree), chain, sweeps, 0, treeWork, 0, DE_SLOT);
        const d = load<f64>(DE_SLOT);
        // Recomputed in full every 64 temperatures so rounding cannot drift.
        e = isNaN(d) || t % 64 == 0 ? energy(m, s) : e + d / beta;
      } else {
        gibbsSweeps(tm, chain, sweeps, 0, scratch);
        e = energy(m, s);
      }
    }
  }
  if (out) store<f64>(out, e);
  return logw;
}

// ---------------------------------------------------------------------------------------------
// Collapsed AIS with tree-block transitions: the weights follow the marginal of the variables
// outside tree block 0 (call it A; x the rest),
//
//   g_β(x) = Σ_{s_A} f_β(s_A, x) = exp(β E(s_A = 0, x)) · Σ_{s_A} exp(β (E(s) − E(s_A = 0, x))),
//
// the second factor being block A's conditional normaliser at β (blockLogNormaliser on the tempered
// form). A tree-block sweep redraws A first, from p_β(s_A | x), so the x it outputs depends on the
// old x alone: it is a Markov kernel on x leaving g_β invariant, and AIS on x is valid with
// log w = Σ_t log g_{β_t}(x_{t−1}) − log g_{β_{t−1}}(x_{t−1}). Summing A out exactly removes its
// part of the weights' variance (Rao–Blackwellisation). Z_0 is unchanged (f_0 is uniform over the
// biases' support, so g_0(x) counts A's states); at β = 0 the tempered form has a' = 0 on finite
// biases (−∞ kept) and W' = 0 (f_0 ignores the couplings), never 0 · (−∞).

/** The tempered copy at β = 0: a' = 0 where a is finite, −∞ where it is −∞; W' = 0. */
function temperZero(m: PairwiseForm, t: PairwiseForm): void {
  for (let p = 0; p < m.nBits; p++) store<f64>(t.a + (<usize>p << 3), load<f64>(m.a + (<usize>p << 3)) == -Infinity ? -Infinity : 0.0);
  memory.fill(t.val, 0, <usize>load<i32>(m.rowPtr + (<usize>m.nBits << 2)) << 3);
}

/**
 * One collapsed AIS run (arguments as aisRun, with tree and its work buffer required). energies,
 * when ≠ 0, receives E(s) of the full state at each step, as aisRun's trace.
 */
export function aisCollapsedRun(model: usize, tempered: usize, chain: usize, betas: usize, nBetas: i32, sweeps: i32, tree: usize, work: usize, energies: usize, zSlot: usize): f64 {
  const m = changetype<PairwiseForm>(model);
  const tm = changetype<PairwiseForm>(tempered);
  const t = changetype<TreeBlocks>(tree);
  const r = changetype<Philox>(chain);
  const s = chain + PHILOX_BYTES;
  initUniform(m, r, s);
  temperZero(m, tm);
  let logw: f64 = 0;
  let prev = load<f64>(betas);
  if (energies) store<f64>(energies, energy(m, s));
  for (let i = 1; i < nBetas; i++) {
    const beta = load<f64>(betas + (<usize>i << 3));
    if (energies) store<f64>(energies + (<usize>i << 3), energy(m, s));
    // log g_prev(x): the tempered form is still at the previous β.
    const zPrev = blockLogNormaliser(tm, t, chain, work, 0, false);
    const e0 = energy(m, s); // E(s_A = 0, x): A's bits are cleared
    restoreBlock(tm, t, chain, work, 0);
    if (e0 == -Infinity || zPrev == -Infinity) {
      logw = -Infinity;
      break;
    }
    temper(m, tm, beta);
    let zNew: f64;
    if (i < nBetas - 1) {
      treeSweeps(tm, t, chain, sweeps, 0, work, zSlot); // its first step computes log g_β(x)'s normaliser
      zNew = load<f64>(zSlot);
    } else {
      zNew = blockLogNormaliser(tm, t, chain, work, 0, true);
    }
    logw += (beta - prev) * e0 + zNew - zPrev;
    if (logw == -Infinity) break;
    prev = beta;
  }
  return logw;
}
