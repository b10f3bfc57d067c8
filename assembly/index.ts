// The module's exports: memory management, the generator, and one file per algorithm.
export { alloc, free } from './memory';
export { rngStateBytes, rngSeed, rngFillUniform, rngFillUniform32, rngFillNormal, rngPhiloxBlock } from './rng_exports';
export { pairwiseFormBytes, pairwiseFormInit } from './pairwise';
export { gibbsStateBytes, gibbsInit, gibbsStep } from './gibbs_exports';
export { elimTableOp, elimMaxScale, elimExpShift, elimSupport, elimDivide, elimFill, elimRowNormalise } from './exact_elim';
export { enumRun } from './exact_enum';
export { factorBytes, factorInit, factorMul, factorMulT } from './factor';
export { relaxedBytes, relaxedInit, relaxedLogp } from './relaxed';
export { gf2Reduce } from './gf2';
export { mfRandomInit, mfEntropies, mfObjective, mfAscend } from './meanfield';
export { mfrpStride, mfrpStateBytes, mfrpPtr, mfrpInfo, mfrpInit, mfrpDraw, mfrpReduce, mfrpSetFree, mfrpRandomStart, mfrpEvaluate, mfrpPairMarginal, mfrpAscend } from './mfrp';
export { fftFactorTwiddles, fftFactorForwardReal } from './fft';
export { chainBytes, chainWorkBytes, gaussBytes, gaussInit, chainSetup, chainSeed, chainSetMass, chainInverseMass, chainSetIntegrator, chainSetOutputs, chainTraceLen, chainResetTrace, chainPosition, chainGradient, chainProb, chainLogp, chainStepSize, chainSetStepSize, chainInfo, chainSetPosition, chainDaRestart, chainDaFinal, chainUpdateMass, hmcStep, hmcFindStepSize, hmcIntegrate, chainKinetic, chainDensity } from './hmc';
export { langevinStep, langevinLogAccept } from './langevin';
export { blockGibbsStateBytes, blockGibbsXOffset, blockGibbsInit, blockGibbsStep } from './blockgibbs';
export { aisStateBytes, aisRun, aisForestRun, aisCollapsedRun } from './ais';
export { chibRun } from './chib';
export { treeBlocksBytes, treeBlocksInit, treeWorkBytes, treeGibbsStep } from './treegibbs';
