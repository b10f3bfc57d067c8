// Plain-JavaScript reference of the sequential Gibbs sweep (assembly/gibbs.ts), for bench/run.ts.
// The SAME algorithm as the WASM kernel and bench/native/gibbs.c: the canonical CSR form, the
// systematic scan, u = a_i + Σ (s_j ? W_ij : 0) in CSR order, p = 1/(1+exp(−u)), one Philox4x32-10
// word per accept test through uniform32 = (x + 0.5)·2^−32, accept when uniform32 < p, and
// Rao–Blackwellised accumulation of p (one-hot blocks: the softmax exactly as oneHotUpdate).
// exp is V8's Math.exp (an fdlibm port), which can differ from AssemblyScript's table-driven exp in
// the last ulp; the bench measures how often.

import type { CanonicalForm } from '../../bindings/core/canonical.ts';

const M0 = 0xd2511f53;
const M1 = 0xcd9e8d57;
const W0 = 0x9e3779b9;
const W1 = 0xbb67ae85;
const TWO_M32 = 2.3283064365386963e-10; // 2^-32

/** High 32 bits of the 64-bit product of two unsigned 32-bit integers (exact, in doubles). */
function mulhi(a: number, b: number): number {
  const a0 = a & 0xffff, a1 = a >>> 16, b0 = b & 0xffff, b1 = b >>> 16;
  const t = a1 * b0 + ((a0 * b0) >>> 16); // < 2^32 + 2^16: exact
  const w = (t & 0xffff) + a0 * b1; // `& 0xffff` takes t mod 2^16 (ToInt32 keeps the low bits)
  return (a1 * b1 + Math.floor(t / 65536) + Math.floor(w / 65536)) >>> 0;
}

/** One Philox4x32-10 stream: key = seed words, counter words 2–3 = chain id and stream tag. */
export class PhiloxJS {
  key0: number;
  key1: number;
  ctr0 = 0;
  ctr1 = 0;
  ctr2: number;
  ctr3: number;
  readonly out = new Uint32Array(4);
  pos = 4;

  constructor(seedLo: number, seedHi: number, chain: number, tag: number) {
    this.key0 = seedLo >>> 0;
    this.key1 = seedHi >>> 0;
    this.ctr2 = chain >>> 0;
    this.ctr3 = tag >>> 0;
  }

  refill(): void {
    let c0 = this.ctr0, c1 = this.ctr1, c2 = this.ctr2, c3 = this.ctr3, k0 = this.key0, k1 = this.key1;
    for (let i = 0; i < 10; i++) {
      const n0 = (mulhi(M1, c2) ^ c1 ^ k0) >>> 0;
      const n2 = (mulhi(M0, c0) ^ c3 ^ k1) >>> 0;
      const lo1 = Math.imul(M1, c2) >>> 0;
      const lo0 = Math.imul(M0, c0) >>> 0;
      c0 = n0;
      c1 = lo1;
      c2 = n2;
      c3 = lo0;
      k0 = (k0 + W0) >>> 0;
      k1 = (k1 + W1) >>> 0;
    }
    const o = this.out;
    o[0] = c0;
    o[1] = c1;
    o[2] = c2;
    o[3] = c3;
    this.ctr0 = (this.ctr0 + 1) >>> 0;
    if (this.ctr0 === 0) this.ctr1 = (this.ctr1 + 1) >>> 0;
    this.pos = 0;
  }

  uniform32(): number {
    if (this.pos >= 4) this.refill();
    return (this.out[this.pos++] + 0.5) * TWO_M32;
  }
}

export class GibbsJS {
  readonly s: Uint8Array;
  private readonly scratch: Float64Array;
  private readonly allFree: boolean;

  constructor(readonly form: CanonicalForm) {
    this.s = new Uint8Array(form.nBits);
    let maxBlock = 1;
    for (let v = 0; v < form.n; v++) maxBlock = Math.max(maxBlock, form.blockStart[v + 1] - form.blockStart[v]);
    this.scratch = new Float64Array(maxBlock);
    this.allFree = form.oneHot.every((x) => x === 0);
  }

