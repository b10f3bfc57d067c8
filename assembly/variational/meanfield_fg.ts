// Naive mean field on a factor graph of any arity (assembly/core/factorgraph.ts): q(x) = Π_v q_v(x_v),
// a categorical q_v per variable (stored at q[off[v] … off[v] + K_v − 1]). The bound
//
//   F(q) = logConst + Σ_f E_q[θ_f(x_{scope f})] + Σ_v H(q_v)  ≤  log Z
//
// is maximised by coordinate ascent, one variable at a time, each update the exact maximiser given
// the others: q_v(k) ∝ exp(u_k), u_k = Σ_{f ∋ v} E_{q_{scope f \ v}}[θ_f(x_v = k, ·)], the
// expectation summed over every state of the other scope variables (an odometer over the table with
// running products of their q). A run stops when a sweep raises F by at most tol · max(n, |F|) or
// after maxSweeps sweeps — the rule of the pairwise kernel (meanfield.ts).
//
// Zero potentials as in the pairwise kernel, 0 · (−∞) = 0: a −∞ entry counts only where the other
// scope variables' states have positive probability. The update first minimises the expected mass on
// zero potentials, c_k = Σ_{f ∋ v} Σ_{y: θ_f(k, y) = −∞} Π q(y), and among the states of least c_k
// maximises as usual (softmax of u over them, u summed over the finite entries): coordinate ascent on
// (−violations, F) in lexicographic order. A run that cannot reach zero violations reports F = −∞ (a
// valid, useless bound).
//
// Layout (arena memory): off i32[n]; q f64[Σ K]; ent f64[n] (each q_v's entropy); scratch
// f64[2 · maxCard + maxArity + 1] and digits i32[maxArity]; out f64[4] = (F, converged, last ΔF,
// max |Δq| of the last sweep).

import { FactorGraph, cardOf } from '../core/factorgraph';
import { Philox, uniform } from '../core/rng';
import { ldi, sti, ldf, stf } from '../core/access';
import { ascentVerdict } from './ascent';

/** Entropy of q_v (0 log 0 = 0). */
function entropy(q: usize, K: i32): f64 {
  let h = 0.0;
  for (let k = 0; k < K; k++) {
    const p = ldf(q, k);
    if (p > 0.0) h -= p * Math.log(p);
  }
  return h;
}

// ---------------------------------------------------------------------------------------------
// Initialisation

/** Random start from stream r: each q_v a uniform point of the simplex (Dirichlet(1)). */
export function mfgRandomInit(hdr: usize, off: usize, q: usize, ent: usize, rng: usize): void {
  const g = changetype<FactorGraph>(hdr);
  const r = changetype<Philox>(rng);
  for (let v = 0; v < g.n; v++) {
    const K = cardOf(g, v);
    const qv = q + (<usize>ldi(off, v) << 3);
    let total = 0.0;
    for (let k = 0; k < K; k++) {
      const e = K == 1 ? 1.0 : -Math.log(uniform(r));
      stf(qv, k, e);
      total += e;
    }
    for (let k = 0; k < K; k++) stf(qv, k, ldf(qv, k) / total);
    stf(ent, v, entropy(qv, K));
  }
}

/** Ordered start: every variable in its first state (which = 0) or its last (which = 1). */
export function mfgOrderedInit(hdr: usize, off: usize, q: usize, ent: usize, which: i32): void {
  const g = changetype<FactorGraph>(hdr);
  for (let v = 0; v < g.n; v++) {
    const K = cardOf(g, v);
    const qv = q + (<usize>ldi(off, v) << 3);
    const hot = which ? K - 1 : 0;
    for (let k = 0; k < K; k++) stf(qv, k, k == hot ? 1.0 : 0.0);
    stf(ent, v, 0.0);
  }
}

/** Recomputes ent from q (after the caller wrote marginals itself). */
export function mfgEntropies(hdr: usize, off: usize, q: usize, ent: usize): void {
  const g = changetype<FactorGraph>(hdr);
  for (let v = 0; v < g.n; v++) stf(ent, v, entropy(q + (<usize>ldi(off, v) << 3), cardOf(g, v)));
}

// ---------------------------------------------------------------------------------------------
// Expectations over a factor's table

/**
 * Walks factor f's table (last scope variable fastest) with the running product of q over the scope
 * positions other than `skip` (−1: none). Entry e with weight w > 0 and state k at position `skip`
 * (0 when skip < 0) adds w · θ_e to u[k] when θ_e is finite, and w to c[k] when it is −∞.
 * prefix: f64[arity + 1], digit: i32[arity].
 */
