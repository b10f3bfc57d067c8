// Martens & Sutskever (2010) §5.2: mixing of block Gibbs on the equivalent RBM (Gaussian units on
// the visible–visible couplings, M Mᵀ = W_vv + αI, α = (1 + ε)·α_min) against sequential Gibbs (SGS)
// on an SRBM trained by PCD on binarised MNIST (14 × 14 here; the paper: USPS and 28 × 28 MNIST).
//
// Figure 2: the relative error ‖Ĉ − C‖_F / ‖C‖_F of the hx-statistic C = E[h xᵀ] − E[h] E[x]ᵀ
// (hidden units at their conditional means) estimated by P parallel chains after a burn-in,
// against step number, for several ε, with C from a longer SGS run. Table 1: the median over
// dimensions (visible and hidden bits) of the effective sample size of TRACE_CHAINS chains' bits
// over the same steps (our diagnostics' multi-chain ESS; the paper used CODA on 15 000 steps of one
// chain). One "step" is one sweep over all variables (SGS) or one y → x → h pass (block Gibbs).
//
// Usage: node --import tsx bench/experiments/martens-mixing.ts [--quick | --full] [--equivalent]
// Writes bench/results/martens-mixing[-full].json and bench/results/figures/martens-fig2[-full].svg
// (default ≈ 6 min, --full ≈ 17 min on the shared 2-core machine: 2–3× more chains and steps).
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { loadEngine } from '../../bindings/core/wasm-node.ts';
import { learn, type LearnOptions } from '../../bindings/learn/learn.ts';
import { BoundMachine, type MachineParams } from '../../bindings/learn/machine.ts';
import { ParticleKernel, type LearnSampler } from '../../bindings/learn/particles.ts';
import { seedWords } from '../../bindings/core/seed.ts';
import { ess } from '../../bindings/samplers/diagnostics.ts';
import { plotLines } from '../../bindings/plot/lines.ts';
import { QUICK, cpuModel, resultsPath } from '../common.ts';
import { loadMnist } from './mnist-data.ts';

const engine = await loadEngine();
const FULL = process.argv.includes('--full');
const CFG = QUICK
  ? { hidden: 20, epochs: 2, chains: 32, burn: 50, steps: 100, truthChains: 64, truthBurn: 100, truthSteps: 300, traceChains: 8, eps: [0.01, 1] }
  : FULL
    ? { hidden: 50, epochs: 20, chains: 256, burn: 200, steps: 800, truthChains: 384, truthBurn: 500, truthSteps: 2500, traceChains: 16, eps: [0.01, 0.1, 1, 4] }
    : { hidden: 50, epochs: 20, chains: 128, burn: 100, steps: 500, truthChains: 256, truthBurn: 300, truthSteps: 1500, traceChains: 16, eps: [0.01, 0.1, 1, 4] };
// --equivalent: the model is trained in the equivalent-RBM parametrisation (W_vv = F Fᵀ; block Gibbs
// particles, 3 steps an update, as in the paper's §5.4), and block Gibbs runs on its own Gaussian units
// (M = F, d = diag(F Fᵀ)) beside SGS on its marginal SRBM: Table 1's "Equiv. RBM" rows.
const EQUIVALENT = process.argv.includes('--equivalent');
const TRAIN: LearnOptions = {
  model: 'srbm', hidden: CFG.hidden, particles: 100, batch: 100, epochs: CFG.epochs, learningRate: 0.05, schedule: 'linear', visibleRate: 0.1, momentum: 0.5, seed: 1, evaluate: false,
  ...(EQUIVALENT ? { equivalentRBM: true, sampler: 'blockgibbs', cdSteps: 3 } : { sampler: 'gibbs' }),
};

const { train, side } = loadMnist(14);
const t0 = performance.now();
const trained = learn(engine, train, TRAIN);
const trainSeconds = (performance.now() - t0) / 1000;
console.log(`${EQUIVALENT ? 'equivalent RBM' : 'SRBM'} ${side}×${side} + ${CFG.hidden} hidden trained by PCD: ${CFG.epochs} epochs in ${trainSeconds.toFixed(1)} s`);

interface Run {
  label: string;
  sampler: LearnSampler;
  epsilon: number | null;
  alpha: number | null;
  lambdaMin: number | null;
  /** Relative error of the hx-statistic after each checkpoint's number of steps. */
  errors: { step: number; relError: number }[];
  essMedian: number;
  essDimensions: number;
  secondsPerStep: number;
}

