// Tree-reweighted BP (Wainwright, Jaakkola, Willsky 2005): an upper bound on log Z for pairwise models,
//
//   log Z ≤ logConst + Σ_f (E_{τ_f}[θ_f] + ρ_f H(τ_f)) + Σ_v (1 − Σ_{e ∋ v} ρ_e) H(τ_v)
//
// at the maximising pseudo-marginals τ, for edge appearance probabilities ρ in the spanning-tree
// polytope (each edge's probability of lying in a spanning tree drawn from a distribution μ; unary
// factors weigh 1). The maximiser is the fixed point of BP with weights ρ (assembly/variational/bp.ts).
//
// μ starts uniform over `trees` random spanning forests (maximal: one spanning tree per connected
// component), drawn as minimum spanning forests under random weights, more added until every edge
// appears in one. Then conditional-gradient steps over the polytope: ∂bound/∂ρ_e is −I_e (the mutual
// information of τ_e), so the vertex of steepest descent is a maximum spanning forest on the I_e;
// μ moves towards it by the first step of 1/(k+2), halved at most twice (below 1, so every edge keeps
// ρ_e > 0), that lowers the converged free energy (a line search on the convex bound).
//
// The reported bound does not rest on convergence: at the final messages, whatever they are, the
// forests' parameters θ^T (see treeDecompositionBound) average to θ exactly, so Σ_T μ_T log Z(θ^T)
// — exact on each forest — bounds log Z. At a fixed point it equals the free energy above
// (diagnostics.freeEnergy); away from one it is larger, never invalid.
//
// Factors of arity > 2 are refused (a ModelError naming the factor): the spanning-hypertree polytope
// that a higher-order TRW bound needs is not implemented. Factors on the same pair are summed first
// (a pair is one edge of the polytope).

import type { Engine } from '../core/engine.ts';
import { ModelBuilder, requirePairwise, type Model } from '../core/model.ts';
import type { InferenceResult } from '../core/result.ts';
import { checkCount, definedOnly } from '../core/options.ts';
import { exactInference } from '../exact/exact.ts';
import { seedWords } from '../core/seed.ts';
import { BPSolver, bpConfig, type BPConfig, type BPOptions } from './bp.ts';

/**
 * Options of tree-reweighted BP (`trwUpperBound`, `runTRW`): BP's options plus the spanning-tree weights'
 * (defaults in TRW_DEFAULTS and BP_DEFAULTS).
 */
export interface TRWOptions extends BPOptions {
  /** Seed of the random spanning forests (default 1). */
  seed?: number;
  /** Random spanning forests ρ starts from (more if some edge is in none). Default 10. */
  trwTrees?: number;
  /** Conditional-gradient steps on ρ (0: keep the random-tree ρ). Default 10. */
  trwSteps?: number;
}

/** Defaults of TRWOptions' own fields. */
export const TRW_DEFAULTS = { seed: 1, trwTrees: 10, trwSteps: 10 } as const;

/** The model with factors on the same scope summed (a lattice's shared bond table stays shared when no scope repeats). */
export function mergeRepeatedScopes(model: Model): Model {
  const seen = new Set<string>();
  let repeated = false;
  for (let f = 0; f < model.nFactors && !repeated; f++) {
    const key = model.scope(f).join(',');
    if (seen.has(key)) repeated = true;
    seen.add(key);
  }
  if (!repeated) return model;
  const b = new ModelBuilder(model.card);
  b.addConstant(model.logConst);
  for (let f = 0; f < model.nFactors; f++) b.addFactor(model.scope(f), model.table(f)); // the builder sums equal scopes
  return b.build();
}

/** Disjoint sets over n elements. */
class UnionFind {
  private readonly parent: Int32Array;
  constructor(n: number) {
    this.parent = Int32Array.from({ length: n }, (_, i) => i);
  }
  find(i: number): number {
    while (this.parent[i] !== i) i = this.parent[i] = this.parent[this.parent[i]];
    return i;
  }
  union(i: number, j: number): boolean {
    const a = this.find(i), b = this.find(j);
    if (a === b) return false;
    this.parent[a] = b;
    return true;
  }
}

