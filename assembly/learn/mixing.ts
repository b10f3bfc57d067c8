// Running sums for the hidden–visible statistic E[h xᵀ] − E[h] E[x]ᵀ of RBM-type machines (Martens &
// Sutskever 2010 §5.2, the "hx-statistic"), over particles in the Gibbs layout: the mixing
// experiments add every step's particles and read the estimate at checkpoints.

import { PHILOX_BYTES } from '../core/rng';
import { PairwiseForm, localField } from '../core/pairwise';
import { ldf, stf } from '../core/access';
import { sigmoid } from './stats';

/**
 * Adds, over `count` particles, their visible bits into sumX (f64 × nV), the hidden units'
 * conditional means σ(u_h) (Rao–Blackwellised) into sumH (f64 × nH), and σ(u_h)·x into sumHX
 * (nH × nV, row-major).
 */
export function learnHxAccumulate(model: usize, chains: usize, count: i32, nV: i32, sumX: usize, sumH: usize, sumHX: usize): void {
  const m = changetype<PairwiseForm>(model);
  const n = m.nBits, stride = PHILOX_BYTES + <usize>n;
  for (let c = 0; c < count; c++) {
    const s = chains + <usize>c * stride + PHILOX_BYTES;
    for (let i = 0; i < nV; i++) if (load<u8>(s + <usize>i)) stf(sumX, i, ldf(sumX, i) + 1);
    for (let p = nV; p < n; p++) {
      const q = sigmoid(localField(m, s, p)), row = sumHX + (<usize>((p - nV) * nV) << 3);
      stf(sumH, p - nV, ldf(sumH, p - nV) + q);
      for (let i = 0; i < nV; i++) if (load<u8>(s + <usize>i)) stf(row, i, ldf(row, i) + q);
    }
  }
}
