// Simulated annealing over contraction trees by rotations (bindings/exact/tree-search.ts builds the
// tree from an elimination order and reads the order back; this file runs the sweeps). Variables
// are bits of u64 words, so a move's bags and outputs cost W loads and popcounts; work is counted
// in the 32-bit words of the budget's unit (2 per u64 word), so a budget buys the same sweeps on
// every machine, and WASM's own log2/exp make the search bit-for-bit the same in every host.
//
// Layout: left, right: i32[nodes]; out: u64[nodes · W] (node N's output set at N·W); leaves are
// nodes 0 … L−1. logs: f64[classes] (log2 of each cardinality class's cardinality), pows: f64[classes · stride] (K_c^k, k < stride: more than the
// class's variables). Each class's variables are bits of its own words (classWords: i32[classes +
// 1], class c in words classWords[c] … classWords[c+1]), so a move counts a set's variables per
// class in its one pass over the words; the budget still counts the words of the unpadded sets
// (countWords), so padding buys no sweeps.

/** Fixed work of a move (random numbers, logs, the Metropolis test), in budget words. */
const MOVE_BASE_WORDS: f64 = 100;
/** A node visited without a proposal. */
const VISIT_WORDS: f64 = 8;

// The run's arrays and parameters (module state: one search at a time, set by treeAnneal).
let W: i32 = 0;
let classes: i32 = 0;
let logs: usize = 0;
let pows: usize = 0;
let powStride: i32 = 0;
let classWords: usize = 0;
let bound: f64 = 0;
let penalty: f64 = 1;

/** mulberry32, as the TypeScript side's (core/seed.ts); a sweep keeps the state in a local. */
let rngState: u32 = 0;
const RNG_STEP: u32 = 0x6d2b79f5;
/** mulberry32's output for the state after its step. */
@inline function mix(state: u32): u32 {
  let t = state;
  t = (t ^ (t >>> 15)) * (t | 1);
  t ^= t + (t ^ (t >>> 7)) * (t | 61);
  return t ^ (t >>> 14);
}

/**
 * A node's score: the configurations of its bag, 2^bag; when it sums s variables, bucket
 * elimination streams the first one's clique (at most the bag), then each next one's (the bag less
 * the ones before): for binary variables 2^bag · (2 − 2^(1−s)). A node that sums nothing is a
 * product the bucket kernel fuses into the clique above; it is scored at its bag all the same
 * (TreeSA's time complexity): scored at 0, large products cost nothing until their summing
 * ancestor, and the search drifts onto plateaus of trees summing everything at the root.
 */
@inline function nodeWeight(entries: f64, summed: i64): f64 {
  const b = entries;
  // 2^(1−s) exactly, from its exponent bits (0 past the smallest normal: 2 − it is 2 by then).
  const tail = summed > 1000 ? 0 : reinterpret<f64>(<u64>(1024 - summed) << 52);
  return summed == 0 ? b : b * (2 - tail);
}

/**
 * A node's space penalty: per bit of its largest bucket message past the bound. Summing, its first
 * variable's message is the bag less that variable (about half the bag); summing nothing, its
 * product is the bag, carried into the clique above.
 */
@inline function nodePenalty(bagLog2: f64, summed: i64): f64 {
  return penalty * max(0, bagLog2 - (summed > 0 ? 1 : 0) - bound);
}

@inline function word(set: usize, w: i32): u64 {
  return load<u64>(set + (<usize>w << 3));
}

/** The tree a run works on and its per-node weights (module state: one run at a time). */
class Tree {
  left: usize;
  right: usize;
  out: usize;
  nodes: i32;
  L: i32;
  wt: usize;
  pen: usize;
  setBytes: usize;
  W32: f64;
}
const tree = new Tree();
/** Σ weight and Σ penalty of the tree's inner nodes, and the budget words used. */
let T: f64 = 0;
let Pen: f64 = 0;
let used: f64 = 0;

