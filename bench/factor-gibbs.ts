// Sequential Gibbs on the factor graph (assembly/samplers/factorgibbs.ts): site updates per second
// on UAI 2014 instances with factors of arity 3 and 4, and on pairwise lattices beside the
// canonical-form kernel (assembly/samplers/gibbs.ts) that method 'gibbs' runs there.
// `npm run bench:fgibbs` (full) or BENCH_QUICK=1 / --quick. Writes bench/results/factor-gibbs.json.
//
// The same algorithm in WASM (FactorGibbsSampler), native C (bench/native/factorgibbs.c, gcc -O3 at
// -march=x86-64-v2 — 128-bit SIMD, like WASM — and -march=native) and plain JS
// (bench/js/factor-gibbs.ts). Before timing, the bench checks they agree: from one seed, after a few
// sweeps, initial and final configurations and change counts identical, accumulators to 1e-12.
// Medians over interleaved repetitions; every measurement includes the Rao–Blackwellised accumulation.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { loadModelFile } from '../bindings/io/files.ts';
import { isingLattice, latticeBonds, pottsLattice } from '../bindings/core/builders.ts';
import type { Model } from '../bindings/core/model.ts';
import { FactorGibbsSampler } from '../bindings/samplers/factor-gibbs.ts';
import { GibbsSampler } from '../bindings/samplers/gibbs.ts';
import { seedWords } from '../bindings/core/seed.ts';
import { FactorGibbsJS } from './js/factor-gibbs.ts';
import { PhiloxJS } from './js/gibbs.ts';
import { dataDir, mulberry32 } from '../test/helpers.ts';
import { cpuModel, dist, QUICK, resultsPath, wasmFacts } from './common.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const SEED = 20240611;
/** FACTOR_GIBBS_STREAM of bindings/samplers/factor-gibbs.ts (the verification's init check confirms it). */
const TAG = 0x4647;
const REPS = QUICK ? 3 : 7;
const TARGET_SECONDS = QUICK ? 0.03 : 0.3;
const VERIFY_SWEEPS = 20;

const engine = await loadEngine();
const work = mkdtempSync(join(tmpdir(), 'relaxmrf-fgbench-'));

async function uai(name: string): Promise<Model> {
  return (await loadModelFile(join(dataDir(), 'uai2014-more', `${name}.uai`))).model;
}

function randomIsing(L: number, seed: number): Model {
  const rnd = mulberry32(seed);
  const J = new Map<string, number>();
  for (const [i, j] of latticeBonds([L, L], false)) J.set(`${i},${j}`, 2 * rnd() - 1);
  return isingLattice({ shape: [L, L], J: (i, j) => J.get(`${i},${j}`)!, h: Array.from({ length: L * L }, () => rnd() - 0.5) });
}

const models: { name: string; model: Model; pairwise: boolean }[] = [
  { name: 'Alchemy_11 (n 440, arity ≤ 3, K 2)', model: await uai('Alchemy_11'), pairwise: false },
  { name: 'CSP_12 (n 67, arity ≤ 3, K ≤ 4)', model: await uai('CSP_12'), pairwise: false },
  { name: 'linkage_11 (n 1077, arity ≤ 4, K ≤ 3)', model: await uai('linkage_11'), pairwise: false },
  { name: 'Ising 64×64, random J, h', model: randomIsing(64, 7), pairwise: true },
  { name: 'Potts q=3 32×32, J=0.5', model: pottsLattice({ shape: [32, 32], q: 3, J: 0.5 }), pairwise: true },
];

// ---------------------------------------------------------------------------------------------
// Native builds

