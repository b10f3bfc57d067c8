// What every inference method returns; the CLI's --json output is this object, serialised.

export type LogZKind = 'exact' | 'estimate' | 'lower-bound' | 'upper-bound' | 'interval';

export interface InferenceResult {
  method: string;
  /** Natural log of the partition function of the model as the user built it, or null. */
  logZ: number | null;
  logZStdErr: number | null;
  logZKind: LogZKind | null;
  /** With logZKind 'interval' (method 'bounds'): the ends of the interval; null (or absent) otherwise. */
  logZLower?: number | null;
  logZUpper?: number | null;
  /** marginals[v][k] = p(x_v = k). */
  marginals: Float64Array[];
  /** Monte Carlo standard error of each marginal entry (samplers only). */
  marginalStdErr: Float64Array[] | null;
  diagnostics: Record<string, number | string | boolean | null>;
  seconds: number;
  /** True when a run was cut short (cancelled) and reports what it had. */
  partial: boolean;
  /**
   * Caveats about the result, one sentence each (chains that disagree, too few effective samples,
   * adaptation or an estimator's own checks that failed); empty when none. infer() always sets it.
   */
  warnings?: string[];
}

export interface Progress {
  phase: string;
  done: number;
  total: number;
}
