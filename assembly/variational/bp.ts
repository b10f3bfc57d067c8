// Loopy belief propagation (sum-product) on a factor graph of any arity (assembly/core/factorgraph.ts),
// in log space, with a weight ρ_f per factor: ρ ≡ 1 is BP (Bethe), ρ from spanning trees is
// tree-reweighted BP (Wainwright, Jaakkola, Willsky 2005; bindings/variational/trw.ts). One loop
// serves both; the messages are
//
//   node belief     b_v(k)   = Σ_{f ∋ v} ρ_f m_fv(k)
//   var → factor    n_vf(k)  = b_v(k) − m_fv(k)
//   factor → var    m_fv(k)  = log Σ_{x: x_v = k} exp(θ_f(x)/ρ_f + Σ_{u ∈ f, u ≠ v} n_uf(x_u))
//
// each message shifted to max 0. A factor's update computes B(x) = θ_f(x)/ρ_f + Σ_u n_uf(x_u) over its
// table once, E(x) = exp(B(x) − max B), and per position the sums S_v(k) = Σ_{x_v = k} E(x); then
// m_fv(k) = log S_v(k) + max B − n_vf(k) (n_vf(k) is constant on x_v = k). Where that cannot be
// used — n_vf(k) = −∞, or S_v(k) below 1e-280 (underflow) — the message entry is recomputed by a
// log-sum-exp that leaves position v out. Zeros of the model are −∞ throughout; a −∞ factor message
// makes n_vf(k) the sum over the other factors, never −∞ − (−∞).
//
// Damping α: m ← (1 − α) m_new + α m_old in log space (libDAI's geometric damping). The residual of a
// message is the dynamic range of its change in log space, max_k Δ_k − min_k Δ_k with Δ = m_new − m_old
// (Ihler, Fisher, Willsky 2005's message-error measure; a state whose support appears or vanishes:
// ∞): a relative change, whatever the state's weight. On the probability scale (libDAI's
// max_k |e^{m_new(k)} − e^{m_old(k)}|) a state of weight e^-23 moving by 11 nats counts as 1e-10,
// and damped BP on a three-variable chain with 1e20 table entries stopped after two sweeps,
// "converged", at log Z 91.4 against 47.4: a factor downstream multiplies that state by e^46.
// Schedules: 0 parallel (every factor from the same var → factor messages, then all beliefs),
// 1 sequential (factors in index order, each from the current beliefs, beliefs updated at once),
// 2 residual (the factor whose inputs changed most first; see residualStep).
//
// Memory (all allocated by the bindings): the header BPState (bp_state.ts) and the arrays it points to.
// Messages are addressed per scope entry p (factor f, position in f's scope): msgStart[p] in f64
// entries, card of the variable long. incPos[q] is the scope entry of incidence entry q. Pair
// constants are per binary pair (pairIndex). newMsg and the residual heap are allocated when first
// needed (bpRun asks for them with −2; bpSetNewMsg, bpSetResidual), so the log-odds path of a
// large binary model never holds them.

import { FactorGraph, cardOf } from '../core/factorgraph';
import { oddsSetup, oddsSweep, oddsStore, linearSetup, linearSweep, linearToOdds } from './bp_odds';
import { BPState, pairDelta1, storeDelta } from './bp_state';


export function bpStateBytes(): usize {
  return offsetof<BPState>();
}

export function bpInit(
  st: usize, g: usize, msgStart: usize, incPos: usize, belStart: usize, weight: usize,
  fac2var: usize, var2fac: usize, belief: usize, scratchE: usize, scratchS: usize, digits: usize,
  pairIndex: usize, nPairs: i32, pairConst: usize, odds: usize,
): void {
  const s = changetype<BPState>(st);
  s.g = g;
  s.msgStart = msgStart;
  s.incPos = incPos;
  s.belStart = belStart;
  s.weight = weight;
  s.fac2var = fac2var;
  s.var2fac = var2fac;
  s.newMsg = 0;
  s.belief = belief;
  s.scratchE = scratchE;
  s.scratchS = scratchS;
  s.digits = digits;
  s.pairIndex = pairIndex;
  s.nPairs = nPairs;
  s.pairConst = pairConst;
  s.prio = 0;
  s.heap = 0;
  s.heapPos = 0;
  s.odds = odds;
  bpReset(st);
}

