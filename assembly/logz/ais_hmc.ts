// AIS on the relaxed density p_β(x) — the relaxed joint of aisrelaxed.ts with s summed out, as DHMC
// samples it (DESIGN.md §2) — with HMC transitions. Tempering the canonical form by β gives
// M_β = √β M and biases β b (b = a − ½d), so
//
//   log f_β(x) = −½|x|² + Σ_free softplus(u_i) + Σ_blocks logsumexp(u_block),   u = √β M x + β b,
//
// with b_i = −∞ kept −∞ at every β (f_0 counts only the states the biases allow). Z_β =
// (2π)^{m/2} Z_β(discrete), so the ratio Z_1/Z_0 is the discrete model's and log Z_0 the discrete
// path's; f_0 is N(0, I) times that count. The weight gains log f_{β_t}(x) − log f_{β_{t−1}}(x) at
// the current x: both from one product M x. A transition at β is HMC with identity mass on
// log f_β: p ~ N(0, I), L leapfrog steps of size ε_t, Metropolis test, ∇ log f_β = √β Mᵀπ − x.
// −log f_β has Hessian I − β Mᵀ Cov(s|x) M ⪯ I, so leapfrog is stable for ε < 2 at every β.
//
// Step sizes are given per temperature (eps: f64 × nBetas). A pilot run may adapt them as it goes
// (Robbins–Monro on log ε towards the target acceptance, written back into eps); such a run's
// kernel changes with its own history, so its weight is not used. The estimating runs keep eps fixed.
//
// Chain state: [Philox][x][p][grad][xp][gp: f64 × m each][uRaw: f64 × nBits].

import { Philox, uniform } from '../core/rng';
import { Relaxed } from '../relax/relaxed';
import { Factor, factorApply, factorApplyT } from '../relax/factor';
import { normalsInto } from '../core/rng_normal';

const PHILOX_OFFSET: usize = offsetof<Philox>();
/** Gain of the pilot's step-size adaptation (per transition, on log ε). */
const ADAPT_GAIN: f64 = 0.1;

@inline
function base(chain: usize): usize {
  return (chain + PHILOX_OFFSET + 7) & ~(<usize>7);
}

export function aisHMCStateBytes(relaxed: usize): usize {
  const r = changetype<Relaxed>(relaxed);
  return base(0) + ((<usize>(5 * r.m + r.nBits)) << 3);
}

/** Offset of x (f64 × m) in the chain state, for tests. */
export function aisHMCXOffset(): usize {
  return base(0);
}

/**
 * log f_β up to −½|x|² from uRaw = M x: Σ softplus / logsumexp of u = √β uRaw + β b, with π = p(s|x)
 * at β into r.prob. −∞ when a block has no possible state.
 */
export function softSum(r: Relaxed, uRaw: usize, sb: f64, beta: f64): f64 {
  const u = r.u, prob = r.prob, bias = r.bias;
  for (let i = 0; i < r.nBits; i++) {
    const bi = load<f64>(bias + (<usize>i << 3));
    // β · (−∞) would be NaN at β = 0: a forbidden state stays forbidden.
    store<f64>(u + (<usize>i << 3), bi == -Infinity ? -Infinity : sb * load<f64>(uRaw + (<usize>i << 3)) + beta * bi);
  }
  let lp: f64 = 0;
  for (let v = 0; v < r.nBlocks; v++) {
    const b = load<i32>(r.blockStart + (<usize>v << 2));
    if (!load<u8>(r.oneHot + <usize>v)) {
      const ui = load<f64>(u + (<usize>b << 3));
      const e = Math.exp(-Math.abs(ui));
      store<f64>(prob + (<usize>b << 3), (ui >= 0 ? 1.0 : e) / (1.0 + e));
      lp += max(ui, 0.0) + Math.log1p(e);
      continue;
    }
    const end = load<i32>(r.blockStart + (<usize>(v + 1) << 2));
    let top = -Infinity;
    for (let k = b; k < end; k++) top = max(top, load<f64>(u + (<usize>k << 3)));
    if (top == -Infinity) return -Infinity;
    let total: f64 = 0;
    for (let k = b; k < end; k++) {
      const w = Math.exp(load<f64>(u + (<usize>k << 3)) - top);
      store<f64>(prob + (<usize>k << 3), w);
      total += w;
    }
    lp += top + Math.log(total);
    const inv = 1.0 / total;
    for (let k = b; k < end; k++) store<f64>(prob + (<usize>k << 3), load<f64>(prob + (<usize>k << 3)) * inv);
  }
  return lp;
}