const natives: { label: string; exe: string }[] = [];
let nativeNote = '';
{
  const probe = spawnSync('gcc', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) nativeNote = 'gcc not found: the native C reference is skipped';
  else {
    for (const march of ['x86-64-v2', 'native']) {
      const exe = join(HERE, 'native', `factorgibbs-${march}.out`);
      const flags = ['-O3', `-march=${march}`, '-ffp-contract=off', '-std=c11', '-D_POSIX_C_SOURCE=199309L'];
      const cc = spawnSync('gcc', [...flags, '-o', exe, join(HERE, 'native', 'factorgibbs.c'), '-lm'], { encoding: 'utf8' });
      if (cc.status !== 0) throw new Error(`gcc failed:\n${cc.stderr}`);
      natives.push({ label: `C ${march}`, exe });
    }
    nativeNote = `gcc -O3 -ffp-contract=off, -march=x86-64-v2 and -march=native (${probe.stdout.split('\n')[0]})`;
  }
}

function modelFile(m: Model, i: number): string {
  const f = join(work, `model${i}.bin`);
  const header = new Int32Array([m.n, m.nFactors, m.scopeVars.length, m.tables.length]);
  writeFileSync(f, Buffer.concat([Buffer.from('RMRFFG01'), ...[header, m.card, m.scopeStart, m.scopeVars, m.tableStart, m.tables].map((a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength))]));
  return f;
}

const [LO, HI] = seedWords(SEED);
const args = (file: string) => [file, String(LO), String(HI), '0', String(TAG)];

// ---------------------------------------------------------------------------------------------
// Verification and timing

interface Run { changed: number; init: Int32Array; x: Int32Array; acc: Float64Array }

function wasmRun(m: Model, sweeps: number): Run {
  const s = new FactorGibbsSampler(engine, m);
  try {
    const st = s.init(SEED, 0);
    const init = s.configuration(st);
    const acc = s.accumulator();
    const info = s.step(st, sweeps, acc);
    return { changed: Math.round(info.changeRate * sweeps * m.n), init, x: s.configuration(st), acc: s.readAndClear(acc) };
  } finally {
    s.dispose();
  }
}

function jsRun(m: Model, sweeps: number): Run {
  const g = new FactorGibbsJS(m);
  const r = new PhiloxJS(LO, HI, 0, TAG);
  g.init(r);
  const init = g.x.slice();
  const changed = g.sweeps(r, sweeps, true);
  return { changed, init, x: g.x.slice(), acc: g.acc.slice() };
}

function nativeRun(exe: string, file: string, m: Model, sweeps: number): Run {
  const out = join(work, 'verify.out');
  const r = spawnSync(exe, ['verify', ...args(file), String(sweeps), out], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`C reference failed: ${r.stderr}`);
  const b = readFileSync(out), n = m.n;
  const i32 = (at: number) => new Int32Array(b.buffer.slice(b.byteOffset + at, b.byteOffset + at + 4 * n));
  return { changed: b.readDoubleLE(0), init: i32(8), x: i32(8 + 4 * n), acc: new Float64Array(b.buffer.slice(b.byteOffset + 8 + 8 * n, b.byteOffset + b.length)) };
}

function agree(a: Run, b: Run): { identical: boolean; accMaxRelDiff: number } {
  let d = 0;
  for (let i = 0; i < a.acc.length; i++) d = Math.max(d, Math.abs(a.acc[i] - b.acc[i]) / Math.max(1e-300, Math.abs(a.acc[i])));
  const same = (p: Int32Array, q: Int32Array) => p.length === q.length && p.every((x, i) => x === q[i]);
  return { identical: a.changed === b.changed && same(a.init, b.init) && same(a.x, b.x) && a.acc.length === b.acc.length, accMaxRelDiff: d };
}

type Timer = (sweeps: number) => number; // seconds for `sweeps` sweeps

function wasmTimer(m: Model, canonical: boolean): Timer & { dispose(): void } {
  const s = canonical ? new GibbsSampler(engine, m) : new FactorGibbsSampler(engine, m);
  const st = s.init(SEED, 0), acc = s.accumulator();
  const t = ((sweeps: number) => {
    const t0 = performance.now();
    s.step(st, sweeps, acc);
    return (performance.now() - t0) / 1000;
  }) as Timer & { dispose(): void };
  t.dispose = () => s.dispose();
  return t;
}

