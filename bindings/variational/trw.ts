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
// Factors on the same scope are summed first (a pair is one edge of the polytope). Factors of arity > 2
// are expanded first (factorNodesPairwise): the variable–factor bipartite graph is a pairwise model with
// the same Z — one node per such factor, its states the factor table's entries and its unary potential
// the table, joined to each of its variables by a hard 0/−∞ consistency table — so pairwise TRW on it
// bounds log Z of the factor graph. Factors of arity 1 and 2 stay as they are.

import type { Engine } from '../core/engine.ts';
import { LIMITS, ModelBuilder, type Model } from '../core/model.ts';
import { countingSort, UnionFind } from '../core/flat-storage.ts';
import { EngineError } from '../core/errors.ts';
import type { InferenceResult, Progress } from '../core/result.ts';
import { checkCount, checkOptionKeys, definedOnly } from '../core/options.ts';
import { seedWords } from '../core/seed.ts';
import { BP_OPTION_KEYS, BPSolver, bpConfig, notConverged, type BPConfig, type BPOptions } from './bp.ts';
import { arcConsistentStates, refuseZeroModel } from '../core/feasible.ts';

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
  /** Progress (phase 'trw'): one unit per BP run to convergence — the start's, then each step's. */
  onProgress?: (p: Progress) => void;
}

/** Every option runTRW reads (TRWOptions): it refuses any other. */
export const TRW_OPTION_KEYS: readonly string[] = [...BP_OPTION_KEYS, 'seed', 'trwTrees', 'trwSteps', 'onProgress'];

/** Defaults of TRWOptions' own fields. */
export const TRW_DEFAULTS = { seed: 1, trwTrees: 10, trwSteps: 10 } as const;

/** The model with factors on the same scope summed (a lattice's shared bond table stays shared when no scope repeats). */
export function mergeRepeatedScopes(model: Model): Model {
  if (!hasRepeatedScope(model)) return model;
  const b = new ModelBuilder(model.card);
  b.addConstant(model.logConst);
  for (let f = 0; f < model.nFactors; f++) b.addFactor(model.scope(f), model.table(f)); // the builder sums equal scopes
  return b.build();
}

/**
 * Whether two factors share a scope. By first variable (scopes are sorted): a unary or pair scope
 * is marked in a per-variable stamp, longer ones compared as strings (a string per factor took
 * 1.4 s on a 10⁶-variable lattice).
 */
function hasRepeatedScope(model: Model): boolean {
  const { n, scopeStart, scopeVars } = model, F = model.nFactors;
  // Factors by first scope variable (an empty scope counts as variable n).
  const { start: byFirst, list } = countingSort(F, n + 1, (f) => (scopeStart[f + 1] > scopeStart[f] ? scopeVars[scopeStart[f]] : n));
  // stamp[u] = v + 1: a pair (v, u) seen in v's group; unary[v]: v's unary factor seen.
  const stamp = new Int32Array(n), unary = new Uint8Array(n);
  let empty = 0;
  for (let v = 0; v <= n; v++) {
    let longer: Set<string> | null = null;
    for (let q = byFirst[v]; q < byFirst[v + 1]; q++) {
      const f = list[q], arity = scopeStart[f + 1] - scopeStart[f];
      if (arity === 0 && ++empty > 1) return true;
      if (arity === 1) {
        if (unary[v]) return true;
        unary[v] = 1;
      } else if (arity === 2) {
        const u = scopeVars[scopeStart[f] + 1];
        if (stamp[u] === v + 1) return true;
        stamp[u] = v + 1;
      } else if (arity > 2) {
        const key = model.scope(f).join(',');
        if ((longer ??= new Set()).has(key)) return true;
        longer.add(key);
      }
    }
  }
  return false;
}

