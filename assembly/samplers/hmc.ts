// Hamiltonian Monte Carlo on the relaxed density p(x) (DHMC, Zhang et al. 2012 §3.2), and the chain
// machinery the Langevin samplers (langevin.ts) share: state, target density, mass matrix, dual
// averaging, Welford variances and the estimators accumulated while sampling.
//
// Target. log p(x) = −½|x|² + Σ softplus/logsumexp(M x + b) (relaxed.ts), or — a test path — a
// Gaussian −½ (x − μ)ᵀ P (x − μ) with a dense precision P.
//
// Mass matrix G (kinetic energy ½ pᵀ G⁻¹ p, momentum p ~ N(0, G)):
//   * MASS_DIAG: G⁻¹ = diag(invMass);
//   * MASS_DENSE_LOWER / MASS_DENSE_UPPER: G = R Rᵀ with R = T or R = Tᵀ, T lower triangular m × m
//     (row-major). G⁻¹ p is two triangular solves; p = R z draws the momentum; ½|R⁻¹p|² is the kinetic energy.
//     Zhang's A = I form (x_I = M x, identity mass on x_I) is HMC on x with G = MᵀM: for a square lower
//     triangular M (dense Cholesky) R = Mᵀ, i.e. T = M, MASS_DENSE_UPPER; otherwise T = chol(MᵀM).
//
// Integrator: a palindromic splitting scheme as a coefficient table c[0 … 2S]: one step is
//   kick(c0 ε) drift(c1 ε) kick(c2 ε) … drift(c_{2S−1} ε) kick(c_{2S} ε),
// kick p += h ∇log p(x), drift x += h G⁻¹ p. Velocity Verlet is [½, 1, ½]. S gradients per step.
//
// Chain memory (all owned by the TypeScript side): the Chain header, then one work block carved by
// chainSetup: two Philox streams (the move stream and the stream for draws of s ~ p(s|x), so that
// asking for empirical marginals never changes the chain), then f64 arrays.

import { Philox, PHILOX_BYTES, rngInit, uniform, uniform32 } from '../core/rng';
import { Relaxed, relaxedLogDensity, relaxedGradient } from '../relax/relaxed';
import { Factor, factorApplyT } from '../relax/factor';
import { normalsInto } from '../core/rng_normal';
import { dot, axpy, forwardSolve, transposeSolve, lowerMul, lowerMulT, scaleMomentum } from './hmc_triangular';

export const TARGET_RELAXED: i32 = 0;
export const TARGET_GAUSS: i32 = 1;

export const MASS_DIAG: i32 = 0;
export const MASS_DENSE_LOWER: i32 = 1; // R = T
export const MASS_DENSE_UPPER: i32 = 2; // R = Tᵀ

/** step() flags. */
export const STEP_ADAPT: i32 = 1; // dual averaging of the step size
export const STEP_WELFORD: i32 = 2; // accumulate x into the windowed variance
export const STEP_ACCUMULATE: i32 = 4; // add π, pair products, sampled s into the accumulators
export const STEP_TRACE: i32 = 8; // record the traced quantities (every thin-th call)

// Dual averaging constants (Hoffman & Gelman 2014, §3.2.1; Stan's defaults).
const DA_GAMMA: f64 = 0.05;
const DA_T0: f64 = 10.0;
const DA_KAPPA: f64 = 0.75;

/** Energy error beyond which a transition counts as divergent (as Stan and BlackJAX). */
export const DIVERGENCE_THRESHOLD: f64 = 1000.0;

@unmanaged
export class Gauss {
  m: i32;
  mean: usize; // f64 × m
  prec: usize; // f64 × m × m, row-major, symmetric
  tmp: usize; // f64 × m scratch
}