/** Hands the state its newMsg (f64[M]) once bpRun asked for it. */
export function bpSetNewMsg(st: usize, newMsg: usize): void {
  changetype<BPState>(st).newMsg = newMsg;
}

/**
 * Hands the state the residual schedule's buffers once bpRun asked for them. The heap starts as
 * bpRefresh sets it: no other schedule touches it, so that is the heap the last refresh would have left.
 */
export function bpSetResidual(st: usize, prio: usize, heap: usize, heapPos: usize): void {
  const s = changetype<BPState>(st);
  s.prio = prio;
  s.heap = heap;
  s.heapPos = heapPos;
  residualInit(s);
}

@inline function ldI(p: usize, i: i32): i32 { return load<i32>(p + (<usize>i << 2)); }
@inline function ldF(p: usize, i: i32): f64 { return load<f64>(p + (<usize>i << 3)); }
@inline function stF(p: usize, i: i32, x: f64): void { store<f64>(p + (<usize>i << 3), x); }

/** Uniform messages (all 0) and the beliefs and var → factor messages that follow. */
export function bpReset(st: usize): void {
  const s = changetype<BPState>(st);
  const g = changetype<FactorGraph>(s.g);
  const S = ldI(g.scopeStart, g.nFactors);
  memory.fill(s.fac2var, 0, <usize>ldI(s.msgStart, S) << 3);
  bpRefresh(st);
}

/**
 * A factor on two binary variables with finite θ/ρ sends m(1) − m(0) = c + log((1 + A t)/(1 + B t)),
 * t = e^ν, ν the incoming n(1) − n(0) from the other variable: one exp and one log per message
 * instead of four of each. Per pair (pairIndex): (c, A, B) towards position 0, then towards position
 * 1, where c towards one position is log B towards the other (bp_odds.ts's ratio sweep reads e^c as
 * that B). Used where every exponent is within ±600 (A, B far from overflow); NaN in slot 0 marks
 * the general path.
 */
function pairConstants(s: BPState): void {
  const g = changetype<FactorGraph>(s.g);
  for (let f = 0; f < g.nFactors; f++) {
    const k = ldI(s.pairIndex, f);
    if (k < 0) continue; // not two binary variables
    const pc = s.pairConst + (<usize>(6 * k) << 3);
    stF(pc, 0, NaN);
    const th = g.tables + (<usize>ldI(g.tableStart, f) << 3);
    const inv = 1.0 / ldF(s.weight, f);
    const t00 = ldF(th, 0) * inv, t01 = ldF(th, 1) * inv, t10 = ldF(th, 2) * inv, t11 = ldF(th, 3) * inv;
    const a0 = t11 - t10, b0 = t01 - t00, a1 = t11 - t01, b1 = t10 - t00;
    if (!(Math.abs(a0) <= 600 && Math.abs(b0) <= 600 && Math.abs(a1) <= 600 && Math.abs(b1) <= 600)) continue; // also catches −∞, NaN
    stF(pc, 0, b1);
    stF(pc, 1, Math.exp(a0));
    stF(pc, 2, Math.exp(b0));
    stF(pc, 3, b0);
    stF(pc, 4, Math.exp(a1));
    stF(pc, 5, Math.exp(b1));
  }
}

/** The binary pair message m(1) − m(0) from the incoming n (two log entries, max 0). */
@inline
function pairDelta(c: f64, A: f64, B: f64, n: usize): f64 {
  return pairDelta1(c, A, B, ldF(n, 1) - ldF(n, 0));
}

/** Beliefs and var → factor messages from the current factor messages (after the weights change). */
export function bpRefresh(st: usize): void {
  const s = changetype<BPState>(st);
  s.vanished = 0;
  pairConstants(s);
  unaryMessages(s);
  refreshAll(s, false);
  if (s.heap != 0) residualInit(s);
}

