// Slicing for bucket elimination: conditioning on a few variables so that every message fits a
// memory budget, then summing the slices (log Z by log-sum-exp, marginals weighted by each slice's
// Z). A slice is the plan with the sliced variables held fixed — folded into the table bases like
// evidence (bucket-elimination.ts), so the kernels are the unsliced ones. Slices are independent:
// they run in any order, on any worker, and are combined here in slice order, so the result does
// not depend on how they were distributed.

import type { Engine } from '../core/engine.ts';
import { mulberry32, seedWords } from '../core/seed.ts';
import type { Model } from '../core/model.ts';
import { bucketShape, runBucketElimination, type BucketShape, type DecodeRequest } from './bucket-elimination.ts';
import { bucketPlan, plannedModel, withFixedStates, type BucketPlan } from './bucket-plan.ts';
import type { ExactOutcome } from './outcome.ts';
import type { Progress } from '../core/result.ts';

/** Most slices a plan is cut into (each is a run of the kernels with its own setup). */
export const MAX_SLICES = 2 ** 20;
/**
 * Configurations a slice's set-up counts as, per variable of the model: each slice copies its
 * factor tables, writes each block call's tables and calls the kernels per clique, and sums a
 * marginal per variable. Slices share one plan and run shape (SliceRunner), so this is ≈ 0.6–6.4 µs
 * per variable, streaming included (Pedigree_12 in 4096 slices: 0.24 ms per slice of its 385
 * variables; CSP_12 in 2048: 0.43 ms of its 67), against 2.5–8·10⁸ configurations per second:
 * 2^12 is an upper bound. Without it, a small message limit cut Pedigree_12 into 2^17 slices of
 * 2^16 configurations, within the work limit, that ran for minutes and ran the JavaScript heap out
 * of memory holding their marginals; with it, slices × variables stays within 2^34 / 2^12.
 */
export const SLICE_SETUP_PER_VARIABLE = 2 ** 12;

/** The work of `slices` slices of `plan`, in configurations: what they stream plus the set-up every slice past the first adds. */
export function slicedWork(slices: number, plan: BucketPlan): number {
  return slices * plan.flops + (slices - 1) * SLICE_SETUP_PER_VARIABLE * plan.fixed.length;
}

export interface SlicedPlan {
  /** Elimination order (free variables; the sliced ones are skipped). */
  order: Int32Array;
  /** States fixed by evidence (−1: free), before slicing. */
  fixed: Int32Array;
  impossible: number;
  /** Variables conditioned on, the last varying fastest across slices. */
  sliceVars: Int32Array;
  /** Π K over sliceVars. */
  slices: number;
  /** The plan of one slice (every slice has the same shape). */
  plan: BucketPlan;
  /** slices × the plan's configurations streamed. */
  flops: number;
  /** The order's name when it was searched again after slicing (reslice); else the unsliced plan's. */
  ordering?: string;
}

export interface SliceSearch {
  /** The first sliced plan within the budget, else the last one tried. */
  sliced: SlicedPlan;
  fits: boolean;
  /** Smallest WASM bytes of any plan tried whose total work (slicedWork) is within maxFlops (Infinity: none). */
  smallestBytes: number;
  /** That plan's total configurations streamed. */
  smallestFlops: number;
  /** Smallest largest message (entries) of any plan tried within maxFlops of work (Infinity: none). */
  smallestMessage: number;
}

/** The fixed states of slice `s` (the last slice variable fastest). */
export function sliceFixed(sp: Pick<SlicedPlan, 'fixed' | 'sliceVars'>, card: Int32Array, s: number): Int32Array {
  const fx = sp.fixed.slice();
  for (let q = sp.sliceVars.length - 1; q >= 0; q--) {
    const v = sp.sliceVars[q];
    fx[v] = s % card[v];
    s = Math.floor(s / card[v]);
  }
  return fx;
}

