// HMC (hmc.ts) for a batch of chains on one relaxed target: the chains' trajectories advance in lockstep
// so that every gradient is one batched evaluation (relax/relaxed_batch.ts: U = M X and Mᵀ Π with X of
// m × B); everything else — momentum, kicks and drifts with the chain's own ε and mass, the Metropolis
// test, adaptation, estimators — is the single-chain code on the chain's own header and streams. A chain
// whose density stops being finite leaves the lockstep (as hmc.ts's integrate returns) and waits for the
// others. Chain b's numbers are those of hmcStep on the same header, bit for bit.
//
// The chains must share the target (Relaxed header), the integrator's stages and the number of steps;
// otherwise, or for a factor without batched products (FFT), the chains run one after another (hmcStep).

import { Relaxed } from '../relax/relaxed';
import { Factor } from '../relax/factor';
import { factorBatchable } from '../relax/factor_batch';
import { EVAL_SKIP, EVAL_GRADIENT, EVAL_LOGP, relaxedBatchEval, relaxedBatchScratchBytes, batchProb } from '../relax/relaxed_batch';
import { Chain, TARGET_RELAXED, MASS_DIAG, velocity, resetInfo, hmcBegin, hmcFinish, hmcStep } from './hmc';
import { axpy } from './hmc_triangular';

/** Bytes of a batch's scratch: the batched density's, then per chain x and ∇ pointers, a mode, three f64. */
export function hmcBatchScratchBytes(relaxed: usize, B: i32): usize {
  return relaxedBatchScratchBytes(changetype<Relaxed>(relaxed), B) + <usize>B * 36 + 8;
}

@inline
function chainAt(hdrs: usize, b: i32): Chain {
  return changetype<Chain>(load<usize>(hdrs + (<usize>b << 2)));
}

/** Whether the chains can share batched gradient evaluations. */
function lockstep(hdrs: usize, B: i32): bool {
  const c0 = chainAt(hdrs, 0);
  if (c0.kind != TARGET_RELAXED) return false;
  if (!factorBatchable(changetype<Factor>(changetype<Relaxed>(c0.target).factor))) return false;
  for (let b = 1; b < B; b++) {
    const c = chainAt(hdrs, b);
    if (c.kind != TARGET_RELAXED || c.target != c0.target || c.nStages != c0.nStages || c.nSteps != c0.nSteps) return false;
  }
  return true;
}

/**
 * The kick p += h₁ ∇ then the drift x += h₂ G⁻¹ p (hmc.ts's axpy, velocity, axpy: the same operations per
 * entry), writing x also into the chain's column of the batch's X (`col`, entries `stride` bytes apart).
 * With a diagonal mass both in one pass over the chain's vectors, two entries per f64x2 (c.v and the
 * kinetic energy, which the trajectory does not use, are not computed).
 */
function kickDrift(c: Chain, h1: f64, h2: f64, col: usize, stride: usize): void {
  const m = c.m;
  const xp = c.xp, p = c.p, g = c.gp;
  if (c.massKind != MASS_DIAG) {
    axpy(p, h1, g, m);
    velocity(c, p, c.v);
    const v = c.v;
    for (let i = 0; i < m; i++, col += stride) {
      const o = <usize>i << 3;
      const x = load<f64>(xp + o) + h2 * load<f64>(v + o);
      store<f64>(xp + o, x);
      store<f64>(col, x);
    }
    return;
  }
  const im = c.invMass;
  const k1 = f64x2.splat(h1), k2 = f64x2.splat(h2);
  const step = stride << 1;
  let i = 0;
  for (; i + 1 < m; i += 2, col += step) {
    const o = <usize>i << 3;
    const pv = f64x2.add(v128.load(p + o), f64x2.mul(k1, v128.load(g + o)));
    v128.store(p + o, pv);
    const x = f64x2.add(v128.load(xp + o), f64x2.mul(k2, f64x2.mul(v128.load(im + o), pv)));
    v128.store(xp + o, x);
    v128.store64_lane(col, x, 0);
    v128.store64_lane(col + stride, x, 1);
  }
  if (i < m) {
    const o = <usize>i << 3;
    const pi = load<f64>(p + o) + h1 * load<f64>(g + o);
    store<f64>(p + o, pi);
    const x = load<f64>(xp + o) + h2 * (load<f64>(im + o) * pi);
    store<f64>(xp + o, x);
    store<f64>(col, x);
  }
}

