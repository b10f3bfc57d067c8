// The models of the Gibbs throughput benches (bench:lanes, bench:default): a 256×256 periodic
// Ising lattice, a 256×256 periodic 3-state Potts lattice and a random sparse binary graph.
import { isingLattice, pottsLattice } from '../bindings/core/builders.ts';
import { ModelBuilder, type Model } from '../bindings/core/model.ts';
import { mulberry32 } from '../test/helpers.ts';

/** n binary variables with random fields and about n·degree/2 random couplings in (−1, 1). */
export function randomSparse(n: number, degree: number, seed: number): Model {
  const rnd = mulberry32(seed);
  const b = new ModelBuilder(new Array(n).fill(2));
  for (let v = 0; v < n; v++) b.addUnary(v, [0, rnd() - 0.5]);
  const seen = new Set<number>();
  for (let e = 0; e < (n * degree) / 2; e++) {
    const i = Math.floor(rnd() * n), j = Math.floor(rnd() * n);
    if (i === j || seen.has(Math.min(i, j) * n + Math.max(i, j))) continue;
    seen.add(Math.min(i, j) * n + Math.max(i, j));
    const w = 2 * rnd() - 1;
    b.addPairwise(i, j, [0, 0, 0, w]);
  }
  return b.build();
}

/** The three models, by name. */
export function benchModels(): { name: string; model: Model }[] {
  return [
    { name: 'ising 256x256 periodic', model: isingLattice({ shape: [256, 256], beta: 0.4, periodic: true }) },
    { name: 'potts3 256x256 periodic', model: pottsLattice({ shape: [256, 256], q: 3, beta: 0.9, periodic: true }) },
    { name: 'random sparse 65536, degree 4', model: randomSparse(65536, 4, 7) },
  ];
}
