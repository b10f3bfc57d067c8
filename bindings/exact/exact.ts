// Exact inference: log Z and every node marginal, by enumeration (small models), by variable elimination
// on a junction tree built from an elimination ordering (pairwise models whose clique tables fit), or by
// bucket elimination with streamed cliques (factor graphs of any arity; exact samples and MAP too).
// Orderings, the tree, the checkpointing schedule and the memory layout are planned in TypeScript;
// every number is computed in WASM (assembly/exact/exact_elim.ts, assembly/exact/exact_enum.ts).
// Files: orderings.ts (elimination orderings), junction-tree.ts (the tree and the schedule),
// elimination.ts (the message passes), enumeration.ts (enumeration on the factor graph),
// bucket-elimination.ts (bucket elimination on the factor graph).

import { releasePlannerMemory, WASM_MAX_BYTES, type Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import type { Progress } from '../core/result.ts';
import { EngineError, ModelError } from '../core/errors.ts';
import { checkBoolean, checkOptionKeys } from '../core/options.ts';
import { candidateOrders as orderCandidates, naturalOrder, ORDERINGS, PLANNED_PAST_LIMIT_LOG2, type OrderStats, type OrderingGraph, type OrderingHeuristic } from './orderings.ts';
import { buildTree, schedule, exactTuning } from './junction-tree.ts';
import { runElimination } from './elimination.ts';
import { enumerationPlan, enumerationRefusal, fixedStates, noneFixed, runFactorGraphEnumeration, type EnumerationPlan } from './enumeration.ts';
import { fmtBytes, fmtEntries, MAX_ENUMERATION, MemoryBudgetExceeded, RangeExceeded, type ExactOutcome } from './outcome.ts';
import { bucketPlan, bucketRefusal, interactionGraph, type BucketPlan } from './bucket-plan.ts';
import { hopelessLattice } from './lattice-bound.ts';
import { exactModel } from './separable.ts';
import { decodeSlices, reslice, runAndSumSlices, slicedWork, sliceToFit, type Decoded, type SlicedPlan } from './slicing.ts';
import { requirePairwise } from '../core/model.ts';
import { mulberry32 } from '../core/seed.ts';
import { annealOrder, searchObjective } from './order-search.ts';
import { searchContractionTree } from './tree-search.ts';
import { ORDER_ANNEALING_SHARE, orderSearchWork, PROBE_MAX_SETUP_WORDS, RESCUE_ANNEALING_WORK, RESCUE_FACTOR, RESCUE_PROBE_FACTOR, rescueAnnealing, rescueTreeSearch, SEARCH_MAX_BYTES, searchSetup, secondRescue, trapped, type GreedyBucketChoice } from './rescue.ts';

export type { GreedyBucketChoice };

export { orderSearchWork, RESCUE_FACTOR, RESCUE_PROBE_FACTOR, RESCUE_WORK, rescueStages, SEARCH_MAX_BYTES, searchSetup } from './rescue.ts';

export { ORDERINGS, exactTuning, MAX_ENUMERATION, type OrderingHeuristic };

/** Every option of ExactOptions (infer's `exact`). */
export const EXACT_OPTION_KEYS: readonly string[] = [
  'maxFlops', 'maxMemory', 'maxMessageEntries', 'maxTableEntries', 'method', 'onProgress', 'orderRestarts', 'orderSearchWork', 'orderings', 'speedSlicing', 'treeSearch',
];

/** Options of exactInference (`infer`'s `exact` option): which algorithm and the limits past which it refuses. */
export interface ExactOptions {
  /** 'elimination' takes the junction tree on pairwise models and bucket elimination otherwise; 'bucket' forces bucket elimination. */
  method?: 'auto' | 'enumeration' | 'elimination' | 'bucket';
  /** Largest message bucket elimination accepts (entries). Default 2^26. */
  maxMessageEntries?: number;
  /** Most clique configurations bucket elimination streams (both passes, all slices). Default 2^34. */
  maxFlops?: number;
  /**
   * WASM bytes exact inference's messages may use: the junction tree's (past it, auto runs bucket
   * elimination and elimination refuses) and one bucket elimination's, one slice's (past it the plan
   * is sliced). Enumeration holds only the model and its marginals. Default 2 GiB.
   */
  maxMemory?: number;
  /** Work budget of the order search (annealing of the order, then of the contraction tree; bitset words touched); 0 turns both off. Default: see orderSearchWork. */
  orderSearchWork?: number;
  /** Run the contraction-tree search after the order annealing (within orderSearchWork). Default true. */
  treeSearch?: boolean;
  /** Randomised greedy restarts of the order search (bucket elimination). Default 16 when the best heuristic's plan streams > 2^30 configurations, else 0. */
  orderRestarts?: number;
  /** Largest clique table (product of the clique's cardinalities) elimination accepts. Default 2^25. */
  maxTableEntries?: number;
  /** Orderings to try; the one with the smallest total table size within the limit is used. Default: all. */
  orderings?: OrderingHeuristic[];
  /**
   * Bucket elimination: slice past the memory budget while smaller messages make the run cheaper
   * (slicedCost in slicing.ts: messages past 2^18 entries leave the caches). Default true.
   */
  speedSlicing?: boolean;
  /**
   * Told bucket elimination's progress as each clique's stream ends: phase 'exact', `done` and
   * `total` in clique configurations streamed (both passes, every slice; total = the result's
   * flops). The junction tree and enumeration do not report progress.
   */
  onProgress?: (p: Progress) => void;
}

/** log Z and every node marginal, computed exactly, with the plan's size. */
export interface ExactResult {
  /** Natural log of the partition function, including model.logConst; −Infinity if every configuration has zero potential. */
  logZ: number;
  /** marginals[v][k] = p(x_v = k). Reading it throws an EngineError when logZ = −Infinity. */
  marginals: Float64Array[];
  /** 'enumeration', or 'elimination' (junction tree or bucket elimination: see `algorithm`). */
  method: 'enumeration' | 'elimination';
  /** Largest clique size − 1 (enumeration: the variables of the largest enumerated component − 1). */
  treewidth: number;
  /** Entries of the largest clique table (enumeration: the number of configurations visited). */
  maxTableEntries: number;
  /** Name of the elimination ordering used ('gray-code' for enumeration). */
  ordering: string;
  /** Wall time of the plan and both passes, seconds. */
  seconds: number;
  /** Which exact algorithm ran: enumeration, the junction tree (pairwise), or bucket elimination (any arity). */
  algorithm: 'enumeration' | 'junction-tree' | 'bucket';
  /** Entries of the largest message (bucket elimination; else the largest table). */
  largestMessage: number;
  /** Clique configurations streamed (bucket elimination: both passes, all slices; else the table entries visited). */
  flops: number;
  /** Bucket elimination: the slices summed (1: not sliced). */
  slices?: number;
  /** Bucket elimination: the variables conditioned on (empty when not sliced). */
  slicedVariables?: number[];
  /** Bucket elimination: one slice's planned WASM bytes. */
  memoryBytes?: number;
  /** Bucket elimination: which search produced the order ('greedy': a greedy heuristic's order, no search ran or none beat it). */
  planSearch?: PlanSearch;
}

export interface EliminationPlan {
  ordering: Int32Array;
  treewidth: number;
  maxTableEntries: number;
  totalTableEntries: number;
  name: string;
}

export const DEFAULT_MAX_TABLE_ENTRIES = 2 ** 25;
export const DEFAULT_MAX_MESSAGE_ENTRIES = 2 ** 26;
export const DEFAULT_MAX_FLOPS = 2 ** 34;
export const DEFAULT_MAX_MEMORY = 2 ** 31;

/** A bucket plan's order of preference: within the message limit first, then log2 flops plus each bit of message past the limit (what slicing would roughly cost). */
function planScore(plan: BucketPlan, maxMessage: number): number {
  return Math.log2(plan.flops) + Math.max(0, Math.log2(plan.maxMessage / maxMessage));
}

/**
 * Slicing takes any message size, but one clique of more than maxFlops configurations means no plan
 * from that order fits: greedy runs stop there and refusals stay fast.
 */
const bucketCliqueLimit = (maxFlops: number): number => Math.min(maxFlops, 2 ** 48);

/** The clique size bucket elimination's greedy orderings are judged against (they stop far past it). */
const bucketOrderLimit = (opts: ExactOptions): number => bucketCliqueLimit(checkLimit(opts.maxFlops ?? DEFAULT_MAX_FLOPS, 'maxFlops')) / 2 ** PLANNED_PAST_LIMIT_LOG2;

/**
 * A greedy order's plan is sized only until its configurations pass this many times maxFlops
 * (bucketPlan's stopPast): past RESCUE_PROBE_FACTOR no search runs and the plan is refused, and its
 * sizes are then lower bounds. The separators of a 1000×1000 lattice's RCM order (1000 variables
 * each) took 10 s of a 13.7 s refusal.
 */
const PLAN_STOP_PAST = 2 * RESCUE_PROBE_FACTOR;

/** The ordering heuristics' orders bucket elimination plans from (greedy runs stop past its limits). */
function bucketOrderCandidates(graph: OrderingGraph, opts: ExactOptions): OrderStats[] {
  return orderCandidates(graph, opts.orderings ?? ORDERINGS, bucketOrderLimit(opts), 8);
}

/**
 * Bucket elimination's greedy plan: every ordering heuristic on the free variables' interaction
 * graph, the one streaming the fewest clique configurations among those whose largest message is
 * within the limit (if none is, the one with the smallest planScore: what it would cost sliced), then
 * randomised restarts when it is expensive. `orders`: bucketOrderCandidates of the model's own graph,
 * already computed (auto shares them with the junction tree), used when no variable is fixed (the
 * interaction graph is then that graph). No engine argument: the orderings run on the planner's instance.
 * `condition`: variables planned as fixed too (the slices' plan of a re-search after slicing).
 */
export function greedyBucketChoice(model: Model, opts: ExactOptions = {}, orders?: OrderStats[], condition: readonly number[] = []): GreedyBucketChoice {
  const maxMessage = checkLimit(opts.maxMessageEntries ?? DEFAULT_MAX_MESSAGE_ENTRIES, 'maxMessageEntries');
  const maxFlops = checkLimit(opts.maxFlops ?? DEFAULT_MAX_FLOPS, 'maxFlops');
  const known = fixedStates(model), impossible = known.impossible;
  // `condition`: free variables held fixed too (a slice's plan: reslice in slicing.ts; state 0 stands
  // for every slice's), in a copy: fixedStates' arrays are the model's for every later call.
  const fixed = condition.length > 0 ? known.fixed.slice() : known.fixed;
  for (const v of condition) fixed[v] = 0;
  const graph = interactionGraph(model, fixed);
  const limitClique = bucketCliqueLimit(maxFlops);
  const cands = orders && noneFixed(fixed) ? orders : bucketOrderCandidates(graph, opts);

  let best: { plan: BucketPlan; name: string } | null = null;
  let bestFeasible = false;
  // Symbolic plans (the costly part of a refusal) only for orders whose cliques could fit; when none
  // could, for the one with the smallest largest clique.
  let planned = cands.filter((c) => c.order.length > 0 && !c.aborted && c.maxEntries <= limitClique);
  if (planned.length === 0) planned = cands.filter((c) => c.order.length > 0).sort((p, q) => p.maxEntries - q.maxEntries).slice(0, 1);
  // Twin heuristics (min-weight and min-degree, weighted and plain min-fill on one cardinality) share
  // one order: planned once, under the first name.
  const seen = new Set<Int32Array>();
  for (const c of planned) {
    if (seen.has(c.order)) continue;
    seen.add(c.order);
    const plan = bucketPlan(model, c.order, fixed, impossible, PLAN_STOP_PAST * maxFlops);
    const feasible = plan.maxMessage <= maxMessage && plan.flops <= maxFlops;
    const better = !best || (feasible && !bestFeasible) || (feasible === bestFeasible && (feasible ? plan.flops < best.plan.flops : planScore(plan, maxMessage) < planScore(best.plan, maxMessage)));
    if (better) (best = { plan, name: c.name }), (bestFeasible = feasible);
  }
  // Randomised restarts of the greedy heuristics (ties broken by a seeded relabelling of the
  // variables) when the best plan fits but is expensive (> 2^30 configurations; refusals stay
  // fast): a fixed count, so the order, and with it every result, is reproducible.
  const restarts = opts.orderRestarts ?? (best && best.plan.flops <= maxFlops && best.plan.flops > 2 ** 30 ? 16 : 0);
  const rand = mulberry32(0x0d3e);
  for (let r = 0; r < restarts && best; r++) {
    const perm = Int32Array.from({ length: model.n }, (_, v) => v);
    for (let v = model.n - 1; v > 0; v--) {
      const w = Math.floor(rand() * (v + 1));
      [perm[v], perm[w]] = [perm[w], perm[v]];
    }
    const pairs = graph.pairwiseFactors();
    const i = Int32Array.from(pairs.i, (a, k) => Math.min(perm[a], perm[pairs.j[k]]));
    const j = Int32Array.from(pairs.i, (a, k) => Math.max(perm[a], perm[pairs.j[k]]));
    const card = new Int32Array(model.n);
    for (let v = 0; v < model.n; v++) card[perm[v]] = graph.card[v];
    const inverse = new Int32Array(model.n);
    for (let v = 0; v < model.n; v++) inverse[perm[v]] = v;
    const heuristic = r % 2 === 0 ? 'minfill' : 'weightedminfill';
    const c = orderCandidates({ n: model.n, card, pairwiseFactors: () => ({ i, j }) }, [heuristic], limitClique)[0];
    if (c.order.length === 0) continue;
    const plan = bucketPlan(model, Int32Array.from(c.order, (v) => inverse[v]), fixed, impossible, PLAN_STOP_PAST * maxFlops);
    const feasible = plan.maxMessage <= maxMessage && plan.flops <= maxFlops;
    if ((feasible && !bestFeasible) || (feasible === bestFeasible && planScore(plan, maxMessage) < planScore(best.plan, maxMessage))) (best = { plan, name: `${heuristic} (restart ${r + 1})` }), (bestFeasible = feasible);
  }
  const rcm = cands.find((c) => c.name === 'rcm' && c.order.length > 0)?.order ?? null;
  return { best, feasible: bestFeasible, maxMessage, maxFlops, graph, fixed, impossible, rcm };
}

/**
 * Bucket elimination's plan: the greedy plan (greedyBucketChoice), then annealing of its order and
 * of its contraction tree when it is expensive (see orderSearchWork). `feasible`: the plan fits
 * unsliced. The searches' kernels run on the planner's engine instance (core/engine.ts, plannerEngine).
 */
export function bucketEliminationPlan(model: Model, opts: ExactOptions = {}, greedy = greedyBucketChoice(model, opts)): BucketChoice {
  const { maxMessage, maxFlops, graph, fixed, impossible } = greedy;
  let { best, feasible: bestFeasible } = greedy;
  if (!best) {
    // Every ordering was abandoned far past the limit: the natural order's plan names the sizes.
    const plan = bucketPlan(model, naturalOrder(model.n), fixed, impossible, PLAN_STOP_PAST * maxFlops);
    return { plan, name: 'natural', feasible: false, maxMessage, maxFlops, search: null };
  }
  // Local search from the best greedy order (deterministic work budget): annealing of the order,
  // then of the contraction tree from the better of the two; each kept only when it is better.
  const setup = searchSetup(model.n, model.nFactors);
  // A probe past the rescue range (RESCUE_PROBE_FACTOR) only with the tree search and a small set-up.
  const probe = best.plan.flops > RESCUE_FACTOR * maxFlops;
  const probes = probe && (opts.treeSearch ?? true) && setup.treeWords <= PROBE_MAX_SETUP_WORDS;
  const work = opts.orderSearchWork ?? (probe && !probes ? 0 : orderSearchWork(best.plan.flops, maxFlops));
  let search: OrderSearchReport | null = null;
  if (work > 0) {
    const greedyFlops = best.plan.flops, greedyMaxMessage = best.plan.maxMessage;
    const tree = opts.treeSearch ?? true;
    const orderWork = !tree ? work : greedyFlops > maxFlops ? Math.min(work, RESCUE_ANNEALING_WORK) : work * ORDER_ANNEALING_SHARE;
    const keep = (plan: BucketPlan, name: string): boolean => {
      const feasible = plan.maxMessage <= maxMessage && plan.flops <= maxFlops;
      const kept = (feasible && !bestFeasible) || (feasible === bestFeasible && planScore(plan, maxMessage) < planScore(best!.plan, maxMessage));
      if (kept) (best = { plan, name }), (bestFeasible = feasible);
      return kept;
    };
    const skipped: ('annealing' | 'tree')[] = [];
    const annealing = setup.annealWords <= orderWork && setup.annealBytes <= SEARCH_MAX_BYTES;
    if (!annealing) skipped.push('annealing');
    const annealOpts = { maxLog2Message: Math.log2(maxMessage), work: orderWork, penalty: 1 };
    // The annealing alone in the rescue range: staged, as the tree search would be.
    const a = !annealing ? null : !tree && greedyFlops > maxFlops ? rescueAnnealing(graph, best.plan.order, annealOpts, maxFlops) : annealOrder(graph, best.plan.order, annealOpts);
    const annealed = !!a && keep(bucketPlan(model, a.order, fixed, impossible), `${best.name} + annealing`);
    const treeWork = work - orderWork;
    const treeRuns = tree && setup.treeWords <= treeWork && setup.treeBytes <= SEARCH_MAX_BYTES;
    if (tree && !treeRuns) skipped.push('tree');
    const scopes = treeRuns ? Array.from({ length: model.nFactors }, (_, f) => model.scope(f).filter((v) => fixed[v] < 0)) : [];
    const g = { ...graph, scopes }, treeOpts = { maxLog2Message: Math.log2(maxMessage), work: treeWork };
    const from = best;
    const t = !treeRuns ? null : greedyFlops > maxFlops ? rescueTreeSearch(g, from.plan.order, treeOpts, maxFlops, { probe }) : searchContractionTree(g, from.plan.order, treeOpts);
    let treed = !!t?.improved && keep(bucketPlan(model, t.order, fixed, impossible), `${from.name} + tree search`);
    // A rescue that stood still short of the limit was caught in its start's basin, or the model is
    // out of reach: once more from RCM's order (a global, banded order where the start was a local
    // greedy one).
    const r = t && greedyFlops > maxFlops && !from.name.startsWith('rcm') && trapped(t, maxFlops) ? secondRescue(model, greedy, g, treeOpts, searchObjective(treeOpts.maxLog2Message, 1)(t)) : null;
    if (r && keep(bucketPlan(model, r.order, fixed, impossible), 'rcm + tree search')) treed = true;
    const treeWorkDone = (t?.work ?? 0) + (r?.work ?? 0);
    search = {
      evaluations: a?.evaluations ?? 0, work: (a?.work ?? 0) + treeWorkDone, improved: annealed || treed, greedyFlops, greedyMaxMessage,
      by: treed ? 'tree' : annealed ? 'annealing' : 'greedy', treeProposals: (t?.proposals ?? 0) + (r?.proposals ?? 0), treeWork: treeWorkDone, treeStages: (t ? t.stages ?? 1 : 0) + (r?.stages ?? 0), skipped,
    };
  }
  return { ...best, feasible: bestFeasible, maxMessage, maxFlops, search };
}

/** What the order search did (bucketEliminationPlan). */
export interface OrderSearchReport {
  evaluations: number;
  /** Bitset words touched. */
  work: number;
  /** Its order replaced the greedy one. */
  improved: boolean;
  /** The best greedy plan's configurations and largest message. */
  greedyFlops: number;
  greedyMaxMessage: number;
  /** Which search produced the plan: the greedy order kept, the order annealing, or the tree search. */
  by: PlanSearch;
  /** Rotations the tree search proposed, and its bitset words. */
  treeProposals: number;
  treeWork: number;
  /** Stages the tree search ran (a plan past maxFlops: up to RESCUE_STAGES.length, fewer when it stopped early, plus the second start's from RCM's order when the first stopped short of the limit; else 1; 0: none ran). */
  treeStages: number;
  /** Searches not run because building their bitsets would cost more than their budget or SEARCH_MAX_BYTES (searchSetup). */
  skipped: ('annealing' | 'tree')[];
}

/** Which search produced a bucket plan's order (ExactResult.planSearch). */
export type PlanSearch = 'greedy' | 'annealing' | 'tree';

/** bucketEliminationPlan's choice: the plan, its order's name, whether it fits the limits unsliced. */
export interface BucketChoice {
  plan: BucketPlan;
  name: string;
  feasible: boolean;
  maxMessage: number;
  maxFlops: number;
  search: OrderSearchReport | null;
}

// ---------------------------------------------------------------------------------------------------
// Elimination orderings: see orderings.ts.

/** The largest memory budget that means anything: what the engine's memory can hold (WASM: 4 GiB, less the engine's own). */
const ENGINE_BUDGET = WASM_MAX_BYTES - 2 ** 24;

/** A memory budget, checked; one past what the engine can hold is that (an 8 GB budget planned unsliced plans the engine then refused). */
function checkMemory(bytes: number): number {
  if (!(bytes > 0) || !Number.isFinite(bytes)) throw new ModelError(`maxMemory ${bytes} is not a positive number of bytes`);
  return Math.min(bytes, ENGINE_BUDGET);
}

/**
 * The planning options a run may not reach before it plans (or ever): a negative or NaN search
 * budget, a fractional or negative restart count, a non-boolean flag (treeSearch: 'no' ran the
 * search) and a message limit below one entry (accepted where the junction tree ran) were taken.
 */
function checkPlanOptions(opts: ExactOptions): void {
  checkLimit(opts.maxMessageEntries ?? DEFAULT_MAX_MESSAGE_ENTRIES, 'maxMessageEntries');
  checkLimit(opts.maxFlops ?? DEFAULT_MAX_FLOPS, 'maxFlops');
  const w = opts.orderSearchWork;
  if (w !== undefined && !(typeof w === 'number' && w >= 0 && Number.isFinite(w))) throw new ModelError(`orderSearchWork ${String(w)} is not a number ≥ 0`);
  const r = opts.orderRestarts;
  if (r !== undefined && !(Number.isInteger(r) && r >= 0 && r <= 1e6)) throw new ModelError(`orderRestarts ${String(r)} is not an integer in [0, 1000000]`);
  checkBoolean('treeSearch', opts.treeSearch);
  checkBoolean('speedSlicing', opts.speedSlicing);
}

function checkLimit(limit: number, name = 'maxTableEntries'): number {
  if (typeof limit !== 'number' || !(limit >= 1) || !Number.isFinite(limit)) throw new ModelError(`${name} ${String(limit)} is not a positive number`);
  return limit;
}

function candidateOrders(model: Model, opts: ExactOptions): OrderStats[] {
  const limit = checkLimit(opts.maxTableEntries ?? DEFAULT_MAX_TABLE_ENTRIES);
  requirePairwise(model, 'the junction-tree elimination');
  return orderCandidates(model, opts.orderings ?? ORDERINGS, limit);
}

function choose(cands: OrderStats[], limit: number): { best: OrderStats; feasible: boolean } {
  const ok = cands.filter((c) => !c.aborted && c.maxEntries <= limit);
  if (ok.length > 0) {
    ok.sort((p, q) => p.totalEntries - q.totalEntries || p.maxEntries - q.maxEntries);
    return { best: ok[0], feasible: true };
  }
  const all = [...cands].sort((p, q) => p.maxEntries - q.maxEntries || p.treewidth - q.treewidth);
  return { best: all[0], feasible: false };
}

/**
 * The elimination ordering exactInference would use: every requested heuristic is run and the one with
 * the smallest total clique-table size among those within maxTableEntries is kept (if none is within
 * it, the one with the smallest largest clique), on the model with its separable factors split (exactModel). No engine argument: the orderings run on the planner's instance (core/engine.ts, plannerEngine).
 */
export function eliminationPlan(model: Model, opts: ExactOptions = {}): EliminationPlan {
  const limit = checkLimit(opts.maxTableEntries ?? DEFAULT_MAX_TABLE_ENTRIES);
  const { best } = choose(candidateOrders(exactModel(model), opts), limit);
  return { ordering: best.order, treewidth: best.treewidth, maxTableEntries: best.maxEntries, totalTableEntries: best.totalEntries, name: best.name };
}

function refusal(best: OrderStats, limit: number, tried: string[]): EngineError {
  const atLeast = best.aborted ? 'at least ' : '';
  const tw = Number.isFinite(best.treewidth) ? `treewidth ${atLeast}${best.treewidth}` : 'treewidth unknown (huge)';
  return new EngineError(
    `${tw}: the largest clique table would have ${atLeast}${fmtEntries(best.maxEntries)} entries (${fmtBytes(best.maxEntries * 8)}), ` +
      `past the limit of ${fmtEntries(limit)} entries (best of the orderings ${tried.join(', ')}: ${best.name})`,
  );
}

// ---------------------------------------------------------------------------------------------------

function result(out: ExactOutcome, rest: Omit<ExactResult, 'logZ' | 'marginals'>): ExactResult {
  const r = { logZ: out.logZ, ...rest } as ExactResult;
  if (out.marginals) r.marginals = out.marginals;
  else {
    Object.defineProperty(r, 'marginals', {
      enumerable: true,
      get() {
        throw new EngineError(`${out.zeroReason ?? 'every configuration has zero potential'} (log Z = −Infinity): the marginals are undefined`);
      },
    });
  }
  return r;
}

/**
 * auto's cost model on pairwise models, in units of one configuration streamed by bucket
 * elimination: its plan costs flops + BUCKET_MESSAGE_COST · (entries of all messages: each is
 * written, rescaled, turned into δ, and its memory first touched), the junction
 * tree JUNCTION_TREE_ENTRY_COST per clique-table entry. Fitted to the times of both on the UAI 2014
 * pairwise files (AMD EPYC, medians of 3, fresh engines): bucket elimination ≈ 2 ns per configuration
 * (ObjectDetection_11) + 5.3–7.5 ns per message entry (the grids, DBN_11; CSP_11 is slower still),
 * the junction tree 2.7 ns per entry on Grids_15, 4.2 on Grids_11, 5.5 on ObjectDetection_11,
 * 8–9 on DBN_11 and CSP_11, 13 on Segmentation_11 (small). Any JUNCTION_TREE_ENTRY_COST in
 * (2.3, 2.9) picks the faster of the two wherever one is clearly faster (bucket elimination on
 * ObjectDetection_11 only; DBN_11 and Segmentation_11 are ties within the run-to-run noise of
 * ±10 %); BUCKET_SETUP is ≈ 2 ms more than the junction tree's (on tiny models such as Grids_12
 * the junction tree is faster).
 */
const BUCKET_MESSAGE_COST = 3.3;
const BUCKET_SETUP = 1e6;
const JUNCTION_TREE_ENTRY_COST = 2.6;
/**
 * The junction tree's entries cost more once its schedule holds more than JUNCTION_TREE_LARGE_BYTES
 * (its tables leave the caches): 8–9 ns per entry on DBN_11 (344 MiB) and CSP_11 (481 MiB) against
 * 2.7–4.2 on the grids (≤ 157 MiB). With the factor, auto takes bucket elimination there: 290 ms
 * against 456 and 593 against 911 (medians of 3, alternated), in 88 and 17 MiB of WASM memory
 * against 361 and 499 (bucket elimination slices them for speed, which its greedy plan's cost
 * does not count).
 */
const JUNCTION_TREE_LARGE_BYTES = 2 ** 28;
const JUNCTION_TREE_LARGE_FACTOR = 2.5;

/**
 * Whether bucket elimination's greedy plan from these orders (a pairwise model's, no variable fixed)
 * is sure to cost more than `jtCost` by auto's model, without planning it: from an order whose
 * cliques total T entries it streams 2T configurations (up and down) and writes at least T / (the
 * largest cardinality) message entries. Not when its restarts would run (plans past 2^30), which
 * could find other orders. On binary models the bound is 3.65 T against the junction tree's 2.6 T.
 */
function bucketCannotWin(model: Model, cands: OrderStats[], jtCost: number): boolean {
  let maxCard = 1;
  for (let v = 0; v < model.n; v++) maxCard = Math.max(maxCard, model.card[v]);
  let T = Infinity;
  for (const c of cands) if (!c.aborted) T = Math.min(T, c.totalEntries);
  return 2 * T <= 2 ** 30 && BUCKET_SETUP + 2 * T + (BUCKET_MESSAGE_COST * T) / maxCard >= jtCost;
}

/**
 * Exact log Z (natural log, including model.logConst) and node marginals.
 * method 'auto' (default): on pairwise models the cheaper by estimated cost (BUCKET_MESSAGE_COST) of
 * the junction tree (when the best ordering's largest clique table is within maxTableEntries) and
 * unsliced bucket elimination;
 * past the clique-table limit (and on models with a factor of arity > 2) bucket elimination when its largest message is within maxMessageEntries and its work within
 * maxFlops; else enumeration when that visits at most 2^30 configurations (observed variables held
 * fixed, independent components one by one); else a refusal naming the treewidth, the largest
 * message, the memory and the work the best order found would need. A model with Z = 0
 * gives log Z = −Infinity, and reading its marginals throws an EngineError saying why.
 */
export function exactInference(engine: Engine, model: Model, opts: ExactOptions = {}): ExactResult {
  // A misspelt option ran the default: the other entry points check theirs too.
  checkOptionKeys(opts, EXACT_OPTION_KEYS, 'exact');
  try {
    return runExact(engine, model, opts);
  } finally {
    releasePlannerMemory();
  }
}

function runExact(engine: Engine, model: Model, opts: ExactOptions): ExactResult {
  const t0 = performance.now();
  // null is no method (opts.method ?? 'auto' ran auto for it).
  const method = opts.method === undefined ? 'auto' : opts.method;
  checkPlanOptions(opts);
  if (method !== 'auto' && method !== 'enumeration' && method !== 'elimination' && method !== 'bucket') {
    throw new ModelError(`unknown exact method "${method as string}"; expected auto, enumeration, elimination or bucket`);
  }
  const limit = checkLimit(opts.maxTableEntries ?? DEFAULT_MAX_TABLE_ENTRIES);
  const maxMemory = checkMemory(opts.maxMemory ?? DEFAULT_MAX_MEMORY);
  const seconds = (): number => (performance.now() - t0) / 1000;
  const zeroReason = model.zeroReason();
  if (zeroReason !== null) {
    return result({ logZ: -Infinity, marginals: null, zeroReason }, { method: 'enumeration', algorithm: 'enumeration', treewidth: 0, maxTableEntries: 0, largestMessage: 0, flops: 0, ordering: 'none', seconds: seconds() });
  }
  let plan: EnumerationPlan | null = null;
  const enumerable = (): boolean => (plan ??= enumerationPlan(model)).configs <= MAX_ENUMERATION;
  const enumerate = (): ExactResult => {
    plan ??= enumerationPlan(model);
    const out = runFactorGraphEnumeration(engine, model, plan);
    const width = plan.components.reduce((w, c) => Math.max(w, c.vars.length), 0);
    return result(out, { method: 'enumeration', algorithm: 'enumeration', treewidth: Math.max(0, width - 1), maxTableEntries: plan.configs, largestMessage: 0, flops: plan.configs, ordering: 'gray-code', seconds: seconds() });
  };
  // A large lattice whose grid alone puts every plan past the limits: refused without orderings
  // (its bonds' factors checked to couple, so the bound holds for the split model below).
  const lattice = method === 'elimination' || method === 'enumeration' ? null : hopelessLattice(model, checkLimit(opts.maxFlops ?? DEFAULT_MAX_FLOPS, 'maxFlops'), method === 'auto' ? { maxTableEntries: limit, enumerationLimit: MAX_ENUMERATION } : undefined);
  if (lattice !== null) throw new EngineError(lattice);
  // Planned and run with its separable factors split into unary ones (they couple nothing).
  model = exactModel(model);
  if (method === 'enumeration') return enumerate();
  /** Bucket elimination, sliced to fit maxMemory; `before` is the junction tree's refusal when that was tried first. */
  const bucket = (before?: EngineError, sp = slicedBucketPlan(model, opts)): ExactResult => {
    if (!sp.fits) {
      if (method === 'auto' && enumerable()) return enumerate();
      const lead = before ? `${before.message}; ` : '';
      throw new EngineError(`${lead}${sp.refusal}${method === 'auto' ? `; ${enumerationRefusal(plan_())}` : ''}`);
    }
    return slicedResult(sp, runAndSumSlices(engine, sp.model, sp.sliced, opts.onProgress), seconds());
  };
  const plan_ = (): EnumerationPlan => (plan ??= enumerationPlan(model));
  if (method === 'bucket' || !model.isPairwise) return bucket();
  // auto on a model with no fixed variable: one set of orders for both, when bucket elimination's
  // limits let greedy runs go at least as far as the junction tree's (so its choice is as good).
  const shared = method === 'auto' && bucketOrderLimit(opts) >= limit && noneFixed(fixedStates(model).fixed);
  const cands = shared ? bucketOrderCandidates(model, opts) : candidateOrders(model, opts);
  const { best, feasible } = choose(cands, limit);
  // Past the clique-table limit, bucket elimination streams the cliques and stores messages only.
  if (!feasible) {
    const jt = refusal(best, limit, cands.map((c) => c.name));
    if (method === 'auto') return bucket(jt, slicedBucketPlan(model, opts, shared ? () => greedyBucketChoice(model, opts, cands) : undefined));
    throw jt;
  }
  // Both fit: auto takes the cheaper plan by estimated cost (see BUCKET_MESSAGE_COST), greedy plan
  // against greedy plan; bucket elimination's order search runs only when bucket elimination is
  // taken (it can only make that plan cheaper still).
  const tree = buildTree(model, best.order);
  const jtCost = JUNCTION_TREE_ENTRY_COST * best.totalEntries * (method === 'auto' && schedule(tree, best.order).bytes > JUNCTION_TREE_LARGE_BYTES ? JUNCTION_TREE_LARGE_FACTOR : 1);
  if (method === 'auto' && !(shared && bucketCannotWin(model, cands, jtCost))) {
    const greedy = greedyBucketChoice(model, opts, shared ? cands : undefined);
    const g = greedy.best?.plan;
    const cost = (p: BucketPlan): number => BUCKET_SETUP + p.flops + BUCKET_MESSAGE_COST * p.messageEntries;
    if (g && greedy.feasible && cost(g) < jtCost) {
      const sp = slicedBucketPlan(model, opts, greedy);
      // Taken when it needs no slicing for memory (slices for speed alone are welcome).
      if (sp.fits && sp.choice.plan.bytes <= sp.maxMemory && sp.choice.plan.maxMessage <= sp.choice.maxMessage) return bucket(undefined, sp);
    }
  }
  let out: ExactOutcome;
  try {
    out = runElimination(engine, model, tree, best.order, maxMemory);
  } catch (e) {
    // Bucket elimination works in log space throughout: the fallback when scaled messages under/overflow.
    if (e instanceof RangeExceeded && method === 'auto') return bucket();
    // Past the memory budget: bucket elimination, sliced to fit it (or refused with the budget that would do).
    if (e instanceof MemoryBudgetExceeded && method === 'auto') return bucket(e);
    throw e;
  }
  return result(out, { method: 'elimination', algorithm: 'junction-tree', treewidth: best.treewidth, maxTableEntries: best.maxEntries, largestMessage: best.maxEntries, flops: best.totalEntries, ordering: best.name, seconds: seconds() });
}

/** The sliced bucket-elimination plan exactInference runs (no engine argument: the searches run on the planner's instance): the order, the slices, or the refusal. */
export interface SlicedBucketPlan {
  /** The model the plan is for, whose slices it runs: exactModel's (separable factors split into unary ones). */
  model: Model;
  /** The order and its unsliced plan. */
  choice: BucketChoice;
  /** The slices: variables conditioned on, one slice's plan, total work. */
  sliced: SlicedPlan;
  /** Within maxFlops and the memory budget. */
  fits: boolean;
  /** The memory budget used (bytes). */
  maxMemory: number;
  /** When it does not fit: the refusal's text (memory and work the best order needs; the smallest budget that would do). */
  refusal: string;
}

/**
 * Sliced plans by model and planning options: a Model never changes and planning is deterministic,
 * so exactInference, exactSample and exactMAP on one model (or a refusal asked again) plan once —
 * the rescue search alone is ≈ 0.3 s on linkage_11. Held as long as the model is; a few per model.
 */
const planCache = new WeakMap<Model, Map<string, SlicedBucketPlan>>();
const PLANS_PER_MODEL = 4;
/** The options a sliced plan depends on (not onProgress, method or the junction tree's limit). */
const planKey = (o: ExactOptions): string => JSON.stringify([o.maxMemory, o.maxFlops, o.maxMessageEntries, o.orderSearchWork, o.treeSearch, o.orderRestarts, o.orderings, o.speedSlicing]);

/**
 * Bucket elimination's whole plan (no engine argument; see bucketEliminationPlan): the order (greedy heuristics, restarts, annealing),
 * then as many sliced variables as maxMemory and maxMessageEntries need; `fits` false with the
 * refusal's text when even the sliced plan passes maxFlops or the budget. The same model and
 * planning options give the same plan object again (planCache): read it, do not change it.
 * `greedy`: the greedy stage when the caller has it (or makes it on demand).
 */
export function slicedBucketPlan(model: Model, opts: ExactOptions = {}, greedy?: GreedyBucketChoice | (() => GreedyBucketChoice)): SlicedBucketPlan {
  model = exactModel(model);
  const maxMemory = checkMemory(opts.maxMemory ?? DEFAULT_MAX_MEMORY);
  // Checked before the cache: its key writes NaN and ±Infinity as null, so a bad limit found the
  // default's plan and passed.
  checkPlanOptions(opts);
  // A greedy stage from the junction tree's shared orders is kept apart: it is the same in every
  // case measured, but exactSample's plan must not depend on whether exactInference ran first.
  const key = planKey(opts) + (greedy ? ' shared' : '');
  let cached = planCache.get(model);
  const hit = cached?.get(key);
  if (hit) return hit;
  const choice = bucketEliminationPlan(model, opts, typeof greedy === 'function' ? greedy() : greedy);
  let fit = sliceToFit(model, choice.plan, maxMemory, choice.maxMessage, choice.maxFlops, opts.speedSlicing ?? true);
  // Sliced to fit the budget: the order searched again on the graph the first slice variables leave.
  if (fit.fits && fit.sliced.slices > 1 && !(choice.plan.bytes <= maxMemory && choice.plan.maxMessage <= choice.maxMessage)) {
    const plan = (condition: number[]): BucketChoice => bucketEliminationPlan(model, opts, greedyBucketChoice(model, opts, undefined, condition));
    fit = { ...fit, sliced: reslice(model, fit.sliced, maxMemory, choice.maxMessage, choice.maxFlops, opts.speedSlicing ?? true, plan) };
  }
  let refusal = '';
  if (!fit.fits) {
    refusal = bucketRefusal(choice.plan, choice.maxMessage, choice.maxFlops, choice.name);
    const { slices, plan } = fit.sliced;
    if (fit.smallestBytes > ENGINE_BUDGET && choice.plan.flops <= choice.maxFlops) {
      // Naming a budget past the engine's memory sent users to a second refusal (--max-memory 24964616936).
      const least = fit.smallestBytes < Infinity ? `at least ${fmtBytes(fit.smallestBytes)}` : 'more';
      refusal += `; no memory budget would do: within the work limit even the sliced plan needs ${least}, past the ${fmtBytes(ENGINE_BUDGET)} of WASM memory the engine can hold (a larger maxFlops, in the library, lets it slice further)`;
    } else if (fit.smallestBytes < Infinity && choice.plan.flops <= choice.maxFlops && fit.smallestBytes > maxMemory) {
      refusal += `; the memory budget of ${fmtBytes(maxMemory)} is too small even for the sliced plan: the smallest budget that would do is ${fmtBytes(fit.smallestBytes)} (--max-memory ${Math.ceil(fit.smallestBytes)}), streaming ${fmtEntries(fit.smallestFlops)} configurations`;
    } else if (fit.smallestMessage < Infinity && choice.plan.flops <= choice.maxFlops && fit.smallestMessage > choice.maxMessage) {
      // The budget is not what binds: the message limit cannot be met within the work limit.
      refusal += `; slicing brings the largest message to ${fmtEntries(fit.smallestMessage)} entries at most within the work limit, not to ${fmtEntries(choice.maxMessage)}: ${slices} slices would take ${fmtEntries(slicedWork(slices, plan))} configurations of work (${fmtEntries(slices * plan.flops)} streamed, the rest each slice's set-up)`;
    } else if (slices > 1) {
      refusal += `; slicing to fit ${fmtBytes(maxMemory)} would take ${slices} slices and ${fmtEntries(slicedWork(slices, plan))} configurations of work (${fmtEntries(slices * plan.flops)} streamed, the rest each slice's set-up)`;
    }
  }
  releasePlannerMemory();
  const sp = { model, choice, sliced: fit.sliced, fits: fit.fits, maxMemory, refusal };
  if (!cached) planCache.set(model, (cached = new Map()));
  if (cached.size >= PLANS_PER_MODEL) cached.delete(cached.keys().next().value!);
  cached.set(key, sp);
  return sp;
}

/** The exact result of a sliced plan from its slices' sum (SliceSum, runAndSumSlices, combineSlices). */
export function slicedResult(sp: SlicedBucketPlan, sum: ExactOutcome, seconds: number): ExactResult {
  return result(sum, { ...slicedFacts(sp), seconds });
}

/**
 * Whether exactInference takes the sliced bucket-elimination path for these options without trying
 * anything else first: method 'bucket', or a model with a factor of arity > 2 (method auto or
 * elimination), and no factor that is zero everywhere (nor a zero constant).
 */
export function takesBucketPath(model: Model, opts: ExactOptions = {}): boolean {
  const method = opts.method ?? 'auto';
  if (model.zeroReason() !== null) return false;
  return method === 'bucket' || ((method === 'auto' || method === 'elimination') && !exactModel(model).isPairwise);
}

/** The facts an exact result reports about a sliced bucket plan. */
export function slicedFacts(sp: SlicedBucketPlan): Omit<ExactResult, 'logZ' | 'marginals' | 'seconds'> {
  const p = sp.sliced.plan, base = sp.choice.plan;
  return {
    method: 'elimination', algorithm: 'bucket', treewidth: base.treewidth, maxTableEntries: p.maxMessage, largestMessage: p.maxMessage, flops: sp.sliced.flops, ordering: sp.sliced.ordering ?? sp.choice.name,
    slices: sp.sliced.slices, slicedVariables: Array.from(sp.sliced.sliceVars), memoryBytes: p.bytes, planSearch: sp.choice.search?.by ?? 'greedy',
  };
}

/** For tests and benchmarks: the checkpointing schedule's size for a model (no engine). */
export function eliminationMemory(model: Model, opts: ExactOptions = {}): { bytes: number; stored: number; recomputed: number; steps: number; huginNodes: number } {
  const limit = checkLimit(opts.maxTableEntries ?? DEFAULT_MAX_TABLE_ENTRIES);
  // The model the junction tree runs on (separable factors split), as exactInference plans it.
  model = exactModel(model);
  const cands = candidateOrders(model, opts);
  const { best, feasible } = choose(cands, limit);
  if (!feasible) throw refusal(best, limit, cands.map((c) => c.name));
  const tree = buildTree(model, best.order);
  const s = schedule(tree, best.order);
  const huginNodes = tree.hugin.reduce((a, h) => a + h, 0);
  return { bytes: s.bytes, stored: s.stored, recomputed: s.recomputed, steps: s.steps.count, huginNodes };
}

/** exactSample's options: the planning options of exactInference, the count and the seed. */
export interface ExactSampleOptions extends ExactOptions {
  /** Number of i.i.d. configurations. */
  count: number;
  /** Seed of the sampling stream (same seed, same samples). Default 1. */
  seed?: number;
}

/** The sliced plan exact samples and MAP decode along (slicedBucketPlan: the same orders and limits as exactInference), or the refusal. */
export function decodePlan(model: Model, opts: ExactOptions): SlicedBucketPlan {
  const zero = model.zeroReason();
  if (zero !== null) throw new EngineError(`${zero} (Z = 0): there is nothing to decode`);
  checkPlanOptions(opts);
  const lattice = hopelessLattice(model, opts.maxFlops ?? DEFAULT_MAX_FLOPS);
  if (lattice !== null) throw new EngineError(lattice);
  const sp = slicedBucketPlan(model, opts);
  if (!sp.fits) throw new EngineError(sp.refusal);
  return sp;
}

/** The plan a decoding ran on (exactSample, exactMAP). */
export interface DecodedPlan {
  /** The elimination order's treewidth. */
  treewidth: number;
  /** The order's name (a heuristic, with the search that improved it). */
  ordering: string;
  /** The slices the plan was cut into (1: not sliced). */
  slices: number;
}
/** exactSample's result. */
export interface ExactSamples extends DecodedPlan {
  /** samples[c]: configuration c, a state per variable. */
  samples: Int32Array[];
  /** Natural log of Z (Σ of the slices' Z_s). */
  logZ: number;
}
/** exactMAP's result. */
export interface ExactMAP extends DecodedPlan {
  /** A most probable configuration (the first slice's on ties). */
  configuration: Int32Array;
  /** Its log-potential: the log of its unnormalised probability, model.logConst included. */
  logPotential: number;
}

/** exactSample's count, checked. */
export function sampleCount(opts: ExactSampleOptions): number {
  if (opts === null || typeof opts !== 'object') throw new ModelError('exact samples need options with their count: { count, seed? }');
  if (!Number.isInteger(opts.count) || opts.count < 1) throw new ModelError(`count ${opts.count} is not a positive integer`);
  return opts.count;
}

/** A sampling decoding (decodeSteps) as exactSample's result. */
export function samplesOf(sp: SlicedBucketPlan, out: Decoded): ExactSamples {
  if (!(out.logZ > -Infinity)) throw new EngineError('every configuration has zero potential (Z = 0): there is nothing to sample');
  return { samples: out.configurations, logZ: out.logZ, treewidth: sp.choice.plan.treewidth, ordering: sp.sliced.ordering ?? sp.choice.name, slices: sp.sliced.slices };
}

/** A max-product decoding (decodeSteps) as exactMAP's result. */
export function mapOf(sp: SlicedBucketPlan, out: Decoded): ExactMAP {
  if (!(out.logZ > -Infinity)) throw new EngineError('every configuration has zero potential (Z = 0): there is no MAP configuration');
  return { configuration: out.configurations[0], logPotential: out.logZ, treewidth: sp.choice.plan.treewidth, ordering: sp.sliced.ordering ?? sp.choice.name, slices: sp.sliced.slices };
}

/**
 * Exact i.i.d. samples: the upward pass of bucket elimination, then each configuration drawn
 * backward along the elimination order from its exact conditional (a sliced plan: each sample's
 * slice drawn by its Z_s first, see decodeSteps). samples[c] is configuration c. On worker threads:
 * exactSampleParallel (the same samples).
 */
export function exactSample(engine: Engine, model: Model, opts: ExactSampleOptions): ExactSamples {
  const count = sampleCount(opts);
  checkOptionKeys(opts, [...EXACT_OPTION_KEYS, 'count', 'seed'], 'exactSample');
  const sp = decodePlan(model, opts);
  return samplesOf(sp, decodeSlices(engine, sp.model, sp.sliced, 'sample', count, opts.seed ?? 1));
}

/**
 * A MAP configuration by max-product bucket elimination with the same orders: the upward pass with
 * max in place of sum, then the maximising state of each variable backward along the order (a
 * sliced plan: the best of the slices' maxima). logPotential = log of its unnormalised probability
 * (including model.logConst). On worker threads: exactMAPParallel (the same configuration).
 */
export function exactMAP(engine: Engine, model: Model, opts: ExactOptions = {}): ExactMAP {
  checkOptionKeys(opts, EXACT_OPTION_KEYS, 'exactMAP');
  const sp = decodePlan(model, opts);
  return mapOf(sp, decodeSlices(engine, sp.model, sp.sliced, 'max', 1, 1));
}
