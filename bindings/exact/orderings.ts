// Elimination orderings for exact inference, and their clique sizes (TypeScript: no engine).
//
// The interaction graph lives in one Int32Array pool of adjacency lists (no Set or object per
// variable), so a greedy ordering of a 10⁴-variable grid, or the discovery that none fits the limit,
// takes milliseconds. Lists keep insertion order (removal shifts, additions append), which makes the
// orderings — scores, floating sums and tie-breaks — the same as those of the Set-based code they
// replace, so exact results do not move.

/** What the orderings read of a model: its size and the pairs of variables that share a factor. */
export interface OrderingGraph {
  n: number;
  card: Int32Array;
  pairwiseFactors(): { i: Int32Array; j: Int32Array };
}
import { ModelError } from '../core/errors.ts';

export type OrderingHeuristic = 'minfill' | 'weightedminfill' | 'mindegree' | 'minweight' | 'rcm' | 'natural';
export const ORDERINGS: readonly OrderingHeuristic[] = ['minfill', 'weightedminfill', 'mindegree', 'minweight', 'rcm', 'natural'];

export interface OrderStats {
  name: string;
  order: Int32Array;
  treewidth: number;
  maxEntries: number;
  totalEntries: number;
  /** The simulation stopped early (cliques far past any limit): sizes are lower bounds. */
  aborted: boolean;
}

/** Adjacency lists of the interaction graph that elimination updates in place. */
class ElimGraph {
  private pool: Int32Array;
  private top = 0;
  readonly start: Int32Array;
  readonly deg: Int32Array;
  private readonly cap: Int32Array;
  /** Membership marks: mark[w] === stamp means w is in the marked set. */
  private readonly mark: Int32Array;
  private stamp = 0;

  /** The graph of `model`'s pair factors, or a copy of `from` (built once, eliminated many times). */
  constructor(model: OrderingGraph, from?: ElimGraph) {
    const n = model.n;
    this.mark = new Int32Array(n);
    if (from) {
      this.pool = from.pool.slice();
      this.top = from.top;
      this.start = from.start.slice();
      this.cap = from.cap.slice();
      this.deg = from.deg.slice();
      return;
    }
    // Distinct pairs (i < j) in (i, j) order — the order Model.edges lists them in: bucket the
    // pairs by i, sort each (short) bucket, drop repeats.
    const { i, j } = model.pairwiseFactors();
    const rowStart = new Int32Array(n + 1);
    for (let k = 0; k < i.length; k++) rowStart[i[k] + 1]++;
    for (let v = 0; v < n; v++) rowStart[v + 1] += rowStart[v];
    const fill = rowStart.slice(0, n), second = new Int32Array(i.length);
    for (let k = 0; k < i.length; k++) second[fill[i[k]]++] = j[k];
    const count = new Int32Array(n);
    for (let v = 0; v < n; v++) {
      const row = second.subarray(rowStart[v], rowStart[v + 1]);
      if (row.length > 1) row.sort();
      for (let k = 0; k < row.length; k++) {
        if (k > 0 && row[k] === row[k - 1]) continue;
        count[v]++;
        count[row[k]]++;
      }
    }
    this.start = new Int32Array(n);
    this.cap = new Int32Array(n);
    this.deg = new Int32Array(n);
    let at = 0;
    for (let v = 0; v < n; v++) {
      this.start[v] = at;
      this.cap[v] = count[v] + 4;
      at += this.cap[v];
    }
    this.pool = new Int32Array(Math.max(16, 2 * at));
    this.top = at;
    for (let a = 0; a < n; a++) {
      for (let k = rowStart[a]; k < rowStart[a + 1]; k++) {
        const b = second[k];
        if (k > rowStart[a] && b === second[k - 1]) continue;
        this.pool[this.start[a] + this.deg[a]++] = b;
        this.pool[this.start[b] + this.deg[b]++] = a;
      }
    }
  }

  /** v's neighbours (a view: valid until the graph changes). */
  nbrs(v: number): Int32Array {
    return this.pool.subarray(this.start[v], this.start[v] + this.deg[v]);
  }

  at(v: number, k: number): number {
    return this.pool[this.start[v] + k];
  }

