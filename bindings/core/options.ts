// Option handling shared by the run* functions: defaults merge and count validation.
import { ModelError } from './errors.ts';

/** The options actually given (undefined values dropped), for `{ ...DEFAULTS, ...definedOnly(opts) }`. */
export function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The largest count an engine loop takes (an i32): larger ones wrapped around in WASM (a 2^31-iteration BP run never ended). */
export const MAX_LOOP_COUNT = 0x7fffffff;

/**
 * Most chains (or particles' hidden units) a run takes: each has JavaScript bookkeeping of its own, and
 * 10^9 chains on a 16-variable model ran V8 out of heap after 12 s (a fatal error, no message).
 */
export const MAX_CHAINS = 2 ** 20;
/**
 * The most worker threads a run starts: each loads an engine (≈ 20 MB and up), so --workers 1000000
 * on a 1024-slice plan would have started 1024 (64 took 1.2 GB for 3 exact samples).
 */
export const MAX_WORKERS = 256;
/** The most jobs a queue worker runs at once (`--concurrency`), each on a compute thread of its own. */
export const MAX_CONCURRENCY = 1024;

export function checkCount(name: string, x: number, min: number, max?: number): void {
  if (!Number.isInteger(x) || x < min || (max !== undefined && x > max)) {
    throw new ModelError(`${name} must be an integer ${max === undefined ? `≥ ${min}` : `in [${min}, ${max}]`}, got ${x}`);
  }
}

export function checkTol(tol: number): void {
  if (typeof tol !== 'number' || Number.isNaN(tol)) throw new ModelError(`tol must be a number, got ${tol}`);
}
