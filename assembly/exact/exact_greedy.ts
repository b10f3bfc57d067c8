// Greedy elimination orderings and their clique sizes (bindings/exact/orderings.ts chooses among
// them): min-fill, weighted min-fill, min-degree and min-weight by a heap of (score, tie-break,
// index), and the elimination of a given order, measuring every clique. The interaction graph is a
// pool of adjacency lists in insertion order (removal shifts, additions append), as the TypeScript
// code this replaces kept it, so scores, floating sums and tie-breaks — and with them the orders —
// are the same.
//
// Memory: this runs on the planner's own instance (core/engine.ts, plannerEngine), so, unlike the
// other kernels, it allocates what it needs (the lists grow as fill edges are added) and keeps its
// buffers for the next run; the caller holds no view across the call.

/** Growable array of T in unmanaged memory. */
export class Buf<T> {
  ptr: usize;
  cap: i32;
  constructor(cap: i32) {
    this.cap = max(cap, 16);
    this.ptr = heap.alloc(<usize>this.cap * sizeof<T>());
  }
  @inline get(k: i32): T {
    return load<T>(this.ptr + <usize>k * sizeof<T>());
  }
  @inline set(k: i32, x: T): void {
    store<T>(this.ptr + <usize>k * sizeof<T>(), x);
  }
  reserve(n: i32): void {
    if (n <= this.cap) return;
    const c = max(n, 2 * this.cap);
    this.ptr = heap.realloc(this.ptr, <usize>c * sizeof<T>());
    this.cap = c;
  }
  free(): void {
    heap.free(this.ptr);
  }
}
type Ints = Buf<i32>;
type Floats = Buf<f64>;

// The graph (module state: one run at a time). The hot arrays are read through raw pointers
// (P_*), refreshed by syncPointers whenever a buffer may have moved.
let n = 0;
let pool = new Buf<i32>(16);
let top = 0;
let start = new Buf<i32>(16);
let deg = new Buf<i32>(16);
let cap = new Buf<i32>(16);
let mark = new Buf<i32>(16);
let stamp = 0;
/** The fill edges the last eliminate added: pairs (a, b) at 2k, 2k + 1. */
let addedPairs = new Buf<i32>(16);
let added = 0;
let card: usize = 0;
let logK: usize = 0;
let P_POOL: usize = 0;
let P_START: usize = 0;
let P_DEG: usize = 0;
let P_MARK: usize = 0;

@inline function poolAt(k: i32): i32 {
  return load<i32>(P_POOL + (<usize>k << 2));
}
@inline function startOf(v: i32): i32 {
  return load<i32>(P_START + (<usize>v << 2));
}
@inline function degOf(v: i32): i32 {
  return load<i32>(P_DEG + (<usize>v << 2));
}
@inline function markOf(v: i32): i32 {
  return load<i32>(P_MARK + (<usize>v << 2));
}
function syncPointers(): void {
  P_POOL = pool.ptr;
  P_START = start.ptr;
  P_DEG = deg.ptr;
  P_MARK = mark.ptr;
}
@inline function at(v: i32, k: i32): i32 {
  return poolAt(startOf(v) + k);
}
@inline function cardOf(v: i32): f64 {
  return <f64>load<i32>(card + (<usize>v << 2));
}
@inline function logKOf(v: i32): f64 {
  return load<f64>(logK + (<usize>v << 3));
}
function markNbrs(v: i32): void {
  const s = ++stamp, b = startOf(v), d = degOf(v);
  for (let k = 0; k < d; k++) store<i32>(P_MARK + (<usize>poolAt(b + k) << 2), s);
}
@inline function marked(w: i32): bool {
  return markOf(w) == stamp;
}

/** Loads the graph: rowStart (i32[n + 1]) and adj (its lists, in insertion order). */
function loadGraph(count: i32, rowStart: usize, adj: usize): void {
  n = count;
  start.reserve(n);
  deg.reserve(n);
  cap.reserve(n);
  mark.reserve(n);
  syncPointers();
  let at = 0;
  for (let v = 0; v < n; v++) {
    const d = load<i32>(rowStart + (<usize>(v + 1) << 2)) - load<i32>(rowStart + (<usize>v << 2));
    start.set(v, at);
    deg.set(v, d);
    cap.set(v, d + 4);
    mark.set(v, 0);
    at += d + 4;
  }
  stamp = 0;
  pool.reserve(max(16, 2 * at));
  syncPointers();
  top = at;
  for (let v = 0; v < n; v++) {
    const from = load<i32>(rowStart + (<usize>v << 2)), d = deg.get(v), b = start.get(v);
    for (let k = 0; k < d; k++) pool.set(b + k, load<i32>(adj + (<usize>(from + k) << 2)));
  }
}

