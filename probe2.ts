import { isingLattice } from './bindings/core/builders.ts';
import { toCanonical } from './bindings/core/canonical.ts';
import { lanczosExtremes } from './bindings/linalg/lanczos.ts';
import { loadEngine } from './bindings/core/wasm-node.ts';
const engine = await loadEngine();
const form = toCanonical(isingLattice({ shape: [100, 100], J: 0.3 }));
const op = { n: form.nBits, rowPtr: form.rowPtr, col: form.col, val: form.val };
for (let r = 0; r < 8; r++) {
  let t = performance.now();
  lanczosExtremes(engine, op, { maxIter: 340, tol: 0 });
  const a = performance.now() - t;
  t = performance.now();
  lanczosExtremes(engine, op, { maxIter: 40, tol: 0 });
  const b = performance.now() - t;
  console.log(a.toFixed(1), b.toFixed(1));
}
