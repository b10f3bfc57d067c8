// The FFT factor: M = √(W + dI) by FFT on periodic lattices. Checked against dense linear algebra.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { isingLattice, ising } from '../bindings/core/builders.ts';
import { toCanonical, type CanonicalForm } from '../bindings/core/canonical.ts';
import { fftFactor, latticeSpectrum, translationKernel, withFFT } from '../bindings/relax/fft-factor.ts';
import { BoundRelaxation } from '../bindings/relax/relaxation-bound.ts';
import { ModelError } from '../bindings/core/errors.ts';
import { mulberry32 } from './helpers.ts';

const engine = await loadEngine();

function denseW(form: CanonicalForm): Float64Array {
  const n = form.nBits, W = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let k = form.rowPtr[i]; k < form.rowPtr[i + 1]; k++) W[i * n + form.col[k]] = form.val[k];
  return W;
}

/** A periodic lattice with couplings of longer range: every pair at displacement r gets w(r). */
function longRangeTorus(shape: number[], seed: number) {
  const rand = mulberry32(seed);
  const n = shape.reduce((p, L) => p * L, 1);
  const coords = (i: number) => shape.map((_, d) => Math.floor(i / shape.slice(d + 1).reduce((p, L) => p * L, 1)) % shape[d]);
  const w = new Map<string, number>();
  const key = (c: number[]) => c.map((x, d) => Math.min(x, shape[d] - x)).join(','); // w(r) = w(−r)
  const couplings: [number, number, number][] = [];
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const ci = coords(i), cj = coords(j);
      const r = cj.map((x, d) => (x - ci[d] + shape[d]) % shape[d]);
      const k = key(r);
      if (!w.has(k)) w.set(k, rand() < 0.6 ? rand() - 0.5 : 0);
      if (w.get(k)) couplings.push([i, j, w.get(k)!]);
    }
  }
  return ising({ n, couplings, h: 0.2 });
}

function applyM(rel: BoundRelaxation, x: Float64Array): Float64Array {
  const a = rel.arena, xp = a.allocF64(x), up = a.allocF64(x.length);
  engine.kernels.factorMul(rel.factor, xp, up);
  return a.readF64(up, x.length);
}

for (const [name, model, shape] of [
  ['1-D ring of 16, nearest neighbours', isingLattice({ shape: [16], periodic: true, J: 0.7, h: 0.1 }), [16]],
  ['8×8 torus, nearest neighbours', isingLattice({ shape: [8, 8], periodic: true, J: -0.4 }), [8, 8]],
  ['4×4×4 torus, nearest neighbours', isingLattice({ shape: [4, 4, 4], periodic: true, J: 0.3 }), [4, 4, 4]],
  ['4×8 torus, couplings of every range', longRangeTorus([4, 8], 3), [4, 8]],
  ['8×4×2 torus, couplings of every range', longRangeTorus([8, 4, 2], 4), [8, 4, 2]],
] as const) {
  test(`FFT factor on a ${name}: M Mᵀ = W + dI, M symmetric`, () => {
    const form = toCanonical(model);
    const n = form.nBits;
    const { lambdaMin } = latticeSpectrum(engine, form, [...shape]);
    const d = Math.max(0, -lambdaMin) * 1.01 + 0.05;
    const { factor: f2 } = fftFactor(engine, form, [...shape], d);
    const rel = new BoundRelaxation(engine, { form, d: new Float64Array(n).fill(d), factor: f2 });
    // Columns of M from unit vectors; then M Mᵀ against W + dI entry by entry.
    const M = new Float64Array(n * n);
    for (let j = 0; j < n; j++) {
      const e = new Float64Array(n);
      e[j] = 1;
      const col = applyM(rel, e);
      for (let i = 0; i < n; i++) M[i * n + j] = col[i];
    }
    const W = denseW(form);
    let worst = 0;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        assert.ok(Math.abs(M[i * n + j] - M[j * n + i]) < 1e-12, 'M is symmetric');
        let s = 0;
        for (let k = 0; k < n; k++) s += M[i * n + k] * M[j * n + k];
        worst = Math.max(worst, Math.abs(s - (W[i * n + j] + (i === j ? d : 0))));
      }
    }
    assert.ok(worst < 1e-10, `max |M Mᵀ − (W + dI)| = ${worst}`);
    // λ_min from the FFT equals the dense one: W + (d − ε) I stops being PD just below −λ_min.
    assert.throws(() => fftFactor(engine, form, [...shape], -lambdaMin - 1e-9), /not positive definite/);
    rel.dispose();
  });
}

