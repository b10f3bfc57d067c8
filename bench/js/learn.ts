// Plain-JavaScript reference of one PCD epoch (bindings/learn/learn.ts with sequential Gibbs
// particles), for bench/learn.ts: the SAME algorithm as the WASM kernels in assembly/learn/stats.ts —
// the canonical CSR form over the architecture, statistics x_p (visible bits, hidden units at σ(u_p))
// summed into a per-bit array and a per-stored-entry array, particles advanced by systematic-scan
// Gibbs with Philox uniforms, then θ ← θ + η (pos/B − neg/P). Sample by sample (the WASM kernel
// takes eight samples per pass over W); no momentum or decay (the bench uses neither).

import type { CanonicalForm } from '../../bindings/core/canonical.ts';
import { PhiloxJS } from './gibbs.ts';

const sigmoid = (u: number) => 1 / (1 + Math.exp(-u));

function localField(f: CanonicalForm, s: Uint8Array, off: number, p: number): number {
  let u = f.a[p];
  for (let k = f.rowPtr[p]; k < f.rowPtr[p + 1]; k++) if (s[off + f.col[k]]) u += f.val[k];
  return u;
}

/** Adds the statistics of `rows` samples (bits at s[off(i)…]) into statA and statW. */
function accumulate(f: CanonicalForm, nV: number, s: Uint8Array, offsets: number[], statA: Float64Array, statW: Float64Array, x: Float64Array): void {
  const n = f.nBits;
  for (const off of offsets) {
    for (let p = 0; p < nV; p++) x[p] = s[off + p];
    for (let p = nV; p < n; p++) x[p] = sigmoid(localField(f, s, off, p));
    for (let p = 0; p < n; p++) {
      const xp = x[p];
      if (xp === 0) continue;
      statA[p] += xp;
      for (let k = f.rowPtr[p]; k < f.rowPtr[p + 1]; k++) statW[k] += xp * x[f.col[k]];
    }
  }
}

/**
 * One PCD epoch on `form` (a and val updated in place): `data` rows of nV bits, minibatches of `batch` rows in
 * order, `particles` persistent chains (bits, one Philox stream each), `sweeps` Gibbs sweeps per update.
 */
export function pcdEpochJS(form: CanonicalForm, nV: number, data: Uint8Array, rows: number, batch: number, chains: Uint8Array, rngs: PhiloxJS[], sweeps: number, rate: number): void {
  const n = form.nBits, nnz = form.val.length, P = rngs.length;
  const posA = new Float64Array(n), negA = new Float64Array(n), posW = new Float64Array(nnz), negW = new Float64Array(nnz), x = new Float64Array(n);
  const dataRow = new Uint8Array(n);
  for (let lo = 0; lo < rows; lo += batch) {
    const cnt = Math.min(batch, rows - lo);
    // Positive phase: the data rows (hidden units summed into x as σ(u)).
    for (let r = lo; r < lo + cnt; r++) {
      dataRow.set(data.subarray(r * nV, (r + 1) * nV));
      accumulate(form, nV, dataRow, [0], posA, posW, x);
    }
    // Negative phase: sweeps on every particle, then their statistics.
    for (let c = 0; c < P; c++) {
      const off = c * n, rng = rngs[c];
      for (let t = 0; t < sweeps; t++) {
        for (let p = 0; p < n; p++) chains[off + p] = rng.uniform32() < sigmoid(localField(form, chains, off, p)) ? 1 : 0;
      }
    }
    accumulate(form, nV, chains, Array.from({ length: P }, (_, c) => c * n), negA, negW, x);
    for (let p = 0; p < n; p++) {
      form.a[p] += rate * (posA[p] / cnt - negA[p] / P);
      posA[p] = negA[p] = 0;
    }
    for (let k = 0; k < nnz; k++) {
      form.val[k] += rate * (posW[k] / cnt - negW[k] / P);
      posW[k] = negW[k] = 0;
    }
  }
}
