// Sequential single-site Gibbs directly on the factor graph (assembly/core/factorgraph.ts), factors
// of any arity, any cardinality: a systematic scan over the variables in index order, each redrawn
// from the softmax of its conditional log-potentials β·Σ_{f∋v} θ_f(x with x_v = k).
//
// Chain state layout (one chain, arena memory): [Philox stream, 64 B][x: i32 per variable].
// While accumulating, the conditional probabilities p(x_v = k | x_−v) are summed into acc, f64 per
// (variable, state) in variable order (Rao–Blackwellised marginals).
//
// Hard zeros (−∞): β·(−∞) = −∞ for β > 0, and exp(−∞) = 0, so a forbidden state is never drawn. A
// chain starts uniformly at random (as the canonical Gibbs sampler does), possibly outside the
// support; a variable all of whose states some factor forbids given the rest is then redrawn
// uniformly over its states (its accumulator gets 1/K each), so the chain keeps moving until it
// enters the support — after which every conditional has a finite state (the current one) and
// this cannot happen again.

import { Philox, PHILOX_BYTES, uniform32 } from '../core/rng';
import { FactorGraph, cardOf, conditionalLogits, unaryAllows } from '../core/factorgraph';

export function fgChainBytes(g: FactorGraph): usize {
  return PHILOX_BYTES + (<usize>g.n << 2);
}

/** Every variable uniformly over all its states, from the chain's own stream. */
export function fgChainInit(g: FactorGraph, chain: usize): void {
  const r = changetype<Philox>(chain);
  const x = chain + PHILOX_BYTES;
  for (let v = 0; v < g.n; v++) {
    const K = cardOf(g, v);
    store<i32>(x + (<usize>v << 2), K == 1 ? 0 : min<i32>(<i32>(uniform32(r) * <f64>K), K - 1));
  }
}

/**
 * Redraws variable v of x from p_β(x_v | x_−v); adds the conditional probabilities into row (f64
 * per state) when row ≠ 0. scratch: f64 per state of the largest variable. Returns 1 when x_v changed.
 * A variable with one state draws nothing.
 */
export function fgSiteUpdate(g: FactorGraph, x: usize, v: i32, r: Philox, beta: f64, row: usize, scratch: usize): i32 {
  const K = cardOf(g, v);
  const at = x + (<usize>v << 2);
  if (K == 1) {
    if (row) store<f64>(row, load<f64>(row) + 1.0);
    return 0;
  }
  conditionalLogits(g, x, v, scratch);
  let top = -Infinity;
  for (let k = 0; k < K; k++) {
    const q = scratch + (<usize>k << 3);
    const u = beta == 1.0 ? load<f64>(q) : load<f64>(q) * beta; // β > 0: −∞ stays −∞
    store<f64>(q, u);
    top = max(top, u);
  }
  // Every state forbidden given the rest: outside the support; move uniformly (see the header) over
  // the states v's own unary factors and evidence allow, so an observed variable never leaves its value.
  const lost = top == -Infinity;
  let total = 0.0;
  for (let k = 0; k < K; k++) {
    const q = scratch + (<usize>k << 3);
    const w = lost ? (unaryAllows(g, v, k) ? 1.0 : 0.0) : Math.exp(load<f64>(q) - top);
    store<f64>(q, w);
    total += w;
  }
  const target = uniform32(r) * total;
  let cum = 0.0;
  let below = 0;
  for (let k = 0; k < K; k++) {
    cum += load<f64>(scratch + (<usize>k << 3));
    below += <i32>!(target < cum);
  }
  let pick = min(below, K - 1);
  // Never a zero-weight state (reachable only through rounding at the end of the sum).
  while (load<f64>(scratch + (<usize>pick << 3)) == 0.0) pick--;
  const old = load<i32>(at);
  store<i32>(at, pick);
  if (row) {
    const inv = 1.0 / total;
    for (let k = 0; k < K; k++) {
      const q = row + (<usize>k << 3);
      store<f64>(q, load<f64>(q) + load<f64>(scratch + (<usize>k << 3)) * inv);
    }
  }
  return <i32>(pick != old);
}

/**
 * `sweeps` systematic scans at inverse temperature beta (> 0; 1 for the model itself). acc: f64 per
 * (variable, state), or 0. scratch: f64 × maxCard. Returns the number of variable updates that
 * changed the variable's state.
 */
export function fgSweeps(g: FactorGraph, chain: usize, sweeps: i32, acc: usize, scratch: usize, beta: f64): f64 {
  const r = changetype<Philox>(chain);
  const x = chain + PHILOX_BYTES;
  let changed: f64 = 0;
  for (let t = 0; t < sweeps; t++) {
    let row = acc;
    for (let v = 0; v < g.n; v++) {
      changed += <f64>fgSiteUpdate(g, x, v, r, beta, row, scratch);
      if (acc) row += <usize>cardOf(g, v) << 3;
    }
  }
  return changed;
}

// Pointer-level entry points (the bindings pass arena addresses).

export function factorGibbsStateBytes(hdr: usize): usize {
  return fgChainBytes(changetype<FactorGraph>(hdr));
}

export function factorGibbsInit(hdr: usize, chain: usize): void {
  fgChainInit(changetype<FactorGraph>(hdr), chain);
}

export function factorGibbsStep(hdr: usize, chain: usize, sweeps: i32, acc: usize, scratch: usize, beta: f64): f64 {
  return fgSweeps(changetype<FactorGraph>(hdr), chain, sweeps, acc, scratch, beta);
}
