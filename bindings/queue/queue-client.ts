// runQueued: one inference run split into jobs on a BullMQ queue on Redis, run by `relaxmrf worker`
// processes on any machines that reach that Redis, and folded into the result of the same run in
// one process. The model is uploaded once, under its content hash; each job names it.
//
//   * chains (gibbs, blockgibbs, dhmc, mala): one job per chain; the chains' events are folded in
//     chain order through the samplers' own reducers (parallel-job.ts foldChains), as runParallel does;
//   * AIS / population annealing (logz 'ais', discrete transitions): one job per population, or per
//     group of runs (ais-split.ts); piece 0 first when its schedule is adaptive (it computes it);
//   * exact inference whose bucket-elimination plan is sliced (maxMemory): contiguous groups of
//     slices, each worker planning again (the plan is deterministic), summed in slice order;
//   * any other log Z estimator, and every other method (WHOLE_METHODS): one job each, run whole.
//
// Every chain, run and population draws from its own (seed, index) streams, so the result is the
// single-process result bit for bit whichever worker ran what, however often a job was retried.
import { randomBytes } from 'node:crypto';
import { deserialize } from 'node:v8';
import type { Redis } from 'ioredis';
import type { Queue, QueueEvents } from 'bullmq';
import type { Model } from '../core/model.ts';
import type { InferenceResult } from '../core/result.ts';
import { CancelledError, EngineError, ModelError } from '../core/errors.ts';
import { METHODS, checkInferOptions, exactInferenceResult, logZRequest, methodOptions, refuseZeroModel, withEstimate, withoutStoppedEstimate, type InferOptions } from '../infer.ts';
import { slicedBucketPlan, slicedResult, takesBucketPath } from '../exact/exact.ts';
import { SliceSum, type SliceOutcome } from '../exact/slicing.ts';
import { chainPlan, foldChains, PARALLEL_METHODS, type ChainEvent, type ChainPlan, type ParallelMethod } from '../parallel/parallel-job.ts';
import { aisPieces, aisSplits, foldAIS, type AISPieceResult } from '../logz/ais-split.ts';
import { checkedAgainstLowerBound } from '../logz/ais-bound-check.ts';
import { loadEngine } from '../core/wasm-node.ts';
import type { AISOptions, LogZEstimate } from '../logz/logz.ts';
import { blobHash, encodeModel } from './model-blob.ts';
import { checkJobOpts, keys, KEY_TTL_MS, MAX_BLOB_BYTES, QUEUE_NAME, WHOLE_METHODS, type QueueJob } from './queue-jobs.ts';
import { bullConnection, connectRedis, queueConnection, withTimeout, type QueueConnection } from './queue-redis.ts';
import type { ChainsResult } from './queue-thread.ts';
import { withSampledChecks } from '../core/sampled-checks.ts';

/** Where runQueued finds the queue, and how it splits and waits. */
export interface QueueOptions {
  /** The queue's Redis: redis://[user:password@]host[:port][/db], or rediss://… for TLS. */
  connection: string;
  /** The run fails (EngineError) when Redis has not answered for this long, ms (default 10 000). */
  lostAfterMs?: number;
  /** AIS with population 1: runs per job (default runs / 32). */
  aisRunsPerJob?: number;
  /** Called once when no worker has taken a job of the run for WAITING_NOTE_MS (a client with no worker waited in silence). */
  onNote?: (line: string) => void;
  /** How long the run waits for a worker before onNote (default WAITING_NOTE_MS; tests set less). */
  waitingNoteMs?: number;
}

/** How long a run waits for its first job to be taken before saying so. */
export const WAITING_NOTE_MS = 10_000;

/** Job attempts: a job that fails twice fails the run (a killed worker's job is retried by BullMQ's stalled-job check). */
const ATTEMPTS = 2;
/** Most jobs a sliced exact run is split into. */
const SLICE_JOBS = 64;
const POLL_MS = 1000;

type Pending = { id: string; data: QueueJob; label: string; onResult: (r: unknown) => void | Promise<void> };

