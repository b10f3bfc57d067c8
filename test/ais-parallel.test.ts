// AIS and population annealing on worker threads (bindings/logz/ais-parallel.ts): the estimate,
// weights, schedule, diagnostics and warnings of runAIS bit for bit for 1, 2 and 3 workers —
// populations with the adaptive schedule (its pilot runs made once, on this thread), independent
// runs in f32 lanes, single-site transitions on the one-chain kernels — through inferAsync too;
// the default worker count by the break-even rule; cancellation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { runAIS, type AISOptions } from '../bindings/logz/logz.ts';
import { autoAISWorkers, runAISParallel } from '../bindings/logz/ais-parallel.ts';
import { inferAsync } from '../bindings/parallel/parallel.ts';
import { infer } from '../bindings/infer.ts';
import type { Model } from '../bindings/core/model.ts';
import { isingLattice } from '../bindings/core/builders.ts';
import { glassyGrid, mulberry32, randomModel } from './helpers.ts';

const engine = await loadEngine();

async function assertSameAsRunAIS(model: Model, opts: AISOptions, workerCounts: number[]): Promise<void> {
  const one = runAIS(engine, model, opts);
  for (const workers of workerCounts) {
    const par = await runAISParallel(engine, model, { ...opts, workers });
    assert.equal(par.diagnostics.workers, Math.min(workers, opts.population && opts.population > 1 ? opts.runs! / opts.population : workers));
    assert.equal(par.logZ, one.logZ, `workers ${workers}`);
    assert.equal(par.logZStdErr, one.logZStdErr);
    assert.deepEqual(Array.from(par.logWeights), Array.from(one.logWeights));
    assert.deepEqual(Array.from(par.schedule), Array.from(one.schedule));
    assert.deepEqual({ ...par.diagnostics, workers: 0 }, { ...one.diagnostics, workers: 0 });
    assert.deepEqual(par.warnings, one.warnings);
  }
}

test('population annealing on 1, 2 and 3 workers equals runAIS bit for bit (adaptive schedule, tree, f64 lanes)', async () => {
  await assertSameAsRunAIS(glassyGrid(3, 2), { seed: 5, runs: 160, population: 32, steps: 80 }, [1, 2, 3]);
});

test('independent runs in f32 lanes, and single-site Gibbs on the one-chain kernels, on workers equal runAIS', async () => {
  await assertSameAsRunAIS(glassyGrid(4, 1.5), { seed: 2, runs: 22, steps: 60, precision: 'f32', schedule: 'linear' }, [2, 3]);
  await assertSameAsRunAIS(randomModel(mulberry32(9), 10, { cards: [2, 3], density: 0.5 }), { seed: 3, runs: 96, population: 32, steps: 40, transition: 'gibbs' }, [2]);
});

test('inferAsync: log Z by population annealing on workers equals infer', async () => {
  const model = glassyGrid(7, 1);
  const opts = { method: 'mf' as const, logz: 'ais' as const, ais: { runs: 96, population: 32, steps: 50 } };
  const one = infer(engine, model, opts);
  const par = await inferAsync(engine, model, { ...opts, workers: 2 });
  assert.equal(par.diagnostics['logz.workers'], 2);
  assert.equal(par.logZ, one.logZ);
  assert.equal(par.logZStdErr, one.logZStdErr);
  const strip = (d: Record<string, unknown>) => Object.fromEntries(Object.entries(d).filter(([k]) => !/seconds|Seconds|logz\.workers/.test(k)));
  assert.deepEqual(strip(par.diagnostics), strip(one.diagnostics));
  assert.deepEqual(par.marginals, one.marginals);
  assert.deepEqual(par.warnings, one.warnings);
});

test('autoAISWorkers: workers only when the run pays for their start-up and splits', () => {
  const grid = isingLattice({ shape: [20, 20], beta: 0.4 }); // 400 bits, as UAI Grids_15
  const pa = { runs: 4096, population: 512, steps: 1000 };
  assert.equal(autoAISWorkers(grid, pa, 2), 2);
  assert.equal(autoAISWorkers(grid, pa, 1), 1);
  assert.equal(autoAISWorkers(grid, { ...pa, steps: 20 }, 2), 1); // 3·10⁷ updates
  assert.equal(autoAISWorkers(grid, { runs: 512, population: 512, steps: 1000 }, 2), 1); // one population
  assert.equal(autoAISWorkers(grid, { ...pa, transition: 'relaxed' }, 2), 1);
  // 3 populations on 2 workers save a third of the time: the start-up needs 1.5·10⁸ updates.
  assert.equal(autoAISWorkers(grid, { runs: 3 * 512, population: 512, steps: 240 }, 2), 1); // 1.47·10⁸
  assert.equal(autoAISWorkers(grid, { runs: 3 * 512, population: 512, steps: 250 }, 2), 2); // 1.54·10⁸
});

