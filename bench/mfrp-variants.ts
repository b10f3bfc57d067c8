// Hsu, Achim & Ermon's Figure 2 read literally: `npm run bench:mfrp -- --variants` (BENCH_QUICK=1:
// fewer sizes). Writes bench/results/mfrp-variants.json (quick: mfrp-variants-quick.json).
//
// Why does the paper's MFRP gain (hundreds of orders of magnitude over mean field on n×n mixed grids)
// not reproduce? Each reading of the paper that differs from ours is a switch:
//   field   'unary' (ours: Σ f_i x_i) or 'edge' (as printed: ψ_ij = exp(w x_i x_j + f_i x_i + f_j x_j),
//           so site i's field is f_i · deg(i));
//   pivots  'non-adjacent' (ours) or 'leftmost' (the paper's C = [I | A′]);
//   update  'per-coordinate' (ours: exact coordinate ascent) or 'per-sweep' (Algorithm 1's
//           "update constrained marginals" loop after the sweep over the free marginals);
// and the paper's own budget: J = 10 restarts, T = 5, m ∈ [0, 20], log ratios to MF in decimal
// orders of magnitude (log10) beside nats.
// Second part: MFRP above exact log Z on small models (n ≤ 16), per variant: how far, how often
// beyond Theorem 1's log 4, and the same estimator with the exact projected Z(A, b) in place of
// each trial's γ (same seeds, so the same A, b): if that "oracle" exceeds log Z as far, the excess is
// the estimator's (the maximum over m of medians of 2^m Z(A, b)), not the variational part. Every
// trial's γ is also checked against its exact Z(A, b) (γ > Z(A, b) would be a bug).

import type { Engine } from '../bindings/core/engine.ts';
import { isingLattice, latticeBonds } from '../bindings/core/builders.ts';
import type { Model } from '../bindings/core/model.ts';
import { exactInference } from '../bindings/exact/exact.ts';
import { runMeanField } from '../bindings/variational/meanfield.ts';
import { runMFRPDetailed, MFRPSolver, logMedian, type MFRPVariant } from '../bindings/variational/mfrp.ts';
import { mulberry32, randomModel } from '../test/helpers.ts';

/** How the grid's fields enter: unary f_i x_i, or inside every edge potential (f_i · deg(i)). */
export type FieldRule = 'unary' | 'edge';

/**
 * Hsu §5.1 mixed grid (side × side, or rows × cols): w ~ U[−10,10] per bond, f ~ U[−1,1] per site
 * (the same draws for both field rules).
 */
export function hsuGrid(side: number | [number, number], seed: number, field: FieldRule = 'unary'): Model {
  const shape: [number, number] = typeof side === 'number' ? [side, side] : side;
  const n = shape[0] * shape[1];
  const rnd = mulberry32(seed);
  const f = Float64Array.from({ length: n }, () => 2 * rnd() - 1);
  const w = new Map<string, number>();
  const bonds = latticeBonds(shape, false);
  for (const [i, j] of bonds) w.set(`${i},${j}`, 20 * rnd() - 10);
  if (field === 'edge') {
    const deg = new Int32Array(n);
    for (const [i, j] of bonds) {
      deg[i]++;
      deg[j]++;
    }
    for (let i = 0; i < f.length; i++) f[i] *= deg[i];
  }
  return isingLattice({ shape, J: (i, j) => w.get(`${i},${j}`)!, h: f });
}

/** One reading of the paper. */
export interface Reading {
  name: string;
  field: FieldRule;
  variant: MFRPVariant;
}

export const READINGS: Reading[] = [
  { name: 'ours', field: 'unary', variant: {} },
  { name: 'edge field', field: 'edge', variant: {} },
  { name: 'leftmost pivots', field: 'unary', variant: { pivots: 'leftmost' } },
  { name: 'per-sweep update', field: 'unary', variant: { constrainedUpdate: 'per-sweep' } },
  { name: 'all three (as printed)', field: 'edge', variant: { pivots: 'leftmost', constrainedUpdate: 'per-sweep' } },
];

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const stderr = (xs: number[]): number => (xs.length < 2 ? 0 : Math.sqrt(xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0) / (xs.length - 1) / xs.length));
const fmt = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : String(x));