function halfSquare(x: usize, m: i32): f64 {
  let s: f64 = 0;
  for (let i = 0; i < m; i++) {
    const xi = load<f64>(x + (<usize>i << 3));
    s += xi * xi;
  }
  return 0.5 * s;
}

/** log f_β(x) (up to the constant) and, when grad ≠ 0, ∇ = √β Mᵀπ − x; uRaw receives M x. */
export function logF(r: Relaxed, x: usize, grad: usize, uRaw: usize, sb: f64, beta: f64): f64 {
  const f = changetype<Factor>(r.factor);
  factorApply(f, x, uRaw);
  const lp = softSum(r, uRaw, sb, beta) - halfSquare(x, r.m);
  if (grad) {
    factorApplyT(f, r.prob, grad);
    for (let i = 0; i < r.m; i++) {
      const q = grad + (<usize>i << 3);
      store<f64>(q, sb * load<f64>(q) - load<f64>(x + (<usize>i << 3)));
    }
  }
  return lp;
}

@inline
function axpy(y: usize, h: f64, x: usize, m: i32): void {
  for (let i = 0; i < m; i++) {
    const q = y + (<usize>i << 3);
    store<f64>(q, load<f64>(q) + h * load<f64>(x + (<usize>i << 3)));
  }
}

/** Whether the last hmcMove accepted, and its log acceptance probability (NaN: divergent). */
export let lastAccepted: bool = false;
export let lastLogAccept: f64 = 0;

/**
 * One HMC transition with identity mass on log f_β from x (gradient grad, log f_β = lp), updated in
 * place: p ~ N(0, I), `leapfrog` steps of size eps, Metropolis test; a non-finite trajectory is
 * rejected. Scratch p, xp, gp (f64 × m), uRaw (f64 × nBits). Returns log f_β at the new x.
 */
export function hmcMove(r: Relaxed, rng: Philox, x: usize, grad: usize, lp: f64, sb: f64, beta: f64, eps: f64, leapfrog: i32, p: usize, xp: usize, gp: usize, uRaw: usize): f64 {
  const m = r.m;
  const mb = <usize>m << 3;
  let k0: f64 = 0;
  normalsInto(rng, p, m, false);
  for (let i = 0; i < m; i++) {
    const z = load<f64>(p + (<usize>i << 3));
    k0 += z * z;
  }
  memory.copy(xp, x, mb);
  memory.copy(gp, grad, mb);
  let lp1 = lp;
  for (let l = 0; l < leapfrog; l++) {
    axpy(p, 0.5 * eps, gp, m);
    axpy(xp, eps, p, m);
    lp1 = logF(r, xp, gp, uRaw, sb, beta);
    if (!isFinite(lp1)) break;
    axpy(p, 0.5 * eps, gp, m);
  }
  // log α = −ΔH; a non-finite end is a rejected (divergent) trajectory.
  const logA = isFinite(lp1) ? lp1 - lp - halfSquare(p, m) + 0.5 * k0 : NaN;
  lastLogAccept = logA;
  lastAccepted = logA == logA && Math.log(uniform(rng)) < logA;
  if (!lastAccepted) return lp;
  memory.copy(x, xp, mb);
  memory.copy(grad, gp, mb);
  return lp1;
}

