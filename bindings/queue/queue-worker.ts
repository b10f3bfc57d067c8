// `relaxmrf worker`: takes jobs from the BullMQ queue on Redis and runs them on `concurrency`
// compute threads (queue-thread.ts), each with its own engine loaded once. The main thread only
// talks to Redis — BullMQ renews each active job's lock from here while a thread computes, so a
// long job is not mistaken for a stalled one, while a killed worker's jobs are (their locks lapse)
// and go back to the queue for another worker. Payloads are untrusted: a malformed or oversized
// job fails at once (UnrecoverableError, no retry) with the reason, and the worker goes on serving.
import type { Worker as ThreadWorker } from 'node:worker_threads';
import { availableParallelism, hostname } from 'node:os';
import { serialize } from 'node:v8';
import type { Redis } from 'ioredis';
import type { Job } from 'bullmq';
import { startWorkerModule } from '../parallel/start-worker.ts';
import { ModelError } from '../core/errors.ts';
import { MAX_CONCURRENCY } from '../core/options.ts';
import { blobHash } from './model-blob.ts';
import { checkJob, keys, KEY_TTL_MS, MAX_BLOB_BYTES, QUEUE_NAME, type QueueJob } from './queue-jobs.ts';
import { bullConnection, connectRedis, queueConnection, withTimeout } from './queue-redis.ts';
import type { ThreadReply, ThreadTask } from './queue-thread.ts';

