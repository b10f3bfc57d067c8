// The order search's budget, and the rescue search for greedy plans past the work limit: the tree
// search in doubling stages from the best order so far, stopped when it stands still; past the
// rescue range a probe of its first stages; and, when a rescue stops short of the limit, a second
// one from RCM's order. bucketEliminationPlan (exact.ts) runs them; budgets are bitset words, so
// every decision, and the plan, is the same on every machine.

import type { Model } from '../core/model.ts';
import { bucketPlan, type BucketPlan, type interactionGraph } from './bucket-plan.ts';
import type { OrderingGraph } from './orderings.ts';
import { annealOrder, orderCost, searchObjective, type AnnealOptions, type AnnealResult, type OrderCost } from './order-search.ts';
import { searchContractionTree, type ContractionGraph, type TreeSearchOptions, type TreeSearchResult } from './tree-search.ts';

/** bucketEliminationPlan's greedy stage: the best heuristic order's plan, before any search. */
export interface GreedyBucketChoice {
  best: { plan: BucketPlan; name: string } | null;
  feasible: boolean;
  maxMessage: number;
  maxFlops: number;
  graph: ReturnType<typeof interactionGraph>;
  fixed: Int32Array;
  impossible: number;
  /** RCM's order when it was among the orderings (bucketEliminationPlan's second start). */
  rcm: Int32Array | null;
}

/**
 * The order search's default budget in bitset words (1–3·10⁹ per second in the engine's kernels, a
 * neighbour's bookkeeping counted as 4 words: see order-search.ts and tree-search.ts; against
 * 2.5–8·10⁸ clique configurations per second in the block kernel): 1/32 word per configuration the
 * best greedy plan streams — about 1–2 % of the contraction's time — between 10⁶ and 5·10⁸ words;
 * none below 2^24 configurations. A plan past maxFlops but within RESCUE_FACTOR of it gets
 * RESCUE_WORK (≈ 0.25–0.3 s: the tree search has turned such plans into ones within the limit, see
 * README), spent in stages that stop after 1/16 of it when the search stands still
 * (rescueTreeSearch) and, under a limit below the default, after fewer stages (rescueStages). One
 * further past, within RESCUE_PROBE_FACTOR, gets the same budget for a probe: its first stages must
 * bring the plan within RESCUE_FACTOR (see PROBE_MAX_SETUP_WORDS for when it runs); one past that
 * none, so those refusals stay fast.
 */
export function orderSearchWork(flops: number, maxFlops: number): number {
  if (flops < 2 ** 24) return 0;
  if (flops > RESCUE_PROBE_FACTOR * maxFlops) return 0;
  if (flops > maxFlops) return RESCUE_WORK;
  return Math.min(5e8, Math.max(1e6, flops / 32));
}

/**
 * The searches work on dense bitsets over the variables (order-search.ts, tree-search.ts), so
 * building them is quadratic in n and is not in their work budgets: a search runs only when its
 * set-up, in the budgets' unit (32-bit words), is within its budget and its bitsets within
 * SEARCH_MAX_BYTES of planner memory. The order annealing's: an adjacency row and a scratch row per
 * variable. The tree search's, per restart (two): three sets per tree node (2L − 1 nodes, L the
 * factor scopes) and the read-back order's evaluation (the annealing's rows again). Without this a
 * 20000-variable strip of treewidth 10 spent 1.9 s building trees for a 1.2 s contraction, and
 * one of 10⁵ variables ran the planner out of memory.
 */
export function searchSetup(n: number, scopes: number): { annealWords: number; annealBytes: number; treeWords: number; treeBytes: number } {
  const W32 = 2 * Math.ceil(n / 64), nodes = Math.max(1, 2 * scopes - 1);
  const annealWords = 2 * n * W32, treeWords = 2 * (3 * nodes * W32 + annealWords);
  return { annealWords, annealBytes: 4 * annealWords, treeWords, treeBytes: 4 * (3 * nodes * W32 + annealWords) };
}
/** The planner memory the searches' bitsets may take (searchSetup). */
export const SEARCH_MAX_BYTES = 2 ** 28;

