// Hsu, Achim & Ermon (AISTATS 2016) §5.2, Table 1: RBMs trained on MNIST by CD-k, log Z from mean
// field and from MFRP beside AIS. `node --import tsx bench/experiments/hsu-rbm.ts` (a quarter of an
// hour to an hour on a shared 2-core machine); writes bench/results/hsu-rbm.json after every model.
//
// Data: the `mnist` package's 10 000 digits (1 000 per class), grey levels averaged over 2×2 blocks
// (14×14 = 196 visible units; the paper uses 28×28 = 784) and binarised at 0.5. Machines: 100 hidden
// units trained by CD-1, CD-5, CD-15 and 200 by CD-5, CD-15, CD-25, minibatches of 20 as in the paper,
// but EPOCHS passes (default 1 = 500 updates; the paper: 15) — 28×28 and 15 epochs would take hours on this shared machine.
// log Z: AIS from the base-rate model (logLikelihood: 100 runs × 1 000 temperatures); mean
// field with random restarts only (J = 10: the paper's baseline, "MF optimized with coordinate-wise
// ascent and random restarts") and with our default ordered starts as well; MFRP with T = 5, J = 10,
// every m ∈ [0, 20], its m = 0 candidate being that random-restart mean field.
// Environment: SIDE (14 or 28), EPOCHS, ROWS (digits used), ONLY (e.g. "100:1,100:5": those machines only).

import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadEngine } from '../../bindings/core/wasm-node.ts';
import { learn } from '../../bindings/learn/learn.ts';
import { logLikelihood } from '../../bindings/learn/likelihood.ts';
import { runMeanField } from '../../bindings/variational/meanfield.ts';
import { runMFRPDetailed } from '../../bindings/variational/mfrp.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const SIDE = Number(process.env.SIDE ?? 14);
const EPOCHS = Number(process.env.EPOCHS ?? 1);
const ROWS = Number(process.env.ROWS ?? 10000);
const MACHINES: [number, number][] = [[100, 1], [100, 5], [100, 15], [200, 5], [200, 15], [200, 25]];
const PAPER: Record<string, { mf: number; mfrp: number }> = {
  '100:1': { mf: 501, mfrp: 501 }, '100:5': { mf: 348, mfrp: 433 }, '100:15': { mf: 297, mfrp: 342 },
  '200:5': { mf: 203, mfrp: 380 }, '200:15': { mf: 293, mfrp: 313 }, '200:25': { mf: 279, mfrp: 295 },
};
const MF = { restarts: 10 };
const AIS = { runs: 100, steps: 1000 };
const MFRP = { restarts: 10, trials: 5, maxConstraints: 20 };

/** MNIST digits, grey levels averaged over (28/side)² blocks, binarised at 0.5; rows interleave the classes. */
function mnistBinary(side: number, rows: number): { rows: number; cols: number; values: Uint8Array; mean: Float64Array } {
  if (28 % side !== 0) throw new Error(`SIDE must divide 28, got ${side}`);
  const mnist = createRequire(import.meta.url)('mnist') as { length: number; raw: number[] }[];
  const f = 28 / side, cols = side * side;
  const perClass = Math.min(...mnist.slice(0, 10).map((d) => d.length));
  const n = Math.min(rows, 10 * perClass);
  const values = new Uint8Array(n * cols);
  const mean = new Float64Array(cols);
  for (let r = 0; r < n; r++) {
    const d = mnist[r % 10], o = Math.floor(r / 10) * 784;
    for (let y = 0; y < side; y++) {
      for (let x = 0; x < side; x++) {
        let a = 0;
        for (let dy = 0; dy < f; dy++) for (let dx = 0; dx < f; dx++) a += d.raw[o + (y * f + dy) * 28 + x * f + dx];
        const v = a / (f * f) > 0.5 ? 1 : 0;
        values[r * cols + y * side + x] = v;
        mean[y * side + x] += v / n;
      }
    }
  }
  return { rows: n, cols, values, mean };
}

const fmt = (x: number | null, d = 1) => (x === null ? '—' : x.toFixed(d));
/** Mean |p(v_i = 1) − data mean| over the visible units: how far the aggregate marginals are from the digits'. */
const marginalError = (marg: Float64Array[], mean: Float64Array) => mean.reduce((s, m, i) => s + Math.abs(marg[i][1] - m), 0) / mean.length;

