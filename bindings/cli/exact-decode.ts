// `relaxmrf infer MODEL --method exact --map` and `--method exact --samples N`: a MAP
// configuration by max-product elimination, or exact i.i.d. samples (bindings/exact/exact.ts).

import type { Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import { exactMAP, exactSample } from '../exact/exact.ts';
import { exactMAPParallel, exactSampleParallel } from '../exact/exact-parallel.ts';
import { writeMAP } from '../io/formats.ts';
import { writeOutput } from './output-files.ts';

export interface ExactDecodeArgs {
  map: boolean;
  samples?: number;
  seed?: number;
  json: boolean;
  outFormat?: string;
  out?: string;
  /** --max-memory: the budget the plan is sliced to. */
  maxMemory?: number;
  /** --workers: a sliced plan's slices on this many worker threads (absent or 0: this thread); the same output for any number. */
  workers?: number;
  /** A .fg file's labels when they are not 0…n−1: the outputs are in increasing label order, and say which label each is. */
  labels?: number[];
}

/**
 * --map: the UAI MAP format with --out-format uai (to PREFIX.MAP with --out), JSON with --json,
 * else a summary line and the configuration's states on the next (separated by spaces, as each
 * sample's line). --samples N: one configuration per line (states separated by spaces; to
 * PREFIX.samples with --out, also with --json), or JSON with --json. --workers W: a sliced plan's
 * slices on W worker threads (the JSON's `workers`: how many ran; 1 on this thread).
 */
export async function exactDecode(engine: Engine, model: Model, a: ExactDecodeArgs): Promise<void> {
  // Renumbered .fg labels: the JSON carries them, and the plain outputs say so on stderr (MAP and samples gave no map, and a reader took file order).
  const labels = a.labels ? { labels: a.labels } : {};
  if (a.labels) process.stderr.write(`relaxmrf: note: ${a.map ? 'the MAP configuration lists' : 'each sample lists'} the variables in increasing label order: ${a.labels.slice(0, 8).join(', ')}${a.labels.length > 8 ? ', …' : ''}${a.json ? ' (--json: labels)' : ''}\n`);
  if (a.map) {
    const r = a.workers ? await exactMAPParallel(engine, model, { maxMemory: a.maxMemory, workers: a.workers }) : { ...exactMAP(engine, model, { maxMemory: a.maxMemory }), workers: 1 };
    const text = a.outFormat === 'uai' ? writeMAP(r.configuration) : '';
    if (a.outFormat === 'uai' && !a.out) process.stdout.write(text);
    if (a.json) process.stdout.write(JSON.stringify({ method: 'exact', map: Array.from(r.configuration), logPotential: r.logPotential, treewidth: r.treewidth, ordering: r.ordering, slices: r.slices, workers: r.workers, ...labels }) + '\n');
    else if (a.outFormat === undefined || a.out) process.stdout.write(`MAP by max-product elimination (treewidth ${r.treewidth}, ${r.ordering} ordering${r.slices > 1 ? `, ${r.slices} slices` : ''}): log-potential ${r.logPotential}\n${Array.from(r.configuration).join(' ')}\n`);
    // The file after what is printed; when the JSON does not hold the configuration, a failed write keeps it elsewhere.
    if (a.outFormat === 'uai' && a.out) await writeOutput('--out', a.out + '.MAP', text, '; the JSON above holds the configuration', !a.json);
    return;
  }
  const opts = { count: a.samples!, seed: a.seed ?? 1, maxMemory: a.maxMemory };
  const r = a.workers ? await exactSampleParallel(engine, model, { ...opts, workers: a.workers }) : { ...exactSample(engine, model, opts), workers: 1 };
  const text = r.samples.map((s) => s.join(' ')).join('\n') + '\n';
  // --out writes the file (with --json too); standard output gets the JSON or, without --out, the lines.
  if (a.json) process.stdout.write(JSON.stringify({ method: 'exact', samples: r.samples.map((s) => Array.from(s)), logZ: r.logZ, treewidth: r.treewidth, ordering: r.ordering, slices: r.slices, workers: r.workers, ...labels }) + '\n');
  else if (!a.out) process.stdout.write(text);
  if (a.out) await writeOutput('--out', a.out + '.samples', text, '; the JSON above holds the samples', !a.json);
}
