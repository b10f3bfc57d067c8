// One entry point for every method; the CLI and the library both go through here.
import type { Engine } from './core/engine.ts';
import type { Model } from './core/model.ts';
import type { InferenceResult } from './core/result.ts';
import { EXACT_OPTION_KEYS, exactInference, type ExactOptions, type ExactResult } from './exact/exact.ts';
import { GIBBS_OPTION_KEYS, runGibbs, type GibbsOptions } from './samplers/gibbs.ts';
import { gibbsKernel, runFactorGibbs } from './samplers/factor-gibbs.ts';
import { runTreeGibbs, TREE_GIBBS_OPTION_KEYS, type TreeGibbsOptions } from './samplers/treegibbs.ts';
import { MEAN_FIELD_OPTION_KEYS, runMeanField, type MeanFieldOptions } from './variational/meanfield.ts';
import { MFRP_OPTION_KEYS, runMFRP, type MFRPOptions } from './variational/mfrp.ts';
import { BLOCK_GIBBS_OPTION_KEYS, runBlockGibbs, type BlockGibbsOptions } from './samplers/blockgibbs.ts';
import { DHMC_OPTION_KEYS, runDHMC, type DHMCOptions } from './samplers/dhmc.ts';
import { MALA_OPTION_KEYS, runMALA, type MALAOptions } from './samplers/langevin.ts';
import { PT_OPTION_KEYS, runTempering, type PTOptions } from './samplers/tempering.ts';
import { CLUSTER_OPTION_KEYS, runCluster } from './samplers/cluster.ts';
import { buildRelaxation, relaxationDiagnostics, RELAXATION_OPTION_KEYS, type Relaxation, type RelaxationOptions } from './relax/relaxation.ts';
import { fftApplicable, fftRelaxation } from './relax/fft-factor.ts';
import { estimateLogZ, LOGZ_ESTIMATORS, type AISOptions, type EstimateLogZOptions, type LogZEstimate, type LogZEstimator } from './logz/logz.ts';
import { ModelError } from './core/errors.ts';
import { checkOptionKeys, checkSignal, definedOnly, optionsFor } from './core/options.ts';
import { withSampledChecks } from './core/sampled-checks.ts';
import { refuseZeroModel } from './core/feasible.ts';
import { ensureChainWorkFits } from './core/bound.ts';
import { BP_OPTION_KEYS, runBP, type BPOptions } from './variational/bp.ts';
import { runTRW, TRW_OPTION_KEYS, type TRWOptions } from './variational/trw.ts';
import { BOUNDS_OPTION_KEYS, runBounds } from './variational/bounds.ts';

// Re-exported for inferAsync and runQueued; it lives in core/feasible.ts, where the run* functions reach it too.
export { refuseZeroModel };

/** Every method `infer` runs, as named in `InferOptions.method` and the CLI's `--method`. */
export const METHODS = ['exact', 'gibbs', 'treegibbs', 'blockgibbs', 'dhmc', 'mala', 'mf', 'mfrp', 'bp', 'trw', 'bounds', 'pt', 'sw', 'wolff'] as const;
/** One of `METHODS`. */
export type Method = (typeof METHODS)[number];

/** Options of every method, flat; each method reads the ones it knows (see each run* function). */
export type InferOptions = GibbsOptions & Pick<TreeGibbsOptions, 'lanes' | 'raoBlackwell'> & PTOptions & BlockGibbsOptions & DHMCOptions & MALAOptions & MeanFieldOptions & MFRPOptions & BPOptions & TRWOptions & {
  /** The method (default 'exact'). */
  method?: Method;
  /** Options of exact inference (its table-size limit and ordering). */
  exact?: ExactOptions;
  /** Also estimate log Z with this estimator (its own run, same seed); the result reports it. */
  logz?: LogZEstimator;
  /** With logz 'ais': its runs, temperatures, population size, transition, lanes and precision (runAIS's defaults otherwise). */
  ais?: Pick<AISOptions, 'runs' | 'steps' | 'population' | 'transition' | 'lanes' | 'precision'>;
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
  return buildRelaxation(engine, model, { shift: opts.shift, margin: opts.margin, factor });
}

