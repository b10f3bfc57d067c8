// A refusal that needs no elimination order: a model laid out on a lattice (the lattice builders'
// `Model.lattice`) whose factors hold every bond of its open lattice contains that lattice's grid,
// and a d₁ × d₂ grid has treewidth min(d₁, d₂) (its d × d subgrid is a grid minor); a lattice of
// three sides contains the grid of its two longest (a slab). Every elimination order then has a
// clique of more than that many variables, so its sizes bound every plan from below — slicing
// included, which multiplies the slices' cliques back to at least as much work. The greedy
// orderings took 2.75 s to refuse a 1000×1000 lattice (min-degree 2.2 s of it); this takes a pass
// over the factors. Cheap treewidth lower bounds (degeneracy, minor-min-width) cannot see it: they
// are at most 5 on planar graphs. Without a layout, a square of a grid (or of a 3-D lattice's face)
// is found among the pair factors whatever the numbering (gridUnderAnyNumbering: any subgraph's
// treewidth bounds the graph's); failing that, a row-major grid or lattice with pairs more
// (rowMajorGrid).
import { pairsKnownToCouple, type Model } from '../core/model.ts';
import { fixedStates, noneFixed } from './enumeration.ts';
import { knownWithoutZeroEntries } from '../core/model-range.ts';
import { plannerEngine } from '../core/engine.ts';
import { binaryPairSplits, exactModel, factorCouples, splitsToZero } from './separable.ts';
import { fmtBytes, fmtEntries } from './outcome.ts';

/** Lattices of fewer sites are left to the orderings: they refuse them within ≈ 0.04 s and name the order they found. */
export const LATTICE_BOUND_MIN_SITES = 10_000;

/**
 * A lower bound on the treewidth, the one the lattice's grid forces (the true treewidth of a 3-D
 * lattice is far larger: 40×40×40 gets 40, the orderings find ≈ 1220), with the grid's sides (null when the model has no
 * lattice of two or more sides, or lacks a bond), and whether a unary factor, or a factor exactModel splits, has a zero entry
 * (which may fix a variable: unaryZerosIn, asked only of a model that may have one).
 */
export function latticeTreewidth(model: Model, shape: readonly number[] | undefined = model.lattice?.shape): { treewidth: number; sides: [number, number]; unaryZeros: boolean } | null {
  if (!shape || shape.length < 2) return null;
  const k = shape.length, n = model.n;
  const stride = new Array<number>(k);
  for (let a = k - 1, s = 1; a >= 0; a--) (stride[a] = s), (s *= shape[a]);
  // Every open bond (u, u + stride_a) with u's coordinate on axis a below its last, held by some factor that couples.
  const held = new Uint8Array(n * k);
  let bonds = 0;
  const start = model.scopeStart, vars = model.scopeVars; // read flat: scope() per factor cost 87 ms on 10⁶ sites
  // The lattice builders' models need no table read (pairsKnownToCouple).
  const couples = pairsKnownToCouple(model) ? null : pairCoupling(model);
  for (let f = 0, F = model.nFactors; f < F; f++) {
    const p = start[f];
    if (start[f + 1] - p !== 2) continue;
    const u = vars[p], d = vars[p + 1] - u;
    for (let a = 0; a < k; a++) {
      if (d !== stride[a] || Math.floor(u / stride[a]) % shape[a] === shape[a] - 1) continue;
      // A factor that couples nothing (a zero coupling: exactModel splits it) holds no bond.
      if (!held[u * k + a] && (!couples || couples(f))) (held[u * k + a] = 1), bonds++;
      break;
    }
  }
  let open = 0;
  for (let a = 0; a < k; a++) open += (n / shape[a]) * (shape[a] - 1);
  if (bonds !== open) return null;
  const sides = [...shape].sort((x, y) => y - x);
  // Zeros are looked for only where the model's tables may have one.
  return { treewidth: sides[1], sides: [sides[0], sides[1]], unaryZeros: !knownWithoutZeroEntries(model) && unaryZerosIn(model) };
}

/**
 * The refusal's text when the lattice alone puts every plan past maxFlops (configurations streamed)
 * — and, for auto, past the junction tree's clique-table limit and enumeration's limit too; null
 * otherwise, or when a variable is fixed (observed variables leave the planners' graph).
 */
