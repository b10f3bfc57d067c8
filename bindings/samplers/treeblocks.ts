// Tree blocks for blocked Gibbs (Hamze & de Freitas 2004, "From fields to trees"): a partition of
// the model's variables into blocks each of which induces a forest in the interaction graph, so a
// block can be redrawn jointly and exactly from its conditional given the rest by forward
// filtering / backward sampling (assembly/treegibbs.ts).
//
// The partition: greedy first-fit colouring into induced forests (a vertex joins the first block in
// which its already-placed neighbours lie in distinct trees — checked with one union–find per block,
// so adding it closes no cycle), tried over a few vertex orders (natural, reversed, breadth-first
// from a vertex of least degree, and a column snake when n is a square); the partition with the
// fewest blocks wins, then the one with the largest trees (Σ tree size², the expected size of the
// tree a variable is redrawn with): fewer, larger trees move more variables jointly. Two blocks are
// the least any graph with a cycle needs, and the greedy reaches two on open and periodic 10×10
// grids and on 32×32 and 6×6×6 tori (test/treegibbs.test.ts prints the partitions): one tree over
// about 2/3 of the sites — on a 4-regular graph no induced forest is larger, since one on k sites
// sends at least 2k + 2 edges to the other n − k sites, which take at most 4(n − k) — and
// isolated sites and short paths. Hamze & de Freitas's two interleaved combs (open grids) can be
// given with partitionFromBlocks.

import type { CanonicalForm } from '../core/canonical.ts';
import { ModelError } from '../core/errors.ts';
import { countingSort, UnionFind } from '../core/flat-storage.ts';

/** A partition of the variables into blocks that each induce a forest of the model's graph (tree-block Gibbs). */
export interface TreePartition {
  /** Number of user variables. */
  readonly n: number;
  /** Each block's variables in breadth-first order of its trees (every parent before its children). */
  readonly blocks: Int32Array[];
  /** Tree parent of each variable within its block, −1 at a root. */
  readonly parent: Int32Array;
  /** Block of each variable. */
  readonly block: Int32Array;
  /** Trees (connected components) per block. */
  readonly trees: number[];
  /** Name of the vertex order that produced the partition. */
  readonly order: string;
}

/**
 * The user variables' interaction graph in compressed rows: v's neighbours (v ~ w when W couples any
 * bit of v with any bit of w), ascending, are list[start[v] … start[v + 1]). No set or array per
 * variable: a 10⁶-site lattice's partition took 3.5 s, most of it allocating and collecting them.
 */
export interface Adjacency {
  start: Int32Array;
  list: Int32Array;
}

/** The interaction graph as compressed rows (see Adjacency). */
export function interactionRows(form: CanonicalForm): Adjacency {
  const n = form.n, varOf = new Int32Array(form.nBits);
  for (let v = 0; v < n; v++) for (let b = form.blockStart[v]; b < form.blockStart[v + 1]; b++) varOf[b] = v;
  // Each variable's distinct neighbours (a stamp per variable), then sorted in place.
  const stamp = new Int32Array(n).fill(-1), start = new Int32Array(n + 1);
  const each = (visit: (v: number, w: number) => void): void => {
    for (let v = 0; v < n; v++) {
      for (let p = form.blockStart[v]; p < form.blockStart[v + 1]; p++) {
        for (let k = form.rowPtr[p]; k < form.rowPtr[p + 1]; k++) {
          const w = varOf[form.col[k]];
          if (w !== v && stamp[w] !== v) (stamp[w] = v), visit(v, w);
        }
      }
    }
  };
  each((v) => start[v + 1]++);
  for (let v = 0; v < n; v++) start[v + 1] += start[v];
  const list = new Int32Array(start[n]), fill = start.slice(0, n);
  stamp.fill(-1);
  each((v, w) => (list[fill[v]++] = w));
  for (let v = 0; v < n; v++) if (start[v + 1] - start[v] > 1) list.subarray(start[v], start[v + 1]).sort();
  return { start, list };
}

/** Adjacency lists of the user variables (interactionRows, a view per variable). */
export function interactionGraph(form: CanonicalForm): Int32Array[] {
  return rowViews(interactionRows(form));
}

function rowViews({ start, list }: Adjacency): Int32Array[] {
  return Array.from({ length: start.length - 1 }, (_, v) => list.subarray(start[v], start[v + 1]));
}

