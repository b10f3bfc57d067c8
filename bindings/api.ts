// Everything that runs in any JavaScript host (no Node-only imports): index.ts and browser.ts add
// the host's way of loading the module.
export { Engine, Arena } from './core/engine.ts';
export { Model, ModelBuilder, LIMITS, type Edge } from './core/model.ts';
export { ising, denseIsing, isingLattice, latticeBonds, latticeIndex, pottsLattice, boltzmann, rbm, type Coupling } from './core/builders.ts';
export { toCanonical, encode, canonicalLogPotential, bitsToMarginals, type CanonicalForm } from './core/canonical.ts';
export { exactInference, eliminationPlan, type ExactOptions, type ExactResult } from './exact/exact.ts';
export { GibbsSampler, runGibbs, GIBBS_DEFAULTS, type GibbsOptions, type GibbsState, type GibbsInfo } from './samplers/gibbs.ts';
export { GibbsLanes, coloredOrder, PRECISIONS, SCANS, type Precision, type Scan, type LanesBatch } from './samplers/gibbs-lanes.ts';
export { infer, METHODS, type Method, type InferOptions } from './infer.ts';
export { readUAI, readEvidence, applyEvidence, writeUAI, readFG, readFGWithLabels, writePR, readPR, writeMAR, readMAR } from './io/formats.ts';
export { ModelError, FormatError, EngineError } from './core/errors.ts';
export type { InferenceResult, LogZKind, Progress } from './core/result.ts';
export { runMeanField, meanFieldRestarts, meanFieldConfig, MeanFieldSolver, MF_DEFAULTS, type MeanFieldOptions, type MeanFieldKernel, type RestartsConfig, type RestartsOutcome, type AscentInfo } from './variational/meanfield.ts';
export { runMFRP, runMFRPDetailed, MFRPSolver, MFRP_DEFAULTS, MFRP_MIN_BUDGET, logMedian, type MFRPOptions, type MFRPDetail, type PerM, type TrialRecord, type Projection, type ProjectedAscent } from './variational/mfrp.ts';
export { DHMCSampler, ContinuousSampler, runDHMC, DHMC_DEFAULTS, INTEGRATORS, warmupSchedule, zhangMassFactor, type DHMCOptions, type ContinuousRunOptions, type ContinuousResult, type ContinuousInfo, type ContinuousState, type ContinuousSamplerOptions, type ContinuousTarget, type GaussianTarget, type MassSpec, type Parametrisation, type IntegratorName, type PairMarginals, type WarmupOptions } from './samplers/dhmc.ts';
export { MALASampler, ULASampler, runMALA, runULA, MALA_DEFAULTS, ULA_DEFAULTS, type MALAOptions, type ULAOptions } from './samplers/langevin.ts';
export { ess, essBulk, splitRhat, rankNormalizedRhat, mcse, autocovariance, summarizeTraces, type TraceSummary } from './samplers/diagnostics.ts';
export { buildRelaxation, relaxCanonical, DENSE_SPECTRUM_LIMIT, MIN_LAMBDA_MAX_LIMIT, DENSE_FACTOR_LIMIT, type Relaxation, type RelaxationOptions, type ShiftOption, type FactorChoice, type FactorKind } from './relax/relaxation.ts';
export { BlockGibbsSampler, runBlockGibbs, BLOCK_GIBBS_DEFAULTS, type BlockGibbsOptions, type BlockGibbsState, type BlockGibbsInfo } from './samplers/blockgibbs.ts';
export { fftFactor, fftRelaxation, fftApplicable, latticeSpectrum, translationKernel, type FFTFactorData } from './relax/fft-factor.ts';
export { BoundRelaxation, type RelaxationData, type FactorData } from './relax/relaxation-bound.ts';
export { relaxationFor } from './infer.ts';
export { estimateLogZ, runAIS, runZhangLogZ, runMirrorLogZ, runChibLogZ, logMeanExp, aisSchedule, AIS_DEFAULTS, AIS_TRANSITIONS, CHIB_DEFAULTS, RELAXED_LOGZ_DEFAULTS, LOGZ_ESTIMATORS, type LogZEstimator, type LogZEstimate, type EstimateLogZOptions, type AISOptions, type AISTransition, type ChibOptions, type RelaxedLogZOptions } from './logz/logz.ts';
export { TreeGibbsSampler, BoundTreeBlocks, type TreeGibbsState, type TreeGibbsInfo } from './samplers/treegibbs.ts';
export { treePartition, partitionFromBlocks, interactionGraph, type TreePartition } from './samplers/treeblocks.ts';
