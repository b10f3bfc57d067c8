// Bucket elimination on factor graphs of any arity and cardinality: log Z and every node marginal
// (assembly/exact/exact_block.ts streams the cliques, exact_bucket.ts holds forms and decoding).
//
// The plan (bucket-plan.ts): each factor in the bucket of its free variable eliminated first;
// eliminating v streams the clique C_v = {v} ∪ S_v into the message m_v on S_v, which goes to the
// bucket of S_v's first-eliminated variable. Here the run:
//  * upward: each clique streamed over its bucket's tables into its message; log Z from the roots;
//  * downward: one stream of v's clique over its tables and δ_v (the rest of the model seen from
//    S_v) gives v's marginal and each child's separator belief, and δ_c = belief / m_c; with one
//    child, the stream leaves m_c out and gives δ_c itself, and v's marginal is Σ m_c · δ_c.
// Every table is laid out in elimination order (factors are copied so), which lets the kernel walk
// a clique in blocks of its last variables with contiguous runs (exact_block.ts). No clique table is
// ever stored: memory is the upward messages (each δ_c overwrites m_c) plus one clique's children's
// beliefs. Tables are linear with a log scale where their range allows (products then exact
// without exp), log values otherwise, so any dynamic range and zero potentials are exact.

import { WASM_MAX_BLOCK, type Arena, type Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import { EngineError } from '../core/errors.ts';
import { seedWords } from '../core/seed.ts';
import { sameShape, sizeOf, type BucketPlan, type TableRef } from './bucket-plan.ts';
import { CompensatedSum, type ExactOutcome } from './outcome.ts';

const EXACT_SAMPLE_STREAM = 0x4553; // "ES"

/** Linear products are exact when the inputs' finite log values span ≤ this many nats in total. */
const LINEAR_RANGE = 700;

/** Clique configurations per block of the linear kernel (assembly/exact/exact_block.ts). */
const BLOCK = 4096;
/** Entries of the table P[x_v][block] the inputs over v and the block alone are multiplied into. */
const PREMULTIPLIED = 1 << 16;

/** How a BlockTable's strides are found (tableStride). */
const FACTOR_TABLE = 0, MESSAGE_TABLE = 1, UNIT_TABLE = 2, PREMULTIPLIED_TABLE = 3;

/**
 * A table as the block kernel reads it: its address and what it is over — `how` FACTOR_TABLE:
 * factor `id`'s copy; MESSAGE_TABLE: S_id (message id, its δ, child id's belief); UNIT_TABLE: the
 * variable id alone; PREMULTIPLIED_TABLE: P[x_id][block] (stride B along id, the block's own along
 * `blockVars`). Data, not a stride closure per table: closures made every stride call site
 * megamorphic and were a tenth of a thin model's run.
 */
interface BlockTable {
  addr: number;
  how: number;
  id: number;
  /** Entries (outputs: zero-filled when the kernel cannot write them on first visit). */
  len?: number;
  B?: number;
  blockVars?: number[];
}

/** u's stride in table t (0 if absent). */
function tableStride(s: BucketShape, card: Int32Array, t: BlockTable, u: number): number {
  const id = t.id;
  switch (t.how) {
    case FACTOR_TABLE:
      for (let q = s.fStart[id], e = q + s.fLen[id]; q < e; q++) if (s.fVar[q] === u) return s.fStr[q];
      return 0;
    case MESSAGE_TABLE:
      return s.msgStride(id, u);
    case UNIT_TABLE:
      return u === id ? 1 : 0;
    default:
      return u === id ? t.B! : blockStride(t.blockVars!, u, card);
  }
}

/**
 * A table's run over a block (bucketBlock's runs): the block's digits have cardinalities `cards`
 * (the last fastest, B configurations) and the table the strides `strides` (0 where it lacks the
 * digit). Its trailing digits are held contiguously (kind 0: entries seg[s] + r) or not at all
 * (kind 1: one entry seg[s] per run; kind 2 when moreover seg[s] = s, the table holding the other
 * block digits contiguously: the kernel then reads the runs' entries as one array), R configurations
 * per run; segs: the B / R run offsets; distinct: no two runs share an entry.
 */
export function blockRuns(cards: number[], strides: number[], B: number): { kind: number; R: number; segs: Int32Array; distinct: boolean } {
  const nb = cards.length;
  let L = 0, R = 1, kind = 1;
  if (nb > 0 && strides[nb - 1] !== 0) {
    kind = 0;
    while (L < nb && strides[nb - 1 - L] === R) R *= cards[nb - 1 - L++];
  } else while (L < nb && strides[nb - 1 - L] === 0) R *= cards[nb - 1 - L++];
  const segs = new Int32Array(B / R), digit = new Int32Array(nb - L);
  let consecutive = kind === 1 && R < B;
  for (let j = nb - L - 1, st = 1; j >= 0 && consecutive; j--) (consecutive = strides[j] === st), (st *= cards[j]);
  if (consecutive) {
    for (let s = 0; s < segs.length; s++) segs[s] = s;
    return { kind: 2, R, segs, distinct: true };
  }
  for (let s = 0, at = 0; s < segs.length; s++) {
    segs[s] = at;
    for (let j = nb - L - 1; j >= 0; j--) {
      if (++digit[j] < cards[j]) {
        at += strides[j];
        break;
      }
      at -= (cards[j] - 1) * strides[j];
      digit[j] = 0;
    }
  }
  // The runs are distinct (no entry visited twice per block) unless the table lacks a digit past them.
  return { kind, R, segs, distinct: strides.slice(0, nb - L).every((s) => s !== 0) };
}

/**
 * What a run computes from its plan's shape alone (the order, which variables are free, the
 * separators), not from the fixed states' values: the block workspace's sizes, the factors' free
 * scopes and strides, the messages' strides, each clique's block and the block layouts' runs. The
 * slices of a sliced plan share one (withFixedStates), so a slice pays for its tables and the
 * kernels only, not for planning again.
 */
export interface BucketShape {
  /** The plan it was made from. */
  plan: BucketPlan;
  maxK: number;
  maxBlock: number;
  maxTables: number;
  /** The downward pass's workspace: the largest set of one clique's children's separator beliefs. */
  wsEntries: number;
  maxDigits: number;
  /** Factor f's free variables (each once, by position) are fVar[fStart[f] ..][..fLen[f]], their strides (the last fastest) fStr at the same places; its copy's entries fOff[f] … fOff[f + 1]. */
  fStart: Int32Array;
  fLen: Int32Array;
  fVar: Int32Array;
  fStr: Float64Array;
  fOff: Float64Array;
  /** Message v's variables are S_v, their strides mStr[mStart[v] ..]; its entries mSize[v]. */
  mStart: Int32Array;
  mStr: Float64Array;
  mSize: Float64Array;
  /** u's stride in message v (0 if absent). */
  msgStride(v: number, u: number): number;
  /** v's clique as the block kernels walk it: outer digits (S_v's first ones, then v) and the block (S_v's last ones). */
  cliqueBlock(v: number): { outer: number[]; blockVars: number[]; B: number };
  /** Each table layout's runs over a block (they depend on the block's cardinalities and the table's strides only: few distinct), in a trie keyed by (cardinality, stride) per block variable. */
  runCache: RunTrie;
  /**
   * Each block call's layout, by its key (8 v + the call's kind: UP_CALL …), made on its first run;
   * null when the shape serves one run (keeping them would only load the garbage collector: a
   * 10⁵-variable chain ran 1.7× slower).
   */
  layouts: CallLayout[] | null;
  /** Each stream's inputs multiplied into P[x_v][block] first (their indices; none: not premultiplied), by its key; null as layouts. */
  premultiplied: Int32Array[] | null;
}

/** The run shape of plan `p`; `keep`: it serves several runs (slices), so the block calls' layouts are kept as they are made. */
export function bucketShape(model: Model, p: BucketPlan, keep = false): BucketShape {
  const { n, card } = model;
  // The block kernel's workspace: a block buffer and each table's segment offsets.
  let maxIn = 2, maxK = 1, maxDigits = 2, wsEntries = 1;
  for (const v of p.order) {
    maxIn = Math.max(maxIn, p.bucket[v].length + 1);
    maxK = Math.max(maxK, card[v]);
    maxDigits = Math.max(maxDigits, p.sep[v].length + 2);
    let kids = 0;
    for (const r of p.bucket[v]) if (r.kind === 'up') kids += sizeOf(p.sep[r.id], card);
    wsEntries = Math.max(wsEntries, kids);
  }
  // Each factor is copied with its free variables in elimination order (the first eliminated
  // slowest, as in the messages: see assembly/exact/exact_block.ts) and the fixed ones folded in.
  const pos = new Int32Array(n).fill(-1);
  p.order.forEach((v, t) => (pos[v] = t));
  const nF = model.nFactors;
  const fStart = new Int32Array(nF + 1), fLen = new Int32Array(nF);
  for (let f = 0; f < nF; f++) fStart[f + 1] = fStart[f] + model.arity(f);
  const fVar = new Int32Array(fStart[nF]), fStr = new Float64Array(fStart[nF]);
  const fOff = new Float64Array(nF + 1);
  for (let f = 0; f < nF; f++) {
    const b = fStart[f], sc = model.scope(f);
    let len = 0;
    for (let k = 0; k < sc.length; k++) {
      const u = sc[k];
      if (p.fixed[u] >= 0) continue;
      let q = b + len, seen = false;
      for (let j = b; j < b + len; j++) seen ||= fVar[j] === u;
      if (seen) continue;
      while (q > b && pos[fVar[q - 1]] > pos[u]) (fVar[q] = fVar[q - 1]), q--;
      fVar[q] = u;
      len++;
    }
    fLen[f] = len;
    let stride = 1;
    for (let q = b + len - 1; q >= b; q--) (fStr[q] = stride), (stride *= card[fVar[q]]);
    fOff[f + 1] = fOff[f] + stride;
  }
  const mStart = new Int32Array(n + 1);
  for (const v of p.order) mStart[v + 1] = p.sep[v].length;
  for (let v = 0; v < n; v++) mStart[v + 1] += mStart[v];
  const mStr = new Float64Array(mStart[n]);
  const mSize = new Float64Array(n);
  for (const v of p.order) {
    const sv = p.sep[v];
    let stride = 1;
    for (let q = sv.length - 1; q >= 0; q--) (mStr[mStart[v] + q] = stride), (stride *= card[sv[q]]);
    mSize[v] = stride;
  }
  const blocks: ({ outer: number[]; blockVars: number[]; B: number } | undefined)[] = new Array(n);
  const cliqueBlockOf = (v: number): { outer: number[]; blockVars: number[]; B: number } => {
    const sepV = p.sep[v];
    let nb = 0, B = 1;
    while (nb < sepV.length && (nb === 0 || B * card[sepV[sepV.length - 1 - nb]] <= BLOCK)) B *= card[sepV[sepV.length - 1 - nb++]];
    const outer = new Array<number>(sepV.length - nb + 1), blockVars = new Array<number>(nb);
    for (let j = 0; j < sepV.length - nb; j++) outer[j] = sepV[j];
    outer[sepV.length - nb] = v;
    for (let j = 0; j < nb; j++) blockVars[j] = sepV[sepV.length - nb + j];
    return { outer, blockVars, B };
  };
  return {
    plan: p, maxK, maxBlock: Math.max(BLOCK, maxK), maxTables: 2 * maxIn + 1, wsEntries, maxDigits, fStart, fLen, fVar, fStr, fOff, mStart, mStr, mSize,
    msgStride: (v, u) => {
      const sv = p.sep[v], b = mStart[v];
      for (let q = 0; q < sv.length; q++) if (sv[q] === u) return mStr[b + q];
      return 0;
    },
    cliqueBlock: (v) => (blocks[v] ??= cliqueBlockOf(v)),
    runCache: { next: new Map() },
    // Packed arrays (no holes) of one slot per key: lookups stay fast.
    layouts: keep ? (new Array<CallLayout | undefined>(8 * n).fill(undefined) as CallLayout[]) : null,
    premultiplied: keep ? (new Array<Int32Array | undefined>(8 * n).fill(undefined) as Int32Array[]) : null,
  };
}

/** Backward decoding after the upward pass: exact samples (sum) or a MAP configuration (max). */
export interface DecodeRequest {
  mode: 'sample' | 'max';
  count: number;
  seed: number;
  /** The sampling stream's chain under that seed (default 0): one per slice of a sliced plan. */
  chain?: number;
}

/**
 * Runs the plan: log Z and every marginal; or, with `decode`, the upward pass (sum or max) and
 * then `count` configurations decoded backward along the order (ExactOutcome.logZ is then the
 * largest log-potential in max mode), in `configurations` (count · n, row by row). `given`: the
 * plan's run shape, when the caller keeps one (slices); `streamed`: told each clique's
 * configurations as its stream ends, upward and downward (in all, the plan's flops).
 */
export function runBucketElimination(engine: Engine, model: Model, p: BucketPlan, decode?: DecodeRequest, given?: BucketShape, streamed?: (configurations: number) => void): ExactOutcome & { configurations?: Int32Array } {
  const { n, card } = model;
  if (p.impossible >= 0) return { logZ: -Infinity, marginals: null, zeroReason: `variable ${p.impossible}: its unary factors (or evidence) give every state zero potential` };
  const x0 = new Int32Array(n);
  for (let v = 0; v < n; v++) x0[v] = Math.max(0, p.fixed[v]);
  let logZ = model.logConst;
  for (const f of p.constantFactors) logZ += model.tables[model.tableStart[f] + model.entryIndex(f, x0)];
  if (logZ === -Infinity) return { logZ, marginals: null, zeroReason: 'the observed or fixed variables have zero potential together' };
  const shape = given ?? bucketShape(model, p);
  if (!sameShape(shape.plan, p)) throw new Error("runBucketElimination: the shape given is another plan's");
  const { maxK, maxBlock, maxTables, wsEntries, maxDigits, fStart, fLen, fVar, fStr, fOff, mStart, mStr, mSize, msgStride, cliqueBlock, runCache, layouts, premultiplied } = shape;
  engine.ensureFits(p.bytes + 8 * wsEntries + maxBlock * (8 + 4 * maxTables) + 8 * PREMULTIPLIED, `exact elimination on ${n} variables`, 8 * p.maxMessage);
  const nF = model.nFactors;

  const arena = engine.arena();
  let disposeAll = (): void => {};
  try {
    // Each factor's own copy (tables may be shared between factors; each copy is linearised alone).
    const tablesPtr = arena.alloc(8 * Math.max(1, fOff[model.nFactors]));
    const copies = arena.f64(tablesPtr, fOff[nF]);
    for (let f = 0; f < nF; f++) factorInOrder(model, f, fVar, fStart[f], fLen[f], p.fixed, copies, fOff[f]);
    // The messages (each δ_c later takes m_c's place) and the downward workspace: one
    // block allocated after everything else, so the allocator grows memory by just that much (it
    // would double it for a block that does not fit); past the largest block, one arena per
    // message, freed as soon as the downward pass is done with it. Neither is zeroed: the kernels
    // write every message and belief entry on its first visit, and blockRun zero-fills the outputs
    // they cannot.
    const up = new Float64Array(n), down = new Float64Array(n);
    const upArena: (Arena | null)[] = new Array(n).fill(null);
    let slab = 0, slabAt = 0;
    // The log-space streams' s-tables (bucketBlockLog), allocated when a clique first needs them.
    let logScratch: Arena | null = null, logScratchEntries = 0, logScratchPtr = 0;
    const own = (list: (Arena | null)[], v: number): number => {
      if (slab === 0) return (list[v] = engine.arena()).alloc(8 * mSize[v], false);
      slabAt += 8 * mSize[v];
      return slabAt - 8 * mSize[v];
    };
    const release = (list: (Arena | null)[], v: number): void => {
      list[v]?.dispose();
      list[v] = null;
    };
    disposeAll = () => {
      for (let v = 0; v < n; v++) release(upArena, v);
      logScratch?.dispose();
    };
    const margOut = arena.alloc(8 * maxK);
    const pCards = arena.alloc(4 * maxDigits), pDigit = arena.alloc(4 * maxDigits);
    const pBlockBuf = arena.alloc(8 * maxBlock), pSegs = arena.alloc(4 * maxBlock * maxTables), pRuns = arena.alloc(12 * maxTables);
    const pAddr = arena.alloc(4 * maxTables), pBlockStrides = arena.alloc(4 * maxTables * maxDigits), pBlockOff = arena.alloc(4 * maxTables), pSAddr = arena.alloc(4 * maxTables), pPre = arena.alloc(8 * PREMULTIPLIED);
    const pRes = arena.alloc(24), pZmask = arena.alloc(4 * maxTables), pStats = arena.alloc(16 * maxTables);
    // Each table's form: linear (e^(x − scale)) where its finite entries span ≤ 700 nats, else log.
    const form = { factor: new Float64Array(3 * model.nFactors), up: new Float64Array(3 * n), down: new Float64Array(3 * n) };
    /** A table's form (a named property: a lookup keyed by the kind's string was a generic one, per input per clique). */
    const formOf = (r: TableRef): Float64Array => (r.kind === 'factor' ? form.factor : r.kind === 'up' ? form.up : form.down);
    const k0 = engine.kernels;
    // Views of the whole memory for the many small reads and writes around the kernels, rebuilt when
    // memory grows (messages past the slab, the log streams' scratch). Index = byte address / size.
    let heapBuffer: ArrayBufferLike | null = null, I32 = new Int32Array(0), U32 = new Uint32Array(0), F64 = new Float64Array(0);
    const heap = (): void => {
      const b = k0.memory.buffer;
      if (b !== heapBuffer) (heapBuffer = b), (I32 = new Int32Array(b)), (U32 = new Uint32Array(b)), (F64 = new Float64Array(b));
    };
    /** The form (linear flag, scale, range) a kernel wrote at pRes, into `into` at 3 · at. */
    const formOut = (into: Float64Array, at: number): void => {
      heap();
      const r = pRes / 8;
      (into[3 * at] = F64[r]), (into[3 * at + 1] = F64[r + 1]), (into[3 * at + 2] = F64[r + 2]);
    };
    const linearise = (ptr: number, len: number, into: Float64Array, at: number): void => {
      engine.call('bucket elimination', (k) => k.bucketLinearise(ptr, len, pRes));
      formOut(into, at);
    };
    /** A linear table relative to e^shift (a linear clique's output) put into a form. */
    const rescale = (ptr: number, len: number, shift: number, into: Float64Array, at: number): void => {
      engine.call('bucket elimination', (k) => k.bucketRescale(ptr, len, shift, pRes));
      formOut(into, at);
    };
    /** rescale given the table's largest entry and smallest positive one at st (f64[2], gathered while it was written). */
    const scale = (ptr: number, len: number, shift: number, st: number, into: Float64Array, at: number): void => {
      const [hi, lo] = arena.f64(st, 2);
      engine.call('bucket elimination', (k) => k.bucketScale(ptr, len, shift, hi, lo, pRes));
      formOut(into, at);
    };
    for (let f = 0; f < model.nFactors; f++) linearise(tablesPtr + 8 * fOff[f], fOff[f + 1] - fOff[f], form.factor, f);

    const addrOf = (r: TableRef): number => (r.kind === 'factor' ? tablesPtr + 8 * fOff[r.id] : r.kind === 'up' ? up[r.id] : down[r.id]);
    /**
     * The linear case's shift (Σ of the inputs' scales) when every input is linear and their
     * ranges add up to ≤ 700 nats (every nonzero product is then ≥ e^−700, a normal number: the
     * linear products are exact); null when the clique needs log space.
     */
    const linearShift = (inputs: TableRef[]): number | null => {
      let shift = 0, range = 0;
      for (const r of inputs) {
        const f = formOf(r);
        if (!f[3 * r.id]) return null;
        shift += f[3 * r.id + 1];
        range += f[3 * r.id + 2];
      }
      return range <= LINEAR_RANGE ? shift : null;
    };
    /**
     * Turns the linear ones of `inputs` into log tables in place (the log-space stream then reads
     * every input without a log per configuration). Safe: a bucket's tables are read by its own
     * clique only, in both passes, and by decoding, all through their forms.
     */
    const toLog = (inputs: TableRef[]): void => {
      for (const r of inputs) {
        const f = formOf(r);
        if (!f[3 * r.id]) continue;
        const len = r.kind === 'factor' ? fOff[r.id + 1] - fOff[r.id] : mSize[r.id];
        engine.call('bucket elimination', (k) => k.bucketToLog(addrOf(r), len, f[3 * r.id + 1]));
        f[3 * r.id] = 0;
        f[3 * r.id + 1] = 0;
      }
    };
    /**
     * Streams v's clique (S_v and v) over linear `inputs` (see linearShift) into `outs` (each written
     * on its entries' first visit, or zero-filled first by blockRun where the kernel cannot),
     * in blocks of the trailing separator variables (assembly/exact/exact_block.ts): outer digits
     * S_v's others then v, the block S_v's last ones; with `stats` the outputs' ranges go to pStats.
     */
    const blockStream = (key: number, v: number, inputs: BlockTable[], outs: BlockTable[], mode: number, stats: boolean): void => {
      const { outer, blockVars, B } = cliqueBlock(v);
      // The inputs over v and block variables only are multiplied once into one table P[x_v][block].
      const inner = premultiplied ? (premultiplied[key] ??= premultipliedInputs(shape, v, outer, blockVars, B, inputs, card)) : premultipliedInputs(shape, v, outer, blockVars, B, inputs, card);
      if (inner.length > 0) {
        const pre: BlockTable = { addr: pPre, len: card[v] * B, how: PREMULTIPLIED_TABLE, id: v, B, blockVars };
        const innerTables: BlockTable[] = [], rest: BlockTable[] = [pre];
        for (let i = 0, q = 0; i < inputs.length; i++) (q < inner.length && inner[q] === i ? (q++, innerTables) : rest).push(inputs[i]);
        blockRun(key + PREMULTIPLY_CALL, [v], blockVars, B, innerTables, [pre], true, (nOuter) => k0.bucketBlock(nOuter, pCards, innerTables.length, 1, pAddr, pBlockStrides, B, pRuns, 0, pDigit, pBlockOff, pBlockBuf, pZmask, 0));
        inputs = rest;
      }
      blockRun(key, outer, blockVars, B, inputs, outs, true, (nOuter) => k0.bucketBlock(nOuter, pCards, inputs.length, outs.length, pAddr, pBlockStrides, B, pRuns, mode, pDigit, pBlockOff, pBlockBuf, pZmask, stats ? pStats : 0));
    };
    /**
     * blockStream over log tables (assembly/exact/exact_block.ts, bucketBlockLog): each output
     * becomes the log of its sum (mode 0) or its largest log-product (mode 1).
     */
    const blockStreamLog = (key: number, v: number, inputs: BlockTable[], outs: (BlockTable & { len: number })[], mode: number): void => {
      const { outer, blockVars, B } = cliqueBlock(v);
      for (const o of outs) arena.f64(o.addr, o.len).fill(-Infinity);
      const run = (pass: number): void => blockRun(key, outer, blockVars, B, inputs, outs, false, (nOuter) => k0.bucketBlockLog(nOuter, pCards, inputs.length, outs.length, pAddr, pBlockStrides, B, pRuns, pass, pSAddr, pDigit, pBlockOff, pBlockBuf));
      run(0);
      if (mode === 1) return;
      let total = 0;
      for (const o of outs) total += o.len;
      if (!logScratch || logScratchEntries < total) {
        logScratch?.dispose();
        logScratch = engine.arena();
        logScratchEntries = total;
        logScratchPtr = logScratch.alloc(8 * total);
      }
      arena.f64(logScratchPtr, total).fill(0);
      const sAddr = arena.u32(pSAddr, outs.length);
      let at = logScratchPtr;
      outs.forEach((o, q) => ((sAddr[q] = at), (at += 8 * o.len)));
      const sList = Array.from(sAddr);
      run(1);
      outs.forEach((o, q) => engine.call('bucket elimination', (k) => k.bucketLogFinish(o.addr, sList[q], o.len)));
    };
    // One run alone: each block call's layout made in one scratch layout, not kept.
    const scratch = layouts ? null : scratchLayout(maxDigits, maxTables);
    /**
     * Writes one block call's tables (the outer digits' cardinalities and strides, each table's
     * runs and segments over the block: its layout, made on the call `key`'s first run and kept in
     * the shape when it serves several runs) and runs `call`.
     */
    const blockRun = (key: number, outer: number[], blockVars: number[], B: number, inputs: BlockTable[], outs: BlockTable[], linear: boolean, call: (nOuter: number) => void): void => {
      const nI = inputs.length, nT = nI + outs.length, nOuter = outer.length;
      const L = layouts ? (layouts[key] ??= callLayout(shape, card, outer, blockVars, B, inputs, outs)) : callLayout(shape, card, outer, blockVars, B, inputs, outs, scratch!);
      if (L.tables !== nT || L.outer !== nOuter) throw new Error(`bucket elimination: block call ${key} changed its tables`);
      heap();
      // Element loops: these arrays are short, where TypedArray.set costs more than it copies.
      const { cards, strides } = L;
      for (let j = 0, at = pCards / 4; j < nOuter; j++) I32[at + j] = cards[j];
      for (let j = 0, at = pBlockStrides / 4; j < nT * nOuter; j++) I32[at + j] = strides[j];
      for (let t = 0; t < nT; t++) {
        U32[pAddr / 4 + t] = t < nI ? inputs[t].addr : outs[t - nI].addr;
        const { kind, R, segs } = L.runs[t];
        const segPtr = pSegs + 4 * maxBlock * t;
        // Kind 2 and whole-block runs are read without their offsets.
        if (kind !== 2 && R < B) I32.set(segs, segPtr / 4);
        else I32[segPtr / 4] = 0;
        const r = pRuns / 4 + 3 * t;
        (I32[r] = kind), (I32[r + 1] = R), (I32[r + 2] = segPtr);
      }
      // An output written on its entries' first visit has its mask (callLayout); else the caller's zeros are added to.
      if (linear) {
        for (let q = 0; q < outs.length; q++) {
          const mask = L.masks[q], o = outs[q];
          if (mask < 0) F64.fill(0, o.addr / 8, o.addr / 8 + o.len!);
          I32[pZmask / 4 + q] = mask;
        }
      }
      engine.call('bucket elimination', () => call(nOuter));
    };
    const blockTable = (r: TableRef): BlockTable => ({ addr: addrOf(r), how: r.kind === 'factor' ? FACTOR_TABLE : MESSAGE_TABLE, id: r.id });
    /** The decoding kernel's tables: each bucket's inputs with their (variable, stride) scope entries. */
    const decodeBackward = (req: DecodeRequest): Int32Array => {
      // Sized first, then filled: typed arrays, not a push per table and scope entry.
      let refs = 0, entries = 0;
      for (const v of p.order) {
        for (const r of p.bucket[v]) {
          refs++;
          entries += r.kind === 'factor' ? fLen[r.id] : p.sep[r.id].length;
        }
      }
      const bStart = new Int32Array(p.order.length + 1), addr = new Uint32Array(refs), lin = new Int32Array(refs), sc = new Float64Array(refs);
      const sStart = new Int32Array(refs + 1), sVar = new Int32Array(entries), sStride = new Int32Array(entries);
      let t = 0, e = 0;
      p.order.forEach((v, q) => {
        for (const r of p.bucket[v]) {
          addr[t] = addrOf(r);
          const f = formOf(r);
          lin[t] = f[3 * r.id];
          sc[t] = f[3 * r.id + 1];
          // Last variable first (the order the kernel has always been given).
          if (r.kind === 'factor') for (let k = fStart[r.id] + fLen[r.id] - 1; k >= fStart[r.id]; k--) (sVar[e] = fVar[k]), (sStride[e++] = fStr[k]);
          else for (let k = p.sep[r.id].length - 1; k >= 0; k--) (sVar[e] = p.sep[r.id][k]), (sStride[e++] = mStr[mStart[r.id] + k]);
          sStart[++t] = e;
        }
        bStart[q + 1] = t;
      });
      const d = engine.arena();
      try {
        const ptr = {
          order: d.allocI32(p.order), card: d.allocI32(card), bStart: d.allocI32(bStart), addr: d.alloc(4 * Math.max(1, refs)),
          lin: d.allocI32(Math.max(1, refs)), sc: d.allocF64(Math.max(1, refs)), sStart: d.allocI32(sStart),
          sVar: d.allocI32(Math.max(1, entries)), sStride: d.allocI32(Math.max(1, entries)),
          rng: d.alloc(engine.kernels.rngStateBytes()), out: d.alloc(4 * req.count * n), buf: d.alloc(8 * maxK),
        };
        d.u32(ptr.addr, addr.length).set(addr);
        d.i32(ptr.lin, lin.length).set(lin);
        d.f64(ptr.sc, sc.length).set(sc);
        d.i32(ptr.sVar, sVar.length).set(sVar);
        d.i32(ptr.sStride, sStride.length).set(sStride);
        const x0 = Int32Array.from(p.fixed, (s) => Math.max(0, s));
        for (let c = 0; c < req.count; c++) d.i32(ptr.out + 4 * c * n, n).set(x0);
        const [lo, hi] = seedWords(req.seed);
        engine.call('exact decoding', (k) => {
          k.rngSeed(ptr.rng, lo, hi, req.chain ?? 0, EXACT_SAMPLE_STREAM);
          k.bucketDecode(p.order.length, ptr.order, ptr.card, ptr.bStart, ptr.addr, ptr.lin, ptr.sc, ptr.sStart, ptr.sVar, ptr.sStride, n, req.count, req.mode === 'max' ? 1 : 0, ptr.rng, ptr.out, ptr.buf);
        });
        return d.i32(ptr.out, req.count * n).slice();
      } finally {
        d.dispose();
      }
    };
    /** A downward stream's outputs: v's marginal, then each child's separator belief. */
    const beliefTables = (v: number, children: number[]): (BlockTable & { len: number })[] => {
      const outs: (BlockTable & { len: number })[] = [{ addr: margOut, len: card[v], how: UNIT_TABLE, id: v }];
      for (const c of children) outs.push({ addr: belief[c], len: mSize[c], how: MESSAGE_TABLE, id: c });
      return outs;
    };
    const setMarginal = (v: number, lg: Float64Array, linear: boolean): void => {
      let mx = -Infinity;
      for (let k = 0; k < card[v]; k++) mx = Math.max(mx, lg[k]);
      let s = 0;
      for (let k = 0; k < card[v]; k++) s += marginals[v][k] = linear ? lg[k] : Math.exp(lg[k] - mx);
      for (let k = 0; k < card[v]; k++) marginals[v][k] /= s;
    };
    // Views of one array (a buffer per variable made the garbage collector's work grow with n).
    let entries = 0;
    for (let v = 0; v < n; v++) entries += card[v];
    const allMarginals = new Float64Array(entries);
    let mAt = 0;
    const marginals = Array.from(card, (K, v) => {
      const m = allMarginals.subarray(mAt, (mAt += K));
      if (p.fixed[v] >= 0) m[p.fixed[v]] = 1;
      return m;
    });

    let slabEntries = wsEntries;
    for (const v of p.order) slabEntries += mSize[v];
    // Not zeroed (see above).
    if (8 * slabEntries <= WASM_MAX_BLOCK) slabAt = slab = arena.alloc(8 * slabEntries, false);

    // Upward (log Z: the constant, then each root's message, summed with compensation).
    const roots = new CompensatedSum();
    roots.add(logZ);
    for (const v of p.order) {
      up[v] = own(upArena, v);
      const shift = linearShift(p.bucket[v]);
      if (shift !== null) {
        const out: BlockTable = { addr: up[v], len: mSize[v], how: MESSAGE_TABLE, id: v };
        blockStream(8 * v + UP_CALL, v, p.bucket[v].map(blockTable), [out], decode?.mode === 'max' ? 1 : 0, true);
        // The message's range was gathered as it was written where the kernel could (zmask ≥ 0).
        if (arena.i32(pZmask, 1)[0] >= 0) scale(up[v], mSize[v], shift, pStats, form.up, v);
        else rescale(up[v], mSize[v], shift, form.up, v);
      } else {
        toLog(p.bucket[v]);
        blockStreamLog(8 * v + UP_LOG_CALL, v, p.bucket[v].map(blockTable), [{ addr: up[v], len: mSize[v], how: MESSAGE_TABLE, id: v }], decode?.mode === 'max' ? 1 : 0);
        linearise(up[v], mSize[v], form.up, v);
      }
      // A root's message is one entry: e^scale, or 0 (linear), or its log.
      if (p.parent[v] < 0) roots.add(form.up[3 * v] ? (arena.f64(up[v], 1)[0] > 0 ? form.up[3 * v + 1] : -Infinity) : arena.f64(up[v], 1)[0]);
      streamed?.(card[v] * mSize[v]);
    }
    logZ = roots.value;
    if (!(logZ > -Infinity)) return { logZ: -Infinity, marginals: null };
    if (decode) return { logZ, marginals: null, configurations: decodeBackward(decode) };

    // Downward, parents before children (reverse elimination order). Where the clique's products are
    // exact in linear arithmetic, one stream gives v's marginal and every child's separator belief
    // (δ_c = belief / m_c: where m_c = 0 the belief is 0 and δ_c is never used); else one log-space
    // stream per child and one for the marginal. The children's beliefs go to one workspace, then
    // each δ_c overwrites m_c (no longer needed): memory stays the upward messages and the workspace.
    const ws = slab ? slabAt : arena.alloc(8 * wsEntries, false);
    /** Where each child's separator belief sits in the workspace (set by its parent's step). */
    const belief = new Float64Array(n);
    for (let t = p.order.length - 1; t >= 0; t--) {
      const v = p.order[t];
      const inputs = p.bucket[v].slice();
      if (p.parent[v] >= 0) inputs.push({ kind: 'down', id: v });
      const children: number[] = [];
      for (const r of p.bucket[v]) if (r.kind === 'up') children.push(r.id);
      let at = ws;
      for (const c of children) (belief[c] = at), (at += 8 * mSize[c]);
      const shift = linearShift(inputs);
      if (shift !== null && children.length === 1) {
        // One child c (v is the first variable of S_c): δ_c is streamed directly, the product of every
        // input but m_c (no quotient belief / m_c), and v's marginal is Σ m_c · δ_c over each of v's
        // slabs of S_c (bucketDelta, which also rescales δ_c into m_c's place).
        const c = children[0];
        const others = inputs.filter((r) => r.kind !== 'up' || r.id !== c);
        blockStream(8 * v + DOWN_ONE_CHILD_CALL, v, others.map(blockTable), [{ addr: ws, len: mSize[c], how: MESSAGE_TABLE, id: c }], 0, true);
        if (arena.i32(pZmask, 1)[0] < 0) engine.call('bucket elimination', (k) => k.bucketRange(ws, mSize[c], pStats));
        engine.call('bucket elimination', (k) => k.bucketDelta(ws, up[c], mSize[c], card[v], shift - form.up[3 * c + 1], pStats, margOut, pRes));
        formOut(form.down, c);
        down[c] = up[c];
        setMarginal(v, arena.f64(margOut, card[v]), true);
      } else if (shift !== null) {
        const outs = beliefTables(v, children);
        blockStream(8 * v + DOWN_CALL, v, inputs.map(blockTable), outs, 0, false);
        for (const c of children) {
          // m_c is an input here, so linear: δ_c = belief / m_c, relative to e^(shift − its scale).
          engine.call('bucket elimination', (k) => k.bucketQuotient(belief[c], mSize[c], up[c], up[c], pRes));
          scale(up[c], mSize[c], shift - form.up[3 * c + 1], pRes, form.down, c);
          down[c] = up[c];
        }
        setMarginal(v, arena.f64(margOut, card[v]), true);
      } else {
        toLog(inputs);
        const outs = beliefTables(v, children);
        blockStreamLog(8 * v + DOWN_LOG_CALL, v, inputs.map(blockTable), outs, 0);
        setMarginal(v, arena.f64(margOut, card[v]), false);
        for (const c of children) {
          engine.call('bucket elimination', (k) => k.bucketLogQuotient(belief[c], mSize[c], up[c], up[c]));
          linearise(up[c], mSize[c], form.down, c);
          down[c] = up[c];
        }
      }
      // v's table (its δ_v, or a root's message) is done with.
      release(upArena, v);
      streamed?.(card[v] * mSize[v]);
    }
    return { logZ, marginals };
  } finally {
    disposeAll();
    arena.dispose();
  }
}

/** blockRun's cache of blockRuns: one level per block variable. */
interface RunTrie {
  next: Map<number | string, RunTrie>;
  runs?: ReturnType<typeof blockRuns>;
}

/** A block call's keys (blockRun): 8 v + one of these; a stream's premultiplication adds PREMULTIPLY_CALL to its own. */
const UP_CALL = 0, DOWN_ONE_CHILD_CALL = 1, DOWN_CALL = 2, UP_LOG_CALL = 3, DOWN_LOG_CALL = 4, PREMULTIPLY_CALL = 5;

/** What blockRun writes of a block call that depends on its tables' strides only: the outer digits' cardinalities, every table's strides over them (table by table) and runs over the block, each output's first-visit mask (−1: zero-filled and added to). */
interface CallLayout {
  tables: number;
  /** Outer digits (the arrays may be longer than they need: a scratch layout). */
  outer: number;
  cards: Int32Array;
  strides: Int32Array;
  runs: ReturnType<typeof blockRuns>[];
  masks: Int32Array;
}

/** A layout to make one call's in after another (scratchLayout): arrays for the largest call. */
function scratchLayout(maxDigits: number, maxTables: number): CallLayout {
  return { tables: 0, outer: 0, cards: new Int32Array(maxDigits), strides: new Int32Array(maxTables * maxDigits), runs: [], masks: new Int32Array(maxTables) };
}

/** A block call's layout: new, or made in `into` (a scratch layout). */
function callLayout(shape: BucketShape, card: Int32Array, outer: number[], blockVars: number[], B: number, inputs: BlockTable[], outs: BlockTable[], into?: CallLayout): CallLayout {
  const nI = inputs.length, nT = nI + outs.length, nOuter = outer.length;
  const L = into ?? { tables: nT, outer: nOuter, cards: new Int32Array(nOuter), strides: new Int32Array(nT * nOuter), runs: [], masks: new Int32Array(outs.length) };
  (L.tables = nT), (L.outer = nOuter);
  const { cards, strides, runs, masks } = L;
  for (let j = 0; j < nOuter; j++) cards[j] = card[outer[j]];
  for (let t = 0; t < nT; t++) {
    const table = t < nI ? inputs[t] : outs[t - nI];
    for (let j = 0; j < nOuter; j++) strides[t * nOuter + j] = tableStride(shape, card, table, outer[j]);
    let node = shape.runCache;
    for (const u of blockVars) {
      const key = layoutKey(card[u], tableStride(shape, card, table, u));
      let next = node.next.get(key);
      if (!next) node.next.set(key, (next = { next: new Map() }));
      node = next;
    }
    const r = (node.runs ??= blockRuns(blockVars.map((u) => card[u]), blockVars.map((u) => tableStride(shape, card, table, u)), B));
    runs[t] = r;
    if (t < nI) continue;
    // An output whose block segments are distinct is written on its entries' first visit (the
    // outer digits it lacks all 0: bit j of its mask).
    let mask = -1;
    if (nOuter <= 30 && r.distinct) {
      mask = 0;
      for (let j = 0; j < nOuter; j++) if (tableStride(shape, card, table, outer[j]) === 0) mask |= 1 << j;
    }
    masks[t - nI] = mask;
  }
  return L;
}

/** The inputs of v's clique (their indices) over v and block variables only, when there are two or more to premultiply into P[x_v][block] (else none). */
function premultipliedInputs(shape: BucketShape, v: number, outer: number[], blockVars: number[], B: number, inputs: BlockTable[], card: Int32Array): Int32Array {
  if (card[v] * B > PREMULTIPLIED) return NONE;
  let inner: number[] | null = null;
  for (let i = 0; i < inputs.length; i++) {
    const t = inputs[i];
    let onlyV = true, inBlock = false;
    for (let j = 0; j < outer.length && onlyV; j++) onlyV = outer[j] === v || tableStride(shape, card, t, outer[j]) === 0;
    for (let j = 0; j < blockVars.length && onlyV && !inBlock; j++) inBlock = tableStride(shape, card, t, blockVars[j]) !== 0;
    if (onlyV && inBlock) (inner ??= []).push(i);
  }
  return inner && inner.length >= 2 ? Int32Array.from(inner) : NONE;
}
const NONE = new Int32Array(0);

/** u's stride in a block over blockVars (the last fastest; 0 if absent). */
function blockStride(blockVars: number[], u: number, card: Int32Array): number {
  for (let j = blockVars.length - 1, st = 1; j >= 0; j--) {
    if (blockVars[j] === u) return st;
    st *= card[blockVars[j]];
  }
  return 0;
}

/**
 * One block variable's (cardinality, stride) as one exact number: below 2^30 (a small integer, which
 * a Map hashes without boxing: the double keys of card · 2^32 + stride were a tenth of a thin
 * model's run) for cardinalities < 64 and strides < 2^24; else card · 2^32 + stride (≥ 2^32, so the
 * two never meet); a string past 2^21 states or 2^32 strides.
 */
function layoutKey(card: number, stride: number): number | string {
  if (card < 64 && stride < 2 ** 24) return stride * 64 + card;
  return card < 2 ** 21 && stride < 2 ** 32 ? card * 2 ** 32 + stride : `${card}:${stride}`;
}

// factorInOrder's scratch (one factor's scope at a time).
let oldStride = new Float64Array(8), step = new Float64Array(8), digit = new Int32Array(8);

/** Factor f's log table over its free variables vars[v0 … v0 + nv) (the last fastest; a range, not a view per factor), the fixed ones at their states, written into out from `first`. */
function factorInOrder(model: Model, f: number, vars: Int32Array, v0: number, nv: number, fixed: Int32Array, out: Float64Array, first: number): void {
  // The model's flat arrays, read in place (scope(f) and table(f) would make two views per factor).
  const sv = model.scopeVars, s0 = model.scopeStart[f], ns = model.scopeStart[f + 1] - s0, table = model.tables, t0 = model.tableStart[f], card = model.card;
  if (oldStride.length < ns) (oldStride = new Float64Array(ns)), (step = new Float64Array(ns)), (digit = new Int32Array(ns));
  let base = t0;
  for (let q = ns - 1, st = 1; q >= 0; q--) {
    const u = sv[s0 + q];
    oldStride[q] = st;
    if (fixed[u] >= 0) base += fixed[u] * st;
    st *= card[u];
  }
  // Each free variable's old stride (summed where a variable appears twice in the scope).
  let size = 1;
  for (let j = 0; j < nv; j++) {
    const v = vars[v0 + j];
    step[j] = 0;
    for (let q = 0; q < ns; q++) if (sv[s0 + q] === v) step[j] += oldStride[q];
    size *= card[v];
  }
  // digit is all zeros here: a full odometer cycle ends where it began.
  let at = base;
  for (let e = 0; e < size; e++) {
    out[first + e] = table[at];
    for (let j = nv - 1; j >= 0; j--) {
      const K = card[vars[v0 + j]];
      if (++digit[j] < K) {
        at += step[j];
        break;
      }
      at -= (K - 1) * step[j];
      digit[j] = 0;
    }
  }
}
