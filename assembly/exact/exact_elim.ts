// Table kernels for variable elimination / junction-tree inference (bindings/exact.ts plans and drives them).
//
// Every table is a dense f64 array over a scope of variables; the binding describes each operation as a
// loop nest over an iteration scope whose dimensions it has already coalesced (numpy-iterator style:
// adjacent dimensions that are contiguous in every operand become one), with one element stride per
// dimension and per operand (0 = the operand does not depend on that dimension). One kernel then does
//
//   mode 0:  out[o(i)]  = A[a(i)] * B[b(i)]     (broadcast-multiply; out visited once)
//   mode 1:  out[o(i)] += A[a(i)] * B[b(i)]     (multiply-and-marginalise: out strides may be 0)
//   mode 2:  out[o(i)]  = A[a(i)] + B[b(i)]     (log-space sums, used only on small factor tables)
//   mode 3:  out[o]      = Σ_{i → o} A[a(i)] * B[b(i)]   (mode 1 into a zeroed out, without the zeroing:
//            each entry assigned on its first visit; −1 and nothing touched where the inner loop
//            gathers into an entry itself, see elimTableOp)
//
// elimTableOp returns 0, except in mode 3: the largest entry written (NaN if one is NaN; the operands
// are non-negative tables) where the sum runs over the inner dimensions only, so the caller need not
// read the message again to normalise it; −2 where outer digits are summed too (largest not known).
//
// over all i in the nest. The innermost one or two dimensions pick a specialised loop (f64x2 where the
// layout allows it); the remaining dimensions run an odometer. Kernels never allocate: the descriptor
// (built by the binding) carries the dimension lengths, the strides and room for the odometer's counters.
//
// Descriptor layout (i32): [nd, len[nd], so[nd], sa[nd], sb[nd], counter[nd]].

// ---------------------------------------------------------------------------------------------------
// Innermost loops. p* are byte addresses, s* element strides.

// One dimension, out stride 1, A and B strides in {0, 1}; a stride-0 operand is B (the binding's
// canonical order is enforced in elimTableOp). mode 0 or 1.
function innerContig(mode: i32, po: usize, pa: usize, sa: i32, pb: usize, sb: i32, n: i32): void {
  let i = 0;
  if (sa == 1 && sb == 1) {
    if (mode == 0) {
      for (; i + 2 <= n; i += 2) {
        const off = <usize>i << 3;
        v128.store(po + off, f64x2.mul(v128.load(pa + off), v128.load(pb + off)));
      }
      if (i < n) store<f64>(po + (<usize>i << 3), load<f64>(pa + (<usize>i << 3)) * load<f64>(pb + (<usize>i << 3)));
    } else {
      for (; i + 2 <= n; i += 2) {
        const off = <usize>i << 3;
        v128.store(po + off, f64x2.add(v128.load(po + off), f64x2.mul(v128.load(pa + off), v128.load(pb + off))));
      }
      if (i < n) {
        const off = <usize>i << 3;
        store<f64>(po + off, load<f64>(po + off) + load<f64>(pa + off) * load<f64>(pb + off));
      }
    }
  } else if (sa == 1) {
    const c = load<f64>(pb);
    const cv = f64x2.splat(c);
    if (mode == 0) {
      for (; i + 2 <= n; i += 2) {
        const off = <usize>i << 3;
        v128.store(po + off, f64x2.mul(v128.load(pa + off), cv));
      }
      if (i < n) store<f64>(po + (<usize>i << 3), load<f64>(pa + (<usize>i << 3)) * c);
    } else {
      for (; i + 2 <= n; i += 2) {
        const off = <usize>i << 3;
        v128.store(po + off, f64x2.add(v128.load(po + off), f64x2.mul(v128.load(pa + off), cv)));
      }
      if (i < n) {
        const off = <usize>i << 3;
        store<f64>(po + off, load<f64>(po + off) + load<f64>(pa + off) * c);
      }
    }
  } else {
    // Both constant along the run.
    const c = load<f64>(pa) * load<f64>(pb);
    const cv = f64x2.splat(c);
    if (mode == 0) {
      for (; i + 2 <= n; i += 2) v128.store(po + (<usize>i << 3), cv);
      if (i < n) store<f64>(po + (<usize>i << 3), c);
    } else {
      for (; i + 2 <= n; i += 2) {
        const off = <usize>i << 3;
        v128.store(po + off, f64x2.add(v128.load(po + off), cv));
      }
      if (i < n) {
        const off = <usize>i << 3;
        store<f64>(po + off, load<f64>(po + off) + c);
      }
    }
  }
}

