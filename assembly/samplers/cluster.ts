// Cluster moves for ferromagnetic Potts models (Ising = q 2) with arbitrary fields:
//   p(x) ∝ exp(Σ_v h_v(x_v) + Σ_{i~j} J_ij [x_i = x_j]),   J_ij ≥ 0.
// Swendsen–Wang: bond each agreeing edge with probability 1 − e^{−J}; given the bonds the clusters
// are independent, cluster C taking state k with probability ∝ exp(Σ_{v∈C} h_v(k)) (the
// Edwards–Sokal joint; with fields this heat bath per cluster does what a ghost spin does for
// Ising, and stays exact for Potts fields of any shape). Its probabilities are the Rao–Blackwellised
// marginal estimate of every member.
// Wolff: grow one cluster from a random site over agreeing edges with the same bond probability,
// propose a uniformly random other state for it, accept with the field ratio (the couplings'
// ratio cancels against the growth probabilities). A "sweep" is a fixed number of clusters, chosen
// by the caller before sampling (about n / mean cluster size): stopping after a state-dependent
// number of clusters, such as "until n sites were in one", would bias the states seen at sweep ends.
// Single-site heat-bath Gibbs on the same form, for the autocorrelation comparison.
//
// State (arena memory): [Philox 64 B][x i32·n][parent i32·n][list i32·n][mark i32·n][stamp i32, pad]
// [sites visited by Wolff clusters f64]
// [H f64·n·q][w f64·q]. Accumulator: f64 per (variable, state), variable-major.

import { Philox, PHILOX_BYTES, uniform32 } from '../core/rng';

@unmanaged
export class ClusterForm {
  n: i32;
  q: i32;
  h: usize; // f64[n·q]
  rowPtr: usize; // i32[n + 1]
  col: usize; // i32[nnz]
  J: usize; // f64[nnz]
  P: usize; // f64[nnz], 1 − exp(−J)
}

export function clusterFormBytes(): usize {
  return offsetof<ClusterForm>();
}

export function clusterFormInit(hdr: usize, n: i32, q: i32, h: usize, rowPtr: usize, col: usize, J: usize, P: usize): void {
  const f = changetype<ClusterForm>(hdr);
  f.n = n;
  f.q = q;
  f.h = h;
  f.rowPtr = rowPtr;
  f.col = col;
  f.J = J;
  f.P = P;
}

@inline function xAt(st: usize): usize { return st + PHILOX_BYTES; }
@inline function parentAt(f: ClusterForm, st: usize): usize { return xAt(st) + (<usize>f.n << 2); }
@inline function listAt(f: ClusterForm, st: usize): usize { return parentAt(f, st) + (<usize>f.n << 2); }
@inline function markAt(f: ClusterForm, st: usize): usize { return listAt(f, st) + (<usize>f.n << 2); }
@inline function stampAt(f: ClusterForm, st: usize): usize { return markAt(f, st) + (<usize>f.n << 2); }
@inline function visitedAt(f: ClusterForm, st: usize): usize { return stampAt(f, st) + 8; }
@inline function hSumAt(f: ClusterForm, st: usize): usize { return stampAt(f, st) + 16; }
@inline function wAt(f: ClusterForm, st: usize): usize { return hSumAt(f, st) + ((<usize>f.n * <usize>f.q) << 3); }

export function clusterStateBytes(hdr: usize): usize {
  const f = changetype<ClusterForm>(hdr);
  return PHILOX_BYTES + 16 * <usize>f.n + 16 + 8 * <usize>f.n * <usize>f.q + 8 * <usize>f.q;
}

/** Uniformly random start from the chain's stream (seeded by the caller at st). */
export function clusterInit(hdr: usize, st: usize): void {
  const f = changetype<ClusterForm>(hdr);
  const r = changetype<Philox>(st);
  for (let v = 0; v < f.n; v++) store<i32>(xAt(st) + (<usize>v << 2), min<i32>(<i32>(uniform32(r) * <f64>f.q), f.q - 1));
  memory.fill(markAt(f, st), 0, (<usize>f.n << 2) + 16);
}

@inline
function find(parent: usize, v: i32): i32 {
  let r = v;
  while (load<i32>(parent + (<usize>r << 2)) != r) r = load<i32>(parent + (<usize>r << 2));
  // Path compression.
  while (v != r) {
    const p = load<i32>(parent + (<usize>v << 2));
    store<i32>(parent + (<usize>v << 2), r);
    v = p;
  }
  return r;
}