/** One Robbins–Monro step of log ε towards the target acceptance rate, ε kept below 1.9. */
export function adaptLogEps(logEps: f64, logA: f64, target: f64): f64 {
  const alpha = logA == logA ? (logA >= 0 ? 1.0 : Math.exp(logA)) : 0.0;
  return min(max(logEps + ADAPT_GAIN * (alpha - target), -20.0), Math.log(1.9));
}

/**
 * One AIS run through betas[0 … nBetas−1] (0 → 1) with `transitions` HMC transitions of `leapfrog`
 * steps at each intermediate β (none after the last). The chain's stream must be seeded.
 * eps: f64 × nBetas, ε at each β (entry 0 unused). adaptTarget > 0: adapt ε along the run towards
 * that acceptance rate, starting from eps[1], and write the ε used at each β into eps (a pilot).
 * energies: f64 × nBetas or 0: entry t receives d log f_β / dβ at β_t for the x the weight update of
 * step t saw (Σ π_i (uRaw_i / (2√β) + b_i)), entry 0 a copy of entry 1. info: f64 × 2 or 0: adds
 * accepted transitions and transitions. Returns log w (E[w] = Z_1/Z_0).
 */
export function aisHMCRun(relaxed: usize, chain: usize, betas: usize, nBetas: i32, transitions: i32, leapfrog: i32, eps: usize, adaptTarget: f64, energies: usize, info: usize): f64 {
  const r = changetype<Relaxed>(relaxed);
  const rng = changetype<Philox>(chain);
  const m = r.m;
  const mb = <usize>m << 3;
  const x = base(chain), p = x + mb, grad = p + mb, xp = grad + mb, gp = xp + mb, uRaw = gp + mb;
  normalsInto(rng, x, m, false); // x ~ f_0 ∝ N(0, I)
  let logEps = adaptTarget > 0 ? Math.log(load<f64>(eps + 8)) : 0.0;
  let accepted: f64 = 0, proposals: f64 = 0;
  let logw: f64 = 0;
  let prev = load<f64>(betas);
  for (let t = 1; t < nBetas; t++) {
    const beta = load<f64>(betas + (<usize>t << 3));
    const sb = Math.sqrt(beta);
    // Weight: log f_β(x) − log f_prev(x) from one M x (the −½|x|² terms cancel).
    factorApply(changetype<Factor>(r.factor), x, uRaw);
    const lpPrev = softSum(r, uRaw, Math.sqrt(prev), prev);
    const lpNow = softSum(r, uRaw, sb, beta); // leaves π at β in r.prob
    logw += lpNow - lpPrev;
    if (energies) {
      let e: f64 = 0;
      for (let i = 0; i < r.nBits; i++) {
        const pi = load<f64>(r.prob + (<usize>i << 3));
        if (pi == 0) continue; // never 0 · −∞
        e += pi * (load<f64>(uRaw + (<usize>i << 3)) / (2 * sb) + load<f64>(r.bias + (<usize>i << 3)));
      }
      store<f64>(energies + (<usize>t << 3), e);
      if (t == 1) store<f64>(energies, e);
    }
    prev = beta;
    if (logw == -Infinity || logw != logw || t == nBetas - 1) continue;
    const epsT = adaptTarget > 0 ? Math.exp(logEps) : load<f64>(eps + (<usize>t << 3));
    if (adaptTarget > 0) store<f64>(eps + (<usize>t << 3), epsT);
    let lp = logF(r, x, grad, uRaw, sb, beta);
    for (let it = 0; it < transitions; it++) {
      lp = hmcMove(r, rng, x, grad, lp, sb, beta, epsT, leapfrog, p, xp, gp, uRaw);
      if (lastAccepted) accepted += 1;
      proposals += 1;
      if (adaptTarget > 0) logEps = adaptLogEps(logEps, lastLogAccept, adaptTarget);
    }
  }
  if (info) {
    store<f64>(info, load<f64>(info) + accepted);
    store<f64>(info + 8, load<f64>(info + 8) + proposals);
  }
  return logw;
}
