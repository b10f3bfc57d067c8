// An interval for log Z: mean field's lower bound (meanfield.ts; on the factor graph's kernel when a
// factor has arity > 2) and the TRW upper bound (trw.ts; any arity, through the bipartite pairwise
// form). Marginals: TRW's pseudo-marginals. logZ is null; the ends are logZLower and
// logZUpper.
//
// MFRP is not used for the lower end: its m ≥ 1 values are Hsu et al.'s probabilistic bounds (a
// median of random projections, Theorem 1 allows log 4 above log Z), and on small random models
// they exceed the exact log Z by more than that, which an interval must never do.

import type { Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import type { InferenceResult } from '../core/result.ts';
import { checkOptionKeys, optionsFor } from '../core/options.ts';
import { trwConfig, trwDiagnostics, trwBound, trwWarnings, TRW_OPTION_KEYS, type TRWOptions } from './trw.ts';
import { MEAN_FIELD_OPTION_KEYS, runMeanField, type MeanFieldOptions } from './meanfield.ts';

/** Options of `runBounds`: TRW's (upper end) and mean field's (lower end). */
export type BoundsOptions = TRWOptions & MeanFieldOptions;

/** Every option runBounds reads (BoundsOptions): TRW's and mean field's; it refuses any other. */
export const BOUNDS_OPTION_KEYS: readonly string[] = [...new Set([...TRW_OPTION_KEYS, ...MEAN_FIELD_OPTION_KEYS])];

/**
 * An interval for log Z (nats): mean field's lower bound and TRW's upper bound (factors of any arity), in logZLower and
 * logZUpper (logZ null); marginals are TRW's pseudo-marginals.
 */
export function runBounds(engine: Engine, model: Model, opts: BoundsOptions = {}): InferenceResult {
  checkOptionKeys(opts, BOUNDS_OPTION_KEYS);
  const t0 = performance.now();
  const c = trwConfig(model, opts);
  const upper = trwBound(engine, model, opts); // first: it refuses a factor too large for one node at once
  const mf = runMeanField(engine, model, optionsFor(opts, MEAN_FIELD_OPTION_KEYS));
  const diagnostics: InferenceResult['diagnostics'] = {
    lowerMethod: 'mf',
    upperMethod: 'trw',
  };
  for (const [k, v] of Object.entries(mf.diagnostics)) diagnostics[`mf.${k}`] = v;
  for (const [k, v] of Object.entries(trwDiagnostics(upper, c, opts))) diagnostics[`trw.${k}`] = v;
  return {
    method: 'bounds',
    logZ: null,
    logZStdErr: null,
    logZKind: 'interval',
    logZLower: mf.logZ,
    logZUpper: upper.logZ,
    marginals: upper.marginals,
    marginalStdErr: null,
    diagnostics,
    seconds: (performance.now() - t0) / 1000,
    partial: opts.signal?.aborted === true || mf.partial,
    warnings: [...trwWarnings(upper, c, opts), ...(mf.warnings ?? []), ...crossedBounds(mf.logZ!, upper.logZ)],
  };
}

/**
 * A warning when the interval is empty (it was returned as it came: [2000000.3931471806,
 * 2000000.3931471803] with fields of ±10⁶): within 10⁻¹² of each other that is the rounding of their
 * sums, farther apart TRW's value is not a bound (not converged).
 */
function crossedBounds(lower: number, upper: number): string[] {
  if (!(lower > upper)) return [];
  const rel = (lower - upper) / Math.max(1, Math.abs(upper));
  const why = rel < 1e-12 ? 'the rounding of their sums in double precision: log Z is there to within that' : "more than rounding: TRW's value is not a bound here (not converged?), do not trust the interval";
  return [`the bounds cross: mean field's ${lower} is above TRW's ${upper} by ${lower - upper} nats (${rel.toExponential(1)} relative), ${why}`];
}
