// Kaufman's closed form (test/kaufman.ts) against two independent computations: the row transfer
// matrix on small tori (square and rectangular, below, at and above the critical coupling) and the
// engine's exact elimination on isingLattice({ periodic: true }), which also fixes the convention
// K = βJ of the builder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kaufmanLogZ, transferMatrixLogZ, K_CRITICAL } from './kaufman.ts';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { exactInference } from '../bindings/exact/exact.ts';
import { isingLattice } from '../bindings/core/builders.ts';

const engine = await loadEngine();

test('Kaufman (1949) equals the transfer matrix on m × n tori, 3 ≤ m, n ≤ 6, K from 0.05 to 1.5', () => {
  let worst = 0;
  for (const K of [0.05, 0.2, 0.3, K_CRITICAL, 0.5, 0.8, 1.5]) {
    for (let m = 3; m <= 6; m++) {
      for (const n of [m, m + 1 <= 6 ? m + 1 : 3]) {
        const a = kaufmanLogZ(K, m, n), b = transferMatrixLogZ(K, m, n);
        worst = Math.max(worst, Math.abs(a - b) / Math.abs(b));
        assert.ok(Math.abs(a - b) <= 1e-12 * Math.abs(b), `K = ${K}, ${m}×${n}: Kaufman ${a} vs transfer matrix ${b}`);
      }
    }
  }
  console.log(`# worst relative difference ${worst.toExponential(2)}`);
});

test('Kaufman equals exact elimination on isingLattice({ shape: [L, L], periodic: true, beta }) for L = 4, 5, 6', () => {
  for (const beta of [0.3, 0.4407, 0.5]) {
    for (const L of [4, 5, 6]) {
      const r = exactInference(engine, isingLattice({ shape: [L, L], periodic: true, beta }));
      const k = kaufmanLogZ(beta, L);
      assert.ok(Math.abs(r.logZ - k) <= 1e-9 * Math.abs(k), `β = ${beta}, L = ${L}: elimination ${r.logZ} vs Kaufman ${k}`);
    }
  }
});

test('Kaufman at large L: finite, and log Z / N approaches Onsager\'s free energy at K_c', () => {
  // Onsager: −βf at K_c = ln 2 / 2 + 2G/π (G Catalan's constant) = 0.9296953983...
  const G = 0.915965594177219;
  const onsager = Math.LN2 / 2 + (2 * G) / Math.PI;
  const per = kaufmanLogZ(K_CRITICAL, 256) / (256 * 256);
  assert.ok(Math.abs(per - onsager) < 1e-4, `${per} vs ${onsager}`);
});
