// Decimal text to doubles, for the UAI reader (uai_read.ts): whitespace-separated tokens of ASCII
// bytes, each plain decimal (digits, one optional '.', an optional exponent) turned into the
// nearest double, as JavaScript's Number() rounds it. Clinger's fast path when the digits and the
// power of ten are both exact doubles; otherwise Eisel and Lemire's: the ≤ 19 significant digits
// times a 128-bit truncated power of five (pow5_table.ts), which decides the rounding for every
// such input (Lemire, "Number Parsing at a Gigabyte per Second", 2021; Mushtak and Lemire, "Fast
// Number Parsing Without Fallback", 2023). A token it leaves to the caller — a sign, more than 19
// significant digits (trailing zeros aside), a value below the normal range or past the largest
// double, anything not a plain decimal (words, "0x1f", "1e") — gets NaN, and the caller reads it
// with Number() (and its own checks). decimalScan reads a run of tokens (tests check it against
// Number()).

import { POW5_MIN, POW5_MAX, POW5_WORDS } from './pow5_table';

/** Where the last scan stopped (bytes from the input's start) and how many tokens it left to the caller. */
let scanEnd: i32 = 0;
let scanLeft: i32 = 0;

/** 10^0 … 10^22: exact doubles (Clinger's fast path). */
const POW10: usize = memory.data<f64>([1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22]);

// @ts-ignore: decorator
@inline export function isSpace(c: u32): bool {
  return c == 32 || c - 9 < 5;
}

/** The first byte at or after p that is not a blank, or end. */
// @ts-ignore: decorator
@inline export function skipBlanks(p: usize, end: usize): usize {
  while (p < end && isSpace(<u32>load<u8>(p))) p++;
  return p;
}

