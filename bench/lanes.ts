// Gibbs throughput with chains in SIMD lanes: `npm run bench:lanes` (BENCH_QUICK=1 or --quick: smoke).
//
// Aggregate site updates per second (all chains together) on a 256×256 periodic Ising lattice, a
// 256×256 periodic 3-state Potts lattice and a random sparse graph (65 536 binary variables, mean
// degree 4), for
//   * the default options end to end (4 chains, 2000 samples, 200 burn-in; f64 lanes, sequential
//     scan): runGibbs / infer on one thread, and runParallel on min(chains, cores) workers, which
//     is what the CLI runs at this size (autoWorkers);
//   * the lanes kernel alone (4 chains per call): f64 / f32, sequential / colored scan, the fields
//     summed; f64 sequential reading the probability table (forced on; binary models); and f64
//     sequential with 2 chains, both ways (one vector: what each of two workers runs by default);
//   * native C of the same lanes algorithm (bench/native/gibbs_lanes.c) at -march=x86-64-v2
//     (128-bit SIMD, like WASM) and -march=native;
//   * the single-chain WASM kernel (both ways), the plain sequential C scan (bench/native/gibbs.c, the textbook
//     loop, -O3 -march=x86-64-v2) and plain JS (bench/js/gibbs.ts), one chain each.
//   * tree-block Gibbs (method 'treegibbs') on the binary models: one chain (TreeGibbsSampler) and
//     the f64 lanes kernel with 4 and 2 chains (TreeGibbsLanes: the same chains bit for bit), with
//     the marginal accumulator, and the default run end to end (runTreeGibbs, lanes and lanes: false).
// Before timing, the C lanes reference is checked to run the same chains as the WASM lanes kernel
// (states, accumulators and change counts identical after a few sweeps, every configuration).
// f32 precision's effect: marginals of f32 and f64 runs on a 64×64 lattice compared in units of
// their standard errors. Repetitions are interleaved (every configuration once per round) and
// summarised by medians; the machine may be shared, so ratios are taken within the run. Every
// single-thread figure is also given per second of CPU time ("(cpu)": the measuring thread's, or
// the C program's), which other jobs' time slices do not stretch.
// Writes bench/results/lanes.json (BENCH_MODELS=word: only the models whose name contains it, and
// bench/results/lanes-word.json).

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir, availableParallelism } from 'node:os';
import { join } from 'node:path';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { isingLattice } from '../bindings/core/builders.ts';
import type { Model } from '../bindings/core/model.ts';
import { benchModels } from './models.ts';
import { toCanonical, type CanonicalForm } from '../bindings/core/canonical.ts';
import { GibbsSampler, runGibbs, GIBBS_STREAM } from '../bindings/samplers/gibbs.ts';
import { GibbsLanes, coloredOrder, type Precision, type Scan } from '../bindings/samplers/gibbs-lanes.ts';
import { autoWorkers } from '../bindings/parallel/parallel.ts';
import { TreeGibbsLanes, TreeGibbsSampler, runTreeGibbs } from '../bindings/samplers/treegibbs.ts';
import { lanesApply } from '../bindings/samplers/gibbs-lanes.ts';
import { GibbsJS, PhiloxJS } from './js/gibbs.ts';
import { buildNative, cpuModel, dist, gccVersion, QUICK, resultsPath, threadSeconds, wasmFacts, writeFormFile, type Dist } from './common.ts';

// The workers' default run: from the built package when there is one, as the CLI runs it (workers
// started from the sources compile TypeScript first; bench:default times both default runs that way).
const DIST = new URL('../dist/index.js', import.meta.url);
const { runParallel } = existsSync(DIST) ? await import(DIST.href) : await import('../bindings/parallel/parallel.ts');
const SEED = 20240611;
const CHAINS = 4;
const REPS = Number(process.env.BENCH_REPS) || (QUICK ? 3 : 5);
/** Site updates per timed measurement (each configuration runs about this much work). */
const WORK = QUICK ? 2e6 : 4e7;
const work = mkdtempSync(join(tmpdir(), 'relaxmrf-lanes-'));