/**
 * Past this largest message (log2 entries) a configuration costs more: the messages a clique reads
 * leave the caches. Measured per configuration streamed, slicing further the same plans (this
 * machine, median of 3): CSP_11 7.1 ns at 2^23-entry messages, 4.3 at 2^21, 2.3 at 2^19;
 * 2bitcomp_5.cnf 2.9 at 2^26, 2.0 at 2^22, 1.9 at 2^21; ObjectDetection_13 1.26 at 2^24, 0.82 at
 * 2^20; Promedus_11 3.4 at 2^21, 2.6 at 2^18; linkage_11 2.4 at 2^21, 1.9 at 2^19.
 */
export const CACHE_KNEE_LOG2 = 18;
/** The cost of a configuration grows by this share per doubling of the largest message past the knee (≈ 0.1–0.3 measured). */
export const CACHE_PENALTY_PER_BIT = 0.15;

/** A sliced plan's estimated time, in configurations: its work, dearer per bit of largest message past the knee. */
export function slicedCost(slices: number, plan: BucketPlan): number {
  return slicedWork(slices, plan) * (1 + CACHE_PENALTY_PER_BIT * Math.max(0, Math.log2(plan.maxMessage) - CACHE_KNEE_LOG2));
}

/** One step of the slicing sequence: the variables conditioned on so far and the slices' plan. */
interface SliceStep {
  sliceVars: Int32Array;
  slices: number;
  plan: BucketPlan;
}

/**
 * Which variable a slicing step conditions on:
 *  - 'largest': of the largest message's variables, the one in the most entries of large messages
 *    (those ≥ 1/16 of the largest) — it shrinks the largest message, and the memory around it;
 *  - 'bytes': of all variables, the one whose conditioning removes the most message entries in all
 *    (Σ over the messages it is in of their size × (1 − 1/K)) — the memory budget is the sum of the
 *    live messages, not the largest one. On linkage_11 under 256 MB: 32 slices and 2^32 configurations
 *    against 'largest''s 128 and 2^33.8; on other plans 'largest' needs fewer (sliceToFit runs both).
 */
export type SlicingCriterion = 'largest' | 'bytes';

/**
 * The slicing sequence from `base`: base itself, then one more variable conditioned on at each step
 * (chosen by `criterion`), until no message is left or the slices would pass MAX_SLICES. A base
 * planned with variables already held fixed (`conditioned`, reslice) starts from their slices.
 */
function* slicingSteps(model: Model, base: BucketPlan, criterion: SlicingCriterion, conditioned: readonly number[]): Generator<SliceStep> {
  const card = model.card, n = model.n;
  const fx = base.fixed.slice();
  const sliceVars = [...conditioned];
  let slices = 1, plan = base;
  for (const v of conditioned) slices *= card[v];
  const weight = new Float64Array(n);
  for (;;) {
    yield { sliceVars: Int32Array.from(sliceVars), slices, plan };
    weight.fill(0);
    let largest = -1;
    for (const v of plan.order) if (plan.sep[v].length > 0 && (largest < 0 || size(plan.sep[v], card) > size(plan.sep[largest], card))) largest = v;
    if (largest < 0) return;
    let pick = -1;
    if (criterion === 'largest') {
      const big = size(plan.sep[largest], card) / 16;
      for (const v of plan.order) {
        const s = size(plan.sep[v], card);
        if (s >= big) for (const u of plan.sep[v]) weight[u] += s;
      }
      for (const u of plan.sep[largest]) if (pick < 0 || weight[u] > weight[pick] || (weight[u] === weight[pick] && u < pick)) pick = u;
    } else {
      for (const v of plan.order) {
        const s = size(plan.sep[v], card);
        for (const u of plan.sep[v]) weight[u] += s * (1 - 1 / card[u]);
      }
      for (let u = 0; u < n; u++) if (weight[u] > 0 && (pick < 0 || weight[u] > weight[pick])) pick = u;
      if (pick < 0) return;
    }
    if (slices * card[pick] > MAX_SLICES) return;
    sliceVars.push(pick);
    fx[pick] = 0;
    slices *= card[pick];
    // A copy: a plan keeps its fixed states, and the steps after it fix more.
    plan = bucketPlan(model, base.order, fx.slice(), base.impossible);
  }
}

