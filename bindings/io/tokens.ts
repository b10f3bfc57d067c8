// The text formats' tokenizer (formats.ts): whitespace-separated tokens read in one pass, numbers
// parsed in place, line numbers worked out only when something asks for one (an error message, an
// evidence entry's line). Counting lines as it went, with a method call and a token string per
// number, a 157 MB UAI file of a 10⁶-site lattice took 2.5 s to parse; now 1.8 s.

import { FormatError } from '../core/errors.ts';
import { LIMITS } from '../core/model.ts';

/** Whether c is ASCII whitespace (space, tab, LF, VT, FF, CR): what separates tokens. */
export const isSpace = (c: number): boolean => c === 32 || (c >= 9 && c <= 13);

/**
 * Whitespace-separated tokens, each with the line it starts on for error messages. Optionally skips
 * comment lines (first non-blank character '#').
 */
export class Tokens {
  private pos = 0;
  /** Where the token last read starts and ends (read as a string only when needed: messages). */
  private t0 = 0;
  private t1 = 0;
  /** Where `line` is taken: the last token's start, or the end of input once it is reached. */
  private linePos = 0;
  /** A position whose line is known (lineAt counts on from it). */
  private knownPos = 0;
  private knownLine = 1;
  /** Factor being read, for error locations; −1 outside factors. */
  factor = -1;

  constructor(private readonly text: string, private readonly file: string, private readonly hashComments = false) {
    // A Buffer (readFileSync without 'utf8') or undefined failed deep inside with a TypeError.
    if (typeof text !== 'string') throw new FormatError(file, null, `expected the file's text as a string, got ${text === null ? 'null' : ArrayBuffer.isView(text) ? `a ${(text as object).constructor.name} (read the file with 'utf8')` : typeof text}`);
    // A UTF-8 byte-order mark (Windows editors) would otherwise stick to the first token.
    if (text.charCodeAt(0) === 0xfeff) this.pos = 1;
  }

  /** Line of the token last returned, or of the end of input once it is reached. */
  get line(): number {
    return this.lineAt(this.linePos);
  }

  /**
   * 1 + the line breaks before p: an LF, or a CR not followed by one (old Mac files). Counted on from
   * the last position asked for, so asking at every token of a file costs one pass in all.
   */
  private lineAt(p: number): number {
    const s = this.text;
    if (p < this.knownPos) (this.knownPos = 0), (this.knownLine = 1);
    let line = this.knownLine;
    for (let q = this.knownPos; q < p; q++) {
      const c = s.charCodeAt(q);
      if (c === 10 || (c === 13 && s.charCodeAt(q + 1) !== 10)) line++;
    }
    this.knownPos = p;
    this.knownLine = line;
    return line;
  }

  /** Skips whitespace and comments; true when nothing but those is left. */
  done(): boolean {
    const s = this.text, len = s.length;
    let p = this.pos;
    while (p < len) {
      const c = s.charCodeAt(p);
      if (isSpace(c)) p++;
      else if (c === 35 && this.hashComments && this.atLineStart(p)) {
        // To the line's end: LF or CR (old Mac files: a comment swallowed them whole).
        while (p < len && s.charCodeAt(p) !== 10 && s.charCodeAt(p) !== 13) p++;
      } else break;
    }
    this.pos = p;
    if (p >= len) this.linePos = len;
    return p >= len;
  }

  /** Whether only blanks lie between the line's start and p (a '#' there starts a comment). */
  private atLineStart(p: number): boolean {
    const s = this.text;
    for (let q = p - 1; q >= 0; q--) {
      const c = s.charCodeAt(q);
      if (c === 10 || c === 13) return true;
      if (!isSpace(c) && !(q === 0 && c === 0xfeff)) return false;
    }
    return true;
  }

  next(): string | null {
    if (this.done()) return null;
    const s = this.text, len = s.length, start = this.pos;
    let p = start + 1;
    while (p < len && !isSpace(s.charCodeAt(p))) p++;
    this.took(start, p);
    return s.slice(start, p);
  }

  /** Records the token [start, end) as the one last read. */
  private took(start: number, end: number): void {
    this.pos = end;
    this.t0 = this.linePos = start;
    this.t1 = end;
  }

