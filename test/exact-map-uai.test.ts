// MAP instances built from the shipped UAI 2014 models (no published MAP answers come with them):
// each model with its evidence, its most probable configuration by max-product bucket elimination
// (exactMAP) under several elimination orders — independent computations of the same maximum,
// which must agree — checked against the model itself: the configuration's log potential, evaluated
// factor by factor, is the reported value; no single-variable change raises it; it is at least that
// of every one of 200 exact samples and at most log Z. The CLI's --map on one of them writes the
// UAI MAP format with that configuration (test/exact-decode.test.ts: the same on CSP_12, no evidence).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { loadModelFile } from '../bindings/io/files.ts';
import { exactInference, exactMAP, exactSample } from '../bindings/exact/exact.ts';
import { EngineError } from '../bindings/core/errors.ts';
import type { OrderingHeuristic } from '../bindings/exact/orderings.ts';
import { dataDir } from './helpers.ts';

const engine = await loadEngine();
const DATA = dataDir();
const FILES = [
  ['uai2014', 'Promedus_24'],
  ['uai2014', 'Segmentation_11'],
  ['uai2014', 'Grids_11'],
  ['uai2014-more', 'CSP_12'],
  ['uai2014-more', 'Alchemy_11'],
  ['uai2014-more', 'Pedigree_12'],
] as const;
const HEURISTICS: OrderingHeuristic[] = ['minfill', 'mindegree', 'rcm', 'natural'];
const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

for (const [dir, name] of FILES) {
  test(`${name}: the MAP configuration by max-product elimination, the same maximum under different orders, locally optimal, above every exact sample`, async () => {
    const { model } = await loadModelFile(join(DATA, dir, `${name}.uai`));
    const runs: { heuristic: string; logPotential: number; configuration: Int32Array }[] = [];
    for (const h of HEURISTICS) {
      try {
        const r = exactMAP(engine, model, { orderings: [h], orderSearchWork: 0, orderRestarts: 0 });
        runs.push({ heuristic: h, logPotential: r.logPotential, configuration: r.configuration });
      } catch (e) {
        if (!(e instanceof EngineError)) throw e; // an order past the limits is refused: not compared
      }
    }
    assert.ok(runs.length >= 2, `${runs.length} orders within the limits`);
    const best = runs[0];
    for (const r of runs) {
      assert.ok(close(r.logPotential, best.logPotential), `${r.heuristic}: max ${r.logPotential} vs ${best.heuristic}: ${best.logPotential}`);
      assert.ok(close(model.logPotential(r.configuration), r.logPotential), `${r.heuristic}: the configuration's log potential ${model.logPotential(r.configuration)} vs reported ${r.logPotential}`);
    }
    // No single-variable change raises it.
    const x = Int32Array.from(best.configuration);
    for (let v = 0; v < model.n; v++) {
      const keep = x[v];
      for (let k = 0; k < model.card[v]; k++) {
        if (k === keep) continue;
        x[v] = k;
        assert.ok(model.logPotential(x) <= best.logPotential + 1e-9 * Math.max(1, Math.abs(best.logPotential)), `variable ${v} → ${k} raises the maximum`);
      }
      x[v] = keep;
    }
    // At least every exact sample's log potential, at most log Z.
    const { samples } = exactSample(engine, model, { count: 200, seed: 3 });
    let top = -Infinity;
    for (const s of samples) top = Math.max(top, model.logPotential(s));
    assert.ok(top <= best.logPotential + 1e-9 * Math.max(1, Math.abs(top)), `a sample at ${top} above the maximum ${best.logPotential}`);
    const logZ = exactInference(engine, model).logZ;
    assert.ok(best.logPotential <= logZ + 1e-9 * Math.abs(logZ), `maximum ${best.logPotential} above log Z ${logZ}`);
    console.log(`# ${name}: log max ${best.logPotential.toFixed(4)} (orders ${runs.map((r) => r.heuristic).join(', ')}), best of 200 exact samples ${top.toFixed(4)}, log Z ${logZ.toFixed(4)}`);
  });
}

test('CLI --map on Promedus_24 (its evidence read from the .evid beside it) writes the UAI MAP format with the MAP configuration', async () => {
  const path = join(DATA, 'uai2014', 'Promedus_24.uai');
  const { model } = await loadModelFile(path);
  const want = exactMAP(engine, model);
  const cli = spawnSync(process.execPath, [join(import.meta.dirname, '..', 'bin', 'relaxmrf.js'), 'infer', path, '--map', '--out-format', 'uai'], { encoding: 'utf8' });
  assert.equal(cli.status, 0, cli.stderr);
  const lines = cli.stdout.trim().split('\n');
  assert.equal(lines[0], 'MAP');
  const fields = lines[1].trim().split(/\s+/).map(Number);
  assert.equal(fields[0], model.n);
  assert.deepEqual(fields.slice(1), Array.from(want.configuration));
});