/**
 * Conditions on variables one at a time until the plan needs at most maxBytes of WASM memory and its
 * largest message at most maxMessage entries, or until slicing would take more than maxFlops
 * configurations of work in all (slicedWork: streamed, and each slice's set-up), or cut into more
 * than MAX_SLICES slices. With `forSpeed`, a plan that fits goes on along the same steps while
 * smaller messages make it cheaper by slicedCost (messages past the cache knee cost more per
 * configuration than the slices add), and the cheapest step is taken. When `base` does not fit,
 * both criteria's sequences (slicingSteps) are followed and the cheaper plan that fits is taken
 * ('largest''s on a tie); the smallest sizes reported are the least of both, so the budget a
 * refusal names is one this search fits again.
 */
export function sliceToFit(model: Model, base: BucketPlan, maxBytes: number, maxMessage: number, maxFlops: number, forSpeed = true, conditioned: Conditioned | null = null): SliceSearch {
  const first = sliceAlong(model, base, 'largest', maxBytes, maxMessage, maxFlops, forSpeed, conditioned);
  if (!conditioned && base.bytes <= maxBytes && base.maxMessage <= maxMessage) return first;
  const second = sliceAlong(model, base, 'bytes', maxBytes, maxMessage, maxFlops, forSpeed, conditioned);
  const cost = (r: SliceSearch): number => slicedCost(r.sliced.slices, r.sliced.plan);
  const pick = second.fits && (!first.fits || cost(second) < cost(first)) ? second : first;
  const least = second.smallestBytes < first.smallestBytes ? second : first;
  return { ...pick, smallestBytes: least.smallestBytes, smallestFlops: least.smallestFlops, smallestMessage: Math.min(first.smallestMessage, second.smallestMessage) };
}

/** sliceToFit along one criterion's sequence (exported for tests). */
export function sliceAlong(model: Model, base: BucketPlan, criterion: SlicingCriterion, maxBytes: number, maxMessage: number, maxFlops: number, forSpeed: boolean, conditioned: Conditioned | null = null): SliceSearch {
  let smallestBytes = Infinity, smallestFlops = Infinity, smallestMessage = Infinity;
  const steps = slicingSteps(model, base, criterion, conditioned?.vars ?? []);
  const fixed = conditioned?.fixed ?? base.fixed;
  const slicedOf = (st: SliceStep): SlicedPlan => ({ order: base.order, fixed, impossible: base.impossible, sliceVars: st.sliceVars, slices: st.slices, plan: st.plan, flops: st.slices * st.plan.flops });
  let last: SliceStep | null = null;
  for (const st of steps) {
    last = st;
    if (slicedWork(st.slices, st.plan) > maxFlops) break;
    if (st.plan.bytes < smallestBytes) (smallestBytes = st.plan.bytes), (smallestFlops = st.slices * st.plan.flops);
    smallestMessage = Math.min(smallestMessage, st.plan.maxMessage);
    if (st.plan.bytes <= maxBytes && st.plan.maxMessage <= maxMessage) {
      const chosen = forSpeed ? cheapestStep(st, steps, maxFlops) : st;
      return { sliced: slicedOf(chosen), fits: true, smallestBytes, smallestFlops, smallestMessage };
    }
  }
  return { sliced: slicedOf(last!), fits: false, smallestBytes, smallestFlops, smallestMessage };
}

/** A base planned with free variables held fixed: those variables, and the states fixed before them (evidence). */
export interface Conditioned {
  vars: readonly number[];
  fixed: Int32Array;
}

