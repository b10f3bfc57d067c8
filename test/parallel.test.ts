// runParallel: chains on worker_threads, combined in chain order — bit-identical to the method's
// single-thread run (runGibbs, infer) for the same seed and chains whatever the number of workers;
// cancellable with an AbortSignal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runParallel, inferAsync, inferRoute, autoWorkers } from '../bindings/parallel/parallel.ts';
import { runGibbs } from '../bindings/samplers/gibbs.ts';
import { isingLattice, pottsLattice } from '../bindings/core/builders.ts';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { infer } from '../bindings/infer.ts';
import type { ContinuousResult } from '../bindings/samplers/dhmc.ts';

test('workers = 1, 2, 3 give bit-identical results, equal to runGibbs (binary and one-hot models)', async () => {
  const engine = await loadEngine();
  for (const model of [isingLattice({ shape: [4, 5], beta: 0.4, h: 0.1 }), pottsLattice({ shape: [3, 3], q: 3, beta: 0.5 })]) {
    const opts = { seed: 17, chains: 5, samples: 400, burnin: 50, batches: 8 };
    const ref = runGibbs(engine, model, opts);
    for (const workers of [1, 2, 3]) {
      const r = await runParallel(model, { ...opts, workers });
      assert.equal(r.partial, false);
      assert.equal(r.diagnostics.workers, workers);
      assert.deepEqual(r.marginals, ref.marginals, `marginals, workers = ${workers}`);
      assert.deepEqual(r.marginalStdErr, ref.marginalStdErr, `standard errors, workers = ${workers}`);
      assert.equal(r.diagnostics.changeRate, ref.diagnostics.changeRate);
    }
  }
});

test('progress is reported and a different seed gives different marginals', async () => {
  const model = isingLattice({ shape: [3, 3], beta: 0.3 });
  let last = 0, total = 0;
  const a = await runParallel(model, { seed: 1, chains: 2, workers: 2, samples: 100, burnin: 10, onProgress: (p) => ((last = p.done), (total = p.total)) });
  assert.equal(total, 2 * 110);
  assert.equal(last, total);
  const b = await runParallel(model, { seed: 2, chains: 2, workers: 2, samples: 100, burnin: 10 });
  assert.notDeepEqual(a.marginals, b.marginals);
});

test('an abort terminates the workers and returns the batches done so far, marked partial', async () => {
  const model = isingLattice({ shape: [20, 20], beta: 0.3 });
  const ac = new AbortController();
  // 4 chains × 10⁶ sweeps of 400 sites: the abort after 100 000 sweeps must cut that short (checked
  // by the work done, not by the clock). A worker advances its two chains together in SIMD lanes, so
  // by then each chain has about 25 000 sweeps, several 5000-sweep batches (at 20 000 a chain could
  // still be at its first batch boundary).
  const r = await runParallel(model, {
    seed: 5, chains: 4, workers: 2, samples: 1_000_000, burnin: 0, batches: 200, signal: ac.signal,
    onProgress: (p) => { if (p.done >= 100_000) ac.abort(); },
  });
  assert.equal(r.partial, true);
  assert.ok(r.marginals.every((row) => row.every((x) => x >= 0 && x <= 1)));
  assert.ok((r.diagnostics.completedChains as number) < 4);
  // The warnings count the batch means the chains completed, not the 200 planned.
  assert.ok(!(r.warnings ?? []).some((w) => /\b200 batch means/.test(w)), String(r.warnings));
});

test('an abort before any batch rejects; bad options are refused', async () => {
  const model = isingLattice({ shape: [3, 3], beta: 0.3 });
  await assert.rejects(runParallel(model, { signal: AbortSignal.abort() }), /cancelled before the first batch/);
  await assert.rejects(runParallel(model, { workers: 0 }), /workers must be/);
  // Past the limit even when there are fewer chains (it ran 257 workers' worth of 4 chains on 4, silently).
  await assert.rejects(runParallel(model, { workers: 257, chains: 4 }), /workers must be an integer in \[1, 256\]/);
  for (const method of ['mf', 'treegibbs', 'pt']) await assert.rejects(runParallel(model, { method: method as 'gibbs' }), /the other methods run on the calling thread: use infer, or inferAsync/);
  // inferAsync takes 0 (this thread) and says so in its range (runParallel's [1, 256] was quoted).
  await assert.rejects(inferAsync(await loadEngine(), model, { method: 'gibbs', workers: 257 }), /workers must be an integer in \[0, 256\]/);
  await assert.rejects(runParallel(model, { method: 'dhmc', targetAccept: 2 }), /targetAccept must be in/);
});