// ---------------------------------------------------------------------------------------------
// Residual schedule (after Elidan, McGraw & Koller 2006): the factor whose inputs changed most since
// its last update goes next. A factor's priority is raised to the residual of every message that
// changes one of its variables' beliefs; updating it resets it to 0 (its own output does not change
// its inputs: n_vf = b_v − m_fv), or with damping α to α/(1 − α) of its step (what damping left
// undone). Every factor starts at +∞, so each is updated once first.

@inline function prioOf(s: BPState, f: i32): f64 { return ldF(s.prio, f); }
@inline function heapAt(s: BPState, i: i32): i32 { return ldI(s.heap, i); }

function heapPlace(s: BPState, i: i32, f: i32): void {
  store<i32>(s.heap + (<usize>i << 2), f);
  store<i32>(s.heapPos + (<usize>f << 2), i);
}

function siftUp(s: BPState, i: i32): void {
  const f = heapAt(s, i), pf = prioOf(s, f);
  while (i > 0) {
    const up = (i - 1) >> 1, g = heapAt(s, up);
    if (!(prioOf(s, g) < pf)) break;
    heapPlace(s, i, g);
    i = up;
  }
  heapPlace(s, i, f);
}

function siftDown(s: BPState, i: i32): void {
  const f = heapAt(s, i), pf = prioOf(s, f);
  for (;;) {
    let c = 2 * i + 1;
    if (c >= s.heapSize) break;
    if (c + 1 < s.heapSize && prioOf(s, heapAt(s, c + 1)) > prioOf(s, heapAt(s, c))) c++;
    const g = heapAt(s, c);
    if (!(prioOf(s, g) > pf)) break;
    heapPlace(s, i, g);
    i = c;
  }
  heapPlace(s, i, f);
}

function residualInit(s: BPState): void {
  const g = changetype<FactorGraph>(s.g);
  s.heapSize = 0;
  for (let f = 0; f < g.nFactors; f++) {
    store<i32>(s.heapPos + (<usize>f << 2), -1);
    if (ldI(g.scopeStart, f + 1) - ldI(g.scopeStart, f) < 2) continue;
    stF(s.prio, f, Infinity);
    heapPlace(s, s.heapSize++, f);
  }
}

/** Raises the priority of every factor of arity ≥ 2 on variable v except f to at least r. */
function raiseNeighbours(s: BPState, g: FactorGraph, v: i32, f: i32, r: f64): void {
  const end = ldI(g.incStart, v + 1);
  for (let q = ldI(g.incStart, v); q < end; q++) {
    const h = ldI(g.incFactor, q);
    const i = load<i32>(s.heapPos + (<usize>h << 2));
    if (h == f || i < 0 || !(r > prioOf(s, h))) continue;
    stF(s.prio, h, r);
    siftUp(s, i);
  }
}

/** One residual update: the top factor's (the heap is not empty). */
function residualStep(s: BPState, g: FactorGraph, damping: f64): void {
  const f = heapAt(s, 0);
  const p0 = ldI(g.scopeStart, f), p1 = ldI(g.scopeStart, f + 1);
  for (let p = p0; p < p1; p++) var2facOf(s, g, f, p);
  updateFactor(s, g, f);
  if (s.vanished) return;
  let rmax = 0.0;
  for (let p = p0; p < p1; p++) {
    const r = commit(s, g, p, damping);
    const v = ldI(g.scopeVars, p);
    beliefOf(s, g, v);
    if (r > 0.0) raiseNeighbours(s, g, v, f, r);
    rmax = max(rmax, r);
  }
  // Damped, a factor moves 1 − α of the way to its new messages: α/(1 − α) of the step is left.
  stF(s.prio, f, damping > 0.0 ? rmax * damping / (1.0 - damping) : 0.0);
  siftDown(s, ldI(s.heapPos, f));
}

/** A unary factor's message is its table over ρ whatever comes in (shifted to max 0): set once, never iterated. */
function unaryMessages(s: BPState): void {
  const g = changetype<FactorGraph>(s.g);
  for (let f = 0; f < g.nFactors; f++) {
    const p = ldI(g.scopeStart, f);
    if (ldI(g.scopeStart, f + 1) - p != 1) continue;
    const inv = 1.0 / ldF(s.weight, f);
    const theta = g.tables + (<usize>ldI(g.tableStart, f) << 3);
    const K = cardOf(g, ldI(g.scopeVars, p));
    const out = s.fac2var + (<usize>ldI(s.msgStart, p) << 3);
    for (let k = 0; k < K; k++) stF(out, k, ldF(theta, k) * inv);
    if (!shiftToMax(out, K)) s.vanished = 1;
  }
}