/**
 * Runs one inference method on a model: node marginals for every method; log Z exactly ('exact'),
 * as a lower bound ('mf', 'mfrp'), or estimated with a standard error when `logz` is given. The
 * samplers' marginals come with Monte Carlo standard errors. Throws ModelError on bad input and
 * EngineError when the engine refuses (e.g. treewidth past the exact limit).
 */
export function infer(engine: Engine, model: Model, opts: InferOptions = {}): InferenceResult {
  checkInferOptions(opts);
  // The estimator's request checked before the method runs (a refusal came after the sampling).
  logZRequest(opts);
  return { logZLower: null, logZUpper: null, ...withLogZ(engine, model, inferMarginals(engine, model, opts), opts) };
}

/**
 * Every option infer takes (InferOptions' keys; test/api-validation.test.ts checks this list against
 * the type), and those of its `exact` and `ais` objects: a key outside them is refused, not ignored
 * ({ sample: 10 } ran 2000 samples, { methd: 'gibbs' } exact inference, and the names differ between
 * methods: mean field's `tol`, BP's `tolerance`).
 */
export const INFER_OPTION_KEYS: readonly string[] = [
  'adaptLadder', 'adaptMass', 'ais', 'batches', 'betaMin', 'budget', 'budgetFactor', 'burnin', 'chains', 'damping', 'empirical', 'exact',
  'factor', 'integrator', 'ladder', 'lanes', 'leapfrogSteps', 'logz', 'margin', 'maxConstraints', 'maxIterations', 'maxSweeps', 'method',
  'minConstraints', 'moves', 'onProgress', 'orderedStarts', 'pairs', 'parametrisation', 'precision', 'probabilityTable', 'raoBlackwell',
  'relaxation', 'replicas', 'restarts', 'samples', 'scan', 'schedule', 'seed', 'shift', 'signal', 'stepSize', 'targetAccept', 'tol', 'tolerance', 'trace',
  'traceBudget', 'trials', 'trwSteps', 'trwTrees',
];
/** ExactOptions' keys (infer's `exact`), from exact.ts. */
export { EXACT_OPTION_KEYS };
/** infer's `ais` keys. */
export const AIS_OPTION_KEYS: readonly string[] = ['lanes', 'population', 'precision', 'runs', 'steps', 'transition'];

/**
 * The options each method reads besides SHARED_OPTION_KEYS: its run* function's (infer passes it
 * those alone: each refuses the rest), and the relaxation's where infer builds one. infer refuses
 * the others (mean field's tolerance is `tol`, BP's `tolerance`: the wrong one ran the default).
 */
export const METHOD_OPTION_KEYS: Readonly<Record<Method, readonly string[]>> = {
  exact: ['exact'],
  gibbs: GIBBS_OPTION_KEYS,
  treegibbs: TREE_GIBBS_OPTION_KEYS,
  blockgibbs: BLOCK_GIBBS_OPTION_KEYS,
  dhmc: [...DHMC_OPTION_KEYS, ...RELAXATION_OPTION_KEYS],
  mala: [...MALA_OPTION_KEYS, ...RELAXATION_OPTION_KEYS],
  mf: MEAN_FIELD_OPTION_KEYS,
  mfrp: MFRP_OPTION_KEYS,
  bp: BP_OPTION_KEYS,
  trw: TRW_OPTION_KEYS,
  bounds: BOUNDS_OPTION_KEYS,
  // shift and factor: the relaxation of moves 'hmc' (as `relaxation` is).
  pt: [...PT_OPTION_KEYS, 'shift', 'factor'],
  sw: CLUSTER_OPTION_KEYS,
  wolff: CLUSTER_OPTION_KEYS,
};

/**
 * The options infer takes whatever the method. `seed` too: a deterministic method (exact, bp, trw)
 * has no use for it, but a seed given to every method of a comparison is no mistake (the CLI takes
 * --seed with every method); the methods that do not read it are not given it.
 */