/** The estimates and the diagnostics that do not measure time. */
function comparable(r: ContinuousResult | Awaited<ReturnType<typeof runParallel>>) {
  const timing = new Set(['seconds', 'samplingSeconds', 'gradientsPerSecond', 'sweepsPerSecond', 'setupSeconds', 'workers', 'completedChains']);
  const c = r as ContinuousResult;
  return {
    marginals: r.marginals,
    marginalStdErr: r.marginalStdErr,
    ess: c.ess,
    rhat: c.rhat,
    empiricalMarginals: c.empiricalMarginals,
    diagnostics: Object.fromEntries(Object.entries(r.diagnostics).filter(([k]) => !timing.has(k))),
  };
}

test('dhmc and mala chains (per-chain warm-up) in workers: workers = 1 and 2 bit-identical, equal to infer()', async () => {
  const engine = await loadEngine();
  const model = isingLattice({ shape: [3, 4], beta: 0.35, h: 0.1 });
  for (const method of ['dhmc', 'mala'] as const) {
    const opts = { method, seed: 23, chains: 3, samples: 300, burnin: 100, batches: 10 };
    const ref = comparable(infer(engine, model, opts) as ContinuousResult);
    assert.ok((ref.diagnostics.essMin as number) > 0 && Number.isFinite(ref.diagnostics.stepSize as number), `${method}: ESS and step size reported`);
    for (const workers of [1, 2]) {
      const r = await runParallel(model, { ...opts, workers });
      assert.equal(r.partial, false);
      assert.equal(r.method, method);
      assert.equal(r.diagnostics.workers, workers);
      assert.equal(r.diagnostics.completedChains, 3);
      assert.deepEqual(comparable(r), ref, `${method}, workers = ${workers}`);
    }
  }
});

test('block Gibbs chains in workers: workers = 1 and 3 bit-identical, equal to infer()', async () => {
  const engine = await loadEngine();
  const model = pottsLattice({ shape: [3, 3], q: 3, beta: 0.4 });
  const opts = { method: 'blockgibbs' as const, seed: 4, chains: 3, samples: 300, burnin: 30, batches: 10 };
  const ref = comparable(infer(engine, model, opts) as ContinuousResult);
  for (const workers of [1, 3]) {
    const r = await runParallel(model, { ...opts, workers });
    assert.deepEqual(comparable(r), ref, `workers = ${workers}`);
    assert.equal(r.diagnostics.factor, ref.diagnostics.factor);
  }
});

test('an abort stops dhmc workers mid-run and returns the chains\' completed batches, marked partial', async () => {
  const model = isingLattice({ shape: [6, 6], beta: 0.3 });
  const ac = new AbortController();
  const r = await runParallel(model, {
    method: 'dhmc', seed: 2, chains: 2, workers: 2, samples: 2_000_000, burnin: 50, batches: 1000, signal: ac.signal,
    onProgress: (p) => { if (p.done >= 40_000) ac.abort(); },
  });
  assert.equal(r.partial, true);
  assert.equal(r.diagnostics.completedChains, 0);
  assert.ok(r.marginals.every((row) => row.every((x) => x >= 0 && x <= 1)));
  assert.ok((r.diagnostics.acceptRate as number) > 0);
});

