// AIS and population-annealing particles in SIMD lanes: `npm run bench:particles` (BENCH_QUICK=1 or
// --quick: smoke). On UAI Grids_15 (20×20 glassy grid, log Z from its .PR file):
//   * particle updates per second (site updates of all particles / wall time): one population of
//     512 particles through 300 temperatures, tree-block and single-site Gibbs transitions, with the
//     one-chain kernels (lanes: false) and in lanes, interleaved repetitions, medians; and the plain-JS
//     reference of the free-bit tree sweep (bench/js/treegibbs.ts), chains one after another;
//   * time to error: population annealing (8 populations of 512, adaptive schedule, tree
//     transitions) as recorded before ("today": one chain at a time, 1000 temperatures, this thread)
//     and candidates — f64 / f32 lanes, 1000 / 500 temperatures, populations on 2 workers
//     (runAISParallel) — timed as run (wall and CPU); single-site Gibbs; independent AIS runs (64
//     runs, 2000 temperatures), one chain and lanes on workers;
//   * errors: each candidate's error from 8 × 8 populations (the sd of the populations' log Ẑ, the
//     64-population estimate against the published log Z, the RMS over 8 disjoint runs of 8;
//     `-- --errors` runs only these, into particles-errors.json: they do not depend on the load).
// f32: the opt-in single-precision lanes (four particles a vector), its estimates beside the f64 ones.
// The machine may be shared: ratios are taken within the run, and each figure is also given per
// second of the process's CPU time (one thread: what an unshared core would take). Writes bench/results/particles.json.

import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg, availableParallelism } from 'node:os';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { readUAI, readPR } from '../bindings/io/formats.ts';
import { toCanonical } from '../bindings/core/canonical.ts';
import { treePartition } from '../bindings/samplers/treeblocks.ts';
import { runAIS, logMeanExp, type AISOptions } from '../bindings/logz/logz.ts';
import { runAISParallel, type AISParallelOptions } from '../bindings/logz/ais-parallel.ts';
import { TreeGibbsJS } from './js/treegibbs.ts';
import { PhiloxJS } from './js/gibbs.ts';
import { dataDir } from '../test/helpers.ts';
import { cpuModel, dist, QUICK, resultsPath, wasmFacts } from './common.ts';

const REPS = QUICK ? 1 : 3;
// --errors: only the errors (long, and independent of the machine's load), into particles-errors.json.
const ERRORS = process.argv.includes('--errors');
const QUIET = process.argv.includes('--quiet');
const dir = `${dataDir()}/uai2014`;
const model = readUAI(readFileSync(`${dir}/Grids_15.uai`, 'utf8'), 'Grids_15.uai');
const exact = readPR(readFileSync(`${dir}/Grids_15.uai.PR`, 'utf8')) * Math.LN10;
const engine = await loadEngine();
const load0 = loadavg();

