import { elimTableOp, elimMaxScale, elimExpShift, elimRowNormalise, elimDivide } from '../exact/exact_elim';
import { elimProgramRun } from '../exact/exact_program';

// Tables are f64 arrays, first variable fastest; descriptors are [nd, len[nd], so[nd], sa[nd], sb[nd], counters[nd]].

function tab(vals: f64[]): usize {
  const p = heap.alloc(<usize>max(1, vals.length) << 3);
  for (let i = 0; i < vals.length; i++) store<f64>(p + (<usize>i << 3), vals[i]);
  return p;
}

function zeros(n: i32): usize {
  const p = heap.alloc(<usize>n << 3);
  memory.fill(p, 0, <usize>n << 3);
  return p;
}

function desc(L: i32[], so: i32[], sa: i32[], sb: i32[]): usize {
  const nd = L.length;
  const p = heap.alloc(<usize>(1 + 5 * nd) << 2);
  store<i32>(p, nd);
  for (let d = 0; d < nd; d++) {
    store<i32>(p + (<usize>(1 + d) << 2), L[d]);
    store<i32>(p + (<usize>(1 + nd + d) << 2), so[d]);
    store<i32>(p + (<usize>(1 + 2 * nd + d) << 2), sa[d]);
    store<i32>(p + (<usize>(1 + 3 * nd + d) << 2), sb[d]);
  }
  return p;
}

function at(p: usize, i: i32): f64 {
  return load<f64>(p + (<usize>i << 3));
}

function expectTable(p: usize, want: f64[]): void {
  for (let i = 0; i < want.length; i++) expect(at(p, i)).toBeCloseTo(want[i], 12);
}

const ONE = tab([1.0]);

/** A table whose entries are all 99 (memory a kernel must not read, or must overwrite). */
function garbage(n: i32): usize {
  const p = heap.alloc(<usize>n << 3);
  for (let i = 0; i < n; i++) store<f64>(p + (<usize>i << 3), 99.0);
  return p;
}

describe('broadcast-multiply (mode 0)', () => {
  it('outer product of two unary factors into a 2×3 table', () => {
    // out[x0 + 2 x1] = A[x0] B[x1]
    const A = tab([2, 3]), B = tab([1, 10, 100]), out = zeros(6);
    elimTableOp(desc([2, 3], [1, 2], [1, 0], [0, 1]), out, A, B, 0);
    expectTable(out, [2, 3, 20, 30, 200, 300]);
  });
  it('a pairwise table times a broadcast message (expand: A constant along digit 0)', () => {
    // out[k + 2 j] = A[j] B[k + 2 j], j < 3
    const A = tab([1, 2, 3]), B = tab([1, 2, 3, 4, 5, 6]), out = zeros(6);
    elimTableOp(desc([2, 3], [1, 2], [0, 1], [1, 2]), out, A, B, 0);
    expectTable(out, [1, 2, 6, 8, 15, 18]);
  });
  it('a periodic factor over digit 0 (k = 2, SIMD) and its log-space sum (mode 2)', () => {
    // out[k + 2 j] = A[k + 2 j] * B[k], j < 3
    const A = tab([1, 2, 3, 4, 5, 6]), B = tab([10, 100]), out = zeros(6);
    const d = desc([2, 3], [1, 2], [1, 2], [1, 0]);
    elimTableOp(d, out, A, B, 0);
    expectTable(out, [10, 200, 30, 400, 50, 600]);
    elimTableOp(d, out, A, B, 2);
    expectTable(out, [11, 102, 13, 104, 15, 106]);
  });
  it('a periodic factor with a strided pattern of length 3 (scalar path)', () => {
    // out[k + 3 j] = A[k + 3 j] * B[2 k], j < 2
    const A = tab([1, 1, 1, 2, 2, 2]), B = tab([1, -1, 2, -1, 3]), out = zeros(6);
    elimTableOp(desc([3, 2], [1, 3], [1, 3], [2, 0]), out, A, B, 0);
    expectTable(out, [1, 2, 3, 2, 4, 6]);
  });
  it('in place: a table times itself elementwise (odd length: SIMD body and scalar tail)', () => {
    const T = tab([1, 2, 3, 4, 5]);
    elimTableOp(desc([5], [1], [1], [1]), T, T, T, 0);
    expectTable(T, [1, 4, 9, 16, 25]);
  });
});

