// Loading model files from disk (Node only; bindings/formats.ts holds the browser-safe parsers).

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { FormatError } from '../core/errors.ts';
import { applyEvidence, readEvidenceWithLines, readFGWithLabels, readUAI } from './formats.ts';
import type { Model } from '../core/model.ts';
import { FAST_UAI_MIN_CHARS, readUAIFastBytes } from './fast-uai.ts';

/**
 * Reads a .uai or .fg model, picking the format by extension. For .uai, evidence in
 * `path + '.evid'` is applied (clamped) when that file exists.
 */
export async function loadModelFile(
  path: string,
): Promise<{
  /** The model, evidence applied. */
  model: Model;
  /** The format read, from the extension. */
  format: 'uai' | 'fg';
  /** Observed variable → state from `path.evid`, or null when there is none. */
  evidence: Map<number, number> | null;
  /** .fg: the file's label of each model variable (model variable i is the i-th smallest label); absent for .uai. */
  labels?: number[];
}> {
  const lower = path.toLowerCase();
  const format = lower.endsWith('.uai') ? 'uai' : lower.endsWith('.fg') ? 'fg' : null;
  if (format === null) throw new FormatError(path, null, 'unknown model format: expected a .uai or .fg file');
  if (format === 'fg') {
    const { model, labels } = readFGWithLabels(await readText(path, false), path);
    return { model, format, evidence: null, labels };
  }

  const model = readUAIBytes(path) ?? readUAI(await readText(path, false), path);
  const evidPath = path + '.evid';
  const evidText = await readText(evidPath, true);
  if (evidText === null) return { model, format, evidence: null };
  // Evidence that does not fit the model is a fault of the .evid file: named with its line.
  const { evidence, lines } = readEvidenceWithLines(evidText, evidPath);
  return { model: applyEvidence(model, evidence, { file: evidPath, lines }).model, format, evidence };
}

/**
 * A large UAI file's model read from its bytes, straight into the engine's memory (fast-uai.ts):
 * no string, no decoding (and past the 512 MiB a string holds); null when the file is small,
 * cannot be opened here, or is not read there (readText and readUAI then read it, and name any
 * fault). Read synchronously: the bytes go into the planner instance's memory, which nothing else
 * may grow meanwhile.
 */
function readUAIBytes(path: string): Model | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  try {
    const size = sizeOf(fd);
    if (!(size >= FAST_UAI_MIN_CHARS && size <= 2 ** 31)) return null;
    return readUAIFastBytes(size, (bytes) => {
      try {
        for (let at = 0; at < size; ) {
          const got = readSync(fd, bytes, at, size - at, at);
          if (got === 0) return false;
          at += got;
        }
        return true;
      } catch {
        return false;
      }
    });
  } finally {
    closeSync(fd);
  }
}

/** The open file's size in bytes (NaN when it cannot be had). */
function sizeOf(fd: number): number {
  try {
    return fstatSync(fd).size;
  } catch {
    return NaN;
  }
}

/** The file's text; null when `optional` and the file does not exist. */
async function readText(path: string, optional: false): Promise<string>;
async function readText(path: string, optional: true): Promise<string | null>;
async function readText(path: string, optional: boolean): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (optional && err.code === 'ENOENT') return null;
    // Node holds at most 2^29 − 24 characters in one string: "Invalid string length" read as an I/O fault.
    if (e instanceof RangeError || err.code === 'ERR_STRING_TOO_LONG') {
      // A .uai file got here after the engine's reader, which takes the bytes, gave it up.
      const uai = path.toLowerCase().endsWith('.uai') && !optional;
      const why = uai
        ? "the engine's reader, which reads a .uai file's bytes, did not read it (a fault in it, non-ASCII text, or more than 65 536 entries it leaves to the TypeScript reader: signs, more than 19 digits, values below 2.2e-308), and the TypeScript reader, which would name the fault, takes the file as one string"
        : 'the readers take the file as one string';
      throw new FormatError(path, null, `the file is larger than 512 MiB, the most Node holds as one string, and ${why}: write its table entries with fewer digits`);
    }
    throw new FormatError(path, null, `cannot read the file: ${osReason(err)}`);
  }
}

/** "no such file or directory (ENOENT)" from Node's "ENOENT: no such file or directory, open '/x'". */
function osReason(err: NodeJS.ErrnoException): string {
  const m = /^\w+: (.*?), \w+(?: '.*')?$/.exec(err.message);
  return m && err.code ? `${m[1]} (${err.code})` : err.message;
}
