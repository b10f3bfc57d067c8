// Option handling shared by the run* functions: defaults merge and count validation.
import { ModelError } from './errors.ts';

/** The options actually given (undefined values dropped), for `{ ...DEFAULTS, ...definedOnly(opts) }`. */
export function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export function checkCount(name: string, x: number, min: number, max?: number): void {
  if (!Number.isInteger(x) || x < min || (max !== undefined && x > max)) {
    throw new ModelError(`${name} must be an integer ${max === undefined ? `≥ ${min}` : `in [${min}, ${max}]`}, got ${x}`);
  }
}

export function checkTol(tol: number): void {
  if (typeof tol !== 'number' || Number.isNaN(tol)) throw new ModelError(`tol must be a number, got ${tol}`);
}