  /** Marks a set; marked(w) is then true for its members until the next markSet. */
  markSet(vs: ArrayLike<number>, len = vs.length): void {
    const s = ++this.stamp;
    for (let k = 0; k < len; k++) this.mark[vs[k]] = s;
  }
  markNbrs(v: number): void {
    const s = ++this.stamp, p = this.pool, b = this.start[v];
    for (let k = 0; k < this.deg[v]; k++) this.mark[p[b + k]] = s;
  }
  marked(w: number): boolean {
    return this.mark[w] === this.stamp;
  }

  private remove(u: number, v: number): void {
    const p = this.pool, b = this.start[u], d = this.deg[u];
    let k = 0;
    while (k < d && p[b + k] !== v) k++;
    if (k === d) return;
    p.copyWithin(b + k, b + k + 1, b + d);
    this.deg[u] = d - 1;
  }

  private append(u: number, w: number): void {
    if (this.deg[u] === this.cap[u]) {
      const cap = 2 * this.cap[u] + 4;
      if (this.top + cap > this.pool.length) {
        const bigger = new Int32Array(Math.max(2 * this.pool.length, this.top + cap));
        bigger.set(this.pool.subarray(0, this.top));
        this.pool = bigger;
      }
      this.pool.copyWithin(this.top, this.start[u], this.start[u] + this.deg[u]);
      this.start[u] = this.top;
      this.cap[u] = cap;
      this.top += cap;
    }
    this.pool[this.start[u] + this.deg[u]++] = w;
  }

  /**
   * Eliminates v: its neighbours (copied into `nb`, returned count) become a clique. Each
   * neighbour u loses v and gains the neighbours it lacked, appended in nb's order.
   */
  eliminate(v: number, nb: Int32Array): number {
    const d = this.deg[v];
    nb.set(this.nbrs(v));
    for (let k = 0; k < d; k++) this.remove(nb[k], v);
    this.added = 0;
    for (let k = 0; k < d; k++) {
      const u = nb[k];
      this.markNbrs(u);
      for (let q = 0; q < d; q++) {
        const w = nb[q];
        if (w !== u && !this.marked(w)) {
          this.append(u, w);
          if (q > k) this.recordAdded(u, w);
        }
      }
    }
    this.deg[v] = 0;
    return d;
  }

  /** The fill edges the last eliminate added: pairs (addedPairs[2k], addedPairs[2k + 1]), k < added. */
  added = 0;
  addedPairs = new Int32Array(64);
  private recordAdded(a: number, b: number): void {
    if (2 * this.added + 2 > this.addedPairs.length) {
      const bigger = new Int32Array(2 * this.addedPairs.length);
      bigger.set(this.addedPairs);
      this.addedPairs = bigger;
    }
    this.addedPairs[2 * this.added] = a;
    this.addedPairs[2 * this.added + 1] = b;
    this.added++;
  }

  /** Pairs of v's neighbours that are not adjacent, counted (weighted: Σ K_a K_b). */
  fill(v: number, card: Int32Array, weighted: boolean): number {
    const d = this.deg[v], b = this.start[v], p = this.pool;
    this.markNbrs(v);
    // Adjacent pairs among the neighbours, each seen from both ends.
    let adjPairs = 0, sumK = 0, sumK2 = 0;
    for (let k = 0; k < d; k++) {
      const u = p[b + k], bu = this.start[u], Ku = card[u];
      sumK += Ku;
      sumK2 += Ku * Ku;
      for (let q = 0; q < this.deg[u]; q++) {
        const w = p[bu + q];
        if (this.mark[w] === this.stamp) adjPairs += weighted ? Ku * card[w] : 1;
      }
    }
    const allPairs = weighted ? (sumK * sumK - sumK2) / 2 : (d * (d - 1)) / 2;
    return allPairs - adjPairs / 2;
  }
}

