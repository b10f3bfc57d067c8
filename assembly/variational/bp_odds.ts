// The parallel schedule of bp.ts on log-odds, for models whose factors of arity ≥ 2 are all binary
// pairs with pair constants (bp.ts, pairConstants): a two-state log-message shifted to max 0 is
// (0, δ) up to the shift, so each message is the one number δ = m(1) − m(0), each belief the one
// number L_v = b_v(1) − b_v(0) = U_v + Σ_{pairs f ∋ v} ρ_f δ_fv (U_v: the unary factors' part,
// fixed), and the var → factor message n_uf is L_u − δ_fu. A sweep is then, per pair, the two
// closed-form updates of bp.ts's pairDelta (one exp and one log each) and their commit — the same
// arithmetic as the general loop (damping (1 − α) δ_new + α δ_old is its log-space damping of the
// shifted entries; the residual the same dynamic range of the change, here |δ_new − δ_old|), without its
// per-entry passes over beliefs, var → factor messages and shifts. The messages go back into
// fac2var in bp.ts's form when the run ends.
//
// Undamped BP (ρ ≡ 1 on the pairs, α = 0) goes one step further, to ratios r = e^δ (linearSweep): the
// belief ratio is R_v = e^{U_v} Π_f r_fv and the update r = e^c (1 + A T)/(1 + B T), T = R_u / r_fu —
// no exp or log at all. Pairs whose messages could leave the double range (|c| + |a − b| > 700,
// bp.ts's constants) keep the log-odds sweep; a belief ratio out of range sends the run back to
// log-odds before anything of that sweep is committed.
//
// Work memory (BPState.odds, f64; allocated only for models whose factors of arity ≥ 2 are all
// binary pairs, so pair k, bp.ts's pairIndex, is the k-th factor of arity 2): δ of pair k at 2k,
// 2k + 1 (its two positions; in linear sweeps the ratios e^δ in their place), then L (or R) per
// variable, then U per variable; for linear sweeps, the pairs' variables as i32 (u, v) and e^U per
// variable. The linear sweep reads its constants from bp.ts's pair constants: e^c towards one
// position is B towards the other, so nothing else is stored per pair.

import { FactorGraph, cardOf } from '../core/factorgraph';
import { BPState, pairDelta1, storeDelta } from './bp_state';

@inline function ldI(p: usize, i: i32): i32 { return load<i32>(p + (<usize>i << 2)); }
@inline function ldF(p: usize, i: i32): f64 { return load<f64>(p + (<usize>i << 3)); }
@inline function stF(p: usize, i: i32, x: f64): void { store<f64>(p + (<usize>i << 3), x); }

/** f64 entries of the log-odds work memory. */
export function bpOddsEntries(nPairs: i32, n: i32): i32 {
  return 3 * nPairs + 3 * n;
}

/**
 * Whether the run can use log-odds (every factor of arity ≥ 2 a binary pair with pair constants,
 * every message and unary part finite); if so, loads δ and U from the current messages.
 */
export function oddsSetup(s: BPState): bool {
  const g = changetype<FactorGraph>(s.g);
  const F = g.nFactors, n = g.n;
  const delta = s.odds, U = s.odds + (<usize>(2 * s.nPairs + n) << 3);
  for (let v = 0; v < n; v++) stF(U, v, 0.0);
  for (let f = 0; f < F; f++) {
    const p0 = ldI(g.scopeStart, f), a = ldI(g.scopeStart, f + 1) - p0;
    if (a == 0) continue;
    if (a == 1) {
      const v = ldI(g.scopeVars, p0);
      if (cardOf(g, v) != 2) continue; // no pair touches it (pairs are binary): its belief is left to bp.ts
      const m = s.fac2var + (<usize>ldI(s.msgStart, p0) << 3);
      const x0 = ldF(m, 0), x1 = ldF(m, 1);
      const rho = ldF(s.weight, f);
      // bp.ts adds ρ·x only where x ≠ 0: a −∞ entry would make the belief infinite.
      if (!(isFinite(x0) && isFinite(x1))) return false;
      stF(U, v, ldF(U, v) + rho * x1 - rho * x0);
      continue;
    }
    const k = ldI(s.pairIndex, f);
    if (k < 0 || isNaN(ldF(s.pairConst + (<usize>(6 * k) << 3), 0))) return false;
    for (let j = 0; j < 2; j++) {
      const m = s.fac2var + (<usize>ldI(s.msgStart, p0 + j) << 3);
      const d = ldF(m, 1) - ldF(m, 0);
      if (!isFinite(d)) return false;
      stF(delta, 2 * k + j, d);
    }
  }
  return true;
}

