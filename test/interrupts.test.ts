// Stopping runs and what is left: a second Ctrl-C while the CLI folds what completed ends the
// process at once (it was lost, and the run exited 0); a run stopped before anything completed is
// a CancelledError (an EngineError of its own class), exit 130 in the CLI (it said exit 3, "the
// engine refused"); AIS on workers keeps every piece completed, not only a prefix; stopped dhmc
// runs say where their R̂ and ESS come from; RELAXMRF_WASM_LIMIT_MB reaches worker threads; the
// CLI's progress ends its phases at 100 %, also on a terminal, where warnings no longer stick to
// the bar; exact inference's slices on workers stop on a signal (they ran to the end); a stopped
// run's UAI files are said to be partial on stderr. The queue
// client's part is in queue.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inferAsync, runParallel } from '../bindings/parallel/parallel.ts';
import { runAISParallel } from '../bindings/logz/ais-parallel.ts';
import { exactInferenceParallel, exactMAPParallel, exactSampleParallel } from '../bindings/exact/exact-parallel.ts';
import { slicedBucketPlan } from '../bindings/exact/exact.ts';
import { isingLattice } from '../bindings/core/builders.ts';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { infer } from '../bindings/infer.ts';
import { CancelledError, EngineError } from '../bindings/core/errors.ts';

const BIN = fileURLToPath(new URL('../bin/relaxmrf.js', import.meta.url));
const engine = await loadEngine();

interface Run {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** ms from the last signal sent to the end. */
  afterLast: number;
}

/**
 * Spawns the CLI (progress on every update) and sends SIGINT once stderr matches `first`, then once
 * more as soon as it matches `second` (when given).
 */
function interrupted(args: string[], first: RegExp, second?: RegExp): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, RELAXMRF_PROGRESS_MS: '0' } });
    let stdout = '', stderr = '', sent = 0, last = 0;
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => {
      stderr += d;
      const signal = (sent === 0 && first.test(stderr)) || (sent === 1 && second?.test(stderr));
      if (signal) {
        sent++;
        last = performance.now();
        child.kill('SIGINT');
      }
    });
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, afterLast: performance.now() - last }));
  });
}

test('CLI: a second Ctrl-C while this thread folds what the workers completed ends the process at once (it was lost: the run went on and exited 0)', async () => {
  // Folding four chains of a 300×300 model takes ≈ 0.5 s after the workers stop.
  const r = await interrupted(['infer', 'ising:300x300,beta=0.3', '--method', 'gibbs', '--samples', '3000', '--chains', '4', '--workers', '2', '--json'], /gibbs: (2[5-9]|[3-9]\d)%/, /interrupted: stopping the workers/);
  // Before: the signal was lost, the fold ran on and the process exited 0 with the whole output.
  assert.equal(r.signal, 'SIGINT', `code ${r.code}; ${r.stderr.slice(-300)}`);
  assert.equal(r.stdout, '');
  assert.ok(r.afterLast < 5000, `ended ${r.afterLast} ms after the second signal`);
});

test('a run stopped before anything completed is a CancelledError (an EngineError); the CLI says "interrupted" and exits 130, not 3', async () => {
  const model = isingLattice({ shape: [6, 6], beta: 0.3 });
  const signal = AbortSignal.abort();
  const cancelled = (e: unknown) => e instanceof CancelledError && e instanceof EngineError;
  assert.throws(() => infer(engine, model, { method: 'gibbs', signal }), cancelled);
  assert.throws(() => infer(engine, model, { method: 'dhmc', signal }), cancelled);
  await assert.rejects(runParallel(model, { method: 'gibbs', workers: 2, signal }), cancelled);
  // Exact inference runs to its end once begun; an abort before it starts is honoured (it resolved whole).
  await assert.rejects(inferAsync(engine, model, { method: 'exact', workers: 2, signal }), cancelled);
  await assert.rejects(inferAsync(engine, model, { method: 'exact', signal }), cancelled);
  // Interrupted in a long warm-up (91 % of the progress; seconds before any batch can complete), the CLI has nothing to print.
  const r = await interrupted(['infer', 'ising:40x40,beta=0.3', '--method', 'dhmc', '--burnin', '20000', '--samples', '2000', '--chains', '2', '--workers', '2', '--json'], /dhmc: [1-9]%/);
  assert.equal(r.code, 130, r.stderr);
  assert.match(r.stderr, /^relaxmrf: interrupted: dhmc was cancelled before the first batch completed: no estimate$/m);
  assert.equal(r.stdout, '');
});