function remove(u: i32, v: i32): void {
  const b = startOf(u), d = degOf(u);
  let k = 0;
  while (k < d && poolAt(b + k) != v) k++;
  if (k == d) return;
  memory.copy(pool.ptr + (<usize>(b + k) << 2), pool.ptr + (<usize>(b + k + 1) << 2), <usize>(d - k - 1) << 2);
  deg.set(u, d - 1);
}

function append(u: i32, w: i32): void {
  const d = degOf(u);
  if (d == cap.get(u)) {
    const c = 2 * d + 4;
    pool.reserve(top + c);
    P_POOL = pool.ptr;
    memory.copy(pool.ptr + (<usize>top << 2), pool.ptr + (<usize>startOf(u) << 2), <usize>d << 2);
    start.set(u, top);
    cap.set(u, c);
    top += c;
  }
  pool.set(startOf(u) + d, w);
  deg.set(u, d + 1);
}

/** Eliminates v: its neighbours (copied into nb) become a clique; returns their number. */
function eliminate(v: i32, nb: Ints): i32 {
  const d = degOf(v), b = startOf(v);
  for (let k = 0; k < d; k++) nb.set(k, poolAt(b + k));
  for (let k = 0; k < d; k++) remove(nb.get(k), v);
  added = 0;
  for (let k = 0; k < d; k++) {
    const u = nb.get(k);
    markNbrs(u);
    for (let q = 0; q < d; q++) {
      const w = nb.get(q);
      if (w != u && !marked(w)) {
        append(u, w);
        if (q > k) {
          addedPairs.reserve(2 * added + 2);
          addedPairs.set(2 * added, u);
          addedPairs.set(2 * added + 1, w);
          added++;
        }
      }
    }
  }
  deg.set(v, 0);
  return d;
}

// With one cardinality throughout, a clique's log2 depends on its size only: cliqueLog2[d] is the
// sum weight() forms for d neighbours (the same additions in the same order, so the same bits).
let uniformCard = false;
let cliqueLog2 = new Buf<f64>(16);
let P_CLIQUELOG2: usize = 0;

/** Whether every cardinality is the same; if so, fills cliqueLog2 for up to n − 1 neighbours. */
function prepareWeights(): void {
  uniformCard = true;
  for (let v = 1; v < n; v++) if (load<i32>(card + (<usize>v << 2)) != load<i32>(card)) uniformCard = false;
  if (!uniformCard || n == 0) return;
  cliqueLog2.reserve(n);
  P_CLIQUELOG2 = cliqueLog2.ptr;
  const l = logKOf(0);
  let w = l;
  for (let d = 0; d < n; d++) {
    store<f64>(P_CLIQUELOG2 + (<usize>d << 3), w);
    w += l;
  }
}

/** log2 of v's clique (itself and its neighbours), summed in list order. */
function weight(v: i32): f64 {
  const d = degOf(v);
  if (uniformCard) return load<f64>(P_CLIQUELOG2 + (<usize>d << 3));
  let w = logKOf(v);
  for (let k = 0; k < d; k++) w += logKOf(at(v, k));
  return w;
}

/** Pairs of v's neighbours that are not adjacent, counted (weighted: Σ K_a K_b). */
function fill(v: i32, weighted: bool): f64 {
  const d = degOf(v), b = startOf(v);
  markNbrs(v);
  let adjPairs: f64 = 0, sumK: f64 = 0, sumK2: f64 = 0;
  for (let k = 0; k < d; k++) {
    const u = poolAt(b + k), bu = startOf(u), Ku = cardOf(u), du = degOf(u);
    sumK += Ku;
    sumK2 += Ku * Ku;
    for (let q = 0; q < du; q++) {
      const w = poolAt(bu + q);
      if (markOf(w) == stamp) adjPairs += weighted ? Ku * cardOf(w) : 1;
    }
  }
  const allPairs = weighted ? (sumK * sumK - sumK2) / 2 : (<f64>d * <f64>(d - 1)) / 2;
  return allPairs - adjPairs / 2;
}