test('an aborted parallel AIS run rejects when no population completed', async () => {
  const ac = new AbortController();
  ac.abort();
  await assert.rejects(runAISParallel(engine, glassyGrid(3, 2), { runs: 64, population: 32, steps: 40, workers: 2, signal: ac.signal }), /cancelled/);
});

test('CLI: --logz ais --workers 2 gives the estimate of the run on this thread; --ais-precision f32', async () => {
  const { spawnSync } = await import('node:child_process');
  const bin = new URL('../bin/relaxmrf.js', import.meta.url).pathname;
  const run = (...extra: string[]) => {
    const r = spawnSync(process.execPath, [bin, 'infer', 'ising:6x6,beta=0.5', '--method', 'mf', '--logz', 'ais', '--ais-runs', '64', '--ais-population', '16', '--ais-steps', '40', '--seed', '3', '--json', ...extra], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  const one = run('--workers', '0'), two = run('--workers', '2');
  assert.equal(two.diagnostics['logz.workers'], 2);
  assert.equal(one.diagnostics['logz.workers'], undefined);
  assert.equal(two.logZ, one.logZ);
  assert.equal(two.logZStdErr, one.logZStdErr);
  const f32 = run('--ais-precision', 'f32', '--workers', '2');
  assert.equal(f32.diagnostics['logz.precision'], 'f32');
  assert.ok(Math.abs(f32.logZ - one.logZ) < 4 * Math.hypot(f32.logZStdErr, one.logZStdErr)); // other chains, same target
});

test('log Z estimators report progress on every path (AIS runs, populations, lanes, factor graphs, relaxed and HMC transitions, workers; zhang, mirror and chib chains), ending at the total, and estimate the same bits as without', async () => {
  const { estimateLogZ } = await import('../bindings/logz/logz.ts');
  const { randomFactorGraph } = await import('./helpers.ts');
  const pairwise = randomModel(mulberry32(3), 8, { density: 0.4 });
  // A model whose canonical form is not all free bits (3 states): the one-chain kernels.
  const ternary = randomModel(mulberry32(4), 6, { cards: [3, 3, 3, 3, 3, 3], density: 0.5 });
  const higher = randomFactorGraph(mulberry32(5), 6, { cards: [2, 2, 3, 2, 2, 2], maxArity: 3 });
  const cases: [string, Model, Record<string, unknown>, string, number][] = [
    ['ais lanes', pairwise, { estimator: 'ais', runs: 12, steps: 30 }, 'ais', 12],
    ['ais one by one', pairwise, { estimator: 'ais', runs: 12, steps: 30, lanes: false }, 'ais', 12],
    ['ais collapsed', pairwise, { estimator: 'ais', runs: 6, steps: 30, collapse: true }, 'ais', 6],
    ['populations lanes', pairwise, { estimator: 'ais', runs: 12, population: 4, steps: 30 }, 'ais', 12],
    ['populations one-chain', ternary, { estimator: 'ais', runs: 12, population: 4, steps: 30 }, 'ais', 12],
    ['factor graph runs', higher, { estimator: 'ais', runs: 6, steps: 30 }, 'ais', 6],
    ['factor graph populations', higher, { estimator: 'ais', runs: 8, population: 4, steps: 30 }, 'ais', 8],
    ['relaxed', pairwise, { estimator: 'ais', runs: 5, steps: 30, transition: 'relaxed' }, 'ais', 5],
    ['hmc', pairwise, { estimator: 'ais', runs: 5, steps: 30, transition: 'hmc' }, 'ais', 5],
    ['zhang', pairwise, { estimator: 'zhang', chains: 3, samples: 50, burnin: 20 }, 'zhang', 3],
    ['mirror', pairwise, { estimator: 'mirror', chains: 3, samples: 50, burnin: 20 }, 'mirror', 3],
    ['chib', pairwise, { estimator: 'chib', chains: 3, samples: 50, burnin: 20 }, 'chib', 3],
  ];
  for (const [name, model, opts, phase, total] of cases) {
    const seen: { phase: string; done: number; total: number }[] = [];
    const r = estimateLogZ(engine, model, { ...opts, onProgress: (p: { phase: string; done: number; total: number }) => seen.push({ ...p }) } as unknown as Parameters<typeof estimateLogZ>[2]);
    const plain = estimateLogZ(engine, model, opts as unknown as Parameters<typeof estimateLogZ>[2]);
    assert.equal(r.logZ, plain.logZ, name);
    assert.ok(seen.length > 0, `${name}: no progress`);
    assert.ok(seen.every((p, i) => p.phase === phase && p.total === total && p.done > (i > 0 ? seen[i - 1].done : 0)), `${name}: ${JSON.stringify(seen)}`);
    assert.equal(seen.at(-1)!.done, total, name);
  }
  // On workers: as pieces come back, summing to the runs.
  const seen: number[] = [];
  const opts: AISOptions = { runs: 48, population: 8, steps: 40 };
  const two = await runAISParallel(engine, pairwise, { ...opts, workers: 2, onProgress: (p) => seen.push(p.done) });
  assert.equal(two.logZ, runAIS(engine, pairwise, opts).logZ);
  assert.deepEqual(seen, [8, 16, 24, 32, 40, 48]);
  // Through infer: the estimator's phase follows the method's.
  const phases = new Set<string>();
  infer(engine, pairwise, { method: 'gibbs', samples: 200, chains: 2, logz: 'ais', ais: { runs: 8, steps: 20 }, onProgress: (p) => phases.add(p.phase) });
  assert.deepEqual([...phases], ['gibbs', 'ais']);
});

test('an estimate cut short makes the whole result partial and says so (a queued mf run interrupted mid-AIS reported partial: false and no warning)', async () => {
  const { aisPieces, runAISPiece, foldAIS } = await import('../bindings/logz/ais-split.ts');
  const { withEstimate } = await import('../bindings/infer.ts');
  const model = randomModel(mulberry32(12), 8, { density: 0.4 });
  const opts: AISOptions = { runs: 16, steps: 40, schedule: 'linear' };
  const pieces = aisPieces(opts, 4);
  const done = pieces.map((p, i) => (i < 2 ? runAISPiece(engine, model, opts, p, null) : null));
  const est = foldAIS(model, opts, done, 0);
  assert.equal(est.diagnostics.partial, true);
  assert.ok(est.warnings!.some((w) => /cancelled: fewer runs than asked/.test(w)), JSON.stringify(est.warnings));
  const marginals = infer(engine, model, { method: 'mf' });
  assert.equal(marginals.partial, false);
  const r = withEstimate(marginals, { estimator: 'ais', ...opts }, est);
  assert.equal(r.partial, true);
  assert.ok(r.warnings!.some((w) => /^log Z \(ais\): cancelled/.test(w)));
  const whole = foldAIS(model, opts, pieces.map((p) => runAISPiece(engine, model, opts, p, null)), 0);
  assert.equal(withEstimate(marginals, { estimator: 'ais', ...opts }, whole).partial, false);
});

test('inferAsync: a method without chains, its AIS on one worker or not split, runs here (--method mf --logz ais --workers 1 was refused by runParallel)', async () => {
  const { randomFactorGraph } = await import('./helpers.ts');
  const model = randomModel(mulberry32(13), 8, { density: 0.4 });
  const higher = randomFactorGraph(mulberry32(14), 6, { maxArity: 3 });
  for (const [m, workers] of [[model, 1], [higher, 2], [higher, 1]] as const) {
    for (const method of ['mf', 'bp', 'treegibbs'] as const) {
      if (method === 'treegibbs' && !m.isPairwise) continue;
      // Chain counts for the method that reads them (AIS counts runs; mf and bp refuse them).
      const opts = { method, logz: 'ais' as const, ais: { runs: 8, steps: 30 }, ...(method === 'treegibbs' ? { samples: 100, chains: 2 } : {}) };
      const r = await inferAsync(engine, m, { ...opts, workers });
      assert.equal(r.logZ, infer(engine, m, opts).logZ, `${method}, ${workers} worker(s), ${m.isPairwise ? 'pairwise' : 'arity 3'}`);
    }
  }
});