/**
 * The order of a plan sliced to fit is the one searched for the whole graph; once a few variables are
 * conditioned on, the graph left may have a better one. A sliced plan that fits is searched again
 * (`plan`: bucket elimination's search with those variables held fixed) after its first one and its
 * first two slice variables, each sliced further by both criteria, and the cheapest by slicedCost of
 * these and `sliced` is kept. Under the plan's memory less 7/8 of its messages: Grids_11 (bucket
 * elimination) 2^29.6 → 2^25.6 configurations, Promedus_11 2^27.5 → 2^25.5; linkage_11 under 256
 * MiB 2^32.4 → 2^31. Only plans that fit are searched again, so a refusal, and the smallest budget
 * it names, stay those of `sliced`'s search.
 */
export function reslice(model: Model, sliced: SlicedPlan, maxBytes: number, maxMessage: number, maxFlops: number, forSpeed: boolean, plan: (condition: number[]) => { plan: BucketPlan; name: string }): SlicedPlan {
  let best = sliced, bestCost = slicedCost(sliced.slices, sliced.plan);
  for (let k = 1; k <= Math.min(RESLICE_PREFIXES, sliced.sliceVars.length); k++) {
    const vars = Array.from(sliced.sliceVars.subarray(0, k));
    const c = plan(vars);
    const r = sliceToFit(model, c.plan, maxBytes, maxMessage, maxFlops, forSpeed, { vars, fixed: sliced.fixed });
    if (!r.fits) continue;
    const cost = slicedCost(r.sliced.slices, r.sliced.plan);
    if (cost < bestCost) (best = { ...r.sliced, ordering: `${c.name}, searched again with ${k} of the sliced variables fixed` }), (bestCost = cost);
  }
  return best;
}

/** How many of a sliced plan's first variables reslice conditions on before searching again (1, then 2). */
const RESLICE_PREFIXES = 2;

/** From a step that fits, the steps after it while they can still be cheaper by slicedCost: the cheapest. */
function cheapestStep(first: SliceStep, rest: Iterator<SliceStep>, maxFlops: number): SliceStep {
  let best = first, bestCost = slicedCost(first.slices, first.plan);
  if (Math.log2(first.plan.maxMessage) <= CACHE_KNEE_LOG2) return first;
  for (let r = rest.next(); !r.done; r = rest.next()) {
    const st = r.value;
    if (slicedWork(st.slices, st.plan) > maxFlops) break;
    const cost = slicedCost(st.slices, st.plan);
    if (cost < bestCost) (best = st), (bestCost = cost);
    // Past the knee no step is cheaper (only work is added); far dearer, none will be.
    if (Math.log2(st.plan.maxMessage) <= CACHE_KNEE_LOG2 || cost > 2 * bestCost) break;
  }
  return best;
}

function size(vars: Int32Array, card: Int32Array): number {
  let s = 1;
  for (const v of vars) s *= card[v];
  return s;
}

/** What running slices needs (plain data: a worker rebuilds each slice's plan from it). */
export type SliceSpec = Pick<SlicedPlan, 'order' | 'fixed' | 'impossible' | 'sliceVars'> & { plan?: BucketPlan };

/** One slice's outcome: its log Z (−∞: no configuration in it) and, if finite, its marginals. */
export interface SliceOutcome {
  slice: number;
  logZ: number;
  marginals: Float64Array[] | null;
  /** Why Z_s = 0, when known. */
  zeroReason?: string;
}

/**
 * The slices of one sliced plan, run on one engine: the slices' plan and its run's shape
 * (bucketShape) are made once, and each slice is that plan with its own fixed states
 * (withFixedStates), so a slice costs its tables and kernels, not a planning pass of its own.
 */
export class SliceRunner {
  private readonly base: BucketPlan;
  private readonly shape: BucketShape;