// Indexed min-heap of (a, b, v) triples, lexicographic: each live vertex once, at heapAt[v] (−1
// when out), its key changed in place. It pops what a heap of every pushed key with stale entries
// skipped would (the live keys are the same set), with n entries instead of every push.
let heapA = new Buf<f64>(64);
let heapB = new Buf<f64>(64);
let heapV = new Buf<i32>(64);
let heapAt = new Buf<i32>(64);
let heapSize = 0;
let P_HA: usize = heapA.ptr;
let P_HB: usize = heapB.ptr;
let P_HV: usize = heapV.ptr;
let P_HAT: usize = heapAt.ptr;

/** Room for n vertices, none in the heap. */
function heapReset(count: i32): void {
  heapA.reserve(count);
  heapB.reserve(count);
  heapV.reserve(count);
  heapAt.reserve(count);
  P_HA = heapA.ptr;
  P_HB = heapB.ptr;
  P_HV = heapV.ptr;
  P_HAT = heapAt.ptr;
  for (let v = 0; v < count; v++) store<i32>(P_HAT + (<usize>v << 2), -1);
  heapSize = 0;
}

// Sifting moves a hole: the entry is written once where it stops, each entry it passes once
// (what a chain of swaps leaves, with a third of the writes). Whether (a, b, v) is below the entry at j:
@inline function keyLess(a: f64, b: f64, v: i32, j: i32): bool {
  const aj = load<f64>(P_HA + (<usize>(j) << 3));
  if (a < aj) return true;
  if (a != aj) return false;
  const bj = load<f64>(P_HB + (<usize>(j) << 3));
  return b < bj || (b == bj && v < load<i32>(P_HV + (<usize>(j) << 2)));
}
@inline function place(i: i32, a: f64, b: f64, v: i32): void {
  store<f64>(P_HA + (<usize>(i) << 3), a);
  store<f64>(P_HB + (<usize>(i) << 3), b);
  store<i32>(P_HV + (<usize>(i) << 2), v);
  store<i32>(P_HAT + (<usize>v << 2), i);
}
/** Whether the entry at i is below the entry at j. */
@inline function less(i: i32, j: i32): bool {
  return keyLess(load<f64>(P_HA + (<usize>(i) << 3)), load<f64>(P_HB + (<usize>(i) << 3)), load<i32>(P_HV + (<usize>(i) << 2)), j);
}
@inline function moveTo(i: i32, j: i32): void {
  place(i, load<f64>(P_HA + (<usize>(j) << 3)), load<f64>(P_HB + (<usize>(j) << 3)), load<i32>(P_HV + (<usize>(j) << 2)));
}
function siftUp(i: i32): void {
  const a = load<f64>(P_HA + (<usize>(i) << 3)), b = load<f64>(P_HB + (<usize>(i) << 3)), v = load<i32>(P_HV + (<usize>(i) << 2));
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (!keyLess(a, b, v, p)) break;
    moveTo(i, p);
    i = p;
  }
  place(i, a, b, v);
}
function siftDown(i: i32): void {
  const a = load<f64>(P_HA + (<usize>(i) << 3)), b = load<f64>(P_HB + (<usize>(i) << 3)), v = load<i32>(P_HV + (<usize>(i) << 2));
  for (;;) {
    const l = 2 * i + 1, r = l + 1;
    if (l >= heapSize) break;
    // The smaller child, then whether it is below the entry (keys are distinct: the index decides ties).
    const m = r < heapSize && less(r, l) ? r : l;
    if (keyLess(a, b, v, m)) break;
    moveTo(i, m);
    i = m;
  }
  place(i, a, b, v);
}
/** v's key becomes (a, b): inserted, or moved within the heap (room: heapReset's count). */
function push(a: f64, b: f64, v: i32): void {
  let i = load<i32>(P_HAT + (<usize>v << 2));
  if (i < 0) {
    i = heapSize++;
    store<i32>(P_HV + (<usize>(i) << 2), v);
    store<i32>(P_HAT + (<usize>v << 2), i);
  }
  store<f64>(P_HA + (<usize>(i) << 3), a);
  store<f64>(P_HB + (<usize>(i) << 3), b);
  siftUp(i);
  siftDown(load<i32>(P_HAT + (<usize>v << 2)));
}
/** Removes the top: the last entry takes its place and sifts down. */
function pop(): void {
  const last = --heapSize;
  store<i32>(P_HAT + (<usize>load<i32>(P_HV) << 2), -1);
  if (last > 0) {
    moveTo(0, last);
    siftDown(0);
  }
}

