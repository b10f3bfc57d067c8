// Minimum-degree ordering on the explicit elimination graph: eliminating v joins its remaining
// neighbours into a clique. Degree buckets (doubly linked lists), ties broken by the most recently
// updated vertex (LIFO bucket order), which on lattices behaves like a local nested dissection.
//
// The graph's adjacency lists live in one pool of i32 that the caller sizes: a list that outgrows
// its capacity moves to the pool's end with twice the room; when the end is reached the live lists
// are packed to the front (each list's first slot temporarily holds −(vertex + 1) so a scan of the
// pool finds them in address order). If packing leaves under a quarter of the pool free the kernel
// stops with its whole state in the workspace; the caller copies the pool into a larger one and
// calls again to resume (the result does not depend on the pool's size).
//
// On an explicit graph the work is the sum over eliminations of the merged lists' lengths — about
// the factor's own flops, so on 3-D lattices and random graphs more than a factorisation (a 32³
// lattice: 21 s against 3.8 s). The caller gives a work limit; past it the kernel gives up.

import { ldi, sti } from '../core/access';

/** i32 words of workspace for n vertices (besides the pool). */
export function minDegreeWorkWords(n: i32): i32 {
  return 10 * n + 1 + STATE_WORDS;
}

// Workspace layout (i32 arrays of n, head n + 1).
const LEN = 0, START = 1, CAP = 2, NEXT = 3, PREV = 4, DEG = 5, TAG = 6, SAVED = 7, NBR = 8, HEAD = 9;
// The loop's state, after head (n + 1 words): set when the kernel stops for a larger pool.
const STATE_WORDS = 9;
const S_STEP = 0, S_STAMP = 1, S_MINDEG = 2, S_END = 3, S_T = 4, S_NN = 5, S_V = 6, S_WORK = 7; // S_WORK: an f64 over two words

@inline
function arr(ws: usize, n: i32, which: i32): usize {
  return ws + ((<usize>which * <usize>n) << 2);
}

/**
 * perm[k] = vertex eliminated k-th, pos[v] = its position, for the graph of the symmetric CSR
 * pattern (rowPtr, col; diagonal entries ignored). ws: minDegreeWorkWords(n) i32; pool: poolCap
 * i32. resume = 0 starts; returns 0 when done, 1 when the pool ran short (copy all poolCap words
 * into a larger pool and call again with resume = 1 and the same ws), 2 when the pattern itself
 * did not fit (call again with a larger pool and resume = 0), or 3 when the work (list entries
 * merged, counted across resumes) passed workLimit: perm and pos are then incomplete.
 */
