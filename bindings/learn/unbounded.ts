// Data whose log-likelihood has no maximum. The model gives every configuration positive
// probability at finite parameters, so a statistic the data hold at the edge of its range (a column
// that is always 1, a pair of columns never seen as (1, 0)) keeps its gradient of one sign forever:
// along the parameters of that indicator — a state's bias; a pair's coupling with the two biases
// (binary: x_v(1 − x_w) = x_v − x_v x_w) — the gradient is the data's frequency, 0 or 1, less the
// model's, strictly between. Learning then drifts those parameters without bound, and the model it
// returns depends on how long it ran. These are the pair faces of the marginal polytope only: data
// that pass them may still have no maximum (a triangle of columns, hidden units), so no warning is
// not a proof that one exists. Weight decay on the couplings gives the penalised likelihood a
// maximum along every direction with a coupling in it, so with decay only the biases are checked.

import type { Arena, Engine } from '../core/engine.ts';
import type { BinaryData, BoundMachine } from './machine.ts';

/** Unit pairs counted per engine call (pairCounts). */
const PAIRS_PER_CALL = 2048;
/** Examples named in a warning; the rest are counted. */
const EXAMPLES = 5;

/**
 * The warnings for `data` (in engine memory at dataPtr as the machine's visible bit rows, as
 * BoundMachine.loadData leaves them) on machine `m`: columns that never take some state, and,
 * without weight decay, coupled pairs of visible columns never seen in some pair of states that
 * both columns take.
 */
export function unboundedWarnings(engine: Engine, m: BoundMachine, data: BinaryData, weightDecay: number, dataPtr: number): string[] {
  const counts = new DataColumns(engine, m, data.rows, dataPtr);
  try {
    return warningsFrom(m, data, weightDecay, counts);
  } finally {
    counts.dispose();
  }
}

function warningsFrom(m: BoundMachine, data: BinaryData, weightDecay: number, columns: DataColumns): string[] {
  const K = m.states, N = data.rows, cols = data.cols;
  const header = (data as { header?: unknown }).header;
  const name = (c: number): string => (Array.isArray(header) && typeof header[c] === 'string' ? `${c} ("${header[c]}")` : String(c));
  const count = columns.stateCounts(K);
  const seen = (c: number, s: number): boolean => count[c * K + s] > 0;
  const warnings: string[] = [];
  const list = (xs: string[]): string => (xs.length <= EXAMPLES ? xs.join(', ') : `${xs.slice(0, EXAMPLES).join(', ')} and ${xs.length - EXAMPLES} more`);

  const narrow: { c: number; missing: number[] }[] = [];
  for (let c = 0; c < cols; c++) {
    const missing: number[] = [];
    for (let s = 0; s < K; s++) if (!seen(c, s)) missing.push(s);
    if (missing.length > 0) narrow.push({ c, missing });
  }
  const tail = 'and the model learned depends on how long it ran';
  if (narrow.length === 1) {
    const { c, missing } = narrow[0];
    const what = K === 2 ? `is always ${1 - missing[0]}` : `never takes state ${missing.join(' or ')}`;
    warnings.push(`the log-likelihood has no maximum: column ${name(c)} of ${cols} ${what} in the data, so its bias grows without bound as learning goes on ${tail} (columns numbered from 0, as the model's variables)`);
  } else if (narrow.length > 1) {
    const each = narrow.map(({ c, missing }) => `${name(c)} (${K === 2 ? `always ${1 - missing[0]}` : `never ${missing.join(' or ')}`})`);
    warnings.push(`the log-likelihood has no maximum: ${narrow.length} of ${cols} columns ${K === 2 ? 'hold one value in every row' : 'never take some state'} — ${list(each)} — so their biases grow without bound as learning goes on ${tail} (columns numbered from 0, as the model's variables)`);
  }

  // Visible–visible pairs, only without weight decay.
  const E = m.pairs.length / 2;
  const vv: number[] = [];
  for (let e = 0; e < E; e++) if (m.pairs[2 * e + 1] < m.nVisible) vv.push(e);
  if (weightDecay > 0 || vv.length === 0) return warnings;
  const sums = columns.pairCounts(vv);
  const per = m.width * m.width, flagged: { i: number; j: number; hole: [number, number] }[] = [];
  for (let idx = 0; idx < vv.length; idx++) {
    const e = vv[idx], i = m.pairs[2 * e], j = m.pairs[2 * e + 1];
    let hole: [number, number] | null = null;
    for (let k = 0; k < K && !hole; k++) {
      for (let l = 0; l < K && !hole; l++) {
        if (!seen(i, k) || !seen(j, l)) continue;
        // The pair's count in states (k, l): binary from x_i x_j's count and the columns' counts.
        const n = m.width > 1 ? sums[idx * per + k * K + l] : cell(sums[idx], count[i * 2 + 1], count[j * 2 + 1], N, k, l);
        if (n === 0) hole = [k, l];
      }
    }
    if (hole) flagged.push({ i, j, hole });
  }
  if (flagged.length === 1) {
    const { i, j, hole } = flagged[0];
    warnings.push(`the log-likelihood has no maximum: columns ${name(i)} and ${name(j)} are never (${hole[0]}, ${hole[1]}) together in the data, though each takes its state there, so their coupling grows without bound as learning goes on (with their biases) ${tail}; weight decay (weightDecay, --weight-decay) bounds it`);
  } else if (flagged.length > 1) {
    warnings.push(`the log-likelihood has no maximum: ${flagged.length} coupled pairs of columns are never seen in some pair of states each column takes — ${list(flagged.map(({ i, j, hole }) => `${name(i)} and ${name(j)} never (${hole[0]}, ${hole[1]})`))} — so their couplings grow without bound as learning goes on (with the biases) ${tail}; weight decay (weightDecay, --weight-decay) bounds them`);
  }
  return warnings;
}

