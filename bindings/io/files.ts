// Loading model files from disk (Node only; bindings/formats.ts holds the browser-safe parsers).

import { readFile } from 'node:fs/promises';
import { FormatError } from '../core/errors.ts';
import { applyEvidence, readEvidenceWithLines, readFGWithLabels, readUAI } from './formats.ts';
import type { Model } from '../core/model.ts';

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
  const text = await readText(path, false);
  if (format === 'fg') {
    const { model, labels } = readFGWithLabels(text, path);
    return { model, format, evidence: null, labels };
  }

  const model = readUAI(text, path);
  const evidPath = path + '.evid';
  const evidText = await readText(evidPath, true);
  if (evidText === null) return { model, format, evidence: null };
  // Evidence that does not fit the model is a fault of the .evid file: named with its line.
  const { evidence, lines } = readEvidenceWithLines(evidText, evidPath);
  return { model: applyEvidence(model, evidence, { file: evidPath, lines }).model, format, evidence };
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
    if (e instanceof RangeError || err.code === 'ERR_STRING_TOO_LONG') throw new FormatError(path, null, 'the file is larger than 512 MiB, the most Node holds as one string, and the readers take the file as one string: write its table entries with fewer digits');
    throw new FormatError(path, null, `cannot read the file: ${osReason(err)}`);
  }
}

/** "no such file or directory (ENOENT)" from Node's "ENOENT: no such file or directory, open '/x'". */
function osReason(err: NodeJS.ErrnoException): string {
  const m = /^\w+: (.*?), \w+(?: '.*')?$/.exec(err.message);
  return m && err.code ? `${m[1]} (${err.code})` : err.message;
}