@unmanaged
export class Chain {
  kind: i32;
  m: i32;
  /** Bits of the canonical form (0 for the Gaussian target). */
  n: i32;
  massKind: i32;
  target: usize;
  rng: usize;
  rngS: usize;
  x: usize;
  grad: usize;
  xp: usize;
  gp: usize;
  p: usize;
  p0: usize;
  v: usize;
  w: usize;
  invMass: usize;
  wMean: usize;
  wM2: usize;
  /** π = p(s|x) at the current x (f64 × n). */
  prob: usize;
  massT: usize;
  logp: f64;
  eps: f64;
  // Integrator.
  nStages: i32;
  nSteps: i32;
  coef: usize;
  // Dual averaging.
  daTarget: f64;
  daMu: f64;
  daHbar: f64;
  daLogEps: f64;
  daLogEpsBar: f64;
  daT: f64;
  // Welford.
  wCount: f64;
  // Info of the last step() call.
  infoIters: f64;
  infoAcceptStat: f64;
  infoAccepted: f64;
  infoDivergent: f64;
  infoEnergySum: f64;
  infoEnergyAbsMax: f64;
  infoGrads: f64;
  // Estimators.
  acc: usize; // f64 × n: Σ π
  accEmp: usize; // f64 × n: Σ sampled s (or 0)
  nPairs: i32;
  nTrace: i32;
  pairCodes: usize; // i32 × 2 nPairs
  accPair: usize; // f64 × nPairs
  traceCodes: usize; // i32 × nTrace
  traceBuf: usize; // f64 × traceCap × nTrace
  traceCap: i32;
  traceLen: i32;
  thin: i32;
  traceTick: i32;
}

export function chainBytes(): usize {
  return offsetof<Chain>();
}

/** Bytes of the work block chainSetup carves (two streams, 12 arrays of m, one of n). */
export function chainWorkBytes(m: i32, n: i32): usize {
  return 2 * PHILOX_BYTES + ((<usize>(12 * m + n)) << 3);
}

export function gaussBytes(): usize {
  return offsetof<Gauss>();
}

export function gaussInit(hdr: usize, m: i32, mean: usize, prec: usize, tmp: usize): void {
  const g = changetype<Gauss>(hdr);
  g.m = m;
  g.mean = mean;
  g.prec = prec;
  g.tmp = tmp;
}

/** Lays out a chain: target (Relaxed or Gauss header), dimensions, the work block; unit diagonal mass. */
export function chainSetup(hdr: usize, kind: i32, target: usize, m: i32, n: i32, work: usize): void {
  const c = changetype<Chain>(hdr);
  memory.fill(hdr, 0, offsetof<Chain>());
  c.kind = kind;
  c.target = target;
  c.m = m;
  c.n = n;
  c.rng = work;
  c.rngS = work + PHILOX_BYTES;
  let q = work + 2 * PHILOX_BYTES;
  const mb = <usize>m << 3;
  c.x = q; q += mb;
  c.grad = q; q += mb;
  c.xp = q; q += mb;
  c.gp = q; q += mb;
  c.p = q; q += mb;
  c.p0 = q; q += mb;
  c.v = q; q += mb;
  c.w = q; q += mb;
  c.invMass = q; q += mb;
  c.wMean = q; q += mb;
  c.wM2 = q; q += mb;
  q += mb; // spare scratch (langevin.ts: the proposal noise)
  c.prob = q;
  for (let i = 0; i < m; i++) store<f64>(c.invMass + (<usize>i << 3), 1.0);
  c.massKind = MASS_DIAG;
  c.eps = 0.1;
  c.thin = 1;
  c.daTarget = 0.8;
}

/** The spare m-vector of the work block (after wM2). */
@inline
export function chainSpare(c: Chain): usize {
  return c.wM2 + (<usize>c.m << 3);
}

export function chainSeed(hdr: usize, lo: u32, hi: u32, chain: u32, tag: u32, tagS: u32): void {
  const c = changetype<Chain>(hdr);
  rngInit(changetype<Philox>(c.rng), lo, hi, chain, tag);
  rngInit(changetype<Philox>(c.rngS), lo, hi, chain, tagS);
}

