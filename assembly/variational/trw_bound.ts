// The certified TRW bound's per-entry work (bindings/variational/trw.ts, treeDecompositionBound): at the
// current messages m of a BP state with weights ρ (bp.ts), the forest parameters
//
//   θ^T_v(k)    = Σ_{unary f on v} θ_f(k) + Σ_{pair f ∋ v} ρ_f m_fv(k)
//   θ^T_f(a, b) = θ_f(a, b)/ρ_f − m'_fi(a) − m'_fj(b)        (m' = m with −∞ read as 0)
//
// and log Z of one spanning forest under them, by sum-product from the leaves (the bindings give the
// elimination order). The pair tables are never stored: each entry is formed where it is summed.
// Every factor of the state's model has arity 1 or 2 (the bindings expand higher-order ones first).

import { FactorGraph, cardOf } from '../core/factorgraph';
import { BPState } from './bp_state';

@inline function ldI(p: usize, i: i32): i32 { return load<i32>(p + (<usize>i << 2)); }
@inline function ldF(p: usize, i: i32): f64 { return load<f64>(p + (<usize>i << 3)); }
@inline function stF(p: usize, i: i32, x: f64): void { store<f64>(p + (<usize>i << 3), x); }
@inline function finite(x: f64): f64 { return x == -Infinity ? 0.0 : x; }

/** θ^T_v for every variable into unary (f64[Σ card], laid out by the state's belStart). */
export function trwUnary(st: usize, unary: usize): void {
  const s = changetype<BPState>(st);
  const g = changetype<FactorGraph>(s.g);
  memory.fill(unary, 0, <usize>ldI(s.belStart, g.n) << 3);
  for (let f = 0; f < g.nFactors; f++) {
    const p0 = ldI(g.scopeStart, f), p1 = ldI(g.scopeStart, f + 1);
    const th = g.tables + (<usize>ldI(g.tableStart, f) << 3);
    if (p1 - p0 == 1) {
      const v = ldI(g.scopeVars, p0), K = cardOf(g, v);
      const u = unary + (<usize>ldI(s.belStart, v) << 3);
      const stride = ldI(g.scopeStride, p0);
      for (let k = 0; k < K; k++) stF(u, k, ldF(u, k) + ldF(th, k * stride));
      continue;
    }
    const rho = ldF(s.weight, f);
    for (let p = p0; p < p1; p++) {
      const v = ldI(g.scopeVars, p), K = cardOf(g, v);
      const u = unary + (<usize>ldI(s.belStart, v) << 3);
      const m = s.fac2var + (<usize>ldI(s.msgStart, p) << 3);
      for (let k = 0; k < K; k++) stF(u, k, ldF(u, k) + rho * ldF(m, k));
    }
  }
}

/**
 * log Z of one forest: work (f64[Σ card]) starts as a copy of unary; order holds (pair factor, position
 * of the child in its scope) leaf to root, each child's subtree already summed into it when its edge
 * comes; roots lists the variables that are no edge's child. −∞ where the forest's Z is 0.
 */
export function trwForestLogZ(st: usize, unary: usize, work: usize, order: usize, nOrder: i32, roots: usize, nRoots: i32): f64 {
  const s = changetype<BPState>(st);
  const g = changetype<FactorGraph>(s.g);
  memory.copy(work, unary, <usize>ldI(s.belStart, g.n) << 3);
  for (let e = 0; e < nOrder; e++) {
    const f = ldI(order, 2 * e), pos = ldI(order, 2 * e + 1);
    const pc = ldI(g.scopeStart, f) + pos, pp = ldI(g.scopeStart, f) + 1 - pos;
    const c = ldI(g.scopeVars, pc), p = ldI(g.scopeVars, pp);
    const Kc = cardOf(g, c), Kp = cardOf(g, p);
    const sc = ldI(g.scopeStride, pc), sp = ldI(g.scopeStride, pp);
    const th = g.tables + (<usize>ldI(g.tableStart, f) << 3);
    const rho = ldF(s.weight, f);
    const mc = s.fac2var + (<usize>ldI(s.msgStart, pc) << 3), mp = s.fac2var + (<usize>ldI(s.msgStart, pp) << 3);
    const wc = work + (<usize>ldI(s.belStart, c) << 3), wp = work + (<usize>ldI(s.belStart, p) << 3);
    for (let b = 0; b < Kp; b++) {
      let mx = -Infinity;
      for (let a = 0; a < Kc; a++) {
        const x = ldF(wc, a) + ldF(th, a * sc + b * sp) / rho - finite(ldF(mc, a));
        if (x > mx) mx = x;
      }
      let sum = 0.0;
      if (mx != -Infinity) for (let a = 0; a < Kc; a++) sum += Math.exp(ldF(wc, a) + ldF(th, a * sc + b * sp) / rho - finite(ldF(mc, a)) - mx);
      const msg = mx == -Infinity ? -Infinity : mx + Math.log(sum) - finite(ldF(mp, b));
      stF(wp, b, ldF(wp, b) + msg);
    }
  }
  let logZ = 0.0;
  for (let r = 0; r < nRoots; r++) {
    const v = ldI(roots, r), K = cardOf(g, v);
    const w = work + (<usize>ldI(s.belStart, v) << 3);
    let mx = -Infinity;
    for (let k = 0; k < K; k++) if (ldF(w, k) > mx) mx = ldF(w, k);
    if (mx == -Infinity) return -Infinity;
    let sum = 0.0;
    for (let k = 0; k < K; k++) sum += Math.exp(ldF(w, k) - mx);
    logZ += mx + Math.log(sum);
  }
  return logZ;
}