/** Residual of the two-state message (0, o) → (0, x): the dynamic range of its change in log space, |x − o| (bp.ts's commit). */
@inline
function residual(o: f64, x: f64, r: f64): f64 {
  return max(r, Math.abs(x - o));
}

/** One parallel iteration on log-odds; returns its largest residual. */
export function oddsSweep(s: BPState, damping: f64): f64 {
  const g = changetype<FactorGraph>(s.g);
  const F = g.nFactors, n = g.n;
  const delta = s.odds, L = s.odds + (<usize>(2 * s.nPairs) << 3), U = L + (<usize>n << 3);
  memory.copy(L, U, <usize>n << 3);
  // On this path the factors with a pair index are exactly those of arity 2 (oddsSetup).
  for (let f = 0; f < F; f++) {
    const k = ldI(s.pairIndex, f);
    if (k < 0) continue;
    const p0 = ldI(g.scopeStart, f);
    const rho = ldF(s.weight, f);
    const u = ldI(g.scopeVars, p0), v = ldI(g.scopeVars, p0 + 1);
    stF(L, u, ldF(L, u) + rho * ldF(delta, 2 * k));
    stF(L, v, ldF(L, v) + rho * ldF(delta, 2 * k + 1));
  }
  // Each factor reads only L (fixed for the sweep) and its own δ: committing at once is the parallel schedule.
  let r = 0.0;
  const keep = 1.0 - damping;
  for (let f = 0; f < F; f++) {
    const k = ldI(s.pairIndex, f);
    if (k < 0) continue;
    const p0 = ldI(g.scopeStart, f);
    const u = ldI(g.scopeVars, p0), v = ldI(g.scopeVars, p0 + 1);
    const pc = s.pairConst + (<usize>(6 * k) << 3);
    const d0 = ldF(delta, 2 * k), d1 = ldF(delta, 2 * k + 1);
    let x0 = pairDelta1(ldF(pc, 0), ldF(pc, 1), ldF(pc, 2), ldF(L, v) - d1);
    let x1 = pairDelta1(ldF(pc, 3), ldF(pc, 4), ldF(pc, 5), ldF(L, u) - d0);
    if (damping > 0.0) {
      x0 = keep * x0 + damping * d0;
      x1 = keep * x1 + damping * d1;
    }
    r = residual(d0, x0, r);
    r = residual(d1, x1, r);
    stF(delta, 2 * k, x0);
    stF(delta, 2 * k + 1, x1);
  }
  return r;
}

/** Writes the pairs' δ back into fac2var as bp.ts's shifted two-state messages. */
export function oddsStore(s: BPState): void {
  const g = changetype<FactorGraph>(s.g);
  for (let f = 0; f < g.nFactors; f++) {
    const k = ldI(s.pairIndex, f);
    if (k < 0) continue;
    const p0 = ldI(g.scopeStart, f);
    for (let j = 0; j < 2; j++) storeDelta(s.fac2var + (<usize>ldI(s.msgStart, p0 + j) << 3), ldF(s.odds, 2 * k + j));
  }
}


// ---------------------------------------------------------------------------------------------
// Undamped BP on ratios r = e^δ.

/** Largest |log| of a ratio the linear sweep lets a message reach. */
const LINEAR_RANGE: f64 = 700.0;

@inline function pairList(s: BPState, g: FactorGraph): usize { return s.odds + (<usize>(2 * s.nPairs + 2 * g.n) << 3); }
@inline function expU(s: BPState, g: FactorGraph): usize { return pairList(s, g) + (<usize>s.nPairs << 3); }

/**
 * Whether the loaded log-odds run can continue on ratios (every pair weight 1, every message's range
 * within ±LINEAR_RANGE); if so, turns δ into ratios in place and lists the pairs' variables. Call
 * after oddsSetup, with damping 0.
 */
