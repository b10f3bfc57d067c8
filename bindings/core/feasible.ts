// A configuration of positive probability (every factor > −∞), by the engine's depth-first search
// and, where that runs out of budget, its min-conflicts local search (assembly/core/feasible.ts). The order is planned here: variables whose unary factors allow one
// state first (evidence), then maximum-cardinality search (each next variable the one sharing the
// most factors with those already placed), so a conflict shows up soon after its cause.

import { BoundFactorGraph } from './bound-fg.ts';
import type { Engine } from './engine.ts';
import type { Model } from './model.ts';
import { seedWords } from './seed.ts';
import { zeroModel } from './errors.ts';

/** Tag of the local search's generator stream. */
const FEASIBLE_STREAM = 0x4653; // "FS"
/** Probability of a random move in the local search (WalkSAT's usual range). */
const LOCAL_SEARCH_NOISE = 0.2;

export interface FeasibleOutcome {
  /** A configuration with p̃(x) > 0, or null. */
  x: Int32Array | null;
  /** 'found', 'none' (the search was exhaustive: Z = 0) or 'budget' (it gave up). */
  status: 'found' | 'none' | 'budget';
}

/**
 * Depth-first search for `budget` assignments (exhaustive on small or easy models: 'none' proves
 * Z = 0), then, if it ran out, a min-conflicts local search for `moves` moves from every variable
 * in its first state allowed by its unary factors (seeded: deterministic).
 */
export function feasibleConfiguration(g: BoundFactorGraph, budget = 1e6, seed = 1, moves = 10 * budget): FeasibleOutcome {
  const model = g.model;
  const { n, card, scopeStart, scopeVars, tables, tableStart } = model;
  const F = model.nFactors;
  // Variable → factors rows.
  const incStart = new Int32Array(n + 1);
  for (let p = 0; p < scopeVars.length; p++) incStart[scopeVars[p] + 1]++;
  for (let v = 0; v < n; v++) incStart[v + 1] += incStart[v];
  const fill = incStart.slice(0, n), incFactor = new Int32Array(scopeVars.length);
  for (let f = 0; f < F; f++) for (let p = scopeStart[f]; p < scopeStart[f + 1]; p++) incFactor[fill[scopeVars[p]]++] = f;
  // Priority: observed variables first, then by factors shared with placed variables (bucketed).
  const allowed = Array.from(card, (K) => K);
  const first = new Int32Array(n);
  for (let f = 0; f < F; f++) {
    if (scopeStart[f + 1] - scopeStart[f] !== 1) continue;
    const v = scopeVars[scopeStart[f]];
    let a = 0, k0 = -1;
    for (let k = 0; k < card[v]; k++) if (tables[tableStart[f] + k] > -Infinity) (a++, k0 < 0 && (k0 = k));
    allowed[v] = Math.min(allowed[v], a);
    if (a < card[v] && k0 >= 0) first[v] = k0;
  }
  const placed = new Uint8Array(n), score = new Int32Array(n);
  const order = new Int32Array(n);
  let d = 0;
  for (let v = 0; v < n; v++) if (allowed[v] <= 1) (order[d++] = v), (placed[v] = 1);
  const touch = (v: number): void => {
    for (let q = incStart[v]; q < incStart[v + 1]; q++) {
      const f = incFactor[q];
      for (let p = scopeStart[f]; p < scopeStart[f + 1]; p++) if (!placed[scopeVars[p]]) score[scopeVars[p]]++;
    }
  };
  for (let t = 0; t < d; t++) touch(order[t]);
  // Max-cardinality search with a simple scan (n is at most ~10⁶ here only for huge models; the scan
  // is O(n²) and is skipped past 20 000 variables in favour of index order).
  if (n - d <= 20000) {
    while (d < n) {
      let best = -1;
      for (let v = 0; v < n; v++) if (!placed[v] && (best < 0 || score[v] > score[best])) best = v;
      order[d++] = best;
      placed[best] = 1;
      touch(best);
    }
  } else {
    for (let v = 0; v < n; v++) if (!placed[v]) order[d++] = v;
  }
  // Each factor is checked at the depth of its last-placed variable.
  const depth = new Int32Array(n);
  order.forEach((v, t) => (depth[v] = t));
  const checkStart = new Int32Array(n + 1), at = new Int32Array(F);
  for (let f = 0; f < F; f++) {
    if (scopeStart[f + 1] === scopeStart[f]) continue;
    let m = 0;
    for (let p = scopeStart[f]; p < scopeStart[f + 1]; p++) m = Math.max(m, depth[scopeVars[p]]);
    at[f] = m;
    checkStart[m + 1]++;
  }
  for (let t = 0; t < n; t++) checkStart[t + 1] += checkStart[t];
  const put = checkStart.slice(0, n), checkFactor = new Int32Array(Math.max(1, F));
  for (let f = 0; f < F; f++) if (scopeStart[f + 1] > scopeStart[f]) checkFactor[put[at[f]]++] = f;

  const arena = g.engine.arena();
  try {
    const px = arena.allocI32(n), po = arena.allocI32(order), ps = arena.allocI32(checkStart), pf = arena.allocI32(checkFactor);
    const r = g.engine.call('feasible configuration', (k) => k.fgFeasible(g.live(), px, po, ps, pf, budget));
    if (r === 1) return { x: arena.i32(px, n).slice(), status: 'found' };
    if (r === 0) return { x: null, status: 'none' };
    // Out of budget: the local search below.
  } finally {
    arena.dispose();
  }
  const x = localSearch(g, first, seed, 0, moves);
  return x ? { x, status: 'found' } : { x: null, status: 'budget' };
}