// Min-fill's incremental keys (see fillBefore / fillAfter). Per vertex: its fill weight kw
// (cardinality, or 1 unweighted), change marks, clique marks, its index in the clique.
let kw = new Buf<f64>(16);
let changed = new Buf<i32>(16);
let previous = new Buf<f64>(16);
let inClique = new Buf<i32>(16);
let inChanged = new Buf<i32>(16);
let cliqueAt = new Buf<i32>(16);
let dStamp = new Buf<i32>(16);
let tick = 0;
// Per clique member (by its index in N): tri(u), ΣK and ΣK² over C_u; fill partners (CSR) and the
// weight of the fill edges at it.
let triOld = new Buf<f64>(16);
let cSum = new Buf<f64>(16);
let cSq = new Buf<f64>(16);
let partnerStart = new Buf<i32>(17);
let fillAt = new Buf<i32>(16);
let inc = new Buf<f64>(16);
let partner = new Buf<i32>(16);
let Kv: f64 = 1;
let curA = new Buf<f64>(16);
let curB = new Buf<f64>(16);
let P_KW: usize = 0;
let P_CURA: usize = 0;
let P_CURB: usize = 0;
let P_INCLIQUE: usize = 0;

/**
 * Before v's elimination: its neighbours' tri(u) = P(N(u)) − fill(u) and their C sums (curA holds
 * every vertex's fill). fill(u) = P(N(u)) − tri(u), P(S) = Σ_{pairs in S} K_a K_b, tri(u) the same
 * over the edges within N(u).
 */
function fillBefore(v: i32): void {
  const d = degOf(v);
  triOld.reserve(d);
  cSum.reserve(d);
  cSq.reserve(d);
  Kv = load<f64>(P_KW + (<usize>(v) << 3));
  markNbrs(v);
  for (let k = 0; k < d; k++) {
    const u = at(v, k), du = degOf(u);
    let s1: f64 = 0, s2: f64 = 0, c1: f64 = 0, c2: f64 = 0;
    for (let q = 0; q < du; q++) {
      const x = at(u, q), K = load<f64>(P_KW + (<usize>(x) << 3));
      s1 += K;
      s2 += K * K;
      if (marked(x)) {
        c1 += K;
        c2 += K * K;
      }
    }
    triOld.set(k, (s1 * s1 - s2) / 2 - load<f64>(P_CURA + (<usize>(u) << 3)));
    cSum.set(k, c1);
    cSq.set(k, c2);
  }
}

@inline function noteChanged(u: i32, m: i32): i32 {
  if (inChanged.get(u) != 0) return m;
  inChanged.set(u, 1);
  previous.set(m, load<f64>(P_CURA + (<usize>(u) << 3)));
  changed.set(m, u);
  return m + 1;
}

/**
 * After it (nb: its d neighbours N, now a clique by the fill edges F): new fills into curA; returns
 * how many vertices `changed` lists. Outside N ∪ {v} a vertex keeps its neighbours and its fill
 * drops by F's edges within them; a member u had N(u) = A ∪ C ∪ {v} (A outside N, C = N(u) ∩ N)
 * and now has A ∪ B (B = N \ {u} = C ∪ D, D its fill partners), so tri'(u) = tri(u) − e(C) −
 * K_v ΣK(C) + e(A, D) + P(B), with e(C) = P(C) − (F within C). Integer counts throughout, so the
 * keys are exactly a recount's.
 */
