import { gf2Reduce, gf2Bit } from '../variational/gf2';

// A small LCG for test matrices (not the engine's generator).
let lcg: u64 = 0x9e3779b97f4a7c15;
function rnd(): u32 {
  lcg = lcg * 6364136223846793005 + 1442695040888963407;
  return <u32>(lcg >>> 33);
}

function strideFor(n: i32): i32 {
  return (((n + 1 + 63) >>> 6) + 1) & ~1;
}

/** Random m × (n+1) system; rows are then made dependent with probability ~1/3 (copies and sums). */
function randomSystem(m: i32, n: i32, stride: i32, density: u32): usize {
  const rows = heap.alloc(<usize>max(m, 1) * <usize>stride * 8);
  memory.fill(rows, 0, <usize>max(m, 1) * <usize>stride * 8);
  for (let r = 0; r < m; r++) {
    const row = rows + <usize>r * <usize>stride * 8;
    const kind = rnd() % 6;
    if (r >= 2 && kind == 0) {
      // sum of two earlier rows, with a random b: consistent or not
      const a = rows + <usize>(rnd() % <u32>r) * <usize>stride * 8, b = rows + <usize>(rnd() % <u32>r) * <usize>stride * 8;
      for (let w = 0; w < stride; w++) store<u64>(row + (<usize>w << 3), load<u64>(a + (<usize>w << 3)) ^ load<u64>(b + (<usize>w << 3)));
      const nb = row + (<usize>(n >>> 6) << 3);
      store<u64>(nb, (load<u64>(nb) & ~(<u64>1 << <u64>(n & 63))) | (<u64>(rnd() & 1) << <u64>(n & 63)));
      continue;
    }
    if (r >= 1 && kind == 1) {
      memory.copy(row, rows + <usize>(rnd() % <u32>r) * <usize>stride * 8, <usize>stride * 8);
      continue;
    }
    for (let c = 0; c <= n; c++) {
      if (rnd() % 100 < density) {
        const p = row + (<usize>(c >>> 6) << 3);
        store<u64>(p, load<u64>(p) | (<u64>1 << <u64>(c & 63)));
      }
    }
  }
  return rows;
}

/** Naive reference: one byte per entry, textbook Gauss–Jordan. Returns rank; consistent in out[0]. */
function naive(rows: usize, m: i32, n: i32, stride: i32, consistent: StaticArray<i32>): i32 {
  const a = new StaticArray<u8>(max(m, 1) * (n + 1));
  for (let r = 0; r < m; r++) for (let c = 0; c <= n; c++) a[r * (n + 1) + c] = <u8>gf2Bit(rows + <usize>r * <usize>stride * 8, c);
  let rank = 0;
  for (let c = 0; c < n && rank < m; c++) {
    let p = -1;
    for (let r = rank; r < m; r++) if (a[r * (n + 1) + c]) { p = r; break; }
    if (p < 0) continue;
    for (let k = 0; k <= n; k++) {
      const t = a[p * (n + 1) + k];
      a[p * (n + 1) + k] = a[rank * (n + 1) + k];
      a[rank * (n + 1) + k] = t;
    }
    for (let r = 0; r < m; r++) {
      if (r != rank && a[r * (n + 1) + c]) for (let k = 0; k <= n; k++) a[r * (n + 1) + k] ^= a[rank * (n + 1) + k];
    }
    rank++;
  }
  consistent[0] = 1;
  for (let r = rank; r < m; r++) if (a[r * (n + 1) + n]) consistent[0] = 0;
  return rank;
}

/** x from the reduced rows and a random assignment of the free columns. */
function solution(red: usize, rank: i32, n: i32, stride: i32, piv: usize): StaticArray<u8> {
  const x = new StaticArray<u8>(n);
  const isPiv = new StaticArray<u8>(n);
  for (let l = 0; l < rank; l++) isPiv[load<i32>(piv + (<usize>l << 2))] = 1;
  for (let c = 0; c < n; c++) if (!isPiv[c]) x[c] = <u8>(rnd() & 1);
  for (let l = 0; l < rank; l++) {
    const row = red + <usize>l * <usize>stride * 8;
    const p = load<i32>(piv + (<usize>l << 2));
    let v = gf2Bit(row, n);
    for (let c = 0; c < n; c++) if (c != p && gf2Bit(row, c)) v ^= <i32>x[c];
    x[p] = <u8>v;
  }
  return x;
}