// One dimension, out stride 0: a dot product / sum added into out[0] (mode 1) or stored there (mode 3).
function innerReduce(mode: i32, po: usize, pa: usize, sa: i32, pb: usize, sb: i32, n: i32): void {
  let s: f64 = 0;
  let i = 0;
  if (sa == 1 && sb == 1) {
    let acc = f64x2.splat(0);
    for (; i + 2 <= n; i += 2) {
      const off = <usize>i << 3;
      acc = f64x2.add(acc, f64x2.mul(v128.load(pa + off), v128.load(pb + off)));
    }
    s = f64x2.extract_lane(acc, 0) + f64x2.extract_lane(acc, 1);
    for (; i < n; i++) s += load<f64>(pa + (<usize>i << 3)) * load<f64>(pb + (<usize>i << 3));
  } else if (sa == 1 && sb == 0) {
    let acc = f64x2.splat(0);
    for (; i + 2 <= n; i += 2) acc = f64x2.add(acc, v128.load(pa + (<usize>i << 3)));
    s = f64x2.extract_lane(acc, 0) + f64x2.extract_lane(acc, 1);
    for (; i < n; i++) s += load<f64>(pa + (<usize>i << 3));
    s *= load<f64>(pb);
  } else {
    const ba = <usize>sa << 3, bb = <usize>sb << 3;
    let qa = pa, qb = pb;
    for (; i < n; i++) {
      s += load<f64>(qa) * load<f64>(qb);
      qa += ba;
      qb += bb;
    }
  }
  if (mode == 3) {
    writtenMax = max(writtenMax, s);
    writtenMin = min(writtenMin, s);
  }
  store<f64>(po, mode == 3 ? s : load<f64>(po) + s);
}

// Generic strided scalar loop over one dimension (any mode, any strides).
function innerGeneric(mode: i32, po: usize, so: i32, pa: usize, sa: i32, pb: usize, sb: i32, n: i32): void {
  const bo = <usize>so << 3, ba = <usize>sa << 3, bb = <usize>sb << 3;
  let qo = po, qa = pa, qb = pb;
  if (mode == 0) {
    for (let i = 0; i < n; i++) {
      store<f64>(qo, load<f64>(qa) * load<f64>(qb));
      qo += bo; qa += ba; qb += bb;
    }
  } else if (mode == 1) {
    for (let i = 0; i < n; i++) {
      store<f64>(qo, load<f64>(qo) + load<f64>(qa) * load<f64>(qb));
      qo += bo; qa += ba; qb += bb;
    }
  } else {
    for (let i = 0; i < n; i++) {
      store<f64>(qo, load<f64>(qa) + load<f64>(qb));
      qo += bo; qa += ba; qb += bb;
    }
  }
}

// How the second operand B moves over the two innermost dimensions (lengths k, m):
const B_CONST = 0; // one value
const B_INNER = 1; // contiguous over both, like A's (t + k j)
const B_ROW = 2; // constant along the inner dimension, contiguous along the outer one (index j)

// The largest value mode 3 has written (NaN once it has written a NaN): elimTableOp's result there.
let writtenMax: f64 = 0;
// The smallest value mode 3 has written (+∞ if none; one min per pair of outputs in the hot loop,
// where tracking the smallest positive one apart from zeros cost 8 % of Grids_15's time).
let writtenMin: f64 = Infinity;

/** Mode 3's smallest entry written by the last elimTableOp that returned a largest one (0 if it wrote a zero). */
export function elimWrittenMin(): f64 {
  return writtenMin;
}

