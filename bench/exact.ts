// npm run bench:exact [-- --runs R] [-- --only NAME]: exact inference on every UAI 2014 file shipped in
// shared/data (uai2014, uai2014-more, with their evidence): wall time (median of R runs, default 3,
// each in a fresh engine), WASM memory after the run, the kernel, treewidth, log2 of the largest
// message, log2 of the clique configurations streamed, and the log10 Z error against the published
// PR. Pairwise files are also run with the junction tree (method: 'elimination') and bucket
// elimination (method: 'bucket') forced: auto picks one of them by estimated cost. Files with a factor of arity > 2 are also run sliced to the unsliced plan's
// memory less seven eighths of its messages' (--max-memory), on this thread and on two worker
// threads (their log Z is checked to be the same bits). The order column names the heuristic,
// "+ annealing" or "+ tree search" when the order search improved it, and in brackets the greedy plan's log2 flops
// when the search ran. Refusals are timed too.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { loadModelFile } from '../bindings/io/files.ts';
import { readPR } from '../bindings/io/formats.ts';
import { exactInference, slicedBucketPlan, type ExactOptions, type ExactResult } from '../bindings/exact/exact.ts';
import { exactInferenceParallel } from '../bindings/exact/exact-parallel.ts';
import { dataDir } from '../test/helpers.ts';

const args = process.argv.slice(2);
const runs = Number(args[args.indexOf('--runs') + 1] ?? 3) || 3;
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

console.log('| instance | method | kernel | treewidth | log2 largest message | log2 flops | slices | order (greedy log2 flops) | seconds (median) | peak WASM MiB | log10 Z error |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
for (const dir of ['uai2014', 'uai2014-more']) {
  for (const f of readdirSync(join(dataDir(), dir)).filter((f) => f.endsWith('.uai')).sort()) {
    if (only && !f.includes(only)) continue;
    const path = join(dataDir(), dir, f);
    const { model } = await loadModelFile(path);
    const published = readPR(readFileSync(`${path}.PR`, 'utf8'));
    const variants: [string, ExactOptions, number][] = [['auto', {}, 0]];
    if (model.isPairwise) variants.push(['junction tree', { method: 'elimination' }, 0], ['bucket', { method: 'bucket' }, 0]);
    else {
      const sp = slicedBucketPlan(model);
      // The budget: the plan's memory less seven eighths of its messages' (the factor tables stay).
      let tableBytes = 0;
      for (let fi = 0; fi < model.nFactors; fi++) tableBytes += 8 * model.tableSize(fi);
      const messageBytes = sp.sliced.plan.bytes - tableBytes;
      if (sp.fits && messageBytes >= 2 ** 20) {
        const maxMemory = Math.ceil(sp.sliced.plan.bytes - (7 / 8) * messageBytes);
        variants.push([`sliced, ${(maxMemory / 2 ** 20).toFixed(1)} MiB`, { maxMemory }, 1], ['sliced, 2 workers', { maxMemory }, 2]);
      }
    }
    let previous: ExactResult | null = null;
    for (const [name, opts, workers] of variants) {
      const times: number[] = [];
      let line = '';
      for (let r = 0; r < runs; r++) {
        const engine = await loadEngine();
        const t0 = performance.now();
        try {
          const res = workers > 0 ? await exactInferenceParallel(engine, model, { ...opts, workers }) : exactInference(engine, model, opts);
          times.push((performance.now() - t0) / 1000);
          if (workers === 2 && previous && !Object.is(previous.logZ, res.logZ)) throw new Error('two workers gave other bits than one');
          if (workers === 1) previous = res;
          const err = Math.abs(res.logZ / Math.LN10 - published);
          const plan = res.algorithm === 'bucket' ? slicedBucketPlan(model, opts).choice : null;
          const order = plan?.search ? `${res.ordering} (${Math.log2(plan.search.greedyFlops).toFixed(1)})` : res.ordering;
          line = `| ${f} | ${name} | ${res.algorithm} | ${res.treewidth} | ${Math.log2(res.largestMessage || 1).toFixed(1)} | ${Math.log2(res.flops).toFixed(1)} | ${res.slices ?? 1} | ${order} | %T | ${(engine.memoryBytes / 2 ** 20).toFixed(0)} | ${err.toExponential(1)} |`;
        } catch (e) {
          times.push((performance.now() - t0) / 1000);
          line = `| ${f} | ${name} | refused | | | | | | %T | ${(engine.memoryBytes / 2 ** 20).toFixed(0)} | ${(e as Error).message.slice(0, 160)} |`;
        }
      }
      console.log(line.replace('%T', median(times).toFixed(3)));
    }
  }
}
