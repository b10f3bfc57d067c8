// Whether a pair graph is exactly an H × W grid under some numbering of its variables: the loops of
// bindings/exact/lattice-bound.ts (gridUnderAnyNumbering), which proves a large model's refusal by
// its grid's treewidth. On 10⁶ variables numbered at random every step reads a variable's partners
// at a random place in memory: in TypeScript the lists and the walk took ≈ 0.15–0.2 s, here
// ≈ 0.09–0.11 s (native C of the same loops, gcc -O3, ≈ 0.05 s; an Intel Xeon VM). TypeScript
// reads the model's factors, tests each pair for a coupling and hands the coupling pairs over in
// chunks (gridAddPairs); the lists, the sites and the walk live here, on the planner's instance
// (one recognition at a time, freed by gridEnd).

import { Buf } from './exact_greedy';

/** Each variable's distinct partners, four slots per variable (a fifth: no grid). */
let partners = new Buf<i32>(16);
/** Each variable's number of distinct partners. */
let degree = new Buf<u8>(16);
/** Each site's variable (sites row by row). */
let site = new Buf<i32>(16);
/** A bit per variable: placed at a site. */
let placed = new Buf<u32>(16);
let nVars = 0;
/** The row length gridStart found. */
let rowLength = 0;

/** Starts a recognition over n variables (no pairs yet). */
export function gridBegin(n: i32): void {
  nVars = n;
  partners.reserve(4 * n);
  degree.reserve(n);
  site.reserve(n);
  placed.reserve((n + 31) >>> 5);
  memory.fill(degree.ptr, 0, <usize>n);
  memory.fill(placed.ptr, 0, <usize>((n + 31) >>> 5) << 2);
}

/**
 * Adds `count` pairs (u, w) at i32[2 · count] `pairs` to the lists, each pair once however often it
 * comes; returns 1 as soon as a variable would have a fifth distinct partner (no grid), else 0.
 */
export function gridAddPairs(pairs: usize, count: i32): i32 {
  const adj = partners.ptr, deg = degree.ptr;
  for (let k = 0; k < count; k++) {
    const u = load<i32>(pairs + (<usize>k << 3)), w = load<i32>(pairs + (<usize>k << 3) + 4);
    const a = adj + (<usize>u << 4), du = <i32>load<u8>(deg + <usize>u);
    if ((du > 0 && load<i32>(a) == w) || (du > 1 && load<i32>(a + 4) == w) || (du > 2 && load<i32>(a + 8) == w) || (du > 3 && load<i32>(a + 12) == w)) continue;
    const dw = <i32>load<u8>(deg + <usize>w);
    if (du == 4 || dw == 4) return 1;
    store<i32>(a + (<usize>du << 2), w);
    store<i32>(adj + (<usize>w << 4) + (<usize>dw << 2), u);
    store<u8>(deg + <usize>u, <u8>(du + 1));
    store<u8>(deg + <usize>w, <u8>(dw + 1));
  }
  return 0;
}

@inline function isPlaced(v: i32): bool {
  return ((load<u32>(placed.ptr + (<usize>(v >>> 5) << 2)) >>> (v & 31)) & 1) != 0;
}

@inline function put(v: i32, s: i32): void {
  const p = placed.ptr + (<usize>(v >>> 5) << 2);
  store<u32>(p, load<u32>(p) | (1 << (v & 31)));
  store<i32>(site.ptr + (<usize>s << 2), v);
}

@inline function partner(v: i32, e: i32): i32 {
  return load<i32>(partners.ptr + (<usize>v << 4) + (<usize>e << 2));
}

@inline function degreeOf(v: i32): i32 {
  return <i32>load<u8>(degree.ptr + <usize>v);
}

/**
 * From the corner c0 through `first` along the boundary (variables in at most three pairs, so one
 * way on at each step) to the next corner, putting the k-th variable at site k · stride (row 0:
 * stride 1; column 0: stride W); returns the path's length in variables, or 0 when it breaks.
 */