/**
 * `iters` HMC transitions of each of the B chains whose headers are at hdrs (usize × B); each chain's
 * info (chainInfo) covers the call, as after hmcStep(hdr, iters, flags).
 */
export function hmcStepBatch(hdrs: usize, B: i32, iters: i32, flags: i32, scratch: usize): void {
  if (B <= 0) return;
  if (!lockstep(hdrs, B)) {
    for (let b = 0; b < B; b++) hmcStep(load<usize>(hdrs + (<usize>b << 2)), iters, flags);
    return;
  }
  const c0 = chainAt(hdrs, 0);
  const r = changetype<Relaxed>(c0.target);
  const m = c0.m;
  const S = c0.nStages, steps = c0.nSteps;
  const stride = <usize>B << 3;
  const xs = scratch + relaxedBatchScratchBytes(r, B);
  const gs = xs + (<usize>B << 2);
  const mode = gs + (<usize>B << 2);
  const out = mode + (<usize>B << 2) + (<usize>(B & 1) << 2); // f64 × B, 8-aligned
  const lp = out + (<usize>B << 3);
  const H0 = lp + (<usize>B << 3);
  for (let b = 0; b < B; b++) resetInfo(chainAt(hdrs, b));
  for (let it = 0; it < iters; it++) {
    for (let b = 0; b < B; b++) {
      const c = chainAt(hdrs, b);
      store<f64>(H0 + (<usize>b << 3), hmcBegin(c));
      store<f64>(lp + (<usize>b << 3), c.logp);
      store<usize>(xs + (<usize>b << 2), c.xp);
      store<usize>(gs + (<usize>b << 2), c.gp);
      store<i32>(mode + (<usize>b << 2), EVAL_GRADIENT);
    }
    // hmc.ts's integrate(c, c.xp, c.gp, c.p, c.logp, c.eps, c.nSteps), chain by chain between evaluations.
    for (let s = 0; s < steps; s++) {
      for (let k = 0; k <= S; k++) {
        for (let b = 0; b < B; b++) {
          if (load<i32>(mode + (<usize>b << 2)) == EVAL_SKIP) continue;
          const c = chainAt(hdrs, b);
          const h1 = load<f64>(c.coef + (<usize>(2 * k) << 3)) * c.eps;
          if (k == S) axpy(c.p, h1, c.gp, m);
          else kickDrift(c, h1, load<f64>(c.coef + (<usize>(2 * k + 1) << 3)) * c.eps, scratch + (<usize>b << 3), stride);
        }
        if (k == S) break;
        const last = s == steps - 1 && k == S - 1;
        for (let b = 0; b < B; b++) {
          const q = mode + (<usize>b << 2);
          if (load<i32>(q) != EVAL_SKIP) store<i32>(q, last ? EVAL_LOGP : EVAL_GRADIENT);
        }
        relaxedBatchEval(r, B, xs, gs, mode, out, scratch, true);
        for (let b = 0; b < B; b++) {
          const q = mode + (<usize>b << 2);
          if (load<i32>(q) == EVAL_SKIP) continue;
          const v = load<f64>(out + (<usize>b << 3));
          chainAt(hdrs, b).infoGrads += 1;
          store<f64>(lp + (<usize>b << 3), v);
          if (!isFinite(v)) store<i32>(q, EVAL_SKIP);
        }
      }
    }
    for (let b = 0; b < B; b++) {
      const c = chainAt(hdrs, b);
      // π of the chain's last evaluation where acceptProposal reads it.
      memory.copy(r.prob, batchProb(r, scratch, B, b), <usize>r.nBits << 3);
      hmcFinish(c, load<f64>(lp + (<usize>b << 3)), load<f64>(H0 + (<usize>b << 3)), flags);
    }
  }
}
