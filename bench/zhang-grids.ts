// Zhang, Sutton, Storkey & Ghahramani (NeurIPS 2012) §5 synthetic grids (see bench/zhang.ts):
// open SIDE×SIDE grids over s ∈ {0,1}, w_ij = c₂·2z, a_i = c₁·(2z) ('standard') or c₁·(Σ_j w_ij + 2z) ('frustrated').
import { boltzmann, latticeBonds } from '../bindings/core/builders.ts';
import type { Model } from '../bindings/core/model.ts';
import { mulberry32 } from '../test/helpers.ts';

/** Standard normal by Box–Muller from a uniform generator. */
export function normal(r: () => number): number {
  let u = r();
  while (u === 0) u = r();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r());
}

export function zhangGrid(type: 'standard' | 'frustrated', c1: number, c2: number, seed: number, SIDE = 10): Model {
  const r = mulberry32(seed);
  const n = SIDE * SIDE;
  const edges = latticeBonds([SIDE, SIDE], false).map(([i, j]) => [i, j, c2 * 2 * normal(r)] as [number, number, number]);
  const rowSum = new Float64Array(n);
  for (const [i, j, w] of edges) {
    rowSum[i] += w;
    rowSum[j] += w;
  }
  const a = Float64Array.from({ length: n }, (_, i) => c1 * ((type === 'frustrated' ? rowSum[i] : 0) + 2 * normal(r)));
  return boltzmann({ a, edges });
}