/** How far past maxFlops a greedy plan may be for the rescue search to run in full. */
export const RESCUE_FACTOR = 2 ** 10;
/**
 * How far past maxFlops a greedy plan may be for the tree search to probe it: the first
 * RESCUE_STALL_STAGES stages (1/16 of the budget) run, and the rest only once the plan is within
 * RESCUE_FACTOR. The tree search bridges far more than 2^10: on linkage_11 it brings min-fill's
 * 2^58.1 to 2^28.6 and min-weight's 2^50.6 to 2^29.1 with the full budget. Renumberings of its
 * variables (bench:exact-renumbered) put the best greedy plan anywhere in 2^39.5–2^47.4; without the
 * probe those past 2^44 were refused in ≈ 5 ms, although every numbering is solved in ≈ 1.3 s (the
 * probe's first three stages bring them within 2^44).
 */
export const RESCUE_PROBE_FACTOR = 2 ** 20;
/** The search budget of a greedy plan past maxFlops (within RESCUE_FACTOR), spent in stages (rescueTreeSearch). */
export const RESCUE_WORK = 1e9;
/**
 * A probe runs only when the tree search's set-up (searchSetup's treeWords) is within this: at most
 * 1/32 of the probe's own stages, so hopeless models refuse fast (linkage_11: 5.9·10⁵ words; a 40×40
 * grid, 3.2·10⁶, is not probed: refused in ≈ 25 ms, warm).
 */
export const PROBE_MAX_SETUP_WORDS = RESCUE_WORK / 512;
/** Of a plan within maxFlops, the share of the budget the order annealing gets; the tree search gets the rest. */
export const ORDER_ANNEALING_SHARE = 1 / 4;
/** Of a plan past maxFlops, the order annealing's words (the tree search takes the rest). */
export const RESCUE_ANNEALING_WORK = 2e6;

/** The rescue search's stages: parts of its budget (of 64 in all), each stage starting from the best order so far. */
const RESCUE_STAGES = [1, 1, 2, 4, 8, 16, 32];
/**
 * How many of the rescue stages run under maxFlops: those whose work up to their end, in RESCUE_WORK
 * words, is within 1/16 word per configuration maxFlops allows — all of them at the default limit
 * (2^34: 2^30 words) — and at least the first RESCUE_STALL_STAGES (1/16 of the budget). A plan the
 * search brings within a lower limit is contracted in proportionately less time, so its search stays
 * a small share of that, and a refusal under such a limit (Pedigree_12 under 10⁶) comes after 1/16
 * of the budget instead of all of it (0.3 s).
 */
export function rescueStages(maxFlops: number): number {
  const parts = RESCUE_STAGES.reduce((a, b) => a + b, 0);
  let stages = 0, done = 0;
  while (stages < RESCUE_STAGES.length && (stages < RESCUE_STALL_STAGES || (RESCUE_WORK * (done + RESCUE_STAGES[stages])) / parts <= maxFlops / 16)) done += RESCUE_STAGES[stages++];
  return stages;
}
/** Bits (log2 flops + message bits past the bound) the last RESCUE_STALL_STAGES stages must gain together to count as progress. */
const RESCUE_MIN_GAIN = 0.25;
/**
 * Stages judged together. Two were too few: short runs quench, and on random 3-regular graphs of
 * 180–196 variables (greedy 2^35–2^40) 2 of 8 plans the full budget brings to 2^30–2^32 gained
 * nothing in the first two stages and ≈ 10 bits in the third; with three, all 8 were solved.
 */
const RESCUE_STALL_STAGES = 3;
/** Stage k's seed is RESCUE_SEED + 17k (stage 0's: the tree search's default). */
const RESCUE_SEED = 0x7e5a;