/** Min-heap of (a, b, v) triples, lexicographic, in typed arrays. */
class Heap {
  private a = new Float64Array(64);
  private b = new Float64Array(64);
  private v = new Int32Array(64);
  size = 0;
  private less(i: number, j: number): boolean {
    const a = this.a, b = this.b;
    return a[i] < a[j] || (a[i] === a[j] && (b[i] < b[j] || (b[i] === b[j] && this.v[i] < this.v[j])));
  }
  private swap(i: number, j: number): void {
    const a = this.a[i], b = this.b[i], v = this.v[i];
    this.a[i] = this.a[j];
    this.b[i] = this.b[j];
    this.v[i] = this.v[j];
    this.a[j] = a;
    this.b[j] = b;
    this.v[j] = v;
  }
  push(a: number, b: number, v: number): void {
    if (this.size === this.v.length) {
      const grow = <T extends Float64Array | Int32Array>(x: T): T => {
        const y = new (x.constructor as new (n: number) => T)(x.length * 2);
        y.set(x);
        return y;
      };
      this.a = grow(this.a);
      this.b = grow(this.b);
      this.v = grow(this.v);
    }
    let i = this.size++;
    this.a[i] = a;
    this.b[i] = b;
    this.v[i] = v;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(i, p)) break;
      this.swap(i, p);
      i = p;
    }
  }
  /** Removes the top; topA/topB/topV read it first. */
  pop(): void {
    const last = --this.size;
    this.swap(0, last);
    let i = 0;
    for (;;) {
      const l = 2 * i + 1, r = l + 1;
      let m = i;
      if (l < this.size && this.less(l, m)) m = l;
      if (r < this.size && this.less(r, m)) m = r;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
  }
  get topA(): number {
    return this.a[0];
  }
  get topB(): number {
    return this.b[0];
  }
  get topV(): number {
    return this.v[0];
  }
}

type Greedy = 'minfill' | 'weightedminfill' | 'mindegree' | 'minweight';

/**
 * Greedy elimination by a local score, ties broken by a second score, then by index. Returns null
 * as soon as the variable to eliminate has a clique of more than 2^abortLog2 entries.
 */
function greedyOrder(model: OrderingGraph, kind: Greedy, abortLog2: number, base?: ElimGraph): Int32Array | null {
  const n = model.n, card = model.card;
  const g = new ElimGraph(model, base);
  const logK = Float64Array.from(card, (k) => Math.log2(k));
  const gone = new Uint8Array(n);
  const weight = (v: number): number => {
    let w = logK[v];
    for (let k = 0; k < g.deg[v]; k++) w += logK[g.at(v, k)];
    return w;
  };
  const curA = new Float64Array(n), curB = new Float64Array(n);
  const setKey = (v: number): boolean => {
    let a: number, b: number;
    switch (kind) {
      case 'minfill': a = g.fill(v, card, false); b = weight(v); break;
      case 'weightedminfill': a = g.fill(v, card, true); b = weight(v); break;
      case 'mindegree': a = g.deg[v]; b = weight(v); break;
      case 'minweight': a = weight(v); b = g.deg[v]; break;
    }
    if (a === curA[v] && b === curB[v]) return false;
    curA[v] = a;
    curB[v] = b;
    return true;
  };
  const heap = new Heap();
  for (let v = 0; v < n; v++) {
    curA[v] = NaN;
    setKey(v);
    heap.push(curA[v], curB[v], v);
  }
  const order = new Int32Array(n);
  const nb = new Int32Array(n);
  let t = 0;
  const fills = kind === 'minfill' || kind === 'weightedminfill' ? new FillUpdate(card, kind === 'weightedminfill') : null;
  while (heap.size > 0) {
    const a = heap.topA, b = heap.topB, v = heap.topV;
    heap.pop();
    if (gone[v] || a !== curA[v] || b !== curB[v]) continue; // stale entry
    if (weight(v) > abortLog2) return null;
    if (fills) fills.before(g, v, curA);
    const d = g.eliminate(v, nb);
    gone[v] = 1;
    order[t++] = v;
    if (!fills) {
      // v's neighbours: new neighbourhoods, keys computed afresh.
      for (let k = 0; k < d; k++) if (setKey(nb[k])) heap.push(curA[nb[k]], curB[nb[k]], nb[k]);
      continue;
    }
    // Fill-based keys from the fill edges the elimination added (FillUpdate): integer counts, so
    // the keys are exactly those a recount would give, and so is the order.
    const m = fills.after(g, nb, d, curA);
    for (let k = 0; k < m; k++) {
      const u = fills.changed[k], b = weight(u);
      if (fills.inClique[u] && curB[u] === b && fills.previous[k] === curA[u]) continue;
      curB[u] = b;
      heap.push(curA[u], b, u);
    }
    fills.done(nb, d, m);
  }
  return order;
}