function fillAfter(nb: Ints, d: i32): i32 {
  let m = 0;
  let totS: f64 = 0, totQ: f64 = 0, totF: f64 = 0;
  for (let k = 0; k < d; k++) {
    const u = nb.get(k), K = load<f64>(P_KW + (<usize>(u) << 3));
    store<i32>(P_INCLIQUE + (<usize>(u) << 2), 1);
    cliqueAt.set(u, k);
    totS += K;
    totQ += K * K;
  }
  // Outside the clique: common neighbours of each fill edge's ends.
  for (let e = 0; e < added; e++) {
    const a = addedPairs.get(2 * e), b = addedPairs.get(2 * e + 1);
    markNbrs(a);
    const drop = load<f64>(P_KW + (<usize>(a) << 3)) * load<f64>(P_KW + (<usize>(b) << 3));
    totF += drop;
    const db = degOf(b);
    for (let q = 0; q < db; q++) {
      const w = at(b, q);
      if (!marked(w) || load<i32>(P_INCLIQUE + (<usize>(w) << 2)) != 0) continue;
      m = noteChanged(w, m);
      store<f64>(P_CURA + (<usize>(w) << 3), load<f64>(P_CURA + (<usize>(w) << 3)) - drop);
    }
  }
  // Fill partners of each clique member (counting sort) and the weight of the fill edges at each.
  partnerStart.reserve(d + 1);
  fillAt.reserve(d);
  inc.reserve(d);
  partner.reserve(2 * added);
  for (let k = 0; k <= d; k++) partnerStart.set(k, 0);
  for (let e = 0; e < 2 * added; e++) {
    const j = cliqueAt.get(addedPairs.get(e)) + 1;
    partnerStart.set(j, partnerStart.get(j) + 1);
  }
  for (let k = 0; k < d; k++) partnerStart.set(k + 1, partnerStart.get(k + 1) + partnerStart.get(k));
  for (let k = 0; k < d; k++) {
    fillAt.set(k, partnerStart.get(k));
    inc.set(k, 0);
  }
  for (let e = 0; e < added; e++) {
    const a = addedPairs.get(2 * e), b = addedPairs.get(2 * e + 1), w = load<f64>(P_KW + (<usize>(a) << 3)) * load<f64>(P_KW + (<usize>(b) << 3));
    const ja = cliqueAt.get(a), jb = cliqueAt.get(b);
    partner.set(fillAt.get(ja), b);
    fillAt.set(ja, fillAt.get(ja) + 1);
    partner.set(fillAt.get(jb), a);
    fillAt.set(jb, fillAt.get(jb) + 1);
    inc.set(ja, inc.get(ja) + w);
    inc.set(jb, inc.get(jb) + w);
  }
  for (let k = 0; k < d; k++) {
    const u = nb.get(k), Ku = load<f64>(P_KW + (<usize>(u) << 3));
    m = noteChanged(u, m);
    // e(A, D), A being u's neighbours outside the clique; and the fill edges at {u} ∪ D (S): Σ inc
    // over S less those within S (u to D, and within D, seen from both ends).
    markNbrs(u);
    const tk = ++tick;
    const p0 = partnerStart.get(k), p1 = partnerStart.get(k + 1);
    for (let p = p0; p < p1; p++) dStamp.set(partner.get(p), tk);
    let eAD: f64 = 0, atS = inc.get(k), withinD: f64 = 0;
    for (let p = p0; p < p1; p++) {
      const y = partner.get(p), Ky = load<f64>(P_KW + (<usize>(y) << 3)), j = cliqueAt.get(y), dy = degOf(y);
      let s: f64 = 0;
      for (let q = 0; q < dy; q++) {
        const x = at(y, q);
        if (marked(x) && load<i32>(P_INCLIQUE + (<usize>(x) << 2)) == 0) s += load<f64>(P_KW + (<usize>(x) << 3));
      }
      eAD += Ky * s;
      atS += inc.get(j) - Ku * Ky;
      const r1 = partnerStart.get(j + 1);
      for (let r = partnerStart.get(j); r < r1; r++) if (dStamp.get(partner.get(r)) == tk) withinD += Ky * load<f64>(P_KW + (<usize>(partner.get(r)) << 3));
    }
    // F within C_u: all of F less the edges at S.
    const fillC = totF - (atS - withinD / 2);
    const c1 = cSum.get(k), eC = (c1 * c1 - cSq.get(k)) / 2 - fillC;
    const sB = totS - Ku, qB = totQ - Ku * Ku;
    const tri = triOld.get(k) - eC - Kv * c1 + eAD + (sB * sB - qB) / 2;
    let s1: f64 = 0, s2: f64 = 0;
    const du = degOf(u);
    for (let q = 0; q < du; q++) {
      const K = load<f64>(P_KW + (<usize>(at(u, q)) << 3));
      s1 += K;
      s2 += K * K;
    }
    store<f64>(P_CURA + (<usize>(u) << 3), (s1 * s1 - s2) / 2 - tri);
  }
  return m;
}