test('the relaxed density does not depend on the storage: FFT and the same M stored densely agree', () => {
  const model = isingLattice({ shape: [8, 8], periodic: true, J: 0.4, h: 0.15 });
  const form = toCanonical(model);
  const n = form.nBits;
  const d = -latticeSpectrum(engine, form, [8, 8]).lambdaMin + 0.5;
  const { factor } = fftFactor(engine, form, [8, 8], d);
  const fftRel = new BoundRelaxation(engine, { form, d: new Float64Array(n).fill(d), factor });
  const values = new Float64Array(n * n);
  for (let j = 0; j < n; j++) {
    const e = new Float64Array(n);
    e[j] = 1;
    applyM(fftRel, e).forEach((v, i) => (values[i * n + j] = v));
  }
  const denseRel = new BoundRelaxation(engine, { form, d: new Float64Array(n).fill(d), factor: { kind: 'dense', n, m: n, values } });
  const rand = mulberry32(9);
  for (let t = 0; t < 5; t++) {
    const x = Float64Array.from({ length: n }, () => 2 * rand() - 1);
    const a = fftRel.logDensity(x), b = denseRel.logDensity(x);
    assert.ok(Math.abs(a.logp - b.logp) < 1e-9 * Math.abs(b.logp));
    a.grad.forEach((g, i) => assert.ok(Math.abs(g - b.grad[i]) < 1e-9));
  }
  fftRel.dispose();
  denseRel.dispose();
});

test('translation invariance is checked; non-power-of-two sides are refused', () => {
  const rand = mulberry32(1);
  const varied = isingLattice({ shape: [4, 4], periodic: true, J: () => rand() });
  assert.match(String(translationKernel(toCanonical(varied), [4, 4])), /differs from the same displacement/);
  assert.throws(() => fftFactor(engine, toCanonical(varied), [4, 4], 1), (e: unknown) => e instanceof ModelError && /no FFT factor/.test((e as Error).message));
  const open = isingLattice({ shape: [4, 4], J: 1 });
  assert.match(String(translationKernel(toCanonical(open), [4, 4])), /couplings/);
  const six = isingLattice({ shape: [6], periodic: true });
  assert.throws(() => fftFactor(engine, toCanonical(six), [6], 3), /power-of-two/);
});

test('the FFT matches a direct DFT of a random real array (2-D)', () => {
  const shape = [8, 4], n = 32;
  const rand = mulberry32(5);
  const x = Float64Array.from({ length: n }, () => rand() - 0.5);
  const re = withFFT(engine, shape, null, (hdr, arena) => {
    const xp = arena.allocF64(x), out = arena.allocF64(n);
    engine.kernels.fftFactorForwardReal(hdr, xp, out);
    return arena.readF64(out, n);
  });
  for (let k0 = 0; k0 < 8; k0++) {
    for (let k1 = 0; k1 < 4; k1++) {
      let s = 0;
      for (let a = 0; a < 8; a++) for (let b = 0; b < 4; b++) s += x[a * 4 + b] * Math.cos(2 * Math.PI * (k0 * a / 8 + k1 * b / 4));
      assert.ok(Math.abs(re[k0 * 4 + k1] - s) < 1e-12, `k = (${k0}, ${k1})`);
    }
  }
});

test('the real-input FFT path (two rows per complex transform, half spectra) equals the complex path', () => {
  const cases: [string, number[], ReturnType<typeof ising>][] = [
    ['ring of 2', [2], longRangeTorus([2], 11)],
    ['ring of 32', [32], isingLattice({ shape: [32], periodic: true, J: 0.3 })],
    ['2×8 torus', [2, 8], longRangeTorus([2, 8], 12)],
    ['8×2 torus', [8, 2], longRangeTorus([8, 2], 13)],
    ['16×32 torus', [16, 32], isingLattice({ shape: [16, 32], periodic: true, J: -0.2 })],
    ['4×2×8 torus', [4, 2, 8], longRangeTorus([4, 2, 8], 14)],
    ['8×8×4 torus', [8, 8, 4], isingLattice({ shape: [8, 8, 4], periodic: true, J: 0.25 })],
  ];
  const rand = mulberry32(21);
  for (const [name, shape, model] of cases) {
    const form = toCanonical(model);
    const n = form.nBits;
    const d = Math.max(0, -latticeSpectrum(engine, form, shape).lambdaMin) + 0.3;
    const { factor } = fftFactor(engine, form, shape, d);
    const rel = new BoundRelaxation(engine, { form, d: new Float64Array(n).fill(d), factor });
    for (let t = 0; t < 3; t++) {
      const x = Float64Array.from({ length: n }, () => 2 * rand() - 1);
      const a = rel.arena, xp = a.allocF64(x), up = a.allocF64(n), cp = a.allocF64(n);
      engine.kernels.factorMul(rel.factor, xp, up);
      engine.kernels.fftFactorApplyComplex(rel.factor, xp, cp);
      const real = a.readF64(up, n), complex = a.readF64(cp, n);
      let worst = 0, scale = 0;
      for (let i = 0; i < n; i++) {
        worst = Math.max(worst, Math.abs(real[i] - complex[i]));
        scale = Math.max(scale, Math.abs(complex[i]));
      }
      assert.ok(worst <= 1e-10 * Math.max(1, scale), `${name}: max |real − complex| = ${worst}`);
      // x untouched (the real path reads it before writing u).
      assert.deepEqual(a.readF64(xp, n), x);
    }
    rel.dispose();
  }
});