/** Indicator (per edge) of a minimum spanning forest under `weight` (Kruskal). */
export function minimumSpanningForest(n: number, ei: Int32Array, ej: Int32Array, weight: Float64Array): Uint8Array {
  const order = Array.from({ length: ei.length }, (_, e) => e).sort((a, b) => weight[a] - weight[b]);
  const uf = new UnionFind(n);
  const inTree = new Uint8Array(ei.length);
  for (const e of order) if (uf.union(ei[e], ej[e])) inTree[e] = 1;
  return inTree;
}

/** A small deterministic generator (splitmix32) for the random spanning forests. */
function generator(seed: number): () => number {
  let s = (seed ^ 0x9e3779b9) >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return ((z ^ (z >>> 16)) >>> 0) / 2 ** 32;
  };
}

/**
 * Edge appearance probabilities of at least `trees` random spanning forests (uniform mixture), more
 * until every edge is covered: a forest prefers uncovered edges, so each added one covers a new edge.
 */
export function randomTreeWeights(n: number, ei: Int32Array, ej: Int32Array, trees: number, seed: number): { rho: Float64Array; trees: number; forests: Uint8Array[] } {
  const rand = generator(seed);
  const E = ei.length, count = new Float64Array(E), w = new Float64Array(E);
  const forests: Uint8Array[] = [];
  let covered = 0;
  while (forests.length < trees || covered < E) {
    for (let e = 0; e < E; e++) w[e] = rand() + (count[e] > 0 ? 1 : 0);
    const tree = minimumSpanningForest(n, ei, ej, w);
    for (let e = 0; e < E; e++) {
      if (tree[e] && count[e] === 0) covered++;
      count[e] += tree[e];
    }
    forests.push(tree);
  }
  for (let e = 0; e < E; e++) count[e] /= forests.length;
  return { rho: count, trees: forests.length, forests };
}

/** ρ_e = Σ_T μ_T [e ∈ T]. */
function appearance(forests: Uint8Array[], mu: number[], E: number): Float64Array {
  const rho = new Float64Array(E);
  forests.forEach((T, t) => {
    for (let e = 0; e < E; e++) if (T[e]) rho[e] += mu[t];
  });
  return rho;
}

/** A zero message (−∞) enters the pair terms as 0: those rows are −∞ in every forest's unary term already. */
const finite = (x: number) => (x === -Infinity ? 0 : x);

/**
 * The certified bound at the current messages m (of any iteration, converged or not): with
 *   θ^T_v = θ_v + Σ_{e ∋ v} ρ_e m_ev,   θ^T_e = θ_e/ρ_e − m_es − m_et   (e ∈ T)
 * Σ_T μ_T θ^T = θ exactly (the messages cancel because Σ_{T ∋ e} μ_T = ρ_e), so by convexity of
 * log Z, log Z(θ) ≤ Σ_T μ_T log Z(θ^T), each term exact on its forest (elimination, treewidth 1).
 * A zero message m_ev(k) = −∞ arises only where no configuration of positive weight has x_v = k
 * (BP keeps every consistent state's messages positive), so θ^T_v(k) = −∞ in every forest loses
 * nothing: the identity is needed on configurations of positive weight only.
 * At a TRW fixed point this is the TRW value (Wainwright et al.'s reparametrisation).
 */
