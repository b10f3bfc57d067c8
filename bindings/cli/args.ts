// Numbers on the command line: decimal only. Number() also reads "0x10" (16), "0b11" and "Infinity",
// so `--learning-rate 0x10` ran at 16.

/** The value of a decimal number (digits, an optional point and exponent, an optional sign); NaN for anything else. */
export function decimalNumber(v: string): number {
  return /^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i.test(v) ? Number(v) : NaN;
}
