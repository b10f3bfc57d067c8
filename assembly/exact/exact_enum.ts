// Exact inference by enumerating the configurations of some variables of a factor graph of any
// arity (assembly/core/factorgraph.ts); bindings/exact/enumeration.ts chooses the variables (one
// connected component at a time, observed variables held fixed) and prepares the buffers.
//
// Configurations are visited in reflected mixed-radix Gray-code order (one variable changes by ±1
// per step), so the log-potential φ(x) of the listed factors is updated from the changed
// variable's factors only: each factor's current table index is kept in `entry`, and moving x_u by
// Δ moves it by Δ · stride(u in f) (the incidence rows hold the strides). Zero potentials (−∞) are
// kept out of φ: z(x) counts the listed factors at a −∞ entry, so x has weight 0 exactly when
// z(x) > 0 and no −∞ ever enters the arithmetic.
//
// Numerics over up to 2^30 terms, unchanged from the pairwise kernel this replaces:
//  * the walk is cut into blocks (all configurations of the fastest `nb` digits, ≤ 2^12 of them);
//    φ and the entries are recomputed from scratch at each block start, so rounding drift spans one
//    block;
//  * weights are exp(φ − M) with a running shift M raised (rescaling everything accumulated) only
//    when φ exceeds M by more than 600: nothing overflows, and rescaling is rare;
//  * block sums are added into the totals with Neumaier compensation;
//  * node marginals: a variable fixed over the block gets the block sum; a fast digit's accumulator
//    receives (running block sum now − running block sum when its current value started), O(1) per
//    step.

import { FactorGraph, cardOf, factorEntry } from '../core/factorgraph';
import { ldi, sti, ldf, stf } from '../core/access';

const RESCALE_SLACK: f64 = 600;

// Neumaier-compensated s[i] += v (c holds the compensations).
// @ts-ignore: decorator
@inline function kadd(s: usize, c: usize, i: i32, v: f64): void {
  const a = ldf(s, i);
  const t = a + v;
  if (Math.abs(a) >= Math.abs(v)) stf(c, i, ldf(c, i) + ((a - t) + v));
  else stf(c, i, ldf(c, i) + ((v - t) + a));
  stf(s, i, t);
}

/**
 * Enumerates every configuration of the `nd` variables `digits` (fastest first; the first `nb`
 * form the block), the other variables held at their values in x, summing exp of the log-potential
 * of the `nf` factors listed in `factors` (they must include every factor containing a digit).
 * On entry the digits are 0 in x, `dir` (i32[nd]) is all +1, `marg` and `margC` (f64[Σ K]) are
 * zero; `entry` (i32[nFactors]) and `accBlk` (f64[Σ K]), `start` (f64[n]) are workspace. Variable
 * v's marginal entries are at off[v] … off[v] + K_v − 1. On return res (f64[4]) =
 * [M, S, S_compensation, blocks]: the sum is e^M (S + Sc), and digit v's marginal entry k is
 * (marg + margC)[off[v] + k] / (S + Sc).
 */
