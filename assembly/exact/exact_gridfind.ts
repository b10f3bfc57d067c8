// A square of a grid among a model's pair factors under any numbering of its variables, on a grid
// or on a face of a 3-D lattice: the loops of bindings/exact/lattice-bound.ts
// (gridUnderAnyNumbering), which proves a large model's refusal by the square's treewidth.
// TypeScript copies the model's scopes over in chunks (gridAddScopes: each variable's distinct
// partners, four at most on a grid, six on a 3-D lattice; or, when pairs that couple nothing
// spoil the grid, TypeScript's coupling pairs through gridAddPairs); gridStart checks the degrees
// and walks row 0 and column 0 along two edges from a corner; gridPatch places a staircase under
// row 0 that holds the square at the corner; gridPatchBonds, a second pass over the scopes, lists
// the factors on the square's bonds, which TypeScript checks for a coupling. On 10⁶ variables
// numbered at random the lists are most of the time (each pair's two updates at random places in
// 16 MB, ≈ 0.04 s); the walk of the whole grid, ≈ 0.1 s more, is why only a square is placed. A
// 3-D lattice's square lies on its surface: gridCountScopes counts each variable's pairs first, and
// lists are kept for the surface only (surface mode). Lives on the planner's instance (one
// recognition at a time, freed by gridEnd).

import { Buf } from './exact_greedy';

/** Each variable's distinct partners (in surface mode, each surface variable's), `slots` i32 a list: four for a grid, six for a 3-D lattice (one more: neither; six, not eight, keep a 10⁶-site lattice's lists for every variable at 24 MB). */
let partners = new Buf<i32>(16);
let slots = 4;
/**
 * Each variable's number of distinct partners; in surface mode, a variable's pairs counted with
 * their repeats (saturated at 255) until gridSurfaceLists, which puts its surface variables (fewer
 * than six) back to zero for their distinct partners.
 */
let degree = new Buf<u8>(16);
/**
 * Surface mode (3-D lattices): lists only for the variables in fewer than six pairs, a lattice's
 * surface, where the square on a face lies (every site of the walk has one; an interior variable is
 * only ever a partner). A 100³ lattice has 6 · 10⁴ of them: its lists are written at 6 · 10⁴ places,
 * not at 10⁶ (3 · 10⁶ pairs' updates at random places in 24 MB were ≈ 0.08 s). listIndex: each
 * surface variable's list.
 */
let surface = false;
let listIndex = new Buf<i32>(16);
/**
 * The staircase's sites' variables, row by row, siteStride = min(W, 2 · side) a row (row 0 and
 * column 0 are placed past it too, but only marked: the buffer holds side · 2 · side, not n).
 */
let site = new Buf<i32>(16);
let siteStride = 0;
/** A bit per variable: placed at a site. */
let placed = new Buf<u32>(16);
let nVars = 0;
/** The row and column lengths gridStart found. */
let rowLength = 0;
let columnLength = 0;
/** The side of the square gridPatch placed. */
let patchSide = 0;

/**
 * Starts a recognition over n variables (no pairs yet), of a grid (dims 2) or a 3-D lattice (dims
 * 3), for a square of at most `side`; `surfaceOnly` (dims 3): lists for the surface only
 * (gridCountScopes over every scope first, then gridSurfaceLists). The lists are reserved last:
 * the allocator grows memory by at least its size, so a small buffer after them would double it
 * (a 10⁶-site grid's recognition then passed the 32 MiB the planner instance keeps between plans).
 */
export function gridBegin(n: i32, dims: i32, surfaceOnly: bool, side: i32): void {
  nVars = n;
  slots = dims == 2 ? 4 : 6;
  surface = surfaceOnly;
  degree.reserve(n);
  placed.reserve((n + 31) >>> 5);
  // Edges are at most n long (on a graph that is none, H · W may pass n).
  site.reserve(<i32>(min(<i64>side, <i64>n) * min(2 * <i64>side, <i64>n)));
  if (surface) listIndex.reserve(n);
  else partners.reserve(slots * n);
  memory.fill(degree.ptr, 0, <usize>n);
  memory.fill(placed.ptr, 0, <usize>((n + 31) >>> 5) << 2);
}

/** Adds the pair (u, w) to the lists once however often it comes; false when a variable would have more distinct partners than its slots (no grid or lattice). */
@inline function addPair(u: i32, w: i32): bool {
  const adj = partners.ptr, deg = degree.ptr;
  const a = adj + (<usize>u * <usize>(slots << 2)), du = <i32>load<u8>(deg + <usize>u);
  for (let e = 0; e < du; e++) if (load<i32>(a + (<usize>e << 2)) == w) return true;
  const dw = <i32>load<u8>(deg + <usize>w);
  if (du == slots || dw == slots) return false;
  store<i32>(a + (<usize>du << 2), w);
  store<i32>(adj + (<usize>w * <usize>(slots << 2)) + (<usize>dw << 2), u);
  store<u8>(deg + <usize>u, <u8>(du + 1));
  store<u8>(deg + <usize>w, <u8>(dw + 1));
  return true;
}

