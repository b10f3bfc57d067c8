import { metropolis } from '../exact/exact_tree';

// The order searches' shortcuts must give what the plain computations give, or no plan would be
// the same as before: the contraction-tree annealing's Metropolis test decides uphill moves with
// few logs and exps (bounds on the draw first), exactly as the plain comparison u < exp(−β·delta)
// with delta = log2 q when no penalty changes; and the order costs build 2^x from its bits for a
// whole x, which is Math.exp2's value there.

let state: u32 = 12345;
function next(): u32 {
  state = state * 1664525 + 1013904223;
  return state;
}
/** A draw as the sweep makes them: a 32-bit integer over 2^32. */
function draw(k: u32): f64 {
  return <f64>k * 2.3283064365386963e-10;
}

function plainRule(u: f64, q: f64, beta: f64): bool {
  return u < Math.exp(-beta * Math.log2(q));
}

describe('tree annealing: the Metropolis test', () => {
  it('decides every uphill move as u < exp(−β·log2 q) does, without penalties', () => {
    const betas: f64[] = [0.5, 0.9, 1, 2.5, 7, 30];
    let differing = 0, checked = 0;
    for (let i = 0; i < 200000; i++) {
      // Ratios just past 1, around powers of two, and far out; draws anywhere, small ones often.
      const e = <i32>(next() % 60) - 1;
      const m = 1 + draw(next());
      let q = e < 0 ? 1 + draw(next() & 0xff) * 1e-9 : m * Math.pow(2, <f64>e);
      if (q <= 1) q = 1.0000000000000002;
      const k = next();
      const u = (i & 3) == 0 ? draw(k >>> (next() % 32)) : draw(k);
      const beta = betas[i % betas.length];
      if (metropolis(u, q, 0, true, beta) != plainRule(u, q, beta)) differing++;
      checked++;
    }
    // At the bound itself: u = 2^−k and its neighbours for ratios that are powers of two.
    for (let e = 1; e < 40; e++) {
      const q = Math.pow(2, <f64>e);
      for (let j = 0; j < betas.length; j++) {
        const x = Math.exp(-betas[j] * Math.log2(q));
        const us: f64[] = [x, x * (1 + 2.220446049250313e-16), x * (1 - 1.1102230246251565e-16), 0, Math.pow(2, -<f64>e)];
        for (let t = 0; t < us.length; t++) {
          if (metropolis(us[t], q, 0, true, betas[j]) != plainRule(us[t], q, betas[j])) differing++;
          checked++;
        }
      }
    }
    expect(differing).toBe(0);
    expect(checked).toBeGreaterThan(200000);
  });

  it('decides as u < exp(−β·delta) with penalties, also at infinite ratios', () => {
    let differing = 0;
    for (let i = 0; i < 100000; i++) {
      const delta = draw(next()) * <f64>(1 + (next() % 64));
      const u = (i & 1) == 0 ? draw(next()) : draw(next() >>> (next() % 32));
      const beta = 0.5 + draw(next()) * 30;
      if (metropolis(u, 2, delta, false, beta) != u < Math.exp(-beta * delta)) differing++;
    }
    const inf = Infinity;
    const us: f64[] = [0, draw(1), 0.5];
    for (let t = 0; t < us.length; t++) if (metropolis(us[t], inf, 0, true, 1) != plainRule(us[t], inf, 1)) differing++;
    expect(differing).toBe(0);
  });
});

describe('order costs: 2^x from its bits', () => {
  it('is Math.exp2 at every whole x of the normal range', () => {
    let differing = 0;
    for (let k = -1022; k <= 1023; k++) if (Math.exp2(<f64>k) != reinterpret<f64>(<u64>(k + 1023) << 52)) differing++;
    expect(differing).toBe(0);
  });
});