const models = benchModels();

// ---------------------------------------------------------------------------------------------
// Native builds

const gcc = gccVersion();
const plainC = buildNative('gibbs.c', 'x86-64-v2', join(work, 'gibbs-v2.out'));
const lanesC = { 'x86-64-v2': buildNative('gibbs_lanes.c', 'x86-64-v2', join(work, 'lanes-v2.out')), native: buildNative('gibbs_lanes.c', 'native', join(work, 'lanes-native.out')) };

function files(form: CanonicalForm, name: string) {
  const model = join(work, `${name}.bin`);
  writeFormFile(form, model);
  const order = join(work, `${name}.order`);
  const o = coloredOrder(form).order;
  writeFileSync(order, Buffer.from(o.buffer, o.byteOffset, o.byteLength));
  return { model, order };
}

function runLanesC(exe: string, f: { model: string; order: string }, mode: 'verify' | 'time', sweeps: number, last: string, precision: string, scan: Scan, chains = CHAINS): string {
  const args = [mode, f.model, String(SEED >>> 0), String(Math.floor(SEED / 2 ** 32)), String(chains), String(GIBBS_STREAM), String(sweeps), last, precision, scan === 'colored' ? f.order : '-'];
  const r = spawnSync(exe, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`C lanes reference failed: ${r.stderr || r.error}`);
  return r.stdout;
}

// ---------------------------------------------------------------------------------------------

const engine = await loadEngine();
type Config = { precision: Precision; scan: Scan; table?: boolean };
// The direct kernels (fields summed) and the probability-table kernel (f64 sequential, forced on:
// 'auto' leaves it off where the table passes the cache budget, e.g. the random graph's).
const DIRECT: Config[] = [
  { precision: 'f64', scan: 'sequential' },
  { precision: 'f32', scan: 'sequential' },
  { precision: 'f64', scan: 'colored' },
  { precision: 'f32', scan: 'colored' },
];
const TABLE: Config = { precision: 'f64', scan: 'sequential', table: true };
const configsFor = (form: CanonicalForm): Config[] => (form.oneHot.some((x) => x !== 0) ? DIRECT : [...DIRECT, TABLE]);
const CONFIGS = [...DIRECT, TABLE];
const tag = (c: Config) => `${c.precision} ${c.scan}${c.table ? ' table' : ''}`;
const lanesFor = (model: Model, B: number, c: Config) => new GibbsLanes(engine, model, B, GIBBS_STREAM, c.precision, c.scan, c.table ? 'on' : 'off');
const cPrecision = (c: Config) => (c.table ? 'f64table' : c.precision);

/** WASM lanes vs C lanes after a few sweeps from the same seed: identical states, sums and counts. */
function verify(model: Model, form: CanonicalForm, f: { model: string; order: string }) {
  const out: Record<string, boolean> = {};
  if (!lanesC['x86-64-v2']) return out;
  const pairs: Config[] = configsFor(form).some((c) => c.table) ? [DIRECT[0], TABLE] : [DIRECT[0]];
  for (const cfg of [...configsFor(form).map((c) => ({ ...c, chains: CHAINS })), ...pairs.map((c) => ({ ...c, chains: 2 }))]) {
    const sweeps = 5, B = cfg.chains;
    const L = lanesFor(model, B, cfg);
    const batch = L.init(SEED, Array.from({ length: B }, (_, c) => c));
    const acc = L.accumulator(batch);
    const rates = L.step(batch, sweeps, acc);
    const k = engine.kernels;
    const s = new Uint8Array(k.memory.buffer, batch.ptr + k.gibbsLanesStateOffset(B), form.nBits * B).slice();
    const a = L.engine.kernels.memory.buffer.slice(acc, acc + 8 * form.nBits * B);
    L.dispose();
    const file = join(work, 'verify.out');
    runLanesC(lanesC['x86-64-v2'], f, 'verify', sweeps, file, cPrecision(cfg), cfg.scan, B);
    const buf = readFileSync(file);
    const changed = new Float64Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + 8 * B));
    const cs = buf.subarray(8 * B, 8 * B + form.nBits * B);
    const ca = buf.subarray(8 * B + form.nBits * B);
    out[B === CHAINS ? tag(cfg) : `${tag(cfg)}, ${B} chains`] = Buffer.compare(Buffer.from(s), cs) === 0 && Buffer.compare(Buffer.from(a), ca) === 0 && [...changed].every((x, c) => x / (sweeps * form.n) === rates[c]);
  }
  return out;
}