const engine = await loadEngine();
const data = mnistBinary(SIDE, ROWS);
console.log(`MNIST ${SIDE}×${SIDE}, ${data.rows} digits binarised at 0.5; CD-k, batch 20, ${EPOCHS} epochs; load average ${loadavg()[0].toFixed(1)}`);
const only = process.env.ONLY;
const out = join(HERE, '..', 'results', `hsu-rbm${SIDE === 14 && EPOCHS === 1 && ROWS === 10000 ? '' : `-${SIDE}px-${EPOCHS}epochs`}${ROWS === 10000 ? '' : `-${ROWS}rows`}.json`);
const results = [];
for (const [hidden, k] of MACHINES) {
  const key = `${hidden}:${k}`;
  if (only && !only.split(',').includes(key)) continue;
  const t0 = performance.now();
  const r = learn(engine, data, {
    model: 'rbm', hidden, method: 'cd', cdSteps: k, batch: 20, epochs: EPOCHS, learningRate: 0.05, seed: 1,
    evaluate: false,
  });
  const trainSeconds = (performance.now() - t0) / 1000;
  const ta = performance.now();
  const ais = logLikelihood(engine, r.params, data, { method: 'ais', ...AIS, seed: 1 });
  const aisSeconds = (performance.now() - ta) / 1000;
  const t1 = performance.now();
  const mf = runMeanField(engine, r.model, { seed: 1, restarts: MF.restarts, orderedStarts: false });
  const mfOrdered = runMeanField(engine, r.model, { seed: 1, restarts: MF.restarts });
  const t2 = performance.now();
  const rp = runMFRPDetailed(engine, r.model, { seed: 1, orderedStarts: false, ...MFRP });
  const t3 = performance.now();
  const row = {
    hidden, cdSteps: k, visible: data.cols, diverged: r.diverged, trainSeconds,
    ais: { logZ: ais.logZ, stdErr: ais.logZStdErr, ess: ais.aisEss ?? null, trainLogLikelihood: ais.value },
    mf: mf.logZ!, mfOrderedStarts: mfOrdered.logZ!, mfrp: rp.result.logZ!, bestM: rp.result.diagnostics.bestM as number,
    perMBounds: rp.perM.map((p) => (Number.isFinite(p.bound) ? p.bound : null)),
    gapAisMinusMf: ais.logZ - mf.logZ!, gapAisMinusMfrp: ais.logZ - rp.result.logZ!, mfrpMinusMf: rp.result.logZ! - mf.logZ!,
    marginalError: { mf: marginalError(mf.marginals, data.mean), mfOrderedStarts: marginalError(mfOrdered.marginals, data.mean), mfrp: marginalError(rp.result.marginals, data.mean) },
    seconds: { train: trainSeconds, ais: aisSeconds, mf: (t2 - t1) / 1000, mfrp: (t3 - t2) / 1000 },
    paper: PAPER[key],
  };
  results.push(row);
  console.log(`h ${hidden} CD-${k}: AIS ${fmt(ais.logZ)} ± ${fmt(ais.logZStdErr, 2)}  MF ${fmt(row.mf)} (ordered starts ${fmt(row.mfOrderedStarts)})  MFRP ${fmt(row.mfrp)} (m = ${row.bestM})  ` +
    `[train ${fmt(trainSeconds, 0)} s, AIS ${fmt(aisSeconds, 0)} s, MF ${fmt(row.seconds.mf, 1)} s, MFRP ${fmt(row.seconds.mfrp, 1)} s]${r.diverged ? ` diverged: ${r.diverged}` : ''}`);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify({
    date: new Date().toISOString(), node: process.version, cpu: cpus()[0]?.model ?? null, loadAverage: loadavg()[0],
    config: { side: SIDE, epochs: EPOCHS, rows: data.rows, batch: 20, learningRate: 0.05, schedule: 'linear', mf: MF, mfrp: MFRP, ais: AIS },
    results,
  }, null, 1) + '\n');
}
console.log(`\n| hidden | CD-k | AIS log Z | MF | MFRP (m*) | AIS − MF | AIS − MFRP | paper MF / MFRP |`);
console.log('|---|---|---|---|---|---|---|---|');
for (const r of results) {
  console.log(`| ${r.hidden} | ${r.cdSteps} | ${fmt(r.ais.logZ)} ± ${fmt(r.ais.stdErr, 2)} | ${fmt(r.mf)} | ${fmt(r.mfrp)} (${r.bestM}) | ${fmt(r.gapAisMinusMf)} | ${fmt(r.gapAisMinusMfrp)} | ${r.paper.mf} / ${r.paper.mfrp} |`);
}
console.log(`wrote ${out}`);
