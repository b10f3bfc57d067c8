// What the exact methods return to exactInference, and the sizes their refusals name.

import { EngineError } from '../core/errors.ts';

/** log Z (natural, including model.logConst) and the node marginals; null marginals when Z = 0. */
export interface ExactOutcome {
  logZ: number;
  marginals: Float64Array[] | null;
  /** Why Z = 0, when it is known more precisely than "every configuration has zero potential". */
  zeroReason?: string;
}

/** Elimination's scaled linear arithmetic cannot represent the model (messages spanning > ~700 nats). */
export class RangeExceeded extends EngineError {}
/** The junction tree's messages would pass the memory budget (maxMemory): auto runs bucket elimination, which slices. */
export class MemoryBudgetExceeded extends EngineError {}

/**
 * A sum of many terms with Neumaier's compensation: log Z adds one term per message (10⁶ independent
 * variables drifted by 4·10⁻¹² relative, 4·10⁻⁶ nats, summed plainly).
 */
export class CompensatedSum {
  private s = 0;
  private c = 0;
  add(x: number): void {
    const t = this.s + x;
    // The low-order bits the addition dropped, from whichever operand is larger.
    if (Number.isFinite(t)) this.c += Math.abs(this.s) >= Math.abs(x) ? this.s - t + x : x - t + this.s;
    this.s = t;
  }
  get value(): number {
    return Number.isFinite(this.s) ? this.s + this.c : this.s;
  }
}

/** Largest number of configurations enumeration accepts. */
export const MAX_ENUMERATION = 2 ** 30;

export function fmtEntries(e: number): string {
  const l = Math.log2(e);
  if (Number.isInteger(l)) return `2^${l}`;
  return Number.isFinite(e) ? `${e.toPrecision(3)} (2^${l.toFixed(1)})` : 'too many';
}
export function fmtBytes(b: number): string {
  if (b >= 1e12) return `${(b / 1e12).toPrecision(3)} TB`;
  if (b >= 1e9) return `${Math.round(b / 1e9)} GB`;
  if (b >= 1e6) return `${Math.round(b / 1e6)} MB`;
  // Below 10 kB in bytes: "4 kB too small, 4 kB would do" said nothing (4000 against 4248 bytes).
  if (b >= 1e4) return `${Math.round(b / 1e3)} kB`;
  return `${Math.ceil(b)} bytes`;
}