export interface VariantConfig {
  sizes: number[];
  grids: number;
  restarts: number;
  trials: number;
  maxConstraints: number;
  seed: number;
  smallModels: number;
}

/** Figure 2 per reading: exact, MF, MF with MFRP's whole budget of restarts, MFRP; per grid and per size. */
export function figure2Variants(engine: Engine, cfg: VariantConfig, violations: string[]) {
  const rows = [];
  const budget = (cfg.maxConstraints + 1) * cfg.trials * cfg.restarts;
  const exactCache = new Map<string, number>();
  for (const rd of READINGS) {
    for (const side of cfg.sizes) {
      const grids: { seed: number; exact: number; mf: number; mfBudget: number; mfrp: number; bestM: number; seconds: number }[] = [];
      for (let g = 0; g < cfg.grids; g++) {
        const seed = cfg.seed + 1000 * side + g; // the same grids as bench/mfrp.ts's experiment
        const model = hsuGrid(side, seed, rd.field);
        const key = `${rd.field}:${seed}`;
        if (!exactCache.has(key)) exactCache.set(key, exactInference(engine, model).logZ!);
        const exact = exactCache.get(key)!;
        const mf = runMeanField(engine, model, { seed, restarts: cfg.restarts }).logZ!;
        const mfBudget = runMeanField(engine, model, { seed, restarts: budget, budget: Infinity }).logZ!;
        const t = performance.now();
        const rp = runMFRPDetailed(engine, model, { seed, restarts: cfg.restarts, trials: cfg.trials, maxConstraints: cfg.maxConstraints }, rd.variant);
        const seconds = (performance.now() - t) / 1000;
        const mfrp = rp.result.logZ!;
        if (mfrp < mf) violations.push(`${rd.name} ${side}² #${g}: mfrp ${mfrp} < mf ${mf}`);
        if (mf > exact + 1e-9 * Math.abs(exact)) violations.push(`${rd.name} ${side}² #${g}: mf ${mf} > exact ${exact}`);
        grids.push({ seed, exact, mf, mfBudget, mfrp, bestM: rp.result.diagnostics.bestM as number, seconds });
      }
      const d = (f: (r: (typeof grids)[number]) => number) => {
        const xs = grids.map(f);
        return { mean: mean(xs), stderr: stderr(xs), meanLog10: mean(xs) * Math.LOG10E, stderrLog10: stderr(xs) * Math.LOG10E };
      };
      const row = {
        reading: rd.name, field: rd.field, variant: rd.variant, side,
        exact: mean(grids.map((r) => r.exact)), mf: mean(grids.map((r) => r.mf)), mfrp: mean(grids.map((r) => r.mfrp)),
        exactMinusMf: d((r) => r.exact - r.mf), mfrpMinusMf: d((r) => r.mfrp - r.mf), exactMinusMfrp: d((r) => r.exact - r.mfrp),
        mfBudgetMinusMf: d((r) => r.mfBudget - r.mf),
        bestM: grids.map((r) => r.bestM), mfrpSeconds: mean(grids.map((r) => r.seconds)), grids,
      };
      rows.push(row);
      process.stdout.write(`  ${rd.name.padEnd(24)} n = ${String(side).padStart(2)}: exact ${fmt(row.exact)}  MF ${fmt(row.mf)}  MFRP ${fmt(row.mfrp)}  ` +
        `exact − MF ${fmt(row.exactMinusMf.meanLog10)}, MFRP − MF ${fmt(row.mfrpMinusMf.meanLog10)} decimal orders (m* ${row.bestM.join(' ')})\n`);
    }
  }
  return rows;
}

/** log Σ exp over an array. */
function logSumExp(xs: ArrayLike<number>): number {
  let top = -Infinity;
  for (let i = 0; i < xs.length; i++) top = Math.max(top, xs[i]);
  if (top === -Infinity) return -Infinity;
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += Math.exp(xs[i] - top);
  return top + Math.log(s);
}

