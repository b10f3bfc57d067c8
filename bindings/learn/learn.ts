// Maximum-likelihood learning of Boltzmann machines (fully visible, RBM, semi-restricted RBM, Potts)
// by stochastic gradient ascent: the gradient of the average log-likelihood is
//   ∂/∂a_p = ⟨x_p⟩_data − ⟨x_p⟩_model,   ∂/∂W_pq = ⟨x_p x_q⟩_data − ⟨x_p x_q⟩_model,
// the data term over a minibatch (hidden units at their exact conditional means), the model term
// over particles: persistent chains (PCD, Tieleman 2008) or chains restarted at the minibatch and
// run k sweeps (CD-k), advanced by sequential Gibbs, tree-block Gibbs (blocks that are forests
// of the architecture's graph, each redrawn exactly given the rest), or block Gibbs / DHMC through
// Gaussian units on the visible–visible couplings (particles.ts). The visible–visible couplings may be
// learned in the equivalent-RBM parametrisation W_vv = F Fᵀ (factored.ts). Every per-sample and per-particle loop runs in
// WASM (assembly/learn/stats.ts) on parameters that stay in engine memory; this file drives epochs.

import type { Engine } from '../core/engine.ts';
import { EngineError, ModelError } from '../core/errors.ts';
import { seedWords } from '../core/seed.ts';
import { checkBoolean, checkCount, checkOptionKeys, definedOnly, MAX_CHAINS, MAX_LOOP_COUNT } from '../core/options.ts';
import type { Model } from '../core/model.ts';
import { BoundMachine, checkStates, MACHINE_KINDS, machineModel, type MachineKind, type MachineParams } from './machine.ts';
import { VisibleFactor } from './factored.ts';
import { LAYER_DEFAULTS, LEARN_SAMPLERS, ParticleKernel, type LayerOptions, type LearnSampler } from './particles.ts';
import { unboundedWarnings } from './unbounded.ts';
import { baseRateBiases, checkBaseData, checkLikelihoodOptions, logLikelihood, type BinaryData, type LikelihoodOptions, type LogLikelihood } from './likelihood.ts';

/**
 * How the model phase of the gradient is sampled: 'pcd' persistent contrastive divergence (particles kept across
 * updates), 'cd' CD-k (chains restarted at the minibatch).
 */
export type LearnMethod = 'pcd' | 'cd';
export { LEARN_SAMPLERS, type LearnSampler } from './particles.ts';
/** Learning-rate schedule over the run. */
export type RateSchedule = 'constant' | 'linear';

/** Options of `learn()`; defaults in LEARN_DEFAULTS. */
export interface LearnOptions extends LayerOptions {
  /** The architecture (default 'boltzmann'). */
  model?: MachineKind;
  /** Hidden units (rbm, srbm). */
  hidden?: number;
  /** States per unit (potts; default: the data's largest value + 1). */
  states?: number;
  /** 'pcd' (default) or 'cd'. */
  method?: LearnMethod;
  /** Gibbs sweeps per update (CD-k's k; PCD's sweeps between updates). */
  cdSteps?: number;
  /**
   * Particle kernel (default 'gibbs'): 'gibbs' sequential, 'tree' tree-block Gibbs, 'blockgibbs' block Gibbs through
   * Gaussian units on the visible–visible couplings (Martens & Sutskever §3.5), 'dhmc' HMC on those units
   * (see particles.ts; a Potts machine's units are its one-hot bits).
   */
  sampler?: LearnSampler;
  /** Persistent particles (PCD only: CD uses one chain per minibatch row, and refuses this option). */
  particles?: number;
  /** Data rows per gradient update (minibatch size; default 100, at most the number of rows). */
  batch?: number;
  /** Passes over the data (default 20). */
  epochs?: number;
  /** Initial learning rate η (default 0.05). */
  learningRate?: number;
  /** 'linear': η decays linearly to 0 over the run; 'constant'. */
  schedule?: RateSchedule;
  /** L2 weight decay on the couplings: −decay·W added to their gradient (default 0). */
  weightDecay?: number;
  /** Momentum factor in [0, 1): velocity = momentum·velocity + η·gradient (default 0). */
  momentum?: number;
  /** Learning-rate factor of visible–visible couplings (srbm; with `equivalentRBM`, of the Gaussian units' weights). */
  visibleRate?: number;
  /**
   * Learn the visible–visible couplings (boltzmann, srbm) in the equivalent-RBM parametrisation W_vv = F Fᵀ, F the
   * weights of nV Gaussian units (Martens & Sutskever §4; see factored.ts). Default false.
   */
  equivalentRBM?: boolean;
  /** Seed of the particles, the initial parameters, the minibatch shuffles and the likelihood's AIS unless `likelihood.seed` (default 1). */
  seed?: number;
  /** A parameter past this size (or NaN) stops the run as divergent (> 0). */
  maxWeight?: number;
  /** Evaluate the training (and test) log-likelihood at the end. */
  evaluate?: boolean;
  /** Held-out data whose log-likelihood is evaluated at the end (refused with `evaluate: false`). */
  test?: BinaryData;
  /** Options of the log-likelihood evaluation (AIS or exact; see LIKELIHOOD_DEFAULTS). */
  likelihood?: LikelihoodOptions;
  /** Called after every epoch with its statistics and a getter of the parameters after it (a copy at each call, of that epoch's parameters whenever it is called). */
  onEpoch?: (e: EpochStats, params: () => MachineParams) => void;
}