export function hopelessLattice(model: Model, maxFlops: number, auto?: { maxTableEntries: number; enumerationLimit: number }): string | null {
  const enumerationLimit = auto?.enumerationLimit;
  if (model.n < LATTICE_BOUND_MIN_SITES) return null;
  const { bitsPerVar, allBits } = stateBits(model.card);
  let shape: readonly number[] | null = model.lattice?.shape ?? null;
  let grid: { treewidth: number; sides: [number, number]; unaryZeros: boolean } | null = shape ? latticeTreewidth(model, shape) : null;
  // A model without a layout (a UAI file): a square of a grid among its pair factors under any
  // numbering, of a side that puts the work past the limits ((side + 1) · bitsPerVar bits) or
  // GRID_SQUARE_SIDE; else, when they hold a grid's bonds and more, the row-major grid they suggest.
  const limitBits = Math.max(Math.log2(maxFlops), auto ? Math.log2(auto.maxTableEntries) : 0);
  const square = !model.lattice && bitsPerVar > 0 ? squareOf(model, Math.max(GRID_SQUARE_SIDE, Math.floor(limitBits / bitsPerVar) + 1)) : null;
  if (square) (shape = square.shape), (grid = square);
  else if (!model.lattice && (shape = rowMajorGrid(model))) grid = latticeTreewidth(model, shape);
  if (!grid || !shape) return null;
  const tw = grid.treewidth, workBits = (tw + 1) * bitsPerVar, messageBits = tw * bitsPerVar;
  // auto's junction tree stores cliques: refused past maxTableEntries.
  if (!(workBits > Math.log2(maxFlops)) || (auto && !(workBits > Math.log2(auto.maxTableEntries)))) return null;
  if (enumerationLimit !== undefined && !(allBits > Math.log2(enumerationLimit))) return null;
  // Fixed (observed) variables come from unary zeros, in the model exact inference plans: a unary
  // factor's, or a split factor's (a grid beside pair tables [0, 0; −∞, −∞] was refused with every
  // other variable fixed). Which are fixed is asked only when there is one.
  if (grid.unaryZeros && !noneFixed(fixedStates(exactModel(model)).fixed)) return null;
  const pow = (bits: number): string => (bits < 1000 ? fmtEntries(2 ** bits) : `2^${Math.round(bits)}`);
  const bytes = messageBits + 3 < 1000 ? fmtBytes(2 ** (messageBits + 3)) : `2^${Math.round(messageBits + 3)} bytes`;
  const slab = shape.length > 2 ? `, whose ${grid.sides[0]}×${grid.sides[1]} slab alone has treewidth ${tw}` : `, a grid of treewidth ${tw}`;
  const holds = model.lattice
    ? `the model holds every bond of its ${shape.join('×')} lattice${slab}`
    : square
      ? `the model's pair factors hold a ${tw}×${tw} grid (at a corner of ${square.dims === 2 ? `the ${shape.join('×')} grid` : `a ${shape.join('×')} face of the 3-D lattice`} their boundary outlines)${slab}`
      : `the model's pair factors hold every bond of a ${shape.join('×')} ${shape.length > 2 ? 'lattice' : 'grid'} over its variables in row-major order${slab}`;
  return (
    `exact elimination needs treewidth at least ${tw} under any elimination order (${holds}): ` +
    `unsliced a largest message of at least ${pow(messageBits)} entries (${bytes} of WASM memory), and sliced or not at least ${pow(workBits)} clique configurations streamed; ` +
    `the limit is ${fmtEntries(maxFlops)} configurations streamed in all slices (slicing cannot bring the work below the largest clique)` +
    (enumerationLimit !== undefined ? `; enumeration would visit ${pow(allBits)} configurations, past the limit of ${fmtEntries(enumerationLimit)}` : '')
  );
}

/**
 * Σ log₂ K_v and the least log₂ K_v, over runs of equal K (log₂ taken once a run: 10⁶ calls cost
 * more than the rest; and a sum of doubles per variable ran at 10 ns a variable in a first call,
 * before V8 optimised the loop, against 3 ns counting a run in integers). A function of its own:
 * inside hopelessLattice the loop ran at 12 ns a variable on calls after the first.
 */
function stateBits(card: Int32Array): { bitsPerVar: number; allBits: number } {
  let bitsPerVar = Infinity, allBits = 0, lastK = -1, run = 0;
  for (let v = 0, n = card.length; v < n; v++) {
    const K = card[v];
    if (K === lastK) {
      run++;
      continue;
    }
    if (run > 0) allBits += run * Math.log2(lastK);
    (lastK = K), (run = 1), (bitsPerVar = Math.min(bitsPerVar, Math.log2(K)));
  }
  if (run > 0) allBits += run * Math.log2(lastK);
  return { bitsPerVar, allBits };
}