/** MFRP against exact log Z on small models, with the exact-Z(A,b) oracle of the same projections. */
export function smallModelExcess(engine: Engine, cfg: VariantConfig, violations: string[]) {
  const rand = mulberry32(cfg.seed ^ 0x4c4f47);
  // Hsu grids 3×4 and 4×4 (their field rule follows the reading) and dense random models n = 10…12.
  const models: { name: string; make: (field: FieldRule) => Model }[] = [];
  for (let k = 0; k < cfg.smallModels; k++) {
    const shape: [number, number] = [3 + (k % 2), 4];
    const s = cfg.seed + 77 * k;
    models.push({ name: `hsu ${shape[0]}×${shape[1]} #${k}`, make: (field) => hsuGrid(shape, s, field) });
    const n = 10 + (k % 3);
    const r = randomModel(rand, n, { density: 0.5, scale: 3 });
    models.push({ name: `random n=${n} #${k}`, make: () => r });
  }
  const LOG4 = Math.log(4);
  const out = [];
  for (const rd of READINGS) {
    let maxExcess = -Infinity, maxOracleExcess = -Infinity, beyond = 0, oracleBeyond = 0, gammaAbove = 0, mBeyond = 0, mTotal = 0;
    const perModel = [];
    for (const spec of models) {
      const model = spec.make(rd.field);
      const n = model.n;
      // log p̃ of every configuration (x as the bits of an integer).
      const logp = new Float64Array(2 ** n);
      const x = new Int32Array(n);
      for (let c = 0; c < logp.length; c++) {
        for (let i = 0; i < n; i++) x[i] = (c >> i) & 1;
        logp[c] = model.logPotential(x);
      }
      const exact = logSumExp(logp);
      const seed = 11 + perModel.length;
      const { result, perM } = runMFRPDetailed(engine, model, { seed, restarts: cfg.restarts, trials: cfg.trials, maxConstraints: n }, rd.variant);
      // The oracle: the same A, b (same stream), Z(A, b) by enumeration of the solution set.
      const solver = new MFRPSolver(engine, model, n);
      let oracle = -Infinity;
      for (const p of perM) {
        if (p.m === 0) {
          oracle = Math.max(oracle, exact);
          continue;
        }
        const logZab: number[] = [];
        p.trials.forEach((tr, t) => {
          if (solver.drawProjection(seed, p.m, t) < 0) {
            logZab.push(-Infinity);
            return;
          }
          const P = solver.projection();
          const free = solver.freeVariables();
          const vals = new Float64Array(2 ** free.length);
          for (let mask = 0; mask < vals.length; mask++) {
            let c = 0;
            free.forEach((f, k) => (c |= ((mask >> k) & 1) << f));
            P.pivots.forEach((piv, l) => {
              let v = P.rhs[l];
              for (const f of P.support[l]) v ^= (c >> f) & 1;
              c |= v << piv;
            });
            vals[mask] = logp[c];
          }
          const z = logSumExp(vals);
          logZab.push(z);
          if (tr.logGamma > z + 1e-9 * Math.max(1, Math.abs(z))) gammaAbove++;
        });
        const ob = p.m * Math.LN2 + logMedian(logZab);
        oracle = Math.max(oracle, ob);
        mTotal++;
        if (p.bound > exact + LOG4) mBeyond++;
      }
      solver.dispose();
      const excess = result.logZ! - exact, oracleExcess = oracle - exact;
      maxExcess = Math.max(maxExcess, excess);
      maxOracleExcess = Math.max(maxOracleExcess, oracleExcess);
      if (excess > LOG4) beyond++;
      if (oracleExcess > LOG4) oracleBeyond++;
      perModel.push({ model: spec.name, n, exact, mfrp: result.logZ!, bestM: result.diagnostics.bestM, excess, oracleExcess });
    }
    if (gammaAbove) violations.push(`${rd.name}: ${gammaAbove} trials with γ above their exact Z(A,b)`);
    const row = { reading: rd.name, models: models.length, maxExcess, beyondLog4: beyond, oracleMaxExcess: maxOracleExcess, oracleBeyondLog4: oracleBeyond, perMBeyondLog4: mBeyond, perMRuns: mTotal, gammaAboveZab: gammaAbove, perModel };
    out.push(row);
    process.stdout.write(`  ${rd.name.padEnd(24)} MFRP − log Z ≤ ${fmt(maxExcess, 2)} nats (${beyond}/${models.length} models beyond log 4; single m: ${mBeyond}/${mTotal}); ` +
      `oracle ≤ ${fmt(maxOracleExcess, 2)} (${oracleBeyond} beyond log 4); γ > Z(A,b): ${gammaAbove}\n`);
  }
  return out;
}
