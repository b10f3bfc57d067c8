// Models whose pair tables, copied once per pair, would not fit: a Potts lattice of many states
// stores one shared q × q table, and the binary pairwise form used to copy it per pair (64×64 at
// q = 200: 5.8 GB for mean field, 5.9 GB for Gibbs; tree Gibbs built it all, then refused). Gibbs,
// mean field, AIS and PT now run on the factor graph for them; the rest refuse before building.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { infer } from '../bindings/infer.ts';
import { inferAsync } from '../bindings/parallel/parallel.ts';
import { pottsLattice } from '../bindings/core/builders.ts';
import { canonicalFits, pairTableEntries, CANONICAL_PAIR_ENTRIES } from '../bindings/core/model-range.ts';
import { runAIS } from '../bindings/logz/logz.ts';
import { EngineError } from '../bindings/core/errors.ts';

test('pair tables past the binary form\'s limit: gibbs, mf, pt and AIS on the factor graph in little memory, the same AIS estimate through workers, the rest refused at once', async () => {
  const engine = await loadEngine();
  const model = pottsLattice({ shape: [16, 20], q: 400, beta: 1 });
  assert.ok(pairTableEntries(model) > CANONICAL_PAIR_ENTRIES && !canonicalFits(model), 'the case: 9.7·10⁷ pair-table entries from one stored table');
  assert.ok(canonicalFits(pottsLattice({ shape: [16, 20], q: 50, beta: 1 })));
  const rss0 = process.memoryUsage().rss;
  const mf = infer(engine, model, { method: 'mf' });
  assert.equal(mf.diagnostics.kernel, 'factor-graph');
  const gibbs = infer(engine, model, { method: 'gibbs', samples: 8, burnin: 2, chains: 2, seed: 1 });
  assert.equal(gibbs.diagnostics.kernel, 'factor-graph');
  assert.equal(infer(engine, model, { method: 'pt', samples: 4, burnin: 2, chains: 1, replicas: 2, seed: 1 }).diagnostics.kernel, 'factor-graph');
  const ais = runAIS(engine, model, { runs: 8, steps: 10, seed: 3 });
  assert.equal(ais.diagnostics.kernel, 'factor-graph');
  assert.ok(process.memoryUsage().rss - rss0 < 2 ** 29, `grew ${((process.memoryUsage().rss - rss0) / 2 ** 20).toFixed(0)} MB`);
  // AIS split over workers folds the pieces with the factor graph's offset (it asked the binary form for one and refused).
  const viaWorkers = await inferAsync(engine, model, { method: 'mf', logz: 'ais', ais: { runs: 8, steps: 10 }, seed: 3, workers: 2 });
  assert.equal(viaWorkers.logZ, ais.logZ);
  for (const method of ['treegibbs', 'dhmc', 'blockgibbs'] as const) {
    const t0 = performance.now();
    assert.throws(() => infer(engine, model, { method, samples: 4, burnin: 2 }), (e: unknown) => e instanceof EngineError && /the binary pairwise form, one table per pair of variables .* would take 2\.2 GiB, past 2 GiB/.test((e as Error).message), method);
    assert.ok(performance.now() - t0 < 2000, `${method} refused at once`);
  }
});