/**
 * Whether pair factor f couples its variables, as factorCouples decides (exported for its test),
 * with the 2 × 2 test inline when both have two states (through factorCouples the 2·10⁶ bonds of a
 * 10⁶-site lattice took 0.09 s; the states are looked up per factor: a pass over every variable's
 * first cost 2–9 ms of a refusal that tests only a square's bonds).
 */
export function pairCoupling(model: Model): (f: number) => boolean {
  const { card, tables, tableStart, scopeStart, scopeVars } = model;
  // The last table tested by factorCouples, and its decision: a lattice's bonds often repeat one
  // table (a Potts lattice read from UAI text holds a copy per bond), and comparing entries costs
  // less than the test's calls in a first refusal, before V8 has optimised them (≈ 0.6 µs a bond).
  let last = -1, lastK1 = 0, lastK2 = 0, lastCouples = false;
  return (f) => {
    const p = scopeStart[f], K1 = card[scopeVars[p]], K2 = card[scopeVars[p + 1]], t0 = tableStart[f];
    const split = K1 === 2 && K2 === 2 ? binaryPairSplits(tables, t0) : undefined;
    if (split !== undefined) return !split;
    let same = K1 === lastK1 && K2 === lastK2;
    for (let e = 0, size = K1 * K2; same && e < size; e++) same = Object.is(tables[t0 + e], tables[last + e]);
    if (!same) (last = t0), (lastK1 = K1), (lastK2 = K2), (lastCouples = factorCouples(model, f));
    return lastCouples;
  };
}

/**
 * The H × W grid, or D × H × W lattice, a model's pair factors suggest when its variables are
 * numbered row by row (UAI grid files, models written from the lattice builders): W the most
 * frequent index step past 1 among the pair factors that divides n, when steps of 1 and of W are
 * frequent enough to be its bonds; else W and P = H · W the two most frequent such steps, P a
 * multiple of W, when steps of 1, W and P are frequent enough to be a lattice's. Asked when no
 * square is found (pairs more than a grid's or lattice's: diagonals); latticeTreewidth then checks
 * every bond; this only proposes the shape.
 */
function rowMajorGrid(model: Model): number[] | null {
  const n = model.n, start = model.scopeStart, vars = model.scopeVars;
  // Steps of 1 are (W − 1)·n / W ≥ n / 2 of a lattice's bonds: fewer and none is row-major (a
  // sequential pass: the steps' histogram below writes all over n counts, 0.035 s on 10⁶ shuffled sites).
  let ones = 0;
  const F = model.nFactors; // read once: the getter in the loops' tests cost 0.014 s on 3·10⁶ factors
  for (let f = 0; f < F; f++) if (start[f + 1] - start[f] === 2 && vars[start[f] + 1] - vars[start[f]] === 1) ones++;
  if (ones < n / 2) return null;
  const steps = new Int32Array(n);
  for (let f = 0; f < F; f++) if (start[f + 1] - start[f] === 2) steps[vars[start[f] + 1] - vars[start[f]]]++;
  // The two most frequent steps past 1 that divide n (the first of equals).
  let a = 0, b = 0;
  for (let d = 2; d < n; d++) {
    if (n % d !== 0) continue;
    if (a === 0 || steps[d] > steps[a]) (b = a), (a = d);
    else if (b === 0 || steps[d] > steps[b]) b = d;
  }
  if (a === 0) return null;
  const H = n / a;
  if (H >= 2 && steps[1] >= (a - 1) * H && steps[a] >= a * (H - 1)) return [H, a];
  const W = Math.min(a, b), P = Math.max(a, b), D = n / P;
  if (W === 0 || P % W !== 0 || D < 2 || P / W < 2) return null;
  const h = P / W;
  return steps[1] >= (W - 1) * h * D && steps[W] >= W * (h - 1) * D && steps[P] >= P * (D - 1) ? [D, h, W] : null;
}

/**
 * gridUnderAnyNumbering's answer per model and side: a Model never changes, and exactInferenceParallel
 * asks before exactInference does (≈ 0.08 s each on 10⁶ sites numbered at random).
 */