/**
 * Min-fill's keys after an elimination, without recounting: fill(u) = P(N(u)) − tri(u), where
 * P(S) = Σ_{pairs a < b in S} K_a K_b (1 each, unweighted) and tri(u) the same sum over the edges
 * within N(u). Eliminating v makes its neighbours N a clique by the fill edges F.
 *
 * - A vertex outside N ∪ {v} keeps its neighbours: its fill drops by the edges of F within them.
 * - A clique member u had N(u) = A ∪ C ∪ {v} (A outside N, C = N(u) ∩ N) and now has A ∪ B
 *   (B = N \ {u} = C ∪ D, D its fill partners), so
 *   tri'(u) = tri(u) − e(C) − K_v ΣK(C) + e(A, D) + P(B), with e(C) = P(C) − (F within C).
 *
 * Costs |F| × degree per elimination where a recount costs |N| × degree²: min-fill adds few edges.
 */
class FillUpdate {
  /** Vertices whose keys changed in the last `after` (their fills in curA); previous[k] its fill before. */
  readonly changed: Int32Array;
  readonly previous: Float64Array;
  readonly inClique: Uint8Array;
  private readonly kw: Float64Array;
  private readonly inChanged: Uint8Array;
  private readonly at: Int32Array;
  private partner: Int32Array;
  private readonly stamp: Int32Array;
  private tick = 0;
  // Per clique member (by its index in N): tri(u), ΣK and ΣK² over C_u.
  private triOld = new Float64Array(16);
  private cSum = new Float64Array(16);
  private cSq = new Float64Array(16);
  private partners = new Int32Array(17);
  private fillAt = new Int32Array(16);
  private inc = new Float64Array(16);
  private Kv = 1;

  constructor(card: Int32Array, weighted: boolean) {
    const n = card.length;
    this.kw = Float64Array.from(card, (k) => (weighted ? k : 1));
    this.changed = new Int32Array(n);
    this.previous = new Float64Array(n);
    this.inClique = new Uint8Array(n);
    this.inChanged = new Uint8Array(n);
    this.at = new Int32Array(n).fill(-1);
    this.partner = new Int32Array(2);
    this.stamp = new Int32Array(n);
  }

  /** Before v's elimination: its neighbours' tri and C sums (curA holds every vertex's fill). */
  before(g: ElimGraph, v: number, curA: Float64Array): void {
    const d = g.deg[v], kw = this.kw;
    if (this.triOld.length < d) (this.triOld = new Float64Array(2 * d)), (this.cSum = new Float64Array(2 * d)), (this.cSq = new Float64Array(2 * d)), (this.partners = new Int32Array(2 * d + 1)), (this.fillAt = new Int32Array(2 * d)), (this.inc = new Float64Array(2 * d));
    this.Kv = kw[v];
    g.markNbrs(v);
    for (let k = 0; k < d; k++) {
      const u = g.at(v, k);
      let s1 = 0, s2 = 0, c1 = 0, c2 = 0;
      for (let q = 0; q < g.deg[u]; q++) {
        const x = g.at(u, q), K = kw[x];
        s1 += K;
        s2 += K * K;
        if (g.marked(x)) (c1 += K), (c2 += K * K);
      }
      this.triOld[k] = (s1 * s1 - s2) / 2 - curA[u];
      this.cSum[k] = c1;
      this.cSq[k] = c2;
    }
  }