/** Mass matrix: MASS_DIAG uses the chain's invMass array (chainInverseMass); dense kinds use T. */
export function chainSetMass(hdr: usize, kind: i32, T: usize): void {
  const c = changetype<Chain>(hdr);
  c.massKind = kind;
  c.massT = T;
}

export function chainInverseMass(hdr: usize): usize {
  return changetype<Chain>(hdr).invMass;
}

export function chainSetIntegrator(hdr: usize, nStages: i32, coef: usize, nSteps: i32): void {
  const c = changetype<Chain>(hdr);
  c.nStages = nStages;
  c.coef = coef;
  c.nSteps = nSteps;
}

export function chainSetOutputs(
  hdr: usize, acc: usize, accEmp: usize, nPairs: i32, pairCodes: usize, accPair: usize,
  nTrace: i32, traceCodes: usize, traceBuf: usize, traceCap: i32, thin: i32,
): void {
  const c = changetype<Chain>(hdr);
  c.acc = acc;
  c.accEmp = accEmp;
  c.nPairs = nPairs;
  c.pairCodes = pairCodes;
  c.accPair = accPair;
  c.nTrace = nTrace;
  c.traceCodes = traceCodes;
  c.traceBuf = traceBuf;
  c.traceCap = traceCap;
  c.traceLen = 0;
  c.thin = max(1, thin);
  c.traceTick = 0;
}

export function chainTraceLen(hdr: usize): i32 {
  return changetype<Chain>(hdr).traceLen;
}

export function chainResetTrace(hdr: usize): void {
  const c = changetype<Chain>(hdr);
  c.traceLen = 0;
  c.traceTick = 0;
}

export function chainPosition(hdr: usize): usize {
  return changetype<Chain>(hdr).x;
}

export function chainGradient(hdr: usize): usize {
  return changetype<Chain>(hdr).grad;
}

export function chainProb(hdr: usize): usize {
  return changetype<Chain>(hdr).prob;
}

export function chainLogp(hdr: usize): f64 {
  return changetype<Chain>(hdr).logp;
}

export function chainStepSize(hdr: usize): f64 {
  return changetype<Chain>(hdr).eps;
}

export function chainSetStepSize(hdr: usize, eps: f64): void {
  changetype<Chain>(hdr).eps = eps;
}

/** Info of the last step call: [iterations, Σ accept stat, accepted, divergent, Σ ΔH, max |ΔH|, gradients, ε]. */
export function chainInfo(hdr: usize, out: usize): void {
  const c = changetype<Chain>(hdr);
  store<f64>(out, c.infoIters);
  store<f64>(out, c.infoAcceptStat, 8);
  store<f64>(out, c.infoAccepted, 16);
  store<f64>(out, c.infoDivergent, 24);
  store<f64>(out, c.infoEnergySum, 32);
  store<f64>(out, c.infoEnergyAbsMax, 40);
  store<f64>(out, c.infoGrads, 48);
  store<f64>(out, c.eps, 56);
}

export function resetInfo(c: Chain): void {
  c.infoIters = 0;
  c.infoAcceptStat = 0;
  c.infoAccepted = 0;
  c.infoDivergent = 0;
  c.infoEnergySum = 0;
  c.infoEnergyAbsMax = 0;
  c.infoGrads = 0;
}

// ---------------------------------------------------------------------------------------------
// Target density.

function gaussLogDensity(g: Gauss, x: usize, grad: usize): f64 {
  const m = g.m;
  for (let i = 0; i < m; i++) store<f64>(g.tmp + (<usize>i << 3), load<f64>(x + (<usize>i << 3)) - load<f64>(g.mean + (<usize>i << 3)));
  let lp = 0.0;
  for (let i = 0; i < m; i++) {
    const row = g.prec + ((<usize>i * <usize>m) << 3);
    const s = dot(row, g.tmp, m);
    lp -= 0.5 * s * load<f64>(g.tmp + (<usize>i << 3));
    if (grad) store<f64>(grad + (<usize>i << 3), -s);
  }
  return lp;
}

