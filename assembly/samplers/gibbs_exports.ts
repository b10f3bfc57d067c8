// Pointer-level entry points of the Gibbs sampler (the bindings pass arena addresses).
import { PairwiseForm } from '../core/pairwise';
import { gibbsChainBytes, gibbsChainInit, gibbsSweeps } from './gibbs';
import { tablePlan, tableFill } from './gibbs_table';

export function gibbsStateBytes(model: usize): usize {
  return gibbsChainBytes(changetype<PairwiseForm>(model));
}

export function gibbsInit(model: usize, chain: usize): void {
  gibbsChainInit(changetype<PairwiseForm>(model), chain);
}

export function gibbsStep(model: usize, chain: usize, sweeps: i32, acc: usize, scratch: usize): f64 {
  return gibbsSweeps(changetype<PairwiseForm>(model), chain, sweeps, acc, scratch);
}

/** gibbsStep reading the conditionals from a probability table (gibbs_table.ts): the same chain. */
export function gibbsTableStep(model: usize, chain: usize, sweeps: i32, acc: usize, scratch: usize, off: usize, table: usize): f64 {
  return gibbsSweeps(changetype<PairwiseForm>(model), chain, sweeps, acc, scratch, off, table);
}

export function gibbsTablePlan(model: usize, off: usize, hash: usize, cap: i32, maxEntries: f64): f64 {
  return tablePlan(changetype<PairwiseForm>(model), off, hash, cap, maxEntries);
}

export function gibbsTableFill(model: usize, off: usize, table: usize): void {
  tableFill(changetype<PairwiseForm>(model), off, table);
}