  /** `onStreamed`: told the clique configurations each stream of run() ends (a slice's add up to its plan's flops, also when it ends early with Z_s = 0). */
  constructor(
    private readonly engine: Engine,
    private readonly model: Model,
    private readonly sp: SliceSpec,
    private readonly onStreamed?: (configurations: number) => void,
  ) {
    // A plan names its model's factors by index: run on another model (the one given to
    // slicedBucketPlan, not its SlicedBucketPlan.model with separable factors split) it read others.
    const planned = sp.plan && plannedModel(sp.plan);
    if (planned && planned !== model) throw new Error('a sliced plan run on another model than the one it was planned for (SlicedBucketPlan.model)');
    this.base = sp.plan ?? bucketPlan(model, sp.order, sliceFixed(sp, model.card, 0), sp.impossible);
    this.shape = bucketShape(model, this.base, sp.sliceVars.length > 0);
  }

  /** One slice's clique configurations, both passes (its plan's flops). */
  get perSlice(): number {
    return this.base.flops;
  }

  /** Slice s's plan. */
  planOf(s: number): BucketPlan {
    return this.sp.sliceVars.length === 0 ? this.base : withFixedStates(this.base, sliceFixed(this.sp, this.model.card, s));
  }

  /** Slice s's log Z and marginals. */
  run(s: number): SliceOutcome {
    const told = this.onStreamed;
    let streamed = 0;
    const r = runBucketElimination(this.engine, this.model, this.planOf(s), undefined, this.shape, told && ((c) => ((streamed += c), told(c))));
    if (told && streamed < this.perSlice) told(this.perSlice - streamed);
    return r.logZ > -Infinity ? { slice: s, logZ: r.logZ, marginals: r.marginals } : { slice: s, logZ: r.logZ, marginals: null, zeroReason: r.zeroReason };
  }

  /** A decoding task (decodeSteps): its slice's upward pass and the configurations decoded within it (runBucketElimination with `decode`). */
  decodeTask(t: DecodeTask, mode: 'sample' | 'max', seed: number): DecodedSlice {
    const req: DecodeRequest = { mode, count: t.count, seed, chain: t.chain };
    const r = runBucketElimination(this.engine, this.model, this.planOf(t.slice), req, this.shape);
    return { logZ: r.logZ, configurations: r.logZ > -Infinity ? r.configurations! : null };
  }
}

/** Runs the given slices one after another on this engine. */
export function runSlices(engine: Engine, model: Model, sp: SliceSpec, slices: Iterable<number>): SliceOutcome[] {
  const runner = new SliceRunner(engine, model, sp);
  return Array.from(slices, (s) => runner.run(s));
}

/** A decoding's configurations (count · n, row by row) as one array per configuration. */
function rows(cfg: Int32Array, count: number, n: number): Int32Array[] {
  return Array.from({ length: count }, (_, c) => cfg.slice(c * n, (c + 1) * n));
}

/** One decoding task of a sliced plan: slice `slice`'s upward pass and `count` configurations (chain: its sampling stream; absent for a plan of one slice). */
export interface DecodeTask {
  slice: number;
  count: number;
  chain?: number;
}
/** A decoding task's outcome: the slice's log Z (its largest log-potential in max mode) and its configurations (count · n, row by row; null when Z_s = 0). */
export interface DecodedSlice {
  logZ: number;
  configurations: Int32Array | null;
}
/** What a sliced plan's decoding gives: log Z (or the largest log-potential) and the configurations. */
export interface Decoded {
  logZ: number;
  configurations: Int32Array[];
}
/** Slices a decoding batch holds (their first configurations, for MAP only while the batch is read). */
const DECODE_BATCH = 256;
/** decodeSteps: yields batches of independent tasks, is sent their outcomes in task order, returns the decoding. */
export type DecodeSteps = Generator<DecodeTask[], Decoded, DecodedSlice[]>;

/**
 * Exact samples or a MAP configuration along a sliced plan (exactSample, exactMAP) as batches of
 * independent slice tasks, so that one thread (decodeSlices) or worker threads (exact-parallel.ts)
 * run them with the same result bit for bit. A plan of one slice is decoded in one task. MAP: each
 * slice's max-product pass and its maximising configuration; the largest wins (the first on ties).
 * Samples: each slice's upward pass gives Z_s (and its first sample); each of the `count`
 * configurations draws its slice from Z_s / Z (mulberry32 on the seed; the first slice whose
 * cumulated weight passes the draw, so never one of Z_s = 0) and takes that slice's next sample; a
 * slice drawn more than once is decoded again for all it needs (its own stream: chain s of the
 * seed), in a second batch. Independent slices and independent draws: i.i.d. samples of the model.
 * logZ: the largest log-potential (max), or log Σ Z_s in slice order (sample).
 */
