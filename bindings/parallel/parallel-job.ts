// Parallel chains, host-independent: how the parent splits a run and combines what the workers
// report (runParallelOn), and the relaxed samplers' share of a worker's work (runChains; what a
// worker runs first is chain-job.ts runJob). The hosts only start workers and carry messages:
// parallel.ts (Node, worker_threads) and parallel-browser.ts (Web Workers).
//
// Exactness: every chain draws from its own (seed, chain) streams and, for every method here, its
// warm-up adapts on that chain's draws alone; a chain's events (chains.ts DiscreteEvent, dhmc.ts
// ContinuousEvent) therefore do not depend on which worker ran it or on the other chains. The parent
// keeps each chain's events and, at the end, folds them chain by chain through the same reducer
// runGibbs / runBlockGibbs / runDHMC / runMALA use, so for a given seed the result is bit-identical
// to the single-thread run and independent of the number of workers.
import type { Engine } from '../core/engine.ts';
import { Model, type ModelData } from '../core/model.ts';
import { canonicalSize, stateLayout, toCanonical, type CanonicalForm } from '../core/canonical.ts';
import { DiscreteReducer, type DiscreteEvent } from '../samplers/chains.ts';
import { gibbsResult, gibbsRun } from '../samplers/gibbs.ts';
import { factorGibbsResult, gibbsKernel } from '../samplers/factor-gibbs.ts';
import { eventPoster, runGibbsChains, PARALLEL_METHODS, type ChainEvent, type JobOptions, type ParallelMethod, type ParallelOptions, type WorkerJob, type WorkerMessage } from './chain-job.ts';
import { BLOCK_GIBBS_DEFAULTS, BlockGibbsSampler, blockGibbsChains, blockGibbsResult, blockGibbsRun } from '../samplers/blockgibbs.ts';
import { ContinuousReducer, continuousChains, continuousPlan, continuousSampler, DHMC_DEFAULTS, type ContinuousEvent, type ContinuousPlan, type RunSpec } from '../samplers/dhmc.ts';
import { MALA_DEFAULTS } from '../samplers/langevin.ts';
import { checkInferOptions, relaxationFor, type InferOptions } from '../infer.ts';
import { relaxationDiagnostics, type RelaxationOptions } from '../relax/relaxation.ts';
import type { InferenceResult, Progress } from '../core/result.ts';
import { EngineError, ModelError } from '../core/errors.ts';
import { checkCount, MAX_WORKERS } from '../core/options.ts';
import { withSampledChecks } from '../core/sampled-checks.ts';
import { refuseZeroModel } from '../core/feasible.ts';

/**
 * Site updates (chains × sweeps × bits) from which a Gibbs run starts workers by default
 * (autoWorkers): worker start-up measured at 0.1–0.5 s (engine compile, model copy; more on a loaded
 * machine) against ~10⁸ site updates/s per core, so below this the workers cost more than they save.
 */
export const AUTO_WORKERS_MIN_UPDATES = 1e8;

/**
 * Sweeps per chain (samples + burn-in) below which a Gibbs run stays on this thread whatever its
 * size: each worker builds and binds its own copy of the model (a few sweeps' worth of time and a
 * copy of the memory), which a short run on a huge model does not win back — the 2-chain, 110-sweep
 * run on a 1024² lattice took 7.5 s and 1.17 GB on two workers against 7.0 s and 0.85 GB on one
 * thread.
 */
export const AUTO_WORKERS_MIN_SWEEPS = 1000;

/**
 * Worker start-up in site updates of this thread's time: 0.08–0.5 s per run of the built package
 * (engine compile, model copy; `npm run bench:workers`: 79 ms idle, 135 ms under load) at 1–3·10⁸
 * updates/s (summing the fields; reading the probability table).
 */
export const AUTO_WORKERS_STARTUP_UPDATES = 5e7;

