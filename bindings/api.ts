// Everything that runs in any JavaScript host (no Node-only imports): index.ts and browser.ts add
// the host's way of loading the module.
export { Engine, Arena } from './engine.ts';
export { Model, ModelBuilder, LIMITS, type Edge } from './model.ts';
export { ising, denseIsing, isingLattice, latticeBonds, latticeIndex, pottsLattice, boltzmann, rbm, type Coupling } from './builders.ts';
export { toCanonical, encode, canonicalLogPotential, bitsToMarginals, type CanonicalForm } from './canonical.ts';
export { exactInference, eliminationPlan, type ExactOptions, type ExactResult } from './exact.ts';
export { GibbsSampler, runGibbs, GIBBS_DEFAULTS, type GibbsOptions, type GibbsState, type GibbsInfo } from './gibbs.ts';
export { infer, METHODS, type Method, type InferOptions } from './infer.ts';
export { readUAI, readEvidence, applyEvidence, writeUAI, readFG, readFGWithLabels, writePR, readPR, writeMAR, readMAR } from './formats.ts';
export { ModelError, FormatError, EngineError } from './errors.ts';
export type { InferenceResult, LogZKind, Progress } from './result.ts';
export { runMeanField, MeanFieldSolver, MF_DEFAULTS, type MeanFieldOptions, type AscentInfo } from './meanfield.ts';
export { runMFRP, runMFRPDetailed, MFRPSolver, MFRP_DEFAULTS, logMedian, type MFRPOptions, type MFRPDetail, type PerM, type TrialRecord, type Projection, type ProjectedAscent } from './mfrp.ts';
export { DHMCSampler, ContinuousSampler, runDHMC, DHMC_DEFAULTS, INTEGRATORS, warmupSchedule, zhangMassFactor, type DHMCOptions, type ContinuousRunOptions, type ContinuousResult, type ContinuousInfo, type ContinuousState, type ContinuousSamplerOptions, type ContinuousTarget, type GaussianTarget, type MassSpec, type Parametrisation, type IntegratorName, type PairMarginals, type WarmupOptions } from './dhmc.ts';
export { MALASampler, ULASampler, runMALA, runULA, MALA_DEFAULTS, ULA_DEFAULTS, type MALAOptions, type ULAOptions } from './langevin.ts';
export { ess, essBulk, splitRhat, rankNormalizedRhat, mcse, autocovariance, summarizeTraces, type TraceSummary } from './diagnostics.ts';
export { buildRelaxation, relaxCanonical, DENSE_SPECTRUM_LIMIT, MIN_LAMBDA_MAX_LIMIT, DENSE_FACTOR_LIMIT, type Relaxation, type RelaxationOptions, type ShiftOption, type FactorChoice, type FactorKind } from './relaxation.ts';
export { BlockGibbsSampler, runBlockGibbs, BLOCK_GIBBS_DEFAULTS, type BlockGibbsOptions, type BlockGibbsState, type BlockGibbsInfo } from './blockgibbs.ts';
export { fftFactor, fftRelaxation, fftApplicable, latticeSpectrum, translationKernel, type FFTFactorData } from './fft-factor.ts';
export { BoundRelaxation, type RelaxationData, type FactorData } from './relaxation-bound.ts';
export { relaxationFor } from './infer.ts';
export { estimateLogZ, runAIS, runZhangLogZ, runMirrorLogZ, runChibLogZ, logMeanExp, aisSchedule, AIS_DEFAULTS, AIS_TRANSITIONS, CHIB_DEFAULTS, RELAXED_LOGZ_DEFAULTS, LOGZ_ESTIMATORS, type LogZEstimator, type LogZEstimate, type EstimateLogZOptions, type AISOptions, type AISTransition, type ChibOptions, type RelaxedLogZOptions } from './logz.ts';
export { TreeGibbsSampler, BoundTreeBlocks, type TreeGibbsState, type TreeGibbsInfo } from './treegibbs.ts';
export { treePartition, partitionFromBlocks, interactionGraph, type TreePartition } from './treeblocks.ts';