/** log p(x) and, when grad ≠ 0, its gradient; for the relaxed target π is left in the Relaxed header. */
export function density(c: Chain, x: usize, grad: usize): f64 {
  if (c.kind == TARGET_RELAXED) return relaxedLogDensity(changetype<Relaxed>(c.target), x, grad);
  return gaussLogDensity(changetype<Gauss>(c.target), x, grad);
}

/**
 * ∇ log p(x) into grad (and π for the relaxed target) without log p; returns 0, or a non-finite value
 * where log p would not be finite. The inner steps of a trajectory need only this.
 */
function gradientOnly(c: Chain, x: usize, grad: usize): f64 {
  if (c.kind == TARGET_RELAXED) return relaxedGradient(changetype<Relaxed>(c.target), x, grad);
  const lp = gaussLogDensity(changetype<Gauss>(c.target), x, grad);
  return isFinite(lp) ? 0.0 : lp;
}

/** Copies π of the last density call (the relaxed target only) into the chain's current π. */
@inline
export function keepProb(c: Chain): void {
  if (c.n > 0) memory.copy(c.prob, changetype<Relaxed>(c.target).prob, <usize>c.n << 3);
}

/** Sets x (copied from src, or drawn at random when src = 0) and evaluates log p, ∇, π there. */
export function chainSetPosition(hdr: usize, src: usize): f64 {
  const c = changetype<Chain>(hdr);
  const m = c.m;
  if (src) memory.copy(c.x, src, <usize>m << 3);
  else randomStart(c);
  c.logp = density(c, c.x, c.grad);
  keepProb(c);
  return c.logp;
}

/**
 * A random start in the bulk of p(x): s uniform over valid configurations, then x ~ p(x | s) = N(Mᵀs, I)
 * (relaxed target), or x ~ N(μ, I) (Gaussian target). Uses the move stream.
 */
function randomStart(c: Chain): void {
  const r = changetype<Philox>(c.rng);
  const m = c.m;
  if (c.kind == TARGET_RELAXED) {
    const rel = changetype<Relaxed>(c.target);
    const s = rel.prob; // scratch: overwritten by the density call that follows
    memory.fill(s, 0, <usize>rel.nBits << 3);
    for (let v = 0; v < rel.nBlocks; v++) {
      const b = load<i32>(rel.blockStart + (<usize>v << 2));
      if (load<u8>(rel.oneHot + <usize>v)) {
        const K = load<i32>(rel.blockStart + (<usize>(v + 1) << 2)) - b;
        const k = min<i32>(<i32>(uniform32(r) * <f64>K), K - 1);
        store<f64>(s + (<usize>(b + k) << 3), 1.0);
      } else if (uniform32(r) < 0.5) {
        store<f64>(s + (<usize>b << 3), 1.0);
      }
    }
    factorApplyT(changetype<Factor>(rel.factor), s, c.x);
    normalsInto(r, c.x, m, true);
  } else {
    const g = changetype<Gauss>(c.target);
    memory.copy(c.x, g.mean, <usize>m << 3);
    normalsInto(r, c.x, m, true);
  }
}

// ---------------------------------------------------------------------------------------------
// Mass matrix operations.

/** In place: b ← R⁻¹ b. */
@inline
function solveR(c: Chain, b: usize): void {
  if (c.massKind == MASS_DENSE_LOWER) forwardSolve(c.massT, b, c.m);
  else transposeSolve(c.massT, b, c.m);
}

/** In place: b ← R⁻ᵀ b. */
@inline
function solveRT(c: Chain, b: usize): void {
  if (c.massKind == MASS_DENSE_LOWER) transposeSolve(c.massT, b, c.m);
  else forwardSolve(c.massT, b, c.m);
}

/** y = R z. */
@inline
function mulR(c: Chain, z: usize, y: usize): void {
  if (c.massKind == MASS_DENSE_LOWER) lowerMul(c.massT, z, y, c.m);
  else lowerMulT(c.massT, z, y, c.m);
}

