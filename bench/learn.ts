// Learning throughput.
// 1. One PCD epoch (batch 100, 100 particles, one Gibbs sweep per update, random binary data) in WASM
//    (`learn()`: the second epoch of a 2-epoch run, between the epoch callbacks) against the plain-JS reference of the same
//    algorithm (bench/js/learn.ts) and the native C one (bench/native/learn.c, gcc -O3, -march=x86-64-v2 and native), for a 784 × 500 RBM (MNIST's shape), a 196 × 50 SRBM (14 × 14 MNIST)
//    and a 100-unit fully visible BM. Medians of 3 runs (JS: 1 run for the RBM).
// 2. Particle kernels on the 196 × 50 SRBM: seconds per epoch with sequential Gibbs, tree-block Gibbs, block
//    Gibbs and DHMC particles (the last two re-factor W_vv + αI every update) and the equivalent-RBM
//    parametrisation with block Gibbs; the Gaussian layer's re-factoring time per update for 196 and
//    784 visible units.
// Writes bench/results/learn.json.
import { writeFileSync } from 'node:fs';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { learn, type LearnOptions } from '../bindings/learn/learn.ts';
import { BoundMachine, machinePairs } from '../bindings/learn/machine.ts';
import { GaussianLayer } from '../bindings/learn/particles.ts';
import { seedWords } from '../bindings/core/seed.ts';
import { mulberry32 } from '../test/helpers.ts';
import { PhiloxJS } from './js/gibbs.ts';
import { pcdEpochJS } from './js/learn.ts';
import { QUICK, cpuModel, dist, resultsPath, writeFormFile } from './common.ts';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const engine = await loadEngine();
const rand = mulberry32(1);
const ROWS = QUICK ? 200 : 1000, REPS = QUICK ? 1 : 3;
const results: Record<string, unknown> = {};

const randomData = (rows: number, cols: number) => ({ rows, cols, values: Uint8Array.from({ length: rows * cols }, () => (rand() < 0.3 ? 1 : 0)) });
/** Seconds of the second epoch of a 2-epoch run (between the epoch callbacks: no setup). */
const wasmEpoch = (data: ReturnType<typeof randomData>, opts: LearnOptions) => {
  const at: number[] = [];
  learn(engine, data, { batch: 100, particles: 100, evaluate: false, schedule: 'constant', learningRate: 0.01, ...opts, epochs: 2, onEpoch: () => at.push(performance.now()) });
  return (at[1] - at[0]) / 1000;
};

// The native reference (bench/native/learn.c), built at x86-64-v2 (128-bit SIMD, as WASM) and native.
const TMP = mkdtempSync(join(tmpdir(), 'relaxmrf-learn-bench-'));
const SRC = join(dirname(fileURLToPath(import.meta.url)), 'native', 'learn.c');
const natives: Record<string, string | null> = {};
for (const march of ['x86-64-v2', 'native']) {
  const exe = join(TMP, `learn-${march}.out`);
  const cc = spawnSync('gcc', ['-O3', `-march=${march}`, '-ffp-contract=off', '-std=c11', '-D_POSIX_C_SOURCE=199309L', '-o', exe, SRC, '-lm'], { encoding: 'utf8' });
  natives[march] = cc.status === 0 ? exe : null;
  if (cc.status !== 0) console.log(`gcc -march=${march} failed: the native reference is skipped (${cc.stderr ?? cc.error})`);
}