/** The engine's min-conflicts local search from `start` for `moves` moves, on stream (seed, chain): a configuration of positive probability, or null. */
function localSearch(g: BoundFactorGraph, start: ArrayLike<number>, seed: number, chain: number, moves: number): Int32Array | null {
  const n = g.model.n, F = g.model.nFactors;
  const arena = g.engine.arena();
  try {
    const px = arena.allocI32(Int32Array.from(start));
    const pb = arena.allocI32(F), pl = arena.allocI32(F), pa = arena.allocI32(F), rng = arena.alloc(g.engine.kernels.rngStateBytes());
    const [lo, hi] = seedWords(seed);
    const found = g.engine.call('feasible configuration', (k) => {
      k.rngSeed(rng, lo, hi, chain, FEASIBLE_STREAM);
      return k.fgLocalSearch(g.live(), px, rng, moves, LOCAL_SEARCH_NOISE, pb, pl, pa);
    });
    return found === 1 ? arena.i32(px, n).slice() : null;
  } finally {
    arena.dispose();
  }
}

/** Models of at most this many variables get the search for a configuration of positive probability before a run (noZeroConfiguration). */
export const FEASIBILITY_CHECK_MAX_VARIABLES = 100_000;
/** The depth-first search's assignments and the local search's moves for noZeroConfiguration: a few ms. */
const FEASIBILITY_CHECK_BUDGET = 100_000;
const feasibilityCache = new WeakMap<Model, FeasibleOutcome | null>();

/**
 * The search for a configuration of positive probability (FEASIBILITY_CHECK_BUDGET assignments and
 * moves), for models with a zero in a factor of two or more variables and at most
 * FEASIBILITY_CHECK_MAX_VARIABLES variables (null otherwise); kept with the model object.
 */
