// readUAI for large texts: the numbers read in the engine (assembly/io/uai_read.ts, decimal.ts),
// the model's arrays taken whole when the file's scopes are already the model's (each strictly
// increasing, none repeated; empty scopes, constants, taken out), else added factor by factor to a
// ModelBuilder.
// The same model as the TypeScript reader's (formats.ts), bit for bit: each number the double
// Number() gives for its text, each entry's log V8's Math.log (fdlibm_log.ts). At anything it does
// not read as that reader would without a message it returns null, and readUAI reads the text
// with the TypeScript reader, whose messages name the fault. A 10⁶-site lattice's 157 MB: see
// README, bench:io.

import { plannerEngine, releasePlannerMemory, type Engine } from '../core/engine.ts';
import { EngineError } from '../core/errors.ts';
import { LIMITS, Model, ModelBuilder } from '../core/model.ts';
import { withRangeSums, withSumInRange, type RangeSums } from '../core/model-range.ts';
import { isSpace, logOfDecimal, MIN_NORMAL, toNumber } from './tokens.ts';

/** Texts shorter than this are read by the TypeScript reader (making the engine's instance is not worth it for them). */
export const FAST_UAI_MIN_CHARS = 1 << 18;
/** Table entries the engine may leave to this side (signs, long or tiny numbers) before giving up. */
const LEFT_CAP = 1 << 16;
const ASCII = new TextDecoder();

/** The engine's instance for reading, or null where none can be had (a browser with no engine loaded). */
function readerEngine(): Engine | null {
  try {
    return plannerEngine();
  } catch {
    return null;
  }
}

/** The UAI text's model, or null: not read here (the TypeScript reader reads it, and names any fault). */
export function readUAIFast(text: string): Model | null {
  // Offsets are bytes in the engine and characters here: ASCII only.
  return readUAIFastBytes(text.length, (bytes) => new TextEncoder().encodeInto(text, bytes).written === text.length);
}

/**
 * A UAI file's model from its bytes, which `fill` writes into the engine's memory (false: it could
 * not), or null as readUAIFast. The text is never a JavaScript string: no decoding, and a file past
 * the 512 MiB a string holds is read too.
 */
export function readUAIFastBytes(len: number, fill: (bytes: Uint8Array) => boolean): Model | null {
  const engine = readerEngine();
  if (!engine) return null;
  const arena = engine.arena(), k = engine.kernels;
  // The bytes, then a blank byte (the kernels' sentinel) and 7 more they may read (eight digits at a time).
  try {
    const bytesPtr = arena.alloc(len + 8, false);
    const bytes = new Uint8Array(k.memory.buffer, bytesPtr, len + 8);
    if (!fill(bytes.subarray(0, len))) return null;
    bytes.fill(32, len);
    // The network type, here: MARKOV or BAYES (the engine reads only numbers).
    let p = 0;
    while (p < len && isSpace(bytes[p])) p++;
    let q = p;
    while (q < len && !isSpace(bytes[q]) && q - p < 8) q++;
    const kind = String.fromCharCode(...bytes.subarray(p, q)).toUpperCase();
    if ((kind !== 'MARKOV' && kind !== 'BAYES') || !(q === len || isSpace(bytes[q]))) return null;
    k.uaiBegin(bytesPtr, len, q);
    const n = k.uaiInt(1, LIMITS.maxVariables);
    if (n < 0) return null;
    const cardPtr = arena.alloc(4 * n, false);
    if (!inRuns(n, (v0, v1) => k.uaiCards(cardPtr, v0, v1, LIMITS.maxCardinality))) return null;
    const F = k.uaiInt(0, LIMITS.maxFactors);
    if (F < 0) return null;
    // Room for two variables a factor (pairwise models: one pass); again with room for all when short.
    const startsPtr = arena.alloc(4 * (F + 1), false), offsetsPtr = arena.alloc(4 * (F + 1), false);
    let cap = 2 * F + 1, varsPtr = arena.alloc(4 * cap, false);
    const scopes = (): boolean => inRuns(F, (f0, f1) => k.uaiScopes(n, cardPtr, LIMITS.maxArity, LIMITS.maxTableEntries, startsPtr, varsPtr, cap, offsetsPtr, f0, f1));
    if (!scopes()) return null;
    const nEntries = k.uaiTotalEntries();
    if (nEntries > LIMITS.maxTotalTableEntries) return null;
    if (k.uaiTotalVars() > cap) {
      cap = k.uaiTotalVars();
      varsPtr = arena.alloc(4 * cap, false);
      if (!scopes()) return null;
    }
    const nVars = k.uaiTotalVars();
    const tablesPtr = arena.alloc(8 * Math.max(1, nEntries), false), leftPtr = arena.alloc(12 * LEFT_CAP, false);
    if (!inRuns(F, (f0, f1) => k.uaiTables(F, startsPtr, offsetsPtr, tablesPtr, leftPtr, LEFT_CAP, f0, f1))) return null;
    const sums: RangeSums | null = k.uaiLeftCount() === 0 ? { up: k.uaiRangeSum(0), sum: k.uaiRangeSum(1), zero: k.uaiRangeSum(2) === 1 } : null;
    const canonical = k.uaiCanonical(F, n, startsPtr, varsPtr, arena.alloc(4 * (3 * n + 1 + F)));
    const tables = arena.f64(tablesPtr, nEntries).slice();
    // The entries the engine left: read as the TypeScript reader reads them (Tokens.logEntry), from
    // their bytes (ASCII: a byte past it means the TypeScript reader would see another text).
    const left = arena.i32(leftPtr, 3 * k.uaiLeftCount()), text = new Uint8Array(k.memory.buffer, bytesPtr, len);
    for (let j = 0; j < left.length; j += 3) {
      const token = text.subarray(left[j + 1], left[j + 2]);
      if (token.some((c) => c > 127)) return null;
      const t = ASCII.decode(token), x = toNumber(t, 0, t.length);
      if (x >= MIN_NORMAL && x < Infinity) tables[left[j]] = Math.log(x);
      else if (x >= 0 && x < Infinity) tables[left[j]] = logOfDecimal(t);
      else return null;
    }
    const card = arena.i32(cardPtr, n).slice(), starts = arena.i32(startsPtr, F + 1).slice();
    const vars = arena.i32(varsPtr, nVars).slice(), offsets = arena.i32(offsetsPtr, F + 1).slice();
    return asModel(card, starts, vars, offsets, tables, canonical, sums);
  } catch (e) {
    // No room in the engine's memory (past its limit or its largest block): the TypeScript reader's turn.
    if (e instanceof EngineError) return null;
    throw e;
  } finally {
    arena.dispose();
    // The text took the planner instance's memory past what it keeps: let it go.
    releasePlannerMemory();
  }
}

