// Naive mean field on the canonical form (bindings/canonical.ts): q(s) = Π_v q_v(block v), a
// Bernoulli μ_i per free bit, a categorical μ_{b..b+K−1} (summing to 1) per one-hot block. The bound
//
//   F(μ) = Σ_i a_i μ_i + Σ_{i<j} W_ij μ_i μ_j + Σ_v H(q_v)  ≤  log Z_s         (+ logZOffset: TS)
//
// is maximised by coordinate ascent, one block at a time, each update the exact maximiser given the
// other blocks: a free bit takes μ_i = σ(u_i), u_i = a_i + Σ_j W_ij μ_j; a one-hot block takes
// q_v(k) ∝ exp(u_k). F never decreases; a run stops when a sweep raises it by at most
// tol · max(nBlocks, |F|) — a relative change per variable, so the rule means the same on 10 and on
// 10⁶ variables — or after maxSweeps sweeps.
//
// Zero potentials (−∞ in a, or in W between one-hot bits; free bits never touch −∞) follow
// 0 · (−∞) = 0: E_q[W_ij s_i s_j] is −∞ only when both μ_i, μ_j > 0. A block update then minimises
// first the expected number of violated zeros, c_k = [a_k = −∞] + Σ_{j: W_kj = −∞} μ_j, and among the
// states of least c_k maximises as usual (softmax of u over them). This is coordinate ascent on
// the pair (−violations, F) in lexicographic order; from a full-support random start it removes the
// support of incompatible states. A run that cannot reach zero violations reports F = −∞ (a valid,
// useless bound).
//
// Layout (all arena memory): mu f64[nBits]; ent f64[nBlocks] (entropy of each block, kept for the
// free-bit path's incremental ΔF); scratch f64[2 · maxBlock]; out f64[4] = (F, converged, last ΔF,
// max |Δμ| of the last sweep).

import { PairwiseForm } from '../core/pairwise';
import { Philox, uniform } from '../core/rng';
import { ascentVerdict } from './ascent';

// ---------------------------------------------------------------------------------------------
// Helpers

/** Entropy of a Bernoulli(μ), 0 log 0 = 0. */
@inline
function bernoulliEntropy(mu: f64): f64 {
  let h = 0.0;
  if (mu > 0.0) h -= mu * Math.log(mu);
  if (mu < 1.0) h -= (1.0 - mu) * Math.log1p(-mu);
  return h;
}

@inline
function blockStartOf(m: PairwiseForm, v: i32): i32 {
  return load<i32>(m.blockStart + (<usize>v << 2));
}

// ---------------------------------------------------------------------------------------------
// Initialisation

/**
 * Random start from stream r: μ_i ~ U(0,1) for free bits, a uniform point of the simplex (Dirichlet(1))
 * for one-hot blocks. Fills ent with each block's entropy.
 */
export function mfRandomInit(form: usize, mu: usize, ent: usize, rng: usize): void {
  const m = changetype<PairwiseForm>(form);
  const r = changetype<Philox>(rng);
  for (let v = 0; v < m.nBlocks; v++) {
    const b = blockStartOf(m, v);
    if (!load<u8>(m.oneHot + <usize>v)) {
      const x = uniform(r);
      store<f64>(mu + (<usize>b << 3), x);
      store<f64>(ent + (<usize>v << 3), bernoulliEntropy(x));
      continue;
    }
    const K = blockStartOf(m, v + 1) - b;
    let total = 0.0;
    for (let k = 0; k < K; k++) {
      const e = -Math.log(uniform(r));
      store<f64>(mu + (<usize>(b + k) << 3), e);
      total += e;
    }
    let h = 0.0;
    for (let k = 0; k < K; k++) {
      const p = mu + (<usize>(b + k) << 3);
      const q = load<f64>(p) / total;
      store<f64>(p, q);
      if (q > 0.0) h -= q * Math.log(q);
    }
    store<f64>(ent + (<usize>v << 3), h);
  }
}

/** Recomputes ent from mu (after the caller wrote marginals itself). */
export function mfEntropies(form: usize, mu: usize, ent: usize): void {
  const m = changetype<PairwiseForm>(form);
  for (let v = 0; v < m.nBlocks; v++) {
    const b = blockStartOf(m, v);
    if (!load<u8>(m.oneHot + <usize>v)) {
      store<f64>(ent + (<usize>v << 3), bernoulliEntropy(load<f64>(mu + (<usize>b << 3))));
      continue;
    }
    const K = blockStartOf(m, v + 1) - b;
    let h = 0.0;
    for (let k = 0; k < K; k++) {
      const q = load<f64>(mu + (<usize>(b + k) << 3));
      if (q > 0.0) h -= q * Math.log(q);
    }
    store<f64>(ent + (<usize>v << 3), h);
  }
}

