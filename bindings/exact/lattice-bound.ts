// A refusal that needs no elimination order: a model laid out on a lattice (the lattice builders'
// `Model.lattice`) whose factors hold every bond of its open lattice contains that lattice's grid,
// and a d₁ × d₂ grid has treewidth min(d₁, d₂) (its d × d subgrid is a grid minor); a lattice of
// three sides contains the grid of its two longest (a slab). Every elimination order then has a
// clique of more than that many variables, so its sizes bound every plan from below — slicing
// included, which multiplies the slices' cliques back to at least as much work. The greedy
// orderings took 2.75 s to refuse a 1000×1000 lattice (min-degree 2.2 s of it); this takes a pass
// over the factors. Cheap treewidth lower bounds (degeneracy, minor-min-width) cannot see it: they
// are at most 5 on planar graphs. Without a layout, a grid is found from its numbering (row by row)
// or, numbered otherwise, from its pair graph (gridUnderAnyNumbering).
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
 * (which may fix a variable: found in the same pass over the factors).
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
  const { tableStart, tables, card } = model;
  // Zeros are looked for only where the model's tables may have one.
  const zeroFree = knownWithoutZeroEntries(model);
  let unaryZeros = false;
  // The lattice builders' models need no table read (pairsKnownToCouple).
  const known = pairsKnownToCouple(model), couples = known ? null : pairCoupling(model);
  for (let f = 0, F = model.nFactors; f < F; f++) {
    const p = start[f];
    if (start[f + 1] - p === 1) {
      if (!unaryZeros && !zeroFree) for (let e = tableStart[f], end = e + card[vars[p]]; e < end; e++) if (tables[e] === -Infinity) unaryZeros = true;
      continue;
    }
    let bond = false;
    if (start[f + 1] - p === 2) {
      const u = vars[p], d = vars[p + 1] - u;
      for (let a = 0; a < k; a++) {
        if (d !== stride[a] || Math.floor(u / stride[a]) % shape[a] === shape[a] - 1) continue;
        // A factor that couples nothing (a zero coupling: exactModel splits it) holds no bond.
        if (!held[u * k + a] && (!couples || couples(f))) (held[u * k + a] = 1), bonds++, (bond = true);
        break;
      }
    }
    // A factor that holds no bond may be split into unary factors with zeros (which may fix variables).
    if (!bond && !known && !unaryZeros && !zeroFree && splitsToZero(model, f)) unaryZeros = true;
  }
  let open = 0;
  for (let a = 0; a < k; a++) open += (n / shape[a]) * (shape[a] - 1);
  if (bonds !== open) return null;
  const sides = [...shape].sort((x, y) => y - x);
  return { treewidth: sides[1], sides: [sides[0], sides[1]], unaryZeros };
}

/**
 * The refusal's text when the lattice alone puts every plan past maxFlops (configurations streamed)
 * — and, for auto, past the junction tree's clique-table limit and enumeration's limit too; null
 * otherwise, or when a variable is fixed (observed variables leave the planners' graph).
 */
export function hopelessLattice(model: Model, maxFlops: number, auto?: { maxTableEntries: number; enumerationLimit: number }): string | null {
  const enumerationLimit = auto?.enumerationLimit;
  if (model.n < LATTICE_BOUND_MIN_SITES) return null;
  // A model without a layout (a UAI file) is tried as the row-major grid its pair factors suggest.
  let shape = model.lattice?.shape ?? rowMajorGrid(model);
  let grid = shape ? latticeTreewidth(model, shape) : null;
  // Numbered in another order: a pair-factor graph that is exactly a grid is found by its corners.
  const other = !grid && !model.lattice ? gridUnderAnyNumbering(model) : null;
  if (other) (shape = other.shape), (grid = other);
  if (!grid || !shape) return null;
  // Σ log₂ K_v and the least K_v (log₂ taken when K changes: 10⁶ calls cost more than the rest).
  let bitsPerVar = Infinity, allBits = 0, lastK = -1, lastBits = 0;
  for (let v = 0, card = model.card, n = card.length; v < n; v++) {
    const K = card[v];
    if (K !== lastK) (lastK = K), (lastBits = Math.log2(K)), (bitsPerVar = Math.min(bitsPerVar, lastBits));
    allBits += lastBits;
  }
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
    : other
      ? `the model's pair factors form a ${shape.join('×')} grid, its variables numbered in another order${slab}`
      : `the model's pair factors hold every bond of a ${shape.join('×')} grid over its variables in row-major order${slab}`;
  return (
    `exact elimination needs treewidth at least ${tw} under any elimination order (${holds}): ` +
    `unsliced a largest message of at least ${pow(messageBits)} entries (${bytes} of WASM memory), and sliced or not at least ${pow(workBits)} clique configurations streamed; ` +
    `the limit is ${fmtEntries(maxFlops)} configurations streamed in all slices (slicing cannot bring the work below the largest clique)` +
    (enumerationLimit !== undefined ? `; enumeration would visit ${pow(allBits)} configurations, past the limit of ${fmtEntries(enumerationLimit)}` : '')
  );
}

/**
 * Whether pair factor f couples its variables, as factorCouples decides, with the 2 × 2 test inline
 * when every variable has two states (through factorCouples the 2·10⁶ bonds of a 10⁶-site lattice took 0.09 s).
 */
function pairCoupling(model: Model): (f: number) => boolean {
  const { card, tables, tableStart } = model;
  let binary = true;
  for (let v = 0; v < card.length && binary; v++) binary = card[v] === 2;
  return binary
    ? (f) => {
        const split = binaryPairSplits(tables, tableStart[f]);
        return split === undefined ? factorCouples(model, f) : !split;
      }
    : (f) => factorCouples(model, f);
}

