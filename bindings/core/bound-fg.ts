// A model's factor graph copied into one engine's memory, with the header the any-arity kernels
// read (assembly/core/factorgraph.ts): the model's own arrays (one copy each), each scope
// position's stride in its factor's table, and the variable → factor incidence rows.

import type { Arena, Engine } from './engine.ts';
import type { Model } from './model.ts';
import { EngineError } from './errors.ts';

/** Sizes that fix the bound factor graph's memory (from the model alone, before anything is built). */
export interface FactorGraphSize {
  n: number;
  nFactors: number;
  /** Scope entries over all factors. */
  scopeEntries: number;
  tableEntries: number;
  maxCard: number;
}

export function factorGraphSize(model: Model): FactorGraphSize {
  let maxCard = 1;
  for (let v = 0; v < model.n; v++) maxCard = Math.max(maxCard, model.card[v]);
  return { n: model.n, nFactors: model.nFactors, scopeEntries: model.scopeVars.length, tableEntries: model.tables.length, maxCard };
}

/** WASM bytes a BoundFactorGraph of this size allocates (each buffer rounded to 16 bytes as the arena does). */
export function boundFactorGraphBytes(engine: Engine, s: FactorGraphSize): number {
  const r = (b: number) => Math.max(16, Math.ceil(b / 16) * 16);
  return r(4 * s.n) + r(4 * (s.nFactors + 1)) + 2 * r(4 * s.scopeEntries) + r(4 * s.nFactors) + r(8 * s.tableEntries)
    + r(4 * (s.n + 1)) + 2 * r(4 * s.scopeEntries) + r(engine.kernels.factorGraphBytes());
}

export class BoundFactorGraph {
  readonly arena: Arena;
  /** Address of the kernels' FactorGraph header. */
  readonly header: number;
  readonly maxCard: number;
  /** Largest number of factors containing one variable. */
  readonly maxDegree: number;

  /**
   * The model bound into the engine, after checking (from its size alone, before allocating
   * anything) that it fits with `extraBytes` more for the caller's buffers.
   */
  static fromModel(engine: Engine, model: Model, what: string, extraBytes: (s: FactorGraphSize) => number = () => 0): BoundFactorGraph {
    const size = factorGraphSize(model);
    engine.ensureFits(boundFactorGraphBytes(engine, size) + extraBytes(size), `${what} on ${model.n} variables`, 8 * size.tableEntries);
    return new BoundFactorGraph(engine, model);
  }

  private constructor(readonly engine: Engine, readonly model: Model) {
    const { n, card, scopeStart, scopeVars, tableStart, tables } = model;
    const F = model.nFactors, S = scopeVars.length;
    // Strides: within a factor, the last scope variable varies fastest.
    const scopeStride = new Int32Array(S);
    for (let f = 0; f < F; f++) {
      let stride = 1;
      for (let p = scopeStart[f + 1] - 1; p >= scopeStart[f]; p--) {
        scopeStride[p] = stride;
        stride *= card[scopeVars[p]];
      }
    }
    // Incidence rows by counting sort over the scope entries (factors in increasing order per variable).
    const incStart = new Int32Array(n + 1);
    for (let p = 0; p < S; p++) incStart[scopeVars[p] + 1]++;
    let maxDegree = 0;
    for (let v = 0; v < n; v++) {
      maxDegree = Math.max(maxDegree, incStart[v + 1]);
      incStart[v + 1] += incStart[v];
    }
    const incFactor = new Int32Array(S), incStride = new Int32Array(S), fill = incStart.slice(0, n);
    for (let f = 0; f < F; f++) {
      for (let p = scopeStart[f]; p < scopeStart[f + 1]; p++) {
        const q = fill[scopeVars[p]]++;
        incFactor[q] = f;
        incStride[q] = scopeStride[p];
      }
    }
    let maxCard = 1;
    for (let v = 0; v < n; v++) maxCard = Math.max(maxCard, card[v]);
    this.maxCard = maxCard;
    this.maxDegree = maxDegree;
    const arena = (this.arena = engine.arena());
    const ptr = {
      card: arena.allocI32(card),
      scopeStart: arena.allocI32(scopeStart),
      scopeVars: arena.allocI32(scopeVars),
      scopeStride: arena.allocI32(scopeStride),
      tableStart: arena.allocI32(tableStart),
      tables: arena.allocF64(tables),
      incStart: arena.allocI32(incStart),
      incFactor: arena.allocI32(incFactor),
      incStride: arena.allocI32(incStride),
    };
    this.header = arena.alloc(engine.kernels.factorGraphBytes());
    engine.call('factorGraphInit', (k) =>
      k.factorGraphInit(this.header, n, F, maxCard, maxDegree, ptr.card, ptr.scopeStart, ptr.scopeVars, ptr.scopeStride, ptr.tableStart, ptr.tables, ptr.incStart, ptr.incFactor, ptr.incStride, model.logConst),
    );
  }

  /** The header address, after checking this binding still owns its memory. */
  live(): number {
    if (this.arena.isDisposed) throw new EngineError('use after dispose(): this object has released its engine memory');
    return this.header;
  }

  /** A configuration buffer (i32 per variable) in this binding's memory, filled from `x` if given. */
  configuration(x?: ArrayLike<number>): number {
    const p = this.arena.allocI32(this.model.n);
    if (x) this.arena.i32(p, this.model.n).set(x);
    return p;
  }

  dispose(): void {
    this.arena.dispose();
  }
}