// Two dimensions: sum out the inner one (length k, contiguous in A) into consecutive outputs.
//   out[j] (+)= Σ_t A[j*k + t] * B[...]      mode 0 or 3: =, mode 1: +=; mode 3 also tracks writtenMax.
function innerGroup(mode: i32, po: usize, pa: usize, pb: usize, bm: i32, k: i32, m: i32): void {
  const kb = <usize>k << 3;
  const bInner = bm == B_INNER;
  const acc = mode == 1;
  let mx: f64 = 0, mn: f64 = Infinity;
  if (bm == B_ROW || k != 2) {
    let qa = pa, qb = pb, qo = po;
    const c = load<f64>(pb);
    for (let j = 0; j < m; j++) {
      let s: f64 = 0;
      if (bm == B_ROW) {
        for (let t = 0; t < k; t++) s += load<f64>(qa + (<usize>t << 3));
        s *= load<f64>(pb + (<usize>j << 3));
      } else if (bInner) {
        for (let t = 0; t < k; t++) s += load<f64>(qa + (<usize>t << 3)) * load<f64>(qb + (<usize>t << 3));
        qb += kb;
      } else {
        for (let t = 0; t < k; t++) s += load<f64>(qa + (<usize>t << 3));
        s *= c;
      }
      if (acc) s += load<f64>(qo);
      mx = max(mx, s);
      mn = min(mn, s);
      store<f64>(qo, s);
      qa += kb;
      qo += 8;
    }
    if (mode == 3) {
      writtenMax = max(writtenMax, mx);
      writtenMin = min(writtenMin, mn);
    }
    return;
  }
  // k == 2: two outputs per vector; pmax is one maxpd, NaN is caught by a running sum (the entries
  // are non-negative: a sum is NaN exactly when an entry is).
  let mv = f64x2.splat(0);
  let sv = f64x2.splat(0);
  let nv = f64x2.splat(Infinity);
  let j = 0;
  const cv = f64x2.splat(load<f64>(pb));
  if (bInner && !acc) {
    // The upward step's loop (every junction-tree message): written out without the mode tests,
    // four outputs per turn (7 % faster than two in an A/B of the builds on Grids_15's shape).
    for (; j + 4 <= m; j += 4) {
      const off = <usize>j << 4;
      const x = f64x2.mul(v128.load(pa + off), v128.load(pb + off));
      const y = f64x2.mul(v128.load(pa + off, 16), v128.load(pb + off, 16));
      const s = f64x2.add(v128.shuffle<f64>(x, y, 0, 2), v128.shuffle<f64>(x, y, 1, 3));
      const x2 = f64x2.mul(v128.load(pa + off, 32), v128.load(pb + off, 32));
      const y2 = f64x2.mul(v128.load(pa + off, 48), v128.load(pb + off, 48));
      const s2 = f64x2.add(v128.shuffle<f64>(x2, y2, 0, 2), v128.shuffle<f64>(x2, y2, 1, 3));
      mv = f64x2.pmax(mv, f64x2.pmax(s, s2));
      sv = f64x2.add(sv, f64x2.add(s, s2));
      nv = f64x2.pmin(nv, f64x2.pmin(s, s2));
      v128.store(po + (<usize>j << 3), s);
      v128.store(po + (<usize>j << 3), s2, 16);
    }
  }
  for (; j + 2 <= m; j += 2) {
    const off = <usize>j << 4;
    let s: v128;
    if (bInner) {
      const x = f64x2.mul(v128.load(pa + off), v128.load(pb + off));
      const y = f64x2.mul(v128.load(pa + off, 16), v128.load(pb + off, 16));
      s = f64x2.add(v128.shuffle<f64>(x, y, 0, 2), v128.shuffle<f64>(x, y, 1, 3));
    } else {
      const x = v128.load(pa + off);
      const y = v128.load(pa + off, 16);
      s = f64x2.mul(f64x2.add(v128.shuffle<f64>(x, y, 0, 2), v128.shuffle<f64>(x, y, 1, 3)), cv);
    }
    const oo = po + (<usize>j << 3);
    if (acc) s = f64x2.add(v128.load(oo), s);
    mv = f64x2.pmax(mv, s);
    sv = f64x2.add(sv, s);
    nv = f64x2.pmin(nv, s);
    v128.store(oo, s);
  }
  for (; j < m; j++) {
    const off = <usize>j << 4;
    let s = bInner
      ? load<f64>(pa + off) * load<f64>(pb + off) + load<f64>(pa + off, 8) * load<f64>(pb + off, 8)
      : (load<f64>(pa + off) + load<f64>(pa + off, 8)) * f64x2.extract_lane(cv, 0);
    const oo = po + (<usize>j << 3);
    if (acc) s += load<f64>(oo);
    mx = max(mx, s);
    mn = min(mn, s);
    store<f64>(oo, s);
  }
  if (mode == 3) {
    mx = max(mx, max(f64x2.extract_lane(mv, 0), f64x2.extract_lane(mv, 1)));
    writtenMax = isNaN(f64x2.extract_lane(sv, 0) + f64x2.extract_lane(sv, 1)) ? NaN : max(writtenMax, mx);
    writtenMin = min(writtenMin, min(mn, min(f64x2.extract_lane(nv, 0), f64x2.extract_lane(nv, 1))));
  }
}

