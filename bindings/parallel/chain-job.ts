// What a worker of runParallel runs (runJob): its share of a run's chains, each chain's events posted
// to the parent as they happen. Apart from parallel-job.ts (the parent's side: planning, folding)
// so that a worker loads only the Gibbs samplers, the default and the common case: block Gibbs,
// DHMC and MALA (the relaxation and its linear algebra, ~40 ms of module loading per worker) are
// imported when a job asks for them.
import type { Engine } from '../core/engine.ts';
import { Model, type ModelData } from '../core/model.ts';
import type { CanonicalForm } from '../core/canonical.ts';
import type { InferenceResult } from '../core/result.ts';
import type { DiscreteEvent } from '../samplers/chains.ts';
import type { ContinuousEvent, DHMCOptions } from '../samplers/dhmc.ts';
import type { BlockGibbsOptions } from '../samplers/blockgibbs.ts';
import type { MALAOptions } from '../samplers/langevin.ts';
import { gibbsChains, gibbsRun, gibbsSampler, type GibbsOptions } from '../samplers/gibbs.ts';
import { FactorGibbsSampler, factorGibbsChains, gibbsKernel } from '../samplers/factor-gibbs.ts';
import { refuseZeroModel } from '../core/feasible.ts';

/** The methods whose independent chains `runParallel` splits across workers. */
export const PARALLEL_METHODS = ['gibbs', 'blockgibbs', 'dhmc', 'mala'] as const;
/** One of `PARALLEL_METHODS`. */
export type ParallelMethod = (typeof PARALLEL_METHODS)[number];

/** Options of runParallel: the method's own options (as for infer) plus the worker count. */
export type ParallelOptions = GibbsOptions & BlockGibbsOptions & DHMCOptions & MALAOptions & {
  /** The sampler (default 'gibbs'). */
  method?: ParallelMethod;
  /** Workers (default: min(chains, available cores)); never more than chains. */
  workers?: number;
};

/** The options a worker needs: plain data only (no signal, no callbacks). */
export type JobOptions = Omit<ParallelOptions, 'signal' | 'onProgress' | 'workers'>;

/** A worker's share of a run. */
export interface WorkerJob {
  method: ParallelMethod;
  model: ModelData;
  opts: JobOptions;
  /** The chains this worker runs, in order. */
  chains: number[];
  /** Browsers: where the worker fetches the .wasm (absolute URL); null: its default location. */
  wasm?: string | null;
  /**
   * The model's canonical form, as the parent built it while planning (Gibbs on pairwise models):
   * the worker binds it instead of building it again (~30 ms on a 256² lattice).
   */
  form?: CanonicalForm | null;
}

/** One event of one chain: a discrete sampler's (chains.ts) or a continuous one's (dhmc.ts). */
export type ChainEvent = DiscreteEvent | ContinuousEvent;

/** What a worker posts to the parent. */
export type WorkerMessage =
  /** Facts of the worker's setup the result reports (the relaxation's). */
  | { type: 'setup'; diagnostics: InferenceResult['diagnostics'] }
  /** One event of one chain; `done`: sweeps or transitions completed since the previous message. */
  | { type: 'event'; chain: number; event: ChainEvent | null; done: number }
  | { type: 'finished' }
  | { type: 'error'; message: string; name: string };

/** Typed arrays an event carries (moved, not copied, to the parent). */
export function transferables(e: ChainEvent | null): ArrayBuffer[] {
  if (!e) return [];
  if (e.kind === 'batch' && 'sums' in e) return [e.sums.buffer as ArrayBuffer];
  if (e.kind === 'batch' && 'prob' in e) return [e.prob, e.empirical, e.pairs].filter((a) => a !== null).map((a) => a!.buffer as ArrayBuffer);
  if (e.kind === 'trace') return e.series.map((a) => a.buffer as ArrayBuffer);
  return [];
}

/** Posts chain `chain`'s event with its progress: a step's sweeps (discrete samplers) or transitions (continuous ones). */
export function eventPoster(post: (m: WorkerMessage) => void): (chain: number, e: ChainEvent) => void {
  return (chain, e) => post({ type: 'event', chain, event: e, done: e.kind !== 'step' ? 0 : 'sweeps' in e ? e.sweeps : e.iterations });
}

/** Worker side: runs the job's chains on `engine`, posting each chain's events as they happen, then 'finished'. */
export async function runJob(engine: Engine, job: WorkerJob, post: (m: WorkerMessage) => void): Promise<void> {
  const model = Model.fromData(job.model);
  // The search that proves Z = 0 (runParallel's own thread has no engine; Model.zeroReason ran there).
  refuseZeroModel(model, job.method, engine);
  if (job.method === 'gibbs') return runGibbsChains(engine, model, job.opts, job.chains, post, job.form ?? undefined);
  const { runChains } = await import('./parallel-job.ts');
  runChains(engine, model, job.method, job.opts, job.chains, post);
}

/**
 * Gibbs chains of a run (the canonical-form lanes kernel, or the factor-graph kernel on models with
 * a factor of arity > 2), each chain's events posted, then 'finished'. `form`: the model's canonical
 * form when the caller has it.
 */
export function runGibbsChains(engine: Engine, model: Model, o: JobOptions, chains: number[], post: (m: WorkerMessage) => void, form?: CanonicalForm): void {
  const event = eventPoster(post);
  if (gibbsKernel(model) === 'factor-graph') {
    const sampler = new FactorGibbsSampler(engine, model);
    try {
      factorGibbsChains(sampler, gibbsRun(o), chains, event);
    } finally {
      sampler.dispose();
    }
  } else {
    const run = gibbsRun(o);
    const sampler = gibbsSampler(engine, model, run, chains.length, chains.length, form);
    post({ type: 'setup', diagnostics: { probabilityTable: sampler.table !== null } });
    try {
      gibbsChains(sampler, run, chains, event);
    } finally {
      sampler.dispose();
    }
  }
  post({ type: 'finished' });
}