/** Every belief, then the var → factor messages out of it (skipUnary: not those into unary factors, which nothing reads while iterating). */
function refreshAll(s: BPState, skipUnary: bool): void {
  const g = changetype<FactorGraph>(s.g);
  for (let v = 0; v < g.n; v++) {
    beliefOf(s, g, v);
    const end = ldI(g.incStart, v + 1);
    for (let q = ldI(g.incStart, v); q < end; q++) {
      const f = ldI(g.incFactor, q);
      if (skipUnary && ldI(g.scopeStart, f + 1) - ldI(g.scopeStart, f) == 1) continue;
      var2facOf(s, g, f, ldI(s.incPos, q));
    }
  }
}

/** Shifts x[0..K) to max 0; returns false (leaving it) when every entry is −∞. */
function shiftToMax(x: usize, K: i32): bool {
  let mx = -Infinity;
  for (let k = 0; k < K; k++) mx = max(mx, ldF(x, k));
  if (mx == -Infinity) return false;
  for (let k = 0; k < K; k++) stF(x, k, ldF(x, k) - mx);
  return true;
}

/** b_v = Σ_{f ∋ v} ρ_f m_fv, shifted to max 0. */
function beliefOf(s: BPState, g: FactorGraph, v: i32): void {
  const K = cardOf(g, v);
  const b = s.belief + (<usize>ldI(s.belStart, v) << 3);
  for (let k = 0; k < K; k++) stF(b, k, 0.0);
  const end = ldI(g.incStart, v + 1);
  for (let q = ldI(g.incStart, v); q < end; q++) {
    const f = ldI(g.incFactor, q);
    const rho = ldF(s.weight, f);
    const m = s.fac2var + (<usize>ldI(s.msgStart, ldI(s.incPos, q)) << 3);
    for (let k = 0; k < K; k++) {
      const x = ldF(m, k);
      if (x != 0.0) stF(b, k, ldF(b, k) + rho * x); // skips 0 · … so ρ = 0 never meets −∞
    }
  }
  if (K > 0 && !shiftToMax(b, K)) s.vanished = 1;
}


/** n_vf for scope entry p of factor f (variable v): b_v − m_fv, or Σ_{g ≠ f} ρ_g m_gv where m_fv = −∞. */
function var2facOf(s: BPState, g: FactorGraph, f: i32, p: i32): void {
  const v = ldI(g.scopeVars, p);
  const K = cardOf(g, v);
  const off = ldI(s.msgStart, p);
  const m = s.fac2var + (<usize>off << 3);
  const n = s.var2fac + (<usize>off << 3);
  const b = s.belief + (<usize>ldI(s.belStart, v) << 3);
  for (let k = 0; k < K; k++) {
    const mk = ldF(m, k);
    if (mk != -Infinity) {
      stF(n, k, ldF(b, k) - mk);
      continue;
    }
    let sum = 0.0;
    const end = ldI(g.incStart, v + 1);
    for (let q = ldI(g.incStart, v); q < end; q++) {
      const h = ldI(g.incFactor, q);
      if (h == f) continue;
      const x = ldF(s.fac2var + (<usize>ldI(s.msgStart, ldI(s.incPos, q)) << 3), k);
      if (x != 0.0) sum += ldF(s.weight, h) * x;
    }
    stF(n, k, sum);
  }
  shiftToMax(n, K); // all −∞: the factor's update reports it
}

/** The next configuration of a scope's odometer in s.digits (the last position fastest). */
@inline
function advanceDigits(s: BPState, g: FactorGraph, p0: i32, a: i32): void {
  for (let j = a - 1; j >= 0; j--) {
    const dp = s.digits + (<usize>j << 2);
    const d = load<i32>(dp) + 1;
    if (d < cardOf(g, ldI(g.scopeVars, p0 + j))) {
      store<i32>(dp, d);
      return;
    }
    store<i32>(dp, 0);
  }
}