/**
 * When a staged rescue stops after its first RESCUE_STALL_STAGES stages besides standing still: a
 * probe (started past RESCUE_FACTOR) not yet within it; a second start behind the first's objective
 * (`mustBeat`) that has not gained SECOND_START_PACE bits either.
 */
interface RescueGate {
  probe?: boolean;
  mustBeat?: number;
}
/**
 * Objective bits a second start's first three stages must gain to go on while still behind the
 * first: its first stages are noisy (a random 3-regular graph of 196 variables, renumbered: RCM's
 * order at 2^39.6 after them in one run, 2^36.2 with a budget 0.2 % larger, against min-fill's 2^38.8
 * stuck; 11.4 bits gained, and the full budget reaches 2^31.0), while on a model out of reach it
 * crawls (a dense 45-variable model: RCM's order gains 1.3 bits, then nothing).
 */
const SECOND_START_PACE = 4;

/**
 * The rescue's stages: `search(from, work, seed, known)` runs stage k from the best order so far
 * (`known`: its cost, from the second stage on) with RESCUE_STAGES[k] / 64 of the budget and seed
 * RESCUE_SEED + 17k, returning an order never worse than `from`. Under a limit below the default,
 * only the first rescueStages run. It stops early when the plan is still past maxFlops, the last
 * RESCUE_STALL_STAGES stages gained less than RESCUE_MIN_GAIN together and all stages so far less
 * than the bits still missing: a search that stands still on a plan that far off (grids, dense
 * graphs of treewidth ≳ 30: the full budget gains nothing there either) is not going to reach the
 * limit, and its refusal comes after 1/16 of the budget. `gate` stops probes and second starts
 * there too (RescueGate); `stalled` says it stopped early. Stages are judged on orderCost (one upward
 * pass: the plan's flops ≈ twice that), in work units, so the plan is the same on every machine.
 */
function stagedRescue<R extends OrderCost & { order: Int32Array; improved: boolean; start: OrderCost }>(start: Int32Array, work: number, objective: (c: OrderCost) => number, maxFlops: number, search: (from: Int32Array, work: number, seed: number, known: OrderCost | undefined) => R, gate: RescueGate = {}): { best: R; start: OrderCost; stages: number; improved: boolean; stalled: boolean } {
  const parts = RESCUE_STAGES.reduce((a, b) => a + b, 0);
  let best: R | null = null, startCost: OrderCost | null = null;
  const gains: number[] = [];
  const stages = rescueStages(maxFlops);
  for (let k = 0; k < stages; k++) {
    // From the second stage on, the start is the best order so far: its cost is known.
    const known = best ? { log2Flops: best.log2Flops, log2Message: best.log2Message, treewidth: best.treewidth } : undefined;
    const t = search(best?.order ?? start, (work * RESCUE_STAGES[k]) / parts, RESCUE_SEED + 17 * k, known);
    startCost ??= t.start;
    gains.push(objective(best ?? t.start) - objective(t));
    best = t.improved ? t : (best ?? t);
    const missing = best.log2Flops + 1 - Math.log2(maxFlops);
    const total = gains.reduce((a, b) => a + b, 0);
    const recent = gains.slice(-RESCUE_STALL_STAGES).reduce((a, b) => a + b, 0);
    // A probe (a plan past RESCUE_FACTOR at the start) goes on only once within it; a second start
    // only once ahead of the first or gaining fast (RescueGate).
    const behind = (gate.probe && best.log2Flops + 1 > Math.log2(RESCUE_FACTOR * maxFlops)) || (gate.mustBeat !== undefined && objective(best) >= gate.mustBeat && total < SECOND_START_PACE);
    const stall = k + 1 >= RESCUE_STALL_STAGES && ((missing > 0 && recent < RESCUE_MIN_GAIN && total < missing) || behind);
    if (stall) return { best, start: startCost!, stages: gains.length, improved: objective(best) < objective(startCost!), stalled: true };
  }
  return { best: best!, start: startCost!, stages: gains.length, improved: objective(best!) < objective(startCost!), stalled: false };
}