const squares = new WeakMap<Model, Map<number, ReturnType<typeof gridUnderAnyNumbering>>>();
function squareOf(model: Model, side: number): ReturnType<typeof gridUnderAnyNumbering> {
  let bySide = squares.get(model);
  if (!bySide) squares.set(model, (bySide = new Map()));
  if (!bySide.has(side)) bySide.set(side, gridUnderAnyNumbering(model, side));
  return bySide.get(side)!;
}

/**
 * A side × side grid among a model's pair factors under any numbering of its variables (a grid file
 * renumbered, or numbered column by column or along a snake), found when their graph (each pair
 * once) looks like an H × W grid, H, W ≥ 3 (every variable in two to four pairs, four corners, as
 * many pairs as an H × W grid has bonds), or like a 3-D lattice (three to six pairs, eight corners:
 * the square on the face of the corner's two longest edges). From a corner c₀ two edges give row 0
 * and column 0 (on a grid the boundary's variables are those in at most three pairs, on a 3-D
 * lattice an edge's in at most four, so each step has one way on); then site (r, c) is the one
 * partner of (r − 1, c) not placed and bonded to (r, c − 1), over a staircase under row 0 that
 * holds the square at the corner (gridPatch). Each step found a bond among the pairs and the
 * places are distinct, so the square is a subgraph of the pair graph, and a factor that couples
 * must hold each of its bonds: its side, at most min(H, W), bounds the treewidth from below
 * (`square` lists its variables row by row). Only a square: the whole walk on 10⁶ variables
 * numbered at random read each site's partners at a random place in memory (≈ 0.1 s), and so did
 * the coupling tests of every pair. The engine reads the scopes in chunks and keeps the lists and
 * the walk (assembly/exact/exact_gridfind.ts); most graphs that are neither leave before the walk
 * (a variable in too few pairs or too many, or corners missing). Pairs that couple nothing are in
 * the lists at first; when the pairs fail to be a grid so, the coupling pairs alone are tried.
 */
export function gridUnderAnyNumbering(model: Model, side: number): (Square & { unaryZeros: boolean }) | null {
  const known = pairsKnownToCouple(model);
  const found = (r: ReturnType<typeof gridSquare>): Square | null => (r === 'overfull' ? null : r);
  const all = gridSquare(model, side, true, 2);
  let square = found(all);
  // Pairs that couple nothing may spoil the grid: the coupling pairs alone.
  if (!square && !known) square = found(gridSquare(model, side, false, 2));
  // A variable in more than four pairs: a 3-D lattice, perhaps (a graph of four at most is none);
  // lists for its surface first, then for every variable (a pair repeated, or one more, may hide a
  // surface: its variables then count six pairs).
  if (!square && all === 'overfull') square = found(gridSquare(model, side, true, 3, true)) ?? found(gridSquare(model, side, true, 3));
  if (!square) return null;
  // Zeros are looked for only where the model's tables may have one.
  return { ...square, unaryZeros: !knownWithoutZeroEntries(model) && unaryZerosIn(model) };
}

/** A square gridSquare found: side (treewidth), the grid's or face's H × W, its variables row by row. */
type Square = { treewidth: number; sides: [number, number]; shape: [number, number]; square: Int32Array; dims: 2 | 3 };

/**
 * gridUnderAnyNumbering's square, on a grid (dims 2) or a 3-D lattice's face (dims 3), from all pair
 * factors (allPairs; those of a square found are then checked for a coupling) or from those that
 * couple only; 'overfull' when a variable has more distinct partners than the lists hold (four on a
 * grid, six on a 3-D lattice). `surfaceOnly` (dims 3, allPairs): lists only for the variables in
 * fewer than six pairs (a pass counting them first).
 */