export function linearSetup(s: BPState): bool {
  const g = changetype<FactorGraph>(s.g);
  const F = g.nFactors;
  for (let f = 0; f < F; f++) {
    const k = ldI(s.pairIndex, f);
    if (k < 0) continue;
    if (ldF(s.weight, f) != 1.0) return false;
    const pc = s.pairConst + (<usize>(6 * k) << 3);
    // pc: (c, A, B) towards position 0, then position 1; |δ| ≤ |c| + |log A − log B|.
    for (let j = 0; j < 2; j++) {
      const c = ldF(pc, 3 * j);
      if (!(Math.abs(c) + Math.abs(Math.log(ldF(pc, 3 * j + 1)) - Math.log(ldF(pc, 3 * j + 2))) <= LINEAR_RANGE)) return false;
      if (!(Math.abs(ldF(s.odds, 2 * k + j)) <= LINEAR_RANGE)) return false;
    }
  }
  const list = pairList(s, g), eU = expU(s, g);
  const U = s.odds + (<usize>(2 * s.nPairs + g.n) << 3);
  for (let f = 0; f < F; f++) {
    const k = ldI(s.pairIndex, f);
    if (k < 0) continue;
    const p0 = ldI(g.scopeStart, f);
    stF(s.odds, 2 * k, Math.exp(ldF(s.odds, 2 * k)));
    stF(s.odds, 2 * k + 1, Math.exp(ldF(s.odds, 2 * k + 1)));
    const q = list + (<usize>(2 * k) << 2);
    store<i32>(q, ldI(g.scopeVars, p0));
    store<i32>(q, ldI(g.scopeVars, p0 + 1), 4);
  }
  for (let v = 0; v < g.n; v++) stF(eU, v, Math.exp(ldF(U, v)));
  return true;
}

/** Turns the ratios back into log-odds δ (in place). */
export function linearToOdds(s: BPState): void {
  for (let i = 0; i < 2 * s.nPairs; i++) stF(s.odds, i, Math.log(ldF(s.odds, i)));
}

/** e^c (1 + A T)/(1 + B T) with T = R / r (r the incoming ratio), as (r + A R)/(r + B R) unless that overflows. */
@inline
function pairRatio(ec: f64, A: f64, B: f64, R: f64, r: f64): f64 {
  const x = ec * ((r + A * R) / (r + B * R));
  if (x < Infinity && x == x) return x;
  if (R <= r) {
    const t = R / r;
    return ec * ((1.0 + A * t) / (1.0 + B * t));
  }
  const t = r / R;
  return ec * ((t + A) / (t + B));
}

/**
 * Residuals of a pair's two ratio messages o → x (r = e^δ), lane by lane: |x − o| / min(x, o) =
 * e^{|δ_x − δ_o|} − 1, the log-odds sweep's |δ_x − δ_o| to first order and never below it (so never
 * converged sooner), with no log per message; both in one f64x2 division, and pmin / pmax (plain
 * compares): scalar code with V8's f64.min (NaN and −0 handling) made the whole sweep 1.7× slower.
 */
@inline
function ratioResiduals(o: v128, x: v128, res: v128): v128 {
  const d = f64x2.div(f64x2.abs(f64x2.sub(x, o)), f64x2.pmin(x, o));
  return f64x2.pmax(res, d);
}

/**
 * One undamped parallel iteration on ratios; returns its largest residual, or NaN — nothing changed —
 * when a belief ratio leaves the double range (the caller goes back to log-odds).
 */
export function linearSweep(s: BPState): f64 {
  const g = changetype<FactorGraph>(s.g);
  const n = g.n;
  const R = s.odds + (<usize>(2 * s.nPairs) << 3);
  const list = pairList(s, g);
  memory.copy(R, expU(s, g), <usize>n << 3);
  const P = s.nPairs;
  for (let k = 0; k < P; k++) {
    const q = list + (<usize>(2 * k) << 2), r = s.odds + (<usize>(2 * k) << 3);
    const u = load<i32>(q), v = load<i32>(q, 4);
    stF(R, u, ldF(R, u) * ldF(r, 0));
    stF(R, v, ldF(R, v) * ldF(r, 1));
  }
  for (let v = 0; v < n; v++) {
    const x = ldF(R, v);
    if (!(x >= 2.2250738585072014e-308 && x < Infinity)) return NaN;
  }
  let res = f64x2.splat(0.0);
  for (let k = 0; k < P; k++) {
    const q = list + (<usize>(2 * k) << 2), r = s.odds + (<usize>(2 * k) << 3);
    const pc = s.pairConst + (<usize>(6 * k) << 3); // (c0, A0, B0, c1, A1, B1), e^c0 = B1, e^c1 = B0
    const u = load<i32>(q), v = load<i32>(q, 4);
    const old = v128.load(r);
    const r0 = f64x2.extract_lane(old, 0), r1 = f64x2.extract_lane(old, 1);
    const x0 = pairRatio(ldF(pc, 5), ldF(pc, 1), ldF(pc, 2), ldF(R, v), r1);
    const x1 = pairRatio(ldF(pc, 2), ldF(pc, 4), ldF(pc, 5), ldF(R, u), r0);
    const now = f64x2.replace_lane(f64x2.splat(x0), 1, x1);
    res = ratioResiduals(old, now, res);
    v128.store(r, now);
  }
  const a = f64x2.extract_lane(res, 0), b = f64x2.extract_lane(res, 1);
  return a > b ? a : b;
}