/** Every inner node's weight and penalty from its bag (its children's outputs) and its output; returns the objective. */
function recompute(t: Tree): f64 {
  T = 0;
  Pen = 0;
  const sb = t.setBytes;
  for (let N = t.L; N < t.nodes; N++) {
    const a = t.out + <usize>load<i32>(t.left + (<usize>N << 2)) * sb;
    const b = t.out + <usize>load<i32>(t.right + (<usize>N << 2)) * sb;
    const o = t.out + <usize>N * sb;
    // The bag's size per class over the class's words (K_c^k from the table of powers, built by
    // repeated multiplication so the weights are the same in every host), summed class by class.
    let summed: i64 = 0, bl: f64 = 0, entries: f64 = 1;
    for (let k = 0; k < classes; k++) {
      let count: i64 = 0;
      const w1 = load<i32>(classWords + (<usize>(k + 1) << 2));
      for (let w = load<i32>(classWords + (<usize>k << 2)); w < w1; w++) {
        const bag = word(a, w) | word(b, w);
        summed += popcnt<u64>(bag & ~word(o, w));
        count += popcnt<u64>(bag);
      }
      bl += <f64>count * load<f64>(logs + (<usize>k << 3));
      entries *= load<f64>(pows + (<usize>(k * powStride + <i32>count) << 3));
    }
    const x = nodeWeight(entries, summed), y = nodePenalty(bl, summed);
    store<f64>(t.wt + (<usize>N << 3), x);
    store<f64>(t.pen + (<usize>N << 3), y);
    T += x;
    Pen += y;
  }
  used += <f64>(t.nodes - t.L) * t.W32;
  return Math.log2(max(T, 1)) + Pen;
}

/** recompute's sums from the stored weights and penalties (exact while only moves changed the tree); counted as a recompute. */
function resum(t: Tree): f64 {
  T = 0;
  Pen = 0;
  for (let N = t.L; N < t.nodes; N++) {
    T += load<f64>(t.wt + (<usize>N << 3));
    Pen += load<f64>(t.pen + (<usize>N << 3));
  }
  used += <f64>(t.nodes - t.L) * t.W32;
  return Math.log2(max(T, 1)) + Pen;
}

function saveBest(bestLeft: usize, bestRight: usize, bestOut: usize, treeBytes: usize, outBytes: usize): void {
  memory.copy(bestLeft, tree.left, treeBytes);
  memory.copy(bestRight, tree.right, treeBytes);
  memory.copy(bestOut, tree.out, outBytes);
}

/** Proposals and accepted moves of the current treeAnneal call (annealSweep counts them). */
let proposals: f64 = 0;
let accepted: f64 = 0;

/**
 * One sweep of treeAnneal at inverse temperature beta: a proposed rotation at every inner node.
 * A function of its own so that it runs optimised after its first calls (V8 swaps optimised WASM
 * code in only between calls: treeAnneal is one long call). outY: a scratch set.
 */