describe('marginalise (mode 1: out += A·B with zero output strides)', () => {
  it('sums out digit 0 of a 2×3 table (adjacent pairs)', () => {
    const T = tab([1, 2, 3, 4, 5, 6]), out = zeros(3);
    elimTableOp(desc([2, 3], [0, 1], [1, 2], [0, 0]), out, T, ONE, 1);
    expectTable(out, [3, 7, 11]);
  });
  it('sums out digit 0 with a factor multiplied in (pairs, SIMD) and with a constant', () => {
    // out[j] = Σ_k A[k + 2 j] B[k + 2 j]
    const A = tab([1, 2, 3, 4, 5, 6, 7, 8]), B = tab([1, 0, 0, 1, 2, 2, 1, 1]), out = zeros(4);
    elimTableOp(desc([2, 4], [0, 1], [1, 2], [1, 2]), out, A, B, 1);
    expectTable(out, [1, 4, 22, 15]);
    const c = tab([0.5]), out2 = zeros(4);
    elimTableOp(desc([2, 4], [0, 1], [1, 2], [0, 0]), out2, A, c, 1);
    expectTable(out2, [1.5, 3.5, 5.5, 7.5]);
  });
  it('keeps only digit 0 (column sums) of a 2×3 table', () => {
    const T = tab([1, 2, 3, 4, 5, 6]), out = zeros(2);
    elimTableOp(desc([2, 3], [1, 0], [1, 2], [0, 0]), out, T, ONE, 1);
    expectTable(out, [9, 12]);
  });
  it('sums out the middle variable of a 2×3×2 table (generic strides)', () => {
    // T[a + 2 b + 6 c] = a + 2b + 6c + 1; out[a + 2 c] = Σ_b T
    const vals: f64[] = [];
    for (let i = 0; i < 12; i++) vals.push(<f64>(i + 1));
    const T = tab(vals), out = zeros(4);
    elimTableOp(desc([2, 3, 2], [1, 0, 2], [1, 2, 6], [0, 0, 0]), out, T, ONE, 1);
    // a=0,c=0: 1+3+5 = 9; a=1,c=0: 2+4+6 = 12; a=0,c=1: 7+9+11 = 27; a=1,c=1: 8+10+12 = 30
    expectTable(out, [9, 12, 27, 30]);
  });
  it('a full contraction to a scalar', () => {
    const A = tab([1, 2, 3]), B = tab([4, 5, 6]), out = zeros(1);
    elimTableOp(desc([3], [0], [1], [1]), out, A, B, 1);
    expect(at(out, 0)).toBe(32.0);
  });
});

