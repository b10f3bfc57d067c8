import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadEngine } from '../bindings/index.ts';
import { BoundFactorGraph } from '../bindings/core/bound-fg.ts';
import { configurations, mulberry32, randomFactorGraph } from './helpers.ts';

test('the bound factor graph: log-potentials and every conditional equal the model\'s (arities 1–4, cardinalities 1–5, zeros)', async () => {
  const engine = await loadEngine();
  const rand = mulberry32(5);
  for (let t = 0; t < 12; t++) {
    const m = randomFactorGraph(rand, 3 + (t % 4), { cards: [[2], [1, 2, 3], [3, 5], [2, 4]][t % 4], maxArity: 4, factors: 6, zeros: t % 2 ? 0.3 : 0, scale: 2 });
    const g = BoundFactorGraph.fromModel(engine, m, 'test');
    try {
      const x = g.configuration(), out = g.arena.alloc(8 * g.maxCard);
      for (const c of configurations(m.card)) {
        g.arena.i32(x, m.n).set(c);
        assert.equal(engine.kernels.factorGraphLogp(g.header, x), m.logPotential(c));
        for (let v = 0; v < m.n; v++) {
          engine.kernels.factorGraphConditional(g.header, x, v, out);
          const got = g.arena.f64(out, m.card[v]);
          const y = c.slice();
          for (let k = 0; k < m.card[v]; k++) {
            y[v] = k;
            let want = 0;
            for (let f = 0; f < m.nFactors; f++) if (m.scope(f).includes(v)) want += m.tables[m.tableStart[f] + m.entryIndex(f, y)];
            if (want === -Infinity) assert.equal(got[k], -Infinity, `model ${t}, variable ${v}, state ${k}`);
            else assert.ok(Math.abs(got[k] - want) < 1e-12, `model ${t}, variable ${v}, state ${k}: ${got[k]} vs ${want}`);
          }
        }
      }
    } finally {
      g.dispose();
    }
  }
});
