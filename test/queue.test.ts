// The job queue with a real Redis: redis-server on a free loopback port, three `relaxmrf worker`
// processes; gibbs and population annealing through the queue equal the single-process run bit for
// bit, also when a worker is killed mid-run (its job is retried elsewhere); exact inference's slices
// as jobs equal the single-process run bit for bit; Gibbs's precision and scan and AIS's lanes and
// precision cross the queue (validated) and give the single-process result; a malformed and an
// oversized job fail with their reason while the workers keep serving; a wrong URL is exit 2, and
// a Redis that goes away mid-run is exit 3, promptly. Skipped (with a message) without redis-server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { isingLattice } from '../bindings/core/builders.ts';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { infer, type InferOptions } from '../bindings/infer.ts';
import { runQueued } from '../bindings/queue/queue-client.ts';
import { QUEUE_NAME, checkJobOpts } from '../bindings/queue/queue-jobs.ts';
import type { InferenceResult } from '../bindings/core/result.ts';
import { join } from 'node:path';
import { loadModelFile } from '../bindings/io/files.ts';
import { dataDir } from './helpers.ts';
import { freePort, REDIS_SERVER, sleep, startRedis, startWorker } from '../scripts/redis-local.ts';

const BIN = fileURLToPath(new URL('../bin/relaxmrf.js', import.meta.url));
if (!REDIS_SERVER && process.env.CI) throw new Error('redis-server is missing: CI installs it (.ci/run)');
const skip = REDIS_SERVER ? false : 'redis-server is not installed (apt-get install redis-server); the queue tests need a real Redis';

let redis: ChildProcess | null = null;
let url = '';
const workers: ChildProcess[] = [];
const WORKER_ARGS = ['--concurrency', '1', '--lock-ms', '2000'];

before(async () => {
  if (skip) return;
  ({ url, process: redis } = await startRedis());
  workers.push(...(await Promise.all([0, 1, 2].map(() => startWorker(url, WORKER_ARGS)))));
});

after(() => {
  for (const w of workers) w.kill('SIGKILL');
  redis?.kill('SIGKILL');
});

/** The result without what may differ: timing, and the queue's own diagnostics. */
function comparable(r: InferenceResult): unknown {
  const d = Object.fromEntries(Object.entries(r.diagnostics).filter(([k]) => !/seconds|PerSecond|^workers$|^completedChains$|^queue$/i.test(k)));
  return { ...r, seconds: 0, diagnostics: d };
}

test('gibbs through the queue equals the single-process run bit for bit, also when a worker is killed mid-run', { skip }, async () => {
  const engine = await loadEngine();
  const model = isingLattice({ shape: [24, 24], beta: 0.4, h: 0.05 });
  const opts: InferOptions = { method: 'gibbs', seed: 11, chains: 6, samples: 6000, burnin: 200 };
  const ref = infer(engine, model, opts);
  let killed = false;
  const r = await runQueued(model, {
    ...opts,
    // Every worker is busy with a chain by now: kill one; its job's lock lapses and another worker reruns it.
    onProgress: (p) => {
      if (!killed && p.done > 0) {
        killed = true;
        workers[0].kill('SIGKILL');
      }
    },
  }, { connection: url });
  assert.ok(killed, 'a worker was killed during the run');
  assert.equal(r.partial, false);
  assert.equal(r.diagnostics.completedChains, 6);
  assert.equal(r.diagnostics.queue, `${url}/0`);
  assert.deepEqual(comparable(r), comparable(ref));
  workers.push(await startWorker(url, WORKER_ARGS));
});

test('population annealing (AIS pieces) and exact through the queue equal the single-process run', { skip }, async () => {
  const engine = await loadEngine();
  const model = isingLattice({ shape: [6, 6], beta: 0.5, h: 0.1 });
  for (const opts of [
    { method: 'gibbs', seed: 4, chains: 2, samples: 500, logz: 'ais', ais: { runs: 48, population: 8, steps: 300 } },
    { method: 'exact', seed: 5, logz: 'ais', ais: { runs: 20, steps: 200 } },
    // Methods without chain jobs run whole on a worker (bp, pt, treegibbs, sw were refused by its payload check).
    { method: 'bp', damping: 0.2, maxIterations: 500, tolerance: 1e-8 },
    { method: 'bounds', trwSteps: 2 },
    { method: 'pt', seed: 6, replicas: 4, samples: 200, burnin: 50 },
    { method: 'treegibbs', seed: 7, chains: 2, samples: 200 },
    { method: 'sw', seed: 8, chains: 2, samples: 200 },
    // The chain counts only the estimate reads: its job takes them, the method's job (which refuses them) not.
    { method: 'mf', seed: 9, logz: 'chib', chains: 2, samples: 200, burnin: 20 },
  ] as InferOptions[]) {
    const ref = infer(engine, model, opts);
    const r = await runQueued(model, opts, { connection: url, aisRunsPerJob: 3 });
    assert.deepEqual(comparable(r), comparable(ref), JSON.stringify(opts));
  }
});