describe('marginalise into an unzeroed table (mode 3)', () => {
  it('sums the innermost digit in one pass, whatever out held, and returns the largest entry (pairs with a factor, a constant, a row factor, k = 3)', () => {
    const A = tab([1, 2, 3, 4, 5, 6, 7, 8]), B = tab([1, 0, 0, 1, 2, 2, 1, 1]);
    let out = garbage(4);
    expect(elimTableOp(desc([2, 4], [0, 1], [1, 2], [1, 2]), out, A, B, 3)).toBe(22.0);
    expectTable(out, [1, 4, 22, 15]);
    out = garbage(4);
    expect(elimTableOp(desc([2, 4], [0, 1], [1, 2], [0, 0]), out, A, tab([0.5]), 3)).toBe(7.5);
    expectTable(out, [1.5, 3.5, 5.5, 7.5]);
    out = garbage(4);
    expect(elimTableOp(desc([2, 4], [0, 1], [1, 2], [0, 1]), out, A, tab([1, 2, 3, 4]), 3)).toBe(60.0);
    expectTable(out, [3, 14, 33, 60]);
    const T = tab([1, 2, 3, 4, 5, 6]);
    out = garbage(2);
    expect(elimTableOp(desc([3, 2], [0, 1], [1, 3], [0, 0]), out, T, ONE, 3)).toBe(15.0);
    expectTable(out, [6, 15]);
  });
  it('a full contraction to a scalar, and a reduction under an outer odometer', () => {
    let out = garbage(1);
    expect(elimTableOp(desc([3], [0], [1], [1]), out, tab([1, 2, 3]), tab([4, 5, 6]), 3)).toBe(32.0);
    expect(at(out, 0)).toBe(32.0);
    // T[a + 2 b + 6 c]: sum a (innermost), keep b and c (outer dimension past the two inner ones).
    const vals: f64[] = [];
    for (let i = 0; i < 12; i++) vals.push(<f64>(i + 1));
    out = garbage(6);
    expect(elimTableOp(desc([2, 3, 2], [0, 1, 3], [1, 2, 6], [0, 0, 0]), out, tab(vals), ONE, 3)).toBe(23.0);
    expectTable(out, [3, 7, 11, 15, 19, 23]);
  });
  it('the upward step\'s loop (a factor over both digits): four, two and one outputs per turn, NaN anywhere', () => {
    const vals: f64[] = [], ones: f64[] = [];
    for (let i = 0; i < 14; i++) (vals.push(<f64>(i + 1)), ones.push(i % 3 == 0 ? 2.0 : 1.0));
    // out[j] = A[2j] B[2j] + A[2j + 1] B[2j + 1], j < 7: 4 + 2 + 1 outputs.
    const out = garbage(7);
    expect(elimTableOp(desc([2, 7], [0, 1], [1, 2], [1, 2]), out, tab(vals), tab(ones), 3)).toBe(40.0);
    expectTable(out, [4, 11, 11, 22, 29, 23, 40]);
    for (let at = 0; at < 14; at += 3) {
      const bad = vals.slice(0);
      bad[at] = NaN;
      expect(isNaN(elimTableOp(desc([2, 7], [0, 1], [1, 2], [1, 2]), garbage(7), tab(bad), tab(ones), 3))).toBe(true);
    }
  });
  it('returns NaN once it has written a NaN (vector pairs, scalar tail, wider groups)', () => {
    expect(isNaN(elimTableOp(desc([2, 4], [0, 1], [1, 2], [0, 0]), garbage(4), tab([1, 2, NaN, 4, 5, 6, 7, 8]), ONE, 3))).toBe(true);
    expect(isNaN(elimTableOp(desc([2, 3], [0, 1], [1, 2], [0, 0]), garbage(3), tab([1, 2, 3, 4, 5, NaN]), ONE, 3))).toBe(true);
    expect(isNaN(elimTableOp(desc([3, 2], [0, 1], [1, 3], [0, 0]), garbage(2), tab([NaN, 2, 3, 4, 5, 6]), ONE, 3))).toBe(true);
  });
  it('refuses (−1), touching nothing, where an out entry gathers from several inner loops', () => {
    const T = tab([1, 2, 3, 4, 5, 6]);
    let out = garbage(2);
    expect(elimTableOp(desc([2, 3], [1, 0], [1, 2], [0, 0]), out, T, ONE, 3)).toBe(-1.0);
    expectTable(out, [99, 99]);
    const vals: f64[] = [];
    for (let i = 0; i < 12; i++) vals.push(<f64>(i + 1));
    out = garbage(4);
    expect(elimTableOp(desc([2, 3, 2], [1, 0, 2], [1, 2, 6], [0, 0, 0]), out, tab(vals), ONE, 3)).toBe(-1.0);
    expectTable(out, [99, 99, 99, 99]);
  });
  it('sums outer digits too by assigning on each entry\'s first visit (−2: largest not tracked)', () => {
    const vals: f64[] = [];
    for (let i = 0; i < 12; i++) vals.push(<f64>(i + 1));
    // Summed innermost and along an outer dimension: out[b] = Σ_a Σ_c T[a + 2b + 6c].
    let out = garbage(3);
    expect(elimTableOp(desc([2, 3, 2], [0, 1, 0], [1, 2, 6], [0, 0, 0]), out, tab(vals), ONE, 3)).toBe(-2.0);
    expectTable(out, [18, 26, 34]);
    // A broadcast inner pair (A constant along a) and an outer summed c: out[a + 2b] = Σ_c A[b + 3c].
    out = garbage(6);
    expect(elimTableOp(desc([2, 3, 2], [1, 2, 0], [0, 1, 3], [0, 0, 0]), out, tab([1, 2, 3, 4, 5, 6]), ONE, 3)).toBe(-2.0);
    expectTable(out, [5, 5, 7, 7, 9, 9]);
    // Column sums (b summed right outside a) gather into an entry inside one call: refused. Reordered
    // (c kept next to a, then b and d summed outside), the contiguous inner runs are assigned, then added.
    const big: f64[] = [];
    for (let i = 0; i < 24; i++) big.push(<f64>(i + 1));
    out = garbage(4);
    expect(elimTableOp(desc([2, 3, 2, 2], [1, 0, 2, 0], [1, 2, 6, 12], [0, 0, 0, 0]), out, tab(big), ONE, 3)).toBe(-1.0);
    expectTable(out, [99, 99, 99, 99]);
    out = garbage(4);
    expect(elimTableOp(desc([2, 2, 3, 2], [1, 2, 0, 0], [1, 6, 2, 12], [0, 0, 0, 0]), out, tab(big), ONE, 3)).toBe(-2.0);
    // Σ over the six (b, d) of (a + 2b + 6c + 12d + 1) = 6a + 36c + 6 + 12 + 36.
    expectTable(out, [54, 60, 90, 96]);
  });
});