/**
 * The pairwise model of the factor graph's bipartite form: variables 0 … n − 1 as they are, then one
 * node per factor of arity > 2 (in factor order; its states are the table's entries, its unary table
 * the factor's) with a pairwise factor to each scope variable v that is 0 where the node's entry has
 * x_v = k and −∞ elsewhere. Each configuration of the variables extends to exactly one of the nodes'
 * with weight not 0, with the same weight, so Z is unchanged. Consistency tables of one shape are
 * shared. EngineError when a node would pass the engine's cardinality or table limits.
 */
export function factorNodesPairwise(model: Model): { model: Model; factorNodes: number } {
  const big: number[] = [];
  for (let f = 0; f < model.nFactors; f++) if (model.arity(f) > 2) big.push(f);
  if (big.length === 0) return { model, factorNodes: 0 };
  const { card } = model;
  const size = (f: number) => model.scope(f).reduce((s, v) => s * card[v], 1);
  let entries = model.tables.length;
  const shapes = new Set<string>();
  for (const f of big) {
    const T = size(f);
    if (T > LIMITS.maxCardinality) throw new EngineError(`the TRW bound makes factor ${f} (arity ${model.arity(f)}) one node with a state per table entry: ${T} states is past the limit of ${LIMITS.maxCardinality}`);
    entries += T;
    let stride = T;
    for (const v of model.scope(f)) {
      stride /= card[v];
      const key = `${T},${stride},${card[v]}`;
      if (!shapes.has(key)) entries += T * card[v];
      shapes.add(key);
    }
  }
  if (entries > LIMITS.maxTotalTableEntries) throw new EngineError(`the TRW bound's pairwise form of this factor graph needs ${entries} table entries (nodes for ${big.length} factors of arity > 2 and their consistency tables), past the limit of ${LIMITS.maxTotalTableEntries}`);
  const b = new ModelBuilder([...card, ...big.map(size)]);
  b.addConstant(model.logConst);
  for (let f = 0; f < model.nFactors; f++) if (model.arity(f) <= 2) b.addFactor(model.scope(f), model.table(f));
  const shared = new Map<string, number>();
  big.forEach((f, i) => {
    const node = model.n + i, T = size(f);
    b.addUnary(node, model.table(f));
    let stride = T;
    for (const v of model.scope(f)) {
      const K = card[v];
      stride /= K;
      const key = `${T},${stride},${K}`;
      let id = shared.get(key);
      if (id === undefined) {
        // Rows k of v, columns the node's entries x (v < node, so (v, node) is the stored order).
        const table = new Float64Array(K * T).fill(-Infinity);
        for (let x = 0; x < T; x++) table[(Math.floor(x / stride) % K) * T + x] = 0;
        id = b.shareTable(table, 'consistency table');
        shared.set(key, id);
      }
      b.addSharedFactor([v, node], id);
    }
  });
  return { model: b.build(), factorNodes: big.length };
}

/** Indicator (per edge) of a minimum spanning forest under `weight` (Kruskal). */
export function minimumSpanningForest(n: number, ei: Int32Array, ej: Int32Array, weight: Float64Array): Uint8Array {
  const order = argsortStable(weight);
  const uf = new UnionFind(n);
  const inTree = new Uint8Array(ei.length);
  for (const e of order) if (uf.union(ei[e], ej[e])) inTree[e] = 1;
  return inTree;
}

/**
 * Indices of `w` by ascending value, equal values in index order: what a stable sort with
 * (a, b) => w[a] − w[b] gives, for finite values (−0 and +0 equal), by a least-significant-digit
 * radix sort over the values' bits (16 bits a pass) — a comparator sort of 2·10⁶ edges took ≈ 2 s
 * per spanning forest on a 10⁶-variable lattice.
 */
