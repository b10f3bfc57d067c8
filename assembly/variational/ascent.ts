// The stopping rule the mean-field kernels share (meanfield.ts on the canonical form, meanfield_fg.ts
// on the factor graph).

/** Sweeps in a row with every state of some zero potential still carrying mass before a run gives up. */
export const STUCK_SWEEPS = 100;

/**
 * After a sweep: 1 converged, −1 give up, 0 go on. F is the bound after the sweep, dF its increase,
 * step the largest change of a marginal, `stuck` the sweeps so far with F = −∞. Converged: ΔF ≤
 * tol · max(n, |F|). While F = −∞ there is no progress measure on the bound: the run stops when the
 * marginals stop moving (a local minimum of the violations), or gives up after STUCK_SWEEPS sweeps.
 */
// @ts-ignore: decorator
@inline export function ascentVerdict(F: f64, dF: f64, step: f64, tol: f64, n: i32, stuck: i32): i32 {
  if (F == -Infinity) {
    if (step <= tol) return 1;
    return stuck >= STUCK_SWEEPS ? -1 : 0;
  }
  return dF <= tol * max(<f64>n, Math.abs(F)) ? 1 : 0;
}