// Two dimensions: A is constant along the inner one (length k) and contiguous along the outer one.
//   out[j*k + t] (+)= A[j] * B[...]
function innerExpand(mode: i32, po: usize, pa: usize, pb: usize, bm: i32, k: i32, m: i32): void {
  const kb = <usize>k << 3;
  const bInner = bm == B_INNER;
  if (bm == B_ROW) {
    for (let j = 0; j < m; j++) {
      const x = load<f64>(pa + (<usize>j << 3)) * load<f64>(pb + (<usize>j << 3));
      const qo = po + <usize>j * kb;
      for (let t = 0; t < k; t++) {
        const oo = qo + (<usize>t << 3);
        store<f64>(oo, mode == 0 ? x : load<f64>(oo) + x);
      }
    }
    return;
  }
  if (k == 2) {
    if (bInner) {
      for (let j = 0; j < m; j++) {
        const off = <usize>j << 4;
        const x = f64x2.mul(f64x2.splat(load<f64>(pa + (<usize>j << 3))), v128.load(pb + off));
        v128.store(po + off, mode == 0 ? x : f64x2.add(v128.load(po + off), x));
      }
    } else {
      const c = load<f64>(pb);
      for (let j = 0; j < m; j++) {
        const off = <usize>j << 4;
        const x = f64x2.splat(load<f64>(pa + (<usize>j << 3)) * c);
        v128.store(po + off, mode == 0 ? x : f64x2.add(v128.load(po + off), x));
      }
    }
    return;
  }
  let qo = po, qb = pb;
  const c = load<f64>(pb);
  for (let j = 0; j < m; j++) {
    const aj = load<f64>(pa + (<usize>j << 3));
    for (let t = 0; t < k; t++) {
      const x = aj * (bInner ? load<f64>(qb + (<usize>t << 3)) : c);
      const oo = qo + (<usize>t << 3);
      store<f64>(oo, mode == 0 ? x : load<f64>(oo) + x);
    }
    qo += kb;
    if (bInner) qb += kb;
  }
}

// Two dimensions: column sums. out[t] += Σ_j A[j*k + t] * B[...] (mode 1).
function innerColumns(po: usize, pa: usize, pb: usize, bm: i32, k: i32, m: i32): void {
  const kb = <usize>k << 3;
  const bInner = bm == B_INNER;
  if (bm == B_ROW) {
    if (k == 2) {
      let acc = f64x2.splat(0);
      for (let j = 0; j < m; j++) {
        acc = f64x2.add(acc, f64x2.mul(v128.load(pa + (<usize>j << 4)), f64x2.splat(load<f64>(pb + (<usize>j << 3)))));
      }
      v128.store(po, f64x2.add(v128.load(po), acc));
      return;
    }
    for (let j = 0; j < m; j++) {
      const bj = load<f64>(pb + (<usize>j << 3));
      const qa = pa + <usize>j * kb;
      for (let t = 0; t < k; t++) {
        const oo = po + (<usize>t << 3);
        store<f64>(oo, load<f64>(oo) + load<f64>(qa + (<usize>t << 3)) * bj);
      }
    }
    return;
  }
  if (k == 2) {
    let acc = f64x2.splat(0);
    if (bInner) {
      for (let j = 0; j < m; j++) {
        const off = <usize>j << 4;
        acc = f64x2.add(acc, f64x2.mul(v128.load(pa + off), v128.load(pb + off)));
      }
    } else {
      for (let j = 0; j < m; j++) acc = f64x2.add(acc, v128.load(pa + (<usize>j << 4)));
      acc = f64x2.mul(acc, f64x2.splat(load<f64>(pb)));
    }
    v128.store(po, f64x2.add(v128.load(po), acc));
    return;
  }
  const c = load<f64>(pb);
  let qa = pa, qb = pb;
  for (let j = 0; j < m; j++) {
    for (let t = 0; t < k; t++) {
      const x = load<f64>(qa + (<usize>t << 3)) * (bInner ? load<f64>(qb + (<usize>t << 3)) : c);
      const oo = po + (<usize>t << 3);
      store<f64>(oo, load<f64>(oo) + x);
    }
    qa += kb;
    if (bInner) qb += kb;
  }
}

