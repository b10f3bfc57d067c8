// Negative-phase particles of a machine (fully visible BM, RBM, SRBM, fully visible Potts) advanced
// through a layer of Gaussian units y on the visible–visible part (Martens & Sutskever 2010 §3.3,
// §3.5): with M Mᵀ = W_vv + diag(d) over the visible bits (M: nV × m, row-major), the joint
//   log p(v, h, y) = −½|y|² + vᵀM y + (a_v − ½d)ᵀv + a_hᵀh + vᵀW_vh h + const
// has p(v, h) as its marginal (v_i² = v_i), and every conditional factorises:
//   y | v ~ N(Mᵀv, I),   h | v ~ Bernoulli(σ(a_h + W_hv v)),   v | y, h ~ Bernoulli(σ(M y + c)),
//   c = a_v − ½d + W_vh h.
// Block Gibbs: y | v, then v | y, h, then h | v (a 3-layer RBM's sweep).
// DHMC: h | v, y | v, then HMC on p(y | h) ∝ exp(−½|y|²) Π_v (1 + exp((M y + c)_v)) (v summed out:
// Zhang et al.'s relaxation with the hidden units held), then v | y, h. Every move leaves p(v, h)
// invariant. With no visible–visible couplings (an RBM, m = 0) both are the RBM's block Gibbs.
//
// A Potts machine's visible unit is a one-hot block of K bits (no hidden units). The marginal
// identity holds for every v in {0,1}^nV, so also on one-hot v: only v | y changes, to one
// categorical draw per unit, softmax over its K bits of z = M y + c; DHMC's target becomes
// exp(−½|y|²) Π_units Σ_k exp(z_{u,k}), gradient −y + Mᵀ softmax(z). unitWidth reads K off the form.
//
// Particles keep the Gibbs layout ([Philox][u8 per bit]); y is redrawn from v at every sweep, so it
// is not stored. Particles go LEARN_GROUP at a time: each row of M is loaded once for the group's
// products (M is nV² doubles: 4.9 MB for MNIST, out of cache). Each particle draws from its own
// stream in the same order whatever its group, and its sums run in the same order, so a particle's
// path does not depend on the grouping.

import { Philox, PHILOX_BYTES, uniform32, uniform, normal } from '../core/rng';
import { PairwiseForm, localField } from '../core/pairwise';
import { ldf, stf, ldi, sti } from '../core/access';
import { rowDot } from '../linalg/cholesky';
import { sigmoid } from './stats';

/** Particles advanced together (one load of M's rows serves all of them). */
export const LEARN_GROUP: i32 = 4;

/** Bytes of work the kernels need: i32 × nV, then f64 × LEARN_GROUP × (4m + 3nV + 2). */
export function learnLayerWorkBytes(nV: i32, m: i32): usize {
  return (<usize>nV << 2) + 8 + (<usize>LEARN_GROUP * <usize>(4 * m + 3 * nV + 2) << 3);
}

/**
 * Bits per visible unit: 1 for a binary machine (every block one free bit), K for a Potts machine
 * (every block one-hot, K bits; bindings/learn/machine.ts lays unit u at bits u·K…u·K + K − 1).
 */
@inline
function unitWidth(mf: PairwiseForm): i32 {
  return mf.allFree ? 1 : mf.maxBlock;
}

/** Row i of M has its entries at j < rowLen(i): all m, or i + 1 for a lower-triangular (Cholesky) M. */
@inline
function rowLen(i: i32, m: i32, lower: i32): i32 {
  return lower ? min<i32>(i + 1, m) : m;
}

/** out[g·nV + i] = (M y_g)_i for the group's y (y_g at y + g·m). */
function mulM(M: usize, nV: i32, m: i32, lower: i32, y: usize, out: usize, G: i32): void {
  for (let i = 0; i < nV; i++) {
    const row = M + (<usize>i * <usize>m << 3), len = rowLen(i, m, lower);
    for (let g = 0; g < G; g++) stf(out, g * nV + i, rowDot(row, y + (<usize>(g * m) << 3), len));
  }
}

