// The job queue's scaling on this machine: `npm run bench:queue` (BENCH_QUICK=1: a smaller run).
//
// 1. One Gibbs run (periodic 64² Ising lattice at β = 0.4, 8 chains) in one process (infer), and
//    through the queue with 1, 2 and 4 `relaxmrf worker` processes (one compute thread each) on a
//    local redis-server: wall time of runQueued, medians of 3, and the speed-up over 1 worker. The
//    results are checked equal to the single-process run (timing aside) before anything is timed.
// 2. The overhead per job: 64 chains of one sweep on a 2×2 model through 1 worker, wall time per
//    job (the computing is nil): BullMQ's round trips, the result's write and read, the fold.
// Writes bench/results/queue.json. The machine is shared (2 cores): the figures are noisy, and past
// 2 workers there are no more cores to scale on.
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { isingLattice } from '../bindings/core/builders.ts';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { infer, type InferOptions } from '../bindings/infer.ts';
import { runQueued } from '../bindings/queue/queue-client.ts';
import type { InferenceResult } from '../bindings/core/result.ts';
import { REDIS_SERVER, startRedis, startWorker } from '../scripts/redis-local.ts';
import { cpuModel, dist, QUICK, resultsPath } from './common.ts';

if (!REDIS_SERVER) {
  console.error('bench:queue needs redis-server (apt-get install redis-server)');
  process.exit(1);
}

const REPS = 3;
const WORKERS = [1, 2, 4];
const model = isingLattice({ shape: [64, 64], beta: 0.4, periodic: true });
const opts: InferOptions = { method: 'gibbs', seed: 1, chains: 8, samples: QUICK ? 500 : 4000, burnin: 100 };
const tiny = isingLattice({ shape: [2, 2], beta: 0.4 });
const tinyOpts: InferOptions = { method: 'gibbs', seed: 1, chains: 64, samples: 1, burnin: 0, batches: 1 };

const comparable = (r: InferenceResult) =>
  JSON.stringify({ ...r, seconds: 0, diagnostics: Object.fromEntries(Object.entries(r.diagnostics).filter(([k]) => !/seconds|PerSecond|^workers$|^completedChains$|^queue$/i.test(k))) });

async function wall(f: () => Promise<unknown> | unknown): Promise<number> {
  const t0 = performance.now();
  await f();
  return (performance.now() - t0) / 1000;
}

const engine = await loadEngine();
const ref = infer(engine, model, opts);
const single: number[] = [];
for (let i = 0; i < REPS; i++) single.push(await wall(() => infer(engine, model, opts)));
console.log(`single process: ${dist(single).median.toFixed(2)} s (${opts.chains} chains × ${opts.samples! + opts.burnin!} sweeps of ${model.n} sites)`);

const { url, process: redis } = await startRedis();
const workers: ChildProcess[] = [];
const rows: { workers: number; seconds: ReturnType<typeof dist>; speedup: number }[] = [];
let perJob: ReturnType<typeof dist> | null = null;
try {
  for (const k of WORKERS) {
    while (workers.length < k) workers.push(await startWorker(url, ['--concurrency', '1']));
    const first = await runQueued(model, opts, { connection: url });
    if (comparable(first) !== comparable(ref)) throw new Error(`the queued result with ${k} workers differs from the single-process run`);
    const times: number[] = [];
    for (let i = 0; i < REPS; i++) times.push(await wall(() => runQueued(model, opts, { connection: url })));
    const d = dist(times);
    rows.push({ workers: k, seconds: d, speedup: rows.length ? rows[0].seconds.median / d.median : 1 });
    console.log(`queue, ${k} worker process${k > 1 ? 'es' : ''}: ${d.median.toFixed(2)} s (×${rows[rows.length - 1].speedup.toFixed(2)} over 1)`);
    if (k === 1) {
      const per: number[] = [];
      for (let i = 0; i < REPS; i++) per.push((await wall(() => runQueued(tiny, tinyOpts, { connection: url }))) / tinyOpts.chains!);
      perJob = dist(per);
      console.log(`overhead per job (1 worker, ${tinyOpts.chains} jobs of one sweep on 4 sites): ${(perJob.median * 1000).toFixed(1)} ms`);
    }
  }
} finally {
  for (const w of workers) w.kill('SIGKILL');
  redis.kill('SIGKILL');
}

const out = {
  date: new Date().toISOString(),
  cpu: cpuModel(),
  quick: QUICK,
  workload: { model: 'ising 64x64 periodic beta=0.4', ...opts },
  singleProcessSeconds: dist(single),
  queue: rows,
  overheadPerJobSeconds: perJob,
  note: 'shared 2-core machine: medians of 3; worker processes have one compute thread each',
};
writeFileSync(resultsPath('queue.json'), JSON.stringify(out, null, 2) + '\n');
