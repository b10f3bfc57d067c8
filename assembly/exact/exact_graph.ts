// Graph structure for the planners: the interaction graph the orderings start from
// (bindings/exact/orderings.ts) — its adjacency lists from the list of pairs sharing a factor, and
// the reverse Cuthill–McKee order — and the free variables' connected components the enumeration
// plan splits a model into (bindings/exact/enumeration.ts). They run on the planner's own instance
// (core/engine.ts, plannerEngine) and keep their results in module buffers the caller copies out
// right after the call.
//
// The lists' order is the one every greedy ordering starts from (exact_greedy.ts keeps insertion
// order, and ties follow it): distinct pairs (a < b) in (a, b) order, each appended to both ends'
// lists.

import { Buf } from './exact_greedy';

let rowStartB = new Buf<i32>(16);
let adjB = new Buf<i32>(16);
let byI = new Buf<i32>(16);
let second = new Buf<i32>(16);
let fillB = new Buf<i32>(16);
let orderB = new Buf<i32>(16);
let sortedB = new Buf<i32>(16);
let markR = new Buf<i32>(16);
let seenR = new Buf<u8>(16);
let queueR = new Buf<i32>(16);
let degR = new Buf<i32>(16);

/** Sorts i32[n] at p ascending by (keys[x], x) (keys = 0: by x): insertion sort when short, else heapsort. */
export function sortBy(p: usize, n: i32, keys: usize): void {
  if (n <= 24) {
    for (let a = 1; a < n; a++) {
      const x = load<i32>(p + (<usize>a << 2));
      let b = a - 1;
      while (b >= 0 && less(x, load<i32>(p + (<usize>b << 2)), keys)) {
        store<i32>(p + (<usize>(b + 1) << 2), load<i32>(p + (<usize>b << 2)));
        b--;
      }
      store<i32>(p + (<usize>(b + 1) << 2), x);
    }
    return;
  }
  for (let r = (n >> 1) - 1; r >= 0; r--) siftDown(p, r, n, keys);
  for (let end = n - 1; end > 0; end--) {
    const t = load<i32>(p);
    store<i32>(p, load<i32>(p + (<usize>end << 2)));
    store<i32>(p + (<usize>end << 2), t);
    siftDown(p, 0, end, keys);
  }
}

/** (keys[x], x) < (keys[y], y); keys = 0: by x alone. */
@inline function less(x: i32, y: i32, keys: usize): bool {
  if (keys != 0) {
    const kx = load<i32>(keys + (<usize>x << 2)), ky = load<i32>(keys + (<usize>y << 2));
    if (kx != ky) return kx < ky;
  }
  return x < y;
}

function siftDown(p: usize, r: i32, n: i32, keys: usize): void {
  const x = load<i32>(p + (<usize>r << 2));
  while (true) {
    let c = 2 * r + 1;
    if (c >= n) break;
    if (c + 1 < n && less(load<i32>(p + (<usize>c << 2)), load<i32>(p + (<usize>(c + 1) << 2)), keys)) c++;
    const y = load<i32>(p + (<usize>c << 2));
    if (!less(x, y, keys)) break;
    store<i32>(p + (<usize>r << 2), y);
    r = c;
  }
  store<i32>(p + (<usize>r << 2), x);
}

/**
 * The adjacency lists of n variables from m pairs (i32[m] at pi, pj; i < j, repeats allowed):
 * CSR at adjacencyRowStarts() (i32[n + 1]) and adjacencyLists() (i32[returned count]).
 */
export function adjacencyBuild(n: i32, m: i32, pi: usize, pj: usize): i32 {
  byI.reserve(n + 1);
  fillB.reserve(n + 1);
  second.reserve(m);
  rowStartB.reserve(n + 1);
  // Bucket the pairs by i (in pair order), sort each bucket, then count the distinct ones.
  for (let v = 0; v <= n; v++) byI.set(v, 0);
  for (let k = 0; k < m; k++) {
    const a = load<i32>(pi + (<usize>k << 2)) + 1;
    byI.set(a, byI.get(a) + 1);
  }
  for (let v = 0; v < n; v++) byI.set(v + 1, byI.get(v + 1) + byI.get(v));
  for (let v = 0; v < n; v++) fillB.set(v, byI.get(v));
  for (let k = 0; k < m; k++) {
    const a = load<i32>(pi + (<usize>k << 2)), at = fillB.get(a);
    second.set(at, load<i32>(pj + (<usize>k << 2)));
    fillB.set(a, at + 1);
  }
  for (let v = 0; v <= n; v++) rowStartB.set(v, 0);
  for (let a = 0; a < n; a++) {
    const b0 = byI.get(a), b1 = byI.get(a + 1);
    if (b1 - b0 > 1) sortBy(second.ptr + (<usize>b0 << 2), b1 - b0, 0);
    for (let k = b0; k < b1; k++) {
      const b = second.get(k);
      if (k > b0 && b == second.get(k - 1)) continue;
      rowStartB.set(a + 1, rowStartB.get(a + 1) + 1);
      rowStartB.set(b + 1, rowStartB.get(b + 1) + 1);
    }
  }
  for (let v = 0; v < n; v++) rowStartB.set(v + 1, rowStartB.get(v + 1) + rowStartB.get(v));
  const total = rowStartB.get(n);
  adjB.reserve(total);
  for (let v = 0; v < n; v++) fillB.set(v, rowStartB.get(v));
  for (let a = 0; a < n; a++) {
    const b0 = byI.get(a), b1 = byI.get(a + 1);
    for (let k = b0; k < b1; k++) {
      const b = second.get(k);
      if (k > b0 && b == second.get(k - 1)) continue;
      adjB.set(fillB.get(a), b);
      fillB.set(a, fillB.get(a) + 1);
      adjB.set(fillB.get(b), a);
      fillB.set(b, fillB.get(b) + 1);
    }
  }
  return total;
}

