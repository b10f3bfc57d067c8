// Plain-JavaScript reference of the sequential Gibbs sweep on the factor graph
// (assembly/samplers/factorgibbs.ts), for bench/factor-gibbs.ts: the same algorithm, sums in the
// same order, one Philox4x32-10 word per draw (see bench/native/factorgibbs.c). exp is V8's
// Math.exp, which can differ from AssemblyScript's in the last ulp; the bench checks agreement.

import type { Model } from '../../bindings/core/model.ts';
import { PhiloxJS } from './gibbs.ts';

export class FactorGibbsJS {
  readonly x: Int32Array;
  readonly acc: Float64Array;
  private readonly stride: Int32Array;
  private readonly incStart: Int32Array;
  private readonly incFactor: Int32Array;
  private readonly incStride: Int32Array;
  private readonly w: Float64Array;

  constructor(readonly model: Model) {
    const { n, card, scopeStart, scopeVars } = model;
    const F = model.nFactors, S = scopeVars.length;
    this.stride = new Int32Array(S);
    for (let f = 0; f < F; f++) for (let p = scopeStart[f + 1] - 1, s = 1; p >= scopeStart[f]; p--) {
      this.stride[p] = s;
      s *= card[scopeVars[p]];
    }
    this.incStart = new Int32Array(n + 1);
    for (let p = 0; p < S; p++) this.incStart[scopeVars[p] + 1]++;
    for (let v = 0; v < n; v++) this.incStart[v + 1] += this.incStart[v];
    this.incFactor = new Int32Array(S);
    this.incStride = new Int32Array(S);
    const fill = this.incStart.slice(0, n);
    for (let f = 0; f < F; f++) for (let p = scopeStart[f]; p < scopeStart[f + 1]; p++) {
      const q = fill[scopeVars[p]]++;
      this.incFactor[q] = f;
      this.incStride[q] = this.stride[p];
    }
    this.x = new Int32Array(n);
    this.acc = new Float64Array(card.reduce((s, k) => s + k, 0));
    this.w = new Float64Array(Math.max(...card));
  }

  init(r: PhiloxJS): void {
    const { card } = this.model;
    for (let v = 0; v < this.model.n; v++) this.x[v] = card[v] === 1 ? 0 : Math.min(Math.floor(r.uniform32() * card[v]), card[v] - 1);
  }

  private entry(f: number): number {
    const { scopeStart, scopeVars, tableStart } = this.model;
    let idx = tableStart[f];
    for (let p = scopeStart[f]; p < scopeStart[f + 1]; p++) idx += this.x[scopeVars[p]] * this.stride[p];
    return idx;
  }

  /** `count` sweeps, accumulating when `accumulate`; returns the number of changed states. */
  sweeps(r: PhiloxJS, count: number, accumulate: boolean): number {
    const { card, tables, n } = this.model;
    const { x, w, acc, incStart, incFactor, incStride } = this;
    let changed = 0;
    for (let t = 0; t < count; t++) {
      let row = 0;
      for (let v = 0; v < n; v++) {
        const K = card[v];
        if (K === 1) {
          if (accumulate) acc[row] += 1;
          row++;
          continue;
        }
        w.fill(0, 0, K);
        const xv = x[v];
        for (let q = incStart[v]; q < incStart[v + 1]; q++) {
          const s = incStride[q], at = this.entry(incFactor[q]) - xv * s;
          for (let k = 0; k < K; k++) w[k] += tables[at + k * s];
        }
        let top = -Infinity;
        for (let k = 0; k < K; k++) top = Math.max(top, w[k]);
        const lost = top === -Infinity;
        let total = 0;
        for (let k = 0; k < K; k++) {
          w[k] = lost ? 1 : Math.exp(w[k] - top);
          total += w[k];
        }
        const target = r.uniform32() * total;
        let cum = 0, below = 0;
        for (let k = 0; k < K; k++) {
          cum += w[k];
          if (!(target < cum)) below++;
        }
        let pick = Math.min(below, K - 1);
        while (w[pick] === 0) pick--;
        if (pick !== xv) changed++;
        x[v] = pick;
        if (accumulate) {
          const inv = 1 / total;
          for (let k = 0; k < K; k++) acc[row + k] += w[k] * inv;
        }
        row += K;
      }
    }
    return changed;
  }
}