// Two dimensions, A and out contiguous over both, B periodic: it moves (stride sb) along the inner
// dimension (length k) only.   out[j*k + t] (op)= A[j*k + t] (*|+) B[t*sb]
function innerPeriodic(mode: i32, po: usize, pa: usize, pb: usize, sb: i32, k: i32, m: i32): void {
  const kb = <usize>k << 3;
  if (k == 2) {
    const p = f64x2.replace_lane(f64x2.splat(load<f64>(pb)), 1, load<f64>(pb + (<usize>sb << 3)));
    if (mode == 0) {
      for (let j = 0; j < m; j++) {
        const off = <usize>j << 4;
        v128.store(po + off, f64x2.mul(v128.load(pa + off), p));
      }
    } else if (mode == 1) {
      for (let j = 0; j < m; j++) {
        const off = <usize>j << 4;
        v128.store(po + off, f64x2.add(v128.load(po + off), f64x2.mul(v128.load(pa + off), p)));
      }
    } else {
      for (let j = 0; j < m; j++) {
        const off = <usize>j << 4;
        v128.store(po + off, f64x2.add(v128.load(pa + off), p));
      }
    }
    return;
  }
  const bs = <usize>sb << 3;
  let qo = po, qa = pa;
  for (let j = 0; j < m; j++) {
    for (let t = 0; t < k; t++) {
      const o = qo + (<usize>t << 3);
      const x = load<f64>(qa + (<usize>t << 3));
      const y = load<f64>(pb + <usize>t * bs);
      if (mode == 0) store<f64>(o, x * y);
      else if (mode == 1) store<f64>(o, load<f64>(o) + x * y);
      else store<f64>(o, x + y);
    }
    qo += kb;
    qa += kb;
  }
}

// ---------------------------------------------------------------------------------------------------

const K_CONTIG = 1, K_REDUCE = 2, K_GENERIC = 3, K_GROUP = 4, K_EXPAND = 5, K_COLUMNS = 6, K_PERIODIC = 7;

/**
 * The generic table operation (see the header). `desc` is the descriptor; `out`, `a`, `b` are byte
 * addresses of f64 tables. An operand that does not exist is passed as a pointer to the constant 1.0
 * (mode 0/1) or 0.0 (mode 2) with zero strides.
 */
