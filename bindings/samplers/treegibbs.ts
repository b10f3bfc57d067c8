// Tree-block Gibbs on the discrete model (Hamze & de Freitas 2004): the blocks of
// bindings/treeblocks.ts, each redrawn exactly given the rest by forward filtering / backward
// sampling in WASM (assembly/treegibbs.ts). Used as AIS's transition (bindings/logz.ts) and as a
// sampler of its own with the shape init(seed, chain) → state, step(state, sweeps, acc?) → info.

import type { Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import { BoundModel } from '../core/bound.ts';
import { treePartition, validatePartition, type TreePartition } from './treeblocks.ts';
import { CancelledError, ModelError } from '../core/errors.ts';
import { checkCount, checkOptionKeys, MAX_LOOP_COUNT } from '../core/options.ts';
import { DiscreteChainSampler, type DiscreteChainState, type DiscreteStepInfo } from './discrete-sampler.ts';
import { batchMeansResult, chainOrderFolder, emitChains, range, DiscreteReducer, type DiscreteEvent } from './chains.ts';
import { batchedChains, gibbsBatchWidth, gibbsRun, GIBBS_F64_BATCH, GIBBS_OPTION_KEYS, type GibbsOptions } from './gibbs.ts';
import { GibbsLanes, lanesApply, type LanesBatch } from './gibbs-lanes.ts';
import { toCanonical } from '../core/canonical.ts';
import type { InferenceResult } from '../core/result.ts';
import { EngineError } from '../core/errors.ts';
import { refuseZeroModel } from '../core/feasible.ts';
import { zeroReadStates } from '../core/sampled-checks.ts';

/** Tag of the tree-block sampler's stream within a chain. */
const TREE_STREAM = 0x5442; // "TB"

/**
 * The partition copied into a bound model's arena: the header assembly/treegibbs.ts reads, and a
 * work buffer of the size it needs. Edge tables index W's value array, so they serve any header
 * sharing the model's structure (AIS's tempered copy).
 */
export class BoundTreeBlocks {
  /** Address of the tree blocks' header in WASM memory. */
  readonly header: number;
  /** Address of the work buffer of the tree kernels. */
  readonly work: number;

  /**
   * Copies `partition` into `bound`'s arena (ModelError when it is not a valid tree partition of the form).
   * @param bound The bound model the blocks belong to.
   * @param partition The blocks.
   * @param keepWeights Room in the work buffer for the Rao–Blackwellised sweeps' kept weights (TreeGibbsSampler with raoBlackwell; nobody else writes them).
   */
  constructor(readonly bound: BoundModel, readonly partition: TreePartition, keepWeights = false) {
    const form = bound.form;
    const { arena, engine } = bound;
    const n = form.n;
    validatePartition(form, partition);
    const stateStart = new Int32Array(n + 1);
    let maxCard = 1;
    for (let v = 0; v < n; v++) {
      const K = form.oneHot[v] ? form.card[v] : 2;
      stateStart[v + 1] = stateStart[v] + K;
      maxCard = Math.max(maxCard, K);
    }
    // The bit of (v, k), or −1 for a free bit's state 0 (which sets no bit).
    const bitOf = (v: number, k: number) => (form.oneHot[v] ? form.blockStart[v] + k : k === 1 ? form.blockStart[v] : -1);
    const findEntry = (p: number, q: number) => {
      if (p < 0 || q < 0) return -1;
      for (let k = form.rowPtr[p]; k < form.rowPtr[p + 1]; k++) if (form.col[k] === q) return k;
      return -1;
    };
    const pairOff = new Int32Array(n).fill(-1);
    const pairIdx: number[] = [];
    for (let v = 0; v < n; v++) {
      const p = partition.parent[v];
      if (p < 0) continue;
      pairOff[v] = pairIdx.length;
      const Kv = stateStart[v + 1] - stateStart[v], Kp = stateStart[p + 1] - stateStart[p];
      for (let k = 0; k < Kv; k++) for (let l = 0; l < Kp; l++) pairIdx.push(findEntry(bitOf(v, k), bitOf(p, l)));
    }
    const blockPtr = new Int32Array(partition.blocks.length + 1);
    const order = new Int32Array(n);
    partition.blocks.forEach((b, i) => {
      order.set(b, blockPtr[i]);
      blockPtr[i + 1] = blockPtr[i] + b.length;
    });
    if (blockPtr[partition.blocks.length] !== n) throw new ModelError('tree partition does not cover every variable once');
    const ptrs = [blockPtr, order, partition.parent, stateStart, pairOff, Int32Array.from(pairIdx.length ? pairIdx : [-1])].map((a) => arena.allocI32(a));
    ptrs.push(arena.allocF64(n), arena.allocF64(n)); // the free-bit path's coupling cache
    this.header = arena.alloc(engine.kernels.treeBlocksBytes());
    engine.call('treeBlocksInit', (k) => k.treeBlocksInit(this.header, partition.blocks.length, stateStart[n], maxCard, ...ptrs));
    this.work = arena.alloc(engine.kernels.treeWorkBytes(bound.header, this.header, keepWeights ? 1 : 0));
    engine.kernels.treeRefresh(bound.header, this.header);
  }
}

/** A tree-block Gibbs chain's state (its address in WASM memory and chain id). */
export type TreeGibbsState = DiscreteChainState;
/** What a tree-block Gibbs step reports: sweeps run and the fraction of variables that changed state. */
export type TreeGibbsInfo = DiscreteStepInfo;

/**
 * Tree-block Gibbs: each sweep redraws every block of an induced-forest partition exactly given the rest (forward
 * filtering, backward sampling). Call dispose() when done.
 */
export class TreeGibbsSampler extends DiscreteChainSampler {
  /** The partition bound into the sampler's memory. */
  readonly tree: BoundTreeBlocks;

  /**
   * @param raoBlackwell What step's accumulator receives: each bit's conditional probability given the other
   * blocks, computed when its block is redrawn (true, the default), or its sampled value.
   */
  constructor(engine: Engine, model: Model, partition?: TreePartition, readonly raoBlackwell = true) {
    super(engine, model, TREE_STREAM, 'tree gibbs');
    this.tree = new BoundTreeBlocks(this.bound, partition ?? treePartition(this.form), raoBlackwell);
  }

  /** The partition the sampler runs on. */
  get partition(): TreePartition {
    return this.tree.partition;
  }

  /**
   * Runs `sweeps` passes over the blocks; with `acc` (f64 per bit) adds, each sweep, every bit's conditional
   * probability given the other blocks (raoBlackwell) or its value after the sweep. The draws are the same either way.
   */
  step(state: TreeGibbsState, sweeps: number, acc = 0): TreeGibbsInfo {
    checkCount('sweeps', sweeps, 1, MAX_LOOP_COUNT);
    const header = this.header();
    this.issued.check(state, acc);
    const changed = this.engine.call('tree gibbs step', (k) => k.treeGibbsStep(header, this.tree.header, state.ptr, sweeps, acc, this.tree.work, this.raoBlackwell ? 1 : 0));
    return { sweeps, changeRate: changed / (sweeps * this.form.n) };
  }
}

/**
 * Tree-block Gibbs chains in f64x2 lanes (assembly/samplers/treegibbs_lanes.ts), for forms of free
 * bits with finite values (lanesApply): chain c of a batch is TreeGibbsSampler's chain (seed, c),
 * bit for bit (states, sums, change counts, generator). The batch layout, seeding, accumulators
 * and reads are GibbsLanes'; only the sweep differs. Call dispose() when done.
 */
export class TreeGibbsLanes extends GibbsLanes {
  /** The partition bound into the sampler's memory. */
  readonly tree: BoundTreeBlocks;
  private readonly treeWork: number;

  /** @param raoBlackwell As TreeGibbsSampler's: conditional probabilities (default) or sampled bits into the accumulator. */
  constructor(engine: Engine, model: Model, width: number, partition?: TreePartition, readonly raoBlackwell = true) {
    super(engine, model, width, TREE_STREAM, 'f64', 'sequential', 'off');
    if (!lanesApply(this.form)) throw new ModelError('tree-block Gibbs in lanes needs a model of binary variables with finite potentials');
    this.tree = new BoundTreeBlocks(this.bound, partition ?? treePartition(this.form));
    this.treeWork = this.bound.arena.alloc(engine.kernels.treeGibbsLanesWorkBytes(this.bound.header, this.width));
  }

  /** The partition the sampler runs on. */
  get partition(): TreePartition {
    return this.tree.partition;
  }

  protected override sweeps(batch: LanesBatch, sweeps: number, acc: number): void {
    const header = this.header();
    this.engine.call('tree gibbs step', (k) => k.treeGibbsLanesStep(header, this.tree.header, batch.ptr, batch.width, sweeps, acc, this.treeWork, this.raoBlackwell ? 1 : 0));
  }
}

/**
 * Options of `runTreeGibbs`: GibbsOptions (defaults GIBBS_DEFAULTS) and the partition; `precision`
 * other than 'f64', `scan` other than 'sequential' and `probabilityTable: 'on'` are refused (they are
 * options of the single-site scan).
 */
export interface TreeGibbsOptions extends GibbsOptions {
  /** The blocks (default: treePartition's greedy induced forests). */
  partition?: TreePartition;
  /**
   * Run the chains in f64x2 lanes, up to GIBBS_F64_BATCH a batch (default true; binary models with
   * finite potentials only, others run one chain at a time). The same result bit for bit either way.
   */
  lanes?: boolean;
  /**
   * Marginals from each sweep's exact conditional probabilities of every block's variables given the
   * other blocks (default true: Rao–Blackwellised, as Gibbs's), or from the sampled states (false: the
   * states the chains visit counted; a state never drawn reads 0 ± 0). The draws are the same either way.
   */
  raoBlackwell?: boolean;
}

/**
 * Every option runTreeGibbs reads (TreeGibbsOptions): it refuses any other. precision, scan and
 * probabilityTable are read to refuse all but the single-site defaults.
 */
export const TREE_GIBBS_OPTION_KEYS: readonly string[] = [...GIBBS_OPTION_KEYS, 'partition', 'lanes', 'raoBlackwell'];

/**
 * With `raoBlackwell: false`, the warning for states no chain visited although arc consistency leaves
 * them: their marginals are counts, 0 with a standard error of 0, which bounds nothing (UAI
 * ObjectDetection_13: 12–14 variables 4 SE and more off, states of probability ≈ 10⁻⁴ read 0 ± 0,
 * with no warning). The default marginals read such a state's conditional probability every sweep.
 */
function unseenStates(model: Model, marginals: Float64Array[], se: Float64Array[] | null, draws: number): string | null {
  // Arc consistency (a JS pass over the factors) only when some state read 0 ± 0.
  if (!marginals.some((row, v) => row.some((p, k) => p === 0 && (se?.[v][k] ?? 0) === 0))) return null;
  // Only states arc consistency leaves: those it rules out (evidence through a hard equality) have probability 0.
  const { states, variables } = zeroReadStates(model, marginals, se, null);
  if (states === 0) return null;
  return `${states} state${states > 1 ? 's' : ''} of ${variables} variable${variables > 1 ? 's' : ''} that no factor rules out ${states > 1 ? 'were' : 'was'} never sampled: ${states > 1 ? 'their' : 'its'} marginal reads 0 with a standard error of 0, which bounds nothing (with raoBlackwell false tree-block Gibbs counts the states its chains visit): a state never seen in ${draws} draws can have probability up to about ${(3 / draws).toPrecision(2)} (3 / draws) even where the chains mix; the default (raoBlackwell true) estimates rare states from every sweep's conditionals`;
}

/**
 * Runs independent tree-block Gibbs chains (method 'treegibbs'): the options, defaults and
 * batch-means estimates of runGibbs, each sweep redrawing every block exactly. The marginals
 * accumulate each block's exact conditional marginals given the other blocks, every kept sweep
 * (Rao–Blackwellised; `raoBlackwell: false`: the sampled bits). On binary models with finite
 * potentials the chains run in f64x2 lanes (TreeGibbsLanes, unless `lanes: false`), with the same
 * result bit for bit.
 */
export function runTreeGibbs(engine: Engine, model: Model, opts: TreeGibbsOptions = {}): InferenceResult {
  checkOptionKeys(opts, TREE_GIBBS_OPTION_KEYS);
  const run = gibbsRun(opts);
  const t0 = performance.now();
  if (opts.lanes !== undefined && typeof opts.lanes !== 'boolean') throw new ModelError(`lanes must be true or false, got ${String(opts.lanes)}`);
  if (opts.raoBlackwell !== undefined && typeof opts.raoBlackwell !== 'boolean') throw new ModelError(`raoBlackwell must be true or false, got ${String(opts.raoBlackwell)}`);
  const rb = opts.raoBlackwell ?? true;
  refuseZeroModel(model, 'treegibbs', engine);
  // The single-site scan's options have no tree-block counterpart: refused, not ignored (as the CLI does).
  if (run.precision !== 'f64' || run.scan !== 'sequential' || run.probabilityTable === 'on') {
    throw new ModelError("precision 'f32', scan 'colored' and probabilityTable 'on' apply to method 'gibbs', not to tree-block Gibbs");
  }
  const form = opts.lanes !== false && model.isPairwise ? toCanonical(model) : null;
  const lanes = form !== null && lanesApply(form);
  const sampler = lanes ? new TreeGibbsLanes(engine, model, Math.min(GIBBS_F64_BATCH, gibbsBatchWidth(run, form.nBits)), opts.partition, rb) : new TreeGibbsSampler(engine, model, opts.partition, rb);
  try {
    const red = new DiscreteReducer(sampler.form, false);
    const total = run.chains * (run.samples + run.burnin);
    // A block sweep costs several single-site sweeps: keep each WASM call near 5·10⁵ sites.
    const chunk = Math.max(1, Math.floor(5e5 / Math.max(1, sampler.form.n)));
    let done = 0;
    const progress = (e: DiscreteEvent) => {
      if (e.kind === 'step') opts.onProgress?.({ phase: 'treegibbs', done: (done += e.sweeps), total });
    };
    let finished: boolean;
    if (sampler instanceof TreeGibbsLanes) {
      // Chain after chain, as one chain at a time folds them (chains.ts chainOrderFolder).
      const fold = chainOrderFolder<DiscreteEvent>(run.chains, sampler.width, (e, c) => red.add(e, c));
      finished = batchedChains(sampler, run, range(run.chains), chunk, (c, e) => (fold.emit(c, e), progress(e)), opts.signal);
      fold.finish();
    } else {
      finished = emitChains(sampler, { ...run, chains: range(run.chains), chunk, signal: opts.signal }, (c, e) => (red.add(e, c), progress(e)));
    }
    if (red.stats.batches === 0) throw new CancelledError('tree-block Gibbs was cancelled before the first batch completed: no estimate');
    const seconds = (performance.now() - t0) / 1000;
    const r = batchMeansResult('treegibbs', sampler.form, red, run, { changeRate: red.changeRate, treeBlocks: sampler.partition.blocks.length, siteUpdatesPerSecond: (red.done * sampler.form.n) / Math.max(1e-9, seconds), lanes, raoBlackwell: rb }, seconds, !finished);
    // Rao–Blackwellised marginals get the rare-states check with every sampled result (core/sampled-checks.ts).
    const unseen = rb ? null : unseenStates(model, r.marginals, r.marginalStdErr, run.chains * run.samples);
    return unseen ? { ...r, warnings: [...(r.warnings ?? []), unseen] } : r;
  } finally {
    sampler.dispose();
  }
}