export function* decodeSteps(n: number, slices: number, mode: 'sample' | 'max', count: number, seed: number): DecodeSteps {
  if (slices === 1) {
    const [out] = yield [{ slice: 0, count }];
    return { logZ: out.logZ, configurations: out.logZ > -Infinity ? rows(out.configurations!, count, n) : [] };
  }
  // Each slice's first configuration, in batches of DECODE_BATCH slices: kept for sampling (a slice
  // drawn once uses it); for MAP only the best so far.
  const logZs = new Float64Array(slices), firsts: (Int32Array | null)[] = new Array(slices).fill(null);
  let top = -Infinity, best: Int32Array | null = null;
  for (let s0 = 0; s0 < slices; s0 += DECODE_BATCH) {
    const batch = yield Array.from({ length: Math.min(DECODE_BATCH, slices - s0) }, (_, i) => ({ slice: s0 + i, count: 1, chain: s0 + i }));
    batch.forEach((r, i) => {
      logZs[s0 + i] = r.logZ;
      if (mode === 'sample') firsts[s0 + i] = r.configurations;
      if (r.logZ > top) (top = r.logZ), (best = r.configurations!);
    });
  }
  if (top === -Infinity) return { logZ: -Infinity, configurations: [] };
  if (mode === 'max') return { logZ: top, configurations: [best!] };
  // The slices' weights, cumulated in slice order.
  let sum = 0;
  const cum = new Float64Array(slices);
  for (let s = 0; s < slices; s++) cum[s] = sum += logZs[s] > -Infinity ? Math.exp(logZs[s] - top) : 0;
  const [lo, hi] = seedWords(seed);
  const rand = mulberry32((lo ^ Math.imul(hi, 0x9e3779b1) ^ 0x51ce5eed) >>> 0);
  const drawn = new Int32Array(count), need = new Int32Array(slices);
  for (let c = 0; c < count; c++) {
    const u = rand() * sum;
    let a = 0, b = slices - 1;
    while (a < b) {
      const mid = (a + b) >> 1;
      if (cum[mid] > u) b = mid;
      else a = mid + 1;
    }
    need[(drawn[c] = a)]++;
  }
  const again: DecodeTask[] = [];
  for (let s = 0; s < slices; s++) if (need[s] > 1) again.push({ slice: s, count: need[s], chain: s });
  const redone = again.length > 0 ? yield again : [];
  const pools: Int32Array[][] = new Array(slices);
  for (let s = 0; s < slices; s++) if (need[s] === 1) pools[s] = [firsts[s]!];
  again.forEach((t, i) => (pools[t.slice] = rows(redone[i].configurations!, t.count, n)));
  const next = new Int32Array(slices);
  return { logZ: top + Math.log(sum), configurations: Array.from(drawn, (s) => pools[s][next[s]++]) };
}

/** decodeSteps run to the end, each batch by `run` (its outcomes in task order). */
export function driveDecode(steps: DecodeSteps, run: (tasks: DecodeTask[]) => DecodedSlice[]): Decoded {
  for (let step = steps.next(); ; ) {
    if (step.done) return step.value;
    step = steps.next(run(step.value));
  }
}

/** decodeSteps on this thread (exactSample, exactMAP). */
export function decodeSlices(engine: Engine, model: Model, sp: SlicedPlan, mode: 'sample' | 'max', count: number, seed: number): Decoded {
  const runner = new SliceRunner(engine, model, sp);
  return driveDecode(decodeSteps(model.n, sp.slices, mode, count, seed), (tasks) => tasks.map((t) => runner.decodeTask(t, mode, seed)));
}