/**
 * Runs `opts.method` (default gibbs) on the queue at `queue.connection`: the result is infer's (or
 * runParallel's) for the same options bit for bit, timing aside, with diagnostics `workers` (the
 * worker processes that ran its jobs), `queue` (the URL without password) and, for chain methods,
 * `completedChains`. An AbortSignal cancels the run's jobs and returns what completed (partial: true).
 */
export async function runQueued(model: Model, opts: InferOptions = {}, queue: QueueOptions): Promise<InferenceResult> {
  checkInferOptions(opts, [], 'gibbs');
  const method = opts.method ?? 'gibbs';
  if (!METHODS.includes(method)) throw new ModelError(`unknown method "${method}"; expected one of ${METHODS.join(', ')}`);
  refuseZeroModel(model, method);
  const { signal, onProgress, ...rest } = opts;
  const request = logZRequest(opts);
  checkJobOpts(dataOnly(rest), 'options');
  // The method's jobs carry the options it reads (infer on a worker refuses those only the estimate reads).
  const jobOpts = checkJobOpts(dataOnly(methodOptions(rest, 'gibbs') as Record<string, unknown>), 'options');
  const plan: ChainPlan | null = PARALLEL_METHODS.includes(method as ParallelMethod) ? chainPlan(method as ParallelMethod, model, { ...opts, method: method as ParallelMethod }) : null;
  const { signal: _s, ...logzOpts } = request ?? {};
  const splitAIS = request?.estimator === 'ais' && aisSplits(model, request);
  // A sliced exact plan (the same one infer would run) goes out as slices; anything else runs whole.
  const slicing = method === 'exact' && takesBucketPath(model, opts.exact) ? slicedBucketPlan(model, opts.exact) : null;
  const sliced = slicing && slicing.fits && slicing.sliced.slices > 1 ? slicing : null;
  const pieces = splitAIS ? aisPieces(request, queue.aisRunsPerJob) : [];
  const conn = queueConnection(queue.connection);
  const lostAfterMs = queue.lostAfterMs ?? 10_000;
  const blob = encodeModel(model);
  if (blob.length > MAX_BLOB_BYTES) throw new ModelError(`the model is ${blob.length} bytes, over the queue's limit of ${MAX_BLOB_BYTES}`);
  if (signal?.aborted) throw new CancelledError('cancelled before the run started');

  const redis = await connectRedis(conn);
  const { Queue, QueueEvents } = await import('bullmq');
  const q: Queue = new Queue(QUEUE_NAME, { connection: bullConnection(conn) });
  // A short blocking read: its watchdog timer is what a finished process waits for.
  const events: QueueEvents = new QueueEvents(QUEUE_NAME, { connection: bullConnection(conn), blockingTimeout: 1000 });
  let connectionError: unknown = null;
  let lost = false;
  q.on('error', (e) => (connectionError = e));
  events.on('error', (e) => (connectionError = e));
  try {
    const t0 = performance.now();
    const modelHash = await upload(redis, blob);
    await withTimeout(events.waitUntilReady(), lostAfterMs, 'the queue did not answer');
    const run = randomBytes(8).toString('hex');
    const base = { v: 1 as const, run, model: modelHash };

    // What the jobs produce.
    const chainResults: (ChainsResult | null)[] = plan ? Array(plan.chains).fill(null) : [];
    const pieceResults: (AISPieceResult | null)[] = pieces.map(() => null);
    let whole: InferenceResult | null = null;
    let logz: LogZEstimate | null = null;
    const workers = new Set<string>();

    const jobs: Pending[] = [];
    let next = 0;
    const job = (data: QueueJob, label: string, onResult: Pending['onResult']) => jobs.push({ id: `${run}-${next++}`, data, label, onResult });
    // Exact inference whose plan is sliced: contiguous runs of slices, at most SLICE_JOBS jobs, each
    // job's slices summed as its result arrives (SliceSum: in slice order, the same bits as one thread).
    const sliceSum = sliced ? new SliceSum(model, sliced.sliced.slices) : null;
    const slicesDone: boolean[] = [];
    if (plan) for (let c = 0; c < plan.chains; c++) job({ ...base, kind: 'chains', method: method as ParallelMethod, opts: jobOpts, chains: [c] }, `chain ${c}`, (r) => void (chainResults[c] = checkChains(r)));
    else if (sliced) {
      const n = sliced.sliced.slices, per = Math.ceil(n / Math.min(n, SLICE_JOBS));
      for (let k = 0, from = 0; from < n; k++, from += per) {
        const slices = Array.from({ length: Math.min(per, n - from) }, (_, q) => from + q);
        slicesDone.push(false);
        job({ ...base, kind: 'slices', opts: jobOpts, slices }, `slices ${from}…${from + slices.length - 1}`, (r) => {
          for (const o of checkSlices(r, slices)) sliceSum!.add(o);
          slicesDone[k] = true;
        });
      }
    } else job({ ...base, kind: 'infer', method: method as (typeof WHOLE_METHODS)[number], opts: jobOpts }, method, (r) => void (whole = r as InferenceResult));
    const adaptive = ((request as AISOptions | null)?.schedule ?? 'adaptive') === 'adaptive';
    const piece = (k: number, schedule: string | null) =>
      job({ ...base, kind: 'ais', opts: logzOpts, firstRun: pieces[k].firstRun, runs: pieces[k].runs, schedule }, `AIS runs ${pieces[k].firstRun}…${pieces[k].firstRun + pieces[k].runs - 1}`, async (r) => {
        pieceResults[k] = r as AISPieceResult;
        // Piece 0 of an adaptive run computed the schedule: the other pieces run with it.
        if (k === 0 && adaptive && pieces.length > 1) {
          const betas = pieceResults[0]!.schedule;
          const hash = await upload(redis, new Uint8Array(betas.buffer, betas.byteOffset, betas.byteLength));
          const from = jobs.length;
          for (let i = 1; i < pieces.length; i++) piece(i, hash);
          await submit(jobs.slice(from));
        }
      });
    if (splitAIS) {
      piece(0, null);
      if (!adaptive) for (let i = 1; i < pieces.length; i++) piece(i, null);
    } else if (request) job({ ...base, kind: 'logz', opts: logzOpts }, `log Z (${request.estimator})`, (r) => void (logz = r as LogZEstimate));

    // Progress: the chains' sweeps (or transitions); otherwise jobs done.
    const progress = new Map<string, number>();
    const total = plan ? plan.chains * (plan.samples + plan.burnin) : 0;
    let jobsDone = 0;
    const report = () => {
      if (!onProgress) return;
      if (plan) onProgress({ phase: method, done: [...progress.values()].reduce((a, b) => a + b, 0), total });
      else onProgress({ phase: 'jobs', done: jobsDone, total: jobs.length });
    };

    const pending = new Map<string, Pending>();
    const submit = async (list: Pending[]) => {
      for (const p of list) pending.set(p.id, p);
      await q.addBulk(list.map((p) => ({ name: p.label, data: p.data, opts: { jobId: p.id, attempts: ATTEMPTS, removeOnComplete: { age: KEY_TTL_MS / 1000 }, removeOnFail: { age: KEY_TTL_MS / 1000 } } })));
    };

    let partial = false;
    await new Promise<void>((resolve, reject) => {
      let settled = false;
      const timers: ReturnType<typeof setInterval>[] = [];
      const finish = (err?: unknown) => {
        if (settled) return;
        settled = true;
        for (const t of timers) clearInterval(t);
        signal?.removeEventListener('abort', onAbort);
        if (err || partial) {
          // Stop the rest: workers skip a cancelled run's jobs; waiting ones are removed.
          cancel(redis, q, run, [...pending.keys()]).finally(() => (err ? reject(err) : resolve()));
        } else resolve();
      };
      const onAbort = () => {
        partial = true;
        finish();
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });

      // A job stays pending until its result is folded in: the run ends when nothing is pending, so
      // it must not end while an earlier job's result is still being read (collecting guards against
      // reading one job twice, from its event and from the poll).
      const collecting = new Set<string>();
      const collect = async (id: string) => {
        const p = pending.get(id);
        if (!p || collecting.has(id)) return;
        collecting.add(id);
        const buf = await redis.getBuffer(keys.result(id));
        if (!buf) throw new EngineError(`the result of job ${id} (${p.label}) is missing from Redis`);
        const { worker, result } = deserialize(buf) as { worker: string; result: unknown };
        workers.add(String(worker));
        await p.onResult(result);
        pending.delete(id);
        collecting.delete(id);
        redis.del(keys.result(id)).catch(() => {});
        q.remove(id).catch(() => {});
        jobsDone++;
        if (plan && p.data.kind === 'chains') progress.set(id, plan.samples + plan.burnin);
        report();
        if (pending.size === 0) finish();
      };
      const failed = async (id: string, reason: string | undefined) => {
        const p = pending.get(id);
        if (!p) return;
        const why = reason ?? (await q.getJob(id))?.failedReason ?? 'unknown reason';
        finish(new EngineError(`queue job ${id} (${p.label}) failed: ${why}`));
      };
      const guard = (f: Promise<void>) => f.catch((e) => finish(e instanceof EngineError || e instanceof ModelError ? e : new EngineError(`queue: ${(e as Error).message}`)));
      events.on('completed', ({ jobId }) => void guard(collect(jobId)));
      events.on('failed', ({ jobId, failedReason }) => void guard(failed(jobId, failedReason)));
      // No worker: say so once, the run keeps waiting (jobs stay queued until one starts, or Ctrl-C).
      let taken = false;
      events.on('active', ({ jobId }) => void (pending.has(jobId) && (taken = true)));
      const waiting = setTimeout(() => {
        if (!taken && jobsDone === 0 && !settled) queue.onNote?.(`no worker has taken a job of this run for ${(queue.waitingNoteMs ?? WAITING_NOTE_MS) / 1000} s; the jobs wait in the queue at ${conn.display} for \`relaxmrf worker --queue URL\` (Ctrl-C cancels them)`);
      }, queue.waitingNoteMs ?? WAITING_NOTE_MS);
      waiting.unref();
      timers.push(waiting as unknown as ReturnType<typeof setInterval>);
      events.on('progress', ({ jobId, data }) => {
        if (pending.has(jobId) && typeof data === 'number') {
          progress.set(jobId, data);
          report();
        }
      });
      // A safety net for events missed (e.g. before the event stream was read): the jobs' states.
      timers.push(setInterval(() => {
        void guard((async () => {
          for (const id of [...pending.keys()].slice(0, 1000)) {
            const state = await q.getJobState(id);
            if (state === 'completed') await collect(id);
            else if (state === 'failed') await failed(id, undefined);
          }
        })());
      }, POLL_MS));
      // Redis gone for lostAfterMs: fail the run, whatever BullMQ's connections keep retrying.
      let lastAnswer = Date.now();
      timers.push(setInterval(() => {
        withTimeout(redis.ping(), 1000, 'no answer').then(() => (lastAnswer = Date.now()), () => {});
        if (Date.now() - lastAnswer > lostAfterMs) {
          const why = connectionError ? `: ${(connectionError as Error).message}` : '';
          settled = lost = true; // nothing can be cancelled without Redis
          for (const t of timers) clearInterval(t);
          signal?.removeEventListener('abort', onAbort);
          reject(new EngineError(`lost the queue's Redis at ${conn.display} (no answer for ${lostAfterMs / 1000} s${why}); the run is abandoned`));
        }
      }, 500));
      submit(jobs.slice()).catch((e) => finish(new EngineError(`queue: could not add the jobs: ${(e as Error).message}`)));
    });

    const seconds = (performance.now() - t0) / 1000;
    const extra = { workers: workers.size, queue: conn.display };
    let result: InferenceResult;
    if (sliced) {
      if (slicesDone.some((done) => !done)) throw new CancelledError('cancelled before every slice completed: no result');
      const r = slicedResult(sliced, sliceSum!.result(), seconds);
      const w = exactInferenceResult(r);
      // As infer returns it (no bounds, no warnings).
      result = { logZLower: null, logZUpper: null, ...w, warnings: [], diagnostics: { ...w.diagnostics, ...extra } };
    } else if (plan) {
      const evs: ChainEvent[][] = chainResults.map((r) => r?.events[0] ?? []);
      const setup = chainResults[0]?.setup ?? chainResults.find((r) => r)?.setup ?? {};
      result = foldChains(plan, evs, seconds, partial, setup, extra);
    } else {
      if (!whole) throw new CancelledError('cancelled before the run completed: no result');
      const w: InferenceResult = whole;
      result = { ...w, diagnostics: { ...w.diagnostics, ...extra } };
    }
    result = withSampledChecks(model, result);
    if (request) {
      // The pieces' fold is checked here, as runAIS checks its runs (a whole estimate was, on its worker).
      const est = !splitAIS ? logz : pieceResults.some((p) => p) ? checkedAgainstLowerBound(await loadEngine(), model, foldAIS(model, request as AISOptions, pieceResults, seconds), signal) : null;
      if (est) result = withEstimate(result, request, est);
      // Cancelled before any of the estimate completed: the method's result stands (as a local run's).
      else if (partial) result = withoutStoppedEstimate(result, request.estimator, splitAIS);
      else throw new EngineError('the log Z estimate is missing: no estimate');
    }
    return result;
  } finally {
    await shutdown(redis, q, events, lost);
  }
}

