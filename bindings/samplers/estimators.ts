// Estimators aggregated on the TypeScript side from per-batch sums the kernels accumulate.

/** BatchMeans' scratch for one coordinate's chain terms. */
const CHAIN_TERMS = new Float64Array(4);

/**
 * Batch means over several chains. Each chain's post-burn-in run is cut into batches; the estimate is
 * the mean of all batch means. Its standard error must also see chains that disagree (stuck in
 * different modes), which the spread of batch means within each chain cannot show. For every
 * coordinate, with M chains, chain m giving B_m batch means y_{m,b} (N = Σ B_m in all) and mean ȳ_m:
 *
 * * within chains: V_w = s_w² · (1 + ρ₁)/(1 − ρ₁) / N, s_w² the pooled within-chain variance of
 *   the batch means and ρ₁ ∈ [0, 0.9] their pooled lag-1 autocorrelation (batches that are short
 *   against the autocorrelation time are positively correlated; the AR(1) factor widens the error);
 * * between chains: V_b = M/(M − 1) · Σ_m B_m² (ȳ_m − ȳ)² / N², the variance of the grand mean
 *   estimated from the spread of the chain means (s_c²/M for equal chains), which is unbiased
 *   whether or not the chains mix — but has only M − 1 degrees of freedom;
 *
 * and the standard error is √max(V_w, V_b). When the chains mix, both estimate the same variance
 * (the maximum of two noisy estimates errs on the side of a wider bar); when they do not, V_b
 * takes over. One chain: V_w alone. Fewer than two batches: NaN.
 *
 * Optionally it keeps the per-chain series of batch means of some coordinates (`traced`), for R̂
 * and ESS over those series (convergence.ts).
 */
export class BatchMeans {
  private readonly sum: Float64Array;
  /** Over finished chains: Σ_m SS_m (within-chain sums of squares), Σ_m lag-1 products, Σ_m B_m² ȳ_m, Σ_m B_m² ȳ_m². */
  private readonly within: Float64Array;
  private readonly lag: Float64Array;
  private readonly wSum: Float64Array;
  private readonly wSum2: Float64Array;
  /** The current chain's Σ y, Σ y², Σ y_b y_{b+1}, first and last batch mean. */
  private readonly cSum: Float64Array;
  private readonly cSq: Float64Array;
  private readonly cLag: Float64Array;
  private readonly cFirst: Float64Array;
  private readonly cLast: Float64Array;
  private count = 0;
  private cCount = 0;
  private chainId: number | null = null;
  private chainCount = 0;
  private sumB2 = 0;
  private readonly traced: Int32Array;
  /** series[q][chain]: batch means of traced coordinate q, chain by chain. */
  private readonly seriesData: number[][][];

  /** @param dim Number of coordinates averaged. */
  constructor(readonly dim: number, traced: ArrayLike<number> = []) {
    this.sum = new Float64Array(dim);
    [this.within, this.lag, this.wSum, this.wSum2, this.cSum, this.cSq, this.cLag, this.cFirst, this.cLast] = Array.from({ length: 9 }, () => new Float64Array(dim));
    this.traced = Int32Array.from(traced);
    this.seriesData = Array.from(this.traced, () => []);
  }

  /** Adds one batch of chain `chain`, given the sums over its `length` samples. Chains come one after another. */
  addBatch(sums: ArrayLike<number>, length: number, chain = 0): void {
    if (chain !== this.chainId) {
      this.closeChain();
      this.chainId = chain;
      this.chainCount++;
      for (const s of this.seriesData) s.push([]);
    }
    // Locals, not fields, in the per-coordinate loop (V8 reloads fields after every store).
    const n = this.dim, sum = this.sum, cSum = this.cSum, cSq = this.cSq, cLag = this.cLag, cLast = this.cLast;
    if (this.cCount === 0) {
      const cFirst = this.cFirst;
      for (let i = 0; i < n; i++) {
        const m = sums[i] / length;
        sum[i] += m;
        cSum[i] += m;
        cSq[i] += m * m;
        cFirst[i] = m;
        cLast[i] = m;
      }
    } else {
      for (let i = 0; i < n; i++) {
        const m = sums[i] / length;
        sum[i] += m;
        cSum[i] += m;
        cSq[i] += m * m;
        cLag[i] += cLast[i] * m;
        cLast[i] = m;
      }
    }
    this.traced.forEach((i, q) => this.seriesData[q][this.chainCount - 1].push(sums[i] / length));
    this.count++;
    this.cCount++;
    this.sampleCount += length;
  }

