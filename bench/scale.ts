// How the cost of a model grows with its size: `npm run bench:scale` (BENCH_QUICK=1: up to 256²).
//
// 1. Periodic Ising lattices L² (β = 0.4) from 64² to 2048²: model build (isingLattice), the
//    binary pairwise form (toCanonical), binding into engine memory (BoundModel) and one Gibbs
//    sweep, medians of repeated runs, in ns per variable (and per factor), to show linear growth.
// 2. The 1024² CLI run of issue 10 (gibbs, 2 chains × 110 sweeps, --json to a file) under
//    /usr/bin/time -v: wall time and peak RSS.
// 3. The 4096² lattice (16.7 M variables): build, form, bind and a sweep in a child process with
//    the engine's memory; CLI Gibbs (1 chain, 5 sweeps) and FFT-DHMC, each either run or refused
//    up front (exit status, message, time, peak RSS).
// 4. With BENCH_BASELINE=DIR (a checkout of an older commit with its release.wasm built), the same
//    1024² build and CLI run of that checkout, for the before/after comparison.
// Writes bench/results/scale.json. The machine is shared: treat single figures as noisy.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isingLattice } from '../bindings/core/builders.ts';
import { toCanonical } from '../bindings/core/canonical.ts';
import { BoundModel } from '../bindings/core/bound.ts';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { GibbsSampler } from '../bindings/samplers/gibbs.ts';
import { cpuModel, dist, QUICK, resultsPath, wasmFacts, type Dist } from './common.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..');
const SIDES = QUICK ? [64, 128, 256] : [64, 128, 256, 512, 1024, 2048];
const BETA = 0.4;

const ms = (t0: number) => performance.now() - t0;

interface Row {
  side: number;
  variables: number;
  factors: number;
  buildMs: Dist;
  canonicalMs: Dist;
  bindMs: Dist;
  sweepMs: Dist;
  /** Medians per variable (ns): the linear-growth check. */
  nsPerVariable: { build: number; canonical: number; bind: number; sweep: number };
  nsPerFactor: { build: number; canonical: number };
}

async function lattices(): Promise<Row[]> {
  const engine = await loadEngine();
  const rows: Row[] = [];
  // Warm-up: the builders and the form are JavaScript, compiled as they run.
  for (let r = 0; r < 20; r++) new BoundModel(engine, toCanonical(isingLattice({ shape: [128, 128], beta: BETA, periodic: true }))).dispose();
  for (const L of SIDES) {
    const reps = L >= 1024 ? 3 : L >= 512 ? 5 : 9;
    const build: number[] = [], canon: number[] = [], bind: number[] = [], sweep: number[] = [];
    let n = 0, F = 0;
    for (let r = 0; r < reps; r++) {
      let t = performance.now();
      const model = isingLattice({ shape: [L, L], beta: BETA, periodic: true });
      build.push(ms(t));
      t = performance.now();
      const form = toCanonical(model);
      canon.push(ms(t));
      t = performance.now();
      const bound = new BoundModel(engine, form);
      bind.push(ms(t));
      bound.dispose();
      n = model.n;
      F = model.nFactors;
      // One sweep (median over a few, after a warm-up sweep) on the sampler Gibbs runs.
      if (r === 0) {
        const s = new GibbsSampler(engine, model);
        try {
          const st = s.init(1, 0);
          s.step(st, 1);
          for (let k = 0; k < reps; k++) {
            const t1 = performance.now();
            s.step(st, 1);
            sweep.push(ms(t1));
          }
        } finally {
          s.dispose();
        }
      }
    }
    const row: Row = {
      side: L, variables: n, factors: F,
      buildMs: dist(build), canonicalMs: dist(canon), bindMs: dist(bind), sweepMs: dist(sweep),
      nsPerVariable: { build: 0, canonical: 0, bind: 0, sweep: 0 },
      nsPerFactor: { build: 0, canonical: 0 },
    };
    row.nsPerVariable = { build: (row.buildMs.median * 1e6) / n, canonical: (row.canonicalMs.median * 1e6) / n, bind: (row.bindMs.median * 1e6) / n, sweep: (row.sweepMs.median * 1e6) / n };
    row.nsPerFactor = { build: (row.buildMs.median * 1e6) / F, canonical: (row.canonicalMs.median * 1e6) / F };
    rows.push(row);
    const f = (d: Dist) => d.median.toFixed(1).padStart(8);
    console.log(`${`${L}²`.padEnd(6)} n=${String(n).padEnd(9)} build ${f(row.buildMs)} ms  canonical ${f(row.canonicalMs)} ms  bind ${f(row.bindMs)} ms  sweep ${f(row.sweepMs)} ms  ` +
      `(ns/var: ${row.nsPerVariable.build.toFixed(0)} / ${row.nsPerVariable.canonical.toFixed(0)} / ${row.nsPerVariable.bind.toFixed(0)} / ${row.nsPerVariable.sweep.toFixed(1)})`);
  }
  return rows;
}

