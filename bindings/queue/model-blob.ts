// A model as one binary blob (what the job queue stores once under its content hash) and back.
// Layout, little-endian: "RMRFMDL1", u32 n, F, S (scope entries), T (table entries), u32 lattice
// dimensions D, u32 periodic, D × u32 sides, pad to 8, f64 logConst, then card (n × i32),
// scopeStart ((F+1) × i32), scopeVars (S × i32), tableStart (F × i32), pad to 8, tables (T × f64).
// Decoding treats the bytes as untrusted: every length is checked against the blob's size before
// anything is allocated, and Model.fromData checks every invariant of the model.
import { createHash } from 'node:crypto';
import { Model } from '../core/model.ts';
import { ModelError } from '../core/errors.ts';

const MAGIC = 'RMRFMDL1';
const MAX_DIMENSIONS = 3;

const align8 = (x: number) => (x + 7) & ~7;

export function encodeModel(model: Model): Uint8Array {
  const { card, scopeStart, scopeVars, tableStart, tables, logConst, lattice } = model.toData();
  const n = card.length, F = tableStart.length, S = scopeVars.length, T = tables.length;
  const D = lattice ? lattice.shape.length : 0;
  const head = align8(8 + 6 * 4 + 4 * D);
  const ints = 4 * (n + F + 1 + S + F);
  const tablesAt = align8(head + 8 + ints);
  const out = new Uint8Array(tablesAt + 8 * T);
  const view = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) out[i] = MAGIC.charCodeAt(i);
  [n, F, S, T, D, lattice?.periodic ? 1 : 0, ...(lattice?.shape ?? [])].forEach((x, i) => view.setUint32(8 + 4 * i, x, true));
  view.setFloat64(head, logConst, true);
  let at = head + 8;
  for (const a of [card, scopeStart, scopeVars, tableStart]) for (let i = 0; i < a.length; i++, at += 4) view.setInt32(at, a[i], true);
  for (let i = 0; i < T; i++) view.setFloat64(tablesAt + 8 * i, tables[i], true);
  return out;
}

/** sha256 of the blob, hex: the model's cache key (the blob is a function of the model's arrays). */
export function blobHash(blob: Uint8Array): string {
  return createHash('sha256').update(blob).digest('hex');
}

/** The model in `blob` (untrusted bytes); ModelError naming what is wrong. */
export function decodeModel(blob: Uint8Array): Model {
  const bad = (what: string) => new ModelError(`model blob: ${what}`);
  if (blob.length < 40 || String.fromCharCode(...blob.subarray(0, 8)) !== MAGIC) throw bad('not a relaxmrf model (bad magic)');
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const u32 = (i: number) => view.getUint32(8 + 4 * i, true);
  const [n, F, S, T, D, periodic] = [0, 1, 2, 3, 4, 5].map(u32);
  if (D > MAX_DIMENSIONS || periodic > 1) throw bad('bad lattice header');
  const head = align8(8 + 6 * 4 + 4 * D);
  // Lengths first (in doubles: no overflow), then the arrays.
  const tablesAt = align8(head + 8 + 4 * (n + F + 1 + S + F));
  if (tablesAt + 8 * T !== blob.length) throw bad(`${blob.length} bytes do not match its header (n ${n}, factors ${F}, scope entries ${S}, table entries ${T})`);
  const shape = Array.from({ length: D }, (_, i) => u32(6 + i));
  const logConst = view.getFloat64(head, true);
  if (Number.isNaN(logConst) || logConst === Infinity) throw bad(`logConst is ${logConst}`);
  let at = head + 8;
  const ints = (len: number) => {
    const a = new Int32Array(len);
    for (let i = 0; i < len; i++, at += 4) a[i] = view.getInt32(at, true);
    return a;
  };
  const card = ints(n), scopeStart = ints(F + 1), scopeVars = ints(S), tableStart = ints(F);
  const tables = new Float64Array(T);
  for (let i = 0; i < T; i++) tables[i] = view.getFloat64(tablesAt + 8 * i, true);
  const lattice = D > 0 ? { shape, periodic: periodic === 1 } : null;
  return Model.fromData({ card, scopeStart, scopeVars, tableStart, tables, logConst, lattice });
}