/** Defaults of LearnOptions. */
export const LEARN_DEFAULTS = {
  model: 'boltzmann', hidden: 0, states: 0, method: 'pcd', cdSteps: 1, sampler: 'gibbs', particles: 100, batch: 100, epochs: 20,
  learningRate: 0.05, schedule: 'linear', weightDecay: 0, momentum: 0, visibleRate: 1, seed: 1, maxWeight: 1e3, evaluate: true, equivalentRBM: false,
  ...LAYER_DEFAULTS,
} as const;

/** Statistics of one epoch of learning. */
export interface EpochStats {
  /** Epoch number, from 1. */
  epoch: number;
  /** Learning rate of the epoch's last update. */
  learningRate: number;
  /** Root mean square of the gradient estimate over parameters, averaged over the epoch's updates. */
  gradientRms: number;
  /** Largest |parameter| after the epoch. */
  maxAbsParameter: number;
  /** Particle units whose state changed, per unit per sweep (binary machines: bits flipped per bit; every kernel counts a unit once). */
  changeRate: number;
  /** blockgibbs / dhmc on a machine with visible–visible couplings: the shift α of the epoch's last update. */
  shiftAlpha?: number;
  /** With shiftAlpha: the Lanczos estimate of λ_min(W_vv) at the epoch's last update. */
  lambdaMin?: number;
  /** blockgibbs / dhmc on a machine with visible–visible couplings (not an RBM): seconds spent re-factoring the Gaussian layer in the epoch. */
  refreshSeconds?: number;
  /** dhmc, not on an RBM (there it is block Gibbs): mean acceptance probability of the epoch's last update. */
  acceptance?: number;
  /** dhmc, not on an RBM: the step size after the epoch's last update. */
  stepSize?: number;
}

/** What `learn()` returns. */
export interface LearnResult {
  /** The options used, defaults filled in (`particles`: the chains used; with CD the batch). */
  settings: Required<Omit<LearnOptions, 'onEpoch' | 'test' | 'likelihood'>>;
  /** The learned parameters (with `equivalentRBM`: the marginal machine, W_vv = F Fᵀ off the diagonal). */
  params: MachineParams;
  /** With `equivalentRBM`: the Gaussian units' weights F, row-major nVisible × nVisible. */
  factor?: Float64Array;
  /** The learned machine as a Model (for inference with the other methods). */
  model: Model;
  /** Statistics per epoch, in order. */
  epochs: EpochStats[];
  /** Set when the run stopped early: why. `params` are then the last good ones (end of the previous epoch). */
  diverged: string | null;
  /**
   * Caveats about the training data, each a sentence: columns or coupled pairs of columns that hold a
   * statistic at the edge of its range, so that the log-likelihood has no maximum and those parameters
   * drift without bound (unbounded.ts). Empty when none is found, which does not prove a maximum exists.
   */
  warnings: string[];
  /** Average log-likelihood of the training data (when `evaluate`). */
  train?: LogLikelihood;
  /** Average log-likelihood of `opts.test` (when given and `evaluate`). */
  test?: LogLikelihood;
  /** Wall-clock time of the run, in seconds. */
  seconds: number;
}