function gridSquare(model: Model, side: number, allPairs: boolean, dims: 2 | 3, surfaceOnly = false): Square | 'overfull' | null {
  const n = model.n, start = model.scopeStart, vars = model.scopeVars, F = model.nFactors;
  const couples = pairsKnownToCouple(model) ? null : pairCoupling(model);
  const engine = plannerEngine(), arena = engine.arena(), k = engine.kernels;
  const call = (fn: () => number): number => engine.call('grid recognition', fn);
  try {
    call(() => k.gridBegin(n, dims, surfaceOnly ? 1 : 0, side));
    const startsPtr = arena.alloc(4 * (GRID_CHUNK + 1), false), varsPtr = arena.alloc(8 * GRID_CHUNK, false), outPtr = arena.alloc(8 * GRID_CHUNK, false);
    let starts = arena.i32(startsPtr, GRID_CHUNK + 1), chunkVars = arena.i32(varsPtr, 2 * GRID_CHUNK);
    // The scopes in chunks of at most GRID_CHUNK factors and 2 · GRID_CHUNK variables (a longer scope
    // alone, no pair, is left out); `each` returns false to stop.
    const inChunks = (each: (f0: number, count: number, base: number) => boolean): boolean => {
      for (let f0 = 0; f0 < F; ) {
        const base = start[f0];
        let f1 = Math.min(F, f0 + GRID_CHUNK);
        while (start[f1] - base > 2 * GRID_CHUNK) f1 = f0 + ((f1 - f0) >> 1);
        if (f1 === f0) {
          f0++;
          continue;
        }
        starts.set(start.subarray(f0, f1 + 1));
        chunkVars.set(vars.subarray(base, start[f1]));
        if (!each(f0, f1 - f0, base)) return false;
        f0 = f1;
      }
      return true;
    };
    if (surfaceOnly) {
      inChunks((f0, count, base) => (call(() => (k.gridCountScopes(startsPtr, varsPtr, count, base), 0)), true));
      call(() => k.gridSurfaceLists());
      // The surface's lists may grow the engine's memory, which detaches the views.
      (starts = arena.i32(startsPtr, GRID_CHUNK + 1)), (chunkVars = arena.i32(varsPtr, 2 * GRID_CHUNK));
    }
    if (allPairs) {
      if (!inChunks((f0, count, base) => call(() => k.gridAddScopes(startsPtr, varsPtr, count, base)) === 0)) return 'overfull';
    } else {
      // The coupling pairs, tested here one by one.
      let m = 0;
      for (let f = 0; f < F; f++) {
        const p = start[f];
        if (start[f + 1] - p !== 2 || (couples && !couples(f))) continue;
        chunkVars[2 * m] = vars[p];
        chunkVars[2 * m + 1] = vars[p + 1];
        if (++m === GRID_CHUNK) {
          if (call(() => k.gridAddPairs(varsPtr, GRID_CHUNK)) !== 0) return 'overfull';
          m = 0;
        }
      }
      if (call(() => k.gridAddPairs(varsPtr, m)) !== 0) return 'overfull';
    }
    const W = call(() => k.gridStart(dims, side)), H = W > 0 ? call(() => k.gridColumns()) : 0;
    if (W === 0) return null;
    const s = Math.min(side, H, W);
    if (call(() => k.gridPatch(s)) === 0) return null;
    if (allPairs && couples) {
      // Each of the square's 2s(s − 1) bonds held by a factor that couples.
      const held = new Uint8Array(2 * s * s);
      let bonds = 0;
      inChunks((f0, count, base) => {
        const m = call(() => k.gridPatchBonds(startsPtr, varsPtr, count, base, f0, outPtr)), out = arena.i32(outPtr, 2 * m);
        for (let j = 0; j < m; j++) if (!held[out[2 * j + 1]] && couples(out[2 * j])) (held[out[2 * j + 1]] = 1), bonds++;
        return true;
      });
      if (bonds !== 2 * s * (s - 1)) return null;
    }
    const out = arena.alloc(4 * s * s, false);
    call(() => (k.gridSquareVars(out), 0));
    return { treewidth: s, sides: [s, s], shape: [H, W], square: arena.i32(out, s * s).slice(), dims };
  } finally {
    k.gridEnd();
    arena.dispose();
  }
}

/** Whether a unary factor, or a factor exactModel splits (one that couples nothing), has a zero entry (which may fix a variable). */
function unaryZerosIn(model: Model): boolean {
  const known = pairsKnownToCouple(model), { scopeStart: start, scopeVars: vars, tableStart, tables, card } = model;
  for (let f = 0, F = model.nFactors; f < F; f++) {
    const p = start[f];
    if (start[f + 1] - p === 1) {
      for (let e = tableStart[f], end = e + card[vars[p]]; e < end; e++) if (tables[e] === -Infinity) return true;
    } else if (!known && splitsToZero(model, f)) return true;
  }
  return false;
}

/** Factors whose scopes the engine reads per call (and coupling pairs handed over per call: 64 KiB of them). */
const GRID_CHUNK = 8192;
/**
 * The least side of the square gridUnderAnyNumbering looks for when a refusal needs a smaller one:
 * a bound of 2^128 entries says more than one just past the limits, grids up to 128 on their
 * shorter side are placed whole, and the staircase's ≈ 2.5 · 10⁴ sites take ≈ 2–3 ms.
 */
const GRID_SQUARE_SIDE = 128;
