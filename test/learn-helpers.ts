// Small binary and Potts machines for the learning tests: random parameters, exact visible
// log-probabilities and model expectations by enumeration, exact draws, and the exact
// maximum-likelihood fit of a fully visible BM.
import type { BinaryData } from '../bindings/learn/likelihood.ts';
import { machinePairs, type MachineKind, type MachineParams } from '../bindings/learn/machine.ts';
import { mulberry32 } from './helpers.ts';
import { spdInverse } from './relax-helpers.ts';

export function randomMachine(kind: MachineKind, nV: number, nH: number, seed: number, scale: number): MachineParams {
  const rand = mulberry32(seed);
  const pairs = machinePairs(kind, nV, nH);
  const a = Float64Array.from({ length: nV + nH }, () => (rand() - 0.5) * 2 * scale);
  const w = Float64Array.from({ length: pairs.length / 2 }, () => (rand() - 0.5) * 4 * scale);
  return { kind, nVisible: nV, nHidden: nH, states: 2, a, w, pairs };
}

export function logsumexp(x: ArrayLike<number>): number {
  let m = -Infinity, s = 0;
  for (let i = 0; i < x.length; i++) m = Math.max(m, x[i]);
  for (let i = 0; i < x.length; i++) s += Math.exp(x[i] - m);
  return m + Math.log(s);
}