function annealSweep(t: Tree, beta: f64, moveWords: f64, outY: usize): void {
  const left = t.left, right = t.right, out = t.out, nodes = t.nodes, L = t.L, wt = t.wt, pen = t.pen, setBytes = t.setBytes;
  // Counters and the generator's state in locals (globals are memory): the counts are integers,
  // so summing them at the end gives the same bits.
  let rs = rngState, proposed: i32 = 0, taken: i32 = 0;
  for (let P = L; P < nodes; P++) {
    // P = (Z, Y) with Y = (C, D) an inner node: propose P = ((Z, C), D), Y taking (Z, C)'s place.
    // Coin flips as selects, not branches: half of them would be mispredicted.
    const pl = left + (<usize>P << 2), pr = right + (<usize>P << 2);
    const l0 = load<i32>(pl), r0 = load<i32>(pr);
    rs += RNG_STEP;
    let side = <i32>(mix(rs) >>> 31);
    let Y = select<i32>(r0, l0, side), Z = select<i32>(l0, r0, side);
    if (Y < L) {
      side ^= 1;
      const y = Y;
      Y = Z;
      Z = y;
      if (Y < L) continue;
    }
    rs += RNG_STEP;
    const pick = mix(rs) < 0x80000000;
    const yl = load<i32>(left + (<usize>Y << 2)), yr = load<i32>(right + (<usize>Y << 2));
    const C = select<i32>(yl, yr, pick), D = select<i32>(yr, yl, pick);
    proposed++;
    const z = out + <usize>Z * setBytes, c = out + <usize>C * setBytes, d = out + <usize>D * setBytes, p = out + <usize>P * setBytes;
    let sumY: i64 = 0, sumP: i64 = 0;
    // Y's bag a = Z ∪ C, its output o = a ∩ (P's output ∪ D), P's bag o ∪ D, with their sizes.
    // Each class in words of its own: the sizes per class in the same pass, summed class by class
    // as recompute sums them, so the bits are its.
    let lY: f64 = 0, eY: f64 = 1, lP: f64 = 0, eP: f64 = 1;
    for (let k = 0; k < classes; k++) {
      let cY: i64 = 0, cP: i64 = 0;
      const w1 = load<i32>(classWords + (<usize>(k + 1) << 2));
      for (let w = load<i32>(classWords + (<usize>k << 2)); w < w1; w++) {
        const a = word(z, w) | word(c, w);
        const dw = word(d, w), pw = word(p, w);
        const o = a & (pw | dw);
        const b = o | dw;
        store<u64>(outY + (<usize>w << 3), o);
        cY += popcnt<u64>(a);
        cP += popcnt<u64>(b);
        sumY += popcnt<u64>(a & ~o);
        sumP += popcnt<u64>(b & ~pw);
      }
      const lk = load<f64>(logs + (<usize>k << 3)), row = pows + (<usize>(k * powStride) << 3);
      lY += <f64>cY * lk;
      lP += <f64>cP * lk;
      eY *= load<f64>(row + (<usize>cY << 3));
      eP *= load<f64>(row + (<usize>cP << 3));
    }
    const wY = nodeWeight(eY, sumY), wP = nodeWeight(eP, sumP);
    const penY = nodePenalty(lY, sumY), penP = nodePenalty(lP, sumP);
    const yAt = <usize>Y << 3, pAt = <usize>P << 3;
    const wtY = load<f64>(wt + yAt), wtP = load<f64>(wt + pAt), penY0 = load<f64>(pen + yAt), penP0 = load<f64>(pen + pAt);
    // The Metropolis test of TreeSA's local change: delta = log2 of the two nodes' weights after
    // against before, plus their penalties' change; accepted when delta ≤ 0, else with
    // probability exp(−β·delta), one draw. Without penalties delta is log2 of the ratio q (exact
    // at 1 and monotone), so its sign needs no log.
    const q = max(wY + wP, 1) / max(wtY + wtP, 1);
    const plain = penY == 0 && penP == 0 && penY0 == 0 && penP0 == 0;
    const delta = plain ? 0 : Math.log2(q) + penY + penP - penY0 - penP0;
    if (plain ? q > 1 : delta > 0) {
      rs += RNG_STEP;
      if (!metropolis(<f64>mix(rs) * 2.3283064365386963e-10, q, delta, plain, beta)) continue;
    }
    taken++;
    // Y becomes (Z, C) under P; P becomes (Y, D).
    store<i32>(left + (<usize>Y << 2), Z);
    store<i32>(right + (<usize>Y << 2), C);
    store<i32>(select<usize>(pl, pr, side), D);
    memory.copy(out + <usize>Y * setBytes, outY, setBytes);
    // (T and Pen: resum adds them up afresh after the sweep.)
    store<f64>(wt + yAt, wY);
    store<f64>(wt + pAt, wP);
    store<f64>(pen + yAt, penY);
    store<f64>(pen + pAt, penP);
  }
  rngState = rs;
  used += <f64>(nodes - L) * VISIT_WORDS + <f64>proposed * moveWords;
  proposals += <f64>proposed;
  accepted += <f64>taken;
}

/**
 * An uphill move's test with draw u (delta > 0; plain: no penalties, delta = log2 q): accepted
 * when u < exp(−β·delta), as that comparison decides, bit for bit; a draw past the bound of
 * pastBound at a lower bound of delta is past exp(−β·delta), so most need neither log nor exp.
 */
export function metropolis(u: f64, q: f64, delta: f64, plain: bool, beta: f64): bool {
  if (plain) {
    // log2 q ≥ e + (m − 1) for q = m · 2^e, m in [1, 2): log2 lies above its chord on [1, 2].
    const bits = reinterpret<u64>(q);
    const lower = <f64>(<i64>(bits >>> 52) - 1023) + (reinterpret<f64>((bits & 0xfffffffffffff) | 0x3ff0000000000000) - 1);
    if (pastBound(u, beta * lower)) return false;
    return u < Math.exp(-beta * Math.log2(q));
  }
  if (pastBound(u, beta * delta)) return false;
  return u < Math.exp(-beta * delta);
}

/**
 * Whether a draw u is at least 2^−k, k = ⌊x · log2 e⌋ − 2, for x ≤ β·delta: exp(−β·delta) is then
 * at most 2^−(k+2) (the floor, the product and exp each off by an ulp at most), below u.
 */
