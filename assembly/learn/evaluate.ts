// Likelihood of a learned model on its visible bits, hidden units summed out analytically (they have
// no hidden neighbours):
//
//   log f(v) = a_vᵀv + ½ vᵀW_vv v + Σ_h softplus(u_h(v)),   u_h(v) = a_h + Σ_q W_hq v_q,
//
// exactly by enumerating the visible states (small models), and by AIS on the path (Salakhutdinov &
// Murray 2008) log f_β(v) = (1−β) b0ᵀv + β (a_vᵀv + ½ vᵀW_vv v) + Σ_h softplus(β u_h(v)), whose β = 0
// end is the base-rate model (independent visible units with biases b0, e.g. the data's log-odds;
// log Z_0 = Σ_i softplus(b0_i) + nHidden · log 2, or Σ_v logsumexp_k b0_vk for Potts units, added by
// the bindings). Transitions at β: hidden units from p_β(h | v), then a sequential scan over the
// visible units given the rest. Potts units are one-hot blocks of `width` bits (width 1: binary).
//
// Chain layout: [Philox, 64 B][s: u8 per bit], as the Gibbs sampler's.

import { Philox, PHILOX_BYTES, rngInit, uniform32 } from '../core/rng';
import { PairwiseForm, localField } from '../core/pairwise';
import { sigmoid } from './stats';

@inline
function softplus(x: f64): f64 {
  return x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x));
}

/** A state k with probability ∝ exp(u_k), u in f64 at `u` (K entries). */
function drawSoftmax(r: Philox, u: usize, K: i32): i32 {
  let hi: f64 = -Infinity;
  for (let k = 0; k < K; k++) hi = max(hi, load<f64>(u + (<usize>k << 3)));
  let total: f64 = 0;
  for (let k = 0; k < K; k++) {
    const e = Math.exp(load<f64>(u + (<usize>k << 3)) - hi);
    store<f64>(u + (<usize>k << 3), e);
    total += e;
  }
  let x = uniform32(r) * total;
  for (let k = 0; k < K - 1; k++) {
    x -= load<f64>(u + (<usize>k << 3));
    if (x < 0) return k;
  }
  return K - 1;
}

/** a_vᵀv + ½ vᵀW_vv v over the visible bits of s. */
function visibleEnergy(m: PairwiseForm, s: usize, nVisible: i32): f64 {
  let e: f64 = 0;
  for (let p = 0; p < nVisible; p++) {
    if (!load<u8>(s + <usize>p)) continue;
    let f: f64 = 0;
    const end = load<i32>(m.rowPtr + (<usize>(p + 1) << 2));
    for (let k = load<i32>(m.rowPtr + (<usize>p << 2)); k < end; k++) {
      const q = load<i32>(m.col + (<usize>k << 2));
      if (q < nVisible && load<u8>(s + <usize>q)) f += load<f64>(m.val + (<usize>k << 3));
    }
    e += load<f64>(m.a + (<usize>p << 3)) + 0.5 * f;
  }
  return e;
}

/** Σ_h softplus(β u_h(v)). */
function hiddenTerm(m: PairwiseForm, s: usize, nVisible: i32, beta: f64): f64 {
  let t: f64 = 0;
  for (let p = nVisible; p < m.nBits; p++) t += softplus(beta * localField(m, s, p));
  return t;
}

/** out[i] = log f(v_i) for data rows i (u8 per visible bit, rows of `stride` bytes). */
export function learnLogVisible(model: usize, data: usize, stride: i32, count: i32, nVisible: i32, out: usize): void {
  const m = changetype<PairwiseForm>(model);
  for (let i = 0; i < count; i++) {
    const s = data + <usize>i * <usize>stride;
    store<f64>(out + (<usize>i << 3), visibleEnergy(m, s, nVisible) + hiddenTerm(m, s, nVisible, 1.0));
  }
}

/**
 * log Σ_v f(v) over every visible configuration: nVisible bits each 0/1 (width 1), or nVisible/width
 * one-hot blocks of `width` bits (Potts), in odometer order. s: nBits bytes of scratch.
 */
