// What every inference method returns; the CLI's --json output is this object, serialised.

/**
 * What a result's logZ is: exact, a Monte Carlo estimate (with logZStdErr), a lower or an upper bound, or an
 * interval [logZLower, logZUpper].
 */
export type LogZKind = 'exact' | 'estimate' | 'lower-bound' | 'upper-bound' | 'interval';

/**
 * What every inference method returns (`infer()` and the per-method runners); the CLI's `--json` output is this
 * object.
 */
export interface InferenceResult {
  /** The method that produced the result (e.g. 'exact', 'gibbs', 'dhmc', 'mf', 'bounds'). */
  method: string;
  /** Natural log of the partition function of the model as the user built it, or null. */
  logZ: number | null;
  /** Monte Carlo standard error of logZ (nats); null when logZ is exact, a bound or absent (NaN: too few runs for one). */
  logZStdErr: number | null;
  /** What logZ is (see LogZKind); null when there is no logZ. */
  logZKind: LogZKind | null;
  /** With logZKind 'interval' (method 'bounds'): the ends of the interval; null (or absent) otherwise. */
  logZLower?: number | null;
  /** Upper end of the interval (see logZLower). */
  logZUpper?: number | null;
  /** marginals[v][k] = p(x_v = k). */
  marginals: Float64Array[];
  /** Monte Carlo standard error of each marginal entry (samplers only). */
  marginalStdErr: Float64Array[] | null;
  /**
   * Method-specific figures (iterations, acceptance rates, effective sample sizes, settings…); keys depend on the
   * method.
   */
  diagnostics: Record<string, number | string | boolean | null>;
  /** Wall-clock time of the run, in seconds. */
  seconds: number;
  /** True when a run was cut short (cancelled) and reports what it had. */
  partial: boolean;
  /**
   * Caveats about the result, one sentence each (chains that disagree, too few effective samples,
   * adaptation or an estimator's own checks that failed); empty when none. infer() always sets it.
   */
  warnings?: string[];
}

/** Progress of a long run, passed to `onProgress` callbacks. */
export interface Progress {
  /**
   * What is running: the method's name (e.g. 'gibbs', 'pt', 'mf'; continuous samplers add '-warmup' during
   * adaptation).
   */
  phase: string;
  /** Work done so far, in the method's unit (sweeps of all chains for the samplers, starts for mean field, trials for MFRP). */
  done: number;
  /** Units of work the phase will do in all (same unit as `done`). */
  total: number;
}

/** A counter of work done that reports each addition to `onProgress` as `phase` of `total` (undefined without a callback). */
export function progressTicker(onProgress: ((p: Progress) => void) | undefined, phase: string, total: number): ((units: number) => void) | undefined {
  if (!onProgress) return undefined;
  let done = 0;
  return (units) => onProgress({ phase, done: (done += units), total });
}