export function adjacencyRowStarts(): usize {
  return rowStartB.ptr;
}

export function adjacencyLists(): usize {
  return adjB.ptr;
}

// RCM's breadth-first search: the queue's length, the start of its last level and its depth.
let lastLevel = 0;
let depth = 0;

/** Breadth-first search from s over the sorted lists (marks stamp); returns the queue's length. */
function bfs(s: i32, stamp: i32, rowStart: usize): i32 {
  const queue = queueR.ptr, mark = markR.ptr, adj = sortedB.ptr;
  store<i32>(queue, s);
  store<i32>(mark + (<usize>s << 2), stamp);
  let head = 0, tail = 1, levelEnd = 1;
  lastLevel = 0;
  depth = 0;
  while (head < tail) {
    const u = load<i32>(queue + (<usize>head << 2));
    head++;
    const k1 = load<i32>(rowStart + (<usize>(u + 1) << 2));
    for (let k = load<i32>(rowStart + (<usize>u << 2)); k < k1; k++) {
      const w = load<i32>(adj + (<usize>k << 2));
      if (load<i32>(mark + (<usize>w << 2)) != stamp) {
        store<i32>(mark + (<usize>w << 2), stamp);
        store<i32>(queue + (<usize>tail << 2), w);
        tail++;
      }
    }
    if (head == levelEnd && tail > levelEnd) {
      lastLevel = levelEnd;
      levelEnd = tail;
      depth++;
    }
  }
  return tail;
}

/**
 * Reverse Cuthill–McKee on the CSR lists (rowStart: i32[n + 1], adj): breadth-first from a
 * pseudo-peripheral vertex of each component (up to 8 restarts from the last level's vertex of
 * smallest degree while the depth grows), neighbours visited by (degree, index); the order
 * reversed, at rcmOrder() (i32[n]).
 */
export function rcmRun(n: i32, rowStart: usize, adj: usize): void {
  const total = load<i32>(rowStart + (<usize>n << 2));
  sortedB.reserve(total);
  markR.reserve(n);
  seenR.reserve(n);
  queueR.reserve(n);
  orderB.reserve(n);
  degR.reserve(n);
  const deg = degR.ptr;
  for (let v = 0; v < n; v++) {
    store<i32>(deg + (<usize>v << 2), load<i32>(rowStart + (<usize>(v + 1) << 2)) - load<i32>(rowStart + (<usize>v << 2)));
    markR.set(v, -1);
    seenR.set(v, 0);
  }
  memory.copy(sortedB.ptr, adj, <usize>total << 2);
  for (let v = 0; v < n; v++) {
    const k0 = load<i32>(rowStart + (<usize>v << 2));
    sortBy(sortedB.ptr + (<usize>k0 << 2), load<i32>(deg + (<usize>v << 2)), deg);
  }
  let t = 0, stamp = 0;
  for (let s0 = 0; s0 < n; s0++) {
    if (seenR.get(s0)) continue;
    let start = s0;
    let len = bfs(start, ++stamp, rowStart), bestDepth = depth;
    for (let it = 0; it < 8; it++) {
      // The last level's vertex of smallest degree (first of them on ties).
      let cand = queueR.get(lastLevel);
      for (let k = lastLevel + 1; k < len; k++) {
        const q = queueR.get(k);
        if (load<i32>(deg + (<usize>q << 2)) < load<i32>(deg + (<usize>cand << 2))) cand = q;
      }
      len = bfs(cand, ++stamp, rowStart);
      if (depth <= bestDepth) break;
      start = cand;
      bestDepth = depth;
    }
    len = bfs(start, ++stamp, rowStart);
    for (let k = 0; k < len; k++) {
      const q = queueR.get(k);
      seenR.set(q, 1);
      orderB.set(n - 1 - t, q);
      t++;
    }
  }
}

export function rcmOrder(): usize {
  return orderB.ptr;
}

// The connected components of the free variables (bindings/exact/enumeration.ts, enumerationPlan).
let parentU = new Buf<i32>(16);
let compOfB = new Buf<i32>(16);
let degreeB = new Buf<i32>(16);
let compVars = new Buf<i32>(16);
let compVarStart = new Buf<i32>(16);
let compFactors = new Buf<i32>(16);
let compFactorStart = new Buf<i32>(16);
let factorCompB = new Buf<i32>(16);