/**
 * The slices' sum, in slice order, folded in as outcomes arrive (in any order: early ones wait for
 * their turn), so only the running sums and the out-of-turn outcomes are held, not every slice's
 * marginals: log Z = log Σ_s Z_s and marginals Σ_s (Z_s / Z) p_s, the weights taken relative to the
 * largest Z_s so far (the sums rescaled when it grows); slices with Z_s = 0 contribute nothing. One
 * slice gives its own log Z and marginals exactly.
 */
export class SliceSum {
  private next = 0;
  private readonly waiting = new Map<number, SliceOutcome>();
  private top = -Infinity;
  private sum = 0;
  /** Every variable's running sums in one array (variable v's at off[v] …): no array per variable. */
  private readonly acc: Float64Array;
  private readonly off: Int32Array;
  private zeroReason: string | undefined;

  constructor(
    private readonly model: Model,
    readonly slices: number,
  ) {
    this.off = new Int32Array(model.n + 1);
    for (let v = 0; v < model.n; v++) this.off[v + 1] = this.off[v] + model.card[v];
    this.acc = new Float64Array(this.off[model.n]);
  }

  add(o: SliceOutcome): void {
    this.waiting.set(o.slice, o);
    for (let w = this.waiting.get(this.next); w !== undefined; w = this.waiting.get(this.next)) {
      this.waiting.delete(this.next++);
      this.fold(w);
    }
  }

  private fold(o: SliceOutcome): void {
    if (!(o.logZ > -Infinity)) {
      this.zeroReason ??= o.zeroReason;
      return;
    }
    const { acc, off, model } = this;
    if (o.logZ > this.top) {
      if (this.top > -Infinity) {
        const r = Math.exp(this.top - o.logZ);
        this.sum *= r;
        for (let e = 0; e < acc.length; e++) acc[e] *= r;
      }
      this.top = o.logZ;
    }
    const w = Math.exp(o.logZ - this.top);
    this.sum += w;
    for (let v = 0; v < model.n; v++) {
      const a = off[v], p = o.marginals![v];
      for (let k = 0; k < off[v + 1] - a; k++) acc[a + k] += w * p[k];
    }
  }

  /** The sum of every slice (an Error when some slice has not been added). */
  result(): ExactOutcome {
    if (this.next < this.slices) throw new Error(`slices: ${this.slices - this.next} of ${this.slices} not summed`);
    if (this.top === -Infinity) return { logZ: -Infinity, marginals: null, zeroReason: this.slices === 1 ? this.zeroReason : 'every slice has zero potential' };
    const all = this.acc.map((x) => x / this.sum), off = this.off;
    const marginals = Array.from({ length: this.model.n }, (_, v) => all.subarray(off[v], off[v + 1]));
    return { logZ: this.top + Math.log(this.sum), marginals };
  }
}

/** The sum of every slice's outcome (SliceSum), given all at once in any order. */
export function combineSlices(model: Model, outcomes: SliceOutcome[]): ExactOutcome {
  const sum = new SliceSum(model, outcomes.length);
  for (const o of outcomes) sum.add(o);
  return sum.result();
}

/**
 * Runs slices 0 … slices − 1 one after another on this engine, each summed as it ends (SliceSum):
 * the slices' marginals are never all held. `onProgress`: phase 'exact', in clique configurations
 * streamed (total: every slice's, the result's flops), as each clique's stream ends.
 */
export function runAndSumSlices(engine: Engine, model: Model, sp: SliceSpec & { slices: number }, onProgress?: (p: Progress) => void): ExactOutcome {
  let done = 0, total = 0;
  const sum = new SliceSum(model, sp.slices), runner = new SliceRunner(engine, model, sp, onProgress && ((c) => onProgress({ phase: 'exact', done: (done += c), total })));
  total = sp.slices * runner.perSlice;
  for (let s = 0; s < sp.slices; s++) sum.add(runner.run(s));
  return sum.result();
}