/**
 * Ordered start: every variable in its first state (which = 0: μ = 0 for free bits, state 0 of a
 * one-hot block) or its last (which = 1). Deterministic starts that reach the ordered optimum of a
 * ferromagnet in a few sweeps, where random starts freeze into domains whose walls creep.
 */
export function mfOrderedInit(form: usize, mu: usize, ent: usize, which: i32): void {
  const m = changetype<PairwiseForm>(form);
  for (let v = 0; v < m.nBlocks; v++) {
    const b = blockStartOf(m, v);
    const K = blockStartOf(m, v + 1) - b;
    const hot = load<u8>(m.oneHot + <usize>v) ? (which ? K - 1 : 0) : -1;
    for (let k = 0; k < K; k++) store<f64>(mu + (<usize>(b + k) << 3), hot < 0 ? <f64>which : k == hot ? 1.0 : 0.0);
    store<f64>(ent + (<usize>v << 3), 0.0);
  }
}

// ---------------------------------------------------------------------------------------------
// The objective

/**
 * F(μ) without the canonical offset: Σ a μ + Σ_{i<j} W μ μ + Σ entropies (from ent), with
 * 0 · (−∞) = 0; −∞ when some zero potential carries mass.
 */
export function mfObjective(form: usize, mu: usize, ent: usize): f64 {
  const m = changetype<PairwiseForm>(form);
  let lin = 0.0;
  let pair = 0.0;
  let h = 0.0;
  const n = m.nBits;
  for (let i = 0; i < n; i++) {
    const mi = load<f64>(mu + (<usize>i << 3));
    if (mi == 0.0) continue;
    lin += load<f64>(m.a + (<usize>i << 3)) * mi; // −∞ · μ>0 = −∞, as it should
    const end = load<i32>(m.rowPtr + (<usize>(i + 1) << 2));
    for (let k = load<i32>(m.rowPtr + (<usize>i << 2)); k < end; k++) {
      const j = load<i32>(m.col + (<usize>k << 2));
      if (j <= i) continue;
      // A product that underflows to 0 carries no mass, as in the factor-graph kernel: −∞ · 0 was NaN
      // (subnormal marginals against a hard zero), and a NaN bound was kept as the best.
      const p = mi * load<f64>(mu + (<usize>j << 3));
      if (p == 0.0) continue;
      pair += load<f64>(m.val + (<usize>k << 3)) * p;
    }
  }
  for (let v = 0; v < m.nBlocks; v++) h += load<f64>(ent + (<usize>v << 3));
  return lin + pair + h;
}

// ---------------------------------------------------------------------------------------------
// Sweeps

/**
 * One sweep over an all-free-bit model in index order; returns the increase of F. Exact per-site
 * bookkeeping: F is affine in μ_i with slope u_i, so the update raises F by
 * softplus(u) − (μ_old u + H(μ_old)); the new entropy is H(σ(u)) = log1p(e) + |u| e / (1 + e) with
 * e = exp(−|u|) (no cancellation for large |u|).
 */
function freeBitSweep(m: PairwiseForm, mu: usize, ent: usize, out: usize): f64 {
  const n = m.nBits;
  const a = m.a, rowPtr = m.rowPtr, col = m.col, val = m.val;
  let dF = 0.0;
  let maxStep = 0.0;
  let k = load<i32>(rowPtr);
  for (let i = 0; i < n; i++) {
    const end = load<i32>(rowPtr + (<usize>(i + 1) << 2));
    let u = load<f64>(a + (<usize>i << 3));
    for (; k < end; k++) {
      u += load<f64>(val + (<usize>k << 3)) * load<f64>(mu + (<usize>load<i32>(col + (<usize>k << 2)) << 3));
    }
    const au = Math.abs(u);
    const e = Math.exp(-au);
    const inv = 1.0 / (1.0 + e);
    const l = Math.log1p(e);
    const pos = u >= 0.0;
    const muNew = reinterpret<f64>(select<i64>(reinterpret<i64>(inv), reinterpret<i64>(e * inv), pos));
    const hNew = l + au * (e * inv);
    const p = mu + (<usize>i << 3);
    const q = ent + (<usize>i << 3);
    const muOld = load<f64>(p);
    dF += (max(u, 0.0) + l) - (muOld * u + load<f64>(q));
    maxStep = max(maxStep, Math.abs(muNew - muOld));
    store<f64>(p, muNew);
    store<f64>(q, hNew);
  }
  store<f64>(out, maxStep, 24);
  return dF;
}

