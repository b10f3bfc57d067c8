// Martens & Sutskever (2010) §5.4 (Figure 6): learning curves — training and test log-likelihood
// against training seconds — of an SRBM, the same SRBM in its equivalent-RBM parametrisation
// (W_vv = F Fᵀ, F the weights of as many Gaussian units as visible units; block Gibbs particles,
// 3 steps per update as in the paper) and a plain RBM, all trained by PCD with the same settings
// (the paper's visible–visible / visible–Gaussian rate ×0.1; but η = 0.05, not 0.01, as 10 epochs
// here are 800 updates against the paper's 100 000; 100 rows a batch and 100 particles, not 256;
// F starts at 0.01·N(0, 1) like the other weights) on binarised MNIST downsampled to 14 × 14 (full size does not fit
// this shared 2-core machine in minutes). The log-likelihood per image is estimated by AIS from the
// base-rate model at log-spaced epochs (its time is not counted); the training value on a fixed
// subset of 2000 training images.
//
// Usage: node --import tsx bench/experiments/martens-learning.ts [--quick]
// Writes bench/results/martens-learning.json and bench/results/figures/martens-fig6.svg.
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { loadEngine } from '../../bindings/core/wasm-node.ts';
import { learn, type LearnOptions } from '../../bindings/learn/learn.ts';
import { logLikelihood, type BinaryData } from '../../bindings/learn/likelihood.ts';
import type { MachineParams } from '../../bindings/learn/machine.ts';
import { plotLines } from '../../bindings/plot/lines.ts';
import { QUICK, cpuModel, resultsPath } from '../common.ts';
import { loadMnist } from './mnist-data.ts';

const engine = await loadEngine();
const CFG = QUICK ? { hidden: 10, epochs: 2, ais: { runs: 16, steps: 200 }, evalAt: [1, 2] } : { hidden: 50, epochs: 10, ais: { runs: 32, steps: 1000 }, evalAt: [1, 2, 5, 10] };
const { train, test, side } = loadMnist(14);
// Every fourth training row (the rows are in digit order, so a prefix would hold only 0s and 1s).
const subset: BinaryData = { rows: 2000, cols: train.cols, values: Uint8Array.from({ length: 2000 * train.cols }, (_, i) => train.values[Math.floor(i / train.cols) * 4 * train.cols + (i % train.cols)]) };

const COMMON: LearnOptions = {
  method: 'pcd', particles: 100, batch: 100, epochs: CFG.epochs, learningRate: 0.05, schedule: 'constant', visibleRate: 0.1, seed: 1, evaluate: false,
};
const MODELS: [string, LearnOptions][] = [
  ['SRBM (SGS particles)', { ...COMMON, model: 'srbm', hidden: CFG.hidden, sampler: 'gibbs', cdSteps: 1 }],
  ['equivalent RBM (block Gibbs, 3 steps)', { ...COMMON, model: 'srbm', hidden: CFG.hidden, equivalentRBM: true, sampler: 'blockgibbs', cdSteps: 3 }],
  ['RBM (block Gibbs)', { ...COMMON, model: 'rbm', hidden: CFG.hidden, sampler: 'blockgibbs', cdSteps: 1 }],
];

interface Point { epoch: number; seconds: number; train: number; test: number; stdErr: number; aisEss: number }

function evaluate(p: MachineParams): Omit<Point, 'epoch' | 'seconds'> {
  const tr = logLikelihood(engine, p, subset, { method: 'ais', baseData: train, seed: 3, ...CFG.ais });
  const te = logLikelihood(engine, p, test, { method: 'ais', logZ: { value: tr.logZ, stdErr: tr.logZStdErr } });
  return { train: tr.value, test: te.value, stdErr: tr.stdErr, aisEss: tr.aisEss ?? NaN };
}

const curves: { label: string; settings: LearnOptions; points: Point[]; seconds: number }[] = [];
for (const [label, opts] of MODELS) {
  const points: Point[] = [];
  let evalSeconds = 0;
  const t0 = performance.now();
  const r = learn(engine, train, {
    ...opts,
    onEpoch: (e, params) => {
      if (!CFG.evalAt.includes(e.epoch)) return;
      const t1 = performance.now();
      const seconds = (t1 - t0) / 1000 - evalSeconds;
      const ev = evaluate(params());
      evalSeconds += (performance.now() - t1) / 1000;
      points.push({ epoch: e.epoch, seconds, ...ev });
      console.log(`${label.padEnd(40)} epoch ${String(e.epoch).padStart(3)}  ${seconds.toFixed(1).padStart(6)} s  train ${ev.train.toFixed(2)}  test ${ev.test.toFixed(2)}  (AIS ± ${ev.stdErr.toFixed(2)}, ESS ${ev.aisEss.toFixed(1)})`);
    },
  });
  if (r.diverged) console.log(`${label}: ${r.diverged}`);
  curves.push({ label, settings: opts, points, seconds: r.seconds - evalSeconds });
}

const path = resultsPath('martens-learning.json');
writeFileSync(path, JSON.stringify({
  experiment: 'Martens & Sutskever 2010 §5.4 (Figure 6)', quick: QUICK, date: new Date().toISOString(), cpu: cpuModel(),
  data: { side, trainRows: train.rows, testRows: test.rows, trainEvalRows: subset.rows }, ais: CFG.ais, hidden: CFG.hidden, curves,
}, null, 1));
const series = curves.flatMap((c) => [
  { label: `${c.label}, train`, points: c.points.map((p) => ({ x: p.seconds, y: p.train })) },
  { label: `${c.label}, test`, points: c.points.map((p) => ({ x: p.seconds, y: p.test })) },
]);
const svg = plotLines(series, {
  title: 'Log-likelihood against training time (Martens Fig. 6)', subtitle: `MNIST ${side}×${side}, ${CFG.hidden} hidden units, PCD; AIS (${CFG.ais.runs} runs × ${CFG.ais.steps})`,
  xLabel: 'training seconds', yLabel: 'log-likelihood (nats / image)', logX: true,
});
const fig = path.replace(/martens-learning(-quick)?\.json$/, 'figures/martens-fig6$1.svg');
mkdirSync(dirname(fig), { recursive: true });
writeFileSync(fig, svg);
console.log(`wrote ${path} and ${fig}`);
