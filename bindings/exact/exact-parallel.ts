// Exact inference with the slices of a sliced bucket-elimination plan on Node worker threads.
// Each worker owns an engine and runs slices s ≡ w (mod workers); the parent sums them in slice order
// as they arrive (slicing.ts SliceSum), so the result is exactInference's bit for bit, for any number
// of workers. Exact samples and MAP likewise: decodeSteps' batches of slice tasks spread over the
// workers, their outcomes put back in task order, so the samples (the configuration) are
// exactSample's (exactMAP's) for any number of workers.
import { availableParallelism } from 'node:os';
import type { Engine } from '../core/engine.ts';
import type { Model, ModelData } from '../core/model.ts';
import { CancelledError, EngineError, ModelError } from '../core/errors.ts';
import { checkCount, checkOptionKeys, checkSignal, MAX_WORKERS } from '../core/options.ts';
import { hopelessLattice } from './lattice-bound.ts';
import { DEFAULT_MAX_FLOPS, EXACT_OPTION_KEYS, decodePlan, exactInference, mapOf, sampleCount, samplesOf, slicedBucketPlan, slicedResult, takesBucketPath, type ExactMAP, type ExactOptions, type ExactResult, type ExactSampleOptions, type ExactSamples, type SlicedBucketPlan } from './exact.ts';
import { decodeSlices, decodeSteps, runAndSumSlices, SliceSum, type DecodeTask, type DecodedSlice, type Decoded, type SliceOutcome, type SliceSpec } from './slicing.ts';
import { startWorkerModule } from '../parallel/start-worker.ts';

/** What one slice worker is given: slices to sum, or (`decode`) batches of decoding tasks to come as DecodeBatch messages. */
export interface SliceJob {
  model: ModelData;
  spec: SliceSpec;
  slices: number[];
  decode?: { mode: 'sample' | 'max'; seed: number };
}
/** A batch of decoding tasks for a decoding worker (`index`: the task's place in decodeSteps' batch). */
export interface DecodeBatch {
  tasks: { index: number; task: DecodeTask }[];
}

export type SliceMessage =
  | { type: 'slice'; outcome: SliceOutcome }
  | { type: 'decoded'; index: number; outcome: DecodedSlice }
  | { type: 'batch-done' }
  | { type: 'finished' }
  | { type: 'error'; message: string; name: string };

const workerError = (m: { message: string; name: string }): Error => (m.name === 'EngineError' ? new EngineError(m.message) : new Error(m.message));

/** What the *Parallel functions take besides their options: worker threads, and a signal that stops them. */
export interface ExactParallelOptions {
  workers?: number;
  /**
   * Stops the slice workers and rejects with a CancelledError (slices give no partial result). Work on
   * this thread — planning, one worker, an unsliced plan — runs to its end once begun: only a signal
   * aborted before the start stops it.
   */
  signal?: AbortSignal;
}

const cancelled = (): CancelledError => new CancelledError('exact inference was cancelled: a sliced run gives no partial result');

/**
 * A promise that rejects when `signal` aborts, with `stop` called first (the workers terminated);
 * `dispose` removes the listener once the run has settled.
 */
function onAbort(signal: AbortSignal | undefined, stop: () => void): { aborted: Promise<never>; dispose: () => void } {
  let dispose = () => {};
  const aborted = new Promise<never>((_, reject) => {
    if (!signal) return;
    const abort = () => {
      stop();
      reject(cancelled());
    };
    signal.addEventListener('abort', abort, { once: true });
    dispose = () => signal.removeEventListener('abort', abort);
  });
  return { aborted, dispose };
}

/**
 * The workers a sliced plan's run takes when the caller names none: min(slices, cores), or this
 * thread when the whole plan streams fewer than PARALLEL_MIN_FLOPS configurations (starting the
 * workers costs more than such a plan's work).
 */
function defaultWorkers(sp: SlicedBucketPlan): number {
  return sp.sliced.slices * sp.sliced.plan.flops < PARALLEL_MIN_FLOPS ? 1 : availableParallelism();
}
/**
 * 2^27 clique configurations. Measured on 2 cores from dist/, with the planning counted: CSP_12 sliced
 * to 2 MiB (4 slices, 2^22 in all) took 0.026 s on this thread and 0.31 s on two workers. Square
 * grids sliced in two were break-even at 2^26.8 (0.39 s against 0.41 s) and 10 % faster on two at 2^27.9.
 */
export const PARALLEL_MIN_FLOPS = 2 ** 27;