/**
 * B(x) = θ_f(x)/ρ_f + Σ_{positions j ≠ skip} n_jf(x_j) for every entry of f's table into E
 * (skip = −1: all positions); returns max B. digits: the odometer (last position fastest).
 */
function factorLogits(s: BPState, g: FactorGraph, f: i32, skip: i32): f64 {
  const p0 = ldI(g.scopeStart, f), a = ldI(g.scopeStart, f + 1) - p0;
  const theta = g.tables + (<usize>ldI(g.tableStart, f) << 3);
  const inv = 1.0 / ldF(s.weight, f);
  let T = 1;
  for (let j = 0; j < a; j++) {
    T *= cardOf(g, ldI(g.scopeVars, p0 + j));
    store<i32>(s.digits + (<usize>j << 2), 0);
  }
  let mx = -Infinity;
  for (let t = 0; t < T; t++) {
    let x = ldF(theta, t) * inv;
    for (let j = 0; j < a; j++) {
      if (j == skip) continue;
      x += ldF(s.var2fac + (<usize>ldI(s.msgStart, p0 + j) << 3), load<i32>(s.digits + (<usize>j << 2)));
    }
    stF(s.scratchE, t, x);
    mx = max(mx, x);
    advanceDigits(s, g, p0, a);
  }
  return mx;
}

/**
 * Entry k of the message from f through its position j (the slow path), from E as factorLogits(s,
 * g, f, j) left it (position j's n left out; the caller computes it once per position): a
 * log-sum-exp over the entries with x_j = k only — their max, then one exp each. It used to
 * recompute E and take a log-add-exp over the whole table per entry: TRW on a 5-variable model with
 * 1e±300 entries (weights ρ < 1 push most sums under 1e-280) took 10 ms an iteration.
 */
function messageEntryExact(s: BPState, g: FactorGraph, f: i32, j: i32, k: i32): f64 {
  const p0 = ldI(g.scopeStart, f), a = ldI(g.scopeStart, f + 1) - p0;
  let stride = 1;
  for (let i = a - 1; i > j; i--) stride *= cardOf(g, ldI(g.scopeVars, p0 + i));
  const Kj = cardOf(g, ldI(g.scopeVars, p0 + j));
  let T = 1;
  for (let i = 0; i < a; i++) T *= cardOf(g, ldI(g.scopeVars, p0 + i));
  // Entries with x_j = k: blocks of `stride` consecutive entries, one every Kj · stride.
  const period = Kj * stride;
  let top = -Infinity;
  for (let b = k * stride; b < T; b += period) for (let t = b; t < b + stride; t++) top = max(top, ldF(s.scratchE, t));
  if (top == -Infinity) return top;
  let sum = 0.0;
  for (let b = k * stride; b < T; b += period) for (let t = b; t < b + stride; t++) sum += Math.exp(ldF(s.scratchE, t) - top);
  return top + Math.log(sum);
}