/** y = Rᵀ z. */
@inline
export function mulRT(c: Chain, z: usize, y: usize): void {
  if (c.massKind == MASS_DENSE_LOWER) lowerMulT(c.massT, z, y, c.m);
  else lowerMul(c.massT, z, y, c.m);
}

/** v = G⁻¹ p. For dense kinds, also leaves R⁻¹ p in c.w; returns ½ pᵀ G⁻¹ p. */
export function velocity(c: Chain, p: usize, v: usize): f64 {
  const m = c.m;
  let k = 0.0;
  if (c.massKind == MASS_DIAG) {
    for (let i = 0; i < m; i++) {
      const pi = load<f64>(p + (<usize>i << 3));
      const vi = load<f64>(c.invMass + (<usize>i << 3)) * pi;
      store<f64>(v + (<usize>i << 3), vi);
      k += pi * vi;
    }
    return 0.5 * k;
  }
  memory.copy(c.w, p, <usize>m << 3);
  solveR(c, c.w);
  k = dot(c.w, c.w, m);
  memory.copy(v, c.w, <usize>m << 3);
  solveRT(c, v);
  return 0.5 * k;
}

/** ½ pᵀ G⁻¹ p. */
export function kinetic(c: Chain, p: usize): f64 {
  const m = c.m;
  if (c.massKind == MASS_DIAG) {
    let k = 0.0;
    for (let i = 0; i < m; i++) {
      const pi = load<f64>(p + (<usize>i << 3));
      k += load<f64>(c.invMass + (<usize>i << 3)) * pi * pi;
    }
    return 0.5 * k;
  }
  memory.copy(c.w, p, <usize>m << 3);
  solveR(c, c.w);
  return 0.5 * dot(c.w, c.w, m);
}

/** p ~ N(0, G) from the move stream; returns its kinetic energy ½|z|². */
export function drawMomentum(c: Chain, p: usize): f64 {
  const r = changetype<Philox>(c.rng);
  const m = c.m;
  let k = 0.0;
  if (c.massKind == MASS_DIAG) {
    normalsInto(r, p, m, false);
    return 0.5 * scaleMomentum(p, c.invMass, m);
  }
  normalsInto(r, c.w, m, false);
  for (let i = 0; i < m; i++) {
    const z = load<f64>(c.w + (<usize>i << 3));
    k += z * z;
  }
  mulR(c, c.w, p);
  return 0.5 * k;
}

/** out = G^{-½}-type noise: a draw of N(0, G⁻¹) built from z ~ N(0, I) already in `z` (z untouched). */
export function inverseMassNoise(c: Chain, z: usize, out: usize): void {
  const m = c.m;
  if (c.massKind == MASS_DIAG) {
    for (let i = 0; i < m; i++) store<f64>(out + (<usize>i << 3), load<f64>(z + (<usize>i << 3)) * Math.sqrt(load<f64>(c.invMass + (<usize>i << 3))));
    return;
  }
  memory.copy(out, z, <usize>m << 3);
  solveRT(c, out);
}

// ---------------------------------------------------------------------------------------------
// Integrator.

/**
 * `steps` integrator steps of size eps from (x, p) with the gradient g at x, all updated in place.
 * Returns log p at the end, or a non-finite value as soon as the density stops being finite (the
 * trajectory is abandoned there: a divergence). With steps = 0 it returns logp unchanged.
 */
export function integrate(c: Chain, x: usize, g: usize, p: usize, logp: f64, eps: f64, steps: i32): f64 {
  const m = c.m;
  const S = c.nStages;
  let lp = logp;
  for (let s = 0; s < steps; s++) {
    for (let k = 0; k <= S; k++) {
      axpy(p, load<f64>(c.coef + (<usize>(2 * k) << 3)) * eps, g, m);
      if (k == S) break;
      velocity(c, p, c.v);
      axpy(x, load<f64>(c.coef + (<usize>(2 * k + 1) << 3)) * eps, c.v, m);
      // log p only at the end (the accept test); the inner positions need the gradient alone.
      lp = s == steps - 1 && k == S - 1 ? density(c, x, g) : gradientOnly(c, x, g);
      c.infoGrads += 1;
      if (!isFinite(lp)) return lp;
    }
  }
  return lp;
}

