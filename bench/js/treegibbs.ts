// Plain-JavaScript reference of the free-bit tree-block Gibbs sweep (assembly/samplers/treegibbs.ts,
// binarySweeps; the loop each lane of treegibbs_lanes.ts runs), for bench/particles.ts: the same
// outside fields, log-odds messages log((e^{−λ} + e^w)/(e^{−λ} + 1)), draws x_v | x_p and energy
// change, one Philox4x32-10 word per variable (PhiloxJS). Math.exp / Math.log are V8's, which can
// differ from AssemblyScript's in the last ulp, so its chains are the kernel's only in distribution.

import type { CanonicalForm } from '../../bindings/core/canonical.ts';
import type { TreePartition } from '../../bindings/samplers/treeblocks.ts';
import type { PhiloxJS } from './gibbs.ts';

const usable = (x: number) => x > 0 && x < Infinity;
const softplus = (x: number) => Math.max(x, 0) + Math.log1p(Math.exp(-Math.abs(x)));

export class TreeGibbsJS {
  readonly s: Uint8Array;
  private readonly order: Int32Array;
  private readonly blockPtr: Int32Array;
  private readonly coup: Float64Array;
  private readonly expCoup: Float64Array;
  private readonly lam: Float64Array;
  private readonly en: Float64Array;
  private readonly uo: Float64Array;

  constructor(readonly form: CanonicalForm, readonly partition: TreePartition) {
    if (form.oneHot.some((x) => x)) throw new Error('free-bit forms only');
    const n = form.n;
    this.s = new Uint8Array(n);
    this.blockPtr = new Int32Array(partition.blocks.length + 1);
    this.order = new Int32Array(n);
    partition.blocks.forEach((b, i) => {
      this.order.set(b, this.blockPtr[i]);
      this.blockPtr[i + 1] = this.blockPtr[i] + b.length;
    });
    this.coup = new Float64Array(n);
    this.expCoup = new Float64Array(n);
    for (let v = 0; v < n; v++) {
      const p = partition.parent[v];
      if (p < 0) continue;
      for (let k = form.rowPtr[v]; k < form.rowPtr[v + 1]; k++) if (form.col[k] === p) this.coup[v] = form.val[k];
      this.expCoup[v] = Math.exp(this.coup[v]);
    }
    this.lam = new Float64Array(n);
    this.en = new Float64Array(n);
    this.uo = new Float64Array(n);
  }

  init(r: PhiloxJS): void {
    for (let v = 0; v < this.form.n; v++) this.s[v] = r.uniform32() < 0.5 ? 1 : 0;
  }

  /** `sweeps` passes over the blocks; returns the change of aᵀs + ½ sᵀWs. */
  sweeps(r: PhiloxJS, sweeps: number): number {
    const { a, rowPtr, col, val } = this.form;
    const { s, order, blockPtr, coup, expCoup, lam, en, uo } = this;
    const parent = this.partition.parent;
    let de = 0;
    for (let sw = 0; sw < sweeps; sw++) {
      for (let tb = 0; tb + 1 < blockPtr.length; tb++) {
        const lo = blockPtr[tb], hi = blockPtr[tb + 1];
        for (let i = lo; i < hi; i++) s[order[i]] <<= 7;
        for (let i = lo; i < hi; i++) {
          const v = order[i];
          let u = a[v];
          for (let k = rowPtr[v]; k < rowPtr[v + 1]; k++) if (s[col[k]] & 1) u += val[k];
          lam[v] = u;
          uo[v] = u;
        }
        for (let i = hi - 1; i >= lo; i--) {
          const v = order[i];
          const lv = lam[v];
          const e = Math.exp(-lv);
          en[v] = e;
          const p = parent[v];
          if (p < 0) continue;
          const ew = expCoup[v];
          lam[p] += usable(e) && usable(ew) ? Math.log((e + ew) / (e + 1)) : softplus(lv + coup[v]) - softplus(lv);
        }
        for (let i = lo; i < hi; i++) {
          const v = order[i];
          const p = parent[v];
          const e = en[v];
          let prob: number;
          if (p < 0 || !(s[p] & 1)) prob = 1 / (1 + e);
          else prob = usable(e) && usable(expCoup[v]) ? 1 / (1 + e / expCoup[v]) : 1 / (1 + Math.exp(-(lam[v] + coup[v])));
          s[v] = (s[v] & 0x80) | (r.uniform32() < prob ? 1 : 0);
        }
        for (let i = hi - 1; i >= lo; i--) {
          const v = order[i];
          const x1 = s[v] & 1, x0 = s[v] >> 7;
          if (x1 !== x0) de += (x1 - x0) * uo[v];
          const p = parent[v];
          if (p >= 0) {
            const d = (x1 & s[p] & 1) - (x0 & (s[p] >> 7));
            if (d) de += d * coup[v];
          }
          s[v] = x1;
        }
      }
    }
    return de;
  }
}