/** Draws an index from weights exp(w_k − max) in place (w becomes the normalised probabilities). */
function drawSoftmax(r: Philox, w: usize, q: i32): i32 {
  let top = -Infinity;
  for (let k = 0; k < q; k++) top = max(top, load<f64>(w + (<usize>k << 3)));
  let total = 0.0;
  for (let k = 0; k < q; k++) {
    const e = Math.exp(load<f64>(w + (<usize>k << 3)) - top);
    store<f64>(w + (<usize>k << 3), e);
    total += e;
  }
  const inv = 1.0 / total;
  const u = uniform32(r);
  let pick = q - 1;
  let cum = 0.0;
  for (let k = 0; k < q; k++) {
    const p = load<f64>(w + (<usize>k << 3)) * inv;
    store<f64>(w + (<usize>k << 3), p);
    cum += p;
    if (pick == q - 1 && u < cum) pick = k;
  }
  // Rounding can leave u past the last sum: never pick a zero-weight state then.
  while (load<f64>(w + (<usize>pick << 3)) == 0.0) pick--;
  return pick;
}

function swendsenWang(f: ClusterForm, st: usize, acc: usize): f64 {
  const r = changetype<Philox>(st);
  const n = f.n, q = f.q;
  const x = xAt(st), parent = parentAt(f, st), label = listAt(f, st), H = hSumAt(f, st);
  for (let v = 0; v < n; v++) store<i32>(parent + (<usize>v << 2), v);
  for (let v = 0; v < n; v++) {
    const xv = load<i32>(x + (<usize>v << 2));
    const end = load<i32>(f.rowPtr + (<usize>(v + 1) << 2));
    for (let e = load<i32>(f.rowPtr + (<usize>v << 2)); e < end; e++) {
      const j = load<i32>(f.col + (<usize>e << 2));
      if (j <= v || load<i32>(x + (<usize>j << 2)) != xv) continue;
      if (uniform32(r) < load<f64>(f.P + (<usize>e << 3))) {
        const a = find(parent, v), b = find(parent, j);
        if (a != b) store<i32>(parent + (<usize>max(a, b) << 2), min(a, b));
      }
    }
  }
  // Field sums per cluster, kept in the root's row of H. A root is its cluster's smallest index
  // (unions keep the smaller root), so its row is zeroed before any member adds to it.
  for (let v = 0; v < n; v++) {
    const root = find(parent, v);
    const dst = H + ((<usize>root * <usize>q) << 3), src = f.h + ((<usize>v * <usize>q) << 3);
    if (root == v) memory.fill(dst, 0, <usize>q << 3);
    for (let k = 0; k < q; k++) store<f64>(dst + (<usize>k << 3), load<f64>(dst + (<usize>k << 3)) + load<f64>(src + (<usize>k << 3)));
  }
  // New states: one draw per root, in index order; H's row becomes the cluster's probabilities.
  for (let v = 0; v < n; v++) {
    if (load<i32>(parent + (<usize>v << 2)) != v) continue;
    store<i32>(label + (<usize>v << 2), drawSoftmax(r, H + ((<usize>v * <usize>q) << 3), q));
  }
  let changed: f64 = 0;
  for (let v = 0; v < n; v++) {
    const root = load<i32>(parent + (<usize>v << 2));
    const k = load<i32>(label + (<usize>root << 2));
    if (k != load<i32>(x + (<usize>v << 2))) changed += 1;
    store<i32>(x + (<usize>v << 2), k);
    if (acc) {
      const src = H + ((<usize>root * <usize>q) << 3), dst = acc + ((<usize>v * <usize>q) << 3);
      for (let s = 0; s < q; s++) store<f64>(dst + (<usize>s << 3), load<f64>(dst + (<usize>s << 3)) + load<f64>(src + (<usize>s << 3)));
    }
  }
  return changed;
}

/** One Wolff cluster; returns its size, negated when the flip was refused. */
function wolffCluster(f: ClusterForm, st: usize): i32 {
  const r = changetype<Philox>(st);
  const n = f.n, q = f.q;
  const x = xAt(st), list = listAt(f, st), mark = markAt(f, st);
  let stamp = load<i32>(stampAt(f, st)) + 1;
  if (stamp >= 0x40000000) {
    memory.fill(mark, 0, <usize>n << 2);
    stamp = 1;
  }
  store<i32>(stampAt(f, st), stamp);
  const seed = min<i32>(<i32>(uniform32(r) * <f64>n), n - 1);
  const k = load<i32>(x + (<usize>seed << 2));
  const to = (k + 1 + min<i32>(<i32>(uniform32(r) * <f64>(q - 1)), q - 2)) % q;
  store<i32>(list, seed);
  store<i32>(mark + (<usize>seed << 2), stamp);
  let head = 0, tail = 1;
  let dH = 0.0;
  while (head < tail) {
    const v = load<i32>(list + (<usize>head << 2));
    head++;
    dH += load<f64>(f.h + ((<usize>v * <usize>q + <usize>to) << 3)) - load<f64>(f.h + ((<usize>v * <usize>q + <usize>k) << 3));
    const end = load<i32>(f.rowPtr + (<usize>(v + 1) << 2));
    for (let e = load<i32>(f.rowPtr + (<usize>v << 2)); e < end; e++) {
      const j = load<i32>(f.col + (<usize>e << 2));
      if (load<i32>(mark + (<usize>j << 2)) == stamp || load<i32>(x + (<usize>j << 2)) != k) continue;
      if (uniform32(r) < load<f64>(f.P + (<usize>e << 3))) {
        store<i32>(mark + (<usize>j << 2), stamp);
        store<i32>(list + (<usize>tail << 2), j);
        tail++;
      }
    }
  }
  if (!(dH >= 0 || uniform32(r) < Math.exp(dH))) return -tail;
  for (let i = 0; i < tail; i++) store<i32>(x + (<usize>load<i32>(list + (<usize>i << 2)) << 2), to);
  return tail;
}