export const SHARED_OPTION_KEYS: readonly string[] = ['method', 'logz', 'onProgress', 'signal', 'seed'];

/**
 * The options each log Z estimator reads (those logZRequest passes it; AIS takes shift and factor
 * only with ais.transition 'relaxed' or 'hmc', see logZOptionKeys).
 */
const LOGZ_OPTION_KEYS: Readonly<Record<LogZEstimator, readonly string[]>> = {
  zhang: ['seed', 'chains', 'samples', 'burnin', 'shift', 'factor'],
  mirror: ['seed', 'chains', 'samples', 'burnin', 'shift', 'factor'],
  chib: ['seed', 'chains', 'samples', 'burnin'],
  ais: ['seed', 'ais'],
};

/** The options the log Z estimate that `opts` asks for reads (none without logz). */
export function logZOptionKeys(opts: InferOptions): readonly string[] {
  const keys = opts.logz === undefined ? [] : LOGZ_OPTION_KEYS[opts.logz] ?? [];
  return opts.logz === 'ais' && relaxedAIS(opts) ? [...keys, 'shift', 'factor'] : keys;
}

/**
 * Refuses an options object that is not one, a key no method reads (with the nearest known name), a
 * key neither the method (`defaultMethod` when opts.method is not given) nor the log Z estimate
 * reads (naming the methods that do), and an onProgress that is not a function. `extra`: keys the
 * caller reads itself (inferAsync's `workers`).
 */
export function checkInferOptions(opts: InferOptions, extra: readonly string[] = [], defaultMethod: Method = 'exact'): void {
  checkOptionKeys(opts, extra.length ? [...INFER_OPTION_KEYS, ...extra] : INFER_OPTION_KEYS, 'options');
  if (opts.onProgress !== undefined && typeof opts.onProgress !== 'function') throw new ModelError(`onProgress must be a function, got ${typeof opts.onProgress}`);
  checkSignal(opts.signal);
  const method = opts.method ?? defaultMethod;
  // An unknown method is refused where it would run, with the list of methods.
  if (!METHODS.includes(method)) return;
  const taken = [...SHARED_OPTION_KEYS, ...METHOD_OPTION_KEYS[method], ...logZOptionKeys(opts), ...extra];
  checkOptionKeys(opts, taken, 'options', (k) => appliesTo(k, method, opts.logz));
  // Each read only where it applies (refused above elsewhere).
  if (taken.includes('exact') && opts.exact !== undefined) checkOptionKeys(opts.exact, EXACT_OPTION_KEYS, 'exact');
  if (taken.includes('ais') && opts.ais !== undefined) checkOptionKeys(opts.ais, AIS_OPTION_KEYS, 'ais');
}

/** Where a known option `key` applies, for a method (and estimator) that does not read it: "applies to method bp, not mf". */
function appliesTo(key: string, method: Method, logz: LogZEstimator | undefined): string {
  const methods = METHODS.filter((m) => METHOD_OPTION_KEYS[m].includes(key));
  const estimators = LOGZ_ESTIMATORS.filter((e) => LOGZ_OPTION_KEYS[e].includes(key)) as string[];
  if (key === 'shift' || key === 'factor') estimators.push("ais with ais.transition 'relaxed' or 'hmc'");
  const where = [methods.length ? `method${methods.length > 1 ? 's' : ''} ${methods.join(', ')}` : '', estimators.length ? `logz ${estimators.join(', ')}` : ''];
  return `applies to ${where.filter(Boolean).join(' and to ')}, not ${method}${logz ? ` with logz ${logz}` : ''}`;
}

/**
 * The options of `opts` that its method's own run reads (`defaultMethod` when opts.method is not
 * given), without logz and what only the estimate reads: inferAsync and the queue run the method
 * apart from the estimate.
 */
export function methodOptions(opts: InferOptions, defaultMethod: Method = 'exact'): InferOptions {
  const method = opts.method ?? defaultMethod;
  return optionsFor(opts, ['method', 'onProgress', 'signal', ...(METHOD_OPTION_KEYS[method] ?? [])]);
}