/** Sizes every per-vertex buffer for n vertices. */
function reserveAll(): void {
  kw.reserve(n);
  changed.reserve(n);
  previous.reserve(n);
  inClique.reserve(n);
  inChanged.reserve(n);
  cliqueAt.reserve(n);
  dStamp.reserve(n);
  curA.reserve(n);
  curB.reserve(n);
  P_KW = kw.ptr;
  P_CURA = curA.ptr;
  P_CURB = curB.ptr;
  P_INCLIQUE = inClique.ptr;
}

const MIN_FILL = 0, WEIGHTED_MIN_FILL = 1, MIN_DEGREE = 2, MIN_WEIGHT = 3;

/** v's key for `kind` into curA / curB; whether it changed. */
function setKey(v: i32, kind: i32): bool {
  let a: f64, b: f64;
  if (kind == MIN_FILL || kind == WEIGHTED_MIN_FILL) {
    a = fill(v, kind == WEIGHTED_MIN_FILL);
    b = weight(v);
  } else if (kind == MIN_DEGREE) {
    a = <f64>degOf(v);
    b = weight(v);
  } else {
    a = weight(v);
    b = <f64>degOf(v);
  }
  if (a == load<f64>(P_CURA + (<usize>(v) << 3)) && b == load<f64>(P_CURB + (<usize>(v) << 3))) return false;
  store<f64>(P_CURA + (<usize>(v) << 3), a);
  store<f64>(P_CURB + (<usize>(v) << 3), b);
  return true;
}

// The cliques of a greedy run, measured as simulateRun measures them (the same lists in the same
// order, so the same bits): treewidth, the largest clique's log2 and entries, Σ entries.
let runTreewidth = 0;
let runMaxLog2: f64 = 0;
let runMaxEntries: f64 = 1;
let runTotal: f64 = 0;

/** Records v's clique (log2: its weight) before v is eliminated. */
function noteClique(v: i32, log2: f64): void {
  const d = degOf(v);
  let entries = cardOf(v);
  for (let k = 0; k < d; k++) entries *= cardOf(at(v, k));
  runTreewidth = max(runTreewidth, d);
  if (log2 > runMaxLog2) {
    runMaxLog2 = log2;
    runMaxEntries = entries;
  }
  runTotal += entries;
}

/**
 * One step of greedyOrderRun: pops the best vertex and eliminates it, updating its neighbours'
 * keys; returns it, −1 when its clique is past 2^abortLog2, −2 when none is left. The heap holds
 * every live vertex at its current key: each key change is pushed, and a vertex, once eliminated,
 * is in no list, so no key of it changes again. A function of its own so that it runs optimised
 * after its first calls (V8 swaps optimised WASM code in only between calls: greedyOrderRun is one
 * long call).
 */
function greedyStep(kind: i32, fillKeys: bool, abortLog2: f64, nb: Ints): i32 {
  if (heapSize == 0) return -2;
  const v = load<i32>(P_HV);
  pop();
  const log2 = weight(v);
  if (log2 > abortLog2) return -1;
  noteClique(v, log2);
  if (fillKeys) fillBefore(v);
  const d = eliminate(v, nb);
  if (!fillKeys) {
    // v's neighbours: new neighbourhoods, keys computed afresh.
    for (let k = 0; k < d; k++) {
      const u = nb.get(k);
      if (setKey(u, kind)) push(load<f64>(P_CURA + (<usize>(u) << 3)), load<f64>(P_CURB + (<usize>(u) << 3)), u);
    }
    return v;
  }
  const m = fillAfter(nb, d);
  for (let k = 0; k < m; k++) {
    const u = changed.get(k), w = weight(u);
    if (load<i32>(P_INCLIQUE + (<usize>(u) << 2)) != 0 && load<f64>(P_CURB + (<usize>(u) << 3)) == w && previous.get(k) == load<f64>(P_CURA + (<usize>(u) << 3))) continue;
    store<f64>(P_CURB + (<usize>(u) << 3), w);
    push(load<f64>(P_CURA + (<usize>(u) << 3)), w, u);
  }
  for (let k = 0; k < d; k++) {
    store<i32>(P_INCLIQUE + (<usize>(nb.get(k)) << 2), 0);
    cliqueAt.set(nb.get(k), -1);
  }
  for (let k = 0; k < m; k++) inChanged.set(changed.get(k), 0);
  return v;
}

