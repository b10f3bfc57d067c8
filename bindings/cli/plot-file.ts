// --plot FILE.svg: the marginal plot of an inference result, written after the result is printed,
// so a bad path costs the plot, not the result.
import { writeFile } from 'node:fs/promises';
import { plotResult } from '../plot/marginals.ts';
import { whyUnwritable } from './output-files.ts';
import type { InferenceResult } from '../core/result.ts';
import type { Model } from '../core/model.ts';

/**
 * Writes the plot; returns null, or one line saying why it could not (the caller exits 2): the path
 * does not end in .svg, is a directory, or cannot be written.
 */
export async function writePlotFile(path: string, model: Model, r: InferenceResult): Promise<string | null> {
  if (!/\.svg$/i.test(path)) return `--plot ${path}: the plot is SVG; give a file name ending in .svg`;
  if (r.marginals.length === 0) return `--plot: ${r.method} produced no marginals to plot`;
  // A heatmap when the lattice builders laid the model out in two dimensions.
  const svg = plotResult(r, { shape: model.lattice?.shape.length === 2 ? model.lattice.shape : undefined });
  try {
    await writeFile(path, svg);
    return null;
  } catch (e) {
    return `--plot ${path}: ${whyUnwritable(e)}; the result above is complete, only the plot was not written`;
  }
}