/** First-fit colouring of the vertices, in `order`, into induced forests. Returns the block of each vertex. */
function greedyForests(adj: Adjacency, order: ArrayLike<number>): Int32Array {
  const { start, list } = adj, n = start.length - 1;
  const block = new Int32Array(n).fill(-1);
  const forests: UnionFind[] = [];
  // mark[r] === attempt: root r already holds a neighbour in this attempt (vertex, block).
  const mark = new Int32Array(n).fill(-1);
  let attempt = 0;
  for (let t = 0; t < order.length; t++) {
    const v = order[t];
    let b = 0;
    for (; ; b++) {
      if (b === forests.length) forests.push(new UnionFind(n));
      const uf = forests[b];
      attempt++;
      let ok = true;
      for (let q = start[v]; q < start[v + 1]; q++) {
        const w = list[q];
        if (block[w] !== b) continue;
        const r = uf.find(w);
        if (mark[r] === attempt) {
          ok = false; // two neighbours in one tree of block b: v would close a cycle
          break;
        }
        mark[r] = attempt;
      }
      if (ok) break;
    }
    block[v] = b;
    for (let q = start[v]; q < start[v + 1]; q++) if (block[list[q]] === b) forests[b].union(v, list[q]);
  }
  return block;
}

/** Breadth-first orders and parents of each block's trees (the induced subgraphs are forests). */
function orient(adj: Adjacency, block: Int32Array, nBlocks: number, order: string): TreePartition {
  const { start, list: nbrs } = adj, n = start.length - 1;
  const parent = new Int32Array(n).fill(-1);
  const seen = new Uint8Array(n);
  const lists: number[][] = Array.from({ length: nBlocks }, () => []);
  const trees = new Array<number>(nBlocks).fill(0);
  for (let r = 0; r < n; r++) {
    if (seen[r]) continue;
    const b = block[r], list = lists[b];
    trees[b]++;
    seen[r] = 1;
    let head = list.length;
    list.push(r);
    while (head < list.length) {
      const v = list[head++];
      for (let q = start[v]; q < start[v + 1]; q++) {
        const w = nbrs[q];
        if (block[w] !== b || seen[w]) continue;
        seen[w] = 1;
        parent[w] = v;
        list.push(w);
      }
    }
  }
  return { n, blocks: lists.map((l) => Int32Array.from(l)), parent, block, trees, order };
}

/** Vertex orders tried by treePartition. */
function candidateOrders(adj: Adjacency): [string, Int32Array][] {
  const { start, list } = adj, n = start.length - 1;
  const natural = new Int32Array(n);
  for (let i = 0; i < n; i++) natural[i] = i;
  const out: [string, Int32Array][] = [['natural', natural], ['reverse', natural.slice().reverse()]];
  // Column snake of a row-major √n × √n layout (a plain order on any graph; on grids numbered
  // row-major it walks columns, and first-fit then builds combs).
  const L = Math.round(Math.sqrt(n));
  if (L * L === n && L > 1) {
    const snake = new Int32Array(n);
    let t = 0;
    for (let c = 0; c < L; c++) for (let r = 0; r < L; r++) snake[t++] = (c % 2 === 0 ? r : L - 1 - r) * L + c;
    out.push(['column-snake', snake]);
  }
  // Breadth-first from a vertex of least degree (components in turn); vertices by degree, then
  // index (a counting sort).
  const bfs = new Int32Array(n);
  const seen = new Uint8Array(n);
  let maxDeg = 0;
  for (let v = 0; v < n; v++) maxDeg = Math.max(maxDeg, start[v + 1] - start[v]);
  const byDegree = countingSort(n, maxDeg + 1, (v) => start[v + 1] - start[v]).list;
  let t = 0;
  for (const s of byDegree) {
    if (seen[s]) continue;
    seen[s] = 1;
    let head = t;
    bfs[t++] = s;
    while (head < t) {
      const v = bfs[head++];
      for (let q = start[v]; q < start[v + 1]; q++) {
        const w = list[q];
        if (!seen[w]) {
          seen[w] = 1;
          bfs[t++] = w;
        }
      }
    }
  }
  out.push(['breadth-first', bfs]);
  return out;
}

/** Σ over trees of size²: larger when variables are redrawn in larger joint groups. */
function treeScore(p: TreePartition): number {
  // Tree sizes from the breadth-first lists: a root starts a new tree.
  let score = 0;
  for (const list of p.blocks) {
    let size = 0;
    for (const v of list) {
      if (p.parent[v] < 0) {
        score += size * size;
        size = 0;
      }
      size++;
    }
    score += size * size;
  }
  return score;
}

