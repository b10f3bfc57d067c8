// Typed-array building blocks for structures over millions of variables, factors or edges: growable
// lists, a counting sort into compressed rows, a pair-scope hash, an index of one- and two-variable
// scopes and a union–find. The model, its builder and the planners use them so that no object is
// made per variable, factor or edge.

/**
 * Items stably grouped by key (0 … n − 1), a counting sort into compressed rows: key v's items are
 * list[start[v] … start[v + 1]), in their given order. `items`: the m items (default 0 … m − 1).
 */
export function countingSort(m: number, n: number, key: (item: number) => number, items?: Int32Array): { start: Int32Array; list: Int32Array } {
  const start = new Int32Array(n + 1), list = new Int32Array(m);
  const item = (t: number): number => (items ? items[t] : t);
  for (let t = 0; t < m; t++) start[key(item(t)) + 1]++;
  for (let v = 0; v < n; v++) start[v + 1] += start[v];
  const fill = start.slice(0, n);
  for (let t = 0; t < m; t++) list[fill[key(item(t))]++] = item(t);
  return { start, list };
}

/** Disjoint sets over 0 … n − 1 (path halving; union links the first root under the second). */
export class UnionFind {
  private readonly up: Int32Array;
  constructor(n: number) {
    this.up = new Int32Array(n);
    for (let i = 0; i < n; i++) this.up[i] = i;
  }
  find(x: number): number {
    const up = this.up;
    while (up[x] !== x) x = up[x] = up[up[x]];
    return x;
  }
  /** Joins the sets of x and y; false when they were one already. */
  union(x: number, y: number): boolean {
    const a = this.find(x), b = this.find(y);
    if (a === b) return false;
    this.up[a] = b;
    return true;
  }
}

/** Typed arrays that grow by doubling (the builder's storage: no object per factor). */
export class GrowI32 {
  a = new Int32Array(16);
  length = 0;
  /** Room for `k` more entries (bulk writers fill a[length …] and advance length themselves). */
  ensure(k: number): void {
    if (this.length + k <= this.a.length) return;
    const b = new Int32Array(Math.max(this.a.length * 2, this.length + k));
    b.set(this.a.subarray(0, this.length));
    this.a = b;
  }
  push(x: number): void {
    if (this.length === this.a.length) this.ensure(1);
    this.a[this.length++] = x;
  }
  /** The filled part; no copy when the storage is exactly full (bulk-built lattices). */
  done(): Int32Array {
    return this.length === this.a.length ? this.a : this.a.slice(0, this.length);
  }
  /** The entries so far, a view (valid until the next push). */
  view(): Int32Array {
    return this.a.subarray(0, this.length);
  }
}

/**
 * Factor index by pair scope (lo, hi), in open addressing over typed arrays: a Map keyed by
 * lo·n + hi (past 2^31 on large models: boxed doubles) took 1.8 s for the 2·10⁶ factors of a
 * 10⁶-variable chain read from UAI.
 */
export class ScopeIndex {
  private lo = new Int32Array(64).fill(-1);
  private hi = new Int32Array(64);
  private val = new Int32Array(64);
  private count = 0;
  private slot(lo: number, hi: number): number {
    const mask = this.lo.length - 1;
    let h = (Math.imul(lo, 0x9e3779b1) ^ Math.imul(hi, 0x85ebca77)) >>> 0;
    h = (h ^ (h >>> 15)) & mask;
    while (this.lo[h] >= 0 && (this.lo[h] !== lo || this.hi[h] !== hi)) h = (h + 1) & mask;
    return h;
  }
  /** The factor on (lo, hi), or −1. */
  get(lo: number, hi: number): number {
    const h = this.slot(lo, hi);
    return this.lo[h] >= 0 ? this.val[h] : -1;
  }
  /** Records a new scope (not present). */
  add(lo: number, hi: number, f: number): void {
    if (2 * (this.count + 1) > this.lo.length) {
      const [lo0, hi0, val0] = [this.lo, this.hi, this.val];
      this.lo = new Int32Array(2 * lo0.length).fill(-1);
      this.hi = new Int32Array(2 * lo0.length);
      this.val = new Int32Array(2 * lo0.length);
      for (let k = 0; k < lo0.length; k++) if (lo0[k] >= 0) this.put(lo0[k], hi0[k], val0[k]);
    }
    this.put(lo, hi, f);
    this.count++;
  }
  private put(lo: number, hi: number, f: number): void {
    const h = this.slot(lo, hi);
    this.lo[h] = lo;
    this.hi[h] = hi;
    this.val[h] = f;
  }
}

/**
 * Factor index by a scope of one variable or a pair (lo < hi; hi −1: unary on lo), by the lower
 * variable: its unary factor and its first two pairs in arrays (a lattice's right and down bonds:
 * hashing the second took 0.2 s of the 2·10⁶ bonds of a 10⁶-site lattice read from UAI), further
 * pairs in a ScopeIndex.
 */
export class SmallScopeIndex {
  private readonly unaryOf: Int32Array;
  private readonly firstPair: Int32Array;
  private readonly firstHi: Int32Array;
  private readonly secondPair: Int32Array;
  private readonly secondHi: Int32Array;
  private readonly morePairs = new ScopeIndex();
  constructor(n: number) {
    this.unaryOf = new Int32Array(n).fill(-1);
    this.firstPair = new Int32Array(n).fill(-1);
    this.firstHi = new Int32Array(n);
    this.secondPair = new Int32Array(n).fill(-1);
    this.secondHi = new Int32Array(n);
  }
  /** The factor on (lo, hi), or −1. */
  get(lo: number, hi: number): number {
    if (hi < 0) return this.unaryOf[lo];
    if (this.firstPair[lo] < 0) return -1;
    if (this.firstHi[lo] === hi) return this.firstPair[lo];
    if (this.secondPair[lo] < 0) return -1;
    return this.secondHi[lo] === hi ? this.secondPair[lo] : this.morePairs.get(lo, hi);
  }
  /** Records factor f on a scope not present. */
  add(lo: number, hi: number, f: number): void {
    if (hi < 0) this.unaryOf[lo] = f;
    else if (this.firstPair[lo] < 0) (this.firstPair[lo] = f), (this.firstHi[lo] = hi);
    else if (this.secondPair[lo] < 0) (this.secondPair[lo] = f), (this.secondHi[lo] = hi);
    else this.morePairs.add(lo, hi, f);
  }
}

export class GrowF64 {
  a = new Float64Array(64);
  length = 0;
  reserve(k: number): number {
    const at = this.length;
    if (at + k > this.a.length) {
      let cap = this.a.length * 2;
      while (cap < at + k) cap *= 2;
      const b = new Float64Array(cap);
      b.set(this.a.subarray(0, this.length));
      this.a = b;
    }
    this.length += k;
    return at;
  }
  done(): Float64Array {
    return this.a.slice(0, this.length);
  }
}
