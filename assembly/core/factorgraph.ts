// The model as a factor graph, as the kernels that work on factors of any arity see it (see
// bindings/core/bound-fg.ts): a header of pointers into arena memory, written once per model.
//
//   log p(x) = logConst + Σ_f θ_f(x_{scope f}) − log Z,   x_v ∈ {0 … card_v − 1}
//
// Factor f's table starts at tables[tableStart[f]]; the entry of configuration x is
// Σ_{p in scope f} x[scopeVars[p]] · scopeStride[p] (the last scope variable fastest, as in UAI).
// The incidence rows list, per variable v, the factors that contain it and v's stride in each, so
// a kernel finds every table entry that changes with x_v without searching the scope.
// A configuration is one i32 per variable.

@unmanaged
export class FactorGraph {
  n: i32;
  nFactors: i32;
  /** Largest cardinality (kernels size per-state scratch by it). */
  maxCard: i32;
  /** Largest number of factors containing one variable. */
  maxDegree: i32;
  card: usize; // i32[n]
  scopeStart: usize; // i32[nFactors + 1]
  scopeVars: usize; // i32[scopeStart[nFactors]]
  scopeStride: usize; // i32[scopeStart[nFactors]]
  tableStart: usize; // i32[nFactors], in entries
  tables: usize; // f64[…]
  incStart: usize; // i32[n + 1]
  incFactor: usize; // i32[incStart[n]]
  incStride: usize; // i32[incStart[n]]
  logConst: f64;
}

export function factorGraphBytes(): usize {
  return offsetof<FactorGraph>();
}

/** Fills a header (the bindings own its memory and every array it points to). */
export function factorGraphInit(
  hdr: usize, n: i32, nFactors: i32, maxCard: i32, maxDegree: i32,
  card: usize, scopeStart: usize, scopeVars: usize, scopeStride: usize, tableStart: usize, tables: usize,
  incStart: usize, incFactor: usize, incStride: usize, logConst: f64,
): void {
  const g = changetype<FactorGraph>(hdr);
  g.n = n;
  g.nFactors = nFactors;
  g.maxCard = maxCard;
  g.maxDegree = maxDegree;
  g.card = card;
  g.scopeStart = scopeStart;
  g.scopeVars = scopeVars;
  g.scopeStride = scopeStride;
  g.tableStart = tableStart;
  g.tables = tables;
  g.incStart = incStart;
  g.incFactor = incFactor;
  g.incStride = incStride;
  g.logConst = logConst;
}

@inline
export function cardOf(g: FactorGraph, v: i32): i32 {
  return load<i32>(g.card + (<usize>v << 2));
}

/** Index in `tables` of factor f's entry for configuration x (i32 per variable). */
@inline
export function factorEntry(g: FactorGraph, f: i32, x: usize): i32 {
  let idx = load<i32>(g.tableStart + (<usize>f << 2));
  const end = load<i32>(g.scopeStart + (<usize>(f + 1) << 2));
  for (let p = load<i32>(g.scopeStart + (<usize>f << 2)); p < end; p++) {
    const v = load<i32>(g.scopeVars + (<usize>p << 2));
    idx += load<i32>(x + (<usize>v << 2)) * load<i32>(g.scopeStride + (<usize>p << 2));
  }
  return idx;
}

/** Unnormalised log-probability of configuration x: logConst + Σ_f θ_f(x). */
export function factorGraphLogPotential(g: FactorGraph, x: usize): f64 {
  let s = g.logConst;
  for (let f = 0; f < g.nFactors; f++) s += load<f64>(g.tables + (<usize>factorEntry(g, f, x) << 3));
  return s;
}

/**
 * The conditional log-potentials of variable v given the rest of x: out[k] = Σ_{f ∋ v} θ_f(x with
 * x_v = k), k = 0 … card_v − 1 (f64 each; −∞ where a factor forbids k). x[v] is read but its value
 * does not matter.
 */
export function conditionalLogits(g: FactorGraph, x: usize, v: i32, out: usize): void {
  const K = cardOf(g, v);
  for (let k = 0; k < K; k++) store<f64>(out + (<usize>k << 3), 0.0);
  const xv = load<i32>(x + (<usize>v << 2));
  const end = load<i32>(g.incStart + (<usize>(v + 1) << 2));
  for (let q = load<i32>(g.incStart + (<usize>v << 2)); q < end; q++) {
    const f = load<i32>(g.incFactor + (<usize>q << 2));
    const stride = load<i32>(g.incStride + (<usize>q << 2));
    // The entry with x_v = 0, then step through v's states along its stride.
    let at = g.tables + (<usize>(factorEntry(g, f, x) - xv * stride) << 3);
    const step = <usize>stride << 3;
    for (let k = 0; k < K; k++) {
      store<f64>(out + (<usize>k << 3), load<f64>(out + (<usize>k << 3)) + load<f64>(at));
      at += step;
    }
  }
}

/** Exported for tests: conditionalLogits through a pointer header. */
export function factorGraphConditional(hdr: usize, x: usize, v: i32, out: usize): void {
  conditionalLogits(changetype<FactorGraph>(hdr), x, v, out);
}

/** Exported for tests: the log-potential of configuration x. */
export function factorGraphLogp(hdr: usize, x: usize): f64 {
  return factorGraphLogPotential(changetype<FactorGraph>(hdr), x);
}

/** Whether every arity-1 factor on v (its unary factors, evidence) allows state k. */
export function unaryAllows(g: FactorGraph, v: i32, k: i32): bool {
  const end = load<i32>(g.incStart + (<usize>(v + 1) << 2));
  for (let q = load<i32>(g.incStart + (<usize>v << 2)); q < end; q++) {
    const f = load<i32>(g.incFactor + (<usize>q << 2));
    if (load<i32>(g.scopeStart + (<usize>(f + 1) << 2)) - load<i32>(g.scopeStart + (<usize>f << 2)) != 1) continue;
    if (load<f64>(g.tables + (<usize>(load<i32>(g.tableStart + (<usize>f << 2)) + k) << 3)) == -Infinity) return false;
  }
  return true;
}
