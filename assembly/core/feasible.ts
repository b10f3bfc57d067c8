// A configuration of positive probability on a factor graph (assembly/core/factorgraph.ts), by
// depth-first search with backtracking: variables are assigned in the caller's order (observed and
// most-constrained first works well), each state checked against every factor whose scope it
// completes (the caller lists them per variable in `checkStart`/`checkFactor`, in CSR form). The
// search gives up after `budget` assignments tried; then a min-conflicts local search (below) takes
// over, which finds solutions of SAT-like models that depth-first search without propagation does
// not. Mean field starts from the result when no other start avoids the zero potentials.

import { FactorGraph, cardOf, factorEntry } from './factorgraph';
import { Philox, uniform } from './rng';

/**
 * Writes into x (i32[n]) a configuration with every factor > −∞ and returns 1; returns 0 when the
 * search space is exhausted (Z = 0) and −1 when the budget ran out first.
 */
export function fgFeasible(hdr: usize, x: usize, order: usize, checkStart: usize, checkFactor: usize, budget: f64): i32 {
  const g = changetype<FactorGraph>(hdr);
  const n = g.n;
  if (n == 0) return 1;
  let tried: f64 = 0;
  let d = 0;
  store<i32>(x + (<usize>load<i32>(order) << 2), -1);
  while (d >= 0) {
    const v = load<i32>(order + (<usize>d << 2));
    const K = cardOf(g, v);
    const px = x + (<usize>v << 2);
    let s = load<i32>(px) + 1;
    const c0 = load<i32>(checkStart + (<usize>d << 2)), c1 = load<i32>(checkStart + (<usize>(d + 1) << 2));
    for (; s < K; s++) {
      if (++tried > budget) return -1;
      store<i32>(px, s);
      let ok = true;
      for (let c = c0; c < c1 && ok; c++) {
        const f = load<i32>(checkFactor + (<usize>c << 2));
        ok = load<f64>(g.tables + (<usize>factorEntry(g, f, x) << 3)) != -Infinity;
      }
      if (ok) break;
    }
    if (s < K) {
      d++;
      if (d == n) return 1;
      store<i32>(x + (<usize>load<i32>(order + (<usize>d << 2)) << 2), -1);
    } else {
      d--;
    }
  }
  return 0;
}

/**
 * Local search for the same (a WalkSAT-style min-conflicts walk) where depth-first search runs out
 * of budget, e.g. on SAT formulas: from x (i32[n]), repeatedly take a factor at a −∞ entry, chosen
 * uniformly, and move one of its variables to the state that leaves the fewest factors at −∞ (with
 * probability `noise` a random variable of it to a random state instead). Returns 1 with x feasible,
 * or 0 after `budget` moves. Work: bad i32[nFactors] (1 where the factor is at −∞), list and at
 * i32[nFactors] (the bad factors and each one's place in the list).
 */
export function fgLocalSearch(hdr: usize, x: usize, rng: usize, budget: f64, noise: f64, bad: usize, list: usize, at: usize): i32 {
  const g = changetype<FactorGraph>(hdr);
  const r = changetype<Philox>(rng);
  let count = 0;
  for (let f = 0; f < g.nFactors; f++) {
    const isBad = load<f64>(g.tables + (<usize>factorEntry(g, f, x) << 3)) == -Infinity;
    store<i32>(bad + (<usize>f << 2), isBad ? 1 : 0);
    if (isBad) {
      store<i32>(list + (<usize>count << 2), f);
      store<i32>(at + (<usize>f << 2), count++);
    }
  }
  for (let moves: f64 = 0; moves < budget; moves++) {
    if (count == 0) return 1;
    const f = load<i32>(list + (<usize>(<i32>(uniform(r) * <f64>count)) << 2));
    const s0 = load<i32>(g.scopeStart + (<usize>f << 2)), s1 = load<i32>(g.scopeStart + (<usize>(f + 1) << 2));
    let bestU = -1, bestS = -1, bestDelta = i32.MAX_VALUE, ties = 0;
    if (uniform(r) < noise) {
      bestU = load<i32>(g.scopeVars + (<usize>(s0 + <i32>(uniform(r) * <f64>(s1 - s0))) << 2));
      bestS = <i32>(uniform(r) * <f64>cardOf(g, bestU));
    } else {
      for (let p = s0; p < s1; p++) {
        const u = load<i32>(g.scopeVars + (<usize>p << 2));
        const xu = load<i32>(x + (<usize>u << 2));
        for (let s = 0; s < cardOf(g, u); s++) {
          if (s == xu) continue;
          const delta = moveDelta(g, x, u, s, bad);
          // Ties broken uniformly (reservoir sampling over the equal best moves).
          if (delta < bestDelta) {
            bestDelta = delta;
            bestU = u;
            bestS = s;
            ties = 1;
          } else if (delta == bestDelta && uniform(r) * <f64>(++ties) < 1.0) {
            bestU = u;
            bestS = s;
          }
        }
      }
    }
    if (bestU < 0) continue; // every variable of f has one state: f can never be satisfied
    store<i32>(x + (<usize>bestU << 2), bestS);
    const end = load<i32>(g.incStart + (<usize>(bestU + 1) << 2));
    for (let q = load<i32>(g.incStart + (<usize>bestU << 2)); q < end; q++) {
      const h = load<i32>(g.incFactor + (<usize>q << 2));
      const now = load<f64>(g.tables + (<usize>factorEntry(g, h, x) << 3)) == -Infinity ? 1 : 0;
      const was = load<i32>(bad + (<usize>h << 2));
      if (now == was) continue;
      store<i32>(bad + (<usize>h << 2), now);
      if (now) {
        store<i32>(list + (<usize>count << 2), h);
        store<i32>(at + (<usize>h << 2), count++);
      } else {
        const i = load<i32>(at + (<usize>h << 2));
        const last = load<i32>(list + (<usize>(--count) << 2));
        store<i32>(list + (<usize>i << 2), last);
        store<i32>(at + (<usize>last << 2), i);
      }
    }
  }
  return count == 0 ? 1 : 0;
}

/** Change in the number of factors at −∞ when x_u moves to state s. */
function moveDelta(g: FactorGraph, x: usize, u: i32, s: i32, bad: usize): i32 {
  const d = s - load<i32>(x + (<usize>u << 2));
  let delta = 0;
  const end = load<i32>(g.incStart + (<usize>(u + 1) << 2));
  for (let q = load<i32>(g.incStart + (<usize>u << 2)); q < end; q++) {
    const h = load<i32>(g.incFactor + (<usize>q << 2));
    const e = factorEntry(g, h, x) + d * load<i32>(g.incStride + (<usize>q << 2));
    delta += (load<f64>(g.tables + (<usize>e << 3)) == -Infinity ? 1 : 0) - load<i32>(bad + (<usize>h << 2));
  }
  return delta;
}