function heatBathSweep(f: ClusterForm, st: usize, acc: usize): f64 {
  const r = changetype<Philox>(st);
  const n = f.n, q = f.q;
  const x = xAt(st), w = wAt(f, st);
  let changed: f64 = 0;
  for (let v = 0; v < n; v++) {
    memory.copy(w, f.h + ((<usize>v * <usize>q) << 3), <usize>q << 3);
    const end = load<i32>(f.rowPtr + (<usize>(v + 1) << 2));
    for (let e = load<i32>(f.rowPtr + (<usize>v << 2)); e < end; e++) {
      const s = w + (<usize>load<i32>(x + (<usize>load<i32>(f.col + (<usize>e << 2)) << 2)) << 3);
      store<f64>(s, load<f64>(s) + load<f64>(f.J + (<usize>e << 3)));
    }
    const k = drawSoftmax(r, w, q);
    if (k != load<i32>(x + (<usize>v << 2))) changed += 1;
    store<i32>(x + (<usize>v << 2), k);
    if (acc) {
      const dst = acc + ((<usize>v * <usize>q) << 3);
      for (let s = 0; s < q; s++) store<f64>(dst + (<usize>s << 3), load<f64>(dst + (<usize>s << 3)) + load<f64>(w + (<usize>s << 3)));
    }
  }
  return changed;
}

/**
 * `sweeps` moves of kind 0 Swendsen–Wang, 1 Wolff (`perSweep` clusters), 2 heat-bath Gibbs.
 * acc (f64 per (variable, state)) gets SW's and Gibbs' conditional probabilities, Wolff's indicators
 * after each sweep; trace (f64 per sweep, or 0) the magnetisation (q·n_0/n − 1)/(q − 1) after each,
 * bondTrace (or 0) the fraction of coupled pairs in the same state.
 * Returns the number of variable updates that changed a state.
 */
export function clusterStep(hdr: usize, st: usize, kind: i32, sweeps: i32, perSweep: i32, acc: usize, trace: usize, bondTrace: usize): f64 {
  const f = changetype<ClusterForm>(hdr);
  const n = f.n, q = f.q, x = xAt(st);
  let changed: f64 = 0;
  for (let t = 0; t < sweeps; t++) {
    if (kind == 0) changed += swendsenWang(f, st, acc);
    else if (kind == 2) changed += heatBathSweep(f, st, acc);
    else {
      let visited: f64 = 0;
      for (let c = 0; c < perSweep; c++) {
        const s = wolffCluster(f, st);
        if (s > 0) changed += <f64>s;
        visited += <f64>(s > 0 ? s : -s);
      }
      store<f64>(visitedAt(f, st), load<f64>(visitedAt(f, st)) + visited);
      if (acc) for (let v = 0; v < n; v++) {
        const q0 = acc + ((<usize>v * <usize>q + <usize>load<i32>(x + (<usize>v << 2))) << 3);
        store<f64>(q0, load<f64>(q0) + 1.0);
      }
    }
    if (trace) {
      let n0 = 0;
      for (let v = 0; v < n; v++) n0 += i32(load<i32>(x + (<usize>v << 2)) == 0);
      store<f64>(trace + (<usize>t << 3), (<f64>q * <f64>n0 / <f64>n - 1.0) / <f64>(q - 1));
    }
    if (bondTrace) {
      let same = 0;
      const nnz = load<i32>(f.rowPtr + (<usize>n << 2));
      for (let v = 0; v < n; v++) {
        const xv = load<i32>(x + (<usize>v << 2)), end = load<i32>(f.rowPtr + (<usize>(v + 1) << 2));
        for (let e = load<i32>(f.rowPtr + (<usize>v << 2)); e < end; e++) same += i32(load<i32>(x + (<usize>load<i32>(f.col + (<usize>e << 2)) << 2)) == xv);
      }
      store<f64>(bondTrace + (<usize>t << 3), nnz > 0 ? <f64>same / <f64>nnz : 0.0);
    }
  }
  return changed;
}

/** Address of a chain's states (i32 per variable). */
export function clusterStates(st: usize): usize {
  return xAt(st);
}

/** Sites in Wolff clusters so far (accepted or not), for the mean cluster size. */
export function clusterVisited(hdr: usize, st: usize): f64 {
  return load<f64>(visitedAt(changetype<ClusterForm>(hdr), st));
}