test("Gibbs's precision and scan and AIS's lanes and precision cross the queue (validated); the single-process result", async () => {
  const ok = { precision: 'f32', scan: 'colored', lanes: false, ais: { lanes: true, precision: 'f32' } };
  assert.deepEqual(checkJobOpts(ok), ok);
  assert.throws(() => checkJobOpts({ precision: 'f16' }), /options.precision must be one of f64, f32/);
  assert.throws(() => checkJobOpts({ ais: { precision: 'f16' } }), /options.ais.precision must be one of/);
  assert.throws(() => checkJobOpts({ scan: 'random' }), /options.scan must be one of/);
  assert.throws(() => checkJobOpts({ lanes: 'yes' }), /options.lanes has a bad value/);
  if (skip) return;
  const engine = await loadEngine();
  const model = isingLattice({ shape: [6, 6], beta: 0.5, h: 0.1 });
  for (const opts of [
    { method: 'gibbs', seed: 6, chains: 3, samples: 400, precision: 'f32', scan: 'colored', logz: 'ais', ais: { runs: 12, steps: 100, precision: 'f32' } },
    { method: 'gibbs', seed: 7, chains: 2, samples: 400, logz: 'ais', ais: { runs: 12, steps: 100, lanes: false } },
  ] as InferOptions[]) {
    const ref = infer(engine, model, opts);
    const r = await runQueued(model, opts, { connection: url, aisRunsPerJob: 4 });
    assert.deepEqual(comparable(r), comparable(ref), JSON.stringify(opts));
  }
});

test('a run cancelled after its method finished but before any of its log Z estimate: the method\'s result, partial, with a warning (the client threw and lost it)', { skip }, async () => {
  const engine = await loadEngine();
  const model = isingLattice({ shape: [12, 12], beta: 0.4, h: 0.1 });
  // Mean field finishes in milliseconds; AIS's pieces (long schedules) are still running when it does.
  const opts: InferOptions = { method: 'mf', seed: 3, logz: 'ais', ais: { runs: 8, steps: 200_000 } };
  const ac = new AbortController();
  const r = await runQueued(model, { ...opts, signal: ac.signal, onProgress: (p) => void (p.done >= 1 && ac.abort()) }, { connection: url, aisRunsPerJob: 4 });
  assert.equal(r.partial, true);
  const ref = infer(engine, model, { method: 'mf', seed: 3 });
  assert.deepEqual(r.marginals, ref.marginals);
  assert.ok((r.warnings ?? []).some((w) => /^log Z \(ais\): stopped before any population or group of runs completed: not estimated/.test(w)), String(r.warnings));
});

test('exact inference with a sliced plan: the slices as jobs, the single-process result bit for bit', { skip }, async () => {
  const engine = await loadEngine();
  const { model } = await loadModelFile(join(dataDir(), 'uai2014-more', 'CSP_12.uai'));
  const opts: InferOptions = { method: 'exact', exact: { maxMemory: 2 ** 21 } };
  const ref = infer(engine, model, opts);
  assert.ok((ref.diagnostics.slices as number) >= 4);
  const r = await runQueued(model, opts, { connection: url });
  assert.deepEqual(comparable(r), comparable(ref));
  assert.ok((r.diagnostics.workers as number) >= 1);
});

test('a malformed and an oversized job fail at once with their reason; the workers keep serving', { skip }, async () => {
  const q = new Queue(QUEUE_NAME, { connection: { url } });
  try {
    const bad = await q.add('bad', { v: 1, run: 'abcdef0123', kind: 'chains', model: '0'.repeat(64), method: 'gibbs', opts: { samples: 'many' }, chains: [0] }, { attempts: 2 });
    const big = await q.add('big', { v: 1, run: 'abcdef0123', kind: 'logz', model: '0'.repeat(64), opts: { orderings: Array(60_000).fill('x'.repeat(30)) } }, { attempts: 2 });
    for (const [job, reason] of [[bad, /options\.samples has a bad value/], [big, /over the limit/]] as const) {
      let state = '';
      for (let i = 0; i < 100 && state !== 'failed'; i++, await sleep(100)) state = await job.getState();
      assert.equal(state, 'failed');
      const j = (await q.getJob(job.id!))!;
      assert.match(j.failedReason, reason);
      assert.equal(j.attemptsMade, 1, 'a malformed job is not retried');
    }
  } finally {
    await q.close();
  }
  const model = isingLattice({ shape: [3, 3], beta: 0.3 });
  const r = await runQueued(model, { method: 'gibbs', seed: 1, chains: 3, samples: 100 }, { connection: url });
  assert.equal(r.diagnostics.completedChains, 3);
});