// ---------------------------------------------------------------------------------------------
// Adaptation.

export function chainDaRestart(hdr: usize, target: f64): void {
  const c = changetype<Chain>(hdr);
  c.daTarget = target;
  c.daMu = Math.log(10.0 * c.eps);
  c.daHbar = 0;
  c.daT = 0;
  c.daLogEps = Math.log(c.eps);
  c.daLogEpsBar = 0;
}

/** Fixes ε at the dual-averaging average (end of warm-up). */
export function chainDaFinal(hdr: usize): f64 {
  const c = changetype<Chain>(hdr);
  if (c.daT > 0) c.eps = Math.exp(c.daLogEpsBar);
  return c.eps;
}

export function daUpdate(c: Chain, alpha: f64): void {
  const t = (c.daT += 1);
  const w = 1.0 / (t + DA_T0);
  c.daHbar = (1.0 - w) * c.daHbar + w * (c.daTarget - alpha);
  let le = c.daMu - (Math.sqrt(t) / DA_GAMMA) * c.daHbar;
  // Keep ε in a range where the arithmetic stays meaningful.
  le = min(max(le, -46.0), 23.0);
  c.daLogEps = le;
  const eta = Math.pow(t, -DA_KAPPA);
  c.daLogEpsBar = eta * le + (1.0 - eta) * c.daLogEpsBar;
  c.eps = Math.exp(le);
}

export function welfordAdd(c: Chain): void {
  const m = c.m;
  const n = (c.wCount += 1);
  for (let i = 0; i < m; i++) {
    const xi = load<f64>(c.x + (<usize>i << 3));
    const qm = c.wMean + (<usize>i << 3);
    const mean = load<f64>(qm);
    const d = xi - mean;
    const nm = mean + d / n;
    store<f64>(qm, nm);
    const q2 = c.wM2 + (<usize>i << 3);
    store<f64>(q2, load<f64>(q2) + d * (xi - nm));
  }
}

/**
 * End of a slow window: diagonal inverse mass = regularised window variance (Stan:
 * n/(n+5)·var + 10⁻³·5/(n+5)), then the window statistics are reset. Returns the window's length;
 * with fewer than 3 draws nothing changes.
 */
export function chainUpdateMass(hdr: usize): f64 {
  const c = changetype<Chain>(hdr);
  const n = c.wCount;
  if (n >= 3) {
    for (let i = 0; i < c.m; i++) {
      const v = load<f64>(c.wM2 + (<usize>i << 3)) / (n - 1);
      store<f64>(c.invMass + (<usize>i << 3), (n / (n + 5.0)) * v + 1e-3 * (5.0 / (n + 5.0)));
    }
  }
  c.wCount = 0;
  memory.fill(c.wMean, 0, <usize>c.m << 3);
  memory.fill(c.wM2, 0, <usize>c.m << 3);
  return n;
}

// ---------------------------------------------------------------------------------------------
// Estimators.

@inline
function pairFactor(prob: usize, code: i32): f64 {
  return code >= 0 ? load<f64>(prob + (<usize>code << 3)) : 1.0 - load<f64>(prob + (<usize>(-code - 1) << 3));
}

/**
 * Adds the current π (Rao–Blackwellised node marginals), the pair products E[f(π_a) f(π_b)] (codes:
 * c ≥ 0 → π_c, c < 0 → 1 − π_{−c−1}; pairs must lie in different blocks, where s_a, s_b are
 * independent given x), and — when accEmp ≠ 0 — one draw s ~ p(s|x) from the s stream.
 */