describe('normalise and convert', () => {
  it('divides by the max and returns it', () => {
    const T = tab([1, 4, 2]);
    expect(elimMaxScale(T, 3, 0)).toBe(4.0);
    expectTable(T, [0.25, 1, 0.5]);
  });
  it('leaves a table whose max is inside [2^-bits, 2^bits] alone and reports 1', () => {
    const T = tab([1, 4, 2, 3, 0.5]);
    expect(elimMaxScale(T, 5, 2)).toBe(1.0);
    expectTable(T, [1, 4, 2, 3, 0.5]);
    const S = tab([1, 8, 2, 3, 0.5]);
    expect(elimMaxScale(S, 5, 2)).toBe(8.0);
    expectTable(S, [0.125, 1, 0.25, 0.375, 0.0625]);
  });
  it('reports NaN wherever the NaN is (vector body and scalar tail)', () => {
    expect(isNaN(elimMaxScale(tab([1, NaN, 2, 3, 0.5]), 5, 8))).toBe(true);
    expect(isNaN(elimMaxScale(tab([1, 4, 2, 3, NaN]), 5, 8))).toBe(true);
    expect(isNaN(elimMaxScale(tab([NaN, 0, 0, 0]), 4, 0))).toBe(true);
  });
  it('leaves an all-zero table alone and reports 0', () => {
    const T = tab([0, 0, 0]);
    expect(elimMaxScale(T, 3, 0)).toBe(0.0);
    expectTable(T, [0, 0, 0]);
  });
  it('exponentiates a log table with its max shifted out (−∞ → 0)', () => {
    const T = tab([0, Math.log(2), -Infinity]);
    expect(elimExpShift(T, 3)).toBeCloseTo(Math.log(2), 15);
    expectTable(T, [0.5, 1, 0]);
  });
  it('normalises a pairwise table per row of its owner, collecting the row offsets', () => {
    // 2×2 row-major, owner = row variable (row stride 2, column stride 1)
    const T = tab([0, Math.log(4), -Infinity, -Infinity]), rowLog = tab([1, 1]);
    elimRowNormalise(T, 2, 2, 2, 1, rowLog);
    expectTable(T, [0.25, 1, 0, 0]);
    expect(at(rowLog, 0)).toBeCloseTo(1 + Math.log(4), 15);
    expect(at(rowLog, 1)).toBe(-Infinity);
  });
  it('divides with 0/0 = 0', () => {
    const N = tab([2, 0, 3]), D = tab([4, 0, 1]);
    elimDivide(N, D, 3);
    expectTable(N, [0.5, 0, 3]);
  });
});

// A program of i32 words (see exact_program.ts).
function program(words: i32[]): usize {
  const p = heap.alloc(<usize>words.length << 2);
  for (let i = 0; i < words.length; i++) store<i32>(p + (<usize>i << 2), words[i]);
  return p;
}