function boundaryPath(c0: i32, first: i32, stride: i32): i32 {
  let prev = c0, cur = first, k = 1;
  while (true) {
    if (isPlaced(cur)) return 0;
    put(cur, k * stride);
    const d = degreeOf(cur);
    if (d == 2) return k + 1;
    let next = -1;
    for (let e = 0; e < d; e++) {
      const w = partner(cur, e);
      if (w == prev || degreeOf(w) > 3) continue;
      if (next >= 0) return 0;
      next = w;
    }
    if (next < 0) return 0;
    prev = cur;
    cur = next;
    k++;
  }
}

/**
 * The grid the pairs added form, when they form exactly one, begun: row 0 and column 0 placed from a
 * corner c₀ (two partners) along its two boundary paths; returns the row length W (H = n / W;
 * H, W ≥ 3), else 0. gridRows places the rest. Each step there finds a bond of the grid among the
 * pairs and the places are distinct: as many pairs as bonds (checked here from the degrees) then
 * makes the graph that grid.
 */
export function gridStart(): i32 {
  const n = nVars;
  let c0 = -1, corners = 0;
  let ends: i64 = 0;
  for (let v = 0; v < n; v++) {
    const d = degreeOf(v);
    if (d < 2) return 0;
    if (d == 2 && corners++ == 0) c0 = v;
    ends += d;
  }
  if (corners != 4) return 0;
  put(c0, 0);
  // Row 0's sites are 0 … W − 1; column 0's are put once W is known.
  const W = boundaryPath(c0, partner(c0, 0), 1);
  if (W < 3 || n % W != 0) return 0;
  const H = boundaryPath(c0, partner(c0, 1), W);
  if (H < 3 || H * W != n || ends != 2 * (2 * <i64>n - H - W)) return 0;
  rowLength = W;
  return W;
}

/**
 * Places rows r0 … r1 − 1 (r0 ≥ 1, the rows above them placed) of the grid gridStart began; returns
 * 1, or 0 when they are not that grid's. Site (r, c) is the partner of the site above it that is
 * none of that site's own three placed neighbours, and its bond to the site before it is checked
 * (so no site waits on the one before it: a walk finding each site from both waited on a read from
 * memory per site). In calls of a few rows, so that most rows run the engine's optimised code (a
 * function called once runs its first tier throughout).
 */
export function gridRows(r0: i32, r1: i32): i32 {
  const W = rowLength, at = site.ptr;
  for (let r = r0; r < r1; r++) {
    const above = (r - 1) * W, row = r * W;
    for (let c = 1; c < W; c++) {
      const up = load<i32>(at + (<usize>(above + c) << 2));
      const upLeft = load<i32>(at + (<usize>(above + c - 1) << 2));
      const upRight = c + 1 < W ? load<i32>(at + (<usize>(above + c + 1) << 2)) : -1;
      const upUp = r > 1 ? load<i32>(at + (<usize>(above - W + c) << 2)) : -1;
      let found = -1;
      for (let e = 0, d = degreeOf(up); e < d; e++) {
        const w = partner(up, e);
        if (w == upLeft || w == upRight || w == upUp) continue;
        if (found >= 0) return 0;
        found = w;
      }
      // A variable at two sites would leave another at none.
      if (found < 0 || isPlaced(found)) return 0;
      const left = load<i32>(at + (<usize>(row + c - 1) << 2));
      let bonded = false;
      for (let e = 0, d = degreeOf(found); e < d; e++) bonded = bonded || partner(found, e) == left;
      if (!bonded) return 0;
      put(found, row + c);
    }
  }
  return 1;
}

/** Frees the recognition's buffers (≈ 21 bytes per variable), leaving small ones. */
export function gridEnd(): void {
  partners.free();
  degree.free();
  site.free();
  placed.free();
  partners = new Buf<i32>(16);
  degree = new Buf<u8>(16);
  site = new Buf<i32>(16);
  placed = new Buf<u32>(16);
  nVars = 0;
  rowLength = 0;
}
