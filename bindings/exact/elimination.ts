// Exact elimination: the upward and downward message passes over a junction tree
// (junction-tree.ts), every number computed in WASM (assembly/exact/exact_elim.ts).
//
// Messages (everything max-normalised, the log normalisers summed into log Z):
//   upward    λ_v(S_v) = Σ_{x_v} g_v · Π_{c child} λ_c                (a root's λ is a scalar)
//   downward  μ_c(S_c) = Σ_{C_p \ S_c} μ_p · g_p · Π_{c' ≠ c} λ_c'     (Shafer–Shenoy: no division)
//   marginal  p(x_p)  ∝ Σ_{S_c \ p} μ_c · λ_c for any child c of p  (a leaf: Σ_{C_p \ p} μ_p · g_p)
// Clique tables are never stored: with one child (the common case; a lattice in row order is a path)
// each message is one fused pass over the clique. Nodes with several children use one scratch table.
// Where a node has many children over a large clique, the downward step switches to Hugin updates
// (μ_c = Σ B_p / λ_c with 0/0 = 0) to avoid the quadratic leave-one-out products.

import type { Engine, Arena, Kernels } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import { EngineError } from '../core/errors.ts';
import { schedule, subStrides, type Node, type Step } from './junction-tree.ts';
import { fmtBytes, RangeExceeded, type ExactOutcome } from './outcome.ts';

const MAX_DIMS = 64;
const DESC_INTS = 1 + 5 * MAX_DIMS;
/** Message storage beyond this is refused up front (WASM memory is at most 4 GiB in all). */
const MAX_MESSAGE_BYTES = 3.5 * 2 ** 30;

/** Drives the table kernel: coalesces the loop nest, writes the descriptor, calls elimTableOp. */
class TableOps {
  private readonly k: Kernels;
  constructor(private readonly arena: Arena, private readonly desc: number) {
    this.k = arena.engine.kernels;
  }
  /**
   * out (=|+=) A·B over the iteration scope `lens`, strides per dimension per operand (element strides).
   * mode 0: out = A·B; 1: out += A·B; 2: out = A + B; 3: out = Σ A·B where the kernel can do that
   * without zeroing out first, returning the largest entry written (−1, nothing done, where it cannot).
   */
  run(mode: number, lens: ArrayLike<number>, so: ArrayLike<number>, out: number, sa: ArrayLike<number>, a: number, sb: ArrayLike<number>, b: number): number {
    const L: number[] = [], O: number[] = [], A: number[] = [], B: number[] = [];
    for (let d = 0; d < lens.length; d++) {
      const l = lens[d];
      if (l === 1) continue;
      const t = L.length - 1;
      if (t >= 0 && so[d] === O[t] * L[t] && sa[d] === A[t] * L[t] && sb[d] === B[t] * L[t]) {
        L[t] *= l;
        continue;
      }
      L.push(l);
      O.push(so[d]);
      A.push(sa[d]);
      B.push(sb[d]);
    }
    const nd = L.length;
    if (nd > MAX_DIMS) throw new EngineError(`a clique has ${nd} non-trivial dimensions, past the kernel's limit of ${MAX_DIMS}`);
    const view = this.arena.i32(this.desc, DESC_INTS);
    view[0] = nd;
    view.set(L, 1);
    view.set(O, 1 + nd);
    view.set(A, 1 + 2 * nd);
    view.set(B, 1 + 3 * nd);
    return this.arena.engine.call('exact inference', (k) => k.elimTableOp(this.desc, out, a, b, mode));
  }
  /**
   * out (outSize entries) = Σ A·B over the dimensions out does not have, without zero-filling out
   * where the kernel can; returns the largest entry when that pass knows it (NaN if one is NaN),
   * else −1.
   */
  reduce(outSize: number, lens: ArrayLike<number>, so: ArrayLike<number>, out: number, sa: ArrayLike<number>, a: number, sb: ArrayLike<number>, b: number): number {
    const m = this.run(3, lens, so, out, sa, a, sb, b);
    if (m === -2) return -1; // done, summing outer digits too: the largest is not known
    if (m !== -1) return m;
    this.fill(out, outSize, 0);
    this.run(1, lens, so, out, sa, a, sb, b);
    return -1;
  }
  /**
   * Max-normalises a message unless its max is inside [2^-bits, 2^bits] (then returns 1: left as is);
   * `known` is its max if the pass that wrote it reported one (else −1: read it).
   */
  maxScale(p: number, n: number, bits: number, known = -1): number {
    return known === -1 ? this.k.elimMaxScale(p, n, bits) : this.k.elimScaleBy(p, n, known, bits);
  }
  fill(p: number, n: number, v: number): void {
    this.k.elimFill(p, n, v);
  }
}