/** y_g = Mᵀ v_g for the group (v_g at v + g·nV, f64), zeros skipped. */
function mulMT(M: usize, nV: i32, m: i32, lower: i32, v: usize, y: usize, G: i32): void {
  memory.fill(y, 0, <usize>(G * m) << 3);
  for (let i = 0; i < nV; i++) {
    const row = M + (<usize>i * <usize>m << 3), len = rowLen(i, m, lower);
    for (let g = 0; g < G; g++) {
      const c = ldf(v, g * nV + i);
      if (c == 0) continue;
      const yg = y + (<usize>(g * m) << 3), vc = f64x2.splat(c);
      let j = 0;
      for (; j + 1 < len; j += 2) {
        const o = <usize>j << 3;
        v128.store(yg + o, f64x2.add(v128.load(yg + o), f64x2.mul(vc, v128.load(row + o))));
      }
      if (j < len) stf(yg, j, ldf(yg, j) + c * ldf(row, j));
    }
  }
}

/** hs[i] = position in W's row i of its first hidden column (columns are sorted). */
function hiddenStarts(mf: PairwiseForm, nV: i32, hs: usize): void {
  for (let i = 0; i < nV; i++) {
    let k = ldi(mf.rowPtr, i);
    const end = ldi(mf.rowPtr, i + 1);
    while (k < end && ldi(mf.col, k) < nV) k++;
    sti(hs, i, k);
  }
}

/** c_i = a_i − ½d_i + Σ_{hidden j} W_ij s_j for the visible bits of one particle. */
function visibleOffsets(mf: PairwiseForm, nV: i32, d: usize, hs: usize, s: usize, c: usize): void {
  for (let i = 0; i < nV; i++) {
    let u = ldf(mf.a, i) - 0.5 * ldf(d, i);
    const end = ldi(mf.rowPtr, i + 1);
    for (let k = ldi(hs, i); k < end; k++) if (load<u8>(s + <usize>ldi(mf.col, k))) u += ldf(mf.val, k);
    stf(c, i, u);
  }
}

/** Hidden bits of one particle from p(h | v); returns the number that changed. */
function drawHidden(mf: PairwiseForm, nV: i32, r: Philox, s: usize): i32 {
  let changed = 0;
  for (let p = nV; p < mf.nBits; p++) {
    const bit: u8 = uniform32(r) < sigmoid(localField(mf, s, p)) ? 1 : 0;
    changed += <i32>(bit != load<u8>(s + <usize>p));
    store<u8>(s + <usize>p, bit);
  }
  return changed;
}

/** y_g ← Mᵀ v_g + N(0, I) for the group, v read from the particles' bits. */
function drawGaussian(M: usize, nV: i32, m: i32, lower: i32, chains: usize, stride: usize, G: i32, vbuf: usize, y: usize): void {
  for (let g = 0; g < G; g++) {
    const s = chains + <usize>g * stride + PHILOX_BYTES;
    for (let i = 0; i < nV; i++) stf(vbuf, g * nV + i, <f64>load<u8>(s + <usize>i));
  }
  mulMT(M, nV, m, lower, vbuf, y, G);
  for (let g = 0; g < G; g++) {
    const r = changetype<Philox>(chains + <usize>g * stride);
    for (let j = 0; j < m; j++) stf(y, g * m + j, ldf(y, g * m + j) + normal(r));
  }
}

/** Visible bits of particle g from σ(u + c); returns the number that changed. */
function drawVisible(nV: i32, r: Philox, s: usize, u: usize, c: usize): i32 {
  let changed = 0;
  for (let i = 0; i < nV; i++) {
    const bit: u8 = uniform32(r) < sigmoid(ldf(u, i) + ldf(c, i)) ? 1 : 0;
    changed += <i32>(bit != load<u8>(s + <usize>i));
    store<u8>(s + <usize>i, bit);
  }
  return changed;
}