/** New messages from factor f (arity ≥ 2) to every variable of its scope, into newMsg (shifted to max 0). */
function updateFactor(s: BPState, g: FactorGraph, f: i32): void {
  const p0 = ldI(g.scopeStart, f), a = ldI(g.scopeStart, f + 1) - p0;
  const inv = 1.0 / ldF(s.weight, f);
  const theta = g.tables + (<usize>ldI(g.tableStart, f) << 3);
  const pair = ldI(s.pairIndex, f);
  if (pair >= 0) {
    const pc = s.pairConst + (<usize>(6 * pair) << 3);
    if (!isNaN(ldF(pc, 0))) {
      const o0 = <usize>ldI(s.msgStart, p0) << 3, o1 = <usize>ldI(s.msgStart, p0 + 1) << 3;
      storeDelta(s.newMsg + o0, pairDelta(ldF(pc, 0), ldF(pc, 1), ldF(pc, 2), s.var2fac + o1));
      storeDelta(s.newMsg + o1, pairDelta(ldF(pc, 3), ldF(pc, 4), ldF(pc, 5), s.var2fac + o0));
      return;
    }
  }
  // Sums S_j(k) for each position j, laid out one after another in scratchS.
  let sOff = 0;
  for (let j = 0; j < a; j++) {
    const K = cardOf(g, ldI(g.scopeVars, p0 + j));
    for (let k = 0; k < K; k++) stF(s.scratchS, sOff + k, 0.0);
    sOff += K;
  }
  let mx: f64;
  if (a == 2) {
    const K0 = cardOf(g, ldI(g.scopeVars, p0)), K1 = cardOf(g, ldI(g.scopeVars, p0 + 1));
    const n0 = s.var2fac + (<usize>ldI(s.msgStart, p0) << 3), n1 = s.var2fac + (<usize>ldI(s.msgStart, p0 + 1) << 3);
    mx = -Infinity;
    for (let i = 0; i < K0; i++) {
      const ni = ldF(n0, i);
      for (let l = 0; l < K1; l++) {
        const x = ldF(theta, i * K1 + l) * inv + ni + ldF(n1, l);
        stF(s.scratchE, i * K1 + l, x);
        mx = max(mx, x);
      }
    }
    if (mx == -Infinity) {
      s.vanished = 1;
      return;
    }
    const S1 = s.scratchS + (<usize>K0 << 3);
    for (let i = 0; i < K0; i++) {
      let row = 0.0;
      for (let l = 0; l < K1; l++) {
        const e = Math.exp(ldF(s.scratchE, i * K1 + l) - mx);
        row += e;
        stF(S1, l, ldF(S1, l) + e);
      }
      stF(s.scratchS, i, row);
    }
  } else {
    mx = factorLogits(s, g, f, -1);
    if (mx == -Infinity) {
      s.vanished = 1;
      return;
    }
    let T = 1;
    for (let j = 0; j < a; j++) {
      T *= cardOf(g, ldI(g.scopeVars, p0 + j));
      store<i32>(s.digits + (<usize>j << 2), 0);
    }
    for (let t = 0; t < T; t++) {
      const e = Math.exp(ldF(s.scratchE, t) - mx);
      let o = 0;
      for (let j = 0; j < a; j++) {
        const d = load<i32>(s.digits + (<usize>j << 2));
        stF(s.scratchS, o + d, ldF(s.scratchS, o + d) + e);
        o += cardOf(g, ldI(g.scopeVars, p0 + j));
      }
      advanceDigits(s, g, p0, a);
    }
  }
  // Messages from the sums; entries that need it by the exact slow path (after the fast ones, as it reuses E).
  sOff = 0;
  let slow = false;
  for (let j = 0; j < a; j++) {
    const p = p0 + j;
    const K = cardOf(g, ldI(g.scopeVars, p));
    const off = ldI(s.msgStart, p);
    const n = s.var2fac + (<usize>off << 3), out = s.newMsg + (<usize>off << 3);
    for (let k = 0; k < K; k++) {
      const nk = ldF(n, k), sk = ldF(s.scratchS, sOff + k);
      if (nk == -Infinity || sk < 1e-280) {
        stF(out, k, NaN); // marks the entry for the slow path
        slow = true;
      } else stF(out, k, Math.log(sk) + mx - nk);
    }
    sOff += K;
  }
  for (let j = 0; j < a; j++) {
    const p = p0 + j;
    const K = cardOf(g, ldI(g.scopeVars, p));
    const out = s.newMsg + (<usize>ldI(s.msgStart, p) << 3);
    if (slow) {
      let logits = false;
      for (let k = 0; k < K; k++) {
        if (!isNaN(ldF(out, k))) continue;
        if (!logits) factorLogits(s, g, f, j), (logits = true);
        stF(out, k, messageEntryExact(s, g, f, j, k));
      }
    }
    if (!shiftToMax(out, K)) s.vanished = 1;
  }
}