function treeDecompositionBound(engine: Engine, m: Model, solver: BPSolver, edgeFactor: number[], ei: Int32Array, ej: Int32Array, forests: Uint8Array[], mu: number[], rho: Float64Array): number {
  const msg = solver.messages(), at = solver.msgStart;
  const { card, scopeStart } = m;
  const unary = Array.from(card, (K) => new Float64Array(K));
  for (let f = 0; f < m.nFactors; f++) {
    if (m.arity(f) !== 1) continue;
    const v = m.scopeVars[scopeStart[f]], th = m.table(f);
    for (let k = 0; k < card[v]; k++) unary[v][k] += th[k];
  }
  const pair = edgeFactor.map((f, e) => {
    const th = m.table(f), Ki = card[ei[e]], Kj = card[ej[e]];
    const mi = at[scopeStart[f]], mj = at[scopeStart[f] + 1];
    for (let k = 0; k < Ki; k++) unary[ei[e]][k] += rho[e] * msg[mi + k];
    for (let k = 0; k < Kj; k++) unary[ej[e]][k] += rho[e] * msg[mj + k];
    const table = new Float64Array(Ki * Kj);
    for (let a = 0; a < Ki; a++) for (let b = 0; b < Kj; b++) table[a * Kj + b] = th[a * Kj + b] / rho[e] - finite(msg[mi + a]) - finite(msg[mj + b]);
    return table;
  });
  let bound = m.logConst;
  forests.forEach((T, t) => {
    if (!(mu[t] > 0)) return;
    const b = new ModelBuilder(card);
    for (let v = 0; v < m.n; v++) b.addUnary(v, unary[v]);
    for (let e = 0; e < edgeFactor.length; e++) if (T[e]) b.addPairwise(ei[e], ej[e], pair[e]);
    bound += mu[t] * exactInference(engine, b.build()).logZ;
  });
  return bound;
}

/** TRW's upper bound on log Z and what led to it. */
export interface TRWBound {
  /** The certified bound (tree decomposition at the final messages). */
  logZ: number;
  /** The weighted free energy at the final beliefs (equal to logZ at a fixed point). */
  freeEnergy: number;
  /** Pseudo-marginals τ at the final messages: marginals[v][k]. */
  marginals: Float64Array[];
  /** ρ per factor of the (merged) model the bound was computed on. */
  rho: Float64Array;
  /** True when the last BP run at the final ρ converged. */
  converged: boolean;
  /** BP iterations over all ρ evaluated, in total. */
  iterations: number;
  /** The free energy of the random-tree ρ, before conditional-gradient steps. */
  initialLogZ: number;
  /** Conditional-gradient steps on ρ accepted. */
  steps: number;
  /** Spanning forests in the final distribution μ. */
  trees: number;
  /** Largest message change of the final BP run (probability scale). */
  maxResidual: number;
}

