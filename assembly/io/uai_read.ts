// A UAI MARKOV/BAYES file's numbers, read in the engine (bindings/io/fast-uai.ts drives it): after
// the network type, the variables' cardinalities, the factors' scopes (read again only when the
// room given for their variables was too small) and their tables as log-potentials, flat. Every check
// the TypeScript reader makes (bindings/io/formats.ts, readUAI) is made here too, without a
// message: any failure returns a nonzero code, and the caller reads the text again with the
// TypeScript reader, which names the fault. A table entry decimal.ts leaves to the caller (a sign,
// more than 19 digits, a value below the normal range, a word) is recorded (entry index and token)
// for the caller to read, and any other token left is a failure.

import { isSpace, scanNumber, skipBlanks, tokenEnd } from './decimal';
import { fdlibmLog } from './fdlibm_log';

/** The text (bytes, then a blank sentinel byte) and where reading is. */
let text: usize = 0;
let textEnd: usize = 0;
let pos: usize = 0;
/** Where the scopes start (the second pass begins there). */
let scopesAt: usize = 0;
/** The first pass's totals: scope variables and table entries. */
let totalVars: i32 = 0;
let totalEntries: f64 = 0;

/** Starts reading `len` bytes at `ptr` (followed by a blank byte and 7 more readable bytes: decimal.ts) from byte `from`. */
export function uaiBegin(ptr: usize, len: i32, from: i32): void {
  text = ptr;
  textEnd = ptr + <usize>len;
  pos = ptr + <usize>from;
}

/** Whether the last next() found no token (the end of the text). */
let atEnd = false;

/** The next token as a number (NaN: none, atEnd, or one decimal.ts leaves to the caller). */
function next(): f64 {
  const p = skipBlanks(pos, textEnd);
  atEnd = p >= textEnd;
  if (atEnd) {
    pos = p;
    return NaN;
  }
  const x = scanNumber(p);
  pos = tokenEnd;
  return x;
}

/** The next token as an integer in lo … hi, or −1. Plain digits read here; anything else by scanNumber. */
function int(lo: f64, hi: f64): f64 {
  let p = skipBlanks(pos, textEnd);
  if (p >= textEnd) {
    pos = p;
    return -1;
  }
  const start = p;
  let x: u64 = 0, digits = 0;
  let c = <u32>load<u8>(p);
  // Up to 15 digits: exact as a double.
  while (c - 48 < 10 && digits < 15) {
    x = x * 10 + <u64>(c - 48);
    digits++;
    c = <u32>load<u8>(++p);
  }
  let v: f64;
  if (digits > 0 && isSpace(c)) {
    v = <f64>x;
    pos = p;
  } else {
    v = scanNumber(start);
    pos = tokenEnd;
  }
  return v >= lo && v <= hi && v == Math.floor(v) ? v : -1;
}

/** uaiInt for TypeScript: the next token as an integer in lo … hi, or −1 (the number of variables, of factors). */
export function uaiInt(lo: f64, hi: f64): f64 {
  const x = int(lo, hi);
  scopesAt = pos;
  return x;
}

/** Cardinalities v0 … v1 − 1 (each 1 … maxCard) into i32s at `out`; 0, or 1 at a bad one. */
export function uaiCards(out: usize, v0: i32, v1: i32, maxCard: i32): i32 {
  for (let v = v0; v < v1; v++) {
    const k = int(1, maxCard);
    if (k < 0) return 1;
    store<i32>(out + (<usize>v << 2), <i32>k);
  }
  scopesAt = pos;
  return 0;
}

/** uaiScopes' running counts: scope variables, table entries. */
let nv: i32 = 0;
let entries: f64 = 0;

/**
 * Scopes f0 … f1 − 1 of F (the caller calls in runs from f0 = 0, which starts at the scopes again:
 * a long single call would run all its loops in V8's baseline code): each an arity (0 …
 * maxArity) and that many distinct variables (< n), whose tables (Π card) have at most maxEntries
 * entries, written as scopeStart (F + 1 i32), vars (up to varsCap i32) and tableStart (F + 1 i32,
 * entry offsets); the totals (uaiTotalVars, uaiTotalEntries) are counted on also when vars is
 * full, and then the caller reads the scopes again with room for them. 0, or 1 at a bad scope (a
 * variable twice in one is found only while vars has room).
 */
