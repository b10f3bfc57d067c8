// AIS and population-annealing particles in SIMD lanes: `npm run bench:particles` (BENCH_QUICK=1 or
// --quick: smoke). On UAI Grids_15 (20×20 glassy grid, log Z from its .PR file):
//   * particle updates per second (site updates of all particles / wall time): one population of
//     512 particles through 300 temperatures, tree-block and single-site Gibbs transitions, with the
//     one-chain kernels (lanes: false) and in lanes, interleaved repetitions, medians; and the plain-JS
//     reference of the free-bit tree sweep (bench/js/treegibbs.ts), chains one after another;
//   * time to error: population annealing as the README and the tests run it (8 populations of 512,
//     1000 temperatures, adaptive schedule, tree transitions), one-chain and lanes — the same
//     estimate bit for bit, so only the time differs — lanes with half the temperatures, and lanes
//     with single-site Gibbs transitions;
//     independent AIS runs (64 runs, 2000 temperatures), one-chain and lanes.
// f32: the opt-in single-precision lanes (four particles a vector), its estimates beside the f64 ones.
// The machine may be shared: ratios are taken within the run, and each figure is also given per
// second of the process's CPU time (one thread: what an unshared core would take). Writes bench/results/particles.json.

import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg, availableParallelism } from 'node:os';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { readUAI, readPR } from '../bindings/io/formats.ts';
import { toCanonical } from '../bindings/core/canonical.ts';
import { treePartition } from '../bindings/samplers/treeblocks.ts';
import { runAIS, type AISOptions } from '../bindings/logz/logz.ts';
import { TreeGibbsJS } from './js/treegibbs.ts';
import { PhiloxJS } from './js/gibbs.ts';
import { dataDir } from '../test/helpers.ts';
import { cpuModel, dist, QUICK, resultsPath, wasmFacts } from './common.ts';

const REPS = QUICK ? 1 : 3;
const dir = `${dataDir()}/uai2014`;
const model = readUAI(readFileSync(`${dir}/Grids_15.uai`, 'utf8'), 'Grids_15.uai');
const exact = readPR(readFileSync(`${dir}/Grids_15.uai.PR`, 'utf8')) * Math.LN10;
const engine = await loadEngine();
const load0 = loadavg();

// Throughput.
const P = QUICK ? 64 : 512, T = QUICK ? 50 : 300;
const rates: Record<string, number[]> = {};
const cpuRates: Record<string, number[]> = {};
for (let rep = 0; rep < REPS; rep++) {
  for (const transition of ['tree', 'gibbs'] as const) {
    for (const [lanes, precision] of [[false, 'f64'], [true, 'f64'], [true, 'f32']] as const) {
      const c0 = process.cpuUsage();
      const r = runAIS(engine, model, { seed: 1 + rep, runs: P, population: P, steps: T, schedule: 'linear', transition, lanes, precision });
      const cpu = process.cpuUsage(c0);
      const key = `${transition}, ${lanes ? `lanes ${precision}` : 'one chain'}`;
      (rates[key] ??= []).push((r.diagnostics.siteUpdates as number) / r.seconds);
      (cpuRates[key] ??= []).push((r.diagnostics.siteUpdates as number) / ((cpu.user + cpu.system) / 1e6));
    }
  }
  // Plain JS: the tree sweep at β = 1, 16 chains one after another.
  const form = toCanonical(model);
  const js = new TreeGibbsJS(form, treePartition(form));
  const sweeps = QUICK ? 10 : 100, chains = 16;
  const t0 = performance.now();
  for (let c = 0; c < chains; c++) {
    const r = new PhiloxJS(1, 0, c, 0x4149);
    js.init(r);
    js.sweeps(r, sweeps);
  }
  (rates['tree, plain JS'] ??= []).push((chains * sweeps * form.n) / ((performance.now() - t0) / 1000));
}
const throughput = Object.fromEntries(Object.entries(rates).map(([k, v]) => [k, dist(v)]));
const throughputCPU = Object.fromEntries(Object.entries(cpuRates).map(([k, v]) => [k, dist(v)]));
for (const [k, d] of Object.entries(throughput)) console.log(`${k.padEnd(24)} ${(d.median / 1e6).toFixed(2)} M particle updates/s (per CPU second: ${throughputCPU[k] ? (throughputCPU[k].median / 1e6).toFixed(2) : '—'})`);

// Time to error.
function estimate(label: string, opts: AISOptions) {
  const c0 = process.cpuUsage();
  const r = runAIS(engine, model, { seed: 1, ...opts });
  const cpu = process.cpuUsage(c0);
  const out = { label, options: opts, logZ: r.logZ, error: r.logZ - exact, stdErr: r.logZStdErr, seconds: r.seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, lanes: r.diagnostics.lanes };
  console.log(`${label.padEnd(40)} error ${out.error.toFixed(4)} ± ${out.stdErr.toFixed(4)}  ${out.seconds.toFixed(1)} s (CPU ${out.cpuSeconds.toFixed(1)} s)`);
  return out;
}
const pa: AISOptions = QUICK ? { runs: 256, population: 64, steps: 200 } : { runs: 4096, population: 512, steps: 1000 };
const ais: AISOptions = QUICK ? { runs: 16, steps: 300 } : { runs: 64, steps: 2000 };
const timeToError = [
  estimate('PA, tree, one chain', { ...pa, lanes: false }),
  estimate('PA, tree, lanes', { ...pa, lanes: true }),
  estimate('PA, tree, lanes, half the temperatures', { ...pa, steps: (pa.steps as number) / 2 }),
  estimate('PA, tree, lanes f32', { ...pa, precision: 'f32' }),
  estimate('PA, tree, lanes f32, half the temperatures', { ...pa, steps: (pa.steps as number) / 2, precision: 'f32' }),
  estimate('PA, Gibbs, lanes', { ...pa, transition: 'gibbs' }),
  estimate('AIS, tree, one chain', { ...ais, lanes: false }),
  estimate('AIS, tree, lanes', { ...ais, lanes: true }),
];

const out = {
  quick: QUICK,
  date: new Date().toISOString(),
  machine: { cpu: cpuModel(), cores: availableParallelism(), loadavgBefore: load0, loadavgAfter: loadavg(), node: process.version },
  wasm: wasmFacts(),
  model: { name: 'UAI Grids_15', variables: model.n, exactLogZ: exact },
  throughput: { particles: P, temperatures: T, reps: REPS, particleUpdatesPerSecond: throughput, particleUpdatesPerCPUSecond: throughputCPU },
  timeToError,
};
const path = resultsPath('particles.json');
writeFileSync(path, JSON.stringify(out, null, 2) + '\n');
console.log(`wrote ${path}`);