/** The result with its `warnings` array present (empty when the method had none). */
export function withWarnings(r: InferenceResult, more: readonly string[] = []): InferenceResult {
  return { ...r, warnings: [...(r.warnings ?? []), ...more] };
}

/**
 * A result whose log Z estimate was stopped before any of it completed (`started`: AIS pieces were
 * running) or before it began: the method's result, partial, with the warning that says so
 * (inferAsync's phases, the CLI, the queue client).
 */
export function withoutStoppedEstimate(r: InferenceResult, estimator: string, started = false): InferenceResult {
  const why = started ? 'stopped before any population or group of runs completed: not estimated' : 'not estimated: the run was stopped before it';
  return withWarnings({ ...r, partial: true }, [`log Z (${estimator}): ${why}`]);
}

/** Adds the log Z estimate opts.logz asks for (if any) to a marginals result — infer's second half. */
export function withLogZ(engine: Engine, model: Model, result: InferenceResult, opts: InferOptions): InferenceResult {
  const request = logZRequest(opts);
  const checked = withSampledChecks(model, withWarnings(result));
  return request === null ? checked : withEstimate(checked, request, estimateLogZ(engine, model, { ...request, onProgress: opts.onProgress }));
}

/** The estimateLogZ options that opts.logz asks for (null: none), validated. */
export function logZRequest(opts: InferOptions): EstimateLogZOptions | null {
  if (opts.logz === undefined) return null;
  if (!LOGZ_ESTIMATORS.includes(opts.logz)) throw new ModelError(`unknown log Z estimator "${opts.logz}"; expected ${LOGZ_ESTIMATORS.join(', ')}`);
  // The options the estimator reads (logZOptionKeys; checkInferOptions refused the others, `ais` with another estimator too).
  const own = opts.logz === 'ais' ? definedOnly(opts.ais ?? {}) : { chains: opts.chains, samples: opts.samples, burnin: opts.burnin };
  // The run's shift and factor reach the estimators that build a relaxation (they were dropped).
  const relaxed = opts.logz === 'zhang' || opts.logz === 'mirror' || (opts.logz === 'ais' && relaxedAIS(opts));
  if (relaxed && opts.factor === 'fft') throw new ModelError(`factor 'fft' is the samplers' (lattice models); the logz '${opts.logz}' estimator builds its relaxation with another factor`);
  const relaxation = relaxed && (opts.shift !== undefined || opts.factor !== undefined) ? { relaxation: definedOnly({ shift: opts.shift, factor: opts.factor }) } : {};
  return { estimator: opts.logz, seed: opts.seed, signal: opts.signal, ...own, ...relaxation } as EstimateLogZOptions;
}

/** Whether opts.ais asks for AIS on the relaxation (transition 'relaxed' or 'hmc'), which takes the run's shift and factor. */
function relaxedAIS(opts: InferOptions): boolean {
  return opts.ais?.transition === 'relaxed' || opts.ais?.transition === 'hmc';
}

/** A marginals result with a log Z estimate: as infer reports it (the estimator's diagnostics under logz.*, the method's own log Z as methodLogZ). */
export function withEstimate(result: InferenceResult, request: EstimateLogZOptions, est: LogZEstimate): InferenceResult {
  const diagnostics: InferenceResult['diagnostics'] = { ...result.diagnostics, logzEstimator: request.estimator, logzSeconds: est.seconds };
  // The method's own log Z is kept beside the estimate: exact's value and trw's certified bound vanished.
  if (result.logZ !== null && result.logZ !== undefined) (diagnostics.methodLogZ = result.logZ), (diagnostics.methodLogZKind = result.logZKind);
  for (const [k, v] of Object.entries(est.diagnostics)) diagnostics[`logz.${k}`] = v;
  // A cut-short estimate makes the result partial (a queued mf run interrupted mid-AIS said partial: false).
  const partial = result.partial || est.diagnostics.partial === true;
  return withWarnings({ ...result, logZ: est.logZ, logZStdErr: est.logZStdErr, logZKind: 'estimate', diagnostics, partial }, (est.warnings ?? []).map((w) => `log Z (${request.estimator}): ${w}`));
}