/** The tree-block partition of a canonical form's variables (see the file comment). */
export function treePartition(form: CanonicalForm): TreePartition {
  const adj = interactionRows(form);
  let best: TreePartition | null = null, bestScore = -1;
  for (const [name, order] of candidateOrders(adj)) {
    const block = greedyForests(adj, order);
    let nBlocks = 0;
    for (const b of block) nBlocks = Math.max(nBlocks, b + 1);
    const p = orient(adj, block, nBlocks, name);
    const score = treeScore(p);
    if (!best || p.blocks.length < best.blocks.length || (p.blocks.length === best.blocks.length && score > bestScore)) {
      best = p;
      bestScore = score;
    }
  }
  return best!;
}

/**
 * A partition from a given block of each variable (blocks numbered 0 … B−1, each used); throws a
 * ModelError unless every block induces a forest.
 */
export function partitionFromBlocks(form: CanonicalForm, block: ArrayLike<number>, name = 'given'): TreePartition {
  const rows = interactionRows(form), adj = rowViews(rows);
  const n = form.n;
  if (block.length !== n) throw new ModelError(`tree partition: ${block.length} block numbers for ${n} variables`);
  let nBlocks = 0;
  for (let v = 0; v < n; v++) {
    if (!(Number.isInteger(block[v]) && block[v] >= 0 && block[v] < n)) throw new ModelError(`tree partition: bad block number ${block[v]} of variable ${v} (expected 0 … ${n - 1})`);
    nBlocks = Math.max(nBlocks, block[v] + 1);
  }
  const b = Int32Array.from(block);
  const uf = new UnionFind(n);
  for (let v = 0; v < n; v++) {
    for (const w of adj[v]) {
      if (w <= v || b[w] !== b[v]) continue;
      if (uf.find(v) === uf.find(w)) throw new ModelError(`tree partition: block ${b[v]} has a cycle through variables ${v} and ${w}`);
      uf.union(v, w);
    }
  }
  const p = orient(rows, b, nBlocks, name);
  p.blocks.forEach((l, i) => {
    if (l.length === 0) throw new ModelError(`tree partition: block ${i} is empty`);
  });
  return p;
}

/**
 * Throws a ModelError unless `p` is a valid partition of the model's variables: every variable in
 * exactly one block (and `block` saying which), each parent a neighbour in the same block listed
 * before its child, and each block an induced forest whose tree edges are the parent links. The
 * kernel trusts all of this (it indexes by it), so a partition a user built is checked before use.
 */
export function validatePartition(form: CanonicalForm, p: TreePartition): void {
  const n = form.n;
  const bad = (why: string): never => {
    throw new ModelError(`tree partition: ${why}`);
  };
  if (p.n !== n || p.parent.length !== n || p.block.length !== n) bad(`it is over ${p.n} variables, the model has ${n}`);
  if (p.trees.length !== p.blocks.length) bad(`${p.trees.length} tree counts for ${p.blocks.length} blocks`);
  const adj = interactionGraph(form);
  const pos = new Int32Array(n).fill(-1);
  p.blocks.forEach((list, b) => {
    if (list.length === 0) bad(`block ${b} is empty`);
    list.forEach((v, i) => {
      if (!(Number.isInteger(v) && v >= 0 && v < n)) bad(`block ${b} lists variable ${v}`);
      if (pos[v] >= 0) bad(`variable ${v} is listed twice`);
      if (p.block[v] !== b) bad(`variable ${v} is listed in block ${b} but block[${v}] = ${p.block[v]}`);
      pos[v] = i;
    });
    let edges = 0, roots = 0;
    for (const v of list) {
      for (const w of adj[v]) if (w > v && p.block[w] === b) edges++;
      const par = p.parent[v];
      if (par === -1) roots++;
      else if (!(Number.isInteger(par) && par >= 0 && par < n) || p.block[par] !== b || !adj[v].includes(par) || pos[par] < 0 || pos[par] >= pos[v]) {
        bad(`the parent ${par} of variable ${v} is not a neighbour in its block listed before it`);
      }
    }
    if (roots !== p.trees[b]) bad(`block ${b} has ${roots} roots but ${p.trees[b]} trees`);
    // With parent links from earlier to later variables, the links form a forest of `roots` trees;
    // the block is an induced forest iff it has no other edges.
    if (edges !== list.length - roots) bad(`block ${b} is not an induced forest (${edges} edges among ${list.length} variables in ${roots} trees)`);
  });
  for (let v = 0; v < n; v++) if (pos[v] < 0) bad(`variable ${v} is in no block`);
}
