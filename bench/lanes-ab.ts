// The Gibbs lanes kernels against native C of the same lanes algorithm, measured in alternation:
// `npm run bench:lanes-ab` (BENCH_QUICK=1 or --quick: smoke; BENCH_MODELS=word: only those models).
//
// bench:lanes times every configuration once per round, so on a noisy machine a kernel and its C
// reference can run seconds apart; here each configuration runs WASM, C, WASM, C, … (9 pairs by
// default, BENCH_REPS), each run ~2·10⁷ site updates timed by CPU time (the measuring thread's; the
// C program's own), and the ratio of the medians is reported. Configurations: f64 and f32,
// sequential and colored scans with 4 chains, and f64 sequential with 2 chains (what each of two
// workers runs with the default 4 chains), fields summed (the probability table off: bench:lanes
// times the table kernels); C at -march=x86-64-v2 (128-bit SIMD like WASM) and -march=native. The
// C program is bench/native/gibbs_lanes.c, which bench:lanes checks draws the same chains.
// Writes bench/results/lanes-ab.json.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { toCanonical } from '../bindings/core/canonical.ts';
import { GibbsLanes, coloredOrder, type Precision, type Scan } from '../bindings/samplers/gibbs-lanes.ts';
import { GIBBS_STREAM } from '../bindings/samplers/gibbs.ts';
import { benchModels } from './models.ts';
import { buildNative, cpuModel, dist, gccVersion, QUICK, resultsPath, threadSeconds, wasmFacts, writeFormFile } from './common.ts';

const SEED = 20240611;
const REPS = Number(process.env.BENCH_REPS) || (QUICK ? 3 : 9);
const WORK = QUICK ? 2e6 : 2e7;
const only = process.env.BENCH_MODELS;
const work = mkdtempSync(join(tmpdir(), 'relaxmrf-lanes-ab-'));

const exes: Record<string, string> = {};
for (const march of ['x86-64-v2', 'native']) {
  const exe = buildNative('gibbs_lanes.c', march, join(work, `lanes-${march}.out`));
  if (!exe) throw new Error(`gcc failed (${march})`);
  exes[march] = exe;
}
const engine = await loadEngine();
const CONFIGS: { precision: Precision; scan: Scan; chains: number }[] = [
  { precision: 'f64', scan: 'sequential', chains: 4 },
  { precision: 'f32', scan: 'sequential', chains: 4 },
  { precision: 'f64', scan: 'colored', chains: 4 },
  { precision: 'f32', scan: 'colored', chains: 4 },
  { precision: 'f64', scan: 'sequential', chains: 2 },
];

const results = [];
const load0 = loadavg();
for (const { name, model } of benchModels().filter((m) => !only || m.name.includes(only))) {
  const form = toCanonical(model);
  const file = join(work, 'model.bin'), orderFile = join(work, 'model.order');
  writeFormFile(form, file);
  const o = coloredOrder(form).order;
  writeFileSync(orderFile, Buffer.from(o.buffer, o.byteOffset, o.byteLength));
  console.log(`\n${name}: M site updates/s per CPU second, medians of ${REPS} alternations`);
  for (const cfg of CONFIGS) {
    const { precision, scan, chains: B } = cfg;
    const sweeps = Math.max(2, Math.round(WORK / (B * form.n)));
    const updates = B * sweeps * form.n;
    const L = new GibbsLanes(engine, model, B, GIBBS_STREAM, precision, scan, 'off');
    const batch = L.init(SEED, Array.from({ length: B }, (_, c) => c));
    const acc = L.accumulator(batch);
    L.step(batch, 2, acc);
    const rates: Record<string, number[]> = { wasm: [], 'x86-64-v2': [], native: [] };
    for (let r = 0; r < REPS; r++) {
      const t0 = threadSeconds();
      L.step(batch, sweeps, acc);
      rates.wasm.push(updates / (threadSeconds() - t0));
      for (const [march, exe] of Object.entries(exes)) {
        const args = ['time', file, String(SEED >>> 0), String(Math.floor(SEED / 2 ** 32)), String(B), String(GIBBS_STREAM), String(sweeps), String(Math.max(1, sweeps >> 3)), precision, scan === 'colored' ? orderFile : '-'];
        const out = spawnSync(exe, args, { encoding: 'utf8' });
        if (out.status !== 0) throw new Error(`C lanes failed: ${out.stderr}`);
        rates[march].push(updates / Number(out.stdout.trim().split(/\s+/)[1]));
      }
    }
    L.dispose();
    const m = Object.fromEntries(Object.entries(rates).map(([k, v]) => [k, dist(v).median]));
    const row = { model: name, ...cfg, sweeps, medians: m, overV2: m.wasm / m['x86-64-v2'], overNative: m.wasm / m.native, rates };
    results.push(row);
    console.log(`  ${`${precision} ${scan}, ${B} chains`.padEnd(26)} WASM ${(m.wasm / 1e6).toFixed(1).padStart(6)}  C v2 ${(m['x86-64-v2'] / 1e6).toFixed(1).padStart(6)}  C native ${(m.native / 1e6).toFixed(1).padStart(6)}  WASM / C v2 ${row.overV2.toFixed(2)}  / native ${row.overNative.toFixed(2)}`);
  }
}
writeFileSync(
  resultsPath(only ? `lanes-ab-${only.replace(/\W+/g, '_')}.json` : 'lanes-ab.json'),
  JSON.stringify({ quick: QUICK, date: new Date().toISOString(), machine: { cpu: cpuModel(), loadavgAtStart: load0, loadavgAtEnd: loadavg() }, node: process.version, gcc: gccVersion(), wasm: wasmFacts(), reps: REPS, workPerMeasurement: WORK, results }, null, 1) + '\n',
);