interface TimedRun {
  command: string;
  exitCode: number | null;
  seconds: number | null;
  maxRssMiB: number | null;
  stderr: string;
  outputBytes?: number;
}

/** Runs a command under /usr/bin/time -v (when present) and reads wall time and peak RSS. */
function timed(cwd: string, args: string[], outFile?: string): TimedRun {
  const haveTime = existsSync('/usr/bin/time');
  const cmd = haveTime ? '/usr/bin/time' : process.execPath;
  const full = haveTime ? ['-v', process.execPath, ...args] : args;
  const t0 = performance.now();
  const shell = outFile ? spawnSync('sh', ['-c', `"$0" "$@" > '${outFile}'`, cmd, ...full], { cwd, encoding: 'utf8', maxBuffer: 1 << 26 }) : spawnSync(cmd, full, { cwd, encoding: 'utf8', maxBuffer: 1 << 26 });
  const wall = ms(t0) / 1000;
  const err = shell.stderr ?? '';
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(err);
  const el = /Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)/.exec(err);
  const seconds = el ? Number(el[1] ?? 0) * 3600 + Number(el[2]) * 60 + Number(el[3]) : wall;
  const own = err.split('\n').filter((l) => l.startsWith('relaxmrf:')).join('\n');
  return { command: `node ${args.join(' ')}`, exitCode: shell.status, seconds, maxRssMiB: rss ? Number(rss[1]) / 1024 : null, stderr: own };
}

const CLI_1024 = ['infer', 'ising:1024x1024,beta=0.4,periodic', '--method', 'gibbs', '--samples', '100', '--burnin', '10', '--chains', '2', '--json'];

function cliRuns(root: string, tmp: string) {
  const out = join(tmp, 'out.json');
  const cli1024 = timed(root, ['bin/relaxmrf.js', ...CLI_1024], out);
  console.log(`CLI 1024² gibbs --json: ${cli1024.seconds?.toFixed(2)} s, peak RSS ${cli1024.maxRssMiB?.toFixed(0)} MiB, exit ${cli1024.exitCode}`);
  return cli1024;
}

