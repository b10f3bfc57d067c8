// A check that sees chains which never crossed between a symmetric model's mirror-image modes.
// Zero-field Ising and Potts models, and colourings, are unchanged by permuting every variable's
// states together, so every marginal is exactly 1/K; chains that all settle in one of the model's
// K mirror-image modes report marginals hundreds of standard errors from 1/K, and R̂ and the spread
// of the chain means see nothing when they agree (4 chains share one mode of a zero-field
// ferromagnet 1 time in 8: gibbs 0.998 ± 0.00006 against 0.5, silently).
import type { Model } from './model.ts';
import type { InferenceResult } from './result.ts';

/**
 * K when every variable has K ≥ 2 states and every factor table is unchanged by applying any one
 * permutation of the K states to all its variables at once (checked on the cyclic shift and on
 * swapping states 0 and 1, which generate all permutations); 0 otherwise (a field, evidence, a
 * variable of another cardinality). Stops at the first table that differs.
 */
export function stateSymmetry(model: Model): number {
  let K = known.get(model);
  if (K === undefined) known.set(model, (K = symmetryOf(model)));
  return K;
}

/** Per model object (models are immutable): a sampled result on a 10^6-variable lattice paid the check (then 0.23 s) each time. */
const known = new WeakMap<Model, number>();

function symmetryOf(model: Model): number {
  const n = model.n;
  if (n === 0) return 0;
  const K = model.card[0];
  if (K < 2) return 0;
  for (let v = 1; v < n; v++) if (model.card[v] !== K) return 0;
  // Single-variable factors first: a field breaks the symmetry there, before any pair table is read.
  const images = new Map<number, Int32Array[]>(); // per arity: each permutation's image of every entry index
  // Per arity, the tables already checked: factors share tables (a uniform lattice has one for all its bonds).
  const checked = new Map<number, Set<number>>();
  for (const unaryPass of [true, false]) {
    for (let f = 0; f < model.nFactors; f++) {
      const arity = model.arity(f);
      if ((arity <= 1) !== unaryPass) continue;
      const t0 = model.tableStart[f], tables = model.tables, size = K ** arity;
      let seen = checked.get(arity);
      if (!seen) checked.set(arity, (seen = new Set()));
      if (seen.has(t0)) continue;
      seen.add(t0);
      if (size > INDEX_TABLE_LIMIT) {
        for (const perm of PERMUTATIONS) {
          for (let idx = 0; idx < size; idx++) if (!Object.is(tables[t0 + permutedIndex(idx, K, arity, perm)], tables[t0 + idx])) return 0;
        }
        continue;
      }
      let perms = images.get(arity);
      if (!perms) images.set(arity, (perms = PERMUTATIONS.map((perm) => Int32Array.from({ length: size }, (_, idx) => permutedIndex(idx, K, arity, perm)))));
      for (const image of perms) {
        for (let idx = 0; idx < size; idx++) if (!Object.is(tables[t0 + image[idx]], tables[t0 + idx])) return 0;
      }
    }
  }
  return K;
}

/** Tables of at most this many entries have their permuted indices computed once per arity. */
const INDEX_TABLE_LIMIT = 1 << 16;

/** The cyclic shift of the K states and the swap of states 0 and 1 (they generate all permutations). */
const PERMUTATIONS = [(s: number, K: number): number => (s + 1) % K, (s: number): number => (s < 2 ? 1 - s : s)];

/** The index of table entry idx's configuration with perm applied to every digit (last variable fastest, as Model.entryIndex). */
function permutedIndex(idx: number, K: number, arity: number, perm: (s: number, K: number) => number): number {
  let rest = idx, image = 0, place = 1;
  for (let p = 0; p < arity; p++, place *= K) {
    image += perm(rest % K, K) * place;
    rest = Math.floor(rest / K);
  }
  return image;
}

/**
 * The K images of configuration x under cyclically shifting every variable's states together
 * (x itself first): on a model of stateSymmetry K they all have x's probability, and each lies in a
 * different one of a ferromagnet's K mirror-image modes. Chib's and Zhang's estimators use image
 * t mod K at sample t.
 */
export function mirrorImages(x: ArrayLike<number>, K: number): Int32Array[] {
  return Array.from({ length: K }, (_, j) => Int32Array.from(x, (k) => (k + j) % K));
}

/** How far (median over variables, in standard errors) a symmetric model's marginals are from 1/K past which the chains did not cross between its modes. */
export const SYMMETRY_LIMIT = 3;

/**
 * The warning for a sampled result on a state-symmetric model whose marginals sit, in the median
 * over variables, more than SYMMETRY_LIMIT standard errors from 1/K (per variable its largest
 * deviation over states; a zero standard error counts as infinitely many unless the marginal is 1/K);
 * null when the model is not symmetric, the result has no standard errors, or the marginals agree.
 */
export function symmetryWarning(model: Model, result: Pick<InferenceResult, 'marginals' | 'marginalStdErr'>): string | null {
  const se = result.marginalStdErr;
  if (!se || !result.marginals || model.n === 0) return null;
  // The marginals first (n·K work); the tables (0.1 s on a 10^6-variable lattice, its shared bond table read once) only when those are far from 1/K.
  const K = model.card[0];
  if (K < 2 || model.card.some((k) => k !== K)) return null;
  const z = Float64Array.from(result.marginals, (p, v) => {
    let worst = 0;
    for (let k = 0; k < K; k++) {
      const d = Math.abs(p[k] - 1 / K), s = se[v][k];
      worst = Math.max(worst, s > 0 ? d / s : d > 1e-12 ? Infinity : 0);
    }
    return worst;
  }).sort();
  const median = z[(z.length - 1) >> 1];
  if (!(median > SYMMETRY_LIMIT) || stateSymmetry(model) === 0) return null;
  const far = Number.isFinite(median) ? `a median ${median.toPrecision(3)} standard errors` : 'more standard errors than can be counted';
  return `the model is unchanged by permuting every variable's states together (no field), so every marginal is exactly 1/${K}, but the chains' marginals are ${far} from it: the chains did not cross between the model's mirror-image modes and the standard errors do not cover that (a log Z estimate from these chains can be low by up to ln ${K}); try more chains, cluster moves (sw, wolff) or parallel tempering`;
}
