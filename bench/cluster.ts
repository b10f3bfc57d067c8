// Critical slowing down: the integrated autocorrelation time of m² (m the magnetisation) for the
// periodic L×L Ising model at β_c = ln(1 + √2)/2 (Kaufman/Onsager's critical point), Swendsen–Wang
// and Wolff against single-site heat-bath Gibbs, all in assembly/samplers/cluster.ts on the same
// form (one "sweep": SW one bond/relabel pass; Wolff a fixed number of clusters ≈ n / mean size;
// Gibbs n site updates). `npm run bench:cluster`; BENCH_QUICK=1 for L ≤ 32.
//
// τ_int = ½ + Σ_{t=1}^{W} ρ(t), with Sokal's window: the smallest W ≥ 6·τ_int(W); its statistical
// error ≈ τ·√(2(2W + 1)/N) (Sokal 1997). Each run is one chain after 200·n site updates (Wolff:
// sites in clusters) from a random start; the first tenth of the trace is also
// dropped as burn-in; it is lengthened until N ≥ 2000·τ sweeps (10⁴ at least, 3000 for L = 256)
// or its time cap is spent.
// Runs shorter than 200·τ are marked '≥' (a lower bound: the window may not have seen the tail).
// Expected: τ ∝ L^z with z ≈ 2.1–2.2 for Gibbs and z ≈ 0.2–0.3 for SW (Sokal; Coddington & Baillie).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadEngine } from '../bindings/core/wasm-node.ts';
import { isingLattice } from '../bindings/core/builders.ts';
import { ClusterSampler, type ClusterKind } from '../bindings/samplers/cluster.ts';
import { autocovariance } from '../bindings/samplers/diagnostics.ts';
import { cpuModel, QUICK, resultsPath } from './common.ts';

const BETA_C = Math.log(1 + Math.SQRT2) / 2;
const SIDES: Record<ClusterKind, number[]> = QUICK
  ? { sw: [16, 32], wolff: [16, 32], heatbath: [16, 32] }
  : { sw: [16, 32, 64, 128, 256], wolff: [16, 32, 64, 128, 256], heatbath: [16, 32, 64] };
const CAP_SECONDS = QUICK ? 5 : Number(process.env.BENCH_CLUSTER_CAP) || 30;
const engine = await loadEngine();

function tauInt(x: Float64Array): { tau: number; W: number } {
  const acov = autocovariance(x);
  if (!(acov[0] > 0)) return { tau: NaN, W: 0 };
  let tau = 0.5;
  for (let W = 1; W < x.length; W++) {
    tau += acov[W] / acov[0];
    if (W >= 6 * tau) return { tau, W };
  }
  return { tau, W: x.length };
}

const rows: { L: number; kind: ClusterKind; tau: number; tauStdErr: number; lowerBound: boolean; sweeps: number; secondsPerSweep: number; clustersPerSweep: number | null; tauSeconds: number }[] = [];
// BENCH_CLUSTER_KINDS=wolff,…: rerun only these; the other kinds' rows are kept from the last file.
const KINDS = (process.env.BENCH_CLUSTER_KINDS?.split(',') ?? ['sw', 'wolff', 'heatbath']) as ClusterKind[];
const out = resultsPath('cluster.json');
if (process.env.BENCH_CLUSTER_KINDS && existsSync(out)) rows.push(...JSON.parse(readFileSync(out, 'utf8')).rows.filter((r: { kind: ClusterKind }) => !KINDS.includes(r.kind)));
for (const kind of KINDS) {
  for (const L of SIDES[kind]) {
    const model = isingLattice({ shape: [L, L], periodic: true, beta: BETA_C });
    const s = new ClusterSampler(engine, model, kind);
    s.calibrate(1);
    const st = s.init(1, 0);
    const t0 = performance.now();
    s.burnInSites(st, 200);
    let chunks: Float64Array[] = [];
    let len = L >= 256 ? 3000 : 10000, tau = NaN, W = 0, total = 0, sampleSeconds = 0;
    for (;;) {
      const t1 = performance.now();
      chunks.push(s.magnetisationTrace(st, len));
      sampleSeconds += (performance.now() - t1) / 1000;
      total += len;
      const m2 = new Float64Array(total);
      let o = 0;
      for (const c of chunks) for (const m of c) m2[o++] = m * m;
      // Drop a tenth as further burn-in once, when the first estimate is known.
      ({ tau, W } = tauInt(m2.subarray(Math.floor(total / 10))));
      const enough = total * 0.9 >= 2000 * tau;
      if (enough || (performance.now() - t0) / 1000 > CAP_SECONDS) break;
      len = Math.min(Math.ceil((2000 * tau * 1.05 - 0.9 * total) / 0.9) + 1, Math.max(1000, Math.floor((CAP_SECONDS * total) / Math.max(1e-3, sampleSeconds) / 2)));
      if (chunks.length > 8) {
        const all = new Float64Array(total);
        let q = 0;
        for (const c of chunks) all.set(c, (q += c.length) - c.length);
        chunks = [all];
      }
    }
    const lowerBound = total * 0.9 < 200 * tau;
    const secondsPerSweep = sampleSeconds / total;
    const tauStdErr = tau * Math.sqrt((2 * (2 * W + 1)) / (0.9 * total));
    const row = { L, kind, tau, tauStdErr, lowerBound, sweeps: total, secondsPerSweep, clustersPerSweep: kind === 'wolff' ? s.clustersPerSweep : null, tauSeconds: tau * secondsPerSweep };
    rows.push(row);
    console.log(`${kind.padEnd(8)} L=${String(L).padEnd(4)} τ_int(m²) ${lowerBound ? '≥' : ' '}${tau.toFixed(2).padStart(9)} ± ${tauStdErr.toFixed(2)} sweeps  (${total} sweeps, ${(secondsPerSweep * 1e3).toFixed(3)} ms/sweep, τ·time ${(row.tauSeconds * 1e3).toFixed(2)} ms)`);
    s.dispose();
  }
}
// Dynamic exponent: least-squares slope of log τ on log L over the sizes whose τ is not a bound.
const z: Record<string, number | null> = {};
for (const kind of ['sw', 'wolff', 'heatbath']) {
  const pts = rows.filter((r) => r.kind === kind && !r.lowerBound);
  if (pts.length < 2) {
    z[kind] = null;
    continue;
  }
  const xs = pts.map((r) => Math.log(r.L)), ys = pts.map((r) => Math.log(r.tau));
  const mx = xs.reduce((a, b) => a + b) / xs.length, my = ys.reduce((a, b) => a + b) / ys.length;
  let sxy = 0, sxx = 0;
  xs.forEach((x, i) => ((sxy += (x - mx) * (ys[i] - my)), (sxx += (x - mx) ** 2)));
  z[kind] = sxy / sxx;
}
console.log('fitted z:', z);
writeFileSync(out, JSON.stringify({ quick: QUICK, cpu: cpuModel(), betaC: BETA_C, capSeconds: CAP_SECONDS, z, rows }, null, 1) + '\n');
console.log(`wrote ${out}`);
