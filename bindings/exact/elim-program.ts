// Records the junction tree's table operations as a program (assembly/exact/exact_program.ts) and
// runs it in one kernel call whenever its buffer fills or the pass ends: a chain's cliques have a few
// entries each, so a kernel call per operation cost more than the operations.

import type { Arena } from '../core/engine.ts';
import { EngineError } from '../core/errors.ts';

const OP_TABLE = 1, OP_REDUCE = 2, OP_SCALE = 3, OP_EXPSHIFT = 4, OP_ROWNORM = 5, OP_SUPPORT = 6, OP_DIVIDE = 7, OP_FILL0 = 8;
/** SCALE's checks: stop on m ≤ 0, NaN or ∞; stop on NaN or ∞ only. */
export const CHECK_POSITIVE = 1, CHECK_FINITE = 2;
/** The kernels' loop-nest limit (elimTableOp). */
export const MAX_DIMS = 64;
/** The fewest program words (the largest op, a nest of MAX_DIMS dimensions). */
const MIN_WORDS = 6 + 5 * MAX_DIMS;

/**
 * What a result means to the pass that recorded it; `a`, `b`: its variables; `low`, `max`: a scale's
 * smallest positive entry before the scaling (+∞ if none; negated when the table has zero entries)
 * and largest (an exp-shift's: 0, 0). Returning false
 * stops the program: nothing recorded after that result runs, and later flushes do nothing until reset().
 */
export type ResultHandler = (tag: number, a: number, b: number, m: number, low: number, max: number) => boolean;

// Coalescing scratch (one loop nest at a time).
const L = new Int32Array(MAX_DIMS), O = new Int32Array(MAX_DIMS), A = new Int32Array(MAX_DIMS), B = new Int32Array(MAX_DIMS);

export class Program {
  private readonly progPtr: number;
  private readonly resPtr: number;
  private readonly lowPtr: number;
  private readonly words: Int32Array;
  private readonly results: Float64Array;
  private readonly lows: Float64Array;
  private readonly capacity: number;
  private readonly maxResults: number;
  private used = 0;
  private nResults = 0;
  private readonly tags: number[] = [];
  /** A result stopped the program (see ResultHandler). */
  stopped = false;

  /**
   * Allocates its buffers from `arena`: `words` program words (at least one op's worth) and one
   * result (and its table's range) per 16 words. Views are taken now: allocate nothing in that engine afterwards.
   */
  constructor(private readonly arena: Arena, private readonly onResult: ResultHandler, words: number) {
    this.capacity = Math.max(MIN_WORDS, Math.floor(words));
    this.maxResults = this.capacity >> 4;
    this.progPtr = arena.alloc(4 * this.capacity, false);
    this.resPtr = arena.alloc(8 * this.maxResults, false);
    this.lowPtr = arena.alloc(16 * this.maxResults, false);
    this.words = arena.i32(this.progPtr, this.capacity);
    this.results = arena.f64(this.resPtr, this.maxResults);
    this.lows = arena.f64(this.lowPtr, 2 * this.maxResults);
  }

  /** Forgets what is recorded and the stop. */
  reset(): void {
    this.used = 0;
    this.nResults = 0;
    this.tags.length = 0;
    this.stopped = false;
  }

  /** Runs what is recorded, handing each result to onResult in order. */
  flush(): void {
    const words = this.used, count = this.nResults;
    this.used = 0;
    this.nResults = 0;
    if (this.stopped || words === 0) {
      this.tags.length = 0;
      return;
    }
    const stop = this.arena.engine.call('exact inference', (k) => k.elimProgramRun(this.progPtr, words, this.resPtr, this.lowPtr));
    const last = stop === -1 ? count : stop + 1;
    const tags = this.tags;
    try {
      for (let r = 0; r < last; r++) {
        if (!this.onResult(tags[3 * r], tags[3 * r + 1], tags[3 * r + 2], this.results[r], this.lows[2 * r], this.lows[2 * r + 1]) || r === stop) {
          this.stopped = true;
          break;
        }
      }
    } finally {
      tags.length = 0;
    }
  }

  private room(words: number, results: number): number {
    if (this.used + words > this.capacity || this.nResults + results > this.maxResults) this.flush();
    const at = this.used;
    this.used += words;
    return at;
  }

  private tag(tag: number, a: number, b: number): void {
    this.tags.push(tag, a, b);
    this.nResults++;
  }