export function elimTableOp(desc: usize, out: usize, a: usize, b: usize, mode: i32): f64 {
  const nd = load<i32>(desc);
  assert(nd >= 0 && nd <= 64, 'elimTableOp: bad descriptor');
  const L = desc + 4;
  const SO = L + (<usize>nd << 2);
  const SA = SO + (<usize>nd << 2);
  const SB = SA + (<usize>nd << 2);
  const CNT = SB + (<usize>nd << 2);

  if (nd == 0) {
    // A scalar.
    if (mode == 0 || mode == 3) store<f64>(out, load<f64>(a) * load<f64>(b));
    else if (mode == 1) store<f64>(out, load<f64>(out) + load<f64>(a) * load<f64>(b));
    else store<f64>(out, load<f64>(a) + load<f64>(b));
    if (mode != 3) return 0;
    const x = load<f64>(out);
    writtenMin = x;
    return x;
  }

  // Classify the innermost dimensions; swap A and B into the canonical order where that helps.
  // Mode 3 is classified as mode 1 and then checked (below).
  const assign = mode == 3;
  if (assign) mode = 1;
  let pa = a, pb = b;
  let swapped = false;
  const l0 = load<i32>(L), so0 = load<i32>(SO);
  let sa0 = load<i32>(SA), sb0 = load<i32>(SB);
  let kind = K_GENERIC;
  let ni = 1;
  let l1 = 0;
  let bm = B_CONST;
  if (nd >= 2) {
    l1 = load<i32>(L, 4);
    const so1 = load<i32>(SO, 4);
    let sa1 = load<i32>(SA, 4), sb1 = load<i32>(SB, 4);
    for (let attempt = 0; attempt < 2 && kind == K_GENERIC; attempt++) {
      if (attempt == 1) {
        let t = sa0; sa0 = sb0; sb0 = t;
        t = sa1; sa1 = sb1; sb1 = t;
        swapped = true;
      }
      if (so0 == 1 && sa0 == 1 && so1 == l0 && sa1 == l0 && sb1 == 0) {
        kind = K_PERIODIC;
        continue;
      }
      if (mode == 2) continue;
      bm = sb0 == 0 && sb1 == 0 ? B_CONST : sb0 == 1 && sb1 == l0 ? B_INNER : sb0 == 0 && sb1 == 1 ? B_ROW : -1;
      if (bm < 0) continue;
      if (so0 == 0 && sa0 == 1 && so1 == 1 && sa1 == l0) kind = K_GROUP;
      else if (so0 == 1 && sa0 == 0 && so1 == l0 && sa1 == 1) kind = K_EXPAND;
      else if (mode == 1 && so0 == 1 && sa0 == 1 && so1 == 0 && sa1 == l0) kind = K_COLUMNS;
    }
    if (kind == K_GENERIC) {
      // Undo a failed swap.
      if (swapped) {
        const t = sa0; sa0 = sb0; sb0 = t;
        swapped = false;
      }
    } else {
      ni = 2;
    }
  }
  if (kind == K_GENERIC && mode != 2) {
    if (so0 == 1 && (sa0 == 0 || sa0 == 1) && (sb0 == 0 || sb0 == 1)) {
      kind = K_CONTIG;
      if (sa0 == 0 && sb0 == 1) {
        swapped = true;
        sa0 = 1;
        sb0 = 0;
      }
    } else if (so0 == 0 && mode == 1) {
      kind = K_REDUCE;
      if (sa0 != 1 && sb0 == 1) {
        swapped = true;
        const t = sa0; sa0 = sb0; sb0 = t;
      }
    }
  }
  // Mode 3. Summed over the inner dimensions only: every out entry is written by one inner call,
  // which tracks the largest. Summed over outer digits too: an inner call that writes each of its
  // out entries once assigns on an entry's first visit (every outer summed digit at 0) and adds on
  // the later ones; the largest is then not tracked (−2). An inner loop that gathers into an entry
  // itself (column sums, a strided sum) cannot assign: −1, nothing done.
  let staged = false;
  if (assign) {
    let outerSum = false;
    for (let d = ni; d < nd; d++) if (load<i32>(SO + (<usize>d << 2)) == 0) outerSum = true;
    if (!outerSum && (kind == K_GROUP || kind == K_REDUCE)) {
      mode = 3;
      writtenMax = 0;
      writtenMin = Infinity;
    } else if (kind == K_COLUMNS || (kind == K_GENERIC && so0 == 0)) return -1;
    else staged = true;
  }
  const assignMode = kind == K_REDUCE ? 3 : 0;
  let summedNonzero = 0; // outer summed digits away from 0 (staged mode 3)
  if (swapped) {
    pa = b;
    pb = a;
  }

  // Outer odometer: byte strides per dimension, taken from the descriptor (swap-aware).
  for (let d = 0; d < nd; d++) store<i32>(CNT + (<usize>d << 2), 0);
  let po = out, qa = pa, qb = pb;
  const SAx = swapped ? SB : SA;
  const SBx = swapped ? SA : SB;
  while (true) {
    const m = staged ? (summedNonzero == 0 ? assignMode : 1) : mode;
    switch (kind) {
      case K_CONTIG: innerContig(m, po, qa, sa0, qb, sb0, l0); break;
      case K_REDUCE: innerReduce(m, po, qa, sa0, qb, sb0, l0); break;
      case K_GROUP: innerGroup(m, po, qa, qb, bm, l0, l1); break;
      case K_EXPAND: innerExpand(m, po, qa, qb, bm, l0, l1); break;
      case K_COLUMNS: innerColumns(po, qa, qb, bm, l0, l1); break;
      case K_PERIODIC: innerPeriodic(m, po, qa, qb, sb0, l0, l1); break;
      default: innerGeneric(m, po, so0, qa, sa0, qb, sb0, l0);
    }
    let d = ni;
    for (; d < nd; d++) {
      const cp = CNT + (<usize>d << 2);
      const c = load<i32>(cp) + 1;
      const ld = load<i32>(L + (<usize>d << 2));
      const o = <usize>load<i32>(SO + (<usize>d << 2)) << 3;
      const x = <usize>load<i32>(SAx + (<usize>d << 2)) << 3;
      const y = <usize>load<i32>(SBx + (<usize>d << 2)) << 3;
      if (c < ld) {
        store<i32>(cp, c);
        if (o == 0 && c == 1) summedNonzero++;
        po += o;
        qa += x;
        qb += y;
        break;
      }
      store<i32>(cp, 0);
      if (o == 0 && ld > 1) summedNonzero--;
      const back = <usize>(ld - 1);
      po -= o * back;
      qa -= x * back;
      qb -= y * back;
    }
    if (d == nd) break;
  }
  return staged ? -2 : mode == 3 ? writtenMax : 0;
}