export function argsortStable(w: Float64Array): Int32Array {
  const m = w.length;
  // Few values: the comparator sort itself (the radix passes' 2¹⁶-entry counts would dominate).
  if (m < RADIX_MIN) return Int32Array.from(Array.from({ length: m }, (_, e) => e).sort((a, b) => w[a] - w[b]));
  // The values' halves through a 32-bit view (the engine's hosts are little-endian, as WASM is).
  const words = new Uint32Array(w.buffer, w.byteOffset, 2 * m);
  let hi = new Uint32Array(m), lo = new Uint32Array(m), idx = new Int32Array(m);
  for (let e = 0; e < m; e++) {
    let h = words[2 * e + 1], l = words[2 * e];
    if (h === 0x80000000 && l === 0) h = 0; // −0 sorts as +0
    // IEEE bits made to order as unsigned integers: negatives flipped entirely, positives' sign set.
    if (h & 0x80000000) (h = ~h >>> 0), (l = ~l >>> 0);
    else h = (h | 0x80000000) >>> 0;
    hi[e] = h;
    lo[e] = l;
    idx[e] = e;
  }
  // Four stable passes of 16 bits, least significant first; the keys move with the indices, so
  // every pass reads its arrays in order.
  let hi2 = new Uint32Array(m), lo2 = new Uint32Array(m), idx2 = new Int32Array(m);
  const count = new Int32Array(65537);
  for (let pass = 0; pass < 4; pass++) {
    const key = pass < 2 ? lo : hi, shift = pass % 2 === 0 ? 0 : 16;
    count.fill(0);
    for (let t = 0; t < m; t++) count[((key[t] >>> shift) & 0xffff) + 1]++;
    for (let d = 0; d < 65536; d++) count[d + 1] += count[d];
    for (let t = 0; t < m; t++) {
      const at = count[(key[t] >>> shift) & 0xffff]++;
      hi2[at] = hi[t];
      lo2[at] = lo[t];
      idx2[at] = idx[t];
    }
    [hi, hi2, lo, lo2, idx, idx2] = [hi2, hi, lo2, lo, idx2, idx];
  }
  return idx;
}

/** From this many values argsortStable sorts by radix. */
const RADIX_MIN = 4096;

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

/**
 * The certified bound at the current messages m (of any iteration, converged or not): with
 *   θ^T_v = θ_v + Σ_{e ∋ v} ρ_e m_ev,   θ^T_e = θ_e/ρ_e − m_es − m_et   (e ∈ T)
 * Σ_T μ_T θ^T = θ exactly (the messages cancel because Σ_{T ∋ e} μ_T = ρ_e), so by convexity of
 * log Z, log Z(θ) ≤ Σ_T μ_T log Z(θ^T), each term exact on its forest (sum-product from the leaves).
 * A zero message m_ev(k) = −∞ is kept only where arc consistency rules x_v = k out (no
 * configuration of positive weight has it: certifiableMessages), so θ^T_v(k) = −∞ in every forest
 * loses nothing, and the pair terms read it as 0: the identity is needed on configurations of
 * positive weight only; every other message is made finite. At a TRW fixed point this is the TRW value (Wainwright et al.'s reparametrisation).
 * The parameters and each forest's log Z are computed in WASM (assembly/variational/trw_bound.ts);
 * here only each forest's elimination order (leaves first) is found.
 */
export function treeDecompositionBound(solver: BPSolver, ei: Int32Array, ej: Int32Array, edgeFactor: ArrayLike<number>, forests: Uint8Array[], mu: ArrayLike<number>): number {
  return solver.withMessages(certifiableMessages(solver), () => forestsBound(solver, ei, ej, edgeFactor, forests, mu));
}

/** Messages below this (finite or not) on a state some configuration of positive weight can take count as −MESSAGE_FLOOR in the bound. */
const MESSAGE_FLOOR = 700;

/**
 * The messages the bound may read: −∞ exactly on the states arc consistency rules out (no
 * configuration of positive weight has them, so the identity need not hold there), and on every
 * other state at least −MESSAGE_FLOOR — any finite messages reparametrise exactly. BP's own −∞
 * messages lie within the ruled-out states in exact arithmetic, but damped or diverging log messages
 * are not exact: −∞ on states that are not ruled out (Alchemy_11 with damping 0.5: a "bound" of
 * 1274.98 against an exact 1396.01) and −10^305, which cancelled to nothing (6.5e306).
 */