/**
 * exactInference with a sliced plan's slices on `workers` worker threads (default: min(slices,
 * cores), or this thread for a plan of fewer than PARALLEL_MIN_FLOPS configurations; 1: this
 * thread). Models that do not take the sliced bucket path (see takesBucketPath), plans of one slice
 * and refusals run exactInference on this thread. The result reports `workers`.
 */
export async function exactInferenceParallel(engine: Engine, model: Model, opts: ExactOptions & ExactParallelOptions = {}): Promise<ExactResult & { workers: number }> {
  const t0 = performance.now();
  checkOptionKeys(opts, [...EXACT_OPTION_KEYS, 'workers', 'signal'], 'exactInferenceParallel');
  checkSignal(opts.signal);
  const { workers: given, signal, ...exact } = opts;
  if (given !== undefined) checkCount('workers', given, 1, MAX_WORKERS);
  if (signal?.aborted) throw cancelled();
  // A lattice its grid alone rules out: refused by exactInference before any plan (slicedBucketPlan
  // would search first), and before its factors are split.
  const method = exact.method ?? 'auto';
  if (method !== 'enumeration' && method !== 'elimination' && hopelessLattice(model, exact.maxFlops ?? DEFAULT_MAX_FLOPS) !== null) return withWorkers(exactInference(engine, model, exact), 1);
  if (!takesBucketPath(model, exact)) return withWorkers(exactInference(engine, model, exact), 1);
  const sp = slicedBucketPlan(model, exact);
  if (!sp.fits) return withWorkers(exactInference(engine, model, exact), 1);
  const n = sp.sliced.slices;
  const workers = Math.max(1, Math.min(n, given ?? defaultWorkers(sp)));
  const seconds = (): number => (performance.now() - t0) / 1000;
  if (workers === 1) return withWorkers(slicedResult(sp, runAndSumSlices(engine, sp.model, sp.sliced, exact.onProgress), seconds()), workers);
  const spec: SliceSpec = { order: sp.sliced.order, fixed: sp.sliced.fixed, impossible: sp.sliced.impossible, sliceVars: sp.sliced.sliceVars };
  const data = sp.model.toData();
  // Each slice summed as it arrives (in slice order: early ones wait), not every slice's marginals held.
  const sum = new SliceSum(model, n);
  // Progress as slices end (their cliques' configurations: the unit of exactInference's).
  const perSlice = sp.sliced.plan.flops, total = n * perSlice;
  let done = 0, settled = false;
  const threads: { terminate(): unknown }[] = [];
  const all = Promise.all(
    Array.from({ length: workers }, (_, w) => {
      const slices = Array.from({ length: Math.ceil((n - w) / workers) }, (_, q) => w + q * workers);
      return new Promise<void>((resolve, reject) => {
        const t = startWorkerModule(import.meta.url, 'slice-worker', { model: data, spec, slices } satisfies SliceJob);
        threads.push(t);
        let ended = false;
        t.on('message', (m: SliceMessage) => {
          // A terminated worker's port still delivers what it had posted: nothing after the run ended.
          if (settled) return;
          if (m.type === 'slice') {
            sum.add(m.outcome);
            exact.onProgress?.({ phase: 'exact', done: (done += perSlice), total });
          } else {
            ended = true;
            void t.terminate();
            if (m.type === 'finished') resolve();
            else if (m.type === 'error') reject(workerError(m));
          }
        });
        t.on('error', reject);
        t.on('exit', (code) => {
          if (!ended) reject(new EngineError(`a slice worker exited with code ${code} before finishing`));
        });
      });
    }),
  );
  const stop = () => {
    settled = true;
    for (const t of threads) void t.terminate();
  };
  const { aborted, dispose } = onAbort(signal, stop);
  try {
    await Promise.race([all, aborted]);
  } catch (e) {
    stop();
    throw e;
  } finally {
    dispose();
  }
  return withWorkers(slicedResult(sp, sum.result(), seconds()), workers);
}

/** Adds `workers` without reading `marginals` (a getter that throws when Z = 0). */
function withWorkers(r: ExactResult, workers: number): ExactResult & { workers: number } {
  return Object.defineProperty(r, 'workers', { value: workers, enumerable: true }) as ExactResult & { workers: number };
}