/** The high 64 bits of a · b (the low ones are a * b). */
// @ts-ignore: decorator
@inline function mulHigh(a: u64, b: u64): u64 {
  const a0 = a & 0xffffffff, a1 = a >> 32, b0 = b & 0xffffffff, b1 = b >> 32;
  const p01 = a0 * b1, p10 = a1 * b0;
  const mid = ((a0 * b0) >> 32) + (p01 & 0xffffffff) + (p10 & 0xffffffff);
  return a1 * b1 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/**
 * w · 10^q rounded to the nearest double (ties to even), for w ≠ 0 of at most 19 digits and q in
 * POW5_MIN … POW5_MAX; NaN when the result is not a normal double (the caller's Number() decides).
 */
function eiselLemire(w: u64, q: i32): f64 {
  const lz = <i32>clz<u64>(w);
  w <<= lz;
  const at = POW5_WORDS + (<usize>(q - POW5_MIN) << 4);
  const hiWord = load<u64>(at), loWord = load<u64>(at, 8);
  // The product's high 128 bits; the second multiplication only when the first leaves the 55 bits
  // that decide rounding undetermined.
  let hi = mulHigh(w, hiWord), lo = w * hiWord;
  if ((hi & 0x1ff) == 0x1ff) {
    const lo2 = mulHigh(w, loWord);
    lo += lo2;
    if (lo2 > lo) hi++;
  }
  // An all-ones low word outside the exponents where products are exact: left to Number().
  if (lo == 0xffffffffffffffff && (q < -27 || q > 55)) return NaN;
  const upper = <i32>(hi >> 63);
  const shift = upper + 9;
  let mantissa = hi >> shift;
  // Binary exponent, biased: floor(log2(10^q)) + 63 + upper − lz + 1023.
  let power2 = ((q * (152170 + 65536)) >> 16) + 63 + upper - lz + 1023;
  if (power2 <= 0) return NaN;
  // Exactly halfway between two doubles (possible only for these q): round to even.
  if (lo <= 1 && q >= -4 && q <= 23 && (mantissa & 3) == 1 && (mantissa << shift) == hi) mantissa &= ~(<u64>1);
  mantissa += mantissa & 1;
  mantissa >>= 1;
  if (mantissa >= (<u64>2 << 52)) {
    mantissa = <u64>1 << 52;
    power2++;
  }
  if (power2 >= 0x7ff) return NaN;
  return reinterpret<f64>((mantissa & ~(<u64>1 << 52)) | (<u64>power2 << 52));
}

/** The value of eight ASCII digits read as one little-endian word (the first digit in the low byte). */
// @ts-ignore: decorator
@inline function eightDigits(v: u64): u64 {
  v -= 0x3030303030303030;
  v = v * 10 + (v >> 8);
  return (((v & 0x000000ff000000ff) * 0x000f424000000064) + (((v >> 16) & 0x000000ff000000ff) * 0x0000271000000001)) >> 32;
}

/** Where the token scanNumber last read ends (the byte after it, a blank). */
export let tokenEnd: usize = 0;

/**
 * The token starting at p (not a blank; the text ends with a blank byte and 7 more readable bytes,
 * for the eight-digit reads): its value, or NaN when it is left to the caller. Sets tokenEnd.
 */
// @ts-ignore: decorator
@inline export function scanNumber(p: usize): f64 {
  let w: u64 = 0, digits = 0, sig = 0, e = 0, dot = false, ok = true;
  let c = <u32>load<u8>(p);
  for (;;) {
    const d = c - 48;
    if (d < 10) {
      digits++;
      if (w == 0 && d == 0) {
        if (dot) e--;
      } else if (sig < 19) {
        w = w * 10 + <u64>d;
        sig++;
        if (dot) e--;
      } else if (d == 0) {
        // Zeros past 19 digits ("54029168721636100000", String() of a double past 10^20): the power.
        if (!dot) e++;
      } else ok = false;
    } else if (c == 46 && !dot) dot = true;
    else break;
    c = <u32>load<u8>(++p);
    // Eight digits at a time once a significant one is read (every digit then counts), while 19 hold.
    if (w != 0 && sig <= 11) {
      const v = load<u64>(p);
      if ((((v + 0x4646464646464646) | (v - 0x3030303030303030)) & 0x8080808080808080) == 0) {
        w = w * 100000000 + eightDigits(v);
        sig += 8;
        digits += 8;
        if (dot) e -= 8;
        p += 8;
        c = <u32>load<u8>(p);
      }
    }
  }
  if ((c | 0x20) == 101 && digits > 0) {
    // An exponent: an optional sign, then at least one digit (saturated far past any double's).
    c = <u32>load<u8>(++p);
    const negative = c == 45;
    if (c == 43 || c == 45) c = <u32>load<u8>(++p);
    let x = 0, xdigits = 0;
    while (c - 48 < 10) {
      if (x < 100000) x = x * 10 + <i32>(c - 48);
      xdigits++;
      c = <u32>load<u8>(++p);
    }
    if (xdigits == 0) ok = false;
    e += negative ? -x : x;
  }
  let value: f64 = NaN;
  if (!isSpace(c) || digits == 0) {
    ok = false;
    while (!isSpace(<u32>load<u8>(p))) p++;
  }
  tokenEnd = p;
  if (ok) {
    if (w == 0) value = 0;
    else if (w <= (<u64>1 << 53) && e >= -22 && e <= 22) {
      value = <f64>w;
      value = e >= 0 ? value * load<f64>(POW10 + (<usize>e << 3)) : value / load<f64>(POW10 + (<usize>(-e) << 3));
    } else if (e >= POW5_MIN && e <= POW5_MAX) value = eiselLemire(w, e);
  }
  return value;
}

/**
 * Reads tokens from bytes [inPtr, inPtr + inLen), which must be followed by one blank byte (the
 * sentinel that ends the last token) and 7 more readable ones, into `out` (f64, up to outCap): each token's value, or NaN
 * for one left to the caller, whose start and end offsets go to `left` (i32 pairs, up to leftCap).
 * Starts at byte `from`; stops at the end of the input, a full `out` or a full `left`. Returns the
 * values written; decimalScanEnd() says where it stopped, decimalScanLeft() how many it left.
 */
export function decimalScan(inPtr: usize, inLen: i32, from: i32, outPtr: usize, outCap: i32, leftPtr: usize, leftCap: i32): i32 {
  let p = inPtr + <usize>from;
  const end = inPtr + <usize>inLen;
  let count = 0, left = 0;
  while (count < outCap && left < leftCap) {
    p = skipBlanks(p, end);
    if (p >= end) break;
    const value = scanNumber(p);
    if (isNaN(value)) {
      store<i32>(leftPtr + (<usize>left << 3), <i32>(p - inPtr));
      store<i32>(leftPtr + (<usize>left << 3), <i32>(tokenEnd - inPtr), 4);
      left++;
    }
    p = tokenEnd;
    store<f64>(outPtr + (<usize>count << 3), value);
    count++;
  }
  scanEnd = <i32>(p - inPtr);
  scanLeft = left;
  return count;
}

/** Where the last decimalScan stopped (bytes from its input's start). */
export function decimalScanEnd(): i32 {
  return scanEnd;
}

/** How many tokens the last decimalScan left to the caller. */
export function decimalScanLeft(): i32 {
  return scanLeft;
}