export function accumulate(c: Chain): void {
  const n = c.n;
  if (n == 0) return;
  const prob = c.prob;
  if (c.acc) axpy(c.acc, 1.0, prob, n);
  for (let t = 0; t < c.nPairs; t++) {
    const a = load<i32>(c.pairCodes + (<usize>(2 * t) << 2));
    const b = load<i32>(c.pairCodes + (<usize>(2 * t + 1) << 2));
    const q = c.accPair + (<usize>t << 3);
    store<f64>(q, load<f64>(q) + pairFactor(prob, a) * pairFactor(prob, b));
  }
  if (c.accEmp) {
    const rel = changetype<Relaxed>(c.target);
    const r = changetype<Philox>(c.rngS);
    for (let v = 0; v < rel.nBlocks; v++) {
      const b = load<i32>(rel.blockStart + (<usize>v << 2));
      if (!load<u8>(rel.oneHot + <usize>v)) {
        if (uniform32(r) < load<f64>(prob + (<usize>b << 3))) {
          const q = c.accEmp + (<usize>b << 3);
          store<f64>(q, load<f64>(q) + 1.0);
        }
        continue;
      }
      const e = load<i32>(rel.blockStart + (<usize>(v + 1) << 2));
      const u = uniform(r);
      let cum = 0.0;
      let k = b;
      for (; k < e - 1; k++) {
        cum += load<f64>(prob + (<usize>k << 3));
        if (u < cum) break;
      }
      const q = c.accEmp + (<usize>k << 3);
      store<f64>(q, load<f64>(q) + 1.0);
    }
  }
}

/** Records one row of traced quantities every thin-th call: code ≥ 0 → π_code, −1 → log p, ≤ −2 → x_{−code−2}. */
export function traceRow(c: Chain): void {
  const tick = c.traceTick++;
  if (tick % c.thin != 0 || c.traceLen >= c.traceCap) return;
  const row = c.traceBuf + ((<usize>c.traceLen * <usize>c.nTrace) << 3);
  for (let k = 0; k < c.nTrace; k++) {
    const code = load<i32>(c.traceCodes + (<usize>k << 2));
    let val: f64;
    if (code >= 0) val = load<f64>(c.prob + (<usize>code << 3));
    else if (code == -1) val = c.logp;
    else val = load<f64>(c.x + (<usize>(-code - 2) << 3));
    store<f64>(row + (<usize>k << 3), val);
  }
  c.traceLen++;
}

/** What every sampler does after its move: adaptation, statistics, estimators. */
export function afterMove(c: Chain, flags: i32, alpha: f64): void {
  if (flags & STEP_ADAPT) daUpdate(c, alpha);
  if (flags & STEP_WELFORD) welfordAdd(c);
  if (flags & STEP_ACCUMULATE) accumulate(c);
  if (flags & STEP_TRACE) traceRow(c);
}

/** Records one transition's energy error ΔH (or −log α) and acceptance statistic. */
export function recordInfo(c: Chain, dH: f64, divergent: bool, alpha: f64, accepted: bool): void {
  c.infoIters += 1;
  c.infoAcceptStat += alpha;
  if (accepted) c.infoAccepted += 1;
  if (divergent) c.infoDivergent += 1;
  else {
    c.infoEnergySum += dH;
    c.infoEnergyAbsMax = max(c.infoEnergyAbsMax, Math.abs(dH));
  }
}

/** Makes the proposal (xp, gp, π in the Relaxed header) the current state: pointer swap. */
export function acceptProposal(c: Chain, logp: f64): void {
  const x = c.x;
  c.x = c.xp;
  c.xp = x;
  const g = c.grad;
  c.grad = c.gp;
  c.gp = g;
  c.logp = logp;
  keepProb(c);
}

// ---------------------------------------------------------------------------------------------
// HMC.

/**
 * `iters` HMC transitions: momentum p ~ N(0, G), nSteps integrator steps of size ε, Metropolis test on
 * H = −log p(x) + ½ pᵀG⁻¹p. A trajectory whose energy error exceeds DIVERGENCE_THRESHOLD or stops
 * being finite is divergent: rejected, acceptance statistic 0, counted.
 */