const PARTICLE_STREAM = 31, INIT_STREAM = 32, SHUFFLE_STREAM = 33;

/**
 * Fits a Boltzmann machine, RBM, semi-restricted BM or Potts model to `data` by stochastic gradient ascent on the
 * average log-likelihood (PCD or CD-k), and evaluates the log-likelihood at the end. Throws ModelError on bad
 * options or data.
 */
export function learn(engine: Engine, data: BinaryData, opts: LearnOptions = {}): LearnResult {
  // Everything is checked before the first epoch: a misspelt option ran with its default, and a bad
  // test set or likelihood option was refused only after the whole run.
  checkOptionKeys(opts, LEARN_OPTION_KEYS);
  checkBoolean('equivalentRBM', opts.equivalentRBM);
  checkBoolean('evaluate', opts.evaluate);
  if (opts.onEpoch !== undefined && typeof opts.onEpoch !== 'function') throw new ModelError(`onEpoch must be a function, got ${typeof opts.onEpoch}`);
  const o = { ...LEARN_DEFAULTS, ...definedOnly(opts) };
  const { onEpoch, test, likelihood, ...rest } = o as typeof o & Pick<LearnOptions, 'onEpoch' | 'test' | 'likelihood'>;
  if (!MACHINE_KINDS.includes(o.model)) throw new ModelError(`model must be one of ${MACHINE_KINDS.join(', ')}, got ${o.model}`);
  if (o.method !== 'pcd' && o.method !== 'cd') throw new ModelError(`method must be pcd or cd, got ${o.method}`);
  if (!LEARN_SAMPLERS.includes(o.sampler)) throw new ModelError(`sampler ${o.sampler} is not available for learning (available: ${LEARN_SAMPLERS.join(', ')})`);
  if (o.schedule !== 'linear' && o.schedule !== 'constant') throw new ModelError(`schedule must be linear or constant, got ${o.schedule}`);
  const visibleOnly = o.model === 'boltzmann' || o.model === 'potts';
  if (visibleOnly && opts.hidden) throw new ModelError(`hidden units apply to rbm and srbm machines, not ${o.model}`);
  if (o.model !== 'potts' && opts.states) throw new ModelError(`states applies to potts machines, not ${o.model} (binary)`);
  const hidden = visibleOnly ? 0 : o.hidden || 0;
  checkCount('hidden', hidden, visibleOnly ? 0 : 1, MAX_CHAINS);
  checkCount('cdSteps', o.cdSteps, 1, MAX_LOOP_COUNT);
  checkCount('particles', o.particles, 1, MAX_CHAINS);
  checkCount('batch', o.batch, 1);
  checkCount('epochs', o.epochs, 0);
  for (const [name, x, lo] of [['learningRate', o.learningRate, 0], ['weightDecay', o.weightDecay, 0], ['momentum', o.momentum, 0], ['visibleRate', o.visibleRate, 0]] as const) {
    if (!(typeof x === 'number' && Number.isFinite(x) && x >= lo)) throw new ModelError(`${name} must be a finite number ≥ ${lo}, got ${x}`);
  }
  // 0 stopped every run in its first epoch as "diverged" (the initial couplings are not 0).
  if (!(typeof o.maxWeight === 'number' && Number.isFinite(o.maxWeight) && o.maxWeight > 0)) throw new ModelError(`maxWeight must be a finite number > 0, got ${o.maxWeight}`);
  // Options of another sampler or machine, refused rather than ignored (the settings echoed them as if used).
  if ((opts.leapfrogSteps !== undefined || opts.stepSize !== undefined) && o.sampler !== 'dhmc') throw new ModelError(`leapfrogSteps and stepSize apply to sampler 'dhmc', not '${o.sampler}'`);
  if (opts.shiftEpsilon !== undefined && o.sampler !== 'blockgibbs' && o.sampler !== 'dhmc') throw new ModelError(`shiftEpsilon applies to samplers 'blockgibbs' and 'dhmc' (the Gaussian units' shift), not '${o.sampler}'`);
  if (opts.visibleRate !== undefined && o.model === 'rbm') throw new ModelError("visibleRate applies to machines with visible–visible couplings (boltzmann, srbm, potts), not 'rbm'");
  // An RBM has no Gaussian layer: its blockgibbs and dhmc are its own block Gibbs, and these went unused.
  const gaussianOnly = (['leapfrogSteps', 'stepSize', 'shiftEpsilon'] as const).filter((k) => opts[k] !== undefined);
  if (o.model === 'rbm' && gaussianOnly.length > 0) throw new ModelError(`${gaussianOnly.join(' and ')} apply to the Gaussian layer of machines with visible–visible couplings (boltzmann, srbm, potts); an rbm's samplers are its block Gibbs`);
  // CD runs one chain per minibatch row: a particle count went unused, echoed in settings as if used.
  if (opts.particles !== undefined && o.method === 'cd') throw new ModelError('particles applies to method \'pcd\' (persistent particles); \'cd\' runs one chain per minibatch row (batch)');
  if (test !== undefined && opts.evaluate === false) throw new ModelError('test data are for the log-likelihood evaluation, and evaluate is false');
  if (opts.likelihood !== undefined && opts.evaluate === false) throw new ModelError('likelihood options apply when the log-likelihood is evaluated, and evaluate is false');
  // A log Z given beforehand is some other model's: the learned one does not exist yet (logZ 0 gave a training log-likelihood of −0.44 ± 0 against −4.03).
  if (opts.likelihood?.logZ !== undefined) throw new ModelError('likelihood.logZ cannot be given to learn(): it would be the log Z of another model than the one learned (learn estimates it, and reuses the training data\'s for the test data)');
  if (o.equivalentRBM && o.model !== 'boltzmann' && o.model !== 'srbm') throw new ModelError(`equivalentRBM applies to boltzmann and srbm machines (visible–visible couplings), not ${o.model}`);
  if (o.momentum >= 1) throw new ModelError(`momentum must be below 1, got ${o.momentum}`);
  if (!(data.rows >= 1 && data.cols >= 1)) throw new ModelError('no data to learn from');
  if (!Number.isInteger(data.rows) || !Number.isInteger(data.cols)) throw new ModelError(`the data's rows and cols must be integers, got ${data.rows} × ${data.cols}`);
  if (data.values.length !== data.rows * data.cols) throw new ModelError(`data has ${data.values.length} values, expected ${data.rows} × ${data.cols}`);
  checkStates(data, Infinity);
  if (test) {
    if (!(test.rows >= 1)) throw new ModelError('the test data have no rows');
    if (test.cols !== data.cols) throw new ModelError(`the test data have ${test.cols} columns, the training data ${data.cols}`);
    if (test.values.length !== test.rows * test.cols) throw new ModelError(`the test data have ${test.values.length} values, expected ${test.rows} × ${test.cols}`);
  }
  // Potts: K from the training and test data (at least 2) unless given.
  let top = 0;
  for (const d of test ? [data, test] : [data]) for (let i = 0; i < d.values.length; i++) top = Math.max(top, d.values[i]);
  const states = o.model === 'potts' ? (o.states || Math.max(2, top + 1)) : 2;
  if (o.model === 'potts') checkCount('states', states, Math.max(2, top + 1), 255);
  else checkStates(data, 2);
  if (test) {
    try {
      checkStates(test, states);
    } catch (e) {
      throw new ModelError(`test ${(e as Error).message}`);
    }
  }
  if (o.evaluate) checkLikelihoodOptions(likelihood);
  // Its columns and states are known now: a bad base was refused only after the whole run.
  if (o.evaluate && likelihood?.baseData) checkBaseData(likelihood.baseData, data.cols, states);
  const [seedLo, seedHi] = seedWords(o.seed);
  const t0 = performance.now();

  const B = Math.min(o.batch, data.rows);
  const m = new BoundMachine(engine, o.model, data.cols, hidden, states);
  // The kernels see bits: nV visible bits a data row (Potts: one-hot rows of K bits a unit).
  const ar = m.arena, k = engine.kernels, n = m.nBits, nnz = Math.max(1, m.nnz), nV = m.visibleBits;
  // Units (Potts: K bits each): every particle kernel counts a unit's change of state once.
  const units = n / m.width;
  try {
    const P = o.method === 'pcd' ? o.particles : B;
    const particleBytes = k.learnParticleBytes(m.header) >>> 0;
    engine.ensureFits((m.width + 1) * data.values.length + P * particleBytes + 3 * 8 * (n + nnz) + 64 * n + 12 * data.rows + 4 * B + 1024, `learning a ${o.model} on ${data.rows} samples`, P * particleBytes);
    const dp = m.loadData(data);
    const rowsPtr = ar.allocI32(B), order = new Int32Array(data.rows).map((_, i) => i);
    const posA = ar.allocF64(n), negA = ar.allocF64(n), velA = ar.allocF64(n), x = ar.alloc(k.learnAccumulateScratchBytes(m.header) >>> 0);
    const posW = ar.allocF64(nnz), negW = ar.allocF64(nnz), velW = ar.allocF64(nnz);
    const out = ar.allocF64(2);
    const rng = ar.alloc(k.rngStateBytes() >>> 0), uniforms = ar.allocF64(Math.max(data.rows, nnz / 2, 1));
    const particles = ar.alloc(P * particleBytes);
    const kernel = new ParticleKernel(engine, m, o.sampler, o);

    // Start: visible biases at the data's log-odds (Potts: log frequencies), hidden at 0, couplings
    // N(0, 0.01²) (breaks the hidden units' symmetry).
    const init = initialParams(engine, m, data, seedLo, seedHi, rng, uniforms);
    m.set(init);
    const warnings = unboundedWarnings(engine, m, data, o.weightDecay, dp);
    let factor: VisibleFactor | null = null;
    if (o.equivalentRBM) {
      const nn = data.cols * data.cols, normals = ar.allocF64(nn);
      k.rngFillNormal(rng, normals, nn);
      factor = new VisibleFactor(engine, m, ar.readF64(normals, nn));
      kernel.layer?.useFactor(factor.F, factor.d);
    }
    engine.call('learn particles init', (kk) => kk.learnParticlesInit(m.header, particles, P, seedLo, seedHi, 0, PARTICLE_STREAM));
    k.rngSeed(rng, seedLo, seedHi, 0, SHUFFLE_STREAM);

    const batches = Math.ceil(data.rows / B), total = Math.max(1, o.epochs * batches);
    const epochs: EpochStats[] = [];
    // The last good state of F too: a run that diverged in its first epoch returned the diverged F.
    let goodFactor: Float64Array | null = factor?.read() ?? null;
    let good = m.get(), diverged: string | null = null, update = 0, refreshed = 0;
    for (let epoch = 1; epoch <= o.epochs && !diverged; epoch++) {
      shuffle(engine, rng, uniforms, order);
      let sqSum = 0, flips = 0, particleSweeps = 0, rate = o.learningRate, biggest = 0;
      for (let b = 0; b < batches; b++) {
        const lo = b * B, cnt = Math.min(B, data.rows - lo);
        ar.i32(rowsPtr, B).set(order.subarray(lo, lo + cnt));
        rate = o.schedule === 'linear' ? o.learningRate * (1 - update / total) : o.learningRate;
        const pCount = o.method === 'pcd' ? P : cnt;
        engine.call('learn data phase', (kk) => {
          kk.learnAccumulate(m.header, dp, nV, rowsPtr, cnt, nV, posA, posW, x);
          if (o.method === 'cd') kk.learnParticlesFromData(m.header, particles, cnt, dp, nV, rowsPtr, nV);
        });
        flips += kernel.advance(particles, pCount, o.cdSteps);
        particleSweeps += pCount * o.cdSteps;
        engine.call('learn step', (kk) => {
          kk.learnAccumulate(m.header, particles + (k.rngStateBytes() >>> 0), particleBytes, 0, pCount, nV, negA, negW, x);
          factor?.gradient(posA, posW, negA, negW, 1 / cnt, 1 / pCount);
          biggest = kk.learnUpdate(m.header, nV, posA, posW, negA, negW, velA, velW, 1 / cnt, 1 / pCount, rate, o.visibleRate, o.weightDecay, o.momentum, out);
          if (factor) biggest = Math.max(biggest, factor.apply(rate * o.visibleRate, o.momentum, o.weightDecay));
        });
        update++;
        sqSum += Math.sqrt(ar.f64(out, 1)[0] / (n + m.nnz / 2));
        if (!(biggest <= o.maxWeight)) {
          diverged = `learning diverged in epoch ${epoch} (a parameter became ${Number.isNaN(biggest) ? 'NaN' : `${biggest.toPrecision(3)}, past the limit ${o.maxWeight} (maxWeight, --max-weight)`}); lower the learning rate or add weight decay. The model is the one after epoch ${epoch - 1}.`;
          break;
        }
      }
      if (diverged) break;
      good = m.get();
      goodFactor = factor?.read() ?? null;
      const st: EpochStats = { epoch, learningRate: rate, gradientRms: sqSum / batches, maxAbsParameter: biggest, changeRate: flips / (particleSweeps * units) };
      // An RBM has no Gaussian layer to re-factor or move by HMC (both samplers are its block Gibbs):
      // its refreshSeconds 0, acceptance 1 and stepSize 0.1 described nothing that ran.
      const layer = kernel.layer;
      if (layer && layer.m > 0) {
        if (!o.equivalentRBM) Object.assign(st, { shiftAlpha: layer.info.alpha, lambdaMin: layer.info.lambdaMin });
        st.refreshSeconds = layer.info.refreshSeconds - refreshed;
        refreshed = layer.info.refreshSeconds;
        if (o.sampler === 'dhmc') Object.assign(st, { acceptance: layer.info.acceptance, stepSize: layer.info.stepSize });
      }
      epochs.push(st);
      // This epoch's parameters, a copy per call (the getter returned the live result object, whose
      // values were the last epoch's by the time a saved getter was called).
      const params = good;
      onEpoch?.(st, () => copyParams(params));
    }
    // particles: the chains used (CD: one a minibatch row).
    const settings = { ...rest, hidden, states, batch: B, particles: P } as LearnResult['settings'];
    const result: LearnResult = { settings, params: good, model: machineModel(good), epochs, diverged, warnings, seconds: 0 };
    if (factor) result.factor = goodFactor ?? factor.read();
    if (o.evaluate && !diverged) {
      // AIS from the run's seed (on its own stream), unless likelihood.seed: every --seed gave seed 1's AIS.
      result.train = logLikelihood(engine, good, data, { baseData: data, seed: o.seed, ...definedOnly(likelihood ?? {}) });
      // The test data share the model's log Z: reuse the training run's estimate (one AIS, not two).
      const shared = result.train.method === 'ais' ? { logZ: { value: result.train.logZ, stdErr: result.train.logZStdErr } } : {};
      if (test) {
        result.test = logLikelihood(engine, good, test, { baseData: data, seed: o.seed, ...definedOnly(likelihood ?? {}), ...shared });
        // And its caveats: they are about that log Z.
        if (result.train.method === 'ais') Object.assign(result.test, { aisRuns: result.train.aisRuns, aisSteps: result.train.aisSteps, aisEss: result.train.aisEss, warnings: result.train.warnings.slice() });
      }
    }
    result.seconds = (performance.now() - t0) / 1000;
    return result;
  } finally {
    m.dispose();
  }
}