test('AIS on workers stopped mid-run folds every piece completed, not only those before the first unfinished one', async () => {
  const model = isingLattice({ shape: [10, 10], beta: 0.4, h: 0.05 });
  // Ten independent runs on two workers go out as pieces of 8 and 2 runs: the second ends first,
  // and the run is stopped then (it was rejected: "cancelled before any … completed").
  const ac = new AbortController();
  let seen = 0;
  const r = await runAISParallel(engine, model, {
    runs: 10, steps: 20_000, seed: 2, workers: 2, signal: ac.signal,
    onProgress: (p) => {
      seen = p.done;
      ac.abort();
    },
  });
  assert.equal(r.diagnostics.partial, true);
  assert.equal(seen, 2);
  assert.equal(r.diagnostics.runs, 2, 'the runs reported done are the estimate\'s');
  assert.ok(Number.isFinite(r.logZ));
});

test('dhmc stopped before every chain completed: a warning says R̂ and ESS come from the chains that did (it said "one chain", or nothing)', async () => {
  const model = isingLattice({ shape: [8, 8], beta: 0.3, h: 0.1 });
  const ac = new AbortController();
  const r = await runParallel(model, { method: 'dhmc', chains: 6, samples: 3000, burnin: 300, seed: 4, workers: 1, signal: ac.signal, onProgress: (p) => void (p.done >= 0.4 * p.total && ac.abort()) });
  assert.equal(r.partial, true);
  const done = r.diagnostics.completedChains as number;
  assert.ok(done < 6, `completed ${done}`);
  const warnings = r.warnings ?? [];
  assert.ok(warnings.some((w) => w.startsWith('the run was stopped: ') && w.includes(done > 0 ? `the ${done} chain` : 'no chain completed')), String(warnings));
  assert.ok(!warnings.some((w) => w.startsWith('one chain')), String(warnings));
});