  /** After it (nb: N, d = |N|): new fills into curA; returns how many vertices `changed` lists. */
  after(g: ElimGraph, nb: Int32Array, d: number, curA: Float64Array): number {
    const kw = this.kw, pairs = g.addedPairs, F = g.added, at = this.at, changed = this.changed, previous = this.previous, inChanged = this.inChanged, inClique = this.inClique;
    let m = 0, totS = 0, totQ = 0, totF = 0;
    for (let k = 0; k < d; k++) {
      const u = nb[k];
      inClique[u] = 1;
      at[u] = k;
      totS += kw[u];
      totQ += kw[u] * kw[u];
    }
    // Outside the clique: common neighbours of each fill edge's ends.
    for (let e = 0; e < F; e++) {
      const a = pairs[2 * e], b = pairs[2 * e + 1];
      g.markNbrs(a);
      const drop = kw[a] * kw[b];
      totF += drop;
      for (let q = 0; q < g.deg[b]; q++) {
        const w = g.at(b, q);
        if (!g.marked(w) || inClique[w]) continue;
        if (!inChanged[w]) (inChanged[w] = 1), (previous[m] = curA[w]), (changed[m++] = w);
        curA[w] -= drop;
      }
    }
    // Fill partners of each clique member, grouped by member (counting sort), and the weight of
    // the fill edges at each (inc).
    const start = this.partners, inc = this.inc;
    start.fill(0, 0, d + 1);
    for (let e = 0; e < 2 * F; e++) start[at[pairs[e]] + 1]++;
    for (let k = 0; k < d; k++) start[k + 1] += start[k];
    if (this.partner.length < 2 * F) this.partner = new Int32Array(4 * F);
    const partner = this.partner, fillAt = this.fillAt;
    for (let k = 0; k < d; k++) (fillAt[k] = start[k]), (inc[k] = 0);
    for (let e = 0; e < F; e++) {
      const a = pairs[2 * e], b = pairs[2 * e + 1], w = kw[a] * kw[b];
      partner[fillAt[at[a]]++] = b;
      partner[fillAt[at[b]]++] = a;
      inc[at[a]] += w;
      inc[at[b]] += w;
    }
    for (let k = 0; k < d; k++) {
      const u = nb[k], Ku = kw[u];
      if (!inChanged[u]) (inChanged[u] = 1), (previous[m] = curA[u]), (changed[m++] = u);
      // e(A, D), A being u's neighbours outside the clique; and the fill edges at {u} ∪ D (S):
      // Σ inc over S less those within S (u to D, and within D, seen from both ends).
      g.markNbrs(u);
      const tk = ++this.tick;
      for (let p = start[k]; p < start[k + 1]; p++) this.stamp[partner[p]] = tk;
      let eAD = 0, atS = inc[k], withinD = 0;
      for (let p = start[k]; p < start[k + 1]; p++) {
        const y = partner[p], Ky = kw[y], j = at[y];
        let s = 0;
        for (let q = 0; q < g.deg[y]; q++) {
          const x = g.at(y, q);
          if (g.marked(x) && !inClique[x]) s += kw[x];
        }
        eAD += Ky * s;
        atS += inc[j] - Ku * Ky;
        for (let r = start[j]; r < start[j + 1]; r++) if (this.stamp[partner[r]] === tk) withinD += Ky * kw[partner[r]];
      }
      // F within C_u: all of F less the edges at S.
      const fillC = totF - (atS - withinD / 2);
      const c1 = this.cSum[k], eC = (c1 * c1 - this.cSq[k]) / 2 - fillC;
      const sB = totS - Ku, qB = totQ - Ku * Ku;
      const tri = this.triOld[k] - eC - this.Kv * c1 + eAD + (sB * sB - qB) / 2;
      let s1 = 0, s2 = 0;
      for (let q = 0; q < g.deg[u]; q++) {
        const K = kw[g.at(u, q)];
        s1 += K;
        s2 += K * K;
      }
      curA[u] = (s1 * s1 - s2) / 2 - tri;
    }
    return m;
  }

  /** Clears the marks of the last `after` (its clique nb[0 … d), its m changed vertices). */
  done(nb: Int32Array, d: number, m: number): void {
    for (let k = 0; k < d; k++) (this.inClique[nb[k]] = 0), (this.at[nb[k]] = -1);
    for (let k = 0; k < m; k++) this.inChanged[this.changed[k]] = 0;
  }
}

