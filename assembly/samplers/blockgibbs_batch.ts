// Block Gibbs (blockgibbs.ts) for a batch of chains on one relaxation: per sweep one batched product
// U = M X for every chain's π(x) and one G = Mᵀ S for every chain's x | s (relax/factor_batch.ts, X and
// S of m × B and n × B, chains innermost); the draws of s and of the noise come from each chain's own
// stream, in the single-chain order. Chain b is blockGibbsSweeps on the same state, bit for bit. A factor
// without batched products (FFT) runs the chains one after another.

import { Philox } from '../core/rng';
import { Relaxed, conditionalsFromU } from '../relax/relaxed';
import { sigmoidBatch } from '../relax/relaxed_batch';
import { Factor } from '../relax/factor';
import { factorBatchable, factorApplyBatch, factorApplyTBatch } from '../relax/factor_batch';
import { xOffset, sOffset, drawS, addInto, blockGibbsSweeps } from './blockgibbs';
import { normalsInto, bulkWords, bulkWordsAt, uniform32Of } from '../core/rng_normal';

/** Bytes of a batch's scratch: X / G (m × B) and U / S (n × B). */
export function blockGibbsBatchScratchBytes(relaxed: usize, B: i32): usize {
  const r = changetype<Relaxed>(relaxed);
  return (<usize>B * <usize>(r.m + r.nBits)) << 3;
}

/**
 * `sweeps` sweeps of each of the B chains whose states are at chains (usize × B). acc: 0, or the chains'
 * accumulators one after another (f64 × nBits each); changed: f64 × B, each chain's number of variable
 * changes (as blockGibbsSweeps returns).
 */
export function blockGibbsBatchStep(relaxed: usize, chains: usize, B: i32, sweeps: i32, acc: usize, changed: usize, scratch: usize): void {
  const r = changetype<Relaxed>(relaxed);
  const f = changetype<Factor>(r.factor);
  const n = r.nBits, m = r.m;
  const accBytes = <usize>n << 3;
  if (!factorBatchable(f)) {
    for (let b = 0; b < B; b++) {
      const chain = load<usize>(chains + (<usize>b << 2));
      store<f64>(changed + (<usize>b << 3), blockGibbsSweeps(r, chain, sweeps, acc ? acc + <usize>b * accBytes : 0));
    }
    return;
  }
  const stride = <usize>B << 3;
  const X = scratch, U = scratch + <usize>m * stride;
  const xo = xOffset(), so = sOffset(r);
  for (let b = 0; b < B; b++) store<f64>(changed + (<usize>b << 3), 0);
  // X holds the chains' x at the start of every sweep (the end of a sweep writes it back).
  for (let b = 0; b < B; b++) {
    const x = load<usize>(chains + (<usize>b << 2)) + xo;
    let q = X + (<usize>b << 3);
    for (let k = 0; k < m; k++, q += stride) store<f64>(q, load<f64>(x + (<usize>k << 3)));
  }
  for (let t = 0; t < sweeps; t++) {
    factorApplyBatch(f, X, U, B);
    if (r.allFree) sigmoidBatch(r, U, B);
    for (let b = 0; b < B; b++) {
      if (r.allFree) {
        // drawS's free-bit draw on π in place, s into its column (S, in Π's place).
        const chain = load<usize>(chains + (<usize>b << 2));
        const rng = changetype<Philox>(chain);
        const s = chain + so, ab = acc + <usize>b * accBytes;
        let q = U + (<usize>b << 3);
        let ch = 0;
        let i = 0;
        while (i < n) {
          const got = bulkWords(rng, n - i);
          for (let j = 0; j < got; j++, i++, q += stride) {
            const p = load<f64>(q);
            if (acc) store<f64>(ab + (<usize>i << 3), load<f64>(ab + (<usize>i << 3)) + p);
            const bit: f64 = uniform32Of(load<u32>(bulkWordsAt + (<usize>j << 2))) < p ? 1.0 : 0.0;
            const qs = s + (<usize>i << 3);
            ch += <i32>(bit != load<f64>(qs));
            store<f64>(qs, bit);
            store<f64>(q, bit);
          }
        }
        const qc = changed + (<usize>b << 3);
        store<f64>(qc, load<f64>(qc) + <f64>ch);
        continue;
      }
      const chain = load<usize>(chains + (<usize>b << 2));
      let q = U + (<usize>b << 3);
      for (let i = 0; i < n; i++, q += stride) store<f64>(r.u + (<usize>i << 3), load<f64>(q));
      const st = conditionalsFromU(r, r.u, r.prob, false, 0.0);
      if (st == -Infinity) abort('block Gibbs: p(x) is 0 (a variable with no possible state)');
      if (acc) addInto(acc + <usize>b * accBytes, r.prob, n);
      const s = chain + so;
      const qc = changed + (<usize>b << 3);
      store<f64>(qc, load<f64>(qc) + <f64>drawS(r, changetype<Philox>(chain), s));
      q = U + (<usize>b << 3);
      for (let i = 0; i < n; i++, q += stride) store<f64>(q, load<f64>(s + (<usize>i << 3)));
    }
    factorApplyTBatch(f, U, X, B);
    for (let b = 0; b < B; b++) {
      const chain = load<usize>(chains + (<usize>b << 2));
      const rng = changetype<Philox>(chain);
      const x = chain + xo;
      // x = Mᵀ s + z (blockgibbs.ts's drawX: the same sum per entry), into the chain and its column of X.
      normalsInto(rng, x, m, false);
      let q = X + (<usize>b << 3);
      for (let k = 0; k < m; k++, q += stride) {
        const xk = load<f64>(q) + load<f64>(x + (<usize>k << 3));
        store<f64>(x + (<usize>k << 3), xk);
        store<f64>(q, xk);
      }
    }
  }
}