/** Surface mode: adds w to u's list once when u is on the surface (its pairs were fewer than six). */
@inline function addSurfacePartner(u: i32, w: i32): void {
  const du = <i32>load<u8>(degree.ptr + <usize>u);
  if (du >= 6) return;
  const a = listOf(u);
  for (let e = 0; e < du; e++) if (load<i32>(a + (<usize>e << 2)) == w) return;
  store<i32>(a + (<usize>du << 2), w);
  store<u8>(degree.ptr + <usize>u, <u8>(du + 1));
}

/** Surface mode, first pass: counts each variable's pairs, repeats included (scopes as gridAddScopes reads them). */
export function gridCountScopes(starts: usize, vars: usize, count: i32, base: i32): void {
  const deg = degree.ptr;
  let p = load<i32>(starts) - base;
  for (let i = 0; i < count; i++) {
    const q = load<i32>(starts + (<usize>(i + 1) << 2)) - base;
    if (q - p == 2) {
      const a = deg + <usize>load<i32>(vars + (<usize>p << 2)), b = deg + <usize>load<i32>(vars + (<usize>p << 2) + 4);
      store<u8>(a, <u8>min(<i32>load<u8>(a) + 1, 255));
      store<u8>(b, <u8>min(<i32>load<u8>(b) + 1, 255));
    }
    p = q;
  }
}

/** Surface mode, after the counts: a list for each variable in fewer than six pairs (its count back to zero); returns how many. */
export function gridSurfaceLists(): i32 {
  const deg = degree.ptr, at = listIndex.ptr;
  let k = 0;
  for (let v = 0; v < nVars; v++)
    if (<i32>load<u8>(deg + <usize>v) < 6) {
      store<i32>(at + (<usize>v << 2), k++);
      store<u8>(deg + <usize>v, 0);
    }
  partners.reserve(slots * k);
  return k;
}

/**
 * Adds `count` pairs (u, w) at i32[2 · count] `pairs` to the lists, each pair once however often it
 * comes; returns 1 as soon as a variable would have a fifth distinct partner (no grid), else 0.
 */
export function gridAddPairs(pairs: usize, count: i32): i32 {
  for (let k = 0; k < count; k++) if (!addPair(load<i32>(pairs + (<usize>k << 3)), load<i32>(pairs + (<usize>k << 3) + 4))) return 1;
  return 0;
}

/**
 * Adds the pairs of `count` factors as the model stores their scopes: factor i's variables are
 * vars[starts[i] − base … starts[i + 1] − base) (i32 arrays; starts has count + 1 entries). Only
 * arity-2 factors add a pair, coupling or not (the patch's bonds are checked for a coupling after
 * the walk: see gridPatchBonds). Returns 1 as soon as a variable would have a fifth partner, else 0.
 */
export function gridAddScopes(starts: usize, vars: usize, count: i32, base: i32): i32 {
  let p = load<i32>(starts) - base;
  for (let i = 0; i < count; i++) {
    const q = load<i32>(starts + (<usize>(i + 1) << 2)) - base;
    if (q - p == 2) {
      const u = load<i32>(vars + (<usize>p << 2)), w = load<i32>(vars + (<usize>p << 2) + 4);
      if (surface) addSurfacePartner(u, w), addSurfacePartner(w, u);
      else if (!addPair(u, w)) return 1;
    }
    p = q;
  }
  return 0;
}

@inline function isPlaced(v: i32): bool {
  return ((load<u32>(placed.ptr + (<usize>(v >>> 5) << 2)) >>> (v & 31)) & 1) != 0;
}

/** Marks v placed, at site s when s ≥ 0. */
@inline function put(v: i32, s: i32): void {
  const p = placed.ptr + (<usize>(v >>> 5) << 2);
  store<u32>(p, load<u32>(p) | (1 << (v & 31)));
  if (s >= 0) store<i32>(site.ptr + (<usize>s << 2), v);
}

/** Where v's list is (in surface mode, v must be on the surface). */
@inline function listOf(v: i32): usize {
  return partners.ptr + <usize>(surface ? load<i32>(listIndex.ptr + (<usize>v << 2)) : v) * <usize>(slots << 2);
}

@inline function partner(v: i32, e: i32): i32 {
  return load<i32>(listOf(v) + (<usize>e << 2));
}

/** Whether v's partners hold w. */
@inline function bonded(v: i32, w: i32): bool {
  let found = false;
  for (let e = 0, d = degreeOf(v); e < d; e++) found = found || partner(v, e) == w;
  return found;
}