/** Damps newMsg into fac2var for scope entry p; returns the residual. */
function commit(s: BPState, g: FactorGraph, p: i32, damping: f64): f64 {
  const K = cardOf(g, ldI(g.scopeVars, p));
  const off = ldI(s.msgStart, p);
  const m = s.fac2var + (<usize>off << 3), nw = s.newMsg + (<usize>off << 3);
  if (damping > 0.0) {
    for (let k = 0; k < K; k++) {
      const o = ldF(m, k), x = ldF(nw, k);
      stF(nw, k, o == -Infinity || x == -Infinity ? -Infinity : (1.0 - damping) * x + damping * o);
    }
    shiftToMax(nw, K);
  }
  let hi = 0.0, lo = 0.0, support = false;
  for (let k = 0; k < K; k++) {
    const o = ldF(m, k), x = ldF(nw, k);
    if (o != x) {
      if (o == -Infinity || x == -Infinity) support = true;
      else {
        hi = max(hi, x - o);
        lo = min(lo, x - o);
      }
    }
    stF(m, k, x);
  }
  // Both shifted to max 0: some Δ ≥ 0 and some ≤ 0 (at the old and the new maximum), so 0 ∈ [lo, hi].
  return support ? Infinity : hi - lo;
}

/**
 * Runs at most maxIter iterations (sweeps over all factors) until the largest residual of an
 * iteration is ≤ tol. out f64[2] = (converged, last iteration's largest residual). Returns the
 * iterations run; −1 when messages vanished (no configuration of positive weight left); −2, having
 * done nothing, when newMsg (or for the residual schedule its heap) is not allocated yet.
 */
export function bpRun(st: usize, maxIter: i32, tol: f64, schedule: i32, damping: f64, out: usize): i32 {
  const s = changetype<BPState>(st);
  const g = changetype<FactorGraph>(s.g);
  let it = 0;
  let res = Infinity;
  let converged = false;
  // The parallel schedule on binary pairs runs on log-odds (bp_odds.ts); the messages return to fac2var after.
  // Undamped, on ratios (no exp or log per message) while the beliefs stay in the double range.
  const odds = schedule == 0 && maxIter > 0 && s.odds != 0 && oddsSetup(s);
  // Nothing changed yet (oddsSetup only fills its work memory): the bindings allocate and call again.
  if (!odds && maxIter > 0 && (s.newMsg == 0 || (schedule == 2 && s.heap == 0))) return -2;
  let linear = odds && damping == 0.0 && linearSetup(s);
  while (it < maxIter) {
    res = 0.0;
    if (odds) {
      if (linear) res = linearSweep(s);
      if (linear && isNaN(res)) {
        linearToOdds(s); // a belief ratio left the double range: this sweep and the rest on log-odds
        linear = false;
      }
      if (!linear) res = oddsSweep(s, damping);
    } else if (schedule == 0) {
      for (let f = 0; f < g.nFactors; f++) if (ldI(g.scopeStart, f + 1) - ldI(g.scopeStart, f) > 1) updateFactor(s, g, f);
      if (s.vanished) return -1;
      for (let f = 0; f < g.nFactors; f++) {
        const p0 = ldI(g.scopeStart, f), p1 = ldI(g.scopeStart, f + 1);
        if (p1 - p0 > 1) for (let p = p0; p < p1; p++) res = max(res, commit(s, g, p, damping));
      }
      refreshAll(s, true);
    } else if (schedule == 2) {
      // As many updates as there are factors of arity ≥ 2; converged when the top priority is ≤ tol.
      for (let u = 0; u < s.heapSize && prioOf(s, heapAt(s, 0)) > tol; u++) {
        residualStep(s, g, damping);
        if (s.vanished) return -1;
      }
      res = s.heapSize == 0 ? 0.0 : prioOf(s, heapAt(s, 0));
    } else {
      for (let f = 0; f < g.nFactors; f++) {
        const p0 = ldI(g.scopeStart, f), p1 = ldI(g.scopeStart, f + 1);
        if (p1 - p0 < 2) continue;
        for (let p = p0; p < p1; p++) var2facOf(s, g, f, p);
        updateFactor(s, g, f);
        if (s.vanished) return -1;
        for (let p = p0; p < p1; p++) {
          res = max(res, commit(s, g, p, damping));
          beliefOf(s, g, ldI(g.scopeVars, p));
        }
      }
    }
    if (s.vanished) return -1;
    it++;
    if (res <= tol) {
      converged = true;
      break;
    }
  }
  if (linear) linearToOdds(s);
  if (odds) oddsStore(s);
  refreshAll(s, false);
  stF(out, 0, converged ? 1.0 : 0.0);
  stF(out, 1, res);
  return it;
}