/**
 * A greedy elimination order of the graph (rowStart: i32[n + 1], adj: its adjacency lists in
 * insertion order; card: i32[n], logK: f64[n], log2 of each cardinality) by `kind` (0 min-fill,
 * 1 weighted min-fill, 2 min-degree, 3 min-weight): the lowest key first, ties by the second
 * score, then by index. Writes order (i32[n]) and its cliques' stats (f64[4]: simulateRun's first
 * four, which a simulation of the order with any limit at or past abortLog2 would give) and returns
 * n, or returns −1 as soon as the variable to eliminate has a clique of more than 2^abortLog2 entries.
 */
export function greedyOrderRun(count: i32, rowStart: usize, adj: usize, cards: usize, logs: usize, kind: i32, abortLog2: f64, order: usize, stats: usize): i32 {
  loadGraph(count, rowStart, adj);
  card = cards;
  logK = logs;
  prepareWeights();
  reserveAll();
  const fillKeys = kind == MIN_FILL || kind == WEIGHTED_MIN_FILL;
  for (let v = 0; v < n; v++) {
    store<f64>(P_KW + (<usize>(v) << 3), kind == WEIGHTED_MIN_FILL ? cardOf(v) : 1);
    store<i32>(P_INCLIQUE + (<usize>(v) << 2), 0);
    inChanged.set(v, 0);
    cliqueAt.set(v, -1);
    dStamp.set(v, 0);
  }
  tick = 0;
  heapReset(n);
  const nb = new Buf<i32>(n);
  for (let v = 0; v < n; v++) {
    store<f64>(P_CURA + (<usize>(v) << 3), NaN);
    setKey(v, kind);
    push(load<f64>(P_CURA + (<usize>(v) << 3)), load<f64>(P_CURB + (<usize>(v) << 3)), v);
  }
  runTreewidth = 0;
  runMaxLog2 = 0;
  runMaxEntries = 1;
  runTotal = 0;
  let t = 0, result = n;
  for (;;) {
    const r = greedyStep(kind, fillKeys, abortLog2, nb);
    if (r == -2) break;
    if (r == -1) {
      result = -1;
      break;
    }
    store<i32>(order + (<usize>t << 2), r);
    t++;
  }
  nb.free();
  store<f64>(stats, <f64>runTreewidth);
  store<f64>(stats, runMaxLog2, 8);
  store<f64>(stats, runMaxEntries, 16);
  store<f64>(stats, runTotal, 24);
  return result;
}

/**
 * Eliminates in `order` (i32[n]) on the graph (as greedyOrderRun's), measuring every clique: stats
 * (f64[5]) = [treewidth, log2 of the largest clique, its entries, Σ entries, aborted (1/0)]; stops
 * once a clique passes 2^abortLog2. With cliques ≠ 0 (i32, room for Σ (1 + |C_v|)), writes each
 * eliminated variable, its neighbour count and its neighbours, one after another. Returns Σ
 * (2 + |C_v| − 1) over the variables eliminated: the room cliques needs.
 */
export function simulateRun(count: i32, rowStart: usize, adj: usize, cards: usize, logs: usize, order: usize, abortLog2: f64, stats: usize, cliques: usize): i32 {
  loadGraph(count, rowStart, adj);
  card = cards;
  logK = logs;
  const nb = new Buf<i32>(n);
  let tw = 0, room = 0, aborted = 0;
  let maxLog2: f64 = 0, maxEntries: f64 = 1, total: f64 = 0;
  for (let t = 0; t < n; t++) {
    const v = load<i32>(order + (<usize>t << 2));
    const d = degOf(v);
    let log2 = logKOf(v), entries = cardOf(v);
    for (let k = 0; k < d; k++) {
      const u = at(v, k);
      log2 += logKOf(u);
      entries *= cardOf(u);
    }
    tw = max(tw, d);
    if (log2 > maxLog2) {
      maxLog2 = log2;
      maxEntries = entries;
    }
    total += entries;
    if (log2 > abortLog2) {
      aborted = 1;
      break;
    }
    if (cliques != 0) {
      const c = cliques + (<usize>room << 2);
      store<i32>(c, v);
      store<i32>(c, d, 4);
      for (let k = 0; k < d; k++) store<i32>(c + (<usize>(k + 2) << 2), at(v, k));
    }
    room += d + 2;
    eliminate(v, nb);
  }
  nb.free();
  store<f64>(stats, <f64>tw);
  store<f64>(stats, maxLog2, 8);
  store<f64>(stats, maxEntries, 16);
  store<f64>(stats, total, 24);
  store<f64>(stats, <f64>aborted, 32);
  return room;
}