/**
 * Largest entry m of a table of non-negative numbers (NaN if any entry is). The table is divided by m
 * and m returned when m is positive and finite and outside [2^-bits, 2^bits]; otherwise the table is
 * left as it is and 1 returned (0, Infinity and NaN are returned as they are). The caller picks `bits`
 * so that the products its consumer forms stay inside the floating-point range; skipping the divide
 * saves a write pass over tables that are mostly larger than the cache.
 */
export function elimMaxScale(p: usize, n: i32, bits: i32): f64 {
  return elimScaleBy(p, n, tableMax(p, n), bits);
}

/** The largest entry of a table of non-negative numbers, NaN if any entry is NaN. */
function tableMax(p: usize, n: i32): f64 {
  // pmax is one maxpd; max's NaN and −0 semantics cost several instructions, so NaN is tracked apart.
  let mv = f64x2.splat(0);
  let nan = i64x2.splat(0);
  let i = 0;
  for (; i + 2 <= n; i += 2) {
    const x = v128.load(p + (<usize>i << 3));
    mv = f64x2.pmax(mv, x);
    nan = v128.or(nan, f64x2.ne(x, x));
  }
  let m = max(f64x2.extract_lane(mv, 0), f64x2.extract_lane(mv, 1));
  for (; i < n; i++) m = max(m, load<f64>(p + (<usize>i << 3)));
  return v128.any_true(nan) ? NaN : m;
}

/**
 * The largest entry of a table of non-negative numbers (NaN if any entry is NaN), as tableMax, and in
 * the same pass its smallest positive entry (+∞ if none), negated when the table also has zero
 * entries, left for elimTableLow: how far its range reaches down, and whether an entry vanished,
 * which the junction tree checks against the doubles' range (bindings/exact/elimination.ts).
 */
export function elimTableRange(p: usize, n: i32): f64 {
  const inf = f64x2.splat(Infinity), zero = f64x2.splat(0);
  let mv = zero, nv = inf;
  let nan = i64x2.splat(0), zeros = i64x2.splat(0);
  let i = 0;
  for (; i + 2 <= n; i += 2) {
    const x = v128.load(p + (<usize>i << 3));
    mv = f64x2.pmax(mv, x);
    nan = v128.or(nan, f64x2.ne(x, x));
    nv = f64x2.pmin(nv, v128.bitselect(x, inf, f64x2.gt(x, zero)));
    zeros = v128.or(zeros, f64x2.eq(x, zero));
  }
  let m = max(f64x2.extract_lane(mv, 0), f64x2.extract_lane(mv, 1));
  let lo = min(f64x2.extract_lane(nv, 0), f64x2.extract_lane(nv, 1));
  let hasZero = v128.any_true(zeros);
  for (; i < n; i++) {
    const x = load<f64>(p + (<usize>i << 3));
    m = max(m, x);
    if (x > 0 && x < lo) lo = x;
    if (x == 0) hasZero = true;
  }
  tableLow = hasZero ? -lo : lo;
  return v128.any_true(nan) ? NaN : m;
}