@inline function pastBound(u: f64, x: f64): bool {
  const k = <i32>min(Math.floor(x * 1.4426950408889634), 1000) - 2;
  return k > 0 && u >= reinterpret<f64>(<u64>(1023 - k) << 52);
}

/** Bytes of scratch treeAnneal needs for a tree of `nodes` nodes and W u64 words per set. */
export function treeScratchBytes(nodes: i32, words: i32): i32 {
  // best tree (left, right, out), weights and penalties, one set.
  return nodes * 8 + nodes * words * 8 + nodes * 16 + words * 8 + 16;
}

/**
 * One annealing run over rotations of the tree (changed in place into the best tree seen at a
 * sweep's end), as tree-search.ts documents: objective log2 Σ weight + Σ penalty, moves judged by
 * their local change. stats (f64[5]) = [objective, log2 flops of the final tree, work, proposals,
 * accepted]; work is added to stats[2]'s value on entry.
 */
export function treeAnneal(
  left: usize, right: usize, out: usize, nodes: i32, L: i32, words: i32, countWords: i32,
  classLogs: usize, classPows: usize, powsPerClass: i32, nClasses: i32, classRanges: usize,
  maxLog2Message: f64, penaltyPerBit: f64, work: f64, beta0: f64, beta1: f64, seed: u32,
  scratch: usize, stats: usize,
): void {
  W = words;
  classes = nClasses;
  logs = classLogs;
  pows = classPows;
  powStride = powsPerClass;
  classWords = classRanges;
  bound = maxLog2Message;
  penalty = penaltyPerBit;
  rngState = seed;
  const setBytes = <usize>W << 3;
  // Scratch: best left/right (i32), best out, wt, pen (f64), out Y'.
  const bestLeft = scratch, bestRight = bestLeft + (<usize>nodes << 2);
  const bestOut = (bestRight + (<usize>nodes << 2) + 15) & ~(<usize>15);
  const wt = bestOut + <usize>nodes * setBytes, pen = wt + (<usize>nodes << 3);
  const outY = pen + (<usize>nodes << 3);
  const treeBytes = <usize>nodes << 2, outBytes = <usize>nodes * setBytes;
  const W32: f64 = 2 * <f64>countWords;
  used = load<f64>(stats, 16);
  proposals = load<f64>(stats, 24);
  accepted = load<f64>(stats, 32);
  const inner = nodes - L;
  const t = tree;
  t.left = left;
  t.right = right;
  t.out = out;
  t.nodes = nodes;
  t.L = L;
  t.wt = wt;
  t.pen = pen;
  t.setBytes = setBytes;
  t.W32 = W32;

  saveBest(bestLeft, bestRight, bestOut, treeBytes, outBytes);
  let bestObj = recompute(t);
  if (inner >= 2 && work > 0) {
    const moveWords = 2 * W32 * <f64>(3 + classes) + MOVE_BASE_WORDS;
    const sweeps = max(1, <i32>Math.floor(work / ((moveWords + VISIT_WORDS) * <f64>inner)));
    const start = used;
    for (let s = 0; s < sweeps && used - start < work; s++) {
      const beta = sweeps == 1 ? beta1 : beta0 * Math.pow(beta1 / beta0, <f64>s / <f64>(sweeps - 1));
      // Counted as a recompute, as the TypeScript search did, so budgets buy the same sweeps.
      used += <f64>inner * W32;
      annealSweep(t, beta, moveWords, outY);
      // Every node's weight and penalty is exact already (a move stores its two nodes'; no other
      // node's bag changes): the sums afresh, in recompute's order, are recompute's, bit for bit.
      const obj = resum(t);
      if (obj < bestObj) {
        bestObj = obj;
        saveBest(bestLeft, bestRight, bestOut, treeBytes, outBytes);
      }
    }
  }
  memory.copy(left, bestLeft, treeBytes);
  memory.copy(right, bestRight, treeBytes);
  memory.copy(out, bestOut, outBytes);
  const obj = recompute(t);
  store<f64>(stats, obj);
  store<f64>(stats, Math.log2(max(T, 1)), 8);
  store<f64>(stats, used, 16);
  store<f64>(stats, proposals, 24);
  store<f64>(stats, accepted, 32);
}

