// Langevin samplers on p(x), on the chain machinery of hmc.ts (state, target, mass matrix G,
// adaptation, estimators):
//
//   proposal  x' = x + (ε²/2) G⁻¹ ∇log p(x) + ε ξ,   ξ ~ N(0, G⁻¹)
//
// * MALA (Roberts & Tweedie 1996): Metropolis–Hastings test with the proposal densities
//     log α = log p(x') − log p(x) + log q(x | x') − log q(x' | x),
//     log q(y | x) = −(y − x − (ε²/2)G⁻¹∇(x))ᵀ G (…) / (2ε²) + const.
//   (MALA with step ε is HMC with one velocity-Verlet step of size ε — a check the tests use.)
// * ULA: the same move, always taken. It does NOT leave p(x) invariant: its stationary law is
//   biased by O(ε) (weak error; Durmus & Moulines 2017), so its estimates carry a bias no standard
//   error shows. Every ULA move still computes MALA's log α, reported as the energy error, so
//   users can see how far each move is from exactness. A move to a point where log p is not finite
//   is refused (counted as a divergence): the only deviation from the plain ULA recursion.

import { Philox, uniform } from '../core/rng';
import { normalsInto } from '../core/rng_normal';
import {
  Chain, MASS_DIAG, DIVERGENCE_THRESHOLD, density, velocity, inverseMassNoise, mulRT, chainSpare,
  resetInfo, recordInfo, acceptProposal, afterMove,
} from './hmc';
import { axpy } from './hmc_triangular';

/**
/** log p(x') of the last proposal. */
let lastLogp: f64 = 0;

/**
 * Builds x' = x + (ε²/2) G⁻¹∇(x) + ε ξ (ξ ~ N(0, G⁻¹) from the standard normal z, kz = |z|²) into c.xp,
 * evaluates log p and ∇ there (c.gp; π in the Relaxed header), and returns MALA's log α (NaN where
 * log p(x') is not finite).
 */
function propose(c: Chain, z: usize, kz: f64): f64 {
  const m = c.m;
  const mb = <usize>m << 3;
  const eps = c.eps;
  const h = 0.5 * eps * eps;
  inverseMassNoise(c, z, c.p); // ξ ~ N(0, G⁻¹)
  velocity(c, c.grad, c.v); // G⁻¹ ∇log p(x)
  memory.copy(c.xp, c.x, mb);
  axpy(c.xp, h, c.v, m);
  axpy(c.xp, eps, c.p, m);
  const lp1 = density(c, c.xp, c.gp);
  c.infoGrads += 1;
  lastLogp = lp1;
  if (!isFinite(lp1)) return NaN;
  velocity(c, c.gp, c.v); // G⁻¹ ∇log p(x')
  // d = x − x' − (ε²/2) G⁻¹∇(x'); the reverse proposal's exponent is dᵀ G d / (2ε²).
  memory.copy(c.p0, c.x, mb);
  axpy(c.p0, -1.0, c.xp, m);
  axpy(c.p0, -h, c.v, m);
  let quad = 0.0;
  if (c.massKind == MASS_DIAG) {
    for (let i = 0; i < m; i++) {
      const d = load<f64>(c.p0 + (<usize>i << 3));
      quad += (d * d) / load<f64>(c.invMass + (<usize>i << 3));
    }
  } else {
    mulRT(c, c.p0, c.w);
    for (let i = 0; i < m; i++) {
      const w = load<f64>(c.w + (<usize>i << 3));
      quad += w * w;
    }
  }
  return lp1 - c.logp - quad / (2.0 * eps * eps) + 0.5 * kz;
}

/** `iters` Langevin moves; adjusted = 1 for MALA, 0 for ULA. Flags as hmcStep. */
export function langevinStep(hdr: usize, iters: i32, flags: i32, adjusted: i32): void {
  const c = changetype<Chain>(hdr);
  const m = c.m;
  const r = changetype<Philox>(c.rng);
  const z = chainSpare(c);
  resetInfo(c);
  for (let it = 0; it < iters; it++) {
    let kz = 0.0;
    normalsInto(r, z, m, false);
    for (let i = 0; i < m; i++) {
      const zi = load<f64>(z + (<usize>i << 3));
      kz += zi * zi;
    }
    const logA = propose(c, z, kz);
    const lp1 = lastLogp;
    const dH = -logA;
    let divergent: bool, alpha: f64, accepted: bool;
    if (adjusted) {
      divergent = !isFinite(dH) || dH > DIVERGENCE_THRESHOLD;
      alpha = divergent ? 0.0 : (dH <= 0 ? 1.0 : Math.exp(-dH));
      accepted = !divergent && Math.log(uniform(r)) < logA;
    } else {
      divergent = !isFinite(lp1);
      alpha = divergent ? 0.0 : 1.0;
      accepted = !divergent;
    }
    if (accepted) acceptProposal(c, lp1);
    recordInfo(c, dH, divergent, alpha, accepted);
    afterMove(c, flags, alpha);
  }
}

/**
 * Test hook: MALA's log α for the proposal built from the chain's current x and the given standard
 * normal z (f64 × m); x' is copied into out (f64 × m). The chain's state is not changed.
 */
export function langevinLogAccept(hdr: usize, z: usize, out: usize): f64 {
  const c = changetype<Chain>(hdr);
  let kz = 0.0;
  for (let i = 0; i < c.m; i++) kz += load<f64>(z + (<usize>i << 3)) * load<f64>(z + (<usize>i << 3));
  const logA = propose(c, z, kz);
  memory.copy(out, c.xp, <usize>c.m << 3);
  return logA;
}
