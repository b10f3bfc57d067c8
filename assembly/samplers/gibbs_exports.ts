// Pointer-level entry points of the Gibbs sampler (the bindings pass arena addresses).
import { PairwiseForm } from '../core/pairwise';
import { gibbsChainBytes, gibbsChainInit, gibbsSweeps } from './gibbs';

export function gibbsStateBytes(model: usize): usize {
  return gibbsChainBytes(changetype<PairwiseForm>(model));
}

export function gibbsInit(model: usize, chain: usize): void {
  gibbsChainInit(changetype<PairwiseForm>(model), chain);
}

export function gibbsStep(model: usize, chain: usize, sweeps: i32, acc: usize, scratch: usize): f64 {
  return gibbsSweeps(changetype<PairwiseForm>(model), chain, sweeps, acc, scratch);
}