export function uaiScopes(n: i32, card: usize, maxArity: i32, maxEntries: f64, scopeStart: usize, vars: usize, varsCap: i32, tableStart: usize, f0: i32, f1: i32): i32 {
  if (f0 == 0) {
    pos = scopesAt;
    nv = 0;
    entries = 0;
    store<i32>(scopeStart, 0);
    store<i32>(tableStart, 0);
  }
  for (let f = f0; f < f1; f++) {
    const arity = <i32>int(0, <f64>maxArity);
    if (arity < 0) return 1;
    let size: f64 = 1;
    const room = nv + arity <= varsCap;
    for (let a = 0; a < arity; a++) {
      const v = <i32>int(0, <f64>(n - 1));
      if (v < 0) return 1;
      if (room) {
        // Twice in one scope (scopes are short: the pass over it is cheap).
        for (let b = 0; b < a; b++) if (load<i32>(vars + (<usize>(nv - a + b) << 2)) == v) return 1;
        store<i32>(vars + (<usize>nv << 2), v);
      }
      nv++;
      size *= <f64>load<i32>(card + (<usize>v << 2));
    }
    if (size > maxEntries) return 1;
    entries += size;
    store<i32>(scopeStart + (<usize>(f + 1) << 2), nv);
    // Offsets past 2^31 only when the totals are past the caller's limit (it checks them first).
    store<i32>(tableStart + (<usize>(f + 1) << 2), <i32>min(entries, 2147483647));
  }
  totalVars = nv;
  totalEntries = entries;
  return 0;
}

/** The first uaiScopes pass's scope variables. */
export function uaiTotalVars(): i32 {
  return totalVars;
}

/** The first uaiScopes pass's table entries (all factors). */
export function uaiTotalEntries(): f64 {
  return totalEntries;
}

/** Entries uaiTables left to the caller. */
let leftCount: i32 = 0;
/** uaiTables' sums over the factors with a scope, in order: positive maxima, finite maxima; whether an entry is −∞. */
let sumUp: f64 = 0;
let sumMax: f64 = 0;
let anyZero: bool = false;

/**
 * Tables f0 … f1 − 1 of F after uaiScopes (in runs from f0 = 0, as uaiScopes): each its entry
 * count (which must be its size, from tableStart) and its entries, as log-potentials into `tables`
 * (f64) at tableStart[f]; entries decimal.ts leaves, as NaN with (entry index, token start, token
 * end) at `left` (up to leftCap triples: uaiLeftCount). After the last, only blanks. Also the sums
 * Model's range check makes (uaiRangeSum; valid when nothing was left). 0, or 1 at a fault (a count
 * that differs, a count or entry that is not a number as read here, more left entries than
 * leftCap, text after the tables).
 */
export function uaiTables(F: i32, scopeStart: usize, tableStart: usize, tables: usize, left: usize, leftCap: i32, f0: i32, f1: i32): i32 {
  if (f0 == 0) {
    leftCount = 0;
    sumUp = 0;
    sumMax = 0;
    anyZero = false;
  }
  let nLeft = leftCount, up = sumUp, sum = sumMax, zero = anyZero;
  for (let f = f0; f < f1; f++) {
    const t0 = load<i32>(tableStart + (<usize>f << 2)), t1 = load<i32>(tableStart + (<usize>(f + 1) << 2));
    if (int(0, 9007199254740991) != <f64>(t1 - t0)) return 1;
    let max = -Infinity;
    for (let e = t0; e < t1; e++) {
      const x = next();
      let y: f64;
      if (x > 0) y = fdlibmLog(x);
      else if (x == 0) y = -Infinity;
      else {
        // Left to the caller (NaN); no token at all is a fault.
        if (atEnd || nLeft >= leftCap) return 1;
        const at = left + <usize>nLeft * 12;
        store<i32>(at, e);
        store<i32>(at, <i32>(tokenStartOf(pos) - text), 4);
        store<i32>(at, <i32>(pos - text), 8);
        nLeft++;
        y = NaN;
      }
      store<f64>(tables + (<usize>e << 3), y);
      // Model's range check (model-range.ts, withSumInRange), in the same order.
      if (y > max) max = y;
      else if (y == -Infinity) zero = true;
    }
    // Empty scopes are constants, not factors of the model.
    if (load<i32>(scopeStart + (<usize>(f + 1) << 2)) == load<i32>(scopeStart + (<usize>f << 2))) continue;
    if (max > 0) up += max;
    if (max > -Infinity) sum += max;
  }
  leftCount = nLeft;
  sumUp = up;
  sumMax = sum;
  anyZero = zero;
  if (f1 < F) return 0;
  pos = skipBlanks(pos, textEnd);
  return pos < textEnd ? 1 : 0;
}