@inline function degreeOf(v: i32): i32 {
  return <i32>load<u8>(degree.ptr + <usize>v);
}

/**
 * From the corner c0 through `first` along an edge (on a grid its boundary: variables in at most
 * three pairs; on a 3-D lattice an edge of it: at most four; dims + 1 either way, so one way on at
 * each step) to the next corner (dims pairs); returns the edge's length in variables, or 0 when it
 * breaks. `place`: each variable marked placed, the k-th at site k · step while k < limit (row 0:
 * step 1; column 0: the site rows' stride), and 0 when it was placed before; else nothing placed (a
 * 3-D lattice's edges measured first).
 */
function walkEdge(c0: i32, first: i32, step: i32, limit: i32, dims: i32, place: bool): i32 {
  let prev = c0, cur = first, k = 1;
  while (true) {
    if (k >= nVars) return 0;
    if (place) {
      if (isPlaced(cur)) return 0;
      put(cur, k < limit ? k * step : -1);
    }
    const d = degreeOf(cur);
    if (d == dims) return k + 1;
    // In surface mode the first step may reach a variable with no list (later ones are on an edge).
    if (surface && d >= 6) return 0;
    let next = -1;
    for (let e = 0; e < d; e++) {
      const w = partner(cur, e);
      if (w == prev || degreeOf(w) > dims + 1) continue;
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
 * The grid (dims 2) or 3-D lattice (dims 3) the pairs added look like, begun. A grid: every
 * variable in two to four pairs, four corners, as many pairs as an H × W grid has bonds (from the
 * degrees). A 3-D lattice: every variable in three to six pairs, eight corners. Then row 0 and
 * column 0 placed from a corner c₀ (dims partners) along two of its edges (on a 3-D lattice they
 * span a face); returns the row length W (H, the column's, from gridColumns; H, W ≥ 3), else 0.
 * gridPatch then places a square of at most `side` (gridBegin's) at the corner, each step a bond
 * among the pairs.
 */
export function gridStart(dims: i32, side: i32): i32 {
  const n = nVars, deg = degree.ptr;
  let c0 = -1, corners = 0;
  let ends: i64 = 0;
  // Sixteen degrees at a time (a fresh process runs this pass once, before V8 has optimised it:
  // ≈ 4 ms a variable at a time on 10⁶ variables).
  const least = i8x16.splat(<i8>dims), most = i8x16.splat(<i8>(2 * dims));
  let sums = i32x4.splat(0), v = 0;
  for (; v + 16 <= n; v += 16) {
    const x = v128.load(deg + <usize>v);
    if (v128.any_true(v128.or(i8x16.lt_u(x, least), i8x16.gt_u(x, most)))) return 0;
    const m = i8x16.bitmask(i8x16.eq(x, least));
    if (m != 0 && corners == 0) c0 = v + ctz(m);
    corners += popcnt(m);
    sums = i32x4.add(sums, i32x4.extadd_pairwise_i16x8_u(i16x8.extadd_pairwise_i8x16_u(x)));
  }
  ends = <i64>(i32x4.extract_lane(sums, 0) + i32x4.extract_lane(sums, 1) + i32x4.extract_lane(sums, 2) + i32x4.extract_lane(sums, 3));
  for (; v < n; v++) {
    const d = degreeOf(v);
    if (d < dims || d > 2 * dims) return 0;
    if (d == dims && corners++ == 0) c0 = v;
    ends += d;
  }
  if (corners != 1 << dims) return 0;
  // On a 3-D lattice the face of the corner's two longest edges (its largest square).
  let row = 0, column = 1;
  if (dims == 3) {
    const e0 = walkEdge(c0, partner(c0, 0), 0, 0, 3, false), e1 = walkEdge(c0, partner(c0, 1), 0, 0, 3, false), e2 = walkEdge(c0, partner(c0, 2), 0, 0, 3, false);
    if (e0 <= e1 && e0 <= e2) row = 2;
    else if (e1 <= e2) column = 2;
  }
  put(c0, 0);
  // Row 0's sites are 0 … min(W, 2 · side) − 1; column 0's are put once W is known.
  const W = walkEdge(c0, partner(c0, row), 1, 2 * side, dims, true);
  if (W < 3 || (dims == 2 && n % W != 0)) return 0;
  siteStride = min(W, 2 * side);
  const H = walkEdge(c0, partner(c0, column), siteStride, side, dims, true);
  if (H < 3 || (dims == 2 && (H * W != n || ends != 2 * (2 * <i64>n - H - W)))) return 0;
  rowLength = W;
  columnLength = H;
  return W;
}

/** The column length gridStart found (on a grid n / W). */
export function gridColumns(): i32 {
  return columnLength;
}

/**
 * Places the sites of a staircase of `side` rows under row 0 (side ≤ H, W, as gridStart found):
 * row r of its first L_r = min(W, 2 · side − r) sites, so the side × side square at the corner is
 * placed and each row's sites have the three neighbours above placed. Returns 1, or 0 when the
 * pairs are no grid there. Site (r, c) is the one partner of the site above it that is not placed
 * and is bonded to the site before it (on a 3-D lattice's face the partner off the face is bonded
 * to neither). Each step finds a bond among the pairs and the places are distinct,
 * so the square is a subgraph of the pair graph: its treewidth, side, bounds the model's from below
 * (gridPatchBonds then checks that a coupling factor holds each of its bonds). A patch, not the
 * whole grid: on 10⁶ variables numbered at random the whole walk read each site's partners at a
 * random place in memory, ≈ 0.1 s, and a refusal needs only a square past its limits.
 */
export function gridPatch(side: i32): i32 {
  const W = rowLength, S = siteStride, at = site.ptr;
  for (let r = 1; r < side; r++) {
    const above = (r - 1) * S, row = r * S, length = min(W, 2 * side - r);
    for (let c = 1; c < length; c++) {
      const up = load<i32>(at + (<usize>(above + c) << 2)), left = load<i32>(at + (<usize>(row + c - 1) << 2));
      let found = -1;
      for (let e = 0, d = degreeOf(up); e < d; e++) {
        const w = partner(up, e);
        // Placed already (up's neighbours in the rows above and before it), or off the plane.
        if (isPlaced(w) || !bonded(left, w)) continue;
        if (found >= 0) return 0;
        found = w;
      }
      // In surface mode only a surface variable has a list to read on (a lattice's face has no other).
      if (found < 0 || (surface && degreeOf(found) >= 6)) return 0;
      put(found, row + c);
    }
  }
  // The square's variables, each with its place r · side + c in its partner slot 0 (the lists are done with).
  memory.fill(placed.ptr, 0, <usize>((nVars + 31) >>> 5) << 2);
  for (let r = 0; r < side; r++)
    for (let c = 0; c < side; c++) {
      const v = load<i32>(at + (<usize>(r * S + c) << 2));
      put(v, -1);
      store<i32>(listOf(v), r * side + c);
    }
  patchSide = side;
  return 1;
}

/**
 * The bonds of the square gridPatch placed that `count` factors hold (scopes as gridAddScopes reads
 * them; factor i is model factor f0 + i): for each, the factor and the bond, 2 · p for the bond from
 * place p to its right, 2 · p + 1 for the one below it, at i32 out[2 · k], out[2 · k + 1]. Returns
 * how many (at most count).
 */
export function gridPatchBonds(starts: usize, vars: usize, count: i32, base: i32, f0: i32, out: usize): i32 {
  const k = patchSide;
  let p = load<i32>(starts) - base, m = 0;
  for (let i = 0; i < count; i++) {
    const q = load<i32>(starts + (<usize>(i + 1) << 2)) - base;
    if (q - p == 2) {
      const u = load<i32>(vars + (<usize>p << 2)), w = load<i32>(vars + (<usize>p << 2) + 4);
      if (isPlaced(u) && isPlaced(w)) {
        const a = load<i32>(listOf(u)), b = load<i32>(listOf(w));
        const lo = min(a, b), d = max(a, b) - lo;
        const bond = d == 1 && lo % k != k - 1 ? 2 * lo : d == k ? 2 * lo + 1 : -1;
        if (bond >= 0) {
          store<i32>(out + (<usize>m << 3), f0 + i);
          store<i32>(out + (<usize>m << 3) + 4, bond);
          m++;
        }
      }
    }
    p = q;
  }
  return m;
}

/** Writes the variables of the square gridPatch placed, row by row (side² i32 at out). */
export function gridSquareVars(out: usize): void {
  const k = patchSide, S = siteStride;
  for (let r = 0; r < k; r++) memory.copy(out + (<usize>(r * k) << 2), site.ptr + (<usize>(r * S) << 2), <usize>k << 2);
}

/** Frees the recognition's buffers (≈ 17 bytes a variable; in surface mode ≈ 5, and the surface's lists), leaving small ones. */
export function gridEnd(): void {
  partners.free();
  degree.free();
  listIndex.free();
  site.free();
  placed.free();
  partners = new Buf<i32>(16);
  degree = new Buf<u8>(16);
  listIndex = new Buf<i32>(16);
  surface = false;
  site = new Buf<i32>(16);
  placed = new Buf<u32>(16);
  nVars = 0;
  rowLength = 0;
  siteStride = 0;
  columnLength = 0;
  patchSide = 0;
}