/**
 * A Potts unit's state, bits s[0…K−1], from the softmax of its logits u_k + c_k: weights exp(z_k − max z)
 * in w (K f64 of scratch), the first state whose cumulative weight passes uniform·total. Every logit −∞
 * (no possible state; not reached with finite parameters): the unit keeps its state. Returns 1 if it changed.
 */
function drawUnit(K: i32, r: Philox, s: usize, u: usize, c: usize, w: usize): i32 {
  let top = -Infinity, old = 0;
  for (let k = 0; k < K; k++) {
    const z = ldf(u, k) + ldf(c, k);
    stf(w, k, z);
    top = max<f64>(top, z);
    if (load<u8>(s + <usize>k)) old = k;
  }
  const target = uniform32(r);
  if (top == -Infinity) return 0;
  let total = 0.0;
  for (let k = 0; k < K; k++) {
    const e = Math.exp(ldf(w, k) - top);
    stf(w, k, e);
    total += e;
  }
  // Cumulative sums rise only at positive weights, so the first to pass is a possible state; the
  // last possible one if rounding leaves none past the target.
  const t = target * total;
  let cum = 0.0, pick = -1, last = 0;
  for (let k = 0; k < K; k++) {
    const e = ldf(w, k);
    cum += e;
    if (e > 0) last = k;
    if (pick < 0 && t < cum) pick = k;
  }
  if (pick < 0) pick = last;
  if (pick == old) return 0;
  store<u8>(s + <usize>old, 0);
  store<u8>(s + <usize>pick, 1);
  return 1;
}

/**
 * Visible part of particle g: binary (K = 1) bits from σ(u + c), or Potts units (K bits each) from
 * their softmax; w: K f64 of scratch. Returns the number of bits (binary) or units (Potts) that changed.
 */
function drawVisibleUnits(nV: i32, K: i32, r: Philox, s: usize, u: usize, c: usize, w: usize): i32 {
  if (K == 1) return drawVisible(nV, r, s, u, c);
  let changed = 0;
  for (let b = 0; b < nV; b += K) {
    const o = <usize>b << 3;
    changed += drawUnit(K, r, s + <usize>b, u + o, c + o, w);
  }
  return changed;
}

/**
 * `sweeps` block Gibbs sweeps (y | v, v | y h, h | v) on each of `count` particles (Gibbs layout) of
 * the machine `model` (nV visible bits first), given M (nV × m; `lower`: lower-triangular) and d.
 * work: learnLayerWorkBytes. Returns the number of bit changes (Potts: unit changes, as Gibbs counts them).
 */
export function learnLayerGibbs(model: usize, nV: i32, M: usize, m: i32, lower: i32, d: usize, chains: usize, count: i32, sweeps: i32, work: usize): f64 {
  const mf = changetype<PairwiseForm>(model);
  const stride = PHILOX_BYTES + <usize>mf.nBits, K = unitWidth(mf);
  const hs = work, y = (work + (<usize>nV << 2) + 7) & ~(<usize>7);
  const G = LEARN_GROUP, u = y + (<usize>(G * m) << 3), c = u + (<usize>(G * nV) << 3), vbuf = c + (<usize>(G * nV) << 3);
  hiddenStarts(mf, nV, hs);
  let changed: f64 = 0;
  for (let i0 = 0; i0 < count; i0 += G) {
    const g1 = min<i32>(G, count - i0), base = chains + <usize>i0 * stride;
    for (let t = 0; t < sweeps; t++) {
      drawGaussian(M, nV, m, lower, base, stride, g1, vbuf, y);
      mulM(M, nV, m, lower, y, u, g1);
      for (let g = 0; g < g1; g++) {
        const ch = base + <usize>g * stride, s = ch + PHILOX_BYTES, r = changetype<Philox>(ch);
        const cg = c + (<usize>(g * nV) << 3);
        visibleOffsets(mf, nV, d, hs, s, cg);
        // vbuf is free once y is drawn: the Potts draw's scratch.
        changed += drawVisibleUnits(nV, K, r, s, u + (<usize>(g * nV) << 3), cg, vbuf);
        changed += drawHidden(mf, nV, r, s);
      }
    }
  }
  return changed;
}