/**
 * The elimination order of a tree (local variable indices into order, returning how many): in
 * post-order, the variables each node sums — a leaf, those of its factor alone (leafSets: u64[L ·
 * W], its scope); an inner node, its bag (its children's outputs) less its output — each node's in
 * increasing index (rank ≠ 0: in increasing rank[index], i32 per index: the variables' own order
 * when classes sit in words of their own). stack: i32[nodes], visited: u8[nodes] (zeroed by the
 * caller), bag: u64[W].
 * At most `capacity` are written: a tree summing a variable twice returns more than that.
 */
export function treeOrder(left: usize, right: usize, out: usize, nodes: i32, L: i32, words: i32, root: i32, leafSets: usize, order: usize, capacity: i32, stack: usize, visited: usize, bag: usize, rank: usize): i32 {
  const setBytes = <usize>words << 3;
  let top = 0, emitted = 0;
  store<i32>(stack, root);
  top = 1;
  while (top > 0) {
    const N = load<i32>(stack + (<usize>(top - 1) << 2));
    if (N >= L && load<u8>(visited + <usize>N) == 0) {
      store<u8>(visited + <usize>N, 1);
      store<i32>(stack + (<usize>top << 2), load<i32>(right + (<usize>N << 2)));
      store<i32>(stack + (<usize>(top + 1) << 2), load<i32>(left + (<usize>N << 2)));
      top += 2;
      continue;
    }
    top--;
    if (N < L) memory.copy(bag, leafSets + <usize>N * setBytes, setBytes);
    else {
      const a = out + <usize>load<i32>(left + (<usize>N << 2)) * setBytes, b = out + <usize>load<i32>(right + (<usize>N << 2)) * setBytes;
      for (let q: usize = 0; q < setBytes; q += 8) store<u64>(bag + q, load<u64>(a + q) | load<u64>(b + q));
    }
    const o = out + <usize>N * setBytes, first = emitted;
    for (let w = 0; w < words; w++) {
      let bits = load<u64>(bag + (<usize>w << 3)) & ~load<u64>(o + (<usize>w << 3));
      while (bits != 0) {
        if (emitted < capacity) store<i32>(order + (<usize>emitted << 2), (w << 6) + <i32>ctz<u64>(bits));
        emitted++;
        bits &= bits - 1;
      }
    }
    if (rank != 0) sortByRank(order, first, min(emitted, capacity), rank);
  }
  return emitted;
}

/** Insertion sort of order[from … to) by rank[index] (a node's summed variables: a few). */
function sortByRank(order: usize, from: i32, to: i32, rank: usize): void {
  for (let i = from + 1; i < to; i++) {
    const x = load<i32>(order + (<usize>i << 2)), r = load<i32>(rank + (<usize>x << 2));
    let j = i - 1;
    while (j >= from && load<i32>(rank + (<usize>load<i32>(order + (<usize>j << 2)) << 2)) > r) {
      store<i32>(order + (<usize>(j + 1) << 2), load<i32>(order + (<usize>j << 2)));
      j--;
    }
    store<i32>(order + (<usize>(j + 1) << 2), x);
  }
}

/**
 * The tree of bucket elimination in an order: each bucket's tables (its factors, its children's
 * messages) joined one after another in the order they arrived, the message going to the bucket of
 * its first variable eliminated later; the roots (messages over no variable) joined last. Leaves
 * are the factors: leaf l's variables (local indices) at leafVars[leafStart[l] … leafStart[l+1]).
 * Variables are set indices (below nIndex; nLocal of them are used). pos / byPos: each index's
 * elimination position and the index at each of the nLocal positions. Writes left, right
 * (i32[nodes]), out (u64[nodes · W], zeroed by the caller: each node's output set) and all
 * (u64[nodes · W], zeroed: each node's variables, the leaves' scopes first); returns the root.
 * Scratch: live (u64[nodes · W], zeroed), head, tail (i32[nIndex]), nextItem, roots (i32[nodes]).
 */