/**
 * Time per site of a batch of 1–2 f64 chains (one f64x2 vector; its Philox evaluations take two
 * blocks of each chain) relative to a batch of 4 (two interleaved vectors): on the 256² Ising
 * lattice (bench:lanes, CPU time) 2 chains at ~108 M updates/s against 4 at ~160 M/s summing the
 * fields (0.74), ~210 against ~300 M/s reading the probability table (0.71).
 */
const F64_PAIR_COST = 0.73;

/** Relative time per sweep of `chains` Gibbs chains on one thread (f64: batches of ≤ 4; f32: a vector per 4). */
function threadCost(chains: number, precision: string): number {
  if (precision === 'f32') return Math.ceil(chains / 4);
  const rest = chains % 4;
  return Math.floor(chains / 4) + (rest === 0 ? 0 : rest <= 2 ? F64_PAIR_COST : 1);
}

/**
 * The default number of workers for a run on `cores` cores: w = min(chains, cores) for a Gibbs run
 * of at least AUTO_WORKERS_MIN_SWEEPS sweeps per chain whose site updates pay for the workers'
 * start-up — at least AUTO_WORKERS_MIN_UPDATES and at least AUTO_WORKERS_STARTUP_UPDATES / g,
 * where g is the share of this thread's time the workers save (the busiest worker holds ⌈chains/w⌉
 * chains; threadCost). So 4 f64 chains on 2 cores (each worker one vector, this thread two
 * interleaved ones: g ≈ 0.27) need ≈ 1.85·10⁸ updates, 8 chains (g = 0.5) 10⁸, and 2
 * chains never start workers (one chain per worker runs a half-empty vector: g = 0). 1 (this
 * thread) otherwise and for the other methods. The result does not depend on it.
 */
export function autoWorkers(method: string, model: Model, opts: ParallelOptions, cores: number): number {
  if (method === 'dhmc' || method === 'mala' || method === 'blockgibbs') return autoRelaxedWorkers(method, model, opts, cores);
  if (method !== 'gibbs') return 1;
  const run = gibbsRun(opts);
  const w = Math.max(1, Math.min(run.chains, cores));
  if (w === 1 || run.samples + run.burnin < AUTO_WORKERS_MIN_SWEEPS) return 1;
  // Site updates: bits of the canonical form, or variables for the factor-graph kernel (arity > 2).
  const canonical = gibbsKernel(model) === 'canonical';
  const sites = canonical ? canonicalSize(model).nBits : model.n;
  const updates = run.chains * (run.samples + run.burnin) * sites;
  const saved = canonical ? 1 - threadCost(Math.ceil(run.chains / w), run.precision) / threadCost(run.chains, run.precision) : 1 - 1 / w;
  const need = saved > 0 ? Math.max(AUTO_WORKERS_MIN_UPDATES, AUTO_WORKERS_STARTUP_UPDATES / saved) : Infinity;
  return updates >= need ? w : 1;
}

/**
 * Bit-steps (chains × (samples + burn-in) × bits, × leapfrog steps for DHMC) from which a DHMC,
 * MALA or block-Gibbs run starts workers by default: ≈ 40 ns a bit-step on this machine's 2 cores
 * (DHMC on a 64×64 grid with the defaults, 2·10⁸ of them: 8.8 s), so ≈ 2 s of one thread, which
 * pays for each worker's start-up and its own relaxation set-up.
 */
export const AUTO_WORKERS_MIN_RELAXED_STEPS = 5e7;

/** autoWorkers for the relaxation's samplers: min(chains, cores) for runs past AUTO_WORKERS_MIN_RELAXED_STEPS. */
function autoRelaxedWorkers(method: 'dhmc' | 'mala' | 'blockgibbs', model: Model, opts: ParallelOptions, cores: number): number {
  const d = method === 'blockgibbs' ? { ...BLOCK_GIBBS_DEFAULTS, leapfrogSteps: 1 } : method === 'mala' ? { ...MALA_DEFAULTS, leapfrogSteps: 1 } : DHMC_DEFAULTS;
  const chains = opts.chains ?? d.chains, samples = opts.samples ?? d.samples, burnin = opts.burnin ?? d.burnin;
  const w = Math.max(1, Math.min(chains, cores));
  if (w === 1 || model.maxArity > 2) return 1; // past pairwise the run refuses on its own
  const steps = method === 'dhmc' ? (opts.leapfrogSteps ?? d.leapfrogSteps) : 1;
  return chains * (samples + burnin) * canonicalSize(model).nBits * steps >= AUTO_WORKERS_MIN_RELAXED_STEPS ? w : 1;
}