let tableLow: f64 = Infinity;

/** The last elimTableRange's smallest positive entry, negated if the table had zeros. */
export function elimTableLow(): f64 {
  return tableLow;
}

/** elimMaxScale for a table whose largest entry m is known. */
export function elimScaleBy(p: usize, n: i32, m: f64, bits: i32): f64 {
  if (!(m > 0) || !isFinite(m)) return m;
  if (m == 1) return m;
  const lo = Math.pow(2, -<f64>bits);
  if (m >= lo && m <= 1 / lo) return 1;
  let i = 0;
  if (m > 1e-300) {
    const r = 1 / m;
    const rv = f64x2.splat(r);
    for (; i + 2 <= n; i += 2) {
      const q = p + (<usize>i << 3);
      v128.store(q, f64x2.mul(v128.load(q), rv));
    }
    for (; i < n; i++) {
      const q = p + (<usize>i << 3);
      store<f64>(q, load<f64>(q) * r);
    }
  } else {
    for (; i < n; i++) {
      const q = p + (<usize>i << 3);
      store<f64>(q, load<f64>(q) / m);
    }
  }
  return m;
}

/** Log table → exp(x − max) in place (−Infinity → 0); returns the max (−Infinity if every entry is). */
export function elimExpShift(p: usize, n: i32): f64 {
  let m = -Infinity;
  for (let i = 0; i < n; i++) m = max(m, load<f64>(p + (<usize>i << 3)));
  if (m == -Infinity) {
    for (let i = 0; i < n; i++) store<f64>(p + (<usize>i << 3), 0);
    return m;
  }
  for (let i = 0; i < n; i++) {
    const q = p + (<usize>i << 3);
    store<f64>(q, Math.exp(load<f64>(q) - m));
  }
  return m;
}

/**
 * Converts a log pairwise table to linear space normalised per row of its owner variable: for each row r
 * (the owner's state; entries r*rs + c*cs, c < cols), m_r = max_c x, x ← exp(x − m_r) (a row of −∞ becomes
 * 0), and rowLog[r] += m_r. The owner's log row offsets then carry every factor's scale exactly, and a
 * product of such tables has maximum 1 in every row, so it never underflows where it matters.
 */
export function elimRowNormalise(p: usize, rows: i32, rs: i32, cols: i32, cs: i32, rowLog: usize): void {
  for (let r = 0; r < rows; r++) {
    const base = p + (<usize>(r * rs) << 3);
    let m = -Infinity;
    for (let c = 0; c < cols; c++) m = max(m, load<f64>(base + (<usize>(c * cs) << 3)));
    for (let c = 0; c < cols; c++) {
      const q = base + (<usize>(c * cs) << 3);
      store<f64>(q, m == -Infinity ? 0.0 : Math.exp(load<f64>(q) - m));
    }
    const o = rowLog + (<usize>r << 3);
    store<f64>(o, load<f64>(o) + m);
  }
}

/** Log table → support indicator in place: 1 where the entry is finite, 0 where it is −Infinity. */
export function elimSupport(p: usize, n: i32): void {
  for (let i = 0; i < n; i++) {
    const q = p + (<usize>i << 3);
    store<f64>(q, load<f64>(q) == -Infinity ? 0.0 : 1.0);
  }
}

/** out[i] /= den[i], with x/0 = 0 (where den is 0, so is out: the numerator carries den as a factor). */
export function elimDivide(out: usize, den: usize, n: i32): void {
  for (let i = 0; i < n; i++) {
    const q = out + (<usize>i << 3);
    const d = load<f64>(den + (<usize>i << 3));
    store<f64>(q, d == 0 ? 0.0 : load<f64>(q) / d);
  }
}

/** Sets n entries to v. */
export function elimFill(p: usize, n: i32, v: f64): void {
  if (v == 0) {
    memory.fill(p, 0, <usize>n << 3);
    return;
  }
  for (let i = 0; i < n; i++) store<f64>(p + (<usize>i << 3), v);
}
