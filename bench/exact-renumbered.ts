// npm run bench:exact-renumbered: whether exact inference's plan depends on how a model's variables
// are numbered. linkage_11 and 2bitcomp_5.cnf (with their evidence) are the shipped instances whose
// greedy plans are past the work limit (2^34 configurations), so only the order search makes them
// solvable; here each is planned under its own numbering (seed 0) and SEEDS renumberings (test/
// helpers.ts, renumbered: a seeded shuffle of the variables, tables unchanged), and the bench reports
// per renumbering the best greedy plan, the stages the tree search ran, the plan (sliced, log2
// configurations) or the refusal, and the planning time (slicedBucketPlan: orderings, searches,
// slicing; no contraction). Planning is deterministic: the outcomes are the same on any machine.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { slicedBucketPlan } from '../bindings/exact/exact.ts';
import { loadModelFile } from '../bindings/io/files.ts';
import { dataDir, renumbered } from '../test/helpers.ts';
import { QUICK, cpuModel, resultsPath } from './common.ts';

const SEEDS = QUICK ? 3 : 24;
const FILES = ['linkage_11', '2bitcomp_5.cnf'];

interface Row {
  seed: number;
  /** The plan's order: its heuristic, then the searches that improved it (the second start's: rcm + tree search). */
  order: string;
  /** The best greedy plan (log2 configurations), the first search's start. */
  greedyLog2: number | null;
  stages: number;
  outcome: string;
  planLog2: number | null;
  seconds: number;
}

const results: Record<string, { solved: number; refused: number; rows: Row[] }> = {};
for (const name of FILES) {
  const { model } = await loadModelFile(join(dataDir(), 'uai2014-more', `${name}.uai`));
  const rows: Row[] = [];
  for (let seed = 0; seed <= SEEDS; seed++) {
    const m = seed === 0 ? model : renumbered(model, seed).model;
    const t0 = performance.now();
    const sp = slicedBucketPlan(m);
    const seconds = (performance.now() - t0) / 1000;
    const s = sp.choice.search;
    rows.push({
      seed,
      order: sp.choice.name,
      greedyLog2: s ? Math.log2(s.greedyFlops) : null,
      stages: s?.treeStages ?? 0,
      outcome: sp.fits ? 'solvable' : 'refused',
      planLog2: sp.fits ? Math.log2(sp.sliced.flops) : null,
      seconds,
    });
    const r = rows[rows.length - 1];
    console.log(`${name} seed ${String(seed).padStart(2)}: greedy 2^${r.greedyLog2?.toFixed(1) ?? '?'}, ${r.stages} stages → ${r.outcome}${r.planLog2 !== null ? ` 2^${r.planLog2.toFixed(2)}` : ''} by ${r.order} (${(seconds * 1000).toFixed(0)} ms)`);
  }
  const solved = rows.filter((r) => r.outcome === 'solvable').length;
  results[name] = { solved, refused: rows.length - solved, rows };
  console.log(`${name}: ${solved} of ${rows.length} numberings solvable\n`);
}
const out = resultsPath('exact-renumbered.json');
writeFileSync(out, JSON.stringify({ quick: QUICK, date: new Date().toISOString(), cpu: cpuModel(), node: process.version, seeds: SEEDS, results }, null, 2));
console.log(`results: ${out}`);