  /** Uniformly random valid start from the stream, as gibbsChainInit. */
  init(r: PhiloxJS): void {
    const { blockStart, oneHot } = this.form;
    const s = this.s;
    s.fill(0);
    for (let v = 0; v < this.form.n; v++) {
      const b = blockStart[v];
      if (oneHot[v]) {
        const K = blockStart[v + 1] - b;
        const k = Math.min(Math.trunc(r.uniform32() * K), K - 1);
        s[b + k] = 1;
      } else {
        s[b] = r.uniform32() < 0.5 ? 1 : 0;
      }
    }
  }

  /** `sweeps` scans; adds conditional probabilities into acc when given. Returns the change count. */
  sweeps(r: PhiloxJS, sweeps: number, acc: Float64Array | null): number {
    return this.allFree ? this.sweepsFree(r, sweeps, acc) : this.sweepsBlocks(r, sweeps, acc);
  }

  private sweepsFree(r: PhiloxJS, sweeps: number, acc: Float64Array | null): number {
    const { a, rowPtr, col, val, nBits: n } = this.form;
    const s = this.s;
    let changed = 0;
    for (let t = 0; t < sweeps; t++) {
      for (let i = 0; i < n; i++) {
        let u = a[i];
        const end = rowPtr[i + 1];
        for (let k = rowPtr[i]; k < end; k++) u += s[col[k]] !== 0 ? val[k] : 0.0;
        const p = 1.0 / (1.0 + Math.exp(-u));
        const bit = r.uniform32() < p ? 1 : 0;
        if (bit !== s[i]) changed++;
        s[i] = bit;
        if (acc) acc[i] += p;
      }
    }
    return changed;
  }

  private field(p: number): number {
    const { a, rowPtr, col, val } = this.form;
    const s = this.s;
    let u = a[p];
    const end = rowPtr[p + 1];
    for (let k = rowPtr[p]; k < end; k++) u += s[col[k]] !== 0 ? val[k] : 0.0;
    return u;
  }

  private sweepsBlocks(r: PhiloxJS, sweeps: number, acc: Float64Array | null): number {
    const { blockStart, oneHot, n } = this.form;
    const s = this.s, scratch = this.scratch;
    let changed = 0;
    for (let t = 0; t < sweeps; t++) {
      for (let v = 0; v < n; v++) {
        const b = blockStart[v];
        if (!oneHot[v]) {
          const p = 1.0 / (1.0 + Math.exp(-this.field(b)));
          const bit = r.uniform32() < p ? 1 : 0;
          if (bit !== s[b]) changed++;
          s[b] = bit;
          if (acc) acc[b] += p;
          continue;
        }
        // One-hot block: softmax over its K bits, as oneHotUpdate.
        const K = blockStart[v + 1] - b;
        let old = 0;
        let top = -Infinity;
        for (let k = 0; k < K; k++) {
          if (s[b + k]) old = k;
          const u = this.field(b + k);
          scratch[k] = u;
          if (u > top) top = u;
        }
        const lost = top === -Infinity;
        let total = 0.0;
        for (let k = 0; k < K; k++) {
          const w = lost ? 1.0 : Math.exp(scratch[k] - top);
          scratch[k] = w;
          total += w;
        }
        const target = r.uniform32() * total;
        let pick = K - 1;
        let cum = 0.0;
        for (let k = 0; k < K; k++) {
          cum += scratch[k];
          if (target < cum) {
            pick = k;
            break;
          }
        }
        while (scratch[pick] === 0.0) pick--;
        s[b + old] = 0;
        s[b + pick] = 1;
        if (acc) {
          const inv = 1.0 / total;
          for (let k = 0; k < K; k++) acc[b + k] += scratch[k] * inv;
        }
        if (pick !== old) changed++;
      }
    }
    return changed;
  }
}
