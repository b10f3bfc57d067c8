// Exact inference by enumerating every configuration (bindings/exact.ts prepares the buffers).
//
// Configurations are visited in reflected mixed-radix Gray-code order (one variable changes by ±1 per
// step), so the log-potential φ(x) is updated incrementally from the changed variable's unary table and
// its incident pairwise tables. Zero potentials are kept out of φ: each table is split into a finite part
// F (−∞ → 0) and a zero flag Z, and z(x) counts the zero factors of x, so x has weight 0 exactly when
// z(x) > 0 and no −∞ ever enters the arithmetic.
//
// Numerics at 2^30 terms:
//  * the walk is cut into blocks (all configurations of the fastest `nb` digits, ≤ 2^12 of them);
//    φ is recomputed from scratch at each block start, so incremental rounding drift spans one block;
//  * weights are exp(φ − M) with a running shift M that is raised (rescaling everything accumulated)
//    only when φ exceeds M by more than 600, so nothing overflows and rescaling is rare;
//  * a block's weights are summed into a block partial sum, and block sums are added into the totals
//    with Neumaier compensation;
//  * node marginals: a variable that stays fixed over the block gets the block sum; for the fast digits,
//    a variable's accumulator receives (running block sum now − running block sum when its current value
//    started), so each step costs O(1) for marginals instead of O(n).
//
// Layout: all unary tables first (variable v at offset off[v] = Σ_{u<v} K_u, the same offsets index the
// marginal accumulators), then the pairwise tables. Adjacency (CSR, both directions): for each incident
// edge, the neighbour, the table base and the strides of this variable and of the neighbour.

const RESCALE_SLACK: f64 = 600;

// @ts-ignore: decorator
@inline function ldi(p: usize, i: i32): i32 {
  return load<i32>(p + (<usize>i << 2));
}
// @ts-ignore: decorator
@inline function ldf(p: usize, i: i32): f64 {
  return load<f64>(p + (<usize>i << 3));
}
// @ts-ignore: decorator
@inline function stf(p: usize, i: i32, v: f64): void {
  store<f64>(p + (<usize>i << 3), v);
}

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
 * Runs the whole enumeration. `x` (i32[n]) must be zero and `dir` (i32[nd]) all +1 on entry;
 * `marg`, `margC` (f64[ΣK]) zero. `digits` lists the variables with K > 1, fastest first; the first `nb`
 * form the block. On return res (f64[4]) = [M, S, S_compensation, blocks]: Z·e^{−logConst} = e^M (S + Sc),
 * and marginal entry i is (marg[i] + margC[i]) / (S + Sc). `accBlk` (f64[ΣK]) and `start` (f64[n]) are
 * workspace.
 */
export function enumRun(
  n: i32, card: usize, off: usize, x: usize, nd: i32, digits: usize, dir: usize, nb: i32,
  F: usize, Z: usize, adjStart: usize, adjNbr: usize, adjBase: usize, adjSu: usize, adjSw: usize,
  marg: usize, margC: usize, accBlk: usize, start: usize, res: usize,
): void {
  let M: f64 = -Infinity;
  let blocks: f64 = 0;
  store<f64>(res, 0);
  store<f64>(res, 0, 8);
  let totalEntries = 0;
  for (let v = 0; v < n; v++) totalEntries += ldi(card, v);

  while (true) {
    // Full recompute of φ and z at the block start.
    let phi: f64 = 0;
    let z: i32 = 0;
    for (let v = 0; v < n; v++) {
      const xv = ldi(x, v);
      const iu = ldi(off, v) + xv;
      phi += ldf(F, iu);
      z += ldi(Z, iu);
      const e1 = ldi(adjStart, v + 1);
      for (let e = ldi(adjStart, v); e < e1; e++) {
        const w = ldi(adjNbr, e);
        if (w <= v) continue;
        const idx = ldi(adjBase, e) + xv * ldi(adjSu, e) + ldi(x, w) * ldi(adjSw, e);
        phi += ldf(F, idx);
        z += ldi(Z, idx);
      }
    }
    let sb: f64 = 0;
    for (let j = 0; j < nb; j++) {
      const v = ldi(digits, j);
      stf(start, v, 0);
      const o = ldi(off, v), k = ldi(card, v);
      for (let t = 0; t < k; t++) stf(accBlk, o + t, 0);
    }

    let j = 0;
    while (true) {
      if (z == 0) {
        if (phi > M + RESCALE_SLACK) {
          if (M != -Infinity) {
            const r = Math.exp(M - phi);
            sb *= r;
            for (let q = 0; q < nb; q++) {
              const v = ldi(digits, q);
              stf(start, v, ldf(start, v) * r);
              const o = ldi(off, v), k = ldi(card, v);
              for (let t = 0; t < k; t++) stf(accBlk, o + t, ldf(accBlk, o + t) * r);
            }
            for (let i = 0; i < totalEntries; i++) {
              stf(marg, i, ldf(marg, i) * r);
              stf(margC, i, ldf(margC, i) * r);
            }
            stf(res, 1, ldf(res, 1) * r);
            stf(res, 2, ldf(res, 2) * r);
          }
          M = phi;
        }
        sb += Math.exp(phi - M);
      }
      // Next Gray-code step: the lowest digit that can move in its direction moves; the ones below it
      // are at their ends and reverse.
      j = 0;
      while (j < nd) {
        const v = ldi(digits, j);
        const nx = ldi(x, v) + ldi(dir, j);
        if (nx >= 0 && nx < ldi(card, v)) break;
        store<i32>(dir + (<usize>j << 2), -ldi(dir, j));
        j++;
      }
      if (j >= nb) break;
      const u = ldi(digits, j);
      const old = ldi(x, u);
      const nw = old + ldi(dir, j);
      const ou = ldi(off, u);
      stf(accBlk, ou + old, ldf(accBlk, ou + old) + (sb - ldf(start, u)));
      stf(start, u, sb);
      phi += ldf(F, ou + nw) - ldf(F, ou + old);
      z += ldi(Z, ou + nw) - ldi(Z, ou + old);
      const e1 = ldi(adjStart, u + 1);
      for (let e = ldi(adjStart, u); e < e1; e++) {
        const base = ldi(adjBase, e) + ldi(x, ldi(adjNbr, e)) * ldi(adjSw, e);
        const su = ldi(adjSu, e);
        const i0 = base + old * su, i1 = base + nw * su;
        phi += ldf(F, i1) - ldf(F, i0);
        z += ldi(Z, i1) - ldi(Z, i0);
      }
      store<i32>(x + (<usize>u << 2), nw);
    }

    // Flush the block into the compensated totals.
    for (let q = 0; q < nb; q++) {
      const v = ldi(digits, q);
      const o = ldi(off, v);
      const xv = ldi(x, v);
      stf(accBlk, o + xv, ldf(accBlk, o + xv) + (sb - ldf(start, v)));
      const k = ldi(card, v);
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
    store<i32>(x + (<usize>v << 2), ldi(x, v) + ldi(dir, j));
  }
  store<f64>(res, M);
  store<f64>(res, blocks, 24);
}