/** A binary pair's count in states (k, l) from n11, the two columns' counts of 1 and the rows. */
function cell(n11: number, ni: number, nj: number, N: number, k: number, l: number): number {
  if (k === 1 && l === 1) return n11;
  if (k === 1) return ni - n11;
  if (l === 1) return nj - n11;
  return N - ni - nj + n11;
}

/** The data's visible bits as column bitsets in the engine (assembly/learn/unbounded.ts), and the counts read off them. */
class DataColumns {
  private readonly arena: Arena;
  private readonly columns: number;

  constructor(private readonly engine: Engine, private readonly m: BoundMachine, private readonly rows: number, dataPtr: number) {
    this.arena = engine.arena();
    this.columns = this.arena.alloc(8 * m.visibleBits * engine.kernels.learnColumnWords(rows), false);
    engine.call('learn data columns', (kk) => kk.learnColumnBits(dataPtr, rows, m.visibleBits, this.columns));
  }

  /** Each column's rows in each of its K states, at c · K + s (binary: 1's from the bitset, 0's the rest). */
  stateCounts(K: number): Float64Array {
    const bits = this.m.visibleBits, out = this.arena.alloc(8 * bits, false);
    this.engine.call('learn data column counts', (kk) => kk.learnColumnCounts(this.columns, this.rows, bits, out));
    const on = this.arena.readF64(out, bits);
    if (this.m.width > 1) return on;
    const count = new Float64Array(2 * bits);
    for (let c = 0; c < bits; c++) (count[2 * c] = this.rows - on[c]), (count[2 * c + 1] = on[c]);
    return count;
  }

  /**
   * For each pair of vv (pair indices) and each pair of its states (k, l), the rows with the two
   * bits on (Potts: the states' one-hot bits), at idx · K² + k · K + l.
   */
  pairCounts(vv: number[]): Float64Array {
    const ar = this.arena, per = this.m.width * this.m.width, B = this.m.width;
    const unitPairs = new Int32Array(2 * vv.length);
    vv.forEach((e, idx) => unitPairs.set(this.m.pairs.subarray(2 * e, 2 * e + 2), 2 * idx));
    const pairs = ar.allocI32(unitPairs), out = ar.alloc(8 * vv.length * per, false);
    this.engine.call('learn data pair counts', (kk) => {
      // In calls of a few thousand pairs: V8 swaps a WASM function's optimised code in between calls
      // only, so one long call ran on its baseline code throughout.
      for (let k0 = 0; k0 < vv.length; k0 += PAIRS_PER_CALL) {
        const c = Math.min(PAIRS_PER_CALL, vv.length - k0);
        kk.learnPairCounts(this.columns, this.rows, pairs + 8 * k0, c, B, out + 8 * k0 * per);
      }
    });
    return ar.readF64(out, vv.length * per);
  }

  dispose(): void {
    this.arena.dispose();
  }
}