/** The options as data: no undefined values, no functions or signals. */
function dataOnly(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined) continue;
    out[k] = v !== null && typeof v === 'object' && !Array.isArray(v) ? dataOnly(v as Record<string, unknown>) : v;
  }
  return out;
}

/** A slice job's outcomes: one per slice it was given, in its order. */
function checkSlices(r: unknown, slices: number[]): SliceOutcome[] {
  if (!Array.isArray(r) || r.length !== slices.length || !r.every((o, q) => o && o.slice === slices[q] && typeof o.logZ === 'number')) throw new EngineError('a slice job returned a malformed result');
  return r as SliceOutcome[];
}

function checkChains(r: unknown): ChainsResult {
  const c = r as ChainsResult;
  if (!c || !Array.isArray(c.events) || c.events.length !== 1 || !Array.isArray(c.events[0])) throw new EngineError('a chain job returned a malformed result');
  return c;
}

/** Stores a blob under its sha256 (once; a later upload only renews its expiry); returns the hash. */
async function upload(redis: Redis, blob: Uint8Array): Promise<string> {
  const hash = blobHash(blob);
  const key = keys.blob(hash);
  const set = await redis.set(key, Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength), 'PX', KEY_TTL_MS, 'NX');
  if (set === null) await redis.pexpire(key, KEY_TTL_MS);
  return hash;
}

async function cancel(redis: Redis, q: Queue, run: string, ids: string[]): Promise<void> {
  try {
    await withTimeout(redis.set(keys.cancelled(run), '1', 'PX', KEY_TTL_MS), 2000, 'no answer');
    // Waiting jobs go; an active one finishes on its worker and its result expires unread.
    await withTimeout(Promise.all(ids.map((id) => q.remove(id).catch(() => 0))), 5000, 'no answer');
  } catch {
    // Redis is gone or slow: the cancel mark (if set) still stops the workers.
  }
}

async function shutdown(redis: Redis, q: Queue, events: QueueEvents, lost: boolean): Promise<void> {
  // Bounded: with Redis gone, close() would wait for it; disconnect() then ends the reconnecting.
  if (!lost) await Promise.allSettled([withTimeout(q.close(), 2000, 'close'), withTimeout(events.close(), 2000, 'close')]);
  await Promise.allSettled([withTimeout(q.disconnect(), 1000, 'disconnect'), withTimeout(events.disconnect(), 1000, 'disconnect')]);
  redis.disconnect();
}
