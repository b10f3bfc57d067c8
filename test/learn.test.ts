// Learning Boltzmann machines: the gradient statistics against exact expectations, PCD on data
// drawn exactly from small known models against the exact maximum-likelihood fit (fully visible) and
// the generating model (RBM), and the log-likelihood evaluation (exact enumeration, AIS) against
// enumeration here. Fixed seeds; statistical tolerances from the Monte Carlo standard error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { learn } from '../bindings/learn/learn.ts';
import { gradientStatistics } from '../bindings/learn/gradient.ts';
import { logLikelihood, type BinaryData } from '../bindings/learn/likelihood.ts';
import { machinePairs, machineModel, type MachineKind, type MachineParams } from '../bindings/learn/machine.ts';
import { mulberry32 } from './helpers.ts';

const engine = await loadEngine();

function randomMachine(kind: MachineKind, nV: number, nH: number, seed: number, scale: number): MachineParams {
  const rand = mulberry32(seed);
  const pairs = machinePairs(kind, nV, nH);
  const a = Float64Array.from({ length: nV + nH }, () => (rand() - 0.5) * 2 * scale);
  const w = Float64Array.from({ length: pairs.length / 2 }, () => (rand() - 0.5) * 4 * scale);
  return { kind, nVisible: nV, nHidden: nH, a, w, pairs };
}

function logsumexp(x: ArrayLike<number>): number {
  let m = -Infinity, s = 0;
  for (let i = 0; i < x.length; i++) m = Math.max(m, x[i]);
  for (let i = 0; i < x.length; i++) s += Math.exp(x[i] - m);
  return m + Math.log(s);
}

/** log p(v) for every visible configuration v (bit i of the index = unit i), hidden summed. */
function visibleLogProbs(p: MachineParams): Float64Array {
  const nV = p.nVisible, nH = p.nHidden, n = nV + nH;
  const lf = new Float64Array(1 << nV), joint = new Float64Array(1 << nH), s = new Uint8Array(n);
  for (let v = 0; v < 1 << nV; v++) {
    for (let h = 0; h < 1 << nH; h++) {
      const c = v | (h << nV);
      for (let i = 0; i < n; i++) s[i] = (c >> i) & 1;
      let e = 0;
      for (let i = 0; i < n; i++) e += p.a[i] * s[i];
      for (let k = 0; k < p.w.length; k++) e += p.w[k] * s[p.pairs[2 * k]] * s[p.pairs[2 * k + 1]];
      joint[h] = e;
    }
    lf[v] = logsumexp(joint);
  }
  const lz = logsumexp(lf);
  return lf.map((x) => x - lz);
}

function draw(logp: Float64Array, nV: number, rows: number, seed: number): BinaryData {
  const rand = mulberry32(seed);
  const cdf = new Float64Array(logp.length);
  let acc = 0;
  for (let v = 0; v < logp.length; v++) cdf[v] = acc += Math.exp(logp[v]);
  const values = new Uint8Array(rows * nV);
  for (let r = 0; r < rows; r++) {
    const u = rand() * acc;
    let lo = 0, hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    for (let i = 0; i < nV; i++) values[r * nV + i] = (lo >> i) & 1;
  }
  return { rows, cols: nV, values };
}

function dataIndex(d: BinaryData, r: number): number {
  let v = 0;
  for (let i = 0; i < d.cols; i++) v |= d.values[r * d.cols + i] << i;
  return v;
}

function averageLogLik(logp: Float64Array, d: BinaryData): number {
  let s = 0;
  for (let r = 0; r < d.rows; r++) s += logp[dataIndex(d, r)];
  return s / d.rows;
}