export function treeBuild(L: i32, nLocal: i32, nIndex: i32, words: i32, leafStart: usize, leafVars: usize, pos: usize, byPos: usize, left: usize, right: usize, out: usize, all: usize, live: usize, head: usize, tail: usize, nextItem: usize, roots: usize): i32 {
  const setBytes = <usize>words << 3;
  const nodes = max(1, 2 * L - 1);
  for (let x = 0; x < nIndex; x++) {
    store<i32>(head + (<usize>x << 2), -1);
    store<i32>(tail + (<usize>x << 2), -1);
  }
  for (let N = 0; N < nodes; N++) {
    store<i32>(left + (<usize>N << 2), -1);
    store<i32>(right + (<usize>N << 2), -1);
    store<i32>(nextItem + (<usize>N << 2), -1);
  }
  for (let l = 0; l < L; l++) {
    const set = all + <usize>l * setBytes, lv = live + <usize>l * setBytes;
    const k1 = load<i32>(leafStart + (<usize>(l + 1) << 2));
    for (let k = load<i32>(leafStart + (<usize>l << 2)); k < k1; k++) {
      const u = load<i32>(leafVars + (<usize>k << 2));
      const p = set + (<usize>(u >>> 6) << 3);
      store<u64>(p, load<u64>(p) | (<u64>1 << <u64>(u & 63)));
    }
    memory.copy(lv, set, setBytes);
    appendItem(head, tail, nextItem, firstLive(lv, words, pos), l);
  }
  let next = L, nRoots = 0;
  for (let q = 0; q < nLocal; q++) {
    const x = load<i32>(byPos + (<usize>q << 2));
    let node = load<i32>(head + (<usize>x << 2));
    if (node < 0) continue;
    // Join the bucket's items in arrival order (messages only go to later buckets).
    for (let it = load<i32>(nextItem + (<usize>node << 2)); it >= 0; it = load<i32>(nextItem + (<usize>it << 2))) {
      node = join(node, it, next++, left, right, all, live, setBytes);
    }
    const lv = live + <usize>node * setBytes, px = lv + (<usize>(x >>> 6) << 3);
    store<u64>(px, load<u64>(px) & ~(<u64>1 << <u64>(x & 63)));
    const to = firstLive(lv, words, pos);
    if (to >= 0) appendItem(head, tail, nextItem, to, node);
    else {
      store<i32>(roots + (<usize>nRoots << 2), node);
      nRoots++;
    }
  }
  let root = load<i32>(roots);
  for (let k = 1; k < nRoots; k++) root = join(root, load<i32>(roots + (<usize>k << 2)), next++, left, right, all, live, setBytes);
  // Outputs top-down: what a child carries is what it has that its sibling or the outside needs.
  for (let N = nodes - 1; N >= L; N--) {
    const a = load<i32>(left + (<usize>N << 2)), b = load<i32>(right + (<usize>N << 2));
    const o = out + <usize>N * setBytes, aa = all + <usize>a * setBytes, ab = all + <usize>b * setBytes;
    const oa = out + <usize>a * setBytes, ob = out + <usize>b * setBytes;
    for (let q: usize = 0; q < setBytes; q += 8) {
      const ow = load<u64>(o + q), xa = load<u64>(aa + q), xb = load<u64>(ab + q);
      store<u64>(oa + q, xa & (ow | xb));
      store<u64>(ob + q, xb & (ow | xa));
    }
  }
  return root;
}

/** The live variable of a set eliminated first (−1: none). */
function firstLive(set: usize, words: i32, pos: usize): i32 {
  let best = -1, bestPos = 0;
  for (let w = 0; w < words; w++) {
    let bits = load<u64>(set + (<usize>w << 3));
    while (bits != 0) {
      const u = (w << 6) + <i32>ctz<u64>(bits);
      bits &= bits - 1;
      const p = load<i32>(pos + (<usize>u << 2));
      if (best < 0 || p < bestPos) {
        best = u;
        bestPos = p;
      }
    }
  }
  return best;
}

function appendItem(head: usize, tail: usize, nextItem: usize, x: i32, node: i32): void {
  const t = load<i32>(tail + (<usize>x << 2));
  if (t < 0) store<i32>(head + (<usize>x << 2), node);
  else store<i32>(nextItem + (<usize>t << 2), node);
  store<i32>(tail + (<usize>x << 2), node);
}

function join(a: i32, b: i32, N: i32, left: usize, right: usize, all: usize, live: usize, setBytes: usize): i32 {
  store<i32>(left + (<usize>N << 2), a);
  store<i32>(right + (<usize>N << 2), b);
  const na = <usize>a * setBytes, nb = <usize>b * setBytes, nn = <usize>N * setBytes;
  for (let q: usize = 0; q < setBytes; q += 8) {
    store<u64>(all + nn + q, load<u64>(all + na + q) | load<u64>(all + nb + q));
    store<u64>(live + nn + q, load<u64>(live + na + q) | load<u64>(live + nb + q));
  }
  return N;
}