/** One measurement: site updates per second of wall clock and of CPU time (this thread's; the C program's). */
type Timer = () => [number, number];

/** Rates of `updates` site updates timed by `run` on both clocks. */
function timed(updates: number, run: () => void): [number, number] {
  const t0 = performance.now(), c0 = threadSeconds();
  run();
  const c = threadSeconds() - c0;
  return [updates / ((performance.now() - t0) / 1000), updates / c];
}

/** Rates from a C program's "wall … cpu" seconds (`cpuAt`: the CPU field's index). */
function cRates(updates: number, stdout: string, cpuAt: number): [number, number] {
  const f = stdout.trim().split(/\s+/).map(Number);
  return [updates / f[0], updates / f[cpuAt]];
}

/** Default options (quick mode: fewer samples). */
function defaultOpts() {
  return QUICK ? { seed: SEED, samples: 100, burnin: 10 } : { seed: SEED };
} // runs one measurement, returns site updates per second

function timers(model: Model, form: CanonicalForm, f: { model: string; order: string }): Record<string, Timer> {
  const n = form.n;
  const sweeps = Math.max(2, Math.round(WORK / (CHAINS * n)));
  const t: Record<string, Timer> = {};
  for (const cfg of configsFor(form)) {
    const L = lanesFor(model, CHAINS, cfg);
    const batch = L.init(SEED, Array.from({ length: CHAINS }, (_, c) => c));
    const acc = L.accumulator(batch);
    L.step(batch, 2, acc);
    t[`wasm lanes ${tag(cfg)}`] = () => timed(CHAINS * sweeps * n, () => L.step(batch, sweeps, acc));
    for (const [march, exe] of Object.entries(lanesC)) {
      if (exe) t[`C lanes ${tag(cfg)} ${march}`] = () => cRates(CHAINS * sweeps * n, runLanesC(exe, f, 'time', sweeps, String(Math.max(1, sweeps >> 3)), cPrecision(cfg), cfg.scan), 1);
    }
  }
  // Two chains, one f64x2 vector: what each of two workers runs with the default four chains.
  for (const cfg of configsFor(form).some((c) => c.table) ? [DIRECT[0], TABLE] : [DIRECT[0]]) {
    const L = lanesFor(model, 2, cfg);
    const batch = L.init(SEED, [0, 1]);
    const acc = L.accumulator(batch);
    L.step(batch, 2, acc);
    t[`wasm lanes ${tag(cfg)}, 2 chains`] = () => timed(2 * sweeps * n, () => L.step(batch, sweeps, acc));
    for (const [march, exe] of Object.entries(lanesC)) {
      if (exe) t[`C lanes ${tag(cfg)}, 2 chains ${march}`] = () => cRates(2 * sweeps * n, runLanesC(exe, f, 'time', sweeps, String(Math.max(1, sweeps >> 3)), cPrecision(cfg), 'sequential', 2), 1);
    }
  }
  const oneSweeps = Math.max(2, Math.round(WORK / n / 2));
  for (const table of ['off', 'on'] as const) {
    if (table === 'on' && !configsFor(form).includes(TABLE)) continue;
    const one = new GibbsSampler(engine, model, table);
    const st = one.init(SEED, 0), oneAcc = one.accumulator();
    one.step(st, 2, oneAcc);
    t[`wasm single chain${table === 'on' ? ' table' : ''}`] = () => timed(oneSweeps * n, () => one.step(st, oneSweeps, oneAcc));
  }
  if (plainC) {
    t['C plain sequential x86-64-v2'] = () => {
      const r = spawnSync(plainC, ['time', f.model, String(SEED >>> 0), String(Math.floor(SEED / 2 ** 32)), '0', String(GIBBS_STREAM), String(oneSweeps), String(Math.max(1, oneSweeps >> 3))], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`C reference failed: ${r.stderr}`);
      return cRates(oneSweeps * n, r.stdout, 2);
    };
  }
  const jsSweeps = Math.max(1, Math.round(oneSweeps / 8));
  const g = new GibbsJS(form);
  const r = new PhiloxJS(SEED >>> 0, 0, 0, GIBBS_STREAM);
  g.init(r);
  const jsAcc = new Float64Array(form.nBits);
  t['js single chain'] = () => timed(jsSweeps * n, () => g.sweeps(r, jsSweeps, jsAcc));
  // Default options, end to end as a user sees them (burn-in and batches included): infer's
  // runGibbs on this thread; the workers run below (async).
  t['default run (runGibbs, 1 thread)'] = () => {
    let wall = 0;
    const [, cpu] = timed(1, () => {
      const r = runGibbs(engine, model, defaultOpts());
      wall = r.diagnostics.siteUpdatesPerSecond as number;
      defaultTable.thread = r.diagnostics.probabilityTable as boolean;
    });
    const updates = CHAINS * (QUICK ? 110 : 2200) * form.n; // sweeps of the default options; site = variable, as runGibbs counts
    return [wall, updates * cpu];
  };
  if (lanesApply(form)) Object.assign(t, treeTimers(model, form));
  return t;
}

