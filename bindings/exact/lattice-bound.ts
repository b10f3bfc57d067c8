// A refusal that needs no elimination order: a model laid out on a lattice (the lattice builders'
// `Model.lattice`) whose factors hold every bond of its open lattice contains that lattice's grid,
// and a d₁ × d₂ grid has treewidth min(d₁, d₂) (its d × d subgrid is a grid minor); a lattice of
// three sides contains the grid of its two longest (a slab). Every elimination order then has a
// clique of more than that many variables, so its sizes bound every plan from below — slicing
// included, which multiplies the slices' cliques back to at least as much work. The greedy
// orderings took 2.75 s to refuse a 1000×1000 lattice (min-degree 2.2 s of it); this takes a pass
// over the factors. Cheap treewidth lower bounds (degeneracy, minor-min-width) cannot see it: they
// are at most 5 on planar graphs.
import type { Model } from '../core/model.ts';
import { fixedStates, noneFixed } from './enumeration.ts';
import { fmtBytes, fmtEntries } from './outcome.ts';

/** Lattices of fewer sites are left to the orderings: they refuse them within ≈ 0.04 s and name the order they found. */
export const LATTICE_BOUND_MIN_SITES = 10_000;

/**
 * A lower bound on the treewidth, the one the lattice's grid forces (the true treewidth of a 3-D
 * lattice is far larger: 40×40×40 gets 40, the orderings find ≈ 1220), with the grid's sides (null when the model has no
 * lattice of two or more sides, or lacks a bond), and whether a unary factor has a zero entry
 * (which may fix a variable: found in the same pass over the factors).
 */
export function latticeTreewidth(model: Model, shape: readonly number[] | undefined = model.lattice?.shape): { treewidth: number; sides: [number, number]; unaryZeros: boolean } | null {
  if (!shape || shape.length < 2) return null;
  const k = shape.length, n = model.n;
  const stride = new Array<number>(k);
  for (let a = k - 1, s = 1; a >= 0; a--) (stride[a] = s), (s *= shape[a]);
  // Every open bond (u, u + stride_a) with u's coordinate on axis a below its last, held by some factor.
  const held = new Uint8Array(n * k);
  let bonds = 0;
  const start = model.scopeStart, vars = model.scopeVars; // read flat: scope() per factor cost 87 ms on 10⁶ sites
  const { tableStart, tables, card } = model;
  let unaryZeros = false;
  for (let f = 0; f < model.nFactors; f++) {
    const p = start[f];
    if (start[f + 1] - p === 1 && !unaryZeros) {
      for (let e = tableStart[f], end = e + card[vars[p]]; e < end; e++) if (tables[e] === -Infinity) unaryZeros = true;
    }
    if (start[f + 1] - p !== 2) continue;
    const u = vars[p], d = vars[p + 1] - u;
    for (let a = 0; a < k; a++) {
      if (d !== stride[a] || Math.floor(u / stride[a]) % shape[a] === shape[a] - 1) continue;
      if (!held[u * k + a]) (held[u * k + a] = 1), bonds++;
      break;
    }
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
  const shape = model.lattice?.shape ?? rowMajorGrid(model);
  const grid = shape ? latticeTreewidth(model, shape) : null;
  if (!grid || !shape) return null;
  // Σ log₂ K_v and the least K_v (log₂ taken when K changes: 10⁶ calls cost more than the rest).
  let bitsPerVar = Infinity, allBits = 0, lastK = -1, lastBits = 0;
  for (let v = 0; v < model.n; v++) {
    const K = model.card[v];
    if (K !== lastK) (lastK = K), (lastBits = Math.log2(K)), (bitsPerVar = Math.min(bitsPerVar, lastBits));
    allBits += lastBits;
  }
  const tw = grid.treewidth, workBits = (tw + 1) * bitsPerVar, messageBits = tw * bitsPerVar;
  // auto's junction tree stores cliques: refused past maxTableEntries.
  if (!(workBits > Math.log2(maxFlops)) || (auto && !(workBits > Math.log2(auto.maxTableEntries)))) return null;
  if (enumerationLimit !== undefined && !(allBits > Math.log2(enumerationLimit))) return null;
  // Fixed (observed) variables come from unary zeros: which are fixed is asked only when there is one.
  if (grid.unaryZeros && !noneFixed(fixedStates(model).fixed)) return null;
  const pow = (bits: number): string => (bits < 1000 ? fmtEntries(2 ** bits) : `2^${Math.round(bits)}`);
  const bytes = messageBits + 3 < 1000 ? fmtBytes(2 ** (messageBits + 3)) : `2^${Math.round(messageBits + 3)} bytes`;
  const slab = shape.length > 2 ? `, whose ${grid.sides[0]}×${grid.sides[1]} slab alone has treewidth ${tw}` : `, a grid of treewidth ${tw}`;
  const holds = model.lattice ? `the model holds every bond of its ${shape.join('×')} lattice${slab}` : `the model's pair factors hold every bond of a ${shape.join('×')} grid over its variables in row-major order${slab}`;
  return (
    `exact elimination needs treewidth at least ${tw} under any elimination order (${holds}): ` +
    `unsliced a largest message of at least ${pow(messageBits)} entries (${bytes} of WASM memory), and sliced or not at least ${pow(workBits)} clique configurations streamed; ` +
    `the limit is ${fmtEntries(maxFlops)} configurations streamed in all slices (slicing cannot bring the work below the largest clique)` +
    (enumerationLimit !== undefined ? `; enumeration would visit ${pow(allBits)} configurations, past the limit of ${fmtEntries(enumerationLimit)}` : '')
  );
}

/**
 * The H × W grid a model's pair factors suggest when its variables are numbered row by row (UAI
 * grid files, models written from the lattice builders): W the most frequent index step past 1 among
 * the pair factors that divides n, when steps of 1 and of W are frequent enough to be its bonds.
 * latticeTreewidth then checks every bond; this only proposes the shape.
 */
function rowMajorGrid(model: Model): [number, number] | null {
  const n = model.n, start = model.scopeStart, vars = model.scopeVars;
  const steps = new Int32Array(n);
  for (let f = 0; f < model.nFactors; f++) if (start[f + 1] - start[f] === 2) steps[vars[start[f] + 1] - vars[start[f]]]++;
  let W = 0;
  for (let d = 2; d < n; d++) if (n % d === 0 && (W === 0 || steps[d] > steps[W])) W = d;
  if (W === 0) return null;
  const H = n / W;
  return H >= 2 && steps[1] >= (W - 1) * H && steps[W] >= W * (H - 1) ? [H, W] : null;
}
