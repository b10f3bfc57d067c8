// Learning throughput: one PCD epoch (batch 100, 100 particles, one Gibbs sweep per update) on
// random binary data, for a 784 × 500 RBM (MNIST's shape) and a 100-unit fully visible BM.
// Medians of 3 runs, seconds per epoch and updates per second. No native reference yet.
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { learn } from '../bindings/learn/learn.ts';
import { mulberry32 } from '../test/helpers.ts';

const engine = await loadEngine();
const rand = mulberry32(1);
for (const [model, nV, nH, rows] of [['rbm', 784, 500, 2000], ['boltzmann', 100, 0, 2000]] as const) {
  const values = Uint8Array.from({ length: rows * nV }, () => (rand() < 0.3 ? 1 : 0));
  const times: number[] = [];
  for (let rep = 0; rep < 3; rep++) {
    times.push(learn(engine, { rows, cols: nV, values }, { model, hidden: nH, epochs: 1, batch: 100, particles: 100, evaluate: false }).seconds);
  }
  times.sort((a, b) => a - b);
  console.log(`${model} ${nV}${nH ? ` × ${nH}` : ''}: ${times[1].toFixed(3)} s/epoch (${rows / 100} updates), ${(rows / 100 / times[1]).toFixed(1)} updates/s`);
}