export function learnExactLogZ(model: usize, nVisible: i32, width: i32, s: usize): f64 {
  const m = changetype<PairwiseForm>(model);
  memory.fill(s, 0, <usize>m.nBits);
  const K = width == 1 ? 2 : width, units = nVisible / width;
  let total: u64 = 1;
  for (let v = 0; v < units; v++) total *= <u64>K;
  // Digit of unit v: the bit set in its block (width > 1), or its bit (width 1).
  if (width > 1) for (let v = 0; v < units; v++) store<u8>(s + <usize>(v * width), 1);
  let hi: f64 = -Infinity, sum: f64 = 0;
  for (let c: u64 = 0; c < total; c++) {
    if (c > 0) {
      // Next configuration: increment the odometer (unit 0 fastest).
      for (let v = 0; v < units; v++) {
        if (width == 1) {
          const b = load<u8>(s + <usize>v) ^ 1;
          store<u8>(s + <usize>v, b);
          if (b) break;
          continue;
        }
        const base = s + <usize>(v * width);
        let k = 0;
        while (!load<u8>(base + <usize>k)) k++;
        store<u8>(base + <usize>k, 0);
        const next = k + 1 == width ? 0 : k + 1;
        store<u8>(base + <usize>next, 1);
        if (next != 0) break;
      }
    }
    const l = visibleEnergy(m, s, nVisible) + hiddenTerm(m, s, nVisible, 1.0);
    if (l > hi) {
      sum = sum * Math.exp(hi - l) + 1.0;
      hi = l;
    } else sum += Math.exp(l - hi);
  }
  return hi + Math.log(sum);
}

/**
 * `runs` AIS runs over the temperatures betas[0] = 0 < … < betas[nBetas−1] = 1 from the base-rate
 * model with visible biases b0; logw[r] receives run r's log weight (without log Z_0). Run r uses
 * the stream (seed, firstRun + r, tag).
 */
export function learnAIS(
  model: usize, nVisible: i32, width: i32, b0: usize, betas: usize, nBetas: i32, chains: usize, runs: i32,
  seedLo: u32, seedHi: u32, firstRun: u32, tag: u32, logw: usize, scratch: usize,
): void {
  const m = changetype<PairwiseForm>(model);
  const n = m.nBits;
  const stride = PHILOX_BYTES + <usize>n;
  for (let r = 0; r < runs; r++) {
    const c = chains + <usize>r * stride, s = c + PHILOX_BYTES;
    const rng = changetype<Philox>(c);
    rngInit(rng, seedLo, seedHi, firstRun + <u32>r, tag);
    memory.fill(s, 0, <usize>n);
    if (width == 1) {
      for (let p = 0; p < nVisible; p++) store<u8>(s + <usize>p, uniform32(rng) < sigmoid(load<f64>(b0 + (<usize>p << 3))) ? 1 : 0);
    } else {
      for (let p = 0; p < nVisible; p += width) {
        for (let k = 0; k < width; k++) store<f64>(scratch + (<usize>k << 3), load<f64>(b0 + (<usize>(p + k) << 3)));
        store<u8>(s + <usize>(p + drawSoftmax(rng, scratch, width)), 1);
      }
    }
    let w: f64 = 0;
    for (let t = 1; t < nBetas; t++) {
      const bPrev = load<f64>(betas + (<usize>(t - 1) << 3)), beta = load<f64>(betas + (<usize>t << 3));
      // log f_β(v) − log f_β'(v) from one pass: the base and model energies and the hidden fields.
      let base: f64 = 0;
      for (let p = 0; p < nVisible; p++) if (load<u8>(s + <usize>p)) base += load<f64>(b0 + (<usize>p << 3));
      const e = visibleEnergy(m, s, nVisible);
      w += (bPrev - beta) * base + (beta - bPrev) * e;
      for (let p = nVisible; p < n; p++) {
        const u = localField(m, s, p);
        w += softplus(beta * u) - softplus(bPrev * u);
      }
      if (t == nBetas - 1) break;
      // Transition leaving f_β invariant: h | v, then each visible bit given the rest.
      for (let p = nVisible; p < n; p++) store<u8>(s + <usize>p, uniform32(rng) < sigmoid(beta * localField(m, s, p)) ? 1 : 0);
      if (width == 1) {
        for (let p = 0; p < nVisible; p++) {
          const u = beta * localField(m, s, p) + (1.0 - beta) * load<f64>(b0 + (<usize>p << 3));
          store<u8>(s + <usize>p, uniform32(rng) < sigmoid(u) ? 1 : 0);
        }
        continue;
      }
      // One-hot blocks: no couplings inside a block, so each state's field ignores the block's bits.
      for (let p = 0; p < nVisible; p += width) {
        for (let k = 0; k < width; k++) {
          store<u8>(s + <usize>(p + k), 0);
          store<f64>(scratch + (<usize>k << 3), beta * localField(m, s, p + k) + (1.0 - beta) * load<f64>(b0 + (<usize>(p + k) << 3)));
        }
        store<u8>(s + <usize>(p + drawSoftmax(rng, scratch, width)), 1);
      }
    }
    store<f64>(logw + (<usize>r << 3), w);
  }
}