/** The exact maximum-likelihood fully visible BM for the data: gradient ascent to moment matching. */
function exactFit(d: BinaryData): MachineParams {
  const nV = d.cols, pairs = machinePairs('boltzmann', nV, 0), E = pairs.length / 2;
  const dataA = new Float64Array(nV), dataW = new Float64Array(E);
  for (let r = 0; r < d.rows; r++) {
    for (let i = 0; i < nV; i++) dataA[i] += d.values[r * nV + i] / d.rows;
    for (let e = 0; e < E; e++) dataW[e] += (d.values[r * nV + pairs[2 * e]] * d.values[r * nV + pairs[2 * e + 1]]) / d.rows;
  }
  const p: MachineParams = { kind: 'boltzmann', nVisible: nV, nHidden: 0, a: new Float64Array(nV), w: new Float64Array(E), pairs };
  for (let it = 0; it < 20000; it++) {
    const prob = visibleLogProbs(p).map(Math.exp);
    const mA = new Float64Array(nV), mW = new Float64Array(E);
    for (let v = 0; v < prob.length; v++) {
      for (let i = 0; i < nV; i++) if ((v >> i) & 1) mA[i] += prob[v];
      for (let e = 0; e < E; e++) if ((v >> pairs[2 * e]) & (v >> pairs[2 * e + 1]) & 1) mW[e] += prob[v];
    }
    let g2 = 0;
    for (let i = 0; i < nV; i++) {
      p.a[i] += 2 * (dataA[i] - mA[i]);
      g2 += (dataA[i] - mA[i]) ** 2;
    }
    for (let e = 0; e < E; e++) {
      p.w[e] += 2 * (dataW[e] - mW[e]);
      g2 += (dataW[e] - mW[e]) ** 2;
    }
    if (g2 < 1e-16) return p;
  }
  throw new Error('exact fit did not converge');
}

test('gradient statistics: data phase exact, model phase within 4 SE of exact expectations (BM and RBM)', () => {
  for (const [kind, nV, nH] of [['boltzmann', 6, 0], ['rbm', 5, 3], ['srbm', 4, 2]] as const) {
    const p = randomMachine(kind, nV, nH, 11, 0.6);
    const d = draw(visibleLogProbs(p), nV, 50, 12);
    const P = 4000;
    const st = gradientStatistics(engine, p, d, { particles: P, sweeps: 50, seed: 3 });
    // Exact: data statistics with hidden means; model statistics by enumerating the joint.
    const n = nV + nH, E = p.w.length;
    const sig = (u: number) => 1 / (1 + Math.exp(-u));
    const dA = new Float64Array(n), dW = new Float64Array(E);
    for (let r = 0; r < d.rows; r++) {
      const x = new Float64Array(n);
      for (let i = 0; i < nV; i++) x[i] = d.values[r * nV + i];
      for (let h = nV; h < n; h++) {
        let u = p.a[h];
        for (let e = 0; e < E; e++) if (p.pairs[2 * e + 1] === h) u += p.w[e] * x[p.pairs[2 * e]];
        x[h] = sig(u);
      }
      for (let i = 0; i < n; i++) dA[i] += x[i] / d.rows;
      for (let e = 0; e < E; e++) dW[e] += (x[p.pairs[2 * e]] * x[p.pairs[2 * e + 1]]) / d.rows;
    }
    for (let i = 0; i < n; i++) assert.ok(Math.abs(st.data.a[i] - dA[i]) < 1e-12, `${kind} data a[${i}]`);
    for (let e = 0; e < E; e++) assert.ok(Math.abs(st.data.w[e] - dW[e]) < 1e-12, `${kind} data w[${e}]`);
    // Model phase: x_p for visible bits (indicator) and hidden conditional means; compare the
    // visible ones and the pair statistics with exact joint expectations.
    const mA = new Float64Array(n), mW = new Float64Array(E), s = new Uint8Array(n), lw = new Float64Array(1 << n);
    for (let c = 0; c < 1 << n; c++) {
      let e = 0;
      for (let i = 0; i < n; i++) e += p.a[i] * ((c >> i) & 1);
      for (let k = 0; k < E; k++) e += p.w[k] * ((c >> p.pairs[2 * k]) & (c >> p.pairs[2 * k + 1]) & 1);
      lw[c] = e;
    }
    const lz = logsumexp(lw);
    for (let c = 0; c < 1 << n; c++) {
      const pr = Math.exp(lw[c] - lz);
      for (let i = 0; i < n; i++) s[i] = (c >> i) & 1;
      for (let i = 0; i < n; i++) mA[i] += pr * s[i];
      for (let k = 0; k < E; k++) mW[k] += pr * s[p.pairs[2 * k]] * s[p.pairs[2 * k + 1]];
    }
    // Independent particles: SE ≤ sqrt(q(1−q)/P) for a [0,1] statistic with mean q.
    const check = (est: number, exact: number, what: string) => {
      const se = Math.sqrt(Math.max(exact * (1 - exact), 1e-4) / P);
      assert.ok(Math.abs(est - exact) <= 4 * se, `${kind} model ${what}: ${est} vs exact ${exact} (4 SE = ${4 * se})`);
    };
    for (let i = 0; i < n; i++) check(st.model.a[i], mA[i], `a[${i}]`);
    for (let k = 0; k < E; k++) check(st.model.w[k], mW[k], `w[${k}]`);
  }
});
