// Exact inference by enumeration on the factor graph of any arity (assembly/exact/exact_enum.ts;
// on pairwise models it is as fast as the pairwise kernel it replaced, or faster). The plan, made
// here from the model alone:
//
//  * a variable whose unary factors allow one state only (evidence clamps it; a cardinality-1
//    variable) is held fixed at that state and not enumerated; one whose unary factors allow no
//    state makes Z = 0;
//  * the other variables split into the connected components of the factor graph; each component
//    is enumerated on its own (with the factors that touch it), so Z = Π_c Z_c · (the factors on
//    fixed variables only), and the configurations visited are Σ_c Π_{v∈c} K_v, not Π_v K_v.

import { plannerEngine, type Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import { EngineError } from '../core/errors.ts';
import { BoundFactorGraph } from '../core/bound-fg.ts';
import { fmtEntries, MAX_ENUMERATION, type ExactOutcome } from './outcome.ts';

/** Digits in the enumeration's inner block: at most this many configurations. */
const ENUM_BLOCK = 4096;

export interface EnumerationPlan {
  /** Fixed state of each variable, −1 where it is enumerated. */
  fixed: Int32Array;
  /** A variable no state of which its unary factors allow (Z = 0), or −1. */
  impossible: number;
  /** Each component's variables (digits order, fewest factors fastest, where it is within MAX_ENUMERATION) and the factors touching it. */
  components: { vars: Int32Array; factors: Int32Array; configs: number }[];
  /** Factors on fixed variables only. */
  fixedFactors: Int32Array;
  /** Configurations the enumeration visits (Σ over components); the largest component's. */
  configs: number;
  largest: number;
}

/** fixedStates' answer per model (models are immutable; a refusal asks twice: enumeration, bucket elimination). */
const fixedCache = new WeakMap<Model, { fixed: Int32Array; impossible: number }>();

/**
 * The states unary factors (evidence) leave each variable: fixed where one (or none: `impossible`
 * names the first such variable, Z = 0). The same arrays for every call on a model: do not modify.
 */
export function fixedStates(model: Model): { fixed: Int32Array; impossible: number } {
  let known = fixedCache.get(model);
  if (!known) fixedCache.set(model, (known = findFixedStates(model)));
  return known;
}

/** No variable is fixed (fixedStates' `fixed` is −1 throughout). */
export function noneFixed(fixed: Int32Array): boolean {
  for (let v = 0; v < fixed.length; v++) if (fixed[v] >= 0) return false;
  return true;
}

function findFixedStates(model: Model): { fixed: Int32Array; impossible: number } {
  const { n, card, scopeStart, scopeVars, tables, tableStart } = model;
  const F = model.nFactors;
  // States allowed by the unary factors (v's at allowed[off[v] … off[v] + card[v])).
  const off = new Int32Array(n + 1);
  for (let v = 0; v < n; v++) off[v + 1] = off[v] + card[v];
  const allowed = new Uint8Array(off[n]).fill(1);
  for (let f = 0; f < F; f++) {
    if (scopeStart[f + 1] - scopeStart[f] !== 1) continue;
    const v = scopeVars[scopeStart[f]];
    for (let k = 0; k < card[v]; k++) if (tables[tableStart[f] + k] === -Infinity) allowed[off[v] + k] = 0;
  }
  const fixed = new Int32Array(n).fill(-1);
  let impossible = -1;
  for (let v = 0; v < n; v++) {
    let count = 0, last = -1;
    for (let k = 0; k < card[v]; k++) if (allowed[off[v] + k]) (count++, (last = k));
    if (count === 0 && impossible < 0) impossible = v;
    if (count <= 1) fixed[v] = Math.max(0, last);
  }
  return { fixed, impossible };
}

export function enumerationPlan(model: Model): EnumerationPlan {
  const { n, card, scopeStart, scopeVars } = model;
  const F = model.nFactors;
  const { fixed, impossible } = fixedStates(model);
  // Components of the enumerated variables (union–find over the factors' free scope variables, in
  // the engine: assembly/exact/exact_graph.ts), their variables and factors in one flat array each
  // (ascending within a component); the components are views into them.
  const engine = plannerEngine(), arena = engine.arena();
  let nComp: number, vars: Int32Array, varStart: Int32Array, factors: Int32Array, factorStart: Int32Array, degree: Int32Array;
  try {
    const pStart = arena.allocI32(scopeStart), pVars = arena.allocI32(scopeVars.length > 0 ? scopeVars : [0]), pFixed = arena.allocI32(n > 0 ? fixed : [0]);
    nComp = engine.call('enumeration plan', (k) => k.componentsRun(n, F, pStart, pVars, pFixed));
    const k = engine.kernels;
    varStart = arena.i32(k.componentVarStarts(), nComp + 1).slice();
    factorStart = arena.i32(k.componentFactorStarts(), nComp + 2).slice();
    vars = arena.i32(k.componentVars(), varStart[nComp]).slice();
    factors = arena.i32(k.componentFactors(), F).slice();
    degree = arena.i32(k.factorDegrees(), n).slice();
  } finally {
    arena.dispose();
  }
  let configs = 0, largest = 0;
  const components: EnumerationPlan['components'] = new Array(nComp);
  for (let c = 0; c < nComp; c++) {
    const cv = vars.subarray(varStart[c], varStart[c + 1]);
    let size = 1;
    for (let k = 0; k < cv.length; k++) size *= card[cv[k]];
    configs += size;
    largest = Math.max(largest, size);
    // Digits order, where the component will be enumerated (past the limit its order is never used).
    if (size <= MAX_ENUMERATION) cv.sort((a, b) => degree[a] - degree[b] || a - b);
    components[c] = { vars: cv, factors: factors.subarray(factorStart[c], factorStart[c + 1]), configs: size };
  }
  const fixedFactors = factors.subarray(factorStart[nComp], factorStart[nComp + 1]);
  return { fixed, impossible, components, fixedFactors, configs, largest };
}

/** The refusal when a plan is past the enumeration limit. */
export function enumerationRefusal(plan: EnumerationPlan): string {
  const parts = plan.components.length > 1 ? ` (${plan.components.length} independent components, the largest ${fmtEntries(plan.largest)})` : '';
  return `enumeration would visit ${fmtEntries(plan.configs)} configurations${parts}, past the limit of 2^30`;
}

/**
 * Enumeration on the factor graph: log Z and every node marginal, for factors of any arity.
 * Throws an EngineError when the plan is past MAX_ENUMERATION configurations.
 */
export function runFactorGraphEnumeration(engine: Engine, model: Model, plan: EnumerationPlan = enumerationPlan(model)): ExactOutcome {
  if (plan.configs > MAX_ENUMERATION) throw new EngineError(enumerationRefusal(plan));
  const { n, card } = model;
  const fixedMarginals = (): Float64Array[] =>
    Array.from(card, (K, v) => {
      const p = new Float64Array(K);
      if (plan.fixed[v] >= 0) p[plan.fixed[v]] = 1;
      return p;
    });
  if (plan.impossible >= 0) return { logZ: -Infinity, marginals: null, zeroReason: `variable ${plan.impossible}: its unary factors (or evidence) give every state zero potential` };
  // The fixed part: the constant and the factors on fixed variables only.
  const x0 = Int32Array.from(plan.fixed, (s) => Math.max(0, s));
  let logZ = model.logConst;
  for (const f of plan.fixedFactors) logZ += model.tables[model.tableStart[f] + model.entryIndex(f, x0)];
  if (logZ === -Infinity) return { logZ, marginals: null, zeroReason: 'the observed or fixed variables have zero potential together' };
  const marginals = fixedMarginals();
  if (plan.components.length === 0) return { logZ, marginals };

  const off = new Int32Array(n);
  let entries = 0;
  for (let v = 0; v < n; v++) {
    off[v] = entries;
    entries += card[v];
  }
  let maxDigits = 1, maxFactors = 1;
  for (const c of plan.components) {
    maxDigits = Math.max(maxDigits, c.vars.length);
    maxFactors = Math.max(maxFactors, c.factors.length);
  }
  const g = BoundFactorGraph.fromModel(engine, model, 'enumeration', (s) => 4 * (2 * n + s.nFactors + 2 * maxDigits + maxFactors) + 8 * (3 * entries + n + 4) + 256);
  try {
    const arena = g.arena;
    const pX = g.configuration(x0);
    const pOff = arena.allocI32(off);
    const pEntry = arena.allocI32(model.nFactors);
    const pDigits = arena.allocI32(maxDigits);
    const pDir = arena.allocI32(maxDigits);
    const pFactors = arena.allocI32(maxFactors);
    const pMarg = arena.allocF64(entries);
    const pMargC = arena.allocF64(entries);
    const pAcc = arena.allocF64(entries);
    const pStart = arena.allocF64(n);
    const pRes = arena.allocF64(4);
    for (const c of plan.components) {
      const nd = c.vars.length;
      let nb = 0;
      for (let prodK = 1; nb < nd && (nb === 0 || prodK * card[c.vars[nb]] <= ENUM_BLOCK); nb++) prodK *= card[c.vars[nb]];
      // Views after every allocation: (re)write this component's inputs.
      const x = arena.i32(pX, n);
      for (const v of c.vars) x[v] = 0;
      arena.i32(pDigits, nd).set(c.vars);
      arena.i32(pDir, nd).fill(1);
      arena.i32(pFactors, c.factors.length).set(c.factors);
      for (const v of c.vars) {
        arena.f64(pMarg + 8 * off[v], card[v]).fill(0);
        arena.f64(pMargC + 8 * off[v], card[v]).fill(0);
      }
      engine.call('enumeration', (k) =>
        k.enumRun(g.live(), pX, nd, pDigits, pDir, nb, c.factors.length, pFactors, pEntry, pOff, pMarg, pMargC, pAcc, pStart, pRes),
      );
      const res = arena.readF64(pRes, 4);
      const S = res[1] + res[2];
      if (!(S > 0)) return { logZ: -Infinity, marginals: null };
      logZ += res[0] + Math.log(S);
      const mg = arena.f64(pMarg, entries), mc = arena.f64(pMargC, entries);
      for (const v of c.vars) {
        const p = marginals[v];
        let s = 0;
        for (let k = 0; k < card[v]; k++) s += p[k] = mg[off[v] + k] + mc[off[v] + k];
        for (let k = 0; k < card[v]; k++) p[k] /= s;
      }
    }
    return { logZ, marginals };
  } finally {
    g.dispose();
  }
}