function expectFactor(g: FactorGraph, f: i32, skip: i32, off: usize, q: usize, u: usize, c: usize, prefix: usize, digit: usize): void {
  const s0 = ldi(g.scopeStart, f);
  const a = ldi(g.scopeStart, f + 1) - s0;
  let at = g.tables + (<usize>ldi(g.tableStart, f) << 3);
  stf(prefix, 0, 1.0);
  for (let i = 0; i < a; i++) {
    sti(digit, i, 0);
    const v = ldi(g.scopeVars, s0 + i);
    stf(prefix, i + 1, i == skip ? ldf(prefix, i) : ldf(prefix, i) * ldf(q, ldi(off, v)));
  }
  while (true) {
    const w = ldf(prefix, a);
    if (w > 0.0) {
      const k = skip < 0 ? 0 : ldi(digit, skip);
      const t = load<f64>(at);
      if (t == -Infinity) stf(c, k, ldf(c, k) + w);
      else stf(u, k, ldf(u, k) + w * t);
    }
    at += 8;
    // Odometer step: the last position that does not wrap moves; those after it restart at 0.
    let i = a - 1;
    while (i >= 0) {
      const v = ldi(g.scopeVars, s0 + i);
      const d = ldi(digit, i) + 1;
      if (d < cardOf(g, v)) {
        sti(digit, i, d);
        break;
      }
      sti(digit, i, 0);
      i--;
    }
    if (i < 0) break;
    for (let j = i; j < a; j++) {
      const v = ldi(g.scopeVars, s0 + j);
      stf(prefix, j + 1, j == skip ? ldf(prefix, j) : ldf(prefix, j) * ldf(q, ldi(off, v) + ldi(digit, j)));
    }
  }
}

/**
 * F(q): logConst + Σ_f E_q[θ_f] + Σ_v ent[v], with 0 · (−∞) = 0; −∞ when some zero potential
 * carries mass. scratch: f64[2 + maxArity + 1], digit: i32[maxArity].
 */
function objective(g: FactorGraph, off: usize, q: usize, ent: usize, scratch: usize, digit: usize): f64 {
  const u = scratch, c = scratch + 8, prefix = scratch + 16;
  stf(u, 0, 0.0);
  stf(c, 0, 0.0);
  for (let f = 0; f < g.nFactors; f++) expectFactor(g, f, -1, off, q, u, c, prefix, digit);
  if (ldf(c, 0) > 0.0) return -Infinity;
  let h = 0.0;
  for (let v = 0; v < g.n; v++) h += ldf(ent, v);
  return g.logConst + ldf(u, 0) + h;
}

export function mfgObjective(hdr: usize, off: usize, q: usize, ent: usize, scratch: usize, digit: usize): f64 {
  return objective(changetype<FactorGraph>(hdr), off, q, ent, scratch, digit);
}

// ---------------------------------------------------------------------------------------------
// Sweeps

/** One sweep in variable order; returns max |Δq|. scratch: f64[2 · maxCard + maxArity + 1]. */
function sweep(g: FactorGraph, off: usize, q: usize, ent: usize, scratch: usize, digit: usize): f64 {
  let maxStep = 0.0;
  const u = scratch, c = scratch + (<usize>g.maxCard << 3), prefix = scratch + (<usize>(2 * g.maxCard) << 3);
  for (let v = 0; v < g.n; v++) {
    const K = cardOf(g, v);
    if (K == 1) continue;
    for (let k = 0; k < K; k++) {
      stf(u, k, 0.0);
      stf(c, k, 0.0);
    }
    const end = ldi(g.incStart, v + 1);
    for (let t = ldi(g.incStart, v); t < end; t++) {
      const f = ldi(g.incFactor, t);
      const s0 = ldi(g.scopeStart, f);
      let pos = 0;
      while (ldi(g.scopeVars, s0 + pos) != v) pos++;
      expectFactor(g, f, pos, off, q, u, c, prefix, digit);
    }
    let cmin = Infinity;
    for (let k = 0; k < K; k++) cmin = min(cmin, ldf(c, k));
    let top = -Infinity;
    for (let k = 0; k < K; k++) if (ldf(c, k) == cmin) top = max(top, ldf(u, k));
    let total = 0.0;
    for (let k = 0; k < K; k++) {
      const w = ldf(c, k) == cmin ? Math.exp(ldf(u, k) - top) : 0.0;
      stf(c, k, w);
      total += w;
    }
    const qv = q + (<usize>ldi(off, v) << 3);
    const inv = 1.0 / total;
    let h = 0.0;
    for (let k = 0; k < K; k++) {
      const p = ldf(c, k) * inv;
      maxStep = max(maxStep, Math.abs(p - ldf(qv, k)));
      stf(qv, k, p);
      if (p > 0.0) h -= p * Math.log(p);
    }
    stf(ent, v, h);
  }
  return maxStep;
}

/**
 * Coordinate ascent from the current q until converged or maxSweeps. Returns the number of sweeps;
 * out = (F, converged 0/1, last sweep's ΔF, last sweep's max |Δq|). Converged: ΔF ≤ tol · max(n, |F|).
 * tol < 0 never converges (timing).
 */
export function mfgAscend(hdr: usize, off: usize, q: usize, ent: usize, maxSweeps: i32, tol: f64, scratch: usize, digit: usize, out: usize): i32 {
  const g = changetype<FactorGraph>(hdr);
  let F = objective(g, off, q, ent, scratch, digit);
  let sweeps = 0;
  let converged = false;
  let dF = 0.0;
  let step = 0.0;
  let stuck = 0;
  while (sweeps < maxSweeps) {
    step = sweep(g, off, q, ent, scratch, digit);
    const G = objective(g, off, q, ent, scratch, digit);
    dF = G == F ? 0.0 : G - F; // −∞ − (−∞) would be NaN
    F = G;
    sweeps++;
    if (F == -Infinity) stuck++;
    const verdict = ascentVerdict(F, dF, step, tol, g.n, stuck);
    if (verdict != 0) {
      converged = verdict > 0;
      break;
    }
  }
  stf(out, 0, F);
  stf(out, 1, converged ? 1.0 : 0.0);
  stf(out, 2, dF);
  stf(out, 3, step);
  return sweeps;
}
