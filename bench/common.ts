// Helpers shared by the benches: summaries of repeated timings and machine facts.
import { readFileSync } from 'node:fs';

export interface Dist {
  median: number;
  min: number;
  max: number;
  samples: number[];
}

/** Median, minimum and maximum of repeated measurements. */
export function dist(xs: number[]): Dist {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  return { median, min: s[0], max: s[s.length - 1], samples: xs };
}

/** The CPU model from /proc/cpuinfo, or null where there is none. */
export function cpuModel(): string | null {
  try {
    const m = /^model name\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    return m ? m[1].trim() : null;
  } catch {
    return null;
  }
}