/**
 * Runs a kernel over 0 … count − 1 in runs of RUN (each call returns 0, or nonzero at a fault): one
 * long call would run all its loops in V8's baseline code (WASM functions move to optimised code
 * between calls; the scopes of a 10⁶-site lattice took 0.4 s in a fresh process, ≈ 0.2 s later).
 * Called once for count 0 too (a first run sets up, a last one checks the text's end).
 */
function inRuns(count: number, run: (from: number, to: number) => number): boolean {
  if (count === 0) return run(0, 0) === 0;
  for (let from = 0; from < count; from += RUN) if (run(from, Math.min(count, from + RUN)) !== 0) return false;
  return true;
}
const RUN = 1 << 15;

/**
 * The model of the file's factors: its arrays as they are when they already are the model's
 * (`canonical`, uaiCanonical's answer; constant factors taken out), else built factor by factor.
 * `sums`: the range check's sums, when the engine made them.
 */
function asModel(card: Int32Array, starts: Int32Array, vars: Int32Array, offsets: Int32Array, tables: Float64Array, canonical: number, sums: RangeSums | null): Model {
  const F = starts.length - 1;
  // Constant factors (empty scopes: writeUAI's for a model's constant) summed in file order, as the
  // builder sums them (which names a sum of +∞).
  let logConst = 0, constants = 0;
  for (let f = 0; f < F; f++) if (starts[f + 1] === starts[f]) (logConst += tables[offsets[f]]), constants++;
  if (logConst !== Infinity && (canonical === 1 || (canonical === 2 && longScopesUnique(starts, vars)))) {
    const d = constants === 0 ? { starts, offsets: offsets.subarray(0, F), tables } : withoutConstants(starts, offsets, tables, constants);
    const model = new Model({ card, scopeStart: d.starts, scopeVars: vars, tableStart: d.offsets, tables: d.tables, logConst, lattice: null });
    return sums ? withRangeSums(model, sums) : withSumInRange(model);
  }
  const b = new ModelBuilder(card);
  for (let f = 0; f < F; f++) {
    const scope = vars.subarray(starts[f], starts[f + 1]), t = tables.subarray(offsets[f], offsets[f + 1]);
    if (scope.length === 0) b.addConstant(t[0]);
    else b.addFactor(scope, t);
  }
  return b.build();
}

/** The factor arrays with the empty-scope factors and their one-entry tables taken out. */
function withoutConstants(starts: Int32Array, offsets: Int32Array, tables: Float64Array, constants: number): { starts: Int32Array; offsets: Int32Array; tables: Float64Array } {
  const F = starts.length - 1, G = F - constants;
  // All after the other factors (writeUAI's): the arrays' first parts (views: copying 144 MB of a
  // Potts lattice's tables took 0.3 s).
  let last = F;
  while (last > 0 && starts[last] === starts[last - 1]) last--;
  if (last === G) return { starts: starts.subarray(0, G + 1), offsets: offsets.subarray(0, G), tables: tables.subarray(0, offsets[G]) };
  // Else each run of factors between constants copied at once (its tables lie together).
  const s = new Int32Array(G + 1), o = new Int32Array(G), t = new Float64Array(tables.length - constants);
  let g = 0, e = 0, from = -1;
  for (let f = 0; f <= F; f++) {
    const constant = f === F || starts[f + 1] === starts[f];
    if (!constant) {
      if (from < 0) from = offsets[f];
      o[g] = e + offsets[f] - from;
      s[++g] = starts[f + 1];
    } else if (from >= 0) {
      t.set(tables.subarray(from, offsets[f]), e);
      e += offsets[f] - from;
      from = -1;
    }
  }
  return { starts: s, offsets: o, tables: t };
}

/** Whether no scope of three or more variables is repeated (scopes sorted: the same set, the same text). */
function longScopesUnique(starts: Int32Array, vars: Int32Array): boolean {
  const seen = new Set<string>();
  for (let f = 0; f + 1 < starts.length; f++) {
    if (starts[f + 1] - starts[f] < 3) continue;
    const key = vars.subarray(starts[f], starts[f + 1]).join(',');
    if (seen.has(key)) return false;
    seen.add(key);
  }
  return true;
}