/** TRW's upper bound (pairwise models): random-tree ρ, conditional-gradient steps, then the certified decomposition. */
export function trwUpperBound(engine: Engine, model: Model, opts: TRWOptions = {}): TRWBound {
  const c: BPConfig = bpConfig(opts);
  const t = { ...TRW_DEFAULTS, ...definedOnly({ seed: opts.seed, trwTrees: opts.trwTrees, trwSteps: opts.trwSteps }) };
  checkCount('trwTrees', t.trwTrees, 1);
  checkCount('trwSteps', t.trwSteps, 0);
  seedWords(t.seed);
  requirePairwise(model, 'the TRW upper bound', 'use --method bp (an estimate) or mf (a lower bound)');
  const m = mergeRepeatedScopes(model);
  const F = m.nFactors;
  // The edges (pairwise factors) and where each sits among the factors.
  const edgeFactor: number[] = [];
  for (let f = 0; f < F; f++) if (m.arity(f) === 2) edgeFactor.push(f);
  const E = edgeFactor.length;
  const ei = new Int32Array(E), ej = new Int32Array(E);
  edgeFactor.forEach((f, e) => {
    const s = m.scope(f);
    ei[e] = s[0];
    ej[e] = s[1];
  });
  const factorWeights = (rho: Float64Array) => {
    const w = new Float64Array(F).fill(1);
    edgeFactor.forEach((f, e) => (w[f] = rho[e]));
    return w;
  };
  const start = randomTreeWeights(m.n, ei, ej, t.trwTrees, t.seed);
  // The mixture of forests: ρ is always recomputed from it, so Σ_{T ∋ e} μ_T = ρ_e holds exactly.
  const forests = start.forests;
  let mu = forests.map(() => 1 / forests.length);
  const solver = new BPSolver(engine, m, 'the TRW bound');
  try {
    let iterations = 0;
    let current: Float64Array | null = null; // the ρ whose messages the solver holds
    const evaluate = (rho: Float64Array) => {
      solver.setWeights(factorWeights(rho));
      current = rho;
      const r = solver.run(c, opts.signal);
      iterations += r.iterations;
      return { ...r, ...solver.freeEnergy(), rho };
    };
    let cur = evaluate(appearance(forests, mu, E));
    const initialLogZ = cur.logZ;
    let steps = 0;
    for (let k = 0; k < t.trwSteps && E > 0 && !opts.signal?.aborted; k++) {
      // Mutual information of each edge's pseudo-marginal: H(τ_i) + H(τ_j) − H(τ_ij).
      const negInfo = new Float64Array(E);
      edgeFactor.forEach((f, e) => (negInfo[e] = -(cur.nodeEntropy[ei[e]] + cur.nodeEntropy[ej[e]] - cur.factorEntropy[f])));
      const vertex = minimumSpanningForest(m.n, ei, ej, negInfo);
      let moved = false;
      for (let gamma = 1 / (k + 2), tries = 0; tries < 3; gamma /= 2, tries++) {
        const nextMu = [...mu.map((x) => (1 - gamma) * x), gamma];
        const next = evaluate(appearance([...forests, vertex], nextMu, E));
        if (next.logZ < cur.logZ && (next.converged || !cur.converged)) {
          forests.push(vertex);
          mu = nextMu;
          cur = next;
          moved = true;
          break;
        }
      }
      if (!moved) break;
      steps++;
    }
    if (current !== cur.rho) cur = evaluate(cur.rho); // the last trial was rejected: back to the accepted ρ (warm start)
    const logZ = treeDecompositionBound(engine, m, solver, edgeFactor, ei, ej, forests, mu, cur.rho);
    return {
      logZ, freeEnergy: cur.logZ, marginals: solver.marginals(), rho: factorWeights(cur.rho), converged: cur.converged, iterations,
      initialLogZ, steps, trees: forests.length, maxResidual: cur.maxResidual,
    };
  } finally {
    solver.dispose();
  }
}

/** TRW: the upper bound on log Z and its pseudo-marginals. */
export function runTRW(engine: Engine, model: Model, opts: TRWOptions = {}): InferenceResult {
  const t0 = performance.now();
  const c = bpConfig(opts);
  const b = trwUpperBound(engine, model, opts);
  return {
    method: 'trw',
    logZ: b.logZ,
    logZStdErr: null,
    logZKind: 'upper-bound',
    marginals: b.marginals,
    marginalStdErr: null,
    diagnostics: trwDiagnostics(b, c, opts),
    seconds: (performance.now() - t0) / 1000,
    partial: opts.signal?.aborted === true,
  };
}

export function trwDiagnostics(b: TRWBound, c: BPConfig, opts: TRWOptions): InferenceResult['diagnostics'] {
  return {
    approximation: 'tree-reweighted Bethe; bound certified by its tree decomposition',
    converged: b.converged,
    freeEnergy: b.freeEnergy,
    iterations: b.iterations,
    maxResidual: Number.isFinite(b.maxResidual) ? b.maxResidual : null,
    randomTreeFreeEnergy: b.initialLogZ,
    gradientSteps: b.steps,
    trees: b.trees,
    schedule: c.schedule,
    damping: c.damping,
    maxIterations: c.maxIterations,
    tolerance: c.tolerance,
    seed: opts.seed ?? TRW_DEFAULTS.seed,
  };
}