/** Tree-block Gibbs: one chain against chains in lanes (site updates of all chains together). */
function treeTimers(model: Model, form: CanonicalForm): Record<string, Timer> {
  const n = form.n;
  const t: Record<string, Timer> = {};
  // A tree-block sweep costs a few single-site sweeps: a quarter of the work per measurement.
  const sweeps = Math.max(2, Math.round(WORK / 4 / (CHAINS * n)));
  for (const chains of [CHAINS, 2]) {
    const L = new TreeGibbsLanes(engine, model, chains);
    const batch = L.init(SEED, Array.from({ length: chains }, (_, c) => c));
    const acc = L.accumulator(batch);
    L.step(batch, 2, acc);
    t[`tree lanes f64, ${chains} chains`] = () => timed(chains * sweeps * n, () => L.step(batch, sweeps, acc));
  }
  const oneSweeps = Math.max(2, Math.round(WORK / 4 / n / 2));
  const one = new TreeGibbsSampler(engine, model);
  const st = one.init(SEED, 0), oneAcc = one.accumulator();
  one.step(st, 2, oneAcc);
  t['tree single chain'] = () => timed(oneSweeps * n, () => one.step(st, oneSweeps, oneAcc));
  for (const lanes of [true, false]) {
    t[`tree default run (runTreeGibbs, 1 thread${lanes ? '' : ', lanes: false'})`] = () => {
      let wall = 0;
      const [, cpu] = timed(1, () => void (wall = runTreeGibbs(engine, model, { ...defaultOpts(), lanes }).diagnostics.siteUpdatesPerSecond as number));
      return [wall, CHAINS * (QUICK ? 110 : 2200) * n * cpu];
    };
  }
  return t;
}

/**
 * f32 vs f64 on a 64×64 lattice: marginals of independent runs (different seeds) compared in
 * standard errors of their difference (z ~ N(0, 1) per site when f32 adds no visible bias), and of
 * runs from the same seed (f32 chains draw the same words as the f64 chains, so they follow them
 * until a decision differs — the z are then far below 1).
 */