/** Runs P chains of `sampler` on the trained machine; returns the hx-statistic after `steps` and at checkpoints. */
function runChains(params: MachineParams, sampler: LearnSampler, epsilon: number, P: number, burn: number, steps: number, seed: number, traceChains: number, truth: Float64Array | null, factor: Float64Array | null = null) {
  const m = new BoundMachine(engine, 'srbm', params.nVisible, params.nHidden);
  try {
    m.set(params);
    const kernel = new ParticleKernel(engine, m, sampler, { shiftEpsilon: epsilon });
    if (factor && kernel.layer) {
      const nV = params.nVisible;
      kernel.layer.setFactor(factor, Float64Array.from({ length: nV }, (_, i) => factor.subarray(i * nV, (i + 1) * nV).reduce((acc, f) => acc + f * f, 0)));
    }
    const k = engine.kernels, ar = m.arena, nV = params.nVisible, nH = params.nHidden, n = nV + nH;
    const pb = k.learnParticleBytes(m.header) >>> 0, particles = ar.alloc(P * pb);
    const sx = ar.allocF64(nV), sh = ar.allocF64(nH), shx = ar.allocF64(nH * nV);
    const [lo, hi] = seedWords(seed);
    k.learnParticlesInit(m.header, particles, P, lo, hi, 0, 31);
    kernel.advance(particles, P, burn, true);
    const traces: Uint8Array[] = Array.from({ length: n * traceChains }, () => new Uint8Array(steps));
    const checkpoints = new Set<number>();
    for (let s = 1; s <= steps; s = Math.max(s + 1, Math.round(s * 1.25))) checkpoints.add(s);
    checkpoints.add(steps);
    const errors: { step: number; relError: number }[] = [];
    let seconds = 0;
    let C: Float64Array = new Float64Array(nH * nV);
    for (let t = 1; t <= steps; t++) {
      const t1 = performance.now();
      kernel.advance(particles, P, 1, false);
      seconds += (performance.now() - t1) / 1000;
      k.learnHxAccumulate(m.header, particles + (k.rngStateBytes() >>> 0), P, nV, sx, sh, shx);
      const mem = new Uint8Array(k.memory.buffer);
      for (let c = 0; c < traceChains; c++) {
        const s0 = particles + c * pb + (k.rngStateBytes() >>> 0);
        for (let i = 0; i < n; i++) traces[i * traceChains + c][t - 1] = mem[s0 + i];
      }
      if (checkpoints.has(t)) {
        C = hxStatistic(ar.readF64(sx, nV), ar.readF64(sh, nH), ar.readF64(shx, nH * nV), t * P);
        if (truth) errors.push({ step: t, relError: relError(C, truth) });
      }
    }
    // Median ESS over dimensions that moved (a pixel that is off in every trace has no ESS).
    const esses: number[] = [];
    for (let i = 0; i < n; i++) {
      const e = ess(Array.from({ length: traceChains }, (_, c) => Float64Array.from(traces[i * traceChains + c])));
      if (Number.isFinite(e)) esses.push(e);
    }
    esses.sort((a, b) => a - b);
    const layer = kernel.layer;
    return {
      C, errors, essMedian: esses.length ? esses[esses.length >> 1] : NaN, essDimensions: esses.length, secondsPerStep: seconds / steps,
      alpha: layer ? layer.info.alpha : null, lambdaMin: layer ? layer.info.lambdaMin : null,
    };
  } finally {
    m.dispose();
  }
}

function hxStatistic(sx: ArrayLike<number>, sh: ArrayLike<number>, shx: ArrayLike<number>, count: number): Float64Array {
  const nV = sx.length, nH = sh.length, C = new Float64Array(nH * nV);
  for (let h = 0; h < nH; h++) for (let i = 0; i < nV; i++) C[h * nV + i] = shx[h * nV + i] / count - (sh[h] / count) * (sx[i] / count);
  return C;
}

function relError(C: Float64Array, truth: Float64Array): number {
  let num = 0, den = 0;
  for (let i = 0; i < C.length; i++) {
    num += (C[i] - truth[i]) ** 2;
    den += truth[i] ** 2;
  }
  return Math.sqrt(num / den);
}