// 1. WASM against plain JS and C.
for (const [model, nV, nH] of [['rbm', 784, 500], ['srbm', 196, 50], ['boltzmann', 100, 0]] as const) {
  const rows = model === 'rbm' ? 300 : ROWS;
  const data = randomData(rows, nV);
  const wasm = dist(Array.from({ length: REPS }, () => wasmEpoch(data, { model, hidden: nH })));
  // The JS reference on the same form (a learned machine's layout, parameters from a 0-epoch run).
  const m = new BoundMachine(engine, model, nV, nH);
  const form = m.bound.form;
  m.dispose();
  const r0 = learn(engine, data, { model, hidden: nH, epochs: 0, evaluate: false });
  const jsTimes: number[] = [];
  for (let rep = 0; rep < (model === 'rbm' ? 1 : REPS); rep++) {
    const f = { ...form, a: r0.params.a.slice(), val: new Float64Array(form.val.length) };
    const [lo, hi] = seedWords(1);
    const rngs = Array.from({ length: 100 }, (_, c) => new PhiloxJS(lo, hi, c, 31));
    const chains = Uint8Array.from({ length: 100 * form.nBits }, () => (rand() < 0.5 ? 1 : 0));
    const t0 = performance.now();
    pcdEpochJS(f, nV, data.values, rows, 100, chains, rngs, 1, 0.01);
    jsTimes.push((performance.now() - t0) / 1000);
  }
  const js = dist(jsTimes);
  const formFile = join(TMP, `${model}.form`), dataFile = join(TMP, `${model}.data`);
  writeFormFile({ ...form, a: r0.params.a.slice() }, formFile);
  writeFileSync(dataFile, data.values);
  const c: Record<string, number | null> = {};
  for (const [march, exe] of Object.entries(natives)) {
    const run = exe ? spawnSync(exe, [formFile, dataFile, String(nV), String(rows), '100', '100', '1', String(REPS)], { encoding: 'utf8' }) : null;
    c[march] = run && run.status === 0 ? Number(run.stdout.trim()) : null;
  }
  const name = `${model} ${nV}${nH ? ` × ${nH}` : ''}`;
  results[name] = { rows, updates: rows / 100, wasmSeconds: wasm, jsSeconds: js, jsOverWasm: js.median / wasm.median, cSeconds: c, wasmOverC: c['x86-64-v2'] ? wasm.median / c['x86-64-v2'] : null };
  console.log(`${name}: one PCD epoch of ${rows / 100} updates: WASM ${wasm.median.toFixed(3)} s, plain JS ${js.median.toFixed(3)} s (JS/WASM ${(js.median / wasm.median).toFixed(1)}×), C x86-64-v2 ${c['x86-64-v2']?.toFixed(3)} s, C native ${c.native?.toFixed(3)} s (WASM/C ${c['x86-64-v2'] ? (wasm.median / c['x86-64-v2']).toFixed(2) : '—'}×)`);
}

// 2. Particle kernels on the 14 × 14 MNIST-shaped SRBM.
const srbmData = randomData(ROWS, 196);
const kernels: [string, LearnOptions][] = [
  ['gibbs', { sampler: 'gibbs' }], ['tree', { sampler: 'tree' }], ['blockgibbs', { sampler: 'blockgibbs' }], ['dhmc', { sampler: 'dhmc' }],
  ['equivalent RBM + blockgibbs', { sampler: 'blockgibbs', equivalentRBM: true }],
];
const perKernel: Record<string, unknown> = {};
for (const [label, o] of kernels) {
  const t = dist(Array.from({ length: REPS }, () => wasmEpoch(srbmData, { model: 'srbm', hidden: 50, ...o })));
  perKernel[label] = t;
  console.log(`srbm 196 × 50, ${label.padEnd(28)} ${t.median.toFixed(3)} s/epoch (${ROWS / 100} updates)`);
}
results['srbm 196 × 50 particle kernels'] = perKernel;

// Re-factoring the Gaussian layer (Lanczos for λ_min, then dense Cholesky of W_vv + αI), per update.
const refresh: Record<string, unknown> = {};
for (const nV of [196, 784]) {
  const m = new BoundMachine(engine, 'boltzmann', nV, 0);
  try {
    const pairs = machinePairs('boltzmann', nV, 0);
    m.set({ kind: 'boltzmann', nVisible: nV, nHidden: 0, states: 2, pairs, a: new Float64Array(nV), w: Float64Array.from({ length: pairs.length / 2 }, () => 0.1 * (rand() - 0.5)) });
    const layer = new GaussianLayer(engine, m, 'blockgibbs');
    const times = dist(Array.from({ length: REPS }, () => {
      const t0 = performance.now();
      layer.refresh();
      return (performance.now() - t0) / 1000;
    }));
    refresh[nV] = times;
    console.log(`Gaussian layer refresh (Lanczos + Cholesky), ${nV} visible units: ${(times.median * 1e3).toFixed(1)} ms per update`);
  } finally {
    m.dispose();
  }
}
results['layer refresh seconds'] = refresh;
writeFileSync(resultsPath('learn.json'), JSON.stringify({ quick: QUICK, date: new Date().toISOString(), cpu: cpuModel(), results }, null, 1));
