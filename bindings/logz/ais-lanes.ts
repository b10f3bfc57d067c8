// AIS runs and population-annealing particles in SIMD lanes (assembly/logz/ais_lanes.ts): runs go
// through the schedule in batches of up to LANES_BATCH, a population as one batch, each chain in an
// f64x2 lane with its own stream (seed, run) — the stream the one-chain kernels give run r — so the
// log weights and population estimates are those of the one-chain kernels, bit for bit; lanes only
// change the speed. `precision: 'f32'` (opt-in) runs four chains a vector in single precision:
// other chains with the same targets (the weights' energies stay f64). Free-bit forms with finite tables only (`lanesApply`); runAIS keeps the
// one-chain kernels for the rest and when `lanes: false`.

import type { Arena, Engine } from '../core/engine.ts';
import type { CanonicalForm } from '../core/canonical.ts';
import type { BoundModel } from '../core/bound.ts';
import type { BoundTreeBlocks } from '../samplers/treegibbs.ts';
import { EngineError } from '../core/errors.ts';

/** Runs per batch of independent AIS runs (an even number: two lanes a vector). */
export const LANES_BATCH = 64;

export { lanesApply } from '../samplers/gibbs-lanes.ts';

/** The pieces of a bound AIS setup the lanes runs use. */
export interface LanesSetup {
  engine: Engine;
  arena: Arena;
  bound: BoundModel;
  /** The tempered copy of the form (rewritten at each β). */
  tempered: number;
  /** Tree-block transitions, or null for single-site Gibbs. */
  tree: BoundTreeBlocks | null;
  seedLo: number;
  seedHi: number;
  /** Tag of the chains' streams. */
  stream: number;
  sweepsPerStep: number;
  /** 'f32': the opt-in single-precision transitions, four chains a vector (other chains, same targets). */
  precision: 'f64' | 'f32';
}

/** Lanes per vector: B is rounded up to a multiple of it. */
const width = (s: LanesSetup) => (s.precision === 'f32' ? 4 : 2);
const roundUp = (n: number, w: number) => Math.ceil(n / w) * w;

/** A batch of B chains (a multiple of the lane width) and its work buffer, for P particles. */
function allocBatch(s: LanesSetup, B: number, P: number): { batch: number; work: number } {
  const k = s.engine.kernels;
  return {
    batch: s.arena.alloc(k.gibbsLanesBytes(s.bound.header, B)),
    work: s.arena.alloc(k.particlesLanesWorkBytes(s.bound.header, B, P)),
  };
}

/** Seeds lane c with chain ids[c] (lanes past ids.length: the last id, a padding copy). */
function seedLanes(s: LanesSetup, batch: number, B: number, ids: (c: number) => number, n: number): void {
  const k = s.engine.kernels;
  const bytes = k.rngStateBytes();
  for (let c = 0; c < B; c++) k.rngSeed(batch + bytes * c, s.seedLo, s.seedHi, ids(Math.min(c, n - 1)), s.stream);
}

/**
 * `runs` independent AIS runs through `betas`, run r on stream (seed, chainBase + r), in batches;
 * `energies`: each run's energy at every β when traces are asked for. Stops between batches on abort.
 */
export function runLanesSchedule(s: LanesSetup, betas: Float64Array, runs: number, chainBase: number, traces: boolean, signal: AbortSignal | undefined, tick?: (runs: number) => void): { logW: Float64Array; energies: Float64Array[] } {
  const Bmax = roundUp(Math.min(LANES_BATCH, runs), width(s));
  const { batch, work } = allocBatch(s, Bmax, 0);
  const betaPtr = s.arena.allocF64(betas);
  const T = betas.length;
  const trace = traces ? s.arena.allocF64(Bmax * T) : 0;
  const out = s.arena.allocF64(Bmax);
  const logW: number[] = [];
  const energies: Float64Array[] = [];
  for (let r0 = 0; r0 < runs; r0 += Bmax) {
    if (signal?.aborted) break;
    const n = Math.min(Bmax, runs - r0);
    const B = roundUp(n, width(s));
    s.engine.call('AIS runs in lanes', (k) => {
      seedLanes(s, batch, B, (c) => chainBase + r0 + c, n);
      k.aisLanesRun(s.bound.header, s.tempered, batch, B, betaPtr, T, s.sweepsPerStep, s.tree?.header ?? 0, work, trace, out, s.precision === 'f32' ? 1 : 0);
    });
    const w = s.arena.readF64(out, n);
    for (let c = 0; c < n; c++) {
      if (Number.isNaN(w[c])) throw new EngineError(`AIS run ${chainBase + r0 + c} produced a NaN log weight`);
      logW.push(w[c]);
      if (traces) energies.push(s.arena.readF64(trace + 8 * T * c, T));
    }
    tick?.(n);
  }
  return { logW: Float64Array.from(logW), energies };
}

/**
 * Populations of P particles, one batch each: population p's particle r on stream (seed, firstRun +
 * p·P + r), its resampling stream (seed, firstRun/P + p) with tag `populationStream`. Returns each
 * population's log Ẑ and the mean number of resamplings; stops between populations on abort.
 */
export function runPopulationsLanes(s: LanesSetup, betas: Float64Array, P: number, pops: number, firstRun: number, populationStream: number, essFraction: number, signal: AbortSignal | undefined, tick?: (runs: number) => void): { logZ: Float64Array; resamplings: number } {
  const B = roundUp(P, width(s));
  const k = s.engine.kernels;
  const { batch, work } = allocBatch(s, B, P);
  const pop = s.arena.alloc(k.rngStateBytes());
  const info = s.arena.allocF64(2);
  const betaPtr = s.arena.allocF64(betas);
  const out: number[] = [];
  let resamplings = 0;
  for (let p = 0; p < pops; p++) {
    if (signal?.aborted) break;
    const lz = s.engine.call('population annealing in lanes', (kk) => {
      seedLanes(s, batch, B, (c) => firstRun + p * P + c, P);
      kk.rngSeed(pop, s.seedLo, s.seedHi, firstRun / P + p, populationStream);
      return kk.popAnnealLanesRun(s.bound.header, s.tempered, batch, B, P, pop, betaPtr, betas.length, s.sweepsPerStep, s.tree?.header ?? 0, work, info, essFraction, s.precision === 'f32' ? 1 : 0);
    });
    if (Number.isNaN(lz)) throw new EngineError(`population ${p} produced a NaN estimate`);
    out.push(lz);
    resamplings += s.arena.readF64(info, 1)[0];
    tick?.(P);
  }
  return { logZ: Float64Array.from(out), resamplings: resamplings / Math.max(1, out.length) };
}