test('Gibbs in f32 lanes with a colored scan: workers 1, 2, 3 equal the single-thread run; inferAsync equals infer', async () => {
  const engine = await loadEngine();
  const model = pottsLattice({ shape: [3, 4], q: 3, beta: 0.5, periodic: true });
  const opts = { seed: 23, chains: 7, samples: 300, burnin: 20, batches: 6, precision: 'f32', scan: 'colored' } as const;
  const ref = runGibbs(engine, model, opts);
  for (const workers of [1, 2, 3]) {
    const r = await runParallel(model, { ...opts, workers });
    assert.deepEqual(r.marginals, ref.marginals, `workers = ${workers}`);
    assert.deepEqual(r.marginalStdErr, ref.marginalStdErr);
    assert.equal(r.diagnostics.changeRate, ref.diagnostics.changeRate);
  }
  // Below the work threshold inferAsync runs on this thread; given workers, in workers; the same result.
  assert.equal(autoWorkers('gibbs', model, opts, 2), 1);
  assert.equal(autoWorkers('gibbs', model, { ...opts, samples: 1e6 }, 2), 2);
  assert.equal(autoWorkers('gibbs', model, { ...opts, chains: 1, samples: 1e7 }, 2), 1);
  // The relaxation's samplers: workers for runs past AUTO_WORKERS_MIN_RELAXED_STEPS bit-steps
  // (DHMC counts its leapfrog steps), never for one chain.
  const grid64 = isingLattice({ shape: [64, 64], beta: 0.3 });
  assert.equal(autoWorkers('dhmc', model, { chains: 4 }, 2), 1, 'a short DHMC run');
  assert.equal(autoWorkers('dhmc', grid64, { chains: 4 }, 2), 2, 'DHMC defaults on 64×64: 2·10⁸ bit-steps');
  assert.equal(autoWorkers('dhmc', grid64, { chains: 1 }, 2), 1);
  assert.equal(autoWorkers('mala', grid64, { chains: 4, samples: 500, burnin: 500 }, 2), 1, '1.6·10⁷ bit-steps');
  assert.equal(autoWorkers('blockgibbs', grid64, { chains: 4, samples: 5000 }, 2), 2, '8.5·10⁷ bit-steps');
  // A short run on a huge model stays on this thread (each worker would copy the model).
  const big = isingLattice({ shape: [1024, 1024], beta: 0.4, periodic: true });
  assert.equal(autoWorkers('gibbs', big, { chains: 8, samples: 100, burnin: 10 }, 2), 1);
  assert.equal(autoWorkers('gibbs', big, { chains: 8, samples: 1000, burnin: 10 }, 2), 2);
  // f64: two chains never start workers (one chain per worker leaves half a vector empty); four
  // chains on two cores (a vector per worker against two interleaved in this thread) need more
  // updates than eight (two batches of four against one per worker).
  assert.equal(autoWorkers('gibbs', big, { chains: 2, samples: 1e4 }, 2), 1);
  const mid = isingLattice({ shape: [128, 128], beta: 0.4, periodic: true }); // 16 384 bits
  assert.equal(autoWorkers('gibbs', mid, { chains: 4, samples: 2000, burnin: 200 }, 2), 1); // 1.4·10⁸ updates
  assert.equal(autoWorkers('gibbs', mid, { chains: 8, samples: 2000, burnin: 200 }, 2), 2); // 2.9·10⁸
  assert.equal(autoWorkers('gibbs', mid, { chains: 4, samples: 6000 }, 2), 2); // 3.9·10⁸
  assert.equal(autoWorkers('gibbs', mid, { chains: 4, samples: 6000, precision: 'f32' }, 2), 1); // one f32 vector either way
  const a = await inferAsync(engine, model, { ...opts, method: 'gibbs' });
  const b = await inferAsync(engine, model, { ...opts, method: 'gibbs', workers: 2 });
  assert.deepEqual(a.marginals, ref.marginals);
  assert.deepEqual(b.marginals, ref.marginals);
  assert.equal(a.diagnostics.workers, undefined);
  assert.equal(b.diagnostics.workers, 2);
});

test('inferRoute says where inferAsync runs a request; only chains and AIS on workers stop early', () => {
  const big = isingLattice({ shape: [16, 16], beta: 0.3 });
  assert.deepEqual(inferRoute(big, { method: 'gibbs', workers: 2 }), { kind: 'chains', workers: 2 });
  assert.deepEqual(inferRoute(big, { method: 'gibbs', workers: 0 }), { kind: 'here' });
  assert.deepEqual(inferRoute(big, { method: 'gibbs', samples: 100 }), { kind: 'here' }, 'a short run is not worth the threads');
  assert.deepEqual(inferRoute(big, { method: 'mf' }), { kind: 'here' });
  assert.deepEqual(inferRoute(big, { method: 'exact', workers: 2 }), { kind: 'exact', workers: 2 });
  const ais = inferRoute(big, { method: 'mf', logz: 'ais', workers: 2 });
  assert.equal(ais.kind, 'ais');
  assert.equal(ais.kind === 'ais' && ais.workers, 2);
  assert.equal(ais.kind === 'ais' && ais.ownWorkers, undefined, 'mean field on this thread');
});