/** Reverse Cuthill–McKee: BFS from a pseudo-peripheral vertex of each component, neighbours by degree. */
function rcmOrder(model: OrderingGraph, base?: ElimGraph): Int32Array {
  const n = model.n;
  const g = base ?? new ElimGraph(model);
  const deg = g.deg;
  // Neighbour lists sorted by (degree, index), in one array.
  const adjStart = new Int32Array(n + 1);
  for (let v = 0; v < n; v++) adjStart[v + 1] = adjStart[v] + deg[v];
  const adj = new Int32Array(adjStart[n]);
  const byDeg = (p: number, q: number) => deg[p] - deg[q] || p - q;
  for (let v = 0; v < n; v++) {
    const row = adj.subarray(adjStart[v], adjStart[v + 1]);
    row.set(g.nbrs(v));
    row.sort(byDeg);
  }
  const seen = new Uint8Array(n);
  const mark = new Int32Array(n).fill(-1);
  const queue = new Int32Array(n);
  /** BFS from s into queue[0 …]; returns its length, and the start of the last level in lastLevel. */
  let lastLevel = 0, depth = 0;
  const bfs = (s: number, stamp: number): number => {
    queue[0] = s;
    mark[s] = stamp;
    let head = 0, tail = 1, levelEnd = 1;
    lastLevel = 0;
    depth = 0;
    while (head < tail) {
      const u = queue[head++];
      for (let k = adjStart[u]; k < adjStart[u + 1]; k++) {
        const w = adj[k];
        if (mark[w] !== stamp) {
          mark[w] = stamp;
          queue[tail++] = w;
        }
      }
      if (head === levelEnd && tail > levelEnd) {
        lastLevel = levelEnd;
        levelEnd = tail;
        depth++;
      }
    }
    return tail;
  };
  const order = new Int32Array(n);
  let t = 0, stamp = 0;
  for (let s0 = 0; s0 < n; s0++) {
    if (seen[s0]) continue;
    let start = s0;
    let len = bfs(start, ++stamp), bestDepth = depth;
    for (let it = 0; it < 8; it++) {
      // The last level's vertex of smallest degree (first of them on ties).
      let cand = queue[lastLevel];
      for (let k = lastLevel + 1; k < len; k++) if (deg[queue[k]] < deg[cand]) cand = queue[k];
      len = bfs(cand, ++stamp);
      if (depth <= bestDepth) break;
      start = cand;
      bestDepth = depth;
    }
    len = bfs(start, ++stamp);
    for (let k = 0; k < len; k++) {
      seen[queue[k]] = 1;
      order[t++] = queue[k];
    }
  }
  return order.reverse();
}

export interface Simulation {
  stats: Omit<OrderStats, 'name' | 'order'>;
  /** cliques[v] = C_v, variables sorted by elimination position (v first). Only when asked. */
  cliques?: Int32Array[];
}

/** Eliminates in the given order, measuring every clique. */
export function simulate(model: OrderingGraph, order: Int32Array, wantCliques: boolean, abortLog2: number, base?: ElimGraph): Simulation {
  const n = model.n;
  const card = model.card;
  const pos = new Int32Array(n);
  order.forEach((v, t) => (pos[v] = t));
  const g = new ElimGraph(model, base);
  const nb = new Int32Array(n);
  const logK = Float64Array.from(card, (k) => Math.log2(k));
  let tw = 0, maxLog2 = 0, maxEntries = 1, total = 0;
  const cliques: Int32Array[] | undefined = wantCliques ? new Array(n) : undefined;
  for (let t = 0; t < n; t++) {
    const v = order[t];
    const d = g.deg[v];
    let log2 = logK[v];
    let entries = card[v];
    for (let k = 0; k < d; k++) {
      const u = g.at(v, k);
      log2 += logK[u];
      entries *= card[u];
    }
    tw = Math.max(tw, d);
    if (log2 > maxLog2) {
      maxLog2 = log2;
      maxEntries = entries;
    }
    total += entries;
    if (log2 > abortLog2) {
      return { stats: { treewidth: tw, maxEntries: 2 ** maxLog2, totalEntries: total, aborted: true } };
    }
    g.eliminate(v, nb);
    if (cliques) {
      const c = new Int32Array(d + 1);
      c[0] = v;
      c.set(nb.subarray(0, d), 1);
      c.subarray(1).sort((p, q) => pos[p] - pos[q]);
      cliques[v] = c;
    }
  }
  return { stats: { treewidth: tw, maxEntries, totalEntries: total, aborted: false }, cliques };
}

/**
 * How far past the limit callers still plan an order's cliques (log2): bucket elimination plans
 * orders whose cliques reach 16 × its order limit (exact.ts, bucketOrderLimit).
 */
export const PLANNED_PAST_LIMIT_LOG2 = 4;