@inline
function softplus(x: f64): f64 {
  return x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x));
}

/**
 * log Σ_k exp(z_k) of one Potts unit's logits z = u + c (K of them), max-shifted, and its softmax into
 * sm; every z_k = −∞: −∞ and a zero softmax (no NaN; the HMC move is then rejected).
 */
function unitLogSumExp(K: i32, u: usize, c: usize, sm: usize): f64 {
  let top = -Infinity;
  for (let k = 0; k < K; k++) top = max<f64>(top, ldf(u, k) + ldf(c, k));
  if (top == -Infinity) {
    memory.fill(sm, 0, <usize>K << 3);
    return top;
  }
  let sum = 0.0;
  for (let k = 0; k < K; k++) {
    const e = Math.exp(ldf(u, k) + ldf(c, k) - top);
    stf(sm, k, e);
    sum += e;
  }
  const inv = 1.0 / sum;
  for (let k = 0; k < K; k++) stf(sm, k, ldf(sm, k) * inv);
  return top + Math.log(sum);
}

/**
 * log p(y | h) + const and its gradient −y + Mᵀσ(M y + c) for the group (Potts, K > 1: Σ_units
 * logsumexp and −y + Mᵀ softmax); u (M y) already computed.
 */
function layerDensity(M: usize, nV: i32, K: i32, m: i32, lower: i32, y: usize, u: usize, c: usize, sbuf: usize, grad: usize, logp: usize, G: i32): void {
  for (let g = 0; g < G; g++) {
    let lp = 0.0;
    for (let j = 0; j < m; j++) lp -= 0.5 * ldf(y, g * m + j) * ldf(y, g * m + j);
    if (K == 1) {
      for (let i = 0; i < nV; i++) {
        const z = ldf(u, g * nV + i) + ldf(c, g * nV + i);
        lp += softplus(z);
        stf(sbuf, g * nV + i, sigmoid(z));
      }
    } else {
      for (let b = 0; b < nV; b += K) {
        const o = <usize>(g * nV + b) << 3;
        lp += unitLogSumExp(K, u + o, c + o, sbuf + o);
      }
    }
    stf(logp, g, lp);
  }
  mulMT(M, nV, m, lower, sbuf, grad, G);
  for (let k = 0; k < G * m; k++) stf(grad, k, ldf(grad, k) - ldf(y, k));
}

/**
 * `sweeps` DHMC sweeps (h | v, y | v, one HMC move of `steps` leapfrog steps of size eps on
 * p(y | h), v | y h) on each particle; arguments as learnLayerGibbs. out[0] += the sum of the
 * Metropolis acceptance probabilities. Returns the number of bit changes (Potts: unit changes).
 */
