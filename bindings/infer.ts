// One entry point for every method; the CLI and the library both go through here.
import type { Engine } from './core/engine.ts';
import type { Model } from './core/model.ts';
import type { InferenceResult } from './core/result.ts';
import { exactInference, type ExactOptions } from './exact/exact.ts';
import { runGibbs, type GibbsOptions } from './samplers/gibbs.ts';
import { gibbsKernel, runFactorGibbs } from './samplers/factor-gibbs.ts';
import { runMeanField, type MeanFieldOptions } from './variational/meanfield.ts';
import { runMFRP, type MFRPOptions } from './variational/mfrp.ts';
import { runBlockGibbs, type BlockGibbsOptions } from './samplers/blockgibbs.ts';
import { runDHMC, type DHMCOptions } from './samplers/dhmc.ts';
import { runMALA, type MALAOptions } from './samplers/langevin.ts';
import { buildRelaxation, relaxationDiagnostics, type Relaxation, type RelaxationOptions } from './relax/relaxation.ts';
import { fftApplicable, fftRelaxation } from './relax/fft-factor.ts';
import { estimateLogZ, LOGZ_ESTIMATORS, type AISOptions, type LogZEstimator } from './logz/logz.ts';
import { ModelError } from './core/errors.ts';
import { definedOnly } from './core/options.ts';
import { ensureChainWorkFits } from './core/bound.ts';

export const METHODS = ['exact', 'gibbs', 'blockgibbs', 'dhmc', 'mala', 'mf', 'mfrp'] as const;
export type Method = (typeof METHODS)[number];

/** Options of every method, flat; each method reads the ones it knows (see each run* function). */
export type InferOptions = GibbsOptions & BlockGibbsOptions & DHMCOptions & MALAOptions & MeanFieldOptions & MFRPOptions & {
  method?: Method;
  exact?: ExactOptions;
  /** Also estimate log Z with this estimator (its own run, same seed); the result reports it. */
  logz?: LogZEstimator;
  /** With logz 'ais': its runs, temperatures, population size and transition (runAIS's defaults otherwise). */
  ais?: Pick<AISOptions, 'runs' | 'steps' | 'population' | 'transition'>;
};

/**
 * The relaxation for the continuous methods. 'auto': the FFT factor for binary models on periodic
 * power-of-two lattices with translation-invariant couplings (and the default shift), otherwise
 * buildRelaxation's choice (sparse Cholesky for sparse W, dense otherwise).
 */
export function relaxationFor(engine: Engine, model: Model, opts: RelaxationOptions = {}): Relaxation {
  const factor = opts.factor ?? 'auto';
  const constantShift = opts.shift === undefined || opts.shift === 'martens';
  if (factor === 'fft' || (factor === 'auto' && constantShift && fftApplicable(model))) {
    if (!constantShift) throw new ModelError('the FFT factor needs a constant shift (--shift martens)');
    return fftRelaxation(engine, model, opts.margin);
  }
  return buildRelaxation(model, { shift: opts.shift, margin: opts.margin, factor });
}

export function infer(engine: Engine, model: Model, opts: InferOptions = {}): InferenceResult {
  return withLogZ(engine, model, inferMarginals(engine, model, opts), opts);
}

/** Adds the log Z estimate opts.logz asks for (if any) to a marginals result — infer's second half. */
export function withLogZ(engine: Engine, model: Model, result: InferenceResult, opts: InferOptions): InferenceResult {
  if (opts.logz === undefined) return result;
  if (!LOGZ_ESTIMATORS.includes(opts.logz)) throw new ModelError(`unknown log Z estimator "${opts.logz}"; expected ${LOGZ_ESTIMATORS.join(', ')}`);
  const { seed, chains, samples, burnin, signal } = opts;
  if (opts.ais !== undefined && opts.logz !== 'ais') throw new ModelError(`AIS options apply to logz 'ais', not '${opts.logz}'`);
  const est = estimateLogZ(engine, model, { estimator: opts.logz, seed, chains, samples, burnin, signal, ...definedOnly(opts.ais ?? {}) } as Parameters<typeof estimateLogZ>[2]);
  const diagnostics: InferenceResult['diagnostics'] = { ...result.diagnostics, logzEstimator: opts.logz, logzSeconds: est.seconds };
  for (const [k, v] of Object.entries(est.diagnostics)) diagnostics[`logz.${k}`] = v;
  return { ...result, logZ: est.logZ, logZStdErr: est.logZStdErr, logZKind: 'estimate', diagnostics };
}

function inferMarginals(engine: Engine, model: Model, opts: InferOptions): InferenceResult {
  const method = opts.method ?? 'exact';
  switch (method) {
    case 'exact': {
      const r = exactInference(engine, model, opts.exact);
      return {
        method: 'exact',
        logZ: r.logZ,
        logZStdErr: null,
        logZKind: 'exact',
        marginals: r.marginals,
        marginalStdErr: null,
        diagnostics: { algorithm: r.method, treewidth: r.treewidth, maxTableEntries: r.maxTableEntries, ordering: r.ordering, kernel: r.algorithm, largestMessage: r.largestMessage, flops: r.flops },
        seconds: r.seconds,
        partial: false,
      };
    }
    case 'gibbs':
      // Pairwise models: the canonical form's kernel (faster); higher-order ones: the factor graph's.
      return gibbsKernel(model) === 'canonical' ? runGibbs(engine, model, opts) : runFactorGibbs(engine, model, opts);
    case 'blockgibbs':
      return runBlockGibbs(engine, relaxationFor(engine, model, opts), opts);
    case 'dhmc':
    case 'mala': {
      ensureChainWorkFits(engine, model, method);
      const rel = relaxationFor(engine, model, opts);
      const r = method === 'dhmc' ? runDHMC(engine, rel, opts) : runMALA(engine, rel, opts);
      return { ...r, diagnostics: { ...r.diagnostics, ...relaxationDiagnostics(rel) } };
    }
    case 'mf':
      return runMeanField(engine, model, opts);
    case 'mfrp':
      return runMFRP(engine, model, opts);
    default:
      throw new ModelError(`unknown method "${method}"; expected one of ${METHODS.join(', ')}`);
  }
}
