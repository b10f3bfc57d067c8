// npm run bench:exact-search [-- --only NAME]: the order search on every UAI 2014 file in
// shared/data (with evidence): the best greedy plan, the plan with the order annealing alone
// (treeSearch: false) and with the annealing then the contraction-tree search (the default), each
// as treewidth / log2 of the largest message / log2 of the configurations streamed (both passes),
// with the planning's CPU time (process CPU, so other load on the machine counts little) and which
// search produced the default plan. Default limits throughout (maxFlops 2^34: the budget of a greedy
// plan past it is the rescue budget, see orderSearchWork).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadModelFile } from '../bindings/io/files.ts';
import { bucketEliminationPlan, type BucketChoice, type ExactOptions } from '../bindings/exact/exact.ts';
import { dataDir } from '../test/helpers.ts';

const args = process.argv.slice(2);
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;

const cpu = (f: () => BucketChoice): [BucketChoice, number] => {
  const c0 = process.cpuUsage();
  const r = f();
  const c = process.cpuUsage(c0);
  return [r, (c.user + c.system) / 1e6];
};
const fmt = (p: { treewidth: number; maxMessage: number; flops: number }): string => `${p.treewidth} / ${Math.log2(p.maxMessage).toFixed(1)} / ${Math.log2(p.flops).toFixed(1)}`;

console.log('| instance | greedy: tw / log2 msg / log2 flops | order annealing alone | + tree search (default) | plan CPU s: greedy / annealing / default | search kept | tree proposals |');
console.log('| --- | --- | --- | --- | --- | --- | --- |');
for (const dir of ['uai2014', 'uai2014-more']) {
  for (const f of readdirSync(join(dataDir(), dir)).filter((f) => f.endsWith('.uai')).sort()) {
    if (only && !f.includes(only)) continue;
    const { model } = await loadModelFile(join(dataDir(), dir, f));
    const run = (o: ExactOptions) => cpu(() => bucketEliminationPlan(model, o));
    const [greedy, tg] = run({ orderSearchWork: 0 });
    const [annealed, ta] = run({ treeSearch: false });
    const [both, tb] = run({});
    const g = both.search ? { treewidth: greedy.plan.treewidth, maxMessage: both.search.greedyMaxMessage, flops: both.search.greedyFlops } : greedy.plan;
    console.log(`| ${f} | ${fmt(g)} | ${fmt(annealed.plan)} | ${fmt(both.plan)} | ${tg.toFixed(2)} / ${ta.toFixed(2)} / ${tb.toFixed(2)} | ${both.search?.by ?? 'no search'} | ${both.search?.treeProposals ?? 0} |`);
  }
}