/** uaiTables' range sums: 0 the positive maxima, 1 the finite maxima, 2 whether an entry was −∞ (1 or 0). */
export function uaiRangeSum(which: i32): f64 {
  return which == 0 ? sumUp : which == 1 ? sumMax : anyZero ? 1 : 0;
}

/** The start of the token that ends at `end` (the byte after it). */
function tokenStartOf(end: usize): usize {
  let p = end;
  while (p > text && !isSpace(<u32>load<u8>(p - 1))) p--;
  return p;
}

/** How many entries the last uaiTables left to the caller. */
export function uaiLeftCount(): i32 {
  return leftCount;
}

/**
 * Whether the scopes uaiScopes wrote are already the model's, as far as scopes of one or two
 * variables go: each scope strictly increasing, none of one or two variables repeated. 0: no; 1:
 * yes; 2: yes, and scopes of three or more variables are there for the caller to check. `scratch`:
 * 4 · (3n + 1 + F) bytes, zeroed.
 */
export function uaiCanonical(F: i32, n: i32, scopeStart: usize, vars: usize, scratch: usize): i32 {
  // mark: a unary scope's variable (1), then a pair's second variable stamped −(first + 1);
  // pairsOf: pairs by first variable (counts, then starts); at: fill positions; hi: second variables.
  const mark = scratch, pairsOf = mark + (<usize>n << 2), at = pairsOf + (<usize>(n + 1) << 2), hi = at + (<usize>n << 2);
  let longer = false;
  for (let f = 0; f < F; f++) {
    const a = load<i32>(scopeStart + (<usize>f << 2)), b = load<i32>(scopeStart + (<usize>(f + 1) << 2));
    for (let p = a + 1; p < b; p++) if (load<i32>(vars + (<usize>p << 2)) <= load<i32>(vars + (<usize>(p - 1) << 2))) return 0;
    const v = load<i32>(vars + (<usize>a << 2));
    if (b - a == 1) {
      if (load<i32>(mark + (<usize>v << 2)) != 0) return 0;
      store<i32>(mark + (<usize>v << 2), 1);
    } else if (b - a == 2) {
      const c = pairsOf + (<usize>(v + 1) << 2);
      store<i32>(c, load<i32>(c) + 1);
    } else if (b - a > 2) longer = true;
  }
  for (let v = 0; v < n; v++) {
    const s = load<i32>(pairsOf + (<usize>v << 2));
    store<i32>(pairsOf + (<usize>(v + 1) << 2), load<i32>(pairsOf + (<usize>(v + 1) << 2)) + s);
    store<i32>(at + (<usize>v << 2), s);
  }
  for (let f = 0; f < F; f++) {
    const a = load<i32>(scopeStart + (<usize>f << 2));
    if (load<i32>(scopeStart + (<usize>(f + 1) << 2)) - a != 2) continue;
    const v = load<i32>(vars + (<usize>a << 2)), slot = at + (<usize>v << 2), k = load<i32>(slot);
    store<i32>(hi + (<usize>k << 2), load<i32>(vars + (<usize>(a + 1) << 2)));
    store<i32>(slot, k + 1);
  }
  for (let v = 0; v < n; v++) {
    for (let p = load<i32>(pairsOf + (<usize>v << 2)), end = load<i32>(pairsOf + (<usize>(v + 1) << 2)); p < end; p++) {
      const w = mark + (<usize>load<i32>(hi + (<usize>p << 2)) << 2);
      if (load<i32>(w) == -(v + 1)) return 0;
      store<i32>(w, -(v + 1));
    }
  }
  return longer ? 2 : 1;
}