/** 4096² in a child process: build, form, bind and two sweeps, with the engine's memory. */
function hugeInProcess() {
  const script = `
    import { isingLattice } from './bindings/core/builders.ts';
    import { toCanonical } from './bindings/core/canonical.ts';
    import { loadEngine } from './bindings/core/wasm-node.ts';
    import { GibbsSampler } from './bindings/samplers/gibbs.ts';
    const T = () => performance.now();
    let t = T();
    const model = isingLattice({ shape: [4096, 4096], beta: 0.4, periodic: true });
    const buildMs = T() - t; t = T();
    const canonicalMs = (toCanonical(model), T() - t);
    const engine = await loadEngine();
    t = T();
    const s = new GibbsSampler(engine, model);
    const formAndBindMs = T() - t;
    const st = s.init(1, 0), acc = s.accumulator();
    s.step(st, 1, acc);
    t = T();
    s.step(st, 1, acc);
    const sweepMs = T() - t;
    console.log(JSON.stringify({ variables: model.n, factors: model.nFactors, buildMs, canonicalMs, formAndBindMs, sweepMs, engineMemoryMiB: engine.memoryBytes / 2 ** 20, engineInUseMiB: engine.bytesInUse / 2 ** 20, rssMiB: process.memoryUsage().rss / 2 ** 20 }));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 20 });
  try {
    const j = JSON.parse(r.stdout.trim().split('\n').pop()!);
    console.log(`4096² in process: build ${j.buildMs.toFixed(0)} ms, canonical ${j.canonicalMs.toFixed(0)} ms, form + bind (Gibbs sampler) ${j.formAndBindMs.toFixed(0)} ms, sweep ${j.sweepMs.toFixed(0)} ms; engine memory ${j.engineMemoryMiB.toFixed(0)} MiB (${j.engineInUseMiB.toFixed(0)} MiB allocated), RSS ${j.rssMiB.toFixed(0)} MiB`);
    return j;
  } catch {
    console.log(`4096² in process failed: ${r.stderr.slice(0, 300)}`);
    return { error: r.stderr.slice(0, 300) };
  }
}

function huge(tmp: string) {
  const inProcess = hugeInProcess();
  const out = join(tmp, 'huge.json');
  const gibbs = timed(ROOT, ['bin/relaxmrf.js', 'infer', 'ising:4096x4096,beta=0.4,periodic', '--method', 'gibbs', '--samples', '4', '--burnin', '1', '--chains', '1', '--json'], out);
  console.log(`CLI 4096² gibbs (1 chain × 5 sweeps): exit ${gibbs.exitCode}, ${gibbs.seconds?.toFixed(1)} s, peak RSS ${gibbs.maxRssMiB?.toFixed(0)} MiB ${gibbs.stderr}`);
  const dhmc = timed(ROOT, ['bin/relaxmrf.js', 'infer', 'ising:4096x4096,beta=0.4,periodic', '--method', 'dhmc', '--samples', '2', '--burnin', '2', '--chains', '1', '--json'], out);
  console.log(`CLI 4096² dhmc (FFT): exit ${dhmc.exitCode}, ${dhmc.seconds?.toFixed(1)} s, peak RSS ${dhmc.maxRssMiB?.toFixed(0)} MiB ${dhmc.stderr}`);
  rmSync(out, { force: true });
  return { inProcess, gibbs, dhmc };
}

/** The 1024² build in another checkout (its own isingLattice), median of 3, in a child process. */
function baselineBuild(dir: string): number[] | null {
  const script = `import { isingLattice } from '${join(dir, existsSync(join(dir, 'bindings/core/builders.ts')) ? 'bindings/core/builders.ts' : 'bindings/builders.ts')}';
    const t = []; for (let r = 0; r < 3; r++) { const t0 = performance.now(); isingLattice({ shape: [1024, 1024], beta: 0.4, periodic: true }); t.push(performance.now() - t0); }
    console.log(JSON.stringify(t));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: dir, encoding: 'utf8' });
  try {
    return JSON.parse(r.stdout.trim().split('\n').pop()!);
  } catch {
    console.log(`baseline build failed: ${r.stderr.slice(0, 300)}`);
    return null;
  }
}

const tmp = mkdtempSync(join(tmpdir(), 'relaxmrf-scale-'));
try {
  console.log(`relaxmrf scale bench${QUICK ? ' (quick)' : ''}: periodic Ising lattices, β = ${BETA} — shared machine, timings are noisy`);
  const rows = await lattices();
  const cli1024 = QUICK ? null : cliRuns(ROOT, tmp);
  const big = QUICK ? null : huge(tmp);
  const baseDir = process.env.BENCH_BASELINE;
  let baseline = null;
  if (baseDir && !QUICK) {
    const build = baselineBuild(baseDir);
    const cli = cliRuns(baseDir, tmp);
    const commit = spawnSync('git', ['-C', baseDir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
    baseline = { dir: baseDir, commit, build1024Ms: build ? dist(build) : null, cli1024: cli };
    console.log(`baseline ${commit}: 1024² build ${build ? dist(build).median.toFixed(0) : '?'} ms; CLI ${cli.seconds?.toFixed(2)} s, peak RSS ${cli.maxRssMiB?.toFixed(0)} MiB`);
  }
  const result = {
    bench: 'scale',
    quick: QUICK,
    date: new Date().toISOString(),
    machine: { cpu: cpuModel(), node: process.version, note: 'shared 2-core machine: other jobs ran at the same time; figures are noisy' },
    wasm: wasmFacts(),
    lattices: rows,
    cli1024,
    targets: { buildAndBind1024Ms: 500, cli1024Seconds: 10, cli1024RssMiB: 1024 },
    lattice4096: big,
    baseline,
  };
  const path = resultsPath('scale.json');
  writeFileSync(path, JSON.stringify(result, null, 2) + '\n');
  console.log(`wrote ${path}`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