/** One sweep over a model with one-hot blocks; returns max |Δμ| (F is recomputed by the caller). */
function generalSweep(m: PairwiseForm, mu: usize, ent: usize, scratch: usize): f64 {
  let maxStep = 0.0;
  const cost = scratch + (<usize>m.maxBlock << 3);
  for (let v = 0; v < m.nBlocks; v++) {
    const b = blockStartOf(m, v);
    if (!load<u8>(m.oneHot + <usize>v)) {
      // Free bits see only finite W, and their neighbours' μ are finite.
      let u = load<f64>(m.a + (<usize>b << 3));
      const end = load<i32>(m.rowPtr + (<usize>(b + 1) << 2));
      for (let k = load<i32>(m.rowPtr + (<usize>b << 2)); k < end; k++) {
        u += load<f64>(m.val + (<usize>k << 3)) * load<f64>(mu + (<usize>load<i32>(m.col + (<usize>k << 2)) << 3));
      }
      const au = Math.abs(u);
      const e = Math.exp(-au);
      const inv = 1.0 / (1.0 + e);
      const muNew = u >= 0.0 ? inv : e * inv;
      const p = mu + (<usize>b << 3);
      maxStep = max(maxStep, Math.abs(muNew - load<f64>(p)));
      store<f64>(p, muNew);
      store<f64>(ent + (<usize>v << 3), Math.log1p(e) + au * (e * inv));
      continue;
    }
    const K = blockStartOf(m, v + 1) - b;
    // Fields over finite entries and expected violations over the −∞ ones (neighbours with μ = 0
    // contribute nothing either way).
    let cmin = Infinity;
    for (let k = 0; k < K; k++) {
      const i = b + k;
      let u = load<f64>(m.a + (<usize>i << 3));
      let c = 0.0;
      if (u == -Infinity) {
        u = 0.0;
        c = 1.0;
      }
      const end = load<i32>(m.rowPtr + (<usize>(i + 1) << 2));
      for (let t = load<i32>(m.rowPtr + (<usize>i << 2)); t < end; t++) {
        const mj = load<f64>(mu + (<usize>load<i32>(m.col + (<usize>t << 2)) << 3));
        if (mj == 0.0) continue;
        const w = load<f64>(m.val + (<usize>t << 3));
        if (w == -Infinity) c += mj;
        else u += w * mj;
      }
      store<f64>(scratch + (<usize>k << 3), u);
      store<f64>(cost + (<usize>k << 3), c);
      cmin = min(cmin, c);
    }
    let top = -Infinity;
    for (let k = 0; k < K; k++) {
      if (load<f64>(cost + (<usize>k << 3)) == cmin) top = max(top, load<f64>(scratch + (<usize>k << 3)));
    }
    let total = 0.0;
    for (let k = 0; k < K; k++) {
      const w = load<f64>(cost + (<usize>k << 3)) == cmin ? Math.exp(load<f64>(scratch + (<usize>k << 3)) - top) : 0.0;
      store<f64>(cost + (<usize>k << 3), w);
      total += w;
    }
    let h = 0.0;
    const inv = 1.0 / total;
    for (let k = 0; k < K; k++) {
      const q = load<f64>(cost + (<usize>k << 3)) * inv;
      const p = mu + (<usize>(b + k) << 3);
      maxStep = max(maxStep, Math.abs(q - load<f64>(p)));
      store<f64>(p, q);
      if (q > 0.0) h -= q * Math.log(q);
    }
    store<f64>(ent + (<usize>v << 3), h);
  }
  return maxStep;
}

/**
 * Coordinate ascent from the current μ until converged or maxSweeps. Returns the number of sweeps;
 * out = (F, converged 0/1, last sweep's ΔF, last sweep's max |Δμ|). Converged: ΔF ≤ tol · max(nBlocks, |F|).
 * tol < 0 never converges (timing).
 */
export function mfAscend(form: usize, mu: usize, ent: usize, maxSweeps: i32, tol: f64, scratch: usize, out: usize): i32 {
  const m = changetype<PairwiseForm>(form);
  let F = mfObjective(form, mu, ent);
  let sweeps = 0;
  let converged = false;
  let dF = 0.0;
  let step = 0.0;
  let stuck = 0;
  while (sweeps < maxSweeps) {
    if (m.allFree) {
      dF = freeBitSweep(m, mu, ent, out);
      step = load<f64>(out, 24);
      F += dF;
    } else {
      step = generalSweep(m, mu, ent, scratch);
      const G = mfObjective(form, mu, ent);
      dF = G == F ? 0.0 : G - F; // −∞ − (−∞) would be NaN
      F = G;
    }
    sweeps++;
    if (F == -Infinity) stuck++;
    const verdict = ascentVerdict(F, dF, step, tol, m.nBlocks, stuck);
    if (verdict != 0) {
      converged = verdict > 0;
      break;
    }
  }
  // The incremental F carries rounding from every site: report the value recomputed from μ.
  if (m.allFree) mfEntropies(form, mu, ent);
  store<f64>(out, mfObjective(form, mu, ent));
  store<f64>(out, converged ? 1.0 : 0.0, 8);
  store<f64>(out, dF, 16);
  store<f64>(out, step, 24);
  return sweeps;
}