function jsTimer(m: Model): Timer {
  const g = new FactorGibbsJS(m);
  const r = new PhiloxJS(LO, HI, 0, TAG);
  g.init(r);
  return (sweeps) => {
    const t0 = performance.now();
    g.sweeps(r, sweeps, true);
    return (performance.now() - t0) / 1000;
  };
}

function nativeTimer(exe: string, file: string): Timer {
  return (sweeps) => {
    const r = spawnSync(exe, ['time', ...args(file), String(sweeps), String(Math.max(1, Math.floor(sweeps / 10)))], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`C reference failed: ${r.stderr}`);
    return Number(r.stdout.split(' ')[0]);
  };
}

const rows: Record<string, unknown>[] = [];
let allAgree = true;
for (const [i, { name, model, pairwise }] of models.entries()) {
  const file = modelFile(model, i);
  const ref = wasmRun(model, VERIFY_SWEEPS);
  const checks: Record<string, { identical: boolean; accMaxRelDiff: number }> = { js: agree(ref, jsRun(model, VERIFY_SWEEPS)) };
  for (const c of natives) checks[c.label] = agree(ref, nativeRun(c.exe, file, model, VERIFY_SWEEPS));
  const ok = Object.values(checks).every((c) => c.identical && c.accMaxRelDiff <= 1e-12);
  allAgree &&= ok;

  const wasm = wasmTimer(model, false);
  const canon = pairwise ? wasmTimer(model, true) : null;
  const timers: [string, Timer][] = [['wasm', wasm], ['js', jsTimer(model)], ...natives.map((c) => [c.label, nativeTimer(c.exe, file)] as [string, Timer])];
  if (canon) timers.push(['wasm canonical', canon]);
  // Sweeps per measurement: about TARGET_SECONDS of the WASM kernel.
  wasm(2);
  const t1 = wasm(10) / 10;
  const sweeps = Math.max(10, Math.round(TARGET_SECONDS / Math.max(1e-7, t1)));
  const rates: Record<string, number[]> = Object.fromEntries(timers.map(([k]) => [k, []]));
  for (let rep = 0; rep < REPS; rep++) for (const [k, t] of timers) rates[k].push((sweeps * model.n) / t(sweeps));
  wasm.dispose();
  canon?.dispose();
  const med = Object.fromEntries(Object.entries(rates).map(([k, v]) => [k, dist(v)]));
  const row: Record<string, unknown> = { model: name, n: model.n, maxArity: model.maxArity, sweeps, agreement: checks, siteUpdatesPerSecond: med };
  const ratio = (k: string) => (med[k] ? med.wasm.median / med[k].median : null);
  row.wasmOver = Object.fromEntries(Object.keys(med).filter((k) => k !== 'wasm').map((k) => [k, ratio(k)]));
  rows.push(row);
  const fmt = (k: string) => (med[k] ? `${(med[k].median / 1e6).toFixed(2)}` : '—');
  console.log(`${name}: M site updates/s — WASM ${fmt('wasm')}, C v2 ${fmt('C x86-64-v2')}, C native ${fmt('C native')}, JS ${fmt('js')}${canon ? `, canonical WASM ${fmt('wasm canonical')}` : ''}; agreement ${ok ? 'identical' : 'DIFFERS'}`);
}

const out = resultsPath('factor-gibbs.json');
writeFileSync(out, JSON.stringify({ quick: QUICK, date: new Date().toISOString(), cpu: cpuModel(), node: process.version, wasm: wasmFacts(), native: nativeNote, reps: REPS, models: rows }, null, 2) + '\n');
console.log(`wrote ${out}`);
if (!allAgree) {
  console.error('the implementations disagree');
  process.exitCode = 1;
}