/** The model as plain data (structured clone of its typed arrays). */
export type { ModelData };

export { transferables, runJob, PARALLEL_METHODS, type ParallelMethod, type ParallelOptions, type JobOptions, type WorkerJob, type ChainEvent, type WorkerMessage } from './chain-job.ts';

export function modelData(model: Model): ModelData {
  return model.toData();
}

function relaxationOptions(o: RelaxationOptions): RelaxationOptions {
  return { shift: o.shift, margin: o.margin, factor: o.factor };
}

function continuousSpec(method: 'dhmc' | 'mala', o: JobOptions): RunSpec {
  return method === 'dhmc'
    ? { move: 'hmc', method: 'dhmc', defaults: { targetAccept: DHMC_DEFAULTS.targetAccept }, leapfrogSteps: o.leapfrogSteps ?? DHMC_DEFAULTS.leapfrogSteps, integrator: o.integrator ?? DHMC_DEFAULTS.integrator }
    : { move: 'mala', method: 'mala', defaults: { targetAccept: MALA_DEFAULTS.targetAccept } };
}

/**
 * Runs `chains` of `method` on `engine`, posting each chain's events, then 'finished': a worker's
 * work for any method and host (chain-job.ts runJob comes here for all but Gibbs; the queue's threads).
 */
export function runChains(engine: Engine, model: Model, method: ParallelMethod, o: JobOptions, chains: number[], post: (m: WorkerMessage) => void): void {
  const job = { method, chains };
  const event = eventPoster(post);
  switch (job.method) {
    case 'gibbs':
      return runGibbsChains(engine, model, o, chains, post);
    case 'blockgibbs': {
      const rel = relaxationFor(engine, model, relaxationOptions(o));
      post({ type: 'setup', diagnostics: relaxationDiagnostics(rel) });
      const sampler = new BlockGibbsSampler(engine, rel);
      try {
        blockGibbsChains(sampler, blockGibbsRun(o), job.chains, event);
      } finally {
        sampler.dispose();
      }
      break;
    }
    case 'dhmc':
    case 'mala': {
      const rel = relaxationFor(engine, model, relaxationOptions(o));
      post({ type: 'setup', diagnostics: relaxationDiagnostics(rel) });
      const plan = continuousPlan(rel.form, o, continuousSpec(job.method, o));
      const sampler = continuousSampler(engine, rel, plan);
      try {
        // Warm-up transitions are progress too (they carry no event until the warm-up ends).
        continuousChains(sampler, plan, job.chains, event, undefined, (warmup, k) => {
          if (warmup && k > 0) post({ type: 'event', chain: -1, event: null, done: k });
        });
      } finally {
        sampler.dispose();
      }
      break;
    }
    default:
      throw new ModelError(`runParallel: unknown method "${String(job.method)}"`);
  }
  post({ type: 'finished' });
}

/** A started worker, as the core sees it. */
export interface WorkerHandle {
  terminate(): void;
}

/** What a host provides: a default worker count and a way to start a worker on a job. */
export interface ParallelHost {
  defaultWorkers(): number;
  /** Starts a worker on `job`; it reports through `onMessage`, and `onFailure` on a crash. */
  start(job: WorkerJob, onMessage: (m: WorkerMessage) => void, onFailure: (e: unknown) => void): WorkerHandle;
}

/** How the parent folds the chains' events: one per method, shared with the single-thread runs. */
export interface Combiner {
  add(e: ChainEvent, chain: number): void;
  result(seconds: number, partial: boolean, setup: InferenceResult['diagnostics'], extra: InferenceResult['diagnostics']): InferenceResult;
}