/** The tree search for a plan past maxFlops (the rescue budget), in stages (stagedRescue). */
export function rescueTreeSearch(g: ContractionGraph, start: Int32Array, opts: TreeSearchOptions, maxFlops: number, gate: RescueGate): TreeSearchResult {
  let proposals = 0, accepted = 0, work = 0;
  const staged = stagedRescue(start, opts.work, searchObjective(opts.maxLog2Message, 1), maxFlops, (from, w, seed, known) => {
    // Each search returns its start order when it finds nothing better: never worse than `from`.
    const t = searchContractionTree(g, from, { ...opts, work: w, seed, startCost: known });
    proposals += t.proposals;
    accepted += t.accepted;
    work += t.work;
    return t;
  }, gate);
  return { ...staged.best, start: staged.start, improved: staged.improved, proposals, accepted, work, stages: staged.stages, stalled: staged.stalled };
}

/**
 * The order annealing alone (treeSearch: false) for a plan past maxFlops, in the same stages
 * (stagedRescue), so that a search standing still is refused after 1/16 of the budget here too.
 */
export function rescueAnnealing(g: OrderingGraph, start: Int32Array, opts: AnnealOptions, maxFlops: number): AnnealResult & { stages: number } {
  const first = orderCost(g, start), objective = searchObjective(opts.maxLog2Message, opts.penalty ?? 4);
  let evaluations = 0, work = 0;
  const staged = stagedRescue(start, opts.work, objective, maxFlops, (from, w, seed, known) => {
    const a = annealOrder(g, from, { ...opts, work: w, seed });
    evaluations += a.evaluations;
    work += a.work;
    const before = known ?? first;
    return { ...a, start: first, improved: objective(a) < objective(before) };
  });
  return { ...staged.best, evaluations, work, stages: staged.stages };
}

/**
 * A staged rescue caught in its start's basin: stopped standing still (or a probe not brought within
 * RESCUE_FACTOR) with the plan still past maxFlops. One that gained in every stage it was given
 * (under a low maxFlops, fewer) was not caught. In three renumberings of linkage_11's variables the
 * best greedy plan's search stands still: weighted min-fill's 2^42.8 at 2^41.3, min-fill's 2^44.5 at
 * 2^43.6 (with the whole budget), weighted min-fill's 2^42.6 gaining nothing, while from RCM's order
 * of the same numberings (2^46.0, 2^46.9, 2^46.6) the search reaches 2^28.8, as from min-degree's or
 * min-weight's. On a model out of reach the second start costs three more stages (secondRescue's
 * gate: a dense 45-variable model, whose RCM plan of 2^38.5 gains a little in each stage, ran six
 * more without it).
 */
export function trapped(t: TreeSearchResult, maxFlops: number): boolean {
  return !!t.stalled && t.log2Flops + 1 > Math.log2(maxFlops);
}

/**
 * The rescue from RCM's order (trapped): staged as the first, a probe when RCM's plan is past
 * RESCUE_FACTOR, and past its first three stages only once below the first rescue's objective
 * (`mustBeat`) or gaining fast (SECOND_START_PACE); null past RESCUE_PROBE_FACTOR or without RCM.
 */
export function secondRescue(model: Model, greedy: GreedyBucketChoice, g: ContractionGraph, opts: TreeSearchOptions, mustBeat: number): TreeSearchResult | null {
  if (!greedy.rcm) return null;
  const plan = bucketPlan(model, greedy.rcm, greedy.fixed, greedy.impossible), maxFlops = greedy.maxFlops;
  if (plan.flops > RESCUE_PROBE_FACTOR * maxFlops) return null;
  return rescueTreeSearch(g, plan.order, opts, maxFlops, { probe: plan.flops > RESCUE_FACTOR * maxFlops, mustBeat });
}
