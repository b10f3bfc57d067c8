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

/** Per model object (models are immutable): a sampled result on a 10^6-variable lattice paid 0.23 s each time. */
const known = new WeakMap<Model, number>();

function symmetryOf(model: Model): number {
  const n = model.n;
  if (n === 0) return 0;
  const K = model.card[0];
  if (K < 2) return 0;
  for (let v = 1; v < n; v++) if (model.card[v] !== K) return 0;
  const shift = (s: number): number => (s + 1) % K, swap = (s: number): number => (s < 2 ? 1 - s : s);
  // Single-variable factors first: a field breaks the symmetry there, before any pair table is read.
  const factors = Array.from({ length: model.nFactors }, (_, f) => f);
  const order = [...factors.filter((f) => model.arity(f) <= 1), ...factors.filter((f) => model.arity(f) > 1)];
  for (const f of order) {
    const t0 = model.tableStart[f], size = model.tableSize(f), arity = model.arity(f), tables = model.tables;
    for (const perm of [shift, swap]) {
      for (let idx = 0; idx < size; idx++) {
        // The permuted configuration's index: digits last-variable-fastest, as Model.entryIndex.
        let rest = idx, image = 0, place = 1;
        for (let p = 0; p < arity; p++, place *= K) {
          image += perm(rest % K) * place;
          rest = Math.floor(rest / K);
        }
        if (!Object.is(tables[t0 + image], tables[t0 + idx])) return 0;
      }
    }
  }
  return K;
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
  // The marginals first (n·K work); the tables (a 10^6-variable lattice's take 0.23 s) only when those are far from 1/K.
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

/** The result with the symmetry warning added (once). */
export function withSymmetryCheck<R extends Pick<InferenceResult, 'marginals' | 'marginalStdErr' | 'warnings'>>(model: Model, result: R): R {
  const w = symmetryWarning(model, result);
  if (w === null || result.warnings?.includes(w)) return result;
  return { ...result, warnings: [...(result.warnings ?? []), w] };
}