  /**
   * The token last read (by next() or a number), as messages show it: control characters escaped and
   * past 40 characters cut (a 200 kB token, or a binary file, went into the one-line message whole).
   */
  get token(): string {
    const long = this.t1 - this.t0 > 40;
    const t = this.text.slice(this.t0, long ? this.t0 + 40 : this.t1);
    // Unicode spaces too: a lone no-break space showed as ' ', as if the token were empty.
    const shown = t
      .replace(/[\u0000-\u001f\u007f-\u009f]/g, (ch) => `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`)
      .replace(/[\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
    return long ? `${shown}… (${this.t1 - this.t0} characters)` : shown;
  }

  fail(detail: string): never {
    const where = this.factor >= 0 ? `line ${this.line}, factor ${this.factor}` : `line ${this.line}`;
    throw new FormatError(this.file, where, detail);
  }

  /**
   * The next token as a number, or NaN: a token that is not one, or none at the end of input (then
   * t0 = t1, no token). Digits with at most one '.', at most 15 of them, are m / 10^k with m < 2^53
   * and 10^k exact: one correctly rounded division, what Number() gives. Anything else (signs,
   * exponents, longer numbers) takes Number() (toNumber).
   */
  private numberOrNaN(): number {
    const s = this.text, len = s.length;
    let p = this.pos;
    if (this.hashComments) {
      this.done();
      p = this.pos;
    } else while (p < len && isSpace(s.charCodeAt(p))) p++;
    if (p >= len) {
      this.pos = this.linePos = this.t0 = this.t1 = len;
      return NaN;
    }
    const start = p;
    let m = 0, digits = 0, frac = -1, c = 0;
    for (; p < len; p++) {
      c = s.charCodeAt(p);
      if (c >= 48 && c <= 57) {
        m = m * 10 + (c - 48);
        digits++;
        if (frac >= 0) frac++;
      } else if (c === 46 && frac < 0) frac = 0;
      else break;
    }
    if (digits > 0 && digits <= 15 && (p >= len || isSpace(c))) {
      this.took(start, p);
      return frac > 0 ? m / POW10[frac] : m;
    }
    while (p < len && !isSpace(s.charCodeAt(p))) p++;
    this.took(start, p);
    return toNumber(s, start, p);
  }

  /** Fails for a number that was expected and not found (numberOrNaN gave NaN). */
  private notANumber(what: string): never {
    if (this.t0 === this.t1) this.fail(`unexpected end of input: expected ${what}`);
    this.fail(`expected ${what}, found '${this.token}'`);
  }

  /** The next token as a number (not NaN); `what` names the expected item in messages. */
  number(what: string): number {
    const x = this.numberOrNaN();
    if (Number.isNaN(x)) this.notANumber(what);
    return x;
  }

  int(what: string, lo: number, hi = Number.MAX_SAFE_INTEGER): number {
    const x = this.number(what);
    if (!Number.isInteger(x) || x < lo || x > hi) {
      const range = hi === Number.MAX_SAFE_INTEGER ? `an integer in ${lo}…2^53 − 1` : `an integer in ${lo}…${hi}`;
      this.fail(`${what} must be ${range}, found '${this.token}'`);
    }
    return x;
  }

  /** A potential-table entry or a probability: finite and non-negative (0 is a zero potential). */
  entry(what: string): number {
    const x = this.number(what);
    if (!(x >= 0 && x < Infinity)) this.fail(`${what} '${this.token}' is not a finite non-negative number`);
    return x;
  }

  /**
   * The natural log of the next table entry (as entry() reads it). Below binary64's normal range the
   * log is taken from the decimal text: 1.4e-323 and 2.1e-323 became subnormals of two and three
   * significant bits (marginals 0.43 / 0.57 against 0.4 / 0.6), and 1e-400, a positive entry, became
   * a hard zero.
   */
  logEntry(what: string): number {
    const x = this.numberOrNaN();
    if (x >= MIN_NORMAL && x < Infinity) return Math.log(x);
    if (x >= 0 && x < Infinity) return logOfDecimal(this.text.slice(this.t0, this.t1));
    if (Number.isNaN(x)) this.notANumber(what);
    this.fail(`${what} '${this.token}' is not a finite non-negative number`);
  }

  cardinality(what: string): number {
    const k = this.number(`the cardinality of ${what}`);
    if (!Number.isInteger(k) || k < 1 || k > LIMITS.maxCardinality) {
      this.fail(`${what} has cardinality '${this.token}'; it must be an integer in 1…${LIMITS.maxCardinality}`);
    }
    return k;
  }

  expectEnd(after: string): void {
    this.factor = -1;
    if (this.next() !== null) this.fail(`unexpected '${this.token}' after ${after}`);
  }
}

/** 10^0 … 10^15, exact in binary64 (by multiplication: each product is exact). */
const POW10: number[] = [1];
for (let k = 1; k <= 15; k++) POW10.push(POW10[k - 1] * 10);

/** Number() of s[start, end), a token; NaN for what Number() reads but these formats do not allow. */
export function toNumber(s: string, start: number, end: number): number {
  // Number() also takes hex, octal and binary literals ("0x1f"), which none of these formats allow.
  const c = s.charCodeAt(start + 1) | 0x20;
  if (s.charCodeAt(start) === 48 && end - start > 1 && (c === 0x78 || c === 0x6f || c === 0x62)) return NaN;
  // Tokens end at ASCII whitespace only, but Number() trims Unicode spaces too, and reads a lone
  // no-break space as 0: a table one entry short ending in one was read whole.
  if (s.charCodeAt(start) > 127 || s.charCodeAt(end - 1) > 127) return NaN;
  return Number(s.slice(start, end));
}

/** The smallest positive normal binary64 number. */
export const MIN_NORMAL = 2.2250738585072014e-308;

/**
 * ln of a non-negative decimal as written (digits, an optional point, an optional exponent), from
 * its first 17 significant digits and its exponent, so values below binary64's range keep their
 * precision; −∞ when every digit is 0. Only for text Number() has read as a number below MIN_NORMAL.
 */
export function logOfDecimal(t: string): number {
  if (t === '0') return -Infinity;
  const m = /^\+?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(t);
  if (!m) return Math.log(Number(t));
  const int = m[1], all = int + (m[2] ?? '');
  let lead = 0;
  while (lead < all.length && all.charCodeAt(lead) === 48) lead++;
  if (lead === all.length) return -Infinity;
  // The value is 0.d₁d₂… × 10^(point position − leading zeros + exponent).
  const power = int.length - lead + Number(m[3] ?? 0);
  return Math.log(Number(`0.${all.slice(lead, lead + 17)}`)) + power * Math.LN10;
}
