// Pointer-level entry points of the batched (lanes) Gibbs sampler.
import { PairwiseForm } from '../core/pairwise';
import { lanesBytes, lanesChangedOffset, lanesStateOffset, lanesScratchBytes, lanesInit, lanesSweepsF64, lanesSweepsF32, lanesTableSweeps } from './gibbs_lanes';

export function gibbsLanesBytes(model: usize, B: i32): usize {
  return lanesBytes(changetype<PairwiseForm>(model), B);
}

export function gibbsLanesChangedOffset(B: i32): usize {
  return lanesChangedOffset(B);
}

export function gibbsLanesStateOffset(B: i32): usize {
  return lanesStateOffset(B);
}

export function gibbsLanesScratchBytes(model: usize): usize {
  return lanesScratchBytes(changetype<PairwiseForm>(model));
}

export function gibbsLanesInit(model: usize, batch: usize, B: i32): void {
  lanesInit(changetype<PairwiseForm>(model), batch, B);
}

export function gibbsLanesStep(model: usize, batch: usize, B: i32, sweeps: i32, acc: usize, scratch: usize, order: usize): void {
  lanesSweepsF64(changetype<PairwiseForm>(model), batch, B, sweeps, acc, scratch, order);
}

export function gibbsLanesStepF32(model: usize, a32: usize, val32: usize, batch: usize, B: i32, sweeps: i32, acc: usize, scratch: usize, order: usize): void {
  lanesSweepsF32(changetype<PairwiseForm>(model), a32, val32, batch, B, sweeps, acc, scratch, order);
}

/** gibbsLanesStep (sequential scan, B = 2 or 4) reading a probability table (gibbs_table.ts): the same chains. */
export function gibbsLanesTableStep(model: usize, batch: usize, B: i32, sweeps: i32, acc: usize, off: usize, table: usize): void {
  lanesTableSweeps(changetype<PairwiseForm>(model), batch, B, sweeps, acc, off, table);
}
