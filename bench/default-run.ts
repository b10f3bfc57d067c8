// The default Gibbs run against the plain C scan, as a user gets it: `npm run bench:default`
// (BENCH_QUICK=1 or --quick: smoke; `npm run build:js` first).
//
// Issue 12's figure of merit: aggregate site updates/s of the default options (4 chains, 2000
// samples, 200 burn-in; f64 lanes, sequential scan, probability table 'auto') on this thread
// (runGibbs) and on min(chains, cores) workers (runParallel, what the CLI starts at this size),
// against the textbook sequential C scan (bench/native/gibbs.c, one chain, gcc -O3
// -march=x86-64-v2), on the 256² periodic Ising lattice, the 256² 3-state Potts lattice and a
// random sparse graph (bench:lanes' models). Both default runs come from the built package (dist/),
// as the CLI runs them: workers started from the sources would compile TypeScript first.
// Each default run is timed two ways: the rate it reports (siteUpdatesPerSecond: the chains'
// run, workers' start-up included, without the final estimates) and end to end (the call's wall
// time: planning, start-up, chains, folding, R̂/ESS). One round runs every measurement once;
// rounds are repeated (BENCH_REPS, default 7) and summarised by medians, and with --quiet each
// round starts once the 1-minute load average is below 1 (waiting at most 10 minutes), so that
// two workers have both cores. Writes bench/results/default-run.json.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { toCanonical } from '../bindings/core/canonical.ts';
import { GIBBS_STREAM } from '../bindings/samplers/gibbs.ts';
import { benchModels } from './models.ts';
import { buildNative, cpuModel, dist, QUICK, resultsPath, writeFormFile } from './common.ts';

const DIST = new URL('../dist/index.js', import.meta.url);
if (!existsSync(DIST)) throw new Error('bench:default runs the built package: npm run build:js first');
const pkg = await import(DIST.href);
const { loadEngine, runGibbs, runParallel } = pkg;

const SEED = 20240611;
const CHAINS = 4;
const REPS = Number(process.env.BENCH_REPS) || (QUICK ? 2 : 7);
const QUIET = process.argv.includes('--quiet');
const only = process.env.BENCH_MODELS;
const cores = availableParallelism();
const workers = Math.min(CHAINS, cores);
const opts = QUICK ? { seed: SEED, samples: 100, burnin: 10 } : { seed: SEED };
const sweeps = QUICK ? 110 : 2200;
const work = mkdtempSync(join(tmpdir(), 'relaxmrf-default-'));
const engine = await loadEngine();

const plainC = buildNative('gibbs.c', 'x86-64-v2', join(work, 'gibbs.out'));
if (!plainC) throw new Error('gcc failed for native/gibbs.c');

async function quietMoment(): Promise<number> {
  const t0 = performance.now();
  while (QUIET && loadavg()[0] >= 1 && performance.now() - t0 < 600e3) await new Promise((r) => setTimeout(r, 5000));
  return loadavg()[0];
}

const results = [];
for (const { name, model } of benchModels().filter((m) => !only || m.name.includes(only))) {
  const form = toCanonical(model);
  const file = join(work, 'model.bin');
  writeFormFile(form, file);
  const updates = CHAINS * sweeps * form.n;
  const plainSweeps = Math.max(2, Math.round((QUICK ? 2e6 : 2e7) / form.n));
  const rates: Record<string, number[]> = {};
  const push = (k: string, x: number) => (rates[k] ??= []).push(x);
  const loads: number[] = [];
  let same = true;
  for (let rep = 0; rep < REPS; rep++) {
    loads.push(await quietMoment());
    const c = spawnSync(plainC, ['time', file, String(SEED >>> 0), String(Math.floor(SEED / 2 ** 32)), '0', String(GIBBS_STREAM), String(plainSweeps), String(Math.max(1, plainSweeps >> 3))], { encoding: 'utf8' });
    if (c.status !== 0) throw new Error(`C reference failed: ${c.stderr}`);
    push('plain C', (plainSweeps * form.n) / Number(c.stdout.trim().split(/\s+/)[0]));
    let t0 = performance.now();
    const a = runGibbs(engine, model, opts);
    push('this thread, end to end', updates / ((performance.now() - t0) / 1000));
    push('this thread, reported', a.diagnostics.siteUpdatesPerSecond);
    t0 = performance.now();
    const b = await runParallel(model, { ...opts, workers });
    push(`${workers} workers, end to end`, updates / ((performance.now() - t0) / 1000));
    push(`${workers} workers, reported`, b.diagnostics.siteUpdatesPerSecond);
    same &&= a.marginals.every((m: number[], v: number) => m.every((x, k) => x === b.marginals[v][k]));
  }
  const d = Object.fromEntries(Object.entries(rates).map(([k, v]) => [k, dist(v)]));
  const plain = d['plain C'].median;
  const ratios = Object.fromEntries(Object.entries(d).filter(([k]) => k !== 'plain C').map(([k, v]) => [k, v.median / plain]));
  console.log(`\n${name}: ${REPS} rounds, load average at the rounds' starts ${loads.map((x) => x.toFixed(2)).join(' ')}; the same marginals on this thread and on ${workers} workers: ${same}`);
  for (const [k, v] of Object.entries(d)) console.log(`  ${k.padEnd(28)} ${(v.median / 1e6).toFixed(1).padStart(7)} M/s (${(v.min / 1e6).toFixed(1)}–${(v.max / 1e6).toFixed(1)})${k in ratios ? `  ${ratios[k].toFixed(2)}× plain C` : ''}`);
  results.push({ model: name, siteUpdates: updates, plainCSweeps: plainSweeps, identical: same, loadavgAtRounds: loads, medians: Object.fromEntries(Object.entries(d).map(([k, v]) => [k, v.median])), overPlainC: ratios, dists: d });
  if (!same) process.exitCode = 1;
}
writeFileSync(
  resultsPath('default-run.json'),
  JSON.stringify({ quick: QUICK, quiet: QUIET, date: new Date().toISOString(), machine: { cpu: cpuModel(), cores, loadavgAtEnd: loadavg() }, node: process.version, chains: CHAINS, workers, reps: REPS, options: opts, results }, null, 1) + '\n',
);