function feasibilityOf(engine: Engine, model: Model): FeasibleOutcome | null {
  const known = feasibilityCache.get(model);
  if (known !== undefined) return known;
  let out: FeasibleOutcome | null = null;
  if (model.n <= FEASIBILITY_CHECK_MAX_VARIABLES && hasJointZero(model)) {
    const g = BoundFactorGraph.fromModel(engine, model, 'the search for a configuration of positive probability', (s) => 4 * (3 * model.n + 4 * model.nFactors + 8) + 256);
    try {
      out = feasibleConfiguration(g, FEASIBILITY_CHECK_BUDGET, 1, FEASIBILITY_CHECK_BUDGET);
    } finally {
      g.dispose();
    }
  }
  feasibilityCache.set(model, out);
  return out;
}

/**
 * Why no configuration of `model` has positive probability, when the depth-first search proves it
 * (exhaustively, within FEASIBILITY_CHECK_BUDGET assignments), else null: for zeros that no single
 * factor shows (Model.zeroReason), such as a pairwise factor forbidding what the evidence observes, on
 * which Gibbs and parallel tempering reported marginals with exit 0. A search that runs out of
 * budget decides nothing (see feasibilityOf).
 */
export function noZeroConfiguration(engine: Engine, model: Model): string | null {
  return feasibilityOf(engine, model)?.status === 'none' ? 'no configuration has positive probability (an exhaustive search found none: its factors and evidence contradict each other)' : null;
}

/**
 * The start a chain takes instead of `start()` (its random start, read only when needed) when that
 * has probability zero: the configuration of positive probability the same search found (a copy);
 * null when the start stays — it has positive probability, or the model has no zero joining
 * variables, is too large, or the search gave up. Chains that start outside the support of a model
 * with hard pair constraints spent sampling time there, every site drawn among its own allowed
 * states (a 20-variable chain of equalities with x0 observed: marginals 0.003–0.009 off, within
 * their standard errors). The Gibbs samplers' inits ask it.
 */
export function supportStart(engine: Engine, model: Model, start: () => ArrayLike<number>, seed: number, chain: number): Int32Array | null {
  const starts = new SupportStarts(engine, model);
  try {
    return starts.start(start, seed, chain);
  } finally {
    starts.dispose();
  }
}

/** Moves of the local search that brings a chain's own start into the support: a few ms. */
const REPAIR_MOVES = 100_000;
/** Models on which a repair ran out of moves: their chains take the shared configuration at once. */
const repairFails = new WeakSet<Model>();

/**
 * supportStart for a batch of chains, with one factor graph in engine memory for all their repairs
 * (`graph`, the caller's own when it has one, or one bound on the first repair and freed by dispose):
 * each chain's own random start moved into the support by the min-conflicts local search on the
 * chain's stream, or, when that runs out of moves, the depth-first search's configuration. Chains
 * that all took that one configuration were identical, so R̂ could not see them stuck: on a chain of
 * 3-state equalities Gibbs, which cannot leave a configuration there, reported marginals (1, 0, 0)
 * with standard error 0 and no warning (exact: 1/3 each).
 */
export class SupportStarts {
  private own: BoundFactorGraph | null = null;

  constructor(private readonly engine: Engine, private readonly model: Model, private readonly graph?: BoundFactorGraph) {}

  /** The start a chain takes instead of `start()` (see supportStart), or null when it stays. */
  start(start: () => ArrayLike<number>, seed: number, chain: number): Int32Array | null {
    const found = feasibilityOf(this.engine, this.model)?.x;
    if (!found) return null;
    const x = start();
    if (this.model.logPotential(x) !== -Infinity) return null;
    if (repairFails.has(this.model)) return found.slice();
    const repaired = localSearch(this.bound(), x, seed, chain, REPAIR_MOVES);
    if (!repaired) repairFails.add(this.model);
    return repaired ?? found.slice();
  }

  private bound(): BoundFactorGraph {
    if (this.graph) return this.graph;
    const m = this.model;
    return (this.own ??= BoundFactorGraph.fromModel(this.engine, m, 'the search for a configuration of positive probability', () => 4 * (4 * m.n + 3 * m.nFactors + 8) + 256));
  }