test('RELAXMRF_WASM_LIMIT_MB lowers the worker threads\' engines too: the same refusal with and without --workers (it ran on workers)', () => {
  for (const workers of ['0', '2']) {
    const r = spawnSync(process.execPath, [BIN, 'infer', 'ising:200x200,beta=0.3', '--method', 'gibbs', '--samples', '200', '--workers', workers], { encoding: 'utf8', env: { ...process.env, RELAXMRF_WASM_LIMIT_MB: '2' } });
    assert.equal(r.status, 3, `--workers ${workers}: ${r.stderr}`);
    assert.match(r.stderr, /past the engine's limit of 2\.0 MiB/);
  }
});

test('CLI progress: a phase shown once is shown at its end (a log\'s last line said 21 %); on a terminal the bar reaches 100 % and a warning starts a line of its own', () => {
  // Off a terminal, lines every 5 × 200 ms: a run of a few seconds shows its phases' ends only if asked to.
  const args = ['infer', 'ising:20x20,beta=1', '--method', 'gibbs', '--samples', '60000', '--chains', '4', '--workers', '0', '--json'];
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, RELAXMRF_PROGRESS_MS: '200' } });
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stderr.split('\n').filter((l) => /^gibbs: \d+%/.test(l));
  assert.ok(lines.length >= 2, r.stderr);
  assert.match(lines.at(-1)!, /^gibbs: 100% \((\d+)\/\1\)$/);
  // A terminal, through script(1): the bar's last frame is 100 % with its newline, and the warning
  // (R̂: a strongly coupled grid) follows on its own line.
  const dir = mkdtempSync(join(tmpdir(), 'relaxmrf-tty-'));
  try {
    const out = join(dir, 'out.json');
    const cmd = [process.execPath, BIN, ...args].map((a) => `'${a}'`).join(' ') + ` > '${out}'`;
    const t = spawnSync('script', ['-qec', cmd, '/dev/null'], { encoding: 'utf8', env: { ...process.env, RELAXMRF_PROGRESS_MS: '200' } });
    assert.equal(t.status, 0, t.stdout);
    const tty = t.stdout.replace(/\r\n/g, '\n');
    assert.match(tty, /\rgibbs \[#{30}\] 100% *\n/);
    assert.match(tty, /\nrelaxmrf: warning: /);
    assert.doesNotMatch(tty, /% *(, [^\n]*)? *relaxmrf: warning/);
    assert.equal(JSON.parse(readFileSync(out, 'utf8')).method, 'gibbs');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('exact inference with its slices on workers stops on a signal with a CancelledError (it ran every slice); decoding refuses an aborted signal', async () => {
  const model = isingLattice({ shape: [16, 16], beta: 0.3, h: 0.1 });
  // Half the unsliced plan's memory: 32 slices, ≈ 1 s on two workers.
  const opts = { method: 'bucket' as const, maxMemory: Math.floor(slicedBucketPlan(model, { method: 'bucket' }).sliced.plan.bytes / 2), speedSlicing: false };
  assert.ok(slicedBucketPlan(model, opts).sliced.slices >= 16);
  const cancelled = (e: unknown) => e instanceof CancelledError;
  let events = 0;
  const ac = new AbortController();
  await assert.rejects(exactInferenceParallel(engine, model, { ...opts, workers: 2, signal: ac.signal, onProgress: () => void (events++, ac.abort()) }), cancelled);
  assert.equal(events, 1, 'stopped after the first slice, not at the end');
  // Through inferAsync, the same.
  const ac2 = new AbortController();
  await assert.rejects(inferAsync(engine, model, { method: 'exact', exact: opts, workers: 2, signal: ac2.signal, onProgress: () => ac2.abort() }), cancelled);
  const aborted = AbortSignal.abort();
  await assert.rejects(exactSampleParallel(engine, model, { ...opts, count: 3, workers: 2, signal: aborted }), cancelled);
  await assert.rejects(exactMAPParallel(engine, model, { ...opts, workers: 2, signal: aborted }), cancelled);
  // Not aborted: the run is whole, as without a signal.
  const whole = await exactInferenceParallel(engine, model, { ...opts, workers: 2, signal: new AbortController().signal });
  assert.equal(whole.logZ, (await exactInferenceParallel(engine, model, { ...opts, workers: 2 })).logZ);
});

test('CLI: a stopped run written as UAI files says on stderr that they hold a partial result (the format has no place for it)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'relaxmrf-partial-'));
  try {
    const out = join(dir, 'r');
    const r = await interrupted(['infer', 'ising:100x100,beta=0.3', '--method', 'gibbs', '--samples', '100000', '--workers', '2', '--out-format', 'uai', '--out', out], /gibbs: (2[5-9]|[3-9]\d)%/);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`^relaxmrf: note: the UAI output \\(${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.MAR\\) holds a partial result: the run was stopped before it ended$`, 'm'));
    assert.ok(readFileSync(out + '.MAR', 'utf8').startsWith('MAR'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a stopped sampler reports the samples it recorded, not the plan (samplesPerChain 200000 beside "only 2 batch means" fed the rare-state warning\'s floor 10⁵ times too many draws)', async () => {
  const model = isingLattice({ shape: [16, 16], beta: 0.3 });
  for (const workers of [undefined, 2]) {
    const ac = new AbortController();
    const samples = 400_000;
    // Stopped once progress passes a fifth of the run (a few batches in): partial, whatever the machine's speed.
    const r = await inferAsync(engine, model, { method: 'gibbs', chains: 2, samples, burnin: 10, workers, signal: ac.signal, onProgress: (p) => { if (p.done > 0.2 * p.total) ac.abort(); } });
    assert.equal(r.partial, true);
    const per = Number(r.diagnostics.samplesPerChain), batches = Number(r.diagnostics.batchesPerChain);
    assert.ok(per > 0 && per < samples, `${per} samples per chain`);
    // Batches of samples / 20 each: the two counts agree.
    assert.ok(Math.abs(per - batches * (samples / 20)) < samples / 20, `${per} samples in ${batches} batches`);
  }
});
