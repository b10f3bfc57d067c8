// Martens & Sutskever (2010) §6: a two-variable model on which block Gibbs through the Gaussian units
// mixes far slower than sequential Gibbs (SGS), and, beside it, a symmetric two-mode pair on which
// the comparison is the other way round.
//
//   "failure":  p(x1, x2) ∝ exp(x1 t²/2 + x2 t² − x1 x2 t²)   (mass at (0, 1); chains start at (1, 0))
//               Martens' factor M = t·[[1, 0], [−1, 1]], d = (t², 2t²) (M Mᵀ = W + diag(d)), and ours:
//               d = α·1 with α = (1 + ε)·(−λ_min(W)) = 1.01 t².
//   "two modes": p(x1, x2) ∝ exp(t² x1 x2 − t²/2 (x1 + x2))  (equal mass at (0, 0) and (1, 1); start (1, 1))
//
// For each t, N chains start at the same state; after k steps the total-variation distance between
// the chains' empirical distribution over the four states (from E[x1], E[x2], E[x1 x2]) and the exact
// one, for SGS, block Gibbs (both factors for the first model) and DHMC (5 leapfrog steps, step size
// adapted to 0.9 acceptance over a separate warm-up). The noise floor of the distance is ≈ 1/√N.
//
// Usage: node --import tsx bench/experiments/martens-failure.ts [--quick]  → bench/results/martens-failure.json
import { writeFileSync } from 'node:fs';
import { loadEngine } from '../../bindings/core/wasm-node.ts';
import { BoundMachine, machinePairs, type MachineParams } from '../../bindings/learn/machine.ts';
import { ParticleKernel, type LearnSampler } from '../../bindings/learn/particles.ts';
import { seedWords } from '../../bindings/core/seed.ts';
import { QUICK, resultsPath } from '../common.ts';

const engine = await loadEngine();
const N = QUICK ? 2000 : 5000, STEPS = QUICK ? 100 : 500, TS = QUICK ? [1, 3] : [1, 2, 3, 4];
const CHECKS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000].filter((k) => k <= STEPS);

function machine(a1: number, a2: number, w: number): MachineParams {
  return { kind: 'boltzmann', nVisible: 2, nHidden: 0, states: 2, a: Float64Array.of(a1, a2), w: Float64Array.of(w), pairs: machinePairs('boltzmann', 2, 0) };
}

/** Exact probabilities of (0,0), (1,0), (0,1), (1,1). */
function exact(p: MachineParams): number[] {
  const lw = [0, p.a[0], p.a[1], p.a[0] + p.a[1] + p.w[0]], mx = Math.max(...lw);
  const e = lw.map((v) => Math.exp(v - mx)), z = e.reduce((s, v) => s + v, 0);
  return e.map((v) => v / z);
}

/** TV distance after each checkpoint for N chains started at `start` (bits x1, x2). */
function run(p: MachineParams, sampler: LearnSampler, start: [number, number], factor: { M: number[]; d: number[] } | null): { k: number; tv: number }[] {
  const m = new BoundMachine(engine, 'boltzmann', 2, 0);
  try {
    m.set(p);
    const kernel = new ParticleKernel(engine, m, sampler, { shiftEpsilon: 0.01 });
    if (factor) kernel.layer!.setFactor(factor.M, factor.d);
    const k = engine.kernels, ar = m.arena, pb = k.learnParticleBytes(m.header) >>> 0, rb = k.rngStateBytes() >>> 0;
    const particles = ar.alloc(N * pb), sa = ar.allocF64(2), sw = ar.allocF64(2), x = ar.alloc(k.learnAccumulateScratchBytes(m.header) >>> 0);
    const [lo, hi] = seedWords(7);
    const place = () => {
      const mem = new Uint8Array(k.memory.buffer);
      for (let c = 0; c < N; c++) mem.set(start, particles + c * pb + rb);
    };
    kernel.advance(particles, 0, 1, true);
    if (sampler === 'dhmc') {
      // Warm-up for the step size on separate chains from the exact distribution's start, then frozen.
      k.learnParticlesInit(m.header, particles, N, lo, hi, 1000, 31);
      for (let i = 0; i < 20; i++) kernel.advance(particles, Math.min(N, 2000), 5, false);
    }
    k.learnParticlesInit(m.header, particles, N, lo, hi, 0, 31);
    place();
    const q = exact(p), out: { k: number; tv: number }[] = [];
    for (let t = 1; t <= STEPS; t++) {
      kernel.advance(particles, N, 1, false, false);
      if (!CHECKS.includes(t)) continue;
      k.learnAccumulate(m.header, particles + rb, pb, 0, N, 2, sa, sw, x);
      const [e1, e2] = ar.readF64(sa, 2), e12 = ar.readF64(sw, 1)[0];
      ar.f64(sa, 2).fill(0);
      ar.f64(sw, 2).fill(0);
      const emp = [N - e1 - e2 + e12, e1 - e12, e2 - e12, e12].map((v) => v / N);
      out.push({ k: t, tv: 0.5 * emp.reduce((s, v, i) => s + Math.abs(v - q[i]), 0) });
    }
    return out;
  } finally {
    m.dispose();
  }
}

const results: unknown[] = [];
const at = (r: { k: number; tv: number }[], k: number) => r.find((e) => e.k === k)?.tv ?? NaN;
for (const t of TS) {
  const t2 = t * t;
  const fail = machine(t2 / 2, t2, -t2), modes = machine(-t2 / 2, -t2 / 2, t2);
  const martensFactor = { M: [t, 0, -t, t], d: [t2, 2 * t2] };
  const rows: Record<string, { k: number; tv: number }[]> = {
    'failure: SGS': run(fail, 'gibbs', [1, 0], null),
    "failure: block Gibbs, Martens' d": run(fail, 'blockgibbs', [1, 0], martensFactor),
    'failure: block Gibbs, α = 1.01 t²': run(fail, 'blockgibbs', [1, 0], null),
    'failure: DHMC, α = 1.01 t²': run(fail, 'dhmc', [1, 0], null),
    'two modes: SGS': run(modes, 'gibbs', [1, 1], null),
    'two modes: block Gibbs, α = 1.01 t²': run(modes, 'blockgibbs', [1, 1], null),
    'two modes: DHMC, α = 1.01 t²': run(modes, 'dhmc', [1, 1], null),
  };
  console.log(`t = ${t}: exact p(1,0) = ${exact(fail)[1].toExponential(2)} (failure model); TV distance to exact after 1 / 10 / 100 / ${STEPS} steps (floor ≈ ${(1 / Math.sqrt(N)).toFixed(3)}):`);
  for (const [name, r] of Object.entries(rows)) console.log(`  ${name.padEnd(36)} ${[1, 10, 100, STEPS].map((k) => at(r, k).toFixed(3)).join(' / ')}`);
  results.push({ t, exactFailure: exact(fail), exactModes: exact(modes), tv: rows });
}
writeFileSync(resultsPath('martens-failure.json'), JSON.stringify({ experiment: 'Martens & Sutskever 2010 §6', quick: QUICK, date: new Date().toISOString(), chains: N, steps: STEPS, results }, null, 1));