export function learnLayerHMC(
  model: usize, nV: i32, M: usize, m: i32, lower: i32, d: usize, chains: usize, count: i32, sweeps: i32, steps: i32, eps: f64, work: usize, out: usize,
): f64 {
  const mf = changetype<PairwiseForm>(model);
  const stride = PHILOX_BYTES + <usize>mf.nBits, K = unitWidth(mf);
  const G = LEARN_GROUP, hs = work, y = (work + (<usize>nV << 2) + 7) & ~(<usize>7);
  const y0 = y + (<usize>(G * m) << 3), p = y0 + (<usize>(G * m) << 3), grad = p + (<usize>(G * m) << 3);
  const u = grad + (<usize>(G * m) << 3), c = u + (<usize>(G * nV) << 3), sbuf = c + (<usize>(G * nV) << 3);
  const logp = sbuf + (<usize>(G * nV) << 3); // log p(y) per particle, then H0 per particle
  hiddenStarts(mf, nV, hs);
  let changed: f64 = 0, accepted = 0.0;
  for (let i0 = 0; i0 < count; i0 += G) {
    const g1 = min<i32>(G, count - i0), base = chains + <usize>i0 * stride;
    for (let t = 0; t < sweeps; t++) {
      for (let g = 0; g < g1; g++) {
        const ch = base + <usize>g * stride, s = ch + PHILOX_BYTES;
        changed += drawHidden(mf, nV, changetype<Philox>(ch), s);
        visibleOffsets(mf, nV, d, hs, s, c + (<usize>(g * nV) << 3));
      }
      drawGaussian(M, nV, m, lower, base, stride, g1, sbuf, y);
      memory.copy(y0, y, <usize>(g1 * m) << 3);
      mulM(M, nV, m, lower, y, u, g1);
      layerDensity(M, nV, K, m, lower, y, u, c, sbuf, grad, logp, g1);
      // H0 = −log p(y0) + ½|p|², kept at logp[G + g].
      for (let g = 0; g < g1; g++) {
        const r = changetype<Philox>(base + <usize>g * stride);
        let k2 = 0.0;
        for (let j = 0; j < m; j++) {
          const z = normal(r);
          stf(p, g * m + j, z);
          k2 += z * z;
        }
        stf(logp, G + g, 0.5 * k2 - ldf(logp, g));
      }
      for (let l = 0; l < steps; l++) {
        for (let k = 0; k < g1 * m; k++) {
          const pk = ldf(p, k) + 0.5 * eps * ldf(grad, k);
          stf(p, k, pk);
          stf(y, k, ldf(y, k) + eps * pk);
        }
        mulM(M, nV, m, lower, y, u, g1);
        layerDensity(M, nV, K, m, lower, y, u, c, sbuf, grad, logp, g1);
        for (let k = 0; k < g1 * m; k++) stf(p, k, ldf(p, k) + 0.5 * eps * ldf(grad, k));
      }
      for (let g = 0; g < g1; g++) {
        const r = changetype<Philox>(base + <usize>g * stride);
        let k2 = 0.0;
        for (let j = 0; j < m; j++) k2 += ldf(p, g * m + j) * ldf(p, g * m + j);
        const dH = 0.5 * k2 - ldf(logp, g) - ldf(logp, G + g);
        const acc = dH != dH ? 0.0 : min<f64>(1.0, Math.exp(-dH));
        accepted += acc;
        // A rejected move keeps y0; M y0 is recomputed for this particle only.
        if (!(uniform(r) < acc)) {
          const yg = y + (<usize>(g * m) << 3);
          memory.copy(yg, y0 + (<usize>(g * m) << 3), <usize>m << 3);
          mulM(M, nV, m, lower, yg, u + (<usize>(g * nV) << 3), 1);
        }
      }
      // sbuf is free after the last density: the Potts draw's scratch.
      for (let g = 0; g < g1; g++) {
        const ch = base + <usize>g * stride;
        changed += drawVisibleUnits(nV, K, changetype<Philox>(ch), ch + PHILOX_BYTES, u + (<usize>(g * nV) << 3), c + (<usize>(g * nV) << 3), sbuf);
      }
    }
  }
  store<f64>(out, load<f64>(out) + accepted);
  return changed;
}

/** A = W_vv + αI, dense row-major nV × nV, from the machine's stored couplings. */
export function learnVisibleMatrix(model: usize, nV: i32, alpha: f64, A: usize): void {
  const mf = changetype<PairwiseForm>(model);
  memory.fill(A, 0, <usize>nV * <usize>nV << 3);
  for (let i = 0; i < nV; i++) {
    const end = ldi(mf.rowPtr, i + 1);
    for (let k = ldi(mf.rowPtr, i); k < end; k++) {
      const j = ldi(mf.col, k);
      if (j < nV) stf(A, i * nV + j, ldf(mf.val, k));
    }
    stf(A, i * nV + i, alpha);
  }
}

/** A dense n × n matrix's CSR pattern (every entry stored): rowPtr[i] = i·n, col = 0…n−1 per row. */
export function learnDensePattern(n: i32, rowPtr: usize, col: usize): void {
  for (let i = 0; i <= n; i++) sti(rowPtr, i, i * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) sti(col, i * n + j, j);
}