/** A run's chains and how to fold them: what every host (threads, Web Workers, the job queue) shares. */
export interface ChainPlan {
  chains: number;
  samples: number;
  burnin: number;
  batchesPerChain: number;
  combine: () => Combiner;
  /** The model's canonical form, when the method's workers bind it (Gibbs on pairwise models). */
  form?: CanonicalForm;
}

/** Validates the method's model and options (throws ModelError) and plans its chains. */
export function chainPlan(method: ParallelMethod, model: Model, o: ParallelOptions): ChainPlan {
  if (method === 'gibbs' && gibbsKernel(model) === 'factor-graph') {
    const run = gibbsRun(o);
    const layout = stateLayout(model.card);
    return {
      ...run,
      batchesPerChain: Math.min(run.batches, run.samples),
      combine: () => {
        const red = new DiscreteReducer(layout, false);
        return { add: (e, chain) => red.add(e as DiscreteEvent, chain), result: (seconds, partial, _setup, extra) => factorGibbsResult(layout, red, run, seconds, partial, extra) };
      },
    };
  }
  const form = toCanonical(model);
  switch (method) {
    case 'gibbs':
    case 'blockgibbs': {
      const run = method === 'gibbs' ? gibbsRun(o) : blockGibbsRun(o);
      return {
        ...run,
        batchesPerChain: Math.min(run.batches, run.samples),
        form: method === 'gibbs' ? form : undefined,
        combine: () => {
          const red = new DiscreteReducer(form, method === 'blockgibbs');
          return {
            add: (e, chain) => red.add(e as DiscreteEvent, chain),
            result: (seconds, partial, setup, extra) =>
              method === 'gibbs' ? gibbsResult(form, red, run, seconds, partial, { ...setup, ...extra }) : blockGibbsResult(form, red, run, seconds, seconds, partial, { ...setup, ...extra }),
          };
        },
      };
    }
    case 'dhmc':
    case 'mala': {
      const plan: ContinuousPlan = continuousPlan(form, o, continuousSpec(method, o));
      return {
        chains: plan.chains,
        samples: plan.samples,
        burnin: plan.burnin,
        batchesPerChain: plan.nBatches,
        combine: () => {
          const red = new ContinuousReducer(form, plan);
          return {
            add: (e, chain) => red.add(e as ContinuousEvent, chain),
            // As infer() reports these methods: the sampler's diagnostics, then the relaxation's.
            result: (seconds, partial, setup, extra) => {
              const r = red.result(seconds, seconds, partial, extra);
              return { ...r, diagnostics: { ...r.diagnostics, ...setup } };
            },
          };
        },
      };
    }
    default:
      throw new ModelError(`runParallel runs the chain samplers ${PARALLEL_METHODS.join(', ')}; got "${String(method)}" (the other methods run on the calling thread: use infer, or inferAsync, which also puts exact inference's slices and AIS's populations on workers)`);
  }
}

/** What a started worker's messages report to superviseWorkers. */
export interface WorkerRun {
  /** The worker completed its share. */
  finished(): void;
  /** The run fails with this error (the workers are terminated). */
  fail(e: unknown): void;
  /** Whether the run has ended (later messages are ignored). */
  settled(): boolean;
}

/**
 * Starts `workers` workers (`start(w, run)`) and waits until each has called run.finished(); the
 * first run.fail rejects. An abort of `signal` ends the wait with aborted: true. Every worker is
 * terminated at the end.
 */
export async function superviseWorkers(workers: number, signal: AbortSignal | undefined, start: (w: number, run: WorkerRun) => WorkerHandle): Promise<{ aborted: boolean }> {
  const handles: WorkerHandle[] = [];
  let aborted = false;
  await new Promise<void>((resolve, reject) => {
    let finished = 0;
    let settled = false;
    const settle = (err?: unknown) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      for (const h of handles) h.terminate();
      if (err) reject(err);
      else resolve();
    };
    const onAbort = () => {
      aborted = true;
      settle();
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const run: WorkerRun = { finished: () => void (++finished === workers && settle()), fail: (e) => settle(e), settled: () => settled };
    for (let w = 0; w < workers && !settled; w++) {
      try {
        handles.push(start(w, run));
      } catch (e) {
        settle(e);
      }
    }
  });
  return { aborted };
}