  /**
   * A loop nest over `lens` with element strides per dimension for out, A and B (0: the operand does
   * not depend on it), coalescing dimensions contiguous in every operand; `op` TABLE or REDUCE.
   */
  private nest(op: number, x: number, lens: ArrayLike<number>, so: ArrayLike<number>, out: number, sa: ArrayLike<number>, a: number, sb: ArrayLike<number>, b: number, dims: number): void {
    let nd = 0;
    for (let d = 0; d < dims; d++) {
      const l = lens[d];
      if (l === 1) continue;
      const t = nd - 1;
      if (t >= 0 && so[d] === O[t] * L[t] && sa[d] === A[t] * L[t] && sb[d] === B[t] * L[t]) {
        L[t] *= l;
        continue;
      }
      if (nd === MAX_DIMS) throw new EngineError(`a clique has more than ${MAX_DIMS} non-trivial dimensions, past the kernel's limit`);
      L[nd] = l;
      O[nd] = so[d];
      A[nd] = sa[d];
      B[nd] = sb[d];
      nd++;
    }
    const at = this.room(6 + 5 * nd, 0), w = this.words;
    w[at] = op;
    w[at + 1] = x;
    w[at + 2] = out;
    w[at + 3] = a;
    w[at + 4] = b;
    w[at + 5] = nd;
    for (let d = 0; d < nd; d++) {
      w[at + 6 + d] = L[d];
      w[at + 6 + nd + d] = O[d];
      w[at + 6 + 2 * nd + d] = A[d];
      w[at + 6 + 3 * nd + d] = B[d];
    }
  }

  /** mode 0: out = A·B; 1: out += A·B (see elimTableOp), over the first `dims` entries of lens and the strides. */
  table(mode: 0 | 1, lens: ArrayLike<number>, so: ArrayLike<number>, out: number, sa: ArrayLike<number>, a: number, sb: ArrayLike<number>, b: number, dims = lens.length): void {
    this.nest(OP_TABLE, mode, lens, so, out, sa, a, sb, b, dims);
  }

  /** out (outSize entries) = Σ A·B over the dimensions out does not have; a following scale(…, true) uses its largest entry when the pass knew it. */
  reduce(outSize: number, lens: ArrayLike<number>, so: ArrayLike<number>, out: number, sa: ArrayLike<number>, a: number, sb: ArrayLike<number>, b: number, dims = lens.length): void {
    this.nest(OP_REDUCE, outSize, lens, so, out, sa, a, sb, b, dims);
  }

  /** Max-normalises a table unless its max is inside [2^-bits, 2^bits] (elimMaxScale); its max m (and the table's range) is a result tagged (tag, a, b). */
  scale(p: number, n: number, bits: number, useKnown: boolean, check: number, tag: number, a: number, b: number): void {
    const at = this.room(6, 1), w = this.words;
    w[at] = OP_SCALE;
    w[at + 1] = p;
    w[at + 2] = n;
    w[at + 3] = bits;
    w[at + 4] = useKnown ? 1 : 0;
    w[at + 5] = check;
    this.tag(tag, a, b);
  }

  /** Log table → exp(x − max) (elimExpShift); the max is a result tagged (tag, a, b); −∞ stops. */
  expShift(p: number, n: number, tag: number, a: number, b: number): void {
    const at = this.room(3, 1), w = this.words;
    w[at] = OP_EXPSHIFT;
    w[at + 1] = p;
    w[at + 2] = n;
    this.tag(tag, a, b);
  }

  rowNormalise(p: number, rows: number, rs: number, cols: number, cs: number, rowLog: number): void {
    const at = this.room(7, 0), w = this.words;
    w[at] = OP_ROWNORM;
    w[at + 1] = p;
    w[at + 2] = rows;
    w[at + 3] = rs;
    w[at + 4] = cols;
    w[at + 5] = cs;
    w[at + 6] = rowLog;
  }

  private pn(op: number, p: number, n: number): void {
    const at = this.room(3, 0), w = this.words;
    w[at] = op;
    w[at + 1] = p;
    w[at + 2] = n;
  }

  support(p: number, n: number): void {
    this.pn(OP_SUPPORT, p, n);
  }

  fill0(p: number, n: number): void {
    this.pn(OP_FILL0, p, n);
  }

  /** out[i] /= den[i], 0/0 = 0. */
  divide(out: number, den: number, n: number): void {
    const at = this.room(4, 0), w = this.words;
    w[at] = OP_DIVIDE;
    w[at + 1] = out;
    w[at + 2] = den;
    w[at + 3] = n;
  }
}
