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