function f32Effect() {
  const model = isingLattice({ shape: [64, 64], beta: 0.4, h: 0.05, periodic: true });
  const opts = { chains: 8, samples: QUICK ? 2000 : 20000, burnin: 1000 };
  const compare = (seedF64: number, seedF32: number) => {
    const a = runGibbs(engine, model, { ...opts, seed: seedF64, precision: 'f64' });
    const b = runGibbs(engine, model, { ...opts, seed: seedF32, precision: 'f32' });
    let maxZ = 0, sumZ2 = 0, sumDiff = 0;
    for (let v = 0; v < model.n; v++) {
      const d = b.marginals[v][1] - a.marginals[v][1];
      const z = d / Math.hypot(a.marginalStdErr![v][1], b.marginalStdErr![v][1]);
      maxZ = Math.max(maxZ, Math.abs(z));
      sumZ2 += z * z;
      sumDiff += d;
    }
    return { seedF64, seedF32, maxAbsZ: maxZ, meanZ2: sumZ2 / model.n, meanDifference: sumDiff / model.n, maxStdErrF64: a.diagnostics.maxStdErr, maxStdErrF32: b.diagnostics.maxStdErr };
  };
  return { model: 'ising 64x64 periodic, beta 0.4, h 0.05', ...opts, independent: compare(5, 6), sameSeed: compare(5, 5) };
}

