// Learning throughput.
// 1. One PCD epoch (batch 100, 100 particles, one Gibbs sweep per update, random binary data) in WASM
//    (`learn()`: the second epoch of a 2-epoch run, between the epoch callbacks) against the plain-JS reference of the same
//    algorithm (bench/js/learn.ts), for a 784 × 500 RBM (MNIST's shape), a 196 × 50 SRBM (14 × 14 MNIST)
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
import { QUICK, cpuModel, dist, resultsPath } from './common.ts';

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

// 1. WASM against plain JS.
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
  const name = `${model} ${nV}${nH ? ` × ${nH}` : ''}`;
  results[name] = { rows, updates: rows / 100, wasmSeconds: wasm, jsSeconds: js, jsOverWasm: js.median / wasm.median };
  console.log(`${name}: one PCD epoch of ${rows / 100} updates: WASM ${wasm.median.toFixed(3)} s, plain JS ${js.median.toFixed(3)} s (JS/WASM ${(js.median / wasm.median).toFixed(1)}×)`);
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