/** Runs the CLI; cliOutput (if set) sees its stderr as it comes. */
function cli(env: Record<string, string>, ...args: string[]): Promise<{ code: number | null; err: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    c.stderr!.on('data', (d) => {
      err += d;
      cliOutput?.(err);
    });
    c.on('exit', (code) => resolve({ code, err }));
  });
}
let cliOutput: ((err: string) => void) | null = null;

test('a wrong queue URL is exit 2 with a clear line', { skip }, async () => {
  const closed = await freePort();
  const a = await cli({}, 'infer', 'ising:3x3', '--method', 'gibbs', '--queue', `redis://127.0.0.1:${closed}`);
  assert.equal(a.code, 2, a.err);
  assert.match(a.err, new RegExp(`^relaxmrf: cannot use the queue at redis://127\\.0\\.0\\.1:${closed}/0: .*ECONNREFUSED`));
  const b = await cli({}, 'infer', 'ising:3x3', '--queue', 'http://127.0.0.1:6379');
  assert.equal(b.code, 2);
  assert.match(b.err, /not a Redis URL scheme/);
  const c = await cli({}, 'worker', '--queue', `redis://127.0.0.1:${closed}`);
  assert.equal(c.code, 2);
  assert.match(c.err, /cannot use the queue/);
  // A database the server does not have (a run on /99 was served from database 0).
  const d = await cli({}, 'infer', 'ising:3x3', '--method', 'mf', '--queue', `${url.replace(/\/\d+$/, '')}/99`);
  assert.equal(d.code, 2, d.err);
  assert.match(d.err, /cannot use the queue at redis:\/\/127\.0\.0\.1:\d+\/99: ERR DB index is out of range/);
});

test('no worker: the client says so once and keeps waiting; SIGTERM cancels its jobs as Ctrl-C does (they were left to a later worker)', { skip }, async () => {
  // Database 7: no worker serves it.
  const db7 = `${url.replace(/\/\d+$/, '')}/7`;
  const c = spawn(process.execPath, [BIN, 'infer', 'ising:3x3', '--method', 'gibbs', '--chains', '2', '--queue', db7], { env: { ...process.env, RELAXMRF_QUEUE_WAIT_MS: '300' }, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const noted = new Promise<void>((resolve) => c.stderr!.on('data', (d) => ((err += d), /no worker has taken a job of this run/.test(err) && resolve())));
  const exited = new Promise<number | null>((resolve) => c.on('exit', resolve));
  await Promise.race([noted, sleep(20_000)]);
  assert.match(err, /^relaxmrf: note: no worker has taken a job of this run for 0.3 s; the jobs wait in the queue at redis:\/\/127\.0\.0\.1:\d+\/7/m);
  c.kill('SIGTERM');
  const code = await exited;
  // Stopped before anything completed: exit 130, not 3 ("the engine refused").
  assert.equal(code, 130, err);
  assert.match(err, /^relaxmrf: interrupted: cancelling the run's jobs/m);
  assert.match(err, /^relaxmrf: interrupted: .*cancelled before/m);
  const port = Number(/:(\d+)/.exec(url.replace('redis://', ''))![1]);
  const q = new Queue(QUEUE_NAME, { connection: { host: '127.0.0.1', port, db: 7 } });
  try {
    assert.equal(await q.getWaitingCount(), 0, 'the waiting jobs are cancelled');
  } finally {
    await q.close();
  }
});

test('a Redis that goes away mid-run: exit 3 with a clear line, no hang', { skip }, async () => {
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  // The run is under way once it reports progress (the workers have its jobs).
  cliOutput = (err) => /gibbs: \d+%/.test(err) && started();
  const run = cli({ RELAXMRF_QUEUE_LOST_MS: '2000', RELAXMRF_PROGRESS_MS: '0' }, 'infer', 'ising:32x32,beta=0.4', '--method', 'gibbs', '--chains', '8', '--samples', '200000', '--queue', url);
  await Promise.race([running, sleep(20_000)]);
  redis!.kill('SIGKILL');
  const killedAt = Date.now();
  const r = await run;
  assert.equal(r.code, 3, r.err);
  assert.match(r.err, /lost the queue's Redis at redis:\/\/127\.0\.0\.1:\d+\/0/);
  assert.ok(Date.now() - killedAt < 8000, `exited ${Date.now() - killedAt} ms after Redis went away`);
});

test('every method crosses the queue: the chain samplers as chain jobs, the rest whole (the list of whole-run methods is the methods less the chain samplers)', async () => {
  const { WHOLE_METHODS } = await import('../bindings/queue/queue-jobs.ts');
  const { PARALLEL_METHODS } = await import('../bindings/parallel/parallel-job.ts');
  const { METHODS } = await import('../bindings/infer.ts');
  assert.deepEqual([...WHOLE_METHODS, ...PARALLEL_METHODS].sort(), [...METHODS].sort());
});