export function minimumDegreeOrder(n: i32, rowPtr: usize, col: usize, perm: usize, pos: usize, ws: usize, pool: usize, poolCap: i32, resume: i32, workLimit: f64): i32 {
  const len = arr(ws, n, LEN), start = arr(ws, n, START), cap = arr(ws, n, CAP);
  const next = arr(ws, n, NEXT), prev = arr(ws, n, PREV), deg = arr(ws, n, DEG), tag = arr(ws, n, TAG);
  const saved = arr(ws, n, SAVED), nbr = arr(ws, n, NBR), head = arr(ws, n, HEAD);
  const state = head + ((<usize>n + 1) << 2);
  let end = 0, step = 0, stamp = 0, minDeg = 0, t0 = 0, nN = 0, v = -1;
  let work: f64 = 0;
  if (resume) {
    work = load<f64>(state + (<usize>S_WORK << 2));
    step = ldi(state, S_STEP);
    stamp = ldi(state, S_STAMP);
    minDeg = ldi(state, S_MINDEG);
    end = ldi(state, S_END);
    t0 = ldi(state, S_T);
    nN = ldi(state, S_NN);
    v = ldi(state, S_V);
  } else {
    for (let u = 0; u < n; u++) {
      const lo = ldi(rowPtr, u), hi = ldi(rowPtr, u + 1);
      const c0 = max(16, 2 * (hi - lo)); // room to grow before the first move
      if (end + c0 > poolCap) return 2;
      let c = 0;
      for (let k = lo; k < hi; k++) {
        const w = ldi(col, k);
        if (w != u) sti(pool, end + c++, w);
      }
      sti(start, u, end);
      sti(cap, u, c0);
      sti(len, u, c);
      end += c0;
    }
    for (let i = 0; i <= n; i++) sti(head, i, -1);
    for (let u = n - 1; u >= 0; u--) bucketInsert(head, next, prev, deg, u, ldi(len, u));
    memory.fill(tag, 0, <usize>n << 2);
  }
  for (;;) {
    if (t0 >= nN) {
      if (step == n) break;
      while (ldi(head, minDeg) < 0) minDeg++;
      v = ldi(head, minDeg);
      bucketRemove(head, next, prev, deg, v);
      sti(perm, step, v);
      sti(pos, v, step);
      step++;
      nN = ldi(len, v);
      memory.copy(nbr, pool + (<usize>ldi(start, v) << 2), <usize>nN << 2);
      sti(len, v, 0);
      sti(cap, v, 0); // its room is garbage from now on
      t0 = 0;
    }
    for (let t = t0; t < nN; t++) {
      const u = ldi(nbr, t);
      // Room for the merged list: at most len(u) − 1 + (nN − 1) entries.
      const need = ldi(len, u) + nN;
      if (need > ldi(cap, u)) {
        const newCap = max(need, 2 * ldi(cap, u));
        if (end + newCap > poolCap) {
          end = pack(n, pool, end, len, start, cap, saved);
          if (end + newCap > poolCap - (poolCap >> 2)) {
            sti(state, S_STEP, step);
            sti(state, S_STAMP, stamp);
            sti(state, S_MINDEG, minDeg);
            sti(state, S_END, end);
            sti(state, S_T, t);
            sti(state, S_NN, nN);
            sti(state, S_V, v);
            store<f64>(state + (<usize>S_WORK << 2), work);
            return 1;
          }
        }
        memory.copy(pool + (<usize>end << 2), pool + (<usize>ldi(start, u) << 2), <usize>ldi(len, u) << 2);
        sti(start, u, end);
        sti(cap, u, newCap);
        end += newCap;
      }
      // Counted once the room is there, so a resume does not count u twice.
      work += <f64>need;
      if (work > workLimit) return 3;
      stamp++;
      const a = pool + (<usize>ldi(start, u) << 2);
      // Drop v, mark the rest (pointers: read at pr, write at pw ≤ pr).
      let pw = a;
      for (let pr = a, pe = a + (<usize>ldi(len, u) << 2); pr < pe; pr += 4) {
        const w = load<i32>(pr);
        if (w == v) continue;
        store<i32>(tag + (<usize>w << 2), stamp);
        store<i32>(pw, w);
        pw += 4;
      }
      sti(tag, u, stamp);
      for (let pn = nbr, pe = nbr + (<usize>nN << 2); pn < pe; pn += 4) {
        const w = load<i32>(pn);
        if (load<i32>(tag + (<usize>w << 2)) == stamp) continue;
        store<i32>(pw, w);
        pw += 4;
      }
      const c = <i32>((pw - a) >> 2);
      sti(len, u, c);
      bucketRemove(head, next, prev, deg, u);
      bucketInsert(head, next, prev, deg, u, c);
      if (c < minDeg) minDeg = c;
    }
    t0 = nN;
  }
  return 0;
}

@inline
function bucketInsert(head: usize, next: usize, prev: usize, deg: usize, v: i32, dg: i32): void {
  sti(deg, v, dg);
  sti(prev, v, -1);
  const h = ldi(head, dg);
  sti(next, v, h);
  if (h >= 0) sti(prev, h, v);
  sti(head, dg, v);
}

@inline
function bucketRemove(head: usize, next: usize, prev: usize, deg: usize, v: i32): void {
  const p = ldi(prev, v), q = ldi(next, v);
  if (p >= 0) sti(next, p, q);
  else sti(head, ldi(deg, v), q);
  if (q >= 0) sti(prev, q, p);
}

/** Packs the live lists (cap > 0) to the front of the pool in address order; returns the new end. */
function pack(n: i32, pool: usize, end: i32, len: usize, start: usize, cap: usize, saved: usize): i32 {
  for (let v = 0; v < n; v++) {
    if (ldi(cap, v) > 0) {
      sti(saved, v, ldi(pool, ldi(start, v)));
      sti(pool, ldi(start, v), -(v + 1));
    }
  }
  let p = 0, wr = 0;
  while (p < end) {
    const x = ldi(pool, p);
    if (x >= 0) {
      p++;
      continue;
    }
    const v = -x - 1;
    const old = ldi(start, v), oldCap = ldi(cap, v), lv = ldi(len, v);
    sti(pool, old, ldi(saved, v));
    memory.copy(pool + (<usize>wr << 2), pool + (<usize>old << 2), <usize>lv << 2);
    const c = max(lv, 1);
    sti(start, v, wr);
    sti(cap, v, c);
    wr += c;
    p = old + oldCap;
  }
  return wr;
}