function satisfies(orig: usize, m: i32, n: i32, stride: i32, x: StaticArray<u8>): bool {
  for (let r = 0; r < m; r++) {
    const row = orig + <usize>r * <usize>stride * 8;
    let v = 0;
    for (let c = 0; c < n; c++) if (gf2Bit(row, c)) v ^= <i32>x[c];
    if (v != gf2Bit(row, n)) return false;
  }
  return true;
}

function check(m: i32, n: i32, density: u32, withAvoid: bool): void {
  const stride = strideFor(n);
  const bytes = <usize>max(m, 1) * <usize>stride * 8;
  const orig = randomSystem(m, n, stride, density);
  const red = heap.alloc(bytes);
  memory.copy(red, orig, bytes);
  const piv = heap.alloc(<usize>max(m, 1) * 4);
  const avoid = heap.alloc(<usize>stride * 8);
  memory.fill(avoid, 0, <usize>stride * 8);
  const code = gf2Reduce(red, m, n, stride, piv, withAvoid ? avoid : 0, 0, 0);
  const cons = new StaticArray<i32>(1);
  const rank = naive(orig, m, n, stride, cons);
  expect(code >= 0 ? code : -code - 1).toBe(rank, 'rank');
  expect(code >= 0 ? 1 : 0).toBe(cons[0], 'consistency');
  // Reduced form: each pivot column is set in its row only.
  for (let l = 0; l < rank; l++) {
    const p = load<i32>(piv + (<usize>l << 2));
    for (let q = 0; q < rank; q++) expect(gf2Bit(red + <usize>q * <usize>stride * 8, p)).toBe(q == l ? 1 : 0);
  }
  if (code >= 0) {
    for (let t = 0; t < 8; t++) expect(satisfies(orig, m, n, stride, solution(red, rank, n, stride, piv))).toBe(true, 'Ax = b');
  }
  heap.free(orig);
  heap.free(red);
  heap.free(piv);
  heap.free(avoid);
}

describe('gf2Reduce against a naive byte-matrix Gauss–Jordan', () => {
  it('small dense systems, including rank-deficient and inconsistent ones', () => {
    for (let t = 0; t < 200; t++) check(<i32>(rnd() % 12), 1 + <i32>(rnd() % 12), 50, false);
  });
  it('sparse and dense systems across word boundaries (n = 63 … 200)', () => {
    for (let t = 0; t < 40; t++) check(1 + <i32>(rnd() % 30), 63 + <i32>(rnd() % 138), t & 1 ? 50 : 5, (t & 2) != 0);
  });
  it('more rows than columns: always rank-deficient', () => {
    for (let t = 0; t < 50; t++) check(10 + <i32>(rnd() % 10), 1 + <i32>(rnd() % 9), 50, true);
  });
  it('the empty system has rank 0 and is consistent', () => {
    check(0, 5, 50, false);
  });
  it('0 = 1 is an empty projection; 0 = 0 is dropped', () => {
    const stride = strideFor(3);
    const rows = heap.alloc(3 * <usize>stride * 8);
    memory.fill(rows, 0, 3 * <usize>stride * 8);
    store<u64>(rows, 0b0011); // x0 ⊕ x1 = 0
    store<u64>(rows + <usize>stride * 8, 0b0011); // the same row again: dropped
    store<u64>(rows + <usize>stride * 16, 0b1011); // x0 ⊕ x1 = 1: contradiction
    const piv = heap.alloc(12);
    expect(gf2Reduce(rows, 2, 3, stride, piv, 0, 0, 0)).toBe(1);
    store<u64>(rows, 0b0011);
    store<u64>(rows + <usize>stride * 8, 0b0011);
    expect(gf2Reduce(rows, 3, 3, stride, piv, 0, 0, 0)).toBe(-2);
  });
  it('the avoid mask steers the pivot choice without changing the solution set', () => {
    const stride = strideFor(4);
    const rows = heap.alloc(<usize>stride * 8);
    memory.fill(rows, 0, <usize>stride * 8);
    store<u64>(rows, 0b10111); // x0 ⊕ x1 ⊕ x2 = 1
    const avoid = heap.alloc(<usize>stride * 8);
    memory.fill(avoid, 0, <usize>stride * 8);
    store<u64>(avoid, 0b011);
    const piv = heap.alloc(4);
    expect(gf2Reduce(rows, 1, 4, stride, piv, avoid, 0, 0)).toBe(1);
    expect(load<i32>(piv)).toBe(2);
    expect(gf2Bit(avoid, 2)).toBe(1);
  });
});
