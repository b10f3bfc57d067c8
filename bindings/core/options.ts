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

/**
 * Refuses `o` when it is not an object, any key of it (with a defined value) outside `keys`,
 * naming the nearest known ones — a misspelt option ran with the default, silently — and null
 * values (undefined, not null, asks for a default). `elsewhere(k)`
 * says where a key outside `keys` does apply ("applies to method bp, not mf"), in place of "unknown".
 */
export function checkOptionKeys(o: unknown, keys: readonly string[], what = 'options', elsewhere?: (key: string) => string | null): void {
  if (o === null || typeof o !== 'object') throw new ModelError(`${what} must be an object, got ${o === null ? 'null' : typeof o}`);
  for (const [k, v] of Object.entries(o)) {
    // null meant the default for some options (those read with ??) and was refused by others' checks.
    if (v === null && keys.includes(k)) throw new ModelError(`${what === 'options' ? 'option' : `${what} option`} "${k}" is null: leave it out (or undefined) for its default`);
    if (v === undefined || keys.includes(k)) continue;
    const near = nearNames(k, keys);
    const option = what === 'options' ? 'option' : `${what} option`;
    const where = elsewhere?.(k);
    throw new ModelError(`${where ? `${option} "${k}" ${where}` : `unknown ${option} "${k}"`}${near.length ? ` (did you mean ${near.map((x) => `"${x}"`).join(' or ')}?)` : ''}`);
  }
}

/**
 * The entries of `o` whose keys are in `keys`: the part of a larger options object (infer's) that
 * one run* function reads, since each refuses the keys it does not.
 */
export function optionsFor<T extends object>(o: T, keys: readonly string[]): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([k]) => keys.includes(k))) as Partial<T>;
}

/** Refuses a `signal` that is not an AbortSignal (a string or {} threw a TypeError from deep inside a run, or was ignored). */
export function checkSignal(signal: unknown): void {
  if (signal !== undefined && !(typeof AbortSignal !== 'undefined' && signal instanceof AbortSignal)) throw new ModelError(`signal must be an AbortSignal, got ${signal === null ? 'null' : typeof signal}`);
}

/** Refuses a value given for a boolean option that is not true or false ('no' turned the option on). */
export function checkBoolean(name: string, x: unknown): void {
  if (x !== undefined && typeof x !== 'boolean') throw new ModelError(`${name} must be true or false, got ${typeof x === 'string' ? `"${x}"` : String(x)}`);
}

/** The names in `keys` near `k`: a typo apart, else one a short form of the other (tol, tolerance). */
function nearNames(k: string, keys: readonly string[]): string[] {
  const a = k.toLowerCase();
  const typo = keys.filter((x) => editDistance(x.toLowerCase(), a) <= 2);
  if (typo.length > 0) return typo;
  return keys.filter((x) => Math.min(x.length, a.length) >= 3 && (x.toLowerCase().startsWith(a) || a.startsWith(x.toLowerCase())));
}

/** Levenshtein distance (short option names only). */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length];
}