const params = trained.params;
const t1 = performance.now();
const truthRun = runChains(params, 'gibbs', 0, CFG.truthChains, CFG.truthBurn, CFG.truthSteps, 101, 0, null);
console.log(`ground truth: SGS, ${CFG.truthChains} chains × ${CFG.truthSteps} steps after ${CFG.truthBurn}, ${((performance.now() - t1) / 1000).toFixed(1)} s; ‖C‖_F = ${Math.hypot(...truthRun.C).toExponential(3)}`);
const truth = truthRun.C;

const runs: Run[] = [];
const methods: [string, LearnSampler, number | null][] = EQUIVALENT
  ? [['SGS on the marginal SRBM', 'gibbs', null], ['block Gibbs on its Gaussian units', 'blockgibbs', null]]
  : [['SGS on the SRBM', 'gibbs', null], ...CFG.eps.map((e) => [`block Gibbs, ε = ${e}`, 'blockgibbs', e] as [string, LearnSampler, number])];
for (const [label, sampler, eps] of methods) {
  const t2 = performance.now();
  const r = runChains(params, sampler, eps ?? 0.01, CFG.chains, CFG.burn, CFG.steps, 202, CFG.traceChains, truth, EQUIVALENT ? trained.factor! : null);
  runs.push({ label, sampler, epsilon: eps, alpha: r.alpha, lambdaMin: r.lambdaMin, errors: r.errors, essMedian: r.essMedian, essDimensions: r.essDimensions, secondsPerStep: r.secondsPerStep });
  const last = r.errors.at(-1)!;
  console.log(`${label.padEnd(24)} α ${r.alpha?.toFixed(3) ?? '—'}  rel. error at step 10: ${r.errors.find((e) => e.step >= 10)?.relError.toFixed(3)}, 100: ${r.errors.find((e) => e.step >= 100)?.relError.toFixed(3)}, ${last.step}: ${last.relError.toFixed(3)}; median ESS ${r.essMedian.toFixed(1)} (${CFG.traceChains} chains × ${CFG.steps} steps, ${r.essDimensions} dims); ${(r.secondsPerStep * 1e3).toFixed(2)} ms/step for ${CFG.chains} chains (${((performance.now() - t2) / 1000).toFixed(1)} s)`);
}

const out = {
  experiment: 'Martens & Sutskever 2010 §5.2 (Figure 2, Table 1)',
  quick: QUICK,
  full: FULL,
  equivalentRBM: EQUIVALENT,
  date: new Date().toISOString(),
  cpu: cpuModel(),
  data: { source: 'mnist package (10 000 digits), 80 % per digit training in file order', side, binarised: '2×2 average > 0.5', trainRows: train.rows },
  training: { ...TRAIN, seconds: trainSeconds, method: 'pcd' },
  truth: { sampler: 'gibbs', chains: CFG.truthChains, burn: CFG.truthBurn, steps: CFG.truthSteps, frobenius: Math.hypot(...truth) },
  settings: { chains: CFG.chains, burn: CFG.burn, steps: CFG.steps, traceChains: CFG.traceChains, hiddenMeans: 'Rao–Blackwellised σ(u_h)' },
  runs,
  paperTable1: { 'SRBM, USPS': [264, 153], 'Equiv. RBM, USPS': [188, 142], 'SRBM, MNIST': [377, 218], 'Equiv. RBM, MNIST': [401, 416] },
};
const path = resultsPath(`martens-mixing${EQUIVALENT ? '-equivalent' : ''}${FULL ? '-full' : ''}.json`);
writeFileSync(path, JSON.stringify(out, null, 1));
const svg = plotLines(runs.map((r) => ({ label: r.label, points: r.errors.map((e) => ({ x: e.step, y: e.relError })) })), {
  title: 'hx-statistic relative error against step (Martens Fig. 2)', subtitle: `SRBM ${side}×${side} + ${CFG.hidden} hidden (PCD, MNIST); ${CFG.chains} chains after ${CFG.burn} burn-in steps`,
  xLabel: 'step', yLabel: 'relative error', logX: true, logY: true,
});
const fig = path.replace(/martens-mixing((-equivalent)?(-full|-quick)?)\.json$/, 'figures/martens-fig2$1.svg');
mkdirSync(dirname(fig), { recursive: true });
writeFileSync(fig, svg);
console.log(`wrote ${path} and ${fig}`);