export interface WorkerOptions {
  /** Jobs at a time, one compute thread each (default: the machine's cores). */
  concurrency?: number;
  /** Shown in run diagnostics (default host:pid). */
  name?: string;
  /**
   * Lock duration, ms (default 30 000): a killed worker's job is retried elsewhere after at most
   * about twice this (the lock lapses, then the next stalled-job check moves it back).
   */
  lockMs?: number;
  /** One line per event worth knowing (start, failed jobs, stop). */
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/** Blobs the main thread keeps (LRU), so that a model is fetched from Redis once per worker. */
const BLOB_CACHE = 4;

interface Slot {
  thread: ThreadWorker;
  /** Models the thread has (as it last reported). */
  cached: Set<string>;
  busy: boolean;
  ready: Promise<void>;
  handle: ((m: ThreadReply) => void) | null;
  fail: ((e: Error) => void) | null;
}

class JobFailure extends Error {}

/** Runs a worker until `signal` aborts; resolves when it has stopped. */
export async function runWorker(url: string, opts: WorkerOptions = {}): Promise<void> {
  const conn = queueConnection(url);
  const concurrency = opts.concurrency ?? availableParallelism();
  if (!(Number.isInteger(concurrency) && concurrency >= 1 && concurrency <= MAX_CONCURRENCY)) throw new ModelError(`concurrency must be an integer in [1, ${MAX_CONCURRENCY}], got ${concurrency}`);
  const lockMs = opts.lockMs ?? 30_000;
  if (!(Number.isInteger(lockMs) && lockMs >= 500)) throw new ModelError(`lock duration must be an integer ≥ 500 ms, got ${lockMs}`);
  const name = opts.name ?? `${hostname()}:${process.pid}`;
  const log = opts.log ?? (() => {});
  const redis = await connectRedis(conn);
  const { Worker, UnrecoverableError } = await import('bullmq');

  const blobs = new Map<string, Uint8Array>();
  const fetchBlob = async (hash: string, what: string): Promise<Uint8Array> => {
    let b = blobs.get(hash);
    if (!b) {
      const len = await redis.strlen(keys.blob(hash));
      if (len === 0) throw new JobFailure(`${what} ${hash.slice(0, 12)} is not in Redis (expired, or never uploaded)`);
      if (len > MAX_BLOB_BYTES) throw new JobFailure(`${what} ${hash.slice(0, 12)} is ${len} bytes, over the limit of ${MAX_BLOB_BYTES}`);
      const buf = await redis.getBuffer(keys.blob(hash));
      if (!buf) throw new JobFailure(`${what} ${hash.slice(0, 12)} is not in Redis (expired, or never uploaded)`);
      b = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
      if (blobHash(b) !== hash) throw new JobFailure(`${what} ${hash.slice(0, 12)}: its bytes do not have that hash`);
    }
    blobs.delete(hash);
    blobs.set(hash, b);
    while (blobs.size > BLOB_CACHE) blobs.delete(blobs.keys().next().value!);
    return b;
  };

  const slots: Slot[] = [];
  const spawn = (): Slot => {
    const thread = startWorkerModule(import.meta.url, 'queue-thread');
    const slot: Slot = { thread, cached: new Set(), busy: false, ready: Promise.resolve(), handle: null, fail: null };
    slot.ready = new Promise<void>((resolve, reject) => {
      thread.on('message', (m: ThreadReply) => (m.type === 'ready' ? resolve() : slot.handle?.(m)));
      thread.on('error', (e) => {
        reject(e);
        slot.fail?.(e);
      });
      thread.on('exit', (code) => {
        const e = new Error(`a compute thread exited (code ${code})`);
        reject(e);
        slot.fail?.(e);
        // Replace it, so that the worker keeps its concurrency.
        if (!stopping) slots[slots.indexOf(slot)] = spawn();
      });
    });
    return slot;
  };
  let stopping = false;
  for (let i = 0; i < concurrency; i++) slots.push(spawn());
  await Promise.all(slots.map((s) => s.ready));

  let taskId = 0;
  const compute = async (job: Job, q: QueueJob): Promise<unknown> => {
    const slot = slots.find((s) => !s.busy);
    if (!slot) throw new Error('no free compute thread (concurrency exceeded)');
    slot.busy = true;
    try {
      const blob = slot.cached.has(q.model) ? null : await fetchBlob(q.model, 'model');
      let schedule: Float64Array | null = null;
      if (q.kind === 'ais' && q.schedule) {
        const s = await fetchBlob(q.schedule, 'schedule');
        if (s.byteLength % 8 !== 0) throw new JobFailure('the schedule blob is not a whole number of doubles');
        schedule = new Float64Array(s.slice().buffer);
      }
      const id = ++taskId;
      let lastProgress = 0, done = 0;
      return await new Promise<unknown>((resolve, reject) => {
        slot.fail = reject;
        slot.handle = (m) => {
          if (!('id' in m) || m.id !== id) return;
          if (m.type === 'progress') {
            done += m.done;
            const now = Date.now();
            // Progress is a Redis write: at most a few per second per job.
            if (now - lastProgress > 250) {
              lastProgress = now;
              job.updateProgress(done).catch(() => {});
            }
            return;
          }
          slot.cached = new Set(m.cached);
          if (m.type === 'done') resolve(m.result);
          else reject(m.name === 'ModelError' || m.name === 'FormatError' ? new JobFailure(m.message) : new Error(m.message));
        };
        slot.thread.postMessage({ id, job: q, blob, schedule } satisfies ThreadTask);
      });
    } finally {
      slot.handle = null;
      slot.fail = null;
      slot.busy = false;
    }
  };

  const worker = new Worker(
    QUEUE_NAME,
    async (job: Job) => {
      let q: QueueJob;
      try {
        q = checkJob(job.data);
        if (await redis.exists(keys.cancelled(q.run))) throw new JobFailure('its run was cancelled');
        const result = await compute(job, q);
        const bytes = serialize({ worker: name, result });
        await redis.set(keys.result(job.id!), bytes, 'PX', KEY_TTL_MS);
        return { bytes: bytes.length, worker: name };
      } catch (e) {
        const msg = (e as Error).message;
        log(`job ${job.id} failed: ${msg}`);
        // Bad input fails at once; anything else (e.g. this machine's memory) may succeed elsewhere.
        if (e instanceof JobFailure || e instanceof ModelError) throw new UnrecoverableError(msg);
        throw e;
      }
    },
    { connection: bullConnection(conn), concurrency, lockDuration: lockMs, stalledInterval: lockMs, maxStalledCount: 1, name, removeOnComplete: { age: KEY_TTL_MS / 1000 }, removeOnFail: { age: KEY_TTL_MS / 1000 } },
  );
  // Connection errors repeat while Redis is away: one line per distinct message and minute.
  const logged = new Map<string, number>();
  worker.on('error', (e) => {
    const now = Date.now();
    if (now - (logged.get(e.message) ?? -Infinity) < 60_000) return;
    logged.set(e.message, now);
    log(`redis: ${e.message}`);
  });
  log(`relaxmrf worker ${name}: serving queue "${QUEUE_NAME}" at ${conn.display} with ${concurrency} compute thread${concurrency > 1 ? 's' : ''}`);

  await new Promise<void>((resolve) => {
    if (opts.signal?.aborted) resolve();
    opts.signal?.addEventListener('abort', () => resolve(), { once: true });
  });
  stopping = true;
  log(`relaxmrf worker ${name}: stopping (finishing active jobs; interrupt again to quit at once)`);
  // Active jobs finish and report — unless Redis is gone, when nothing could be reported.
  const closing = worker.close().then(() => true);
  while (!(await Promise.race([closing, sleep(1000).then(() => false)]))) {
    if (!(await withTimeout(redis.ping(), 1000, 'no answer').then(() => true, () => false))) {
      log(`relaxmrf worker ${name}: Redis does not answer; quitting without finishing the active jobs (they go back to the queue)`);
      break;
    }
  }
  await withTimeout(worker.disconnect(), 1000, 'disconnect').catch(() => {});
  redis.disconnect();
  await Promise.all(slots.map((s) => s.thread.terminate()));
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