export function enumRun(
  hdr: usize, x: usize, nd: i32, digits: usize, dir: usize, nb: i32, nf: i32, factors: usize, entry: usize,
  off: usize, marg: usize, margC: usize, accBlk: usize, start: usize, res: usize,
): void {
  const g = changetype<FactorGraph>(hdr);
  const tables = g.tables;
  let M: f64 = -Infinity;
  let blocks: f64 = 0;
  store<f64>(res, 0, 8);
  store<f64>(res, 0, 16);

  while (true) {
    // Full recompute of φ, z and every listed factor's entry at the block start.
    let phi: f64 = 0;
    let z: i32 = 0;
    for (let q = 0; q < nf; q++) {
      const f = ldi(factors, q);
      const e = factorEntry(g, f, x);
      sti(entry, f, e);
      const t = ldf(tables, e);
      if (t == -Infinity) z++;
      else phi += t;
    }
    let sb: f64 = 0;
    for (let j = 0; j < nb; j++) {
      const v = ldi(digits, j);
      stf(start, v, 0);
      const o = ldi(off, v), k = cardOf(g, v);
      for (let t = 0; t < k; t++) stf(accBlk, o + t, 0);
    }

    let j = 0;
    while (true) {
      if (z == 0) {
        if (phi > M + RESCALE_SLACK) {
          if (M != -Infinity) {
            const r = Math.exp(M - phi);
            rescale(g, r, nd, digits, nb, off, marg, margC, accBlk, start, res);
            sb *= r;
          }
          M = phi;
        }
        sb += Math.exp(phi - M);
      }
      // Next Gray-code step: the lowest digit that can move in its direction moves; the ones below
      // it are at their ends and reverse.
      j = 0;
      while (j < nd) {
        const v = ldi(digits, j);
        const nx = ldi(x, v) + ldi(dir, j);
        if (nx >= 0 && nx < cardOf(g, v)) break;
        sti(dir, j, -ldi(dir, j));
        j++;
      }
      if (j >= nb) break;
      const u = ldi(digits, j);
      const old = ldi(x, u);
      const d = ldi(dir, j);
      const ou = ldi(off, u);
      stf(accBlk, ou + old, ldf(accBlk, ou + old) + (sb - ldf(start, u)));
      stf(start, u, sb);
      const end = ldi(g.incStart, u + 1);
      for (let q = ldi(g.incStart, u); q < end; q++) {
        const f = ldi(g.incFactor, q);
        const i0 = ldi(entry, f), i1 = i0 + d * ldi(g.incStride, q);
        sti(entry, f, i1);
        const t0 = ldf(tables, i0), t1 = ldf(tables, i1);
        if (t0 == -Infinity) z--;
        else phi -= t0;
        if (t1 == -Infinity) z++;
        else phi += t1;
      }
      sti(x, u, old + d);
    }

    // Flush the block into the compensated totals.
    for (let q = 0; q < nb; q++) {
      const v = ldi(digits, q);
      const o = ldi(off, v);
      const xv = ldi(x, v);
      stf(accBlk, o + xv, ldf(accBlk, o + xv) + (sb - ldf(start, v)));
      const k = cardOf(g, v);
      for (let t = 0; t < k; t++) kadd(marg, margC, o + t, ldf(accBlk, o + t));
    }
    for (let q = nb; q < nd; q++) {
      const v = ldi(digits, q);
      kadd(marg, margC, ldi(off, v) + ldi(x, v), sb);
    }
    kadd(res + 8, res + 16, 0, sb);
    blocks += 1;

    if (j >= nd) break;
    const v = ldi(digits, j);
    sti(x, v, ldi(x, v) + ldi(dir, j));
  }
  store<f64>(res, M);
  store<f64>(res, blocks, 24);
}

/** Multiplies everything accumulated so far (block partials and totals) by r (the shift M rose). */
function rescale(g: FactorGraph, r: f64, nd: i32, digits: usize, nb: i32, off: usize, marg: usize, margC: usize, accBlk: usize, start: usize, res: usize): void {
  for (let q = 0; q < nb; q++) {
    const v = ldi(digits, q);
    stf(start, v, ldf(start, v) * r);
    const o = ldi(off, v), k = cardOf(g, v);
    for (let t = 0; t < k; t++) stf(accBlk, o + t, ldf(accBlk, o + t) * r);
  }
  for (let q = 0; q < nd; q++) {
    const v = ldi(digits, q);
    const o = ldi(off, v), k = cardOf(g, v);
    for (let t = 0; t < k; t++) {
      stf(marg, o + t, ldf(marg, o + t) * r);
      stf(margC, o + t, ldf(margC, o + t) * r);
    }
  }
  stf(res, 1, ldf(res, 1) * r);
  stf(res, 2, ldf(res, 2) * r);
}
