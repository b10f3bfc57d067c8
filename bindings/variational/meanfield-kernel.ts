// What mean field's restart driver (meanfield.ts) needs from a kernel: the pairwise kernel
// (meanfield.ts) and the factor graph's (meanfield-fg.ts) both provide it.

/** Tag of mean field's generator streams (Gibbs uses 1). */
export const MF_STREAM = 0x4d46; // "MF"

/** What the restart driver needs from a mean-field kernel. */
export interface MeanFieldKernel {
  /** Coupling visits of one sweep (the budget's unit). */
  readonly sweepCost: number;
  /** Random start of restart `j`, from stream (seed, j). */
  randomStart(seed: number, j: number): void;
  /** which 0: every variable in its first state; 1: in its last. */
  orderedStart(which: 0 | 1): void;
  /**
   * Coordinate ascent from the current state: at most `maxSweeps` sweeps, converged when a sweep raises the bound
   * by at most tol · max(n, |bound|) (tol < 0: exactly maxSweeps).
   */
  ascend(maxSweeps: number, tol: number): AscentInfo;
  /** The current state, as the kernel stores it (copied). */
  snapshot(): Float64Array;
}

/** The outcome of one mean-field ascent. */
export interface AscentInfo {
  /** The bound of the model as the user built it (canonical offset included). */
  logZ: number;
  /** Sweeps run. */
  sweeps: number;
  /** True when the convergence test passed before maxSweeps. */
  converged: boolean;
  /** The last sweep's increase of the bound and largest change of a marginal. */
  lastIncrease: number;
  /** Largest change of a marginal in the last sweep. */
  lastStep: number;
}