/** log p(v) for every visible configuration v (bit i of the index = unit i), hidden summed. */
export function visibleLogProbs(p: MachineParams): Float64Array {
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

/** `rows` configuration indices drawn exactly from the distribution exp(logp). */
export function drawIndices(logp: Float64Array, rows: number, seed: number): Int32Array {
  const rand = mulberry32(seed);
  const cdf = new Float64Array(logp.length);
  let acc = 0;
  for (let v = 0; v < logp.length; v++) cdf[v] = acc += Math.exp(logp[v]);
  return Int32Array.from({ length: rows }, () => {
    const u = rand() * acc;
    let lo = 0, hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  });
}

export function draw(logp: Float64Array, nV: number, rows: number, seed: number): BinaryData {
  const idx = drawIndices(logp, rows, seed), values = new Uint8Array(rows * nV);
  for (let r = 0; r < rows; r++) for (let i = 0; i < nV; i++) values[r * nV + i] = (idx[r] >> i) & 1;
  return { rows, cols: nV, values };
}

export function dataIndex(d: BinaryData, r: number): number {
  let v = 0;
  for (let i = 0; i < d.cols; i++) v |= d.values[r * d.cols + i] << i;
  return v;
}

export function averageLogLik(logp: Float64Array, d: BinaryData): number {
  let s = 0;
  for (let r = 0; r < d.rows; r++) s += logp[dataIndex(d, r)];
  return s / d.rows;
}

/**
 * The exact maximum-likelihood fully visible BM for the data: Newton's method on the (concave)
 * average log-likelihood, expectations and covariances by enumeration, with a backtracking step.
 */
export function exactFit(d: BinaryData): MachineParams {
  const nV = d.cols, pairs = machinePairs('boltzmann', nV, 0), E = pairs.length / 2, D = nV + E;
  const feat = (v: number, out: Float64Array) => {
    for (let i = 0; i < nV; i++) out[i] = (v >> i) & 1;
    for (let e = 0; e < E; e++) out[nV + e] = (v >> pairs[2 * e]) & (v >> pairs[2 * e + 1]) & 1;
  };
  const phi = new Float64Array(D), target = new Float64Array(D);
  for (let r = 0; r < d.rows; r++) {
    feat(dataIndex(d, r), phi);
    for (let q = 0; q < D; q++) target[q] += phi[q] / d.rows;
  }
  const theta = new Float64Array(D);
  const params = (t: Float64Array): MachineParams => ({ kind: 'boltzmann', nVisible: nV, nHidden: 0, states: 2, a: t.slice(0, nV), w: t.slice(nV), pairs });
  const objective = (t: Float64Array) => averageLogLik(visibleLogProbs(params(t)), d);
  let f = objective(theta);
  for (let it = 0; it < 100; it++) {
    const prob = visibleLogProbs(params(theta)).map(Math.exp);
    const mu = new Float64Array(D), C = new Float64Array(D * D);
    for (let v = 0; v < prob.length; v++) {
      feat(v, phi);
      for (let q = 0; q < D; q++) {
        if (!phi[q]) continue;
        mu[q] += prob[v];
        for (let r = 0; r < D; r++) if (phi[r]) C[q * D + r] += prob[v];
      }
    }
    const g = target.map((t, q) => t - mu[q]);
    if (g.reduce((s, x) => s + x * x, 0) < 1e-20) return params(theta);
    for (let q = 0; q < D; q++) for (let r = 0; r < D; r++) C[q * D + r] -= mu[q] * mu[r];
    const Ci = spdInverse(C, D);
    const step = Float64Array.from({ length: D }, (_, q) => Ci.subarray(q * D, (q + 1) * D).reduce((acc, c, r) => acc + c * g[r], 0));
    for (let t = 1; t > 1e-8; t /= 2) {
      const next = theta.map((x, q) => x + t * step[q]);
      const fn = objective(next);
      if (fn >= f) {
        theta.set(next);
        f = fn;
        break;
      }
    }
  }
  throw new Error('exact fit did not converge');
}

/** Exact model expectations of every bit and of x_i x_j per coupling, by enumerating the joint (binary machines). */
export function exactModelStats(p: MachineParams): { a: Float64Array; w: Float64Array } {
  const n = p.nVisible + p.nHidden, E = p.w.length;
  const mA = new Float64Array(n), mW = new Float64Array(E), lw = new Float64Array(1 << n);
  for (let c = 0; c < 1 << n; c++) {
    let e = 0;
    for (let i = 0; i < n; i++) e += p.a[i] * ((c >> i) & 1);
    for (let k = 0; k < E; k++) e += p.w[k] * ((c >> p.pairs[2 * k]) & (c >> p.pairs[2 * k + 1]) & 1);
    lw[c] = e;
  }
  const lz = logsumexp(lw);
  for (let c = 0; c < 1 << n; c++) {
    const pr = Math.exp(lw[c] - lz);
    for (let i = 0; i < n; i++) mA[i] += pr * ((c >> i) & 1);
    for (let k = 0; k < E; k++) mW[k] += pr * ((c >> p.pairs[2 * k]) & (c >> p.pairs[2 * k + 1]) & 1);
  }
  return { a: mA, w: mW };
}

/** A fully visible Potts machine (n units, K states) with biases in ±scale/2 and couplings in ±scale·0.8, both signs. */
export function randomPotts(n: number, K: number, seed: number, scale: number): MachineParams {
  const rand = mulberry32(seed), pairs = machinePairs('potts', n, 0);
  return {
    kind: 'potts', nVisible: n, nHidden: 0, states: K, pairs,
    a: Float64Array.from({ length: n * K }, () => scale * (rand() - 0.5)),
    w: Float64Array.from({ length: (pairs.length / 2) * K * K }, () => 1.6 * scale * (rand() - 0.5)),
  };
}

/** log p(x) of a fully visible Potts machine for every configuration (unit 0 fastest). */
export function pottsLogProbs(p: MachineParams): Float64Array {
  const n = p.nVisible, K = p.states, E = p.pairs.length / 2;
  const total = K ** n, lp = new Float64Array(total), x = new Int32Array(n);
  for (let c = 0; c < total; c++) {
    for (let v = 0, r = c; v < n; v++, r = Math.floor(r / K)) x[v] = r % K;
    let e = 0;
    for (let v = 0; v < n; v++) e += p.a[v * K + x[v]];
    for (let t = 0; t < E; t++) e += p.w[t * K * K + x[p.pairs[2 * t]] * K + x[p.pairs[2 * t + 1]]];
    lp[c] = e;
  }
  const lz = logsumexp(lp);
  return lp.map((v) => v - lz);
}

export function drawPotts(lp: Float64Array, n: number, K: number, rows: number, seed: number): BinaryData {
  const idx = drawIndices(lp, rows, seed), values = new Uint8Array(rows * n);
  for (let r = 0; r < rows; r++) for (let v = 0, q = idx[r]; v < n; v++, q = Math.floor(q / K)) values[r * n + v] = q % K;
  return { rows, cols: n, values };
}

function pottsIndex(d: BinaryData, r: number, K: number): number {
  let c = 0;
  for (let v = d.cols - 1; v >= 0; v--) c = c * K + d.values[r * d.cols + v];
  return c;
}

export function pottsAverageLogLik(logp: Float64Array, d: BinaryData, K: number): number {
  let s = 0;
  for (let r = 0; r < d.rows; r++) s += logp[pottsIndex(d, r, K)];
  return s / d.rows;
}

/** Exact model expectations of every state indicator (a's layout) and pair indicator (w's layout) of a Potts machine. */
export function pottsModelStats(p: MachineParams): { a: Float64Array; w: Float64Array } {
  const n = p.nVisible, K = p.states, E = p.pairs.length / 2, lp = pottsLogProbs(p);
  const mA = new Float64Array(n * K), mW = new Float64Array(E * K * K), x = new Int32Array(n);
  for (let c = 0; c < lp.length; c++) {
    const pr = Math.exp(lp[c]);
    for (let v = 0, q = c; v < n; v++, q = Math.floor(q / K)) x[v] = q % K;
    for (let v = 0; v < n; v++) mA[v * K + x[v]] += pr;
    for (let t = 0; t < E; t++) mW[t * K * K + x[p.pairs[2 * t]] * K + x[p.pairs[2 * t + 1]]] += pr;
  }
  return { a: mA, w: mW };
}
