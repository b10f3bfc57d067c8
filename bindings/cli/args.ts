// Numbers on the command line: decimal only. Number() also reads "0x10" (16), "0b11" and "Infinity",
// so `--learning-rate 0x10` ran at 16. Options: each at most once.
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** The value of a decimal number (digits, an optional point and exponent, an optional sign); NaN for anything else. */
export function decimalNumber(v: string): number {
  return /^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i.test(v) ? Number(v) : NaN;
}

/** A command line the commands' parser refuses (exit 2). */
export class ArgsError extends Error {}

/**
 * node:util's parseArgs, refusing an option given twice: it kept the last silently (`--method gibbs
 * --method exact` ran exact; `--epochs 2 --epochs 3` trained 3).
 */
export function parseOptions<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  const parsed = parseArgs({ ...config, tokens: true });
  const seen = new Set<string>();
  for (const t of parsed.tokens ?? []) {
    if (t.kind !== 'option') continue;
    if (seen.has(t.name)) throw new ArgsError(`${t.rawName.startsWith('--') ? `--${t.name}` : t.rawName} is given twice`);
    seen.add(t.name);
  }
  return parsed as ReturnType<typeof parseArgs<T>>;
}