/** Node marginals p_v(k) (normalised beliefs) into out, laid out by belStart. */
export function bpMarginals(st: usize, out: usize): void {
  const s = changetype<BPState>(st);
  const g = changetype<FactorGraph>(s.g);
  for (let v = 0; v < g.n; v++) {
    const K = cardOf(g, v), o = ldI(s.belStart, v);
    let z = 0.0;
    for (let k = 0; k < K; k++) z += Math.exp(ldF(s.belief, o + k));
    for (let k = 0; k < K; k++) stF(out, o + k, Math.exp(ldF(s.belief, o + k)) / z);
  }
}

/** Factor f's belief b_f(x) ∝ exp(θ_f(x)/ρ_f + Σ_u n_uf(x_u)) into out (its table's layout); returns its size. */
function factorBelief(s: BPState, g: FactorGraph, f: i32, out: usize): i32 {
  const mx = factorLogits(s, g, f, -1);
  const p0 = ldI(g.scopeStart, f), a = ldI(g.scopeStart, f + 1) - p0;
  let T = 1;
  for (let j = 0; j < a; j++) T *= cardOf(g, ldI(g.scopeVars, p0 + j));
  let z = 0.0;
  for (let t = 0; t < T; t++) z += Math.exp(ldF(s.scratchE, t) - mx);
  for (let t = 0; t < T; t++) stF(out, t, Math.exp(ldF(s.scratchE, t) - mx) / z);
  return T;
}

/** Every factor's belief, factor f's at out + 8·offsets[f] (offsets laid out by the bindings). */
export function bpFactorBeliefs(st: usize, offsets: usize, out: usize): void {
  const s = changetype<BPState>(st);
  const g = changetype<FactorGraph>(s.g);
  for (let f = 0; f < g.nFactors; f++) factorBelief(s, g, f, out + (<usize>ldI(offsets, f) << 3));
}

/**
 * Entropies: outF[f] = H(b_f), outV[v] = H(b_v); returns Σ_f E_{b_f}[θ_f] (0 · (−∞) = 0).
 * The weighted free energy is then Σ_f (E[θ_f] + ρ_f H_f) + Σ_v (1 − Σ_{f ∋ v} ρ_f) H_v (+ logConst).
 */
export function bpEntropies(st: usize, outF: usize, outV: usize): f64 {
  const s = changetype<BPState>(st);
  const g = changetype<FactorGraph>(s.g);
  let energy = 0.0;
  for (let f = 0; f < g.nFactors; f++) {
    const mx = factorLogits(s, g, f, -1);
    const p0 = ldI(g.scopeStart, f), a = ldI(g.scopeStart, f + 1) - p0;
    const theta = g.tables + (<usize>ldI(g.tableStart, f) << 3);
    let T = 1;
    for (let j = 0; j < a; j++) T *= cardOf(g, ldI(g.scopeVars, p0 + j));
    let z = 0.0;
    for (let t = 0; t < T; t++) z += Math.exp(ldF(s.scratchE, t) - mx);
    const logz = Math.log(z) + mx;
    let h = 0.0, e = 0.0;
    for (let t = 0; t < T; t++) {
      const lb = ldF(s.scratchE, t) - logz;
      if (lb == -Infinity) continue;
      const b = Math.exp(lb);
      h -= b * lb;
      e += b * ldF(theta, t);
    }
    stF(outF, f, h);
    energy += e;
  }
  for (let v = 0; v < g.n; v++) {
    const K = cardOf(g, v), o = ldI(s.belStart, v);
    let z = 0.0;
    for (let k = 0; k < K; k++) z += Math.exp(ldF(s.belief, o + k));
    const lz = Math.log(z);
    let h = 0.0;
    for (let k = 0; k < K; k++) {
      const lb = ldF(s.belief, o + k) - lz;
      if (lb != -Infinity) h -= Math.exp(lb) * lb;
    }
    stF(outV, v, h);
  }
  return energy;
}
