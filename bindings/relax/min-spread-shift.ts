// The 'min-lambda-max' shift of the relaxation (bindings/relax/relaxation.ts): a per-bit d that
// minimises the spread λ_max(W + D) − λ_min(W + D), by L-BFGS on a smoothed spread. Every
// evaluation is one dense eigendecomposition in the engine (bindings/linalg/dense.ts).
import type { Engine } from '../core/engine.ts';
import { addDiagonal, symmetricEigen } from '../linalg/dense.ts';

// 'min-lambda-max'. min_d λ_max(W+D) s.t. λ_min(W+D) ≥ δ has the same minimisers (up to a constant) as
// the unconstrained min_d λ_max(W+D) − λ_min(W+D): any d can be shifted by a constant until
// λ_min = δ, which leaves the spread unchanged. The spread is convex in d but not smooth; we minimise
// its log-sum-exp smoothing  f_β(d) = β⁻¹ log Σ_k e^{βλ_k} + β⁻¹ log Σ_k e^{−βλ_k}  (an upper bound
// within 2 log(n)/β of the spread), with gradient ∂f/∂d_i = Σ_k (p_k − q_k) V_ik², p = softmax(βλ),
// q = softmax(−βλ), by L-BFGS with backtracking, for β increasing from 4 to 4·10⁴ over the initial
// spread, starting from a constant d. It keeps the d with the smallest true spread seen, so the
// result is never worse than the constant shift (which is optimal among constant shifts). Each step
// is one dense eigendecomposition, with a budget of min(400, 2·10⁸/n³) of them (a second or two):
// models up to MIN_LAMBDA_MAX_LIMIT bits. It is a heuristic — no optimality certificate (no SDP).

export function minSpreadShift(engine: Engine, W: Float64Array, n: number, delta: number): Float64Array {
  const evalAt = (d: Float64Array) => symmetricEigen(engine, addDiagonal(W, n, d), n, true);
  let d: Float64Array = new Float64Array(n);
  let best: Float64Array = d.slice();
  let cur = evalAt(d);
  let bestSpread = cur.values[n - 1] - cur.values[0];
  const spread0 = bestSpread;
  if (spread0 > 0 && n > 1) {
    // Evaluation budget ~ 2·10⁸/n³ (measured in JavaScript; less in the engine), split over the stages.
    const stages = [4, 40, 400, 4000, 40000];
    let budget = Math.min(400, Math.max(20, Math.floor(2e8 / (n * n * n))));
    const perStage = Math.max(4, Math.ceil(budget / stages.length));
    for (const c of stages) {
      const beta = c / spread0;
      const fg = (dd: Float64Array) => {
        const r = evalAt(dd);
        const lam = r.values;
        const top = lam[n - 1], bot = lam[0];
        let sp = 0, sq = 0;
        const p = new Float64Array(n), q = new Float64Array(n);
        for (let k = 0; k < n; k++) {
          p[k] = Math.exp(beta * (lam[k] - top));
          q[k] = Math.exp(-beta * (lam[k] - bot));
          sp += p[k];
          sq += q[k];
        }
        const f = top + Math.log(sp) / beta - bot + Math.log(sq) / beta;
        const g = new Float64Array(n);
        const V = r.vectors!;
        for (let k = 0; k < n; k++) {
          const wk = p[k] / sp - q[k] / sq;
          if (wk === 0) continue;
          for (let i = 0; i < n; i++) g[i] += wk * V[i * n + k] * V[i * n + k];
        }
        const spread = top - bot;
        if (spread < bestSpread) {
          bestSpread = spread;
          best = dd.slice();
        }
        return { f, g };
      };
      const used = lbfgs(fg, d, Math.min(budget, perStage), 1e-10 * spread0);
      budget -= used.evaluations;
      d = used.x;
      if (budget <= 0) break;
    }
  }
  cur = evalAt(best);
  const shift = delta - cur.values[0];
  for (let i = 0; i < n; i++) best[i] += shift;
  return best;
}

function lbfgs(fg: (x: Float64Array) => { f: number; g: Float64Array }, x0: Float64Array, maxEval: number, gtol: number): { x: Float64Array; evaluations: number } {
  const n = x0.length, mem = 8;
  let x: Float64Array = x0.slice();
  let { f, g } = fg(x);
  let evals = 1;
  const S: Float64Array[] = [], Y: Float64Array[] = [], R: number[] = [];
  while (evals < maxEval) {
    if (norm(g) <= gtol) break;
    // Two-loop recursion.
    const dir = g.slice();
    const al: number[] = [];
    for (let k = S.length - 1; k >= 0; k--) {
      const a = R[k] * dot(S[k], dir);
      al[k] = a;
      for (let i = 0; i < n; i++) dir[i] -= a * Y[k][i];
    }
    if (S.length) {
      const last = S.length - 1;
      const gamma = dot(S[last], Y[last]) / dot(Y[last], Y[last]);
      scale(dir, gamma);
    } else scale(dir, 1 / Math.max(norm(g), 1e-300));
    for (let k = 0; k < S.length; k++) {
      const b = R[k] * dot(Y[k], dir);
      for (let i = 0; i < n; i++) dir[i] += S[k][i] * (al[k] - b);
    }
    for (let i = 0; i < n; i++) dir[i] = -dir[i];
    let slope = dot(g, dir);
    if (!(slope < 0)) {
      for (let i = 0; i < n; i++) dir[i] = -g[i];
      slope = dot(g, dir);
      S.length = Y.length = R.length = 0;
    }
    let t = 1;
    let accepted = false;
    let xn = x, fn = f, gn = g;
    while (evals < maxEval) {
      xn = x.map((xi, i) => xi + t * dir[i]);
      const r = fg(xn);
      evals++;
      fn = r.f;
      gn = r.g;
      if (fn <= f + 1e-4 * t * slope) {
        accepted = true;
        break;
      }
      t *= 0.5;
      if (t < 1e-12) break;
    }
    if (!accepted) break;
    const s = xn.map((xi, i) => xi - x[i]);
    const y = gn.map((gi, i) => gi - g[i]);
    const sy = dot(s, y);
    if (sy > 1e-300) {
      S.push(s);
      Y.push(y);
      R.push(1 / sy);
      if (S.length > mem) {
        S.shift();
        Y.shift();
        R.shift();
      }
    }
    const progress = f - fn;
    x = xn;
    f = fn;
    g = gn;
    if (progress <= 1e-13 * Math.max(1, Math.abs(f))) break;
  }
  return { x, evaluations: evals };
}

function dot(x: Float64Array, y: Float64Array): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i] * y[i];
  return s;
}
function norm(x: Float64Array): number {
  return Math.sqrt(dot(x, x));
}
function scale(x: Float64Array, c: number): void {
  for (let i = 0; i < x.length; i++) x[i] *= c;
}