/**
 * The H × W grid a model's pair factors suggest when its variables are numbered row by row (UAI
 * grid files, models written from the lattice builders): W the most frequent index step past 1 among
 * the pair factors that divides n, when steps of 1 and of W are frequent enough to be its bonds.
 * latticeTreewidth then checks every bond; this only proposes the shape.
 */
function rowMajorGrid(model: Model): [number, number] | null {
  const n = model.n, start = model.scopeStart, vars = model.scopeVars;
  // Steps of 1 are (W − 1)·H = n − H ≥ n / 2 of a grid's bonds: fewer and no grid is row-major (a
  // sequential pass: the steps' histogram below writes all over n counts, 0.035 s on 10⁶ shuffled sites).
  let ones = 0;
  const F = model.nFactors; // read once: the getter in the loops' tests cost 0.014 s on 3·10⁶ factors
  for (let f = 0; f < F; f++) if (start[f + 1] - start[f] === 2 && vars[start[f] + 1] - vars[start[f]] === 1) ones++;
  if (ones < n / 2) return null;
  const steps = new Int32Array(n);
  for (let f = 0; f < F; f++) if (start[f + 1] - start[f] === 2) steps[vars[start[f] + 1] - vars[start[f]]]++;
  let W = 0;
  for (let d = 2; d < n; d++) if (n % d === 0 && (W === 0 || steps[d] > steps[W])) W = d;
  if (W === 0) return null;
  const H = n / W;
  return H >= 2 && steps[1] >= (W - 1) * H && steps[W] >= W * (H - 1) ? [H, W] : null;
}

/**
 * The grid a model's pair factors form under any numbering of its variables (a grid file
 * renumbered, or numbered column by column or along a snake): the H × W shape, when the graph of its
 * pair factors (each pair once) is exactly an H × W grid with H, W ≥ 3 — extra pairs or a missing
 * bond and it is not recognised (ladders, of treewidth 2, are never refused by a bound). From a
 * corner c₀ (two pairs) its two boundary paths give row 0 and column 0 (on a grid the boundary's
 * variables are those in at most three pairs, so each step has one way on); then site (r, c) is the
 * partner of (r − 1, c) that is none of its placed neighbours, its bond to (r, c − 1) checked. Each
 * step found a bond among the pairs, and the places are distinct: as many pairs as the grid has
 * bonds then makes the graph that grid. One pass over the factors here (which pairs couple), the
 * lists and the walk in the engine (gridStart, gridRows); most graphs that are no grid leave before the walk
 * (a variable in fewer than two pairs or more than four, or not four corners).
 */
export function gridUnderAnyNumbering(model: Model): { treewidth: number; sides: [number, number]; shape: [number, number]; unaryZeros: boolean } | null {
  const n = model.n, start = model.scopeStart, vars = model.scopeVars, { tableStart, tables, card } = model;
  // Zeros are looked for only where the model's tables may have one.
  let unaryZeros = false;
  const zeroFree = knownWithoutZeroEntries(model), couples = pairsKnownToCouple(model) ? null : pairCoupling(model);
  // The coupling pairs go to the engine in chunks (assembly/exact/exact_gridfind.ts keeps each
  // variable's partners and walks the grid there).
  const engine = plannerEngine(), arena = engine.arena(), k = engine.kernels;
  try {
    engine.call('grid recognition', () => k.gridBegin(n));
    const ptr = arena.alloc(8 * GRID_CHUNK, false), chunk = arena.i32(ptr, 2 * GRID_CHUNK);
    let m = 0;
    for (let f = 0, F = model.nFactors; f < F; f++) {
      const p = start[f], arity = start[f + 1] - p;
      if (arity === 2) {
        // A pair that couples nothing is no edge (exactModel splits it, its zeros into unary ones).
        if (couples && !couples(f)) {
          if (!unaryZeros && !zeroFree && splitsToZero(model, f)) unaryZeros = true;
          continue;
        }
        chunk[2 * m] = vars[p];
        chunk[2 * m + 1] = vars[p + 1];
        if (++m === GRID_CHUNK) {
          if (engine.call('grid recognition', () => k.gridAddPairs(ptr, GRID_CHUNK)) !== 0) return null;
          m = 0;
        }
      } else if (zeroFree || unaryZeros) continue;
      else if (arity === 1) for (let e = tableStart[f], end = e + card[vars[p]]; e < end; e++) unaryZeros ||= tables[e] === -Infinity;
      else if (couples && splitsToZero(model, f)) unaryZeros = true;
    }
    if (engine.call('grid recognition', () => k.gridAddPairs(ptr, m)) !== 0) return null;
    const W = engine.call('grid recognition', () => k.gridStart()), H = W > 0 ? n / W : 0;
    if (W === 0) return null;
    for (let r = 1; r < H; r += GRID_ROWS) if (engine.call('grid recognition', () => k.gridRows(r, Math.min(H, r + GRID_ROWS))) === 0) return null;
    const sides: [number, number] = [Math.max(H, W), Math.min(H, W)];
    return { treewidth: sides[1], sides, shape: [H, W], unaryZeros };
  } finally {
    k.gridEnd();
    arena.dispose();
  }
}

/** Coupling pairs handed to the engine per call (64 KiB of them). */
const GRID_CHUNK = 8192;
/** Rows the engine places per call: in calls, most run its optimised code (see gridRows). */
const GRID_ROWS = 16;