// Throughput (not with --errors).
const P = QUICK ? 64 : 512, T = QUICK ? 50 : 300;
const rates: Record<string, number[]> = {};
const cpuRates: Record<string, number[]> = {};
for (let rep = 0; rep < (ERRORS || QUIET ? 0 : REPS); rep++) {
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

// Time to error. "Today": population annealing as the README recorded it before the lanes and the
// workers (tree, one chain at a time, 8 populations of 512, 1000 adaptive temperatures, this thread).
// Each candidate is timed once as the user runs it (8 populations, seed 1), wall and CPU (the
// process's, workers included). Its error is judged on 8 × REPLICATES populations (seed 1; the timed
// run's 8 are the first): each population's log Ẑ_p is an independent estimate, so their sd gives
// the error of an 8-population estimate (sd/√8, uncertain by ~1/√(2·64) ≈ 9 % rather than the ~25 %
// of one run's SE), the 64-population estimate's distance from the published log Z checks its bias,
// and the RMS over the 8 disjoint 8-population runs is the plain (noisier) error. The one-chain
// kernels' populations are the f64 lanes' bit for bit (test/particles-lanes.test.ts), so today's
// error comes from the f64 lanes' populations.
const REPLICATES = QUICK ? 2 : 8;
// --quiet: only today's configuration and the candidates at 1000 temperatures on 2 workers, each
// run started once the 1-minute load average is below QUIET_LOAD (waiting at most QUIET_WAIT_S;
// the load at each start is recorded), into particles-quiet.json: wall times that mean something
// on a shared machine.
const QUIET_LOAD = 1.0, QUIET_WAIT_S = 600;
async function quietMoment(): Promise<number> {
  const t0 = performance.now();
  while (loadavg()[0] >= QUIET_LOAD && performance.now() - t0 < QUIET_WAIT_S * 1000) await new Promise((r) => setTimeout(r, 5000));
  return loadavg()[0];
}
async function timed(label: string, opts: AISParallelOptions) {
  const c0 = process.cpuUsage();
  const l0 = loadavg()[0];
  const r = await runAISParallel(engine, model, { seed: 1, ...opts });
  const cpu = process.cpuUsage(c0);
  const out = { label, options: opts, logZ: r.logZ, error: r.logZ - exact, stdErr: r.logZStdErr, seconds: r.seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, workers: r.diagnostics.workers, lanes: r.diagnostics.lanes, loadavg: [l0, loadavg()[0]] };
  console.log(`${label.padEnd(44)} error ${out.error.toFixed(4)} ± ${out.stdErr.toFixed(4)}  ${out.seconds.toFixed(1)} s (CPU ${out.cpuSeconds.toFixed(1)} s, ${out.workers} workers, load ${l0.toFixed(1)})`);
  return out;
}
function errorOf(lz: Float64Array, pops: number) {
  const n = lz.length;
  let mean = 0;
  for (const x of lz) mean += x / n;
  let ss = 0;
  for (const x of lz) ss += (x - mean) ** 2;
  const sd = Math.sqrt(ss / (n - 1));
  // logMeanExp's value + log Z_0 + offset = logZ: shift each group by the run's (logZ − lme of all).
  const groups: number[] = [];
  for (let g = 0; g + pops <= n; g += pops) groups.push(logMeanExp(lz.subarray(g, g + pops)).value);
  const all = logMeanExp(lz);
  return { sd, sdStdErr: sd / Math.sqrt(2 * (n - 1)), all, groups };
}
async function errors(label: string, opts: AISParallelOptions, pops: number, P: number) {
  const r = await runAISParallel(engine, model, { seed: 1, ...opts, runs: pops * P * REPLICATES, population: P });
  const e = errorOf(r.logWeights, pops);
  const shift = r.logZ - e.all.value;
  const groupErrors = e.groups.map((g) => g + shift - exact);
  const rms = Math.sqrt(groupErrors.reduce((a, x) => a + x * x, 0) / groupErrors.length);
  const bias = r.logZ - exact;
  const out = { label, options: opts, populations: r.logWeights.length, sdLogZp: e.sd, sdLogZpStdErr: e.sdStdErr, errorAll: bias, stdErrAll: r.logZStdErr, groupErrors, rmsGroups: rms, predictedRMSE: Math.sqrt((e.sd * e.sd) / pops + bias * bias), seconds: r.seconds };
  console.log(`${label.padEnd(44)} sd(log Ẑ_p) ${e.sd.toFixed(3)} ± ${e.sdStdErr.toFixed(3)}; ${out.populations} populations: error ${bias.toFixed(4)} ± ${r.logZStdErr.toFixed(4)}; RMS of ${groupErrors.length} runs of ${pops}: ${rms.toFixed(4)}; predicted RMSE ${out.predictedRMSE.toFixed(4)}`);
  return out;
}
const PA = QUICK ? { P: 64, pops: 4, steps: 200 } : { P: 512, pops: 8, steps: 1000 };
const pa: AISOptions = { runs: PA.pops * PA.P, population: PA.P, steps: PA.steps };
const half = PA.steps / 2;
const candidates: [string, AISParallelOptions][] = [
  ['tree, lanes f64, 1000 temperatures, 2 workers', { ...pa, workers: 2 }],
  ['tree, lanes f32, 1000 temperatures, 2 workers', { ...pa, precision: 'f32', workers: 2 }],
  ['tree, lanes f64, 500 temperatures, 2 workers', { ...pa, steps: half, workers: 2 }],
  ['tree, lanes f32, 500 temperatures, 2 workers', { ...pa, steps: half, precision: 'f32', workers: 2 }],
];
const quietRows = [];
if (QUIET) {
  for (const [label, opts] of [['today: tree, one chain, 1000 temperatures', { ...pa, lanes: false, workers: 0 }], ...candidates.slice(0, 2)] as [string, AISParallelOptions][]) {
    await quietMoment();
    quietRows.push(await timed(label, opts));
  }
}
const timeToError = ERRORS || QUIET ? [] : [
  await timed('today: tree, one chain, 1000 temperatures', { ...pa, lanes: false, workers: 0 }),
  await timed('tree, lanes f64, 1000 temperatures, this thread', { ...pa, workers: 0 }),
  ...(await (async () => {
    const rows = [];
    for (const [label, opts] of candidates) rows.push(await timed(label, opts));
    return rows;
  })()),
  await timed('single-site Gibbs, lanes f64, 1000 temperatures, 2 workers', { ...pa, transition: 'gibbs', workers: 2 }),
  await timed('AIS, tree, one chain, 64 runs × 2000 temperatures', { runs: QUICK ? 16 : 64, steps: QUICK ? 300 : 2000, lanes: false, workers: 0 }),
  await timed('AIS, tree, lanes, 64 runs × 2000 temperatures, 2 workers', { runs: QUICK ? 16 : 64, steps: QUICK ? 300 : 2000, workers: 2 }),
];
const errorRows = [];
if (ERRORS) for (const [label, opts] of candidates) errorRows.push(await errors(label.replace(/, 2 workers$/, ''), opts, PA.pops, PA.P));

const out = {
  quick: QUICK,
  date: new Date().toISOString(),
  machine: { cpu: cpuModel(), cores: availableParallelism(), loadavgBefore: load0, loadavgAfter: loadavg(), node: process.version },
  wasm: wasmFacts(),
  model: { name: 'UAI Grids_15', variables: model.n, exactLogZ: exact },
  ...(ERRORS
    ? { errors: { replicates: REPLICATES, populationsPerRun: PA.pops, rows: errorRows } }
    : QUIET
    ? { quiet: { loadBelow: QUIET_LOAD, rows: quietRows } }
    : { throughput: { particles: P, temperatures: T, reps: REPS, particleUpdatesPerSecond: throughput, particleUpdatesPerCPUSecond: throughputCPU }, timeToError }),
};
const path = resultsPath(ERRORS ? 'particles-errors.json' : QUIET ? 'particles-quiet.json' : 'particles.json');
writeFileSync(path, JSON.stringify(out, null, 2) + '\n');
console.log(`wrote ${path}`);
