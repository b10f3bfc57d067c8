// When do workers pay for a Gibbs run? `npm run bench:workers` (BENCH_QUICK=1 or --quick: smoke).
//
// Runs the built package (dist/, as the CLI does: workers start from built JavaScript; `npm run
// build:js` first) with default options (4 chains, f64 lanes, sequential scan) on periodic Ising
// lattices of growing size, and on a large lattice with few sweeps, each on this thread (runGibbs)
// and on min(4, cores) workers (runParallel), wall clock, medians of interleaved repetitions.
// Worker start-up is the wall time of a run too small to matter (8×8, 10 sweeps). From these, the
// break-even: the number of site updates at which workers' start-up equals the time they save,
// S / r₁ = t₀ + S / r_w (r₁: this thread's rate, r_w: the workers' aggregate rate) — compared with
// the rule autoWorkers applies (AUTO_WORKERS_MIN_UPDATES, AUTO_WORKERS_MIN_SWEEPS). The results
// are identical for any number of workers; the bench checks that too. Writes bench/results/workers.json.

import { existsSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { cpuModel, dist, QUICK, resultsPath } from './common.ts';

const DIST = new URL('../dist/index.js', import.meta.url);
if (!existsSync(DIST)) throw new Error('bench:workers runs the built package: npm run build:js first');
const pkg = await import(DIST.href);
const { loadEngine, runGibbs, runParallel, isingLattice, autoWorkers, AUTO_WORKERS_MIN_UPDATES, AUTO_WORKERS_MIN_SWEEPS } = pkg;

const SEED = 17;
const CHAINS = 4;
const REPS = Number(process.env.BENCH_REPS) || (QUICK ? 2 : 5);
const cores = availableParallelism();
const workers = Math.min(CHAINS, cores);
const engine = await loadEngine();

const cases = QUICK
  ? [{ side: 16, samples: 200, burnin: 20 }, { side: 64, samples: 200, burnin: 20 }]
  : [
      { side: 16, samples: 2000, burnin: 200 },
      { side: 32, samples: 2000, burnin: 200 },
      { side: 64, samples: 2000, burnin: 200 },
      { side: 128, samples: 2000, burnin: 200 },
      { side: 256, samples: 2000, burnin: 200 },
      { side: 512, samples: 100, burnin: 10 },
    ];

const startModel = isingLattice({ shape: [8, 8], beta: 0.4, periodic: true });
const startOpts = { seed: SEED, chains: CHAINS, samples: 10, burnin: 0 };
const startup: number[] = [];
const rows = cases.map((c) => ({ ...c, model: isingLattice({ shape: [c.side, c.side], beta: 0.4, periodic: true }), one: [] as number[], many: [] as number[], same: true }));
await runParallel(startModel, { ...startOpts, workers }); // first worker start also loads code from disk
for (let rep = 0; rep < REPS; rep++) {
  let t0 = performance.now();
  await runParallel(startModel, { ...startOpts, workers });
  startup.push(performance.now() - t0);
  for (const r of rows) {
    const opts = { seed: SEED, chains: CHAINS, samples: r.samples, burnin: r.burnin };
    t0 = performance.now();
    const a = runGibbs(engine, r.model, opts);
    r.one.push(performance.now() - t0);
    t0 = performance.now();
    const b = await runParallel(r.model, { ...opts, workers });
    r.many.push(performance.now() - t0);
    r.same &&= a.marginals.every((m: number[], v: number) => m.every((x, k) => x === b.marginals[v][k]));
  }
}

const t0 = dist(startup).median / 1000;
const results = rows.map((r) => {
  const updates = CHAINS * (r.samples + r.burnin) * r.side * r.side;
  const one = dist(r.one), many = dist(r.many);
  return {
    lattice: `${r.side}x${r.side}`,
    samples: r.samples,
    burnin: r.burnin,
    siteUpdates: updates,
    thisThreadSeconds: one.median / 1000,
    workersSeconds: many.median / 1000,
    speedup: one.median / many.median,
    autoWorkers: autoWorkers('gibbs', r.model, { chains: CHAINS, samples: r.samples, burnin: r.burnin }, cores),
    identical: r.same,
    dists: { thisThread: one, workers: many },
  };
});
// Break-even from the largest default-length run's rates: S* = t₀ / (1/r₁ − 1/r_w).
const big = results.filter((r) => r.samples === cases[0].samples).at(-1)!;
const r1 = big.siteUpdates / big.thisThreadSeconds, rw = big.siteUpdates / Math.max(1e-9, big.workersSeconds - t0);
const breakEven = rw > r1 ? t0 / (1 / r1 - 1 / rw) : Infinity;

console.log(`worker start-up (8x8, 10 sweeps, ${workers} workers): ${(t0 * 1000).toFixed(0)} ms`);
for (const r of results) {
  console.log(`  ${r.lattice.padEnd(8)} ${String(r.samples + r.burnin).padStart(5)} sweeps  ${(r.siteUpdates / 1e6).toFixed(0).padStart(6)} M updates  this thread ${r.thisThreadSeconds.toFixed(2)} s  workers ${r.workersSeconds.toFixed(2)} s  ×${r.speedup.toFixed(2)}  auto ${r.autoWorkers}  identical ${r.identical}`);
}
console.log(`rates on ${big.lattice}: this thread ${(r1 / 1e6).toFixed(0)} M/s, ${workers} workers ${(rw / 1e6).toFixed(0)} M/s after start-up; break-even ≈ ${(breakEven / 1e6).toFixed(0)} M site updates (rule: ${AUTO_WORKERS_MIN_UPDATES / 1e6} M and ${AUTO_WORKERS_MIN_SWEEPS} sweeps)`);
if (results.some((r) => !r.identical)) process.exitCode = 1;

writeFileSync(
  resultsPath('workers.json'),
  JSON.stringify({ quick: QUICK, date: new Date().toISOString(), machine: { cpu: cpuModel(), cores, loadavgAtEnd: loadavg() }, node: process.version, chains: CHAINS, workers, reps: REPS, startupSeconds: t0, startup: dist(startup), breakEvenSiteUpdates: breakEven, rule: { minUpdates: AUTO_WORKERS_MIN_UPDATES, minSweeps: AUTO_WORKERS_MIN_SWEEPS }, results }, null, 1) + '\n',
);
