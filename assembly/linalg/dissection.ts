// Nested dissection by breadth-first level structures, the sparse Cholesky ordering for large
// patterns (bindings/linalg/sparse-cholesky.ts): the minimum-degree ordering on the explicit
// elimination graph costs the sum of the squared degrees, which past ~10⁵ bits dominates (a
// 1000×1000 lattice: ≈ 3 minutes). Here a part is split by one level of a breadth-first search
// from a pseudo-peripheral vertex (the level where half the part has been reached): that level is
// a separator (edges join adjacent levels only), numbered after the levels before and after it,
// which are split in turn. O((n + nnz) log n); on lattices the levels are diagonals, separators of
// about √(2n) bits.

import { ldi, sti } from '../core/access';

/** Parts this small are numbered as they stand. */
const LEAF = 4;

/** i32 words of workspace for n vertices (the stack of parts is a buffer of its own). */
export function dissectionWorkWords(n: i32): i32 {
  return 5 * n;
}

// Workspace layout (i32 arrays of n): the vertices grouped by part, a part stamp per vertex, BFS
// levels, the BFS queue, counts per level (also the scratch list of a disconnected part's rest).
const VERTS = 0, STAMP = 1, LEVEL = 2, QUEUE = 3, COUNT = 4;

@inline
function arr(ws: usize, n: i32, which: i32): usize {
  return ws + ((<usize>which * <usize>n) << 2);
}

/**
 * Breadth-first search from s over the vertices stamped `part`, writing levels and the queue;
 * returns the number reached. Diagonal entries are skipped.
 */
function bfs(s: i32, part: i32, rowPtr: usize, col: usize, stamp: usize, level: usize, queue: usize, mark: i32): i32 {
  let head = 0, tail = 0;
  sti(queue, tail++, s);
  sti(level, s, 0);
  sti(stamp, s, mark);
  while (head < tail) {
    const v = ldi(queue, head++), lv = ldi(level, v);
    for (let k = ldi(rowPtr, v), e = ldi(rowPtr, v + 1); k < e; k++) {
      const w = ldi(col, k);
      if (ldi(stamp, w) != part) continue; // another part, or already reached (stamped `mark`)
      sti(stamp, w, mark);
      sti(level, w, lv + 1);
      sti(queue, tail++, w);
    }
  }
  return tail;
}

/** Pushes the part verts[lo … hi), numbered from p, stamped st. */
@inline
function push(stack: usize, top: i32, lo: i32, hi: i32, p: i32, st: i32): i32 {
  sti(stack, 4 * top, lo);
  sti(stack, 4 * top + 1, hi);
  sti(stack, 4 * top + 2, p);
  sti(stack, 4 * top + 3, st);
  return top + 1;
}

/**
 * perm[k] = vertex eliminated k-th, pos[v] = its position, for the symmetric CSR pattern (rowPtr,
 * col; diagonal entries ignored). ws: dissectionWorkWords(n) i32; stack: 4·(n + 1) i32.
 */
export function nestedDissectionOrder(n: i32, rowPtr: usize, col: usize, perm: usize, pos: usize, ws: usize, stack: usize): void {
  const verts = arr(ws, n, VERTS), stamp = arr(ws, n, STAMP), level = arr(ws, n, LEVEL), queue = arr(ws, n, QUEUE), count = arr(ws, n, COUNT);
  // Stamps: a part's vertices carry its stamp (≥ 1); numbered vertices 0; each search marks what it
  // reached with a fresh one.
  for (let v = 0; v < n; v++) {
    sti(verts, v, v);
    sti(stamp, v, 1);
  }
  let nextStamp = 2;
  let top = push(stack, 0, 0, n, 0, 1);
  while (top > 0) {
    top--;
    const lo = ldi(stack, 4 * top), hi = ldi(stack, 4 * top + 1), p = ldi(stack, 4 * top + 2), st = ldi(stack, 4 * top + 3);
    const size = hi - lo;
    if (size <= LEAF) {
      for (let t = 0; t < size; t++) {
        const v = ldi(verts, lo + t);
        sti(perm, p + t, v);
        sti(pos, v, p + t);
        sti(stamp, v, 0);
      }
      continue;
    }
    const m1 = nextStamp++;
    const r1 = bfs(ldi(verts, lo), st, rowPtr, col, stamp, level, queue, m1);
    if (r1 < size) {
      // Disconnected: the component reached (stamped m1) and the rest (still st), no separator.
      let rest = 0;
      for (let t = lo; t < hi; t++) {
        const v = ldi(verts, t);
        if (ldi(stamp, v) == st) sti(count, rest++, v);
      }
      for (let t = 0; t < r1; t++) sti(verts, lo + t, ldi(queue, t));
      for (let t = 0; t < rest; t++) sti(verts, lo + r1 + t, ldi(count, t));
      top = push(stack, top, lo + r1, hi, p + r1, st);
      top = push(stack, top, lo, lo + r1, p, m1);
      continue;
    }
    // Connected: search again from the last vertex reached, a pseudo-peripheral one.
    const far = ldi(queue, size - 1);
    for (let t = 0; t < size; t++) sti(stamp, ldi(queue, t), st);
    const m2 = nextStamp++;
    bfs(far, st, rowPtr, col, stamp, level, queue, m2);
    const levels = ldi(level, ldi(queue, size - 1)) + 1;
    for (let l = 0; l < levels; l++) sti(count, l, 0);
    for (let t = 0; t < size; t++) {
      const l = ldi(level, ldi(queue, t));
      sti(count, l, ldi(count, l) + 1);
    }
    // The separator: the level where half the part has been reached.
    let sepLevel = 0, before = 0;
    while (before + ldi(count, sepLevel) < (size + 1) >> 1) before += ldi(count, sepLevel++);
    const nSep = ldi(count, sepLevel), nLeft = before, nRight = size - nLeft - nSep;
    // The queue is in level order: the levels before, the separator, the levels after.
    for (let t = 0; t < nLeft; t++) sti(verts, lo + t, ldi(queue, t));
    for (let t = 0; t < nRight; t++) sti(verts, lo + nLeft + t, ldi(queue, nLeft + nSep + t));
    for (let t = 0; t < nSep; t++) {
      const v = ldi(queue, nLeft + t), at = p + nLeft + nRight + t;
      sti(verts, lo + nLeft + nRight + t, v);
      sti(perm, at, v);
      sti(pos, v, at);
      sti(stamp, v, 0);
    }
    const mL = nextStamp++, mR = nextStamp++;
    for (let t = 0; t < nLeft; t++) sti(stamp, ldi(verts, lo + t), mL);
    for (let t = 0; t < nRight; t++) sti(stamp, ldi(verts, lo + nLeft + t), mR);
    if (nRight > 0) top = push(stack, top, lo + nLeft, lo + nLeft + nRight, p + nLeft, mR);
    if (nLeft > 0) top = push(stack, top, lo, lo + nLeft, p, mL);
  }
}
