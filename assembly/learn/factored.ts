// The equivalent-RBM parametrisation of a machine's visible–visible couplings (Martens & Sutskever
// 2010 §4, §5.4): Gaussian units y with weights F (nV × m) to the visible units, so that summing y
// out gives W_vv = F Fᵀ off the diagonal and adds ½ diag(F Fᵀ) to the visible biases:
//   log p(v, h, y) = bᵀv + vᵀF y − ½|y|² + (hidden terms)  ⇒  log p(v, h) = bᵀv + ½ vᵀF Fᵀv + …
// F is learned directly: ∂/∂F of the average log-likelihood is (S_data − S_model) F with
// S = E[v vᵀ] (its diagonal E[v], since v_i² = v_i). The machine's canonical form keeps the
// marginal SRBM (a = b + ½ diag(F Fᵀ), W_vv = F Fᵀ off the diagonal), rewritten after every
// update, so the statistics, the Gibbs kernels and the evaluation read it unchanged; the block
// Gibbs and DHMC kernels use M = F and d = diag(F Fᵀ) directly, with no shift and no factorisation.

import { PairwiseForm } from '../core/pairwise';
import { ldf, stf, ldi } from '../core/access';
import { rowDot } from '../linalg/cholesky';

/**
 * G = S F with S = posScale·S_pos − negScale·S_neg (nV × nV: off the diagonal from the statistics of
 * W's stored visible–visible entries, on it from the visible bits' statistics). S: nV² f64 scratch.
 */
export function learnFactorGradient(model: usize, nV: i32, F: usize, m: i32, posA: usize, posW: usize, negA: usize, negW: usize, posScale: f64, negScale: f64, S: usize, G: usize): void {
  const mf = changetype<PairwiseForm>(model);
  memory.fill(S, 0, <usize>nV * <usize>nV << 3);
  for (let i = 0; i < nV; i++) {
    stf(S, i * nV + i, posScale * ldf(posA, i) - negScale * ldf(negA, i));
    const end = ldi(mf.rowPtr, i + 1);
    for (let k = ldi(mf.rowPtr, i); k < end; k++) {
      const j = ldi(mf.col, k);
      if (j < nV) stf(S, i * nV + j, posScale * ldf(posW, k) - negScale * ldf(negW, k));
    }
  }
  // G = S F, row by row: G_i = Σ_j S_ij F_j (rows of F, f64x2 over m).
  memory.fill(G, 0, <usize>nV * <usize>m << 3);
  for (let i = 0; i < nV; i++) {
    const gi = G + (<usize>(i * m) << 3);
    for (let j = 0; j < nV; j++) {
      const s = ldf(S, i * nV + j);
      if (s == 0) continue;
      const fj = F + (<usize>(j * m) << 3), vs = f64x2.splat(s);
      let c = 0;
      for (; c + 1 < m; c += 2) v128.store(gi + (<usize>c << 3), f64x2.add(v128.load(gi + (<usize>c << 3)), f64x2.mul(vs, v128.load(fj + (<usize>c << 3)))));
      if (c < m) stf(gi, c, ldf(gi, c) + s * ldf(fj, c));
    }
  }
}

/**
 * F ← F + v with v ← μ v + η (G − decay·F); then rewrites the marginal form: W_vv = F Fᵀ on the
 * stored visible–visible entries and a_i += ½ ((F Fᵀ)_ii − d_i), d_i ← (F Fᵀ)_ii (d: the previous
 * diagonal, which the visible biases carry). With rate 0 it only writes the form from F. Returns the
 * largest |F_ij| (NaN if any is NaN).
 */
export function learnFactorApply(model: usize, nV: i32, F: usize, m: i32, G: usize, vel: usize, rate: f64, momentum: f64, decay: f64, d: usize): f64 {
  const mf = changetype<PairwiseForm>(model);
  let biggest: f64 = 0, bad = false;
  if (rate != 0) {
    for (let t = 0; t < nV * m; t++) {
      const f = ldf(F, t);
      const v = momentum * ldf(vel, t) + rate * (ldf(G, t) - decay * f);
      stf(vel, t, v);
      stf(F, t, f + v);
    }
  }
  for (let t = 0; t < nV * m; t++) {
    const f = ldf(F, t);
    if (f != f) bad = true;
    biggest = max(biggest, abs(f));
  }
  for (let i = 0; i < nV; i++) {
    const fi = F + (<usize>(i * m) << 3);
    const end = ldi(mf.rowPtr, i + 1);
    for (let k = ldi(mf.rowPtr, i); k < end; k++) {
      const j = ldi(mf.col, k);
      if (j < nV) stf(mf.val, k, rowDot(fi, F + (<usize>(j * m) << 3), m));
    }
    const dii = rowDot(fi, fi, m);
    stf(mf.a, i, ldf(mf.a, i) + 0.5 * (dii - ldf(d, i)));
    stf(d, i, dii);
  }
  return bad ? NaN : biggest;
}