test('inferAsync cancelled before any AIS piece completed keeps the method\'s own result, partial, with a warning', async () => {
  const engine = await loadEngine();
  const model = isingLattice({ shape: [8, 8], beta: 0.3 });
  // Aborted as mean field's last start completes: the AIS workers then stop before their first piece.
  const ac = new AbortController();
  const r = await inferAsync(engine, model, { method: 'mf', logz: 'ais', workers: 2, signal: ac.signal, onProgress: (p) => { if (p.phase !== 'ais' && p.done === p.total) ac.abort(); } });
  const whole = infer(engine, model, { method: 'mf' });
  assert.equal(r.partial, true);
  assert.deepEqual(r.marginals, whole.marginals);
  assert.equal(r.logZ, whole.logZ);
  assert.equal(r.logZKind, 'lower-bound');
  assert.ok((r.warnings ?? []).some((w) => /stopped before any population/.test(w)), String(r.warnings));
});

/** Spawns the CLI, sends SIGINT once its progress line shows `atPercent` %, and collects what it wrote. */
function interruptAt(args: string[], atPercent: number, phase = ''): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string; afterSignalMs: number }> {
  const BIN = fileURLToPath(new URL('../bin/relaxmrf.js', import.meta.url));
  return new Promise((resolve) => {
    // Progress on every call (RELAXMRF_PROGRESS_MS=0), so the signal goes when the phase is reached.
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, RELAXMRF_PROGRESS_MS: '0' } });
    let stdout = '', stderr = '', sentAt = 0;
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => {
      stderr += d;
      const shown = [...String(d).matchAll(/([\w-]+): (\d+)% \(/g)].filter((m) => m[1].startsWith(phase)).map((m) => Number(m[2]));
      if (!sentAt && shown.some((p) => p >= atPercent)) {
        sentAt = performance.now();
        child.kill('SIGINT');
      }
    });
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, afterSignalMs: performance.now() - sentAt }));
  });
}

test('CLI: Ctrl-C on a run on worker threads prints the result of what completed (partial, exit 0); on this thread it ends the process at once, as before', async () => {
  // ≈ 10 s of work on 2 workers; interrupted at 25 %, after each chain's first batches.
  const onWorkers = await interruptAt(['infer', 'ising:100x100,beta=0.3', '--method', 'gibbs', '--samples', '100000', '--workers', '2', '--json'], 25);
  assert.equal(onWorkers.code, 0, onWorkers.stderr);
  assert.match(onWorkers.stderr, /interrupted: stopping the workers/);
  const out = JSON.parse(onWorkers.stdout);
  assert.equal(out.partial, true);
  assert.equal(out.marginals.length, 10_000);
  assert.ok(out.diagnostics.completedChains < 4);
  // On this thread no listener could run before the end, so none is installed: SIGINT ends it.
  const here = await interruptAt(['infer', 'ising:100x100,beta=0.3', '--method', 'gibbs', '--samples', '100000', '--workers', '0'], 2);
  assert.equal(here.signal, 'SIGINT', here.stderr);
  assert.equal(here.stdout, '');
  assert.ok(here.afterSignalMs < 5000, `ended ${here.afterSignalMs} ms after the signal`);
});

test('CLI: Ctrl-C while this thread computes between worker phases ends the process at once; on worker chains followed by a log Z estimate it keeps the chains (the estimate threw "cancelled before the first chain", exit 3, nothing printed)', async () => {
  const chains = ['infer', 'ising:100x100,beta=0.3', '--method', 'gibbs', '--samples', '100000', '--workers', '2', '--logz', 'chib', '--json'];
  const kept = await interruptAt(chains, 25, 'gibbs');
  assert.equal(kept.code, 0, kept.stderr);
  const out = JSON.parse(kept.stdout);
  assert.equal(out.partial, true);
  assert.ok(out.warnings.some((w: string) => /^log Z \(chib\): not estimated: the run was stopped before it/.test(w)), String(out.warnings));
  // During the estimate itself (this thread): the signal ended nothing and was lost; now the process ends.
  const estimating = await interruptAt(['infer', 'ising:60x60,beta=0.3', '--method', 'gibbs', '--samples', '2000', '--workers', '2', '--logz', 'chib', '--chains', '4'], 0, 'chib');
  assert.equal(estimating.signal, 'SIGINT', estimating.stderr);
  // The method on this thread before AIS on workers: it ran on to its end, then reported "partial".
  const before = await interruptAt(['infer', 'ising:64x64,beta=0.3', '--method', 'treegibbs', '--samples', '40000', '--logz', 'ais', '--workers', '2'], 2, 'treegibbs');
  assert.equal(before.signal, 'SIGINT', before.stderr);
  assert.ok(before.afterSignalMs < 5000, `ended ${before.afterSignalMs} ms after the signal`);
});
