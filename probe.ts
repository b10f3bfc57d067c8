import { isingLattice } from './bindings/core/builders.ts';
import { toCanonical } from './bindings/core/canonical.ts';
import { buildRelaxation } from './bindings/relax/relaxation.ts';
import { lanczosExtremes } from './bindings/linalg/lanczos.ts';
import { SparseCholesky } from './bindings/linalg/sparse-cholesky.ts';
import { loadEngine } from './bindings/core/wasm-node.ts';
const engine = await loadEngine();
const m = isingLattice({ shape: [100, 100], J: 0.3 });
const form = toCanonical(m);
for (let r = 0; r < 5; r++) {
  let t = performance.now();
  const lz = lanczosExtremes(engine, { n: form.nBits, rowPtr: form.rowPtr, col: form.col, val: form.val });
  const tl = performance.now() - t;
  t = performance.now();
  const s = new SparseCholesky(engine, form.nBits, form.rowPtr, form.col);
  const to = performance.now() - t;
  t = performance.now();
  s.factor(form.val, new Float64Array(form.nBits).fill(2));
  const tf = performance.now() - t;
  s.dispose();
  t = performance.now();
  buildRelaxation(engine, m);
  const tb = performance.now() - t;
  t = performance.now();
  toCanonical(m);
  const tc = performance.now() - t;
  console.log(`lanczos ${tl.toFixed(1)} (${lz.iterations} it) order+symb ${to.toFixed(1)} ${JSON.stringify(s.seconds)} numeric ${tf.toFixed(1)} build ${tb.toFixed(1)} canon ${tc.toFixed(1)}`);
}
