// Estimators aggregated on the TypeScript side from per-batch sums the kernels accumulate.

/**
 * Batch means: each chain's post-burn-in run is cut into batches; the estimate is the mean of all
 * batch means and its Monte Carlo standard error is their standard deviation over √(number of
 * batches). Valid when batches are long compared with the autocorrelation time.
 */
export class BatchMeans {
  private readonly sum: Float64Array;
  private readonly sumSq: Float64Array;
  private count = 0;

  constructor(readonly dim: number) {
    this.sum = new Float64Array(dim);
    this.sumSq = new Float64Array(dim);
  }

  /** Adds one batch, given the sums over its `length` samples. */
  addBatch(sums: ArrayLike<number>, length: number): void {
    for (let i = 0; i < this.dim; i++) {
      const m = sums[i] / length;
      this.sum[i] += m;
      this.sumSq[i] += m * m;
    }
    this.count++;
  }

  get batches(): number {
    return this.count;
  }

  mean(): Float64Array {
    return this.sum.map((s) => s / this.count);
  }

  /** NaN with fewer than two batches (no error estimate). */
  stdErr(): Float64Array {
    const b = this.count;
    return this.sum.map((s, i) => {
      if (b < 2) return NaN;
      const m = s / b;
      const v = Math.max(0, (this.sumSq[i] - b * m * m) / (b - 1));
      return Math.sqrt(v / b);
    });
  }
}

/** Sizes of `parts` near-equal consecutive pieces of `total` (each ≥ 1 when total ≥ parts). */
export function splitEvenly(total: number, parts: number): number[] {
  const out: number[] = [];
  for (let b = 0; b < parts; b++) out.push(Math.floor(((b + 1) * total) / parts) - Math.floor((b * total) / parts));
  return out.filter((x) => x > 0);
}