// Each result's (smallest positive entry, largest entry) pair.
const lows = garbage(8);

describe('programs (elimProgramRun)', () => {
  it('a reduce, then a scale by the max it knew, then a row sum; every op in one call', () => {
    // out[j] = Σ_t A[t + 2 j] (2 × 2, summing digit 0); its max 7 divides it (bits 0); m is result 0.
    const A = tab([1, 2, 3, 4]), out = garbage(2), res = garbage(2);
    const prog = program([2, 2, <i32>out, <i32>A, <i32>ONE, 2, 2, 2, 0, 1, 1, 2, 0, 0, 0, 0, /* SCALE */ 3, <i32>out, 2, 0, 1, 1]);
    expect(elimProgramRun(prog, 22, res, lows)).toBe(-1);
    expect(at(res, 0)).toBe(7.0);
    expect(at(lows, 0)).toBe(3.0); // the smallest positive entry before the scaling, then the largest
    expect(at(lows, 1)).toBe(7.0);
    expectTable(out, [3.0 / 7, 1.0]);
  });
  it("a scale's low is its smallest positive entry, negated when the table has zeros (−∞ when every entry is 0)", () => {
    const T = tab([0, 5e-300, 0, 2, 1e-310]), Z = tab([0, 0, 0]), P = tab([3, 4e-200, 5]), res = garbage(3);
    expect(elimProgramRun(program([3, <i32>T, 5, 0, 0, 2, 3, <i32>Z, 3, 0, 0, 2, 3, <i32>P, 3, 0, 0, 2]), 18, res, lows)).toBe(-1);
    expect(at(lows, 0)).toBe(-1e-310);
    expect(at(lows, 1)).toBe(2.0);
    expect(at(lows, 2)).toBe(-Infinity);
    expect(at(lows, 3)).toBe(0.0);
    expect(at(lows, 4)).toBe(4e-200);
    expect(at(lows, 5)).toBe(5.0);
    expect(at(res, 0)).toBe(2.0);
  });
  it('stops at the first scale whose table is all zero, leaving later ops undone; a finite-only check does not', () => {
    const Z = tab([0, 0]), B = tab([5, 6]), res = garbage(3);
    const scale = (p: usize, check: i32): i32[] => [3, <i32>p, 2, 0, 0, check];
    const finiteOnly = program(scale(Z, 2).concat(scale(B, 1)));
    expect(elimProgramRun(finiteOnly, 12, res, lows)).toBe(-1);
    expect(at(res, 0)).toBe(0.0);
    expect(at(res, 1)).toBe(6.0);
    const C = tab([5, 6]);
    const positive = program(scale(Z, 1).concat(scale(C, 1)));
    expect(elimProgramRun(positive, 12, res, lows)).toBe(0);
    expect(at(C, 1)).toBe(6.0); // the second scale never ran
  });
  it('the register a reduce sets survives into the next call (a program cut between the two)', () => {
    const A = tab([1, 2, 3, 4]), out = garbage(2), res = garbage(1);
    expect(elimProgramRun(program([2, 2, <i32>out, <i32>A, <i32>ONE, 2, 2, 2, 0, 1, 1, 2, 0, 0, 0, 0]), 16, res, lows)).toBe(-1);
    // Spoil the table's max: a scale that re-read it would see 100, the register says 7.
    store<f64>(out, 100.0);
    expect(elimProgramRun(program([3, <i32>out, 2, 0, 1, 0]), 6, res, lows)).toBe(-1);
    expect(at(res, 0)).toBe(7.0);
  });
  it('exp-shift results and a stop at a row of −∞', () => {
    const R = tab([0, Math.log(3)]), D = tab([-Infinity, -Infinity]), res = garbage(2);
    expect(elimProgramRun(program([4, <i32>R, 2, 4, <i32>D, 2]), 6, res, lows)).toBe(1);
    expect(at(res, 0)).toBeCloseTo(Math.log(3), 15);
    expect(at(res, 1)).toBe(-Infinity);
    expectTable(R, [1.0 / 3, 1.0]);
  });
});