/** exactSample with a sliced plan's slices on `workers` worker threads (default as exactInferenceParallel's): the same samples for any number. */
export async function exactSampleParallel(engine: Engine, model: Model, opts: ExactSampleOptions & ExactParallelOptions): Promise<ExactSamples & { workers: number }> {
  if (opts.signal?.aborted) throw cancelled();
  checkOptionKeys(opts, [...EXACT_OPTION_KEYS, 'count', 'seed', 'workers', 'signal'], 'exactSampleParallel');
  checkSignal(opts.signal);
  const { signal, workers: given, ...rest } = opts;
  const count = sampleCount(rest), seed = rest.seed ?? 1, sp = decodePlan(model, rest);
  const { decoded, workers } = await decodeOnWorkers(engine, sp, 'sample', count, seed, given, signal);
  return { ...samplesOf(sp, decoded), workers };
}

/** exactMAP with a sliced plan's slices on `workers` worker threads (default as exactInferenceParallel's): the same configuration for any number. */
export async function exactMAPParallel(engine: Engine, model: Model, opts: ExactOptions & ExactParallelOptions = {}): Promise<ExactMAP & { workers: number }> {
  if (opts.signal?.aborted) throw cancelled();
  checkOptionKeys(opts, [...EXACT_OPTION_KEYS, 'workers', 'signal'], 'exactMAPParallel');
  checkSignal(opts.signal);
  const { signal, workers: given, ...rest } = opts;
  const sp = decodePlan(model, rest);
  const { decoded, workers } = await decodeOnWorkers(engine, sp, 'max', 1, 1, given, signal);
  return { ...mapOf(sp, decoded), workers };
}

/**
 * decodeSteps with each batch's tasks on the workers (task i on worker i mod W, workers kept for
 * every batch; the plan's model, see SlicedBucketPlan.model); one worker, or a plan of one slice, decodes on this thread (decodeSlices).
 */
async function decodeOnWorkers(engine: Engine, sp: SlicedBucketPlan, mode: 'sample' | 'max', count: number, seed: number, given: number | undefined, signal?: AbortSignal): Promise<{ decoded: Decoded; workers: number }> {
  if (given !== undefined) checkCount('workers', given, 1, MAX_WORKERS);
  const model = sp.model, slices = sp.sliced.slices, workers = Math.max(1, Math.min(slices, given ?? defaultWorkers(sp)));
  if (workers === 1) return { decoded: decodeSlices(engine, model, sp.sliced, mode, count, seed), workers };
  const spec: SliceSpec = { order: sp.sliced.order, fixed: sp.sliced.fixed, impossible: sp.sliced.impossible, sliceVars: sp.sliced.sliceVars };
  const job: SliceJob = { model: model.toData(), spec, slices: [], decode: { mode, seed } };
  const threads = Array.from({ length: workers }, () => startWorkerModule(import.meta.url, 'slice-worker', job));
  // One batch at a time: each worker's share sent, its outcomes filed by index until it says it is done.
  let pending: { outcomes: DecodedSlice[]; left: number; resolve: () => void; reject: (e: Error) => void } | null = null;
  let failed: Error | null = null;
  const fail = (e: Error): void => {
    failed ??= e;
    pending?.reject(failed);
  };
  threads.forEach((t) => {
    t.on('message', (m: SliceMessage) => {
      if (failed) return;
      if (m.type === 'decoded') pending!.outcomes[m.index] = m.outcome;
      else if (m.type === 'batch-done' && --pending!.left === 0) pending!.resolve();
      else if (m.type === 'error') fail(workerError(m));
    });
    t.on('error', fail);
    t.on('exit', (code) => fail(new EngineError(`a slice worker exited with code ${code} before finishing`)));
  });
  const abort = () => fail(cancelled());
  signal?.addEventListener('abort', abort, { once: true });
  const runBatch = (tasks: DecodeTask[]): Promise<DecodedSlice[]> =>
    new Promise((resolve, reject) => {
      if (failed) return reject(failed);
      const outcomes = new Array<DecodedSlice>(tasks.length);
      const shares = threads.map((_, w) => ({ tasks: tasks.flatMap((task, index) => (index % workers === w ? [{ index, task }] : [])) }) satisfies DecodeBatch);
      const busy = shares.filter((b) => b.tasks.length > 0).length;
      pending = { outcomes, left: busy, resolve: () => resolve(outcomes), reject };
      shares.forEach((b, w) => b.tasks.length > 0 && threads[w].postMessage(b));
    });
  try {
    const steps = decodeSteps(model.n, slices, mode, count, seed);
    for (let step = steps.next(); ; step = steps.next(await runBatch(step.value))) if (step.done) return { decoded: step.value, workers };
  } finally {
    signal?.removeEventListener('abort', abort);
    for (const t of threads) {
      t.removeAllListeners('exit');
      void t.terminate();
    }
  }
}
