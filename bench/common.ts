// Helpers shared by the benches: summaries of repeated timings, machine and build facts, and where
// results are written.
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import type { CanonicalForm } from '../bindings/core/canonical.ts';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';

const HERE = dirname(fileURLToPath(import.meta.url));

/** A quick run (CI's smoke test): `--quick` or BENCH_QUICK=1. */
export const QUICK = process.argv.includes('--quick') || /^(1|true|yes)$/i.test(process.env.BENCH_QUICK ?? '');

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

/**
 * This thread's CPU time in seconds: Linux's per-thread run time (ns), so the garbage collector's
 * and compiler's threads are not counted; the process's CPU time where that file is missing.
 */
export function threadSeconds(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e9;
  } catch {
    const c = process.cpuUsage();
    return (c.user + c.system) / 1e6;
  }
}

/**
 * Builds bench/native/SRC with gcc -O3 -march=MARCH -ffp-contract=off (no FMA contraction, like
 * WASM) into `out`; null (and the compiler's message on stderr) when that fails.
 */
export function buildNative(src: string, march: string, out: string): string | null {
  const cc = spawnSync('gcc', ['-O3', `-march=${march}`, '-ffp-contract=off', '-std=c11', '-D_POSIX_C_SOURCE=199309L', '-o', out, join(HERE, 'native', src), '-lm'], { encoding: 'utf8' });
  if (cc.error || cc.status !== 0) {
    console.error(`gcc failed for ${src} ${march}: ${cc.stderr ?? cc.error}`);
    return null;
  }
  return out;
}

/** gcc's version line, or null without gcc. */
export function gccVersion(): string | null {
  return spawnSync('gcc', ['--version'], { encoding: 'utf8' }).stdout?.split('\n')[0] ?? null;
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

/** The .wasm a bench ran: path, size, a short SHA-256 and its build time. */
export function wasmFacts(wasmPath?: string) {
  const p = wasmPath ?? join(HERE, '..', 'build', 'release.wasm');
  try {
    const b = readFileSync(p);
    return { path: wasmPath ?? 'build/release.wasm', bytes: b.length, sha256: createHash('sha256').update(b).digest('hex').slice(0, 16), mtime: statSync(p).mtime.toISOString() };
  } catch {
    return { path: p, bytes: null, sha256: null, mtime: null };
  }
}

/**
 * Where to write the results: bench/results/NAME, except that a quick run never replaces a full run's
 * file there (it writes to the system's temporary directory instead).
 */
export function resultsPath(name: string): string {
  const dir = join(HERE, 'results');
  mkdirSync(dir, { recursive: true });
  const target = join(dir, name);
  if (QUICK && existsSync(target)) {
    try {
      if (JSON.parse(readFileSync(target, 'utf8')).quick === false) return join(tmpdir(), name.replace(/\.json$/, '-quick.json'));
    } catch {
      /* unreadable: replace it */
    }
  }
  return target;
}

/** Writes a canonical form in the native references' model file format (bench/native/gibbs.c). */
export function writeFormFile(form: CanonicalForm, path: string): void {
  let maxBlock = 1;
  for (let v = 0; v < form.n; v++) maxBlock = Math.max(maxBlock, form.blockStart[v + 1] - form.blockStart[v]);
  const allFree = form.oneHot.every((x) => x === 0) ? 1 : 0;
  const header = new Int32Array([form.n, form.nBits, form.col.length, allFree, maxBlock]);
  const parts = [Buffer.from('RMRFCSR1'), header, form.blockStart, form.oneHot, form.a, form.rowPtr, form.col, form.val].map((x) =>
    Buffer.isBuffer(x) ? x : Buffer.from(x.buffer, x.byteOffset, x.byteLength),
  );
  writeFileSync(path, Buffer.concat(parts));
}