class RangeFailure extends Error {}

export function runElimination(engine: Engine, model: Model, nodes: Node[], order: Int32Array): ExactOutcome {
  const n = model.n;
  const card = model.card;
  const sched = schedule(nodes, order);
  if (sched.bytes > MAX_MESSAGE_BYTES) {
    throw new EngineError(`exact elimination would need ${fmtBytes(sched.bytes)} of WASM memory for its messages, past the engine's ${fmtBytes(MAX_MESSAGE_BYTES)}`);
  }

  // Persistent layout: constants, descriptor, each variable's row vector (its unary table, then the log
  // row offsets of the pairwise tables it owns), the pairwise tables, the kept factor tables, marginals.
  const arena = engine.arena();
  try {
    const rowOff = new Int32Array(n);
    let rowEntries = 0;
    for (let v = 0; v < n; v++) {
      rowOff[v] = rowEntries;
      rowEntries += card[v];
    }
    const edgeOff = new Float64Array(model.edges.length);
    let edgeEntries = 0;
    model.edges.forEach((e, k) => {
      edgeOff[k] = edgeEntries;
      edgeEntries += e.table.length;
    });
    const gOff = new Float64Array(n);
    let gEntries = 0, gTemp = 0;
    for (const nd of nodes) {
      if (!nd.gKept) continue;
      gOff[nd.v] = gEntries;
      gEntries += nd.gSize;
      gTemp = Math.max(gTemp, nd.gHalf);
    }
    const consts = arena.allocF64(2); // [1, 0]
    const desc = arena.allocI32(DESC_INTS);
    const rows = arena.allocF64(rowEntries);
    const edgeBase = arena.allocF64(Math.max(1, edgeEntries));
    const gBase = arena.allocF64(Math.max(1, gEntries));
    const gTempBase = arena.allocF64(Math.max(1, gTemp));
    const margBase = arena.allocF64(rowEntries);
    // Every message, scratch and g table is written (filled or mode 0) before it is read.
    const dyn = sched.regions.map((b) => arena.alloc(Math.max(16, b), false));
    // Every allocation is done: views stay valid from here on.
    arena.f64(consts, 2).set([1, 0]);

    const one = consts;
    const ops = new TableOps(arena, desc);
    const k = engine.kernels;
    const addr = (id: number): number => (id === -1 ? one : dyn[sched.regionOf[id]] + sched.offsets[id]);
    const rowAddr = (v: number): number => rows + rowOff[v] * 8;
    const edgeAddr = (ek: number): number => edgeBase + edgeOff[ek] * 8;
    // A message may stay unnormalised while the products its consumer forms of up to `k` messages
    // (each max in [2^-bits, 2^bits]; factor tables are ≤ 1) stay within 2^±256: bits = 256 / k. A
    // node's downward step multiplies its μ and its children's λ, so k is 1 + its children for both.
    const slack = (k: number): number => Math.floor(256 / Math.max(1, k));
    const partner = nodes.map((nd) => new Map(nd.edges.map((ek) => [model.edges[ek].i === nd.v ? model.edges[ek].j : model.edges[ek].i, ek])));

    // g_v over its scope, built one dimension at a time (each step appends the next-latest variable as the
    // slowest digit and multiplies in v's pairwise table with it), alternating between P and Q so the last
    // step lands in P. Costs about two passes over the final table.
    const buildG = (nd: Node, P: number, Q: number): void => {
      const D = nd.gScope;
      const d = D.length;
      if (d === 1) {
        ops.run(0, [card[nd.v]], [1], P, [1], rowAddr(nd.v), [0], one);
        return;
      }
      let prev = rowAddr(nd.v);
      for (let t = 1; t < d; t++) {
        const S = D.subarray(0, t + 1);
        const out = (d - 1 - t) % 2 === 0 ? P : Q;
        const lens = Array.from(S, (u) => card[u]);
        const so = subStrides(S, S, card);
        const sa = subStrides(S, D.subarray(0, t), card);
        const sb = new Array<number>(t + 1).fill(0);
        const ek = partner[nd.v].get(D[t]);
        if (ek === undefined) ops.run(0, lens, so, out, sa, prev, sb, one);
        else {
          const e = model.edges[ek];
          sb[0] = e.i === nd.v ? card[e.j] : 1;
          sb[t] = e.i === nd.v ? 1 : card[e.j];
          ops.run(0, lens, so, out, sa, prev, sb, edgeAddr(ek));
        }
        prev = out;
      }
    };

    // Input conversion (once; again in support mode). Pairwise tables become linear, normalised per row
    // of their owner; each owner's row vector collects its unary table and the row offsets, and is then
    // exponentiated with its max shifted out into log Z. Returns the total shift (−∞: Z = 0 exactly).
    const buildFactors = (support: boolean): number => {
      const rv = arena.f64(rows, rowEntries);
      for (let v = 0; v < n; v++) rv.set(model.unary[v], rowOff[v]);
      const ev = arena.f64(edgeBase, edgeEntries);
      model.edges.forEach((e, ek) => ev.set(e.table, edgeOff[ek]));
      let logShift = 0;
      for (const nd of nodes) {
        for (const ek of nd.edges) {
          const e = model.edges[ek];
          if (support) k.elimSupport(edgeAddr(ek), e.table.length);
          else if (e.i === nd.v) k.elimRowNormalise(edgeAddr(ek), card[e.i], card[e.j], card[e.j], 1, rowAddr(nd.v));
          else k.elimRowNormalise(edgeAddr(ek), card[e.j], 1, card[e.i], card[e.j], rowAddr(nd.v));
        }
      }
      for (let v = 0; v < n; v++) {
        if (support) k.elimSupport(rowAddr(v), card[v]);
        else {
          const m = k.elimExpShift(rowAddr(v), card[v]);
          if (m === -Infinity) return -Infinity;
          logShift += m;
        }
      }
      for (const nd of nodes) if (nd.gKept) buildG(nd, gBase + gOff[nd.v] * 8, gTempBase);
      return logShift;
    };
    const gOf = (nd: Node, g: [number, number]): number => {
      if (nd.gKept) return gBase + gOff[nd.v] * 8;
      buildG(nd, addr(g[0]), addr(g[1]));
      return addr(g[0]);
    };

    // One λ step. Returns log of the normaliser (−Infinity if the message is all zero).
    const lambdaStep = (s: Extract<Step, { op: 'lambda' }>): number => {
      const nd = nodes[s.v];
      const D = nd.clique;
      const lens = Array.from(D, (u) => card[u]);
      const out = addr(s.out);
      const so = subStrides(D, nd.sep, card);
      const gs = subStrides(D, nd.gScope, card);
      const g = gOf(nd, s.g);
      const ch = nd.children;
      let known: number;
      if (ch.length === 0) known = ops.reduce(nd.sepSize, lens, so, out, gs, g, new Array(D.length).fill(0), one);
      else if (ch.length === 1) known = ops.reduce(nd.sepSize, lens, so, out, subStrides(D, nodes[ch[0]].sep, card), addr(s.children[0]), gs, g);
      else {
        const X = addr(s.scratch);
        const sx = subStrides(D, D, card);
        ops.run(0, lens, sx, X, subStrides(D, nodes[ch[0]].sep, card), addr(s.children[0]), gs, g);
        for (let i = 1; i < ch.length - 1; i++) ops.run(0, lens, sx, X, sx, X, subStrides(D, nodes[ch[i]].sep, card), addr(s.children[i]));
        const last = ch.length - 1;
        known = ops.reduce(nd.sepSize, lens, so, out, sx, X, subStrides(D, nodes[ch[last]].sep, card), addr(s.children[last]));
      }
      const m = ops.maxScale(out, nd.sepSize, nd.parent >= 0 ? slack(1 + nodes[nd.parent].children.length) : 0, known);
      if (Number.isNaN(m) || m === Infinity) throw new EngineError(`exact elimination: message of variable ${s.v} is ${m}`);
      return m > 0 ? Math.log(m) : -Infinity;
    };

    const normaliseMu = (p: number, c: number, ptr: number, len: number, known = -1): void => {
      const m = ops.maxScale(ptr, len, slack(1 + nodes[c].children.length), known);
      if (!(m > 0) || m === Infinity) throw new RangeFailure(`the message from ${p} to ${c} is ${m === 0 ? 'all zero' : String(m)}`);
    };

    const downStep = (s: Extract<Step, { op: 'down' }>): void => {
      const nd = nodes[s.p];
      const D = nd.clique;
      const lens = Array.from(D, (u) => card[u]);
      const gs = subStrides(D, nd.gScope, card);
      const g = gOf(nd, s.g);
      const muPtr = addr(s.mu);
      const sMu = subStrides(D, nd.sep, card); // all zero for a root (μ is the constant 1)
      const margPtr = margBase + rowOff[nd.v] * 8;
      const ch = nd.children;
      const zeros = new Array<number>(D.length).fill(0);
      if (ch.length === 0) {
        const sm = zeros.slice();
        sm[0] = 1;
        ops.run(1, lens, sm, margPtr, sMu, muPtr, gs, g);
        return;
      }
      const sepStr = ch.map((c) => subStrides(D, nodes[c].sep, card));
      if (nd.hugin) {
        // B = μ_p g_p Π λ_c; μ_c = (Σ_{C_p \ S_c} B) / λ_c; marginal from B.
        const X = addr(s.scratch);
        const sx = subStrides(D, D, card);
        ops.run(0, lens, sx, X, sMu, muPtr, gs, g);
        ch.forEach((_, i) => ops.run(0, lens, sx, X, sx, X, sepStr[i], addr(s.lams[i])));
        ch.forEach((c, i) => {
          const mp = addr(s.mus[i]);
          ops.reduce(nodes[c].sepSize, lens, sepStr[i], mp, sx, X, zeros, one);
          k.elimDivide(mp, addr(s.lams[i]), nodes[c].sepSize);
          normaliseMu(s.p, c, mp, nodes[c].sepSize);
        });
        const sm = zeros.slice();
        sm[0] = 1;
        ops.run(1, lens, sm, margPtr, sx, X, zeros, one);
        return;
      }
      ch.forEach((c, i) => {
        const mp = addr(s.mus[i]);
        let known: number;
        if (ch.length === 1) known = ops.reduce(nodes[c].sepSize, lens, sepStr[i], mp, sMu, muPtr, gs, g);
        else {
          // Leave-one-out product in the scratch table, then marginalise with the last factor fused.
          const X = addr(s.scratch);
          const sx = subStrides(D, D, card);
          const others = ch.map((_, j) => j).filter((j) => j !== i);
          ops.run(0, lens, sx, X, sMu, muPtr, gs, g);
          for (let t = 0; t < others.length - 1; t++) ops.run(0, lens, sx, X, sx, X, sepStr[others[t]], addr(s.lams[others[t]]));
          const last = others[others.length - 1];
          known = ops.reduce(nodes[c].sepSize, lens, sepStr[i], mp, sx, X, sepStr[last], addr(s.lams[last]));
        }
        normaliseMu(s.p, c, mp, nodes[c].sepSize, known);
      });
      // Marginal of p from the first child's separator: Σ μ_c λ_c, p is digit 0 of S_c.
      const c0 = nodes[ch[0]];
      const E = c0.sep;
      const sE = subStrides(E, E, card);
      const sm = new Array<number>(E.length).fill(0);
      sm[0] = 1;
      ops.run(1, Array.from(E, (u) => card[u]), sm, margPtr, sE, addr(s.mus[0]), sE, addr(s.lams[0]));
    };

    // Upward pass (log Z), with a support check when a message vanishes.
    const upward = (support: boolean): number => {
      let logZ = buildFactors(support);
      if (logZ === -Infinity) return -Infinity;
      for (let t = 0; t < sched.upwardSteps; t++) {
        const l = lambdaStep(sched.steps[t] as Extract<Step, { op: 'lambda' }>);
        if (l === -Infinity) return -Infinity;
        logZ += l;
      }
      return logZ;
    };
    let logZ = upward(false);
    if (logZ === -Infinity) {
      // Exactly zero, or a message underflowed? Count supported configurations instead.
      if (upward(true) !== -Infinity) {
        throw new RangeExceeded('exact elimination: the potentials span more than the floating-point range (a message underflowed to zero)');
      }
      return { logZ: -Infinity, marginals: null };
    }
    logZ += model.logConst;

    ops.fill(margBase, rowEntries, 0);
    try {
      for (let t = sched.upwardSteps; t < sched.steps.length; t++) {
        const s = sched.steps[t];
        if (s.op === 'lambda') lambdaStep(s);
        else downStep(s);
      }
    } catch (e) {
      if (e instanceof RangeFailure) throw new RangeExceeded(`exact elimination: the potentials span more than the floating-point range (${e.message})`);
      throw e;
    }
    const mv = arena.readF64(margBase, rowEntries);
    const marginals = Array.from(card, (K, v) => {
      const p = mv.slice(rowOff[v], rowOff[v] + K);
      let s = 0;
      for (const x of p) s += x;
      if (!(s > 0) || !Number.isFinite(s)) {
        throw new RangeExceeded(`exact elimination: the marginal of variable ${v} sums to ${s} (the potentials span more than the floating-point range)`);
      }
      for (let i = 0; i < K; i++) p[i] /= s;
      return p;
    });
    return { logZ, marginals };
  } finally {
    arena.dispose();
  }
}