export function hmcStep(hdr: usize, iters: i32, flags: i32): void {
  const c = changetype<Chain>(hdr);
  resetInfo(c);
  for (let it = 0; it < iters; it++) {
    const H0 = hmcBegin(c);
    const lp1 = integrate(c, c.xp, c.gp, c.p, c.logp, c.eps, c.nSteps);
    hmcFinish(c, lp1, H0, flags);
  }
}

/** A transition's start: p ~ N(0, G), the proposal (xp, gp) at the current state; returns H0. */
export function hmcBegin(c: Chain): f64 {
  const m = c.m;
  const K0 = drawMomentum(c, c.p);
  const H0 = -c.logp + K0;
  memory.copy(c.xp, c.x, <usize>m << 3);
  memory.copy(c.gp, c.grad, <usize>m << 3);
  return H0;
}

/**
 * A transition's end, once the trajectory ended at log p = lp1 (π of its last density call in the Relaxed
 * header): the Metropolis test, the info and what follows a move.
 */
export function hmcFinish(c: Chain, lp1: f64, H0: f64, flags: i32): void {
  let dH = NaN;
  if (isFinite(lp1)) dH = -lp1 + kinetic(c, c.p) - H0;
  const divergent = !isFinite(dH) || dH > DIVERGENCE_THRESHOLD;
  const alpha = divergent ? 0.0 : (dH <= 0 ? 1.0 : Math.exp(-dH));
  const u = uniform(changetype<Philox>(c.rng));
  const accepted = !divergent && Math.log(u) < -dH;
  if (accepted) acceptProposal(c, lp1);
  recordInfo(c, dH, divergent, alpha, accepted);
  afterMove(c, flags, alpha);
}

/**
 * Hoffman & Gelman's heuristic (2014, Alg. 4) for a first step size: from the current x and one
 * momentum draw, double or halve ε until the one-step acceptance probability crosses ½. Returns ε
 * (also stored in the chain).
 */
export function hmcFindStepSize(hdr: usize, eps0: f64): f64 {
  const c = changetype<Chain>(hdr);
  const m = c.m;
  const H0 = -c.logp + drawMomentum(c, c.p0);
  const LOG_HALF = Math.log(0.5);
  let eps = eps0;
  let dir = 0;
  for (let k = 0; k < 60; k++) {
    memory.copy(c.xp, c.x, <usize>m << 3);
    memory.copy(c.gp, c.grad, <usize>m << 3);
    memory.copy(c.p, c.p0, <usize>m << 3);
    const lp1 = integrate(c, c.xp, c.gp, c.p, c.logp, eps, 1);
    let logA = -Infinity;
    if (isFinite(lp1)) {
      const dH = -lp1 + kinetic(c, c.p) - H0;
      if (isFinite(dH)) logA = -dH;
    }
    const up = logA > LOG_HALF;
    if (dir == 0) dir = up ? 1 : -1;
    else if ((dir == 1) != up) break;
    const next = dir == 1 ? eps * 2.0 : eps * 0.5;
    if (next > 1e6 || next < 1e-12) break;
    eps = next;
  }
  c.eps = eps;
  return eps;
}

/**
 * Test hook: integrates (x, p) in place (f64 × m each, any addresses) for `steps` steps of size eps
 * with the chain's integrator and mass; returns log p at the end. The chain's state is not touched
 * (its gradient scratch gp is).
 */
export function hmcIntegrate(hdr: usize, x: usize, p: usize, steps: i32, eps: f64): f64 {
  const c = changetype<Chain>(hdr);
  const lp = density(c, x, c.gp);
  return integrate(c, x, c.gp, p, lp, eps, steps);
}

/** Test hook: ½ pᵀ G⁻¹ p. */
export function chainKinetic(hdr: usize, p: usize): f64 {
  return kinetic(changetype<Chain>(hdr), p);
}

/** Test hook: log p(x) and ∇ into grad (or 0), for the chain's target. */
export function chainDensity(hdr: usize, x: usize, grad: usize): f64 {
  return density(changetype<Chain>(hdr), x, grad);
}
