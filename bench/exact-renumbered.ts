// npm run bench:exact-renumbered: whether exact inference's plan depends on how a model's variables
// are numbered. linkage_11 and 2bitcomp_5.cnf (with their evidence) are the shipped instances whose
// greedy plans are past the work limit (2^34 configurations), so only the order search makes them
// solvable; random 3-regular graphs of 180–196 variables (test/helpers.ts, regular3) are the rescue
// tests' family. Each model is planned under its own numbering (0) and under seeded renumberings
// (test/helpers.ts, renumbered: a shuffle of the variables, tables unchanged); per plan the bench
// reports the best greedy plan, the stages the tree search ran, the plan (sliced, log2
// configurations) or the refusal, and the planning time (slicedBucketPlan: orderings, searches,
// slicing; no contraction). Planning is deterministic: the outcomes are the same on any machine.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { slicedBucketPlan } from '../bindings/exact/exact.ts';
import { loadModelFile } from '../bindings/io/files.ts';
import type { Model } from '../bindings/core/model.ts';
import { dataDir, regular3, renumbered } from '../test/helpers.ts';
import { QUICK, cpuModel, resultsPath } from './common.ts';

const file = async (name: string): Promise<Model> => (await loadModelFile(join(dataDir(), 'uai2014-more', `${name}.uai`))).model;
/** Each family: its models and the renumberings of each (0: the model's own numbering). */
const FAMILIES: { family: string; models: () => Promise<[string, Model][]>; numberings: number }[] = [
  { family: 'linkage_11', models: async () => [['linkage_11', await file('linkage_11')]], numberings: QUICK ? 3 : 24 },
  { family: '2bitcomp_5.cnf', models: async () => [['2bitcomp_5.cnf', await file('2bitcomp_5.cnf')]], numberings: QUICK ? 3 : 24 },
  {
    family: 'random 3-regular, 180–196 variables',
    models: async () => (QUICK ? [[196, 7]] : [180, 184, 188, 192, 196].flatMap((n) => [1, 2, 3].map((s) => [n, s]))).map(([n, s]) => [`regular3(${n}, ${s})`, regular3(n, s)]),
    numberings: QUICK ? 1 : 3,
  },
];

interface Row {
  model: string;
  numbering: number;
  /** The plan's order: its heuristic, then the searches that improved it (a second start's: rcm + tree search). */
  order: string;
  /** The best greedy plan (log2 configurations), the first search's start. */
  greedyLog2: number | null;
  stages: number;
  outcome: string;
  planLog2: number | null;
  seconds: number;
}

const results: Record<string, { solvable: number; plans: number; rows: Row[] }> = {};
for (const { family, models, numberings } of FAMILIES) {
  const rows: Row[] = [];
  for (const [name, model] of await models()) {
    for (let numbering = 0; numbering <= numberings; numbering++) {
      const m = numbering === 0 ? model : renumbered(model, numbering).model;
      const t0 = performance.now();
      const sp = slicedBucketPlan(m);
      const seconds = (performance.now() - t0) / 1000;
      const s = sp.choice.search;
      const r: Row = {
        model: name,
        numbering,
        order: sp.choice.name,
        greedyLog2: s ? Math.log2(s.greedyFlops) : null,
        stages: s?.treeStages ?? 0,
        outcome: sp.fits ? 'solvable' : 'refused',
        planLog2: sp.fits ? Math.log2(sp.sliced.flops) : null,
        seconds,
      };
      rows.push(r);
      console.log(`${name} numbering ${String(numbering).padStart(2)}: greedy 2^${r.greedyLog2?.toFixed(1) ?? '?'}, ${r.stages} stages → ${r.outcome}${r.planLog2 !== null ? ` 2^${r.planLog2.toFixed(2)}` : ` (best 2^${Math.log2(sp.choice.plan.flops).toFixed(1)})`} by ${r.order} (${(seconds * 1000).toFixed(0)} ms)`);
    }
  }
  const solvable = rows.filter((r) => r.outcome === 'solvable').length;
  results[family] = { solvable, plans: rows.length, rows };
  console.log(`${family}: ${solvable} of ${rows.length} plans within the limits\n`);
}
const out = resultsPath('exact-renumbered.json');
writeFileSync(out, JSON.stringify({ quick: QUICK, date: new Date().toISOString(), cpu: cpuModel(), node: process.version, results }, null, 2));
console.log(`results: ${out}`);