/**
 * Runs `chains` independent chains of `method` on `workers` workers started by `host`; chain c runs
 * in worker c mod workers. Same result as the method's single-thread run (infer) for the same
 * options. With `signal`, an abort terminates the workers and resolves with the batches completed so
 * far (partial: true); it rejects if no batch had completed.
 */
export async function runParallelOn(host: ParallelHost, model: Model, opts: ParallelOptions = {}): Promise<InferenceResult> {
  // The chains alone: a logz given here was ignored (inferAsync runs the estimate after them).
  if ((opts as InferOptions).logz !== undefined) throw new ModelError('runParallel runs the chains of a method, without a log Z estimate: logz applies to infer and inferAsync');
  checkInferOptions(opts, ['workers'], 'gibbs');
  const method = opts.method ?? 'gibbs';
  // Validates the model and the options on this thread, before any worker starts.
  const plan = chainPlan(method, model, opts);
  refuseZeroModel(model, method);
  // The count as given is checked (257 workers for 4 chains ran on 4 silently), then capped at the chains.
  if (opts.workers !== undefined) checkCount('workers', opts.workers, 1, MAX_WORKERS);
  const workers = Math.min(plan.chains, opts.workers ?? Math.max(1, host.defaultWorkers()));
  const { signal, onProgress, workers: _w, ...jobOpts } = opts;
  const data = modelData(model);

  const t0 = performance.now();
  const events: ChainEvent[][] = Array.from({ length: plan.chains }, () => []);
  let setup: InferenceResult['diagnostics'] = {};
  const total = plan.chains * (plan.samples + plan.burnin);
  let done = 0;
  const { aborted: partial } = await superviseWorkers(workers, signal, (w, run) => {
    const mine: number[] = [];
    for (let c = w; c < plan.chains; c += workers) mine.push(c);
    const job: WorkerJob = { method, model: data, opts: jobOpts, chains: mine, wasm: null, form: plan.form ?? null };
    const onMessage = (msg: WorkerMessage) => {
      if (run.settled()) return;
      switch (msg.type) {
        case 'setup':
          if (w === 0) setup = msg.diagnostics;
          break;
        case 'event':
          if (msg.event) events[msg.chain].push(msg.event);
          if (msg.done > 0) {
            done += msg.done;
            onProgress?.({ phase: method, done, total } satisfies Progress);
          }
          break;
        case 'finished':
          run.finished();
          break;
        case 'error':
          run.fail(msg.name === 'ModelError' ? new ModelError(msg.message) : new EngineError(`worker: ${msg.message}`));
          break;
      }
    };
    return host.start(job, onMessage, (e) => run.fail(e instanceof Error ? e : new EngineError(`worker ${w}: ${String(e)}`)));
  });

  return withSampledChecks(model, foldChains(plan, events, (performance.now() - t0) / 1000, partial, setup, { workers }));
}

/**
 * Folds each chain's events in chain order, exactly as the single-thread run does; `extra` (and
 * completedChains, the chains with all their batches) join the diagnostics.
 */
export function foldChains(plan: ChainPlan, events: ChainEvent[][], seconds: number, partial: boolean, setup: InferenceResult['diagnostics'], extra: InferenceResult['diagnostics']): InferenceResult {
  const c = plan.combine();
  events.forEach((list, chain) => list.forEach((e) => c.add(e, chain)));
  const completedChains = events.filter((list) => countBatches(list) === plan.batchesPerChain).length;
  // The fields infer() sets for every method (the interval bounds are null outside --method bounds).
  return { logZLower: null, logZUpper: null, ...c.result(seconds, partial, setup, { ...extra, completedChains }) };
}

function countBatches(list: ChainEvent[]): number {
  let b = 0;
  for (const e of list) if (e.kind === 'batch') b++;
  return b;
}
