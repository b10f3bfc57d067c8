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
}

export interface Progress {
  phase: string;
  done: number;
  total: number;
}