/** A copy of the parameters (their arrays too). */
function copyParams(p: MachineParams): MachineParams {
  return { ...p, a: p.a.slice(), w: p.w.slice(), pairs: p.pairs.slice() };
}

/** Every option learn() takes. */
const LEARN_OPTION_KEYS: readonly string[] = [...Object.keys(LEARN_DEFAULTS), 'onEpoch', 'test', 'likelihood'];

function initialParams(engine: Engine, m: BoundMachine, data: BinaryData, seedLo: number, seedHi: number, rng: number, buf: number): MachineParams {
  const a = new Float64Array(m.nBits), E = m.nnz / 2;
  a.set(baseRateBiases(data, m.states, m.width > 1));
  const k = engine.kernels;
  k.rngSeed(rng, seedLo, seedHi, 0, INIT_STREAM);
  k.rngFillNormal(rng, buf, E);
  const w = m.arena.f64(buf, E).map((z) => 0.01 * z);
  return { kind: m.kind, nVisible: m.nVisible, nHidden: m.nHidden, states: m.states, a, w, pairs: m.pairs };
}

/** Fisher–Yates with uniforms from the run's own stream. */
function shuffle(engine: Engine, rng: number, buf: number, order: Int32Array): void {
  const N = order.length;
  engine.kernels.rngFillUniform32(rng, buf, N);
  const u = new Float64Array(engine.kernels.memory.buffer, buf, N);
  for (let i = N - 1; i > 0; i--) {
    const j = Math.min(i, Math.floor(u[i] * (i + 1)));
    const t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
}

export { type BinaryData } from './likelihood.ts';