  /**
   * The current chain's contributions to coordinate i's totals, into CHAIN_TERMS: [SS, lag
   * products, B² ȳ, B² ȳ²] (one shared buffer: these run once per coordinate and chain).
   */
  private chainTerms(i: number): Float64Array {
    const t = CHAIN_TERMS;
    const B = this.cCount;
    if (B === 0) {
      t.fill(0);
      return t;
    }
    const m = this.cSum[i] / B;
    // Σ_{b<B} (y_b − ȳ)(y_{b+1} − ȳ) from the raw sums.
    const lag = this.cLag[i] - m * (2 * this.cSum[i] - this.cFirst[i] - this.cLast[i]) + (B - 1) * m * m;
    t[0] = Math.max(0, this.cSq[i] - B * m * m);
    t[1] = lag;
    t[2] = B * B * m;
    t[3] = B * B * m * m;
    return t;
  }

  /** Folds the current chain into the totals. */
  private closeChain(): void {
    const B = this.cCount;
    if (B === 0) return;
    for (let i = 0; i < this.dim; i++) {
      const t = this.chainTerms(i);
      this.within[i] += t[0];
      this.lag[i] += t[1];
      this.wSum[i] += t[2];
      this.wSum2[i] += t[3];
    }
    this.sumB2 += B * B;
    for (const a of [this.cSum, this.cSq, this.cLag]) a.fill(0);
    this.cCount = 0;
  }

  /** Batches added so far, over all chains. */
  get batches(): number {
    return this.count;
  }

  /** Samples in the batches added so far, over all chains. */
  get samples(): number {
    return this.sampleCount;
  }
  private sampleCount = 0;

  /** Chains seen so far. */
  get chains(): number {
    return this.chainCount;
  }

  /** The mean of the batch means, per coordinate. */
  mean(): Float64Array {
    return this.sum.map((s) => s / this.count);
  }

  /** The series of batch means of the traced coordinates: series()[q][chain]. */
  series(): Float64Array[][] {
    return this.seriesData.map((chains) => chains.map((c) => Float64Array.from(c)));
  }

  /** Standard errors √max(V_w, V_b) (see the class comment); NaN with fewer than two batches. */
  stdErr(): Float64Array {
    const N = this.count, M = this.chainCount;
    const sumB2 = this.sumB2 + this.cCount * this.cCount;
    const out = new Float64Array(this.dim);
    for (let i = 0; i < this.dim; i++) {
      if (N < 2) {
        out[i] = NaN;
        continue;
      }
      const mu = this.sum[i] / N;
      const t = this.chainTerms(i);
      const css = t[0], clag = t[1], cw = t[2], cw2 = t[3];
      const within = this.within[i] + css, lag = this.lag[i] + clag;
      let vw = NaN;
      if (N > M) {
        const sw2 = within / (N - M);
        const rho = within > 0 ? Math.min(0.9, Math.max(0, lag / within)) : 0;
        vw = (sw2 * (1 + rho)) / (1 - rho) / N;
      }
      let vb = NaN;
      if (M > 1) {
        // Σ_m B_m² (ȳ_m − μ)² = Σ B_m² ȳ_m² − 2μ Σ B_m² ȳ_m + μ² Σ B_m².
        const ss = Math.max(0, this.wSum2[i] + cw2 - 2 * mu * (this.wSum[i] + cw) + mu * mu * sumB2);
        vb = ((M / (M - 1)) * ss) / (N * N);
      }
      const v = Number.isNaN(vw) ? vb : Number.isNaN(vb) ? vw : Math.max(vw, vb);
      out[i] = Math.sqrt(v);
    }
    return out;
  }
}

/** Sizes of `parts` near-equal consecutive pieces of `total` (each ≥ 1 when total ≥ parts). */
export function splitEvenly(total: number, parts: number): number[] {
  const out: number[] = [];
  for (let b = 0; b < parts; b++) out.push(Math.floor(((b + 1) * total) / parts) - Math.floor((b * total) / parts));
  return out.filter((x) => x > 0);
}