/** The exact result's diagnostics (bucket elimination adds its slices and planned memory). */
export function exactDiagnostics(r: ExactResult): InferenceResult['diagnostics'] {
  const d: InferenceResult['diagnostics'] = { algorithm: r.method, treewidth: r.treewidth, maxTableEntries: r.maxTableEntries, ordering: r.ordering, kernel: r.algorithm, largestMessage: r.largestMessage, flops: r.flops };
  if (r.slices !== undefined) {
    d.slices = r.slices;
    d.slicedVariables = r.slicedVariables!.join(',');
    d.memoryBytes = r.memoryBytes!;
    if (r.planSearch) d.planSearch = r.planSearch;
  }
  return d;
}

/** An exact result as infer returns it. */
export function exactInferenceResult(r: ExactResult): InferenceResult {
  return { method: 'exact', logZ: r.logZ, logZStdErr: null, logZKind: 'exact', marginals: r.marginals, marginalStdErr: null, diagnostics: exactDiagnostics(r), seconds: r.seconds, partial: false };
}

function inferMarginals(engine: Engine, model: Model, opts: InferOptions): InferenceResult {
  const method = opts.method ?? 'exact';
  refuseZeroModel(model, method, engine);
  switch (method) {
    case 'exact':
      return exactInferenceResult(exactInference(engine, model, { ...opts.exact, onProgress: opts.onProgress }));
    // Each run* function gets the options it reads (it refuses the others: those of the estimate, the relaxation's).
    case 'gibbs': {
      // Pairwise models: the canonical form's kernel (faster); higher-order ones: the factor graph's.
      const o = optionsFor(opts, GIBBS_OPTION_KEYS);
      return gibbsKernel(model) === 'canonical' ? runGibbs(engine, model, o) : runFactorGibbs(engine, model, o);
    }
    case 'treegibbs':
      return runTreeGibbs(engine, model, optionsFor(opts, TREE_GIBBS_OPTION_KEYS));
    case 'blockgibbs':
      return runBlockGibbs(engine, relaxationFor(engine, model, opts), optionsFor(opts, BLOCK_GIBBS_OPTION_KEYS));
    case 'dhmc':
    case 'mala': {
      ensureChainWorkFits(engine, model, method);
      const rel = relaxationFor(engine, model, opts);
      const r = method === 'dhmc' ? runDHMC(engine, rel, optionsFor(opts, DHMC_OPTION_KEYS)) : runMALA(engine, rel, optionsFor(opts, MALA_OPTION_KEYS));
      return { ...r, diagnostics: { ...r.diagnostics, ...relaxationDiagnostics(rel) } };
    }
    case 'mf':
      return runMeanField(engine, model, optionsFor(opts, MEAN_FIELD_OPTION_KEYS));
    case 'mfrp':
      return runMFRP(engine, model, optionsFor(opts, MFRP_OPTION_KEYS));
    case 'bp':
      return runBP(engine, model, optionsFor(opts, BP_OPTION_KEYS));
    case 'trw':
      return runTRW(engine, model, optionsFor(opts, TRW_OPTION_KEYS));
    case 'bounds':
      return runBounds(engine, model, optionsFor(opts, BOUNDS_OPTION_KEYS));
    case 'pt': {
      // HMC replicas take the relaxation's shift and factor as dhmc does.
      const o = optionsFor(opts, PT_OPTION_KEYS);
      return runTempering(engine, model, opts.moves === 'hmc' && opts.relaxation === undefined && (opts.shift !== undefined || opts.factor !== undefined) ? { ...o, relaxation: { shift: opts.shift, factor: opts.factor } } : o);
    }
    case 'sw':
    case 'wolff':
      return runCluster(engine, model, method, optionsFor(opts, CLUSTER_OPTION_KEYS));
    default:
      throw new ModelError(`unknown method "${method}"; expected one of ${METHODS.join(', ')}`);
  }
}
