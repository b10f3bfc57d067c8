// MNIST digits for the learning experiments, from the `mnist` package's 10 000 images (28 × 28 grey
// values in [0, 1]) read directly from its per-digit files: the package's own set() shuffles with
// Math.random, so the split here is deterministic instead. Per digit, its first 80 % of images
// (in file order) are training and the rest test data. Downsampling to 14 × 14 averages 2 × 2 blocks;
// binarising keeps pixels above 0.5.
import { createRequire } from 'node:module';
import type { BinaryData } from '../../bindings/learn/likelihood.ts';

const require = createRequire(import.meta.url);

/** The binarised MNIST split: `side` 28 (full size) or 14 (2 × 2 averages), training fraction 0.8 per digit. */
export function loadMnist(side: 14 | 28 = 14, trainFraction = 0.8): { train: BinaryData; test: BinaryData; side: number } {
  const train: number[] = [], test: number[] = [];
  const f = 28 / side;
  for (let digit = 0; digit < 10; digit++) {
    const raw: number[] = require(`mnist/src/digits/${digit}.json`).data;
    const count = Math.floor(raw.length / 784), cut = Math.round(count * trainFraction);
    for (let im = 0; im < count; im++) {
      const out = im < cut ? train : test;
      for (let r = 0; r < side; r++) {
        for (let c = 0; c < side; c++) {
          let s = 0;
          for (let dr = 0; dr < f; dr++) for (let dc = 0; dc < f; dc++) s += raw[im * 784 + (r * f + dr) * 28 + c * f + dc];
          out.push(s / (f * f) > 0.5 ? 1 : 0);
        }
      }
    }
  }
  const n = side * side;
  return { side, train: { rows: train.length / n, cols: n, values: Uint8Array.from(train) }, test: { rows: test.length / n, cols: n, values: Uint8Array.from(test) } };
}