  /** Frees the factor graph it bound (not the caller's). */
  dispose(): void {
    this.own?.dispose();
    this.own = null;
  }
}

/** Some factor of two or more variables has a zero entry. */
function hasJointZero(model: Model): boolean {
  const { scopeStart, tableStart, tables } = model;
  for (let f = 0; f < model.nFactors; f++) {
    if (scopeStart[f + 1] - scopeStart[f] < 2) continue;
    const at = tableStart[f], end = at + model.tableSize(f);
    for (let e = at; e < end; e++) if (tables[e] === -Infinity) return true;
  }
  return false;
}

/**
 * Whether `model` is known to have a configuration of positive probability: no zero in a factor of
 * two or more variables (unary zeros alone leave one, Model.zeroReason aside), or the search found one.
 */
export function knownPositive(engine: Engine, model: Model): boolean {
  return model.zeroReason() === null && (!hasJointZero(model) || feasibilityOf(engine, model)?.status === 'found');
}

/**
 * Z = 0 where it shows in one place (Model.zeroReason) and, given an engine, where a search proves
 * it (noZeroConfiguration: zeros of factors of several variables contradicting each other or the
 * evidence, on models of ≤ 10^5 variables): every method but exact inference (which answers log Z =
 * −∞) refuses the model, as infer, inferAsync and every run* function start (runParallel: the one
 * place here, the search in its workers; runQueued: the first check, its workers run infer); the
 * samplers and BP would run on it and report marginals (a zero constant factor passed them all;
 * Gibbs reported a pairwise table forbidding the observed pair with exit 0).
 */
export function refuseZeroModel(model: Model, method: string, engine?: Engine): void {
  if (method === 'exact') return;
  const zero = model.zeroReason() ?? (engine ? noZeroConfiguration(engine, model) : null);
  if (zero !== null) throw zeroModel(`${method}: ${zero}`);
}

/**
 * Which states survive arc consistency on a model of unary and pairwise factors (AC-3): a state is
 * ruled out when a unary factor forbids it or when, in some pair factor, every partner state still
 * alive forbids it. Those states have no configuration of positive weight.
 */
export function arcConsistentStates(m: Model): { start: Int32Array; alive: Uint8Array } {
  const n = m.n, start = new Int32Array(n + 1);
  for (let v = 0; v < n; v++) start[v + 1] = start[v] + m.card[v];
  const alive = new Uint8Array(start[n]).fill(1);
  const pairsOf: number[][] = Array.from({ length: n }, () => []);
  for (let f = 0; f < m.nFactors; f++) {
    const a = m.arity(f), t = m.table(f), s = m.scope(f);
    if (a === 1) for (let k = 0; k < m.card[s[0]]; k++) if (t[k] === -Infinity) alive[start[s[0]] + k] = 0;
    if (a === 2) (pairsOf[s[0]].push(f), pairsOf[s[1]].push(f));
  }
  // Revise both directions of every pair factor until nothing changes (each variable re-queued when it loses a state).
  const queued = new Uint8Array(n).fill(1), queue = Array.from({ length: n }, (_, v) => v);
  while (queue.length > 0) {
    const u = queue.pop()!;
    queued[u] = 0;
    for (const f of pairsOf[u]) {
      const s = m.scope(f), t = m.table(f), other = s[0] === u ? s[1] : s[0], Kb = m.card[s[1]];
      let lost = false;
      for (let k = 0; k < m.card[other]; k++) {
        if (!alive[start[other] + k]) continue;
        let supported = false;
        for (let l = 0; l < m.card[u] && !supported; l++) {
          if (!alive[start[u] + l]) continue;
          const e = s[0] === other ? k * Kb + l : l * Kb + k;
          supported = t[e] > -Infinity;
        }
        if (!supported) (alive[start[other] + k] = 0), (lost = true);
      }
      if (lost && !queued[other]) (queued[other] = 1), queue.push(other);
    }
  }
  return { start, alive };
}