function certifiableMessages(solver: BPSolver): Float64Array {
  const m = solver.model, msg = solver.messages(), at = solver.msgStart;
  const { start, alive } = arcConsistentStates(m);
  for (let p = 0; p < m.scopeStart[m.nFactors]; p++) {
    const v = m.scopeVars[p];
    for (let k = 0; k < m.card[v]; k++) {
      const i = at[p] + k;
      // Any finite messages certify a bound: a NaN one (Math.max kept it) gave an "upper bound" of −∞.
      msg[i] = alive[start[v] + k] ? (msg[i] >= -MESSAGE_FLOOR ? msg[i] : -MESSAGE_FLOOR) : -Infinity;
    }
  }
  return msg;
}

function forestsBound(solver: BPSolver, ei: Int32Array, ej: Int32Array, edgeFactor: ArrayLike<number>, forests: Uint8Array[], mu: ArrayLike<number>): number {
  const m = solver.model, n = m.n, E = ei.length, a = solver.fg.arena, st = solver.state;
  let total = 0;
  for (let v = 0; v < n; v++) total += m.card[v];
  const unaryPtr = a.alloc(8 * total), workPtr = a.alloc(8 * total), orderPtr = a.alloc(8 * E), rootsPtr = a.alloc(4 * n);
  solver.engine.call('trw unary', (k) => k.trwUnary(st, unaryPtr));
  // Adjacency of all edges; a forest's edges are those it marks.
  const adjStart = new Int32Array(n + 1), adj = new Int32Array(2 * E), fill = new Int32Array(n);
  for (let e = 0; e < E; e++) (adjStart[ei[e] + 1]++, adjStart[ej[e] + 1]++);
  for (let v = 0; v < n; v++) adjStart[v + 1] += adjStart[v];
  for (let e = 0; e < E; e++) (adj[adjStart[ei[e]] + fill[ei[e]]++] = e, adj[adjStart[ej[e]] + fill[ej[e]]++] = e);
  const seen = new Uint8Array(n), bfs = new Int32Array(n), parentEdge = new Int32Array(n);
  const order = new Int32Array(2 * E), roots = new Int32Array(n);
  let bound = m.logConst;
  forests.forEach((T, t) => {
    if (!(mu[t] > 0)) return;
    seen.fill(0);
    let head = 0, tail = 0, nRoots = 0;
    for (let r = 0; r < n; r++) {
      if (seen[r]) continue;
      seen[r] = 1;
      roots[nRoots++] = r;
      parentEdge[r] = -1;
      bfs[tail++] = r;
      while (head < tail) {
        const v = bfs[head++];
        for (let q = adjStart[v]; q < adjStart[v + 1]; q++) {
          const e = adj[q], u = ei[e] === v ? ej[e] : ei[e];
          if (!T[e] || seen[u]) continue;
          seen[u] = 1;
          parentEdge[u] = e;
          bfs[tail++] = u;
        }
      }
    }
    // Children after their own children: BFS order reversed.
    let nOrder = 0;
    for (let q = n - 1; q >= 0; q--) {
      const v = bfs[q], e = parentEdge[v];
      if (e < 0) continue;
      order[2 * nOrder] = edgeFactor[e];
      order[2 * nOrder + 1] = ei[e] === v ? 0 : 1;
      nOrder++;
    }
    a.i32(orderPtr, 2 * nOrder).set(order.subarray(0, 2 * nOrder));
    a.i32(rootsPtr, nRoots).set(roots.subarray(0, nRoots));
    bound += mu[t] * solver.engine.call('trw forest', (k) => k.trwForestLogZ(st, unaryPtr, workPtr, orderPtr, nOrder, rootsPtr, nRoots));
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
  /** ρ per factor of the pairwise model the bound was computed on (factors on one scope merged, factors of arity > 2 expanded: factorNodesPairwise). */
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
  /** Largest message change of the final BP run (in log space: BPRunInfo.maxResidual). */
  maxResidual: number;
  /** Factors of arity > 2 that became nodes of the pairwise form (0 on pairwise models). */
  factorNodes: number;
}

/**
 * TRW's BP settings: on a model with factors of arity > 2 (whose factor nodes join their variables
 * by hard consistency tables) the residual schedule with damping 0.5 unless a schedule or damping is
 * given — undamped parallel sweeps diverge there (Alchemy_11: no convergence in 6000 iterations and a
 * bound of 10^5 against 1590; CSP_12: 764 against 71.3).
 */
export function trwConfig(model: Model, opts: TRWOptions): BPConfig {
  const higher = !model.isPairwise && opts.schedule === undefined && opts.damping === undefined;
  return bpConfig(higher ? { ...opts, schedule: 'residual', damping: 0.5 } : opts);
}

/**
 * TRW's upper bound (factor graphs of any arity, via factorNodesPairwise): random-tree ρ,
 * conditional-gradient steps, then the certified decomposition. Refuses option names TRWOptions does
 * not have (a misspelt { trwTree } ran the default).
 */
export function trwUpperBound(engine: Engine, model: Model, opts: TRWOptions = {}): TRWBound {
  checkOptionKeys(opts, TRW_OPTION_KEYS);
  return trwBound(engine, model, opts);
}

/** trwUpperBound without the option-name check: runTRW checked them, and runBounds passes mean field's too. */
export function trwBound(engine: Engine, model: Model, opts: TRWOptions): TRWBound {
  const c: BPConfig = trwConfig(model, opts);
  const t = { ...TRW_DEFAULTS, ...definedOnly({ seed: opts.seed, trwTrees: opts.trwTrees, trwSteps: opts.trwSteps }) };
  checkCount('trwTrees', t.trwTrees, 1);
  checkCount('trwSteps', t.trwSteps, 0);
  seedWords(t.seed);
  const { model: m, factorNodes } = factorNodesPairwise(mergeRepeatedScopes(model));
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
    // Progress by BP runs (TRW on Pedigree_12 and linkage_11 took 10 s in silence).
    const total = 1 + (E > 0 ? t.trwSteps : 0);
    const tick = (done: number) => opts.onProgress?.({ phase: 'trw', done, total });
    let cur = evaluate(appearance(forests, mu, E));
    tick(1);
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
      tick(2 + k);
    }
    if (!opts.signal?.aborted) tick(total);
    if (current !== cur.rho) cur = evaluate(cur.rho); // the last trial was rejected: back to the accepted ρ (warm start)
    const logZ = treeDecompositionBound(solver, ei, ej, edgeFactor, forests, mu);
    return {
      logZ, freeEnergy: cur.logZ, marginals: solver.marginals().slice(0, model.n), rho: factorWeights(cur.rho), converged: cur.converged, iterations,
      initialLogZ, steps, trees: forests.length, maxResidual: cur.maxResidual, factorNodes,
    };
  } finally {
    solver.dispose();
  }
}

/** TRW: the upper bound on log Z and its pseudo-marginals. */
export function runTRW(engine: Engine, model: Model, opts: TRWOptions = {}): InferenceResult {
  checkOptionKeys(opts, TRW_OPTION_KEYS);
  const t0 = performance.now();
  const c = trwConfig(model, opts);
  refuseZeroModel(model, 'trw', engine);
  const b = trwBound(engine, model, opts);
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
    warnings: trwWarnings(b, c, opts),
  };
}

/** A TRW run whose last BP stopped at maxIterations: its bound still holds (certified by the trees) but may be loose. */
export function trwWarnings(b: TRWBound, c: BPConfig, opts: TRWOptions): string[] {
  return b.converged || opts.signal?.aborted ? [] : [notConverged('TRW', b, c, 'the upper bound still holds (certified by its tree decomposition) but may be far from tight, and the pseudo-marginals are those of the last iteration')];
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
    factorNodes: b.factorNodes,
    schedule: c.schedule,
    damping: c.damping,
    maxIterations: c.maxIterations,
    tolerance: c.tolerance,
    seed: opts.seed ?? TRW_DEFAULTS.seed,
  };
}