/** Whether the default runs read a probability table ('auto'), on this thread and on the workers. */
const defaultTable: { thread?: boolean; workers?: boolean } = {};
const loadavgAtStart = loadavg();
const results: Record<string, unknown>[] = [];
const only = process.env.BENCH_MODELS;
for (const { name, model } of models.filter((m) => !only || m.name.includes(only))) {
  const form = toCanonical(model);
  const f = files(form, name.replace(/\W+/g, '_'));
  const agreement = verify(model, form, f);
  const t = timers(model, form, f);
  const samples: Record<string, number[]> = {};
  // The CLI's default for these options: min(chains, cores) workers when the run is long enough.
  const cliWorkers = autoWorkers('gibbs', model, defaultOpts(), availableParallelism());
  const workersKey = `default run (runParallel, ${Math.min(CHAINS, availableParallelism())} workers)`;
  for (let rep = 0; rep < REPS; rep++) {
    for (const [k, fn] of Object.entries(t)) {
      const [wall, cpu] = fn();
      (samples[k] ??= []).push(wall);
      (samples[`${k} (cpu)`] ??= []).push(cpu);
    }
    const r = await runParallel(model, { ...defaultOpts(), workers: availableParallelism() });
    (samples[workersKey] ??= []).push(r.diagnostics.siteUpdatesPerSecond as number);
    defaultTable.workers = r.diagnostics.probabilityTable as boolean;
  }
  const d: Record<string, Dist> = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, dist(v)]));
  const med = (k: string) => d[k]?.median ?? NaN;
  const cpu = (k: string) => med(`${k} (cpu)`);
  const plain = med('C plain sequential x86-64-v2');
  const plainCpu = cpu('C plain sequential x86-64-v2');
  const ratios = {
    defaultOverPlainC: med('default run (runGibbs, 1 thread)') / plain,
    workersDefaultOverPlainC: med(workersKey) / plain,
    'defaultOverPlainC (cpu)': cpu('default run (runGibbs, 1 thread)') / plainCpu,
    'wasmLanes f64 sequential, 2 chains / C lanes x86-64-v2 (cpu)': cpu('wasm lanes f64 sequential, 2 chains') / cpu('C lanes f64 sequential, 2 chains x86-64-v2'),
    'wasmLanes f64 sequential, 2 chains / C lanes native (cpu)': cpu('wasm lanes f64 sequential, 2 chains') / cpu('C lanes f64 sequential, 2 chains native'),
    'wasmLanes f64 sequential, 2 chains / plain C (cpu)': cpu('wasm lanes f64 sequential, 2 chains') / plainCpu,
    'wasmLanes f64 sequential table, 2 chains / C lanes x86-64-v2 (cpu)': cpu('wasm lanes f64 sequential table, 2 chains') / cpu('C lanes f64 sequential table, 2 chains x86-64-v2'),
    'wasmLanes f64 sequential table, 2 chains / C lanes native (cpu)': cpu('wasm lanes f64 sequential table, 2 chains') / cpu('C lanes f64 sequential table, 2 chains native'),
    'wasmLanes f64 sequential table, 2 chains / plain C (cpu)': cpu('wasm lanes f64 sequential table, 2 chains') / plainCpu,
    'wasm single chain table / plain C (cpu)': cpu('wasm single chain table') / plainCpu,
    ...Object.fromEntries(CONFIGS.flatMap((c) => [
      [`wasmLanes ${tag(c)} / C lanes x86-64-v2 (cpu)`, cpu(`wasm lanes ${tag(c)}`) / cpu(`C lanes ${tag(c)} x86-64-v2`)],
      [`wasmLanes ${tag(c)} / C lanes native (cpu)`, cpu(`wasm lanes ${tag(c)}`) / cpu(`C lanes ${tag(c)} native`)],
      [`wasmLanes ${tag(c)} / plain C (cpu)`, cpu(`wasm lanes ${tag(c)}`) / plainCpu],
    ])),
    ...Object.fromEntries(CONFIGS.flatMap((c) => [
      [`wasmLanes ${tag(c)} / C lanes x86-64-v2`, med(`wasm lanes ${tag(c)}`) / med(`C lanes ${tag(c)} x86-64-v2`)],
      [`wasmLanes ${tag(c)} / C lanes native`, med(`wasm lanes ${tag(c)}`) / med(`C lanes ${tag(c)} native`)],
      [`wasmLanes ${tag(c)} / plain C`, med(`wasm lanes ${tag(c)}`) / plain],
    ])),
    wasmSingleOverPlainC: med('wasm single chain') / plain,
    wasmSingleOverJs: med('wasm single chain') / med('js single chain'),
    wasmLanesF64OverJs: med('wasm lanes f64 sequential') / med('js single chain'),
    ...(lanesApply(form)
      ? {
          'tree lanes f64, 4 chains / tree single chain (cpu)': cpu(`tree lanes f64, ${CHAINS} chains`) / cpu('tree single chain'),
          'tree lanes f64, 2 chains / tree single chain (cpu)': cpu('tree lanes f64, 2 chains') / cpu('tree single chain'),
          'tree default run, lanes / lanes: false (cpu)': cpu('tree default run (runTreeGibbs, 1 thread)') / cpu('tree default run (runTreeGibbs, 1 thread, lanes: false)'),
          'tree lanes f64, 4 chains / tree single chain': med(`tree lanes f64, ${CHAINS} chains`) / med('tree single chain'),
        }
      : {}),
  };
  results.push({ model: name, defaultProbabilityTable: { ...defaultTable }, cliDefaultWorkers: cliWorkers, n: form.n, nBits: form.nBits, nnz: form.col.length, colors: coloredOrder(form).colors, agreement, medians: Object.fromEntries(Object.entries(d).map(([k, v]) => [k, v.median])), ratios, dists: d });
  console.log(`\n${name} (${form.n} variables, ${form.nBits} bits; default runs read a probability table: ${JSON.stringify(defaultTable)}; C lanes = WASM lanes: ${JSON.stringify(agreement)})`);
  for (const [k, v] of Object.entries(d)) console.log(`  ${k.padEnd(44)} ${(v.median / 1e6).toFixed(1).padStart(8)} M/s  (${(v.min / 1e6).toFixed(1)}–${(v.max / 1e6).toFixed(1)})`);
  for (const [k, v] of Object.entries(ratios)) console.log(`  ${k.padEnd(52)} ${v.toFixed(2)}`);
  if (Object.values(agreement).some((ok) => !ok)) process.exitCode = 1;
}
const effect = f32Effect();
console.log('\nf32 vs f64 marginals:', JSON.stringify(effect));
const out = {
  quick: QUICK,
  date: new Date().toISOString(),
  machine: { cpu: cpuModel(), cores: availableParallelism(), loadavgAtStart, loadavgAtEnd: loadavg(), note: 'shared machine: other jobs may have run at the same time; ratios are within one run, medians of interleaved repetitions; "(cpu)" rates divide by CPU time (the measuring thread\'s for WASM and JS, the C program\'s own), which time slicing by other jobs does not stretch' },
  gcc,
  node: process.version,
  wasm: wasmFacts(),
  chains: CHAINS,
  reps: REPS,
  workPerMeasurement: WORK,
  results,
  f32Effect: effect,
};
writeFileSync(resultsPath(only ? `lanes-${only.replace(/\W+/g, '_')}.json` : 'lanes.json'), JSON.stringify(out, null, 1) + '\n');