function find(v: i32): i32 {
  const p = parentU.ptr;
  while (load<i32>(p + (<usize>v << 2)) != v) {
    const up = load<i32>(p + (<usize>load<i32>(p + (<usize>v << 2)) << 2));
    store<i32>(p + (<usize>v << 2), up);
    v = up;
  }
  return v;
}

/**
 * The components of the variables not fixed (fixed: i32[n], ≥ 0 where fixed) of the factor graph
 * (scopeStart: i32[F + 1], scopeVars); returns their number C, numbered by their smallest
 * variable. Then componentVars() (i32, C's variables in turn, ascending within each) from
 * componentVarStarts() (i32[C + 1]); componentFactors() (i32[F], the factors touching each component
 * in turn, then those on fixed variables only) from componentFactorStarts() (i32[C + 2]);
 * factorDegrees() (i32[n]: the factors each variable is in).
 */
export function componentsRun(n: i32, F: i32, scopeStart: usize, scopeVars: usize, fixed: usize): i32 {
  parentU.reserve(n + 1); // later also the C + 1 fill pointers
  compOfB.reserve(n);
  degreeB.reserve(n);
  factorCompB.reserve(F);
  for (let v = 0; v < n; v++) {
    parentU.set(v, v);
    compOfB.set(v, -1);
    degreeB.set(v, 0);
  }
  for (let f = 0; f < F; f++) {
    let first = -1;
    const k1 = load<i32>(scopeStart + (<usize>(f + 1) << 2));
    for (let k = load<i32>(scopeStart + (<usize>f << 2)); k < k1; k++) {
      const v = load<i32>(scopeVars + (<usize>k << 2));
      degreeB.set(v, degreeB.get(v) + 1);
      if (load<i32>(fixed + (<usize>v << 2)) >= 0) continue;
      if (first < 0) first = v;
      else {
        const a = find(v), b = find(first);
        if (a != b) parentU.set(a, b);
      }
    }
  }
  let C = 0, nFree = 0;
  for (let v = 0; v < n; v++) {
    if (load<i32>(fixed + (<usize>v << 2)) >= 0) continue;
    const r = find(v);
    if (compOfB.get(r) < 0) compOfB.set(r, C++);
    nFree++;
  }
  compVarStart.reserve(C + 1);
  compFactorStart.reserve(C + 2);
  compVars.reserve(nFree);
  compFactors.reserve(F);
  for (let c = 0; c <= C; c++) compVarStart.set(c, 0);
  for (let c = 0; c <= C + 1; c++) compFactorStart.set(c, 0);
  for (let v = 0; v < n; v++) {
    if (load<i32>(fixed + (<usize>v << 2)) >= 0) continue;
    const c = compOfB.get(find(v)) + 1;
    compVarStart.set(c, compVarStart.get(c) + 1);
  }
  for (let f = 0; f < F; f++) {
    let c = C; // C: the factors on fixed variables only
    const k1 = load<i32>(scopeStart + (<usize>(f + 1) << 2));
    for (let k = load<i32>(scopeStart + (<usize>f << 2)); k < k1; k++) {
      const v = load<i32>(scopeVars + (<usize>k << 2));
      if (load<i32>(fixed + (<usize>v << 2)) < 0) {
        c = compOfB.get(find(v));
        break;
      }
    }
    factorCompB.set(f, c);
    compFactorStart.set(c + 1, compFactorStart.get(c + 1) + 1);
  }
  for (let c = 0; c < C; c++) compVarStart.set(c + 1, compVarStart.get(c + 1) + compVarStart.get(c));
  for (let c = 0; c <= C; c++) compFactorStart.set(c + 1, compFactorStart.get(c + 1) + compFactorStart.get(c));
  // Fill in index order (parentU reused as each component's fill pointer once every find is done).
  for (let v = 0; v < n; v++) if (load<i32>(fixed + (<usize>v << 2)) < 0) compOfB.set(v, compOfB.get(find(v)));
  for (let c = 0; c < C; c++) parentU.set(c, compVarStart.get(c));
  for (let v = 0; v < n; v++) {
    if (load<i32>(fixed + (<usize>v << 2)) >= 0) continue;
    const c = compOfB.get(v), at = parentU.get(c);
    compVars.set(at, v);
    parentU.set(c, at + 1);
  }
  for (let c = 0; c <= C; c++) parentU.set(c, compFactorStart.get(c));
  for (let f = 0; f < F; f++) {
    const c = factorCompB.get(f), at = parentU.get(c);
    compFactors.set(at, f);
    parentU.set(c, at + 1);
  }
  return C;
}

export function componentVars(): usize {
  return compVars.ptr;
}
export function componentVarStarts(): usize {
  return compVarStart.ptr;
}
export function componentFactors(): usize {
  return compFactors.ptr;
}
export function componentFactorStarts(): usize {
  return compFactorStart.ptr;
}
export function factorDegrees(): usize {
  return degreeB.ptr;
}