/** Cheapest first: natural and RCM are linear, the greedy ones cost more, fill-based ones most. */
const BY_COST: readonly OrderingHeuristic[] = ['natural', 'rcm', 'mindegree', 'minweight', 'minfill', 'weightedminfill'];
/**
 * When natural, RCM and the first greedy ordering all need a clique table past the limit by at
 * least this factor (log2), the remaining, slower greedy heuristics are not tried (they are never
 * that much better than min-degree): a model far past the limit (a 100×100 grid) is refused in
 * tens of milliseconds.
 */
export const SKIP_MARGIN_LOG2 = 10;

/**
 * Every requested ordering with its clique sizes, in the order requested (a skipped one is
 * reported as aborted with unknown sizes). They run cheapest first; see SKIP_MARGIN_LOG2 (the
 * default of farMarginLog2).
 */
export function candidateOrders(model: OrderingGraph, names: readonly OrderingHeuristic[], limit: number, farMarginLog2 = SKIP_MARGIN_LOG2): OrderStats[] {
  if (names.length === 0) throw new ModelError('orderings: give at least one ordering heuristic');
  for (const name of names) if (!ORDERINGS.includes(name)) throw new ModelError(`unknown ordering "${name as string}"; expected one of ${ORDERINGS.join(', ')}`);
  // Stop simulating an ordering whose cliques are far past the limit (the refusal message then reports a
  // lower bound); ordinary refusals (up to 4096 times the limit) are measured exactly.
  const limitLog2 = Math.log2(limit);
  const abortLog2 = limitLog2 + 12;
  const unique = [...new Set(names)];
  const byName = new Map<string, OrderStats>();
  const failed = (name: string): OrderStats => ({ name, order: new Int32Array(0), treewidth: Infinity, maxEntries: Infinity, totalEntries: Infinity, aborted: true });
  // With one cardinality throughout, minweight orders exactly as mindegree (weight is monotone in
  // degree) and weighted min-fill as min-fill (K² × the fill): each pair is computed once.
  let uniform = true;
  for (let v = 1; v < model.n; v++) if (model.card[v] !== model.card[0]) uniform = false;
  const twin: Partial<Record<OrderingHeuristic, OrderingHeuristic>> = uniform ? { minweight: 'mindegree', weightedminfill: 'minfill' } : {};
  const farLog2 = limitLog2 + farMarginLog2;
  const base = new ElimGraph(model); // copied by each run (rcm only reads it)
  let feasible = false, greedyTried = false, bestLog2 = Infinity, tried = 0;
  // The smallest largest clique of an order run to its end: a greedy run past it and past what
  // any caller plans (PLANNED_PAST_LIMIT_LOG2) can no longer be chosen, so it stops there.
  let completedLog2 = Infinity;
  for (const name of BY_COST) {
    if (!unique.includes(name)) continue;
    const same = twin[name];
    const done = same ? byName.get(same) : undefined;
    if (done) {
      byName.set(name, { ...done, name });
      continue;
    }
    if (greedyTried && !feasible && bestLog2 >= farLog2) {
      byName.set(name, failed(name));
      continue;
    }
    let order: Int32Array | null;
    // While the orderings tried so far do not fit, a greedy run stops once it is far past the limit.
    const abort = Math.min(tried > 0 && !feasible ? Math.min(abortLog2, farLog2) : abortLog2, Math.max(limitLog2 + PLANNED_PAST_LIMIT_LOG2, completedLog2 + 1e-9));
    if (name === 'natural') order = Int32Array.from({ length: model.n }, (_, v) => v);
    else if (name === 'rcm') order = rcmOrder(model, base);
    else {
      order = greedyOrder(model, name, abort, base);
      greedyTried = true;
    }
    const stats = order ? { name, order, ...simulate(model, order, false, abortLog2, base).stats } : failed(name);
    if (!stats.aborted && stats.maxEntries <= limit) feasible = true;
    // An aborted greedy run only says a clique passed 2^abort.
    bestLog2 = Math.min(bestLog2, order ? Math.log2(stats.maxEntries) : abort);
    if (!stats.aborted) completedLog2 = Math.min(completedLog2, Math.log2(stats.maxEntries));
    byName.set(name, stats);
    tried++;
  }
  return unique.map((name) => byName.get(name)!);
}
