// Loopy belief propagation on a factor graph of any arity (assembly/variational/bp.ts): sum-product in
// log space, damping, parallel or sequential schedule. Its log Z is the Bethe approximation
//
//   log Z_Bethe = logConst + Σ_f (E_{b_f}[θ_f] + H(b_f)) + Σ_v (1 − d_v) H(b_v)        (d_v: factors of v)
//
// at the beliefs the messages reach — exact on a tree (then BP is exact), an estimate otherwise, with
// no standard error. The same solver with factor weights ρ ≠ 1 is tree-reweighted BP (trw.ts).

import type { Engine } from '../core/engine.ts';
import type { Model } from '../core/model.ts';
import { BoundFactorGraph } from '../core/bound-fg.ts';
import type { InferenceResult } from '../core/result.ts';
import { EngineError, ModelError } from '../core/errors.ts';
import { checkCount, checkOptionKeys, definedOnly, MAX_LOOP_COUNT } from '../core/options.ts';
import { knownPositive, refuseZeroModel } from '../core/feasible.ts';
import { stateSymmetry } from '../core/symmetry.ts';

/** The message-passing schedules of belief propagation (see BPOptions.schedule). */
export const BP_SCHEDULES = ['parallel', 'sequential', 'residual'] as const;
/** A belief-propagation schedule. */
export type BPSchedule = (typeof BP_SCHEDULES)[number];

/** Options of loopy belief propagation (`runBP`; TRW takes them too); defaults in BP_DEFAULTS. */
export interface BPOptions {
  /** α ∈ [0, 1): each new message (in log space) is (1 − α) new + α old. Default 0. */
  damping?: number;
  /**
   * 'parallel': every message from the previous iteration's; 'sequential': factor by factor, in index
   * order; 'residual': the factor whose inputs changed most since its last update first (an iteration
   * is as many updates as there are factors of arity ≥ 2).
   */
  schedule?: BPSchedule;
  /** Iterations (sweeps over all factors) at most. Default 1000. */
  maxIterations?: number;
  /**
   * Converged when no message of an iteration changes by more than this in log space: the dynamic
   * range max_k Δ_k − min_k Δ_k of Δ = log m_new − log m_old (a relative change, whatever the state's
   * weight; on the probability scale, as libDAI measures it, damped BP stopped far from its fixed
   * point when a state of weight e^-23 moved by nats). Default 1e-9.
   */
  tolerance?: number;
  /** Stops the iterations (checked every 10 iterations); the result is then that of the messages reached. */
  signal?: AbortSignal;
}

/** Every option runBP reads (BPOptions): it refuses any other (mean field's `tol` is `tolerance` here). */
export const BP_OPTION_KEYS: readonly string[] = ['damping', 'schedule', 'maxIterations', 'tolerance', 'signal'];

/** Defaults of BPOptions. */
export const BP_DEFAULTS = { damping: 0, schedule: 'parallel', maxIterations: 1000, tolerance: 1e-9 } as const;

/** BPOptions validated, defaults filled in (see BPOptions for each field). */
export interface BPConfig {
  /** Damping α ∈ [0, 1). */
  damping: number;
  /** Message schedule. */
  schedule: BPSchedule;
  /** Iterations at most. */
  maxIterations: number;
  /** Convergence threshold on the largest message change (log space, see BPOptions.tolerance). */
  tolerance: number;
}

/** Merges `opts` with BP_DEFAULTS and validates them (ModelError on a bad value). */
export function bpConfig(opts: BPOptions): BPConfig {
  const c = { ...BP_DEFAULTS, ...definedOnly({ damping: opts.damping, schedule: opts.schedule, maxIterations: opts.maxIterations, tolerance: opts.tolerance }) };
  if (typeof c.damping !== 'number' || !(c.damping >= 0 && c.damping < 1)) throw new ModelError(`damping must be a number in [0, 1), got ${c.damping}`);
  if (!BP_SCHEDULES.includes(c.schedule)) throw new ModelError(`schedule must be one of ${BP_SCHEDULES.join(', ')}, got "${c.schedule}"`);
  checkCount('maxIterations', c.maxIterations, 1, MAX_LOOP_COUNT);
  if (typeof c.tolerance !== 'number' || !(c.tolerance >= 0)) throw new ModelError(`tolerance must be a number ≥ 0, got ${c.tolerance}`);
  return c;
}

/** How a run of belief propagation ended. */
export interface BPRunInfo {
  /** Iterations (sweeps over all factors) run. */
  iterations: number;
  /** True when the last iteration changed no message entry by more than the tolerance. */
  converged: boolean;
  /** Largest message change of the last iteration (log space, see BPOptions.tolerance; ∞ when a state's support changed); Infinity when no iteration ran. */
  maxResidual: number;
}

/** Messages, beliefs and weights of one model in engine memory; run() continues from the current messages. */
export class BPSolver {
  /** The model's factor graph in engine memory (messages, beliefs and scratch live in its arena). */
  readonly fg: BoundFactorGraph;
  /** Pointer to the solver's state header in engine memory (for kernels that read its messages). */
  readonly state: number;
  private readonly weightPtr: number;
  private readonly fac2varPtr: number;
  /** Offset of scope entry p's message in messages() (f64 entries; card of its variable long). */
  readonly msgStart: Int32Array;
  private readonly belStart: Int32Array;
  private readonly belPtr: number;
  private readonly factorOffsets: Int32Array;
  // Allocated when first needed (0 before): factor beliefs' offsets and output, the general loop's
  // new messages, the residual schedule's heap. A 10⁶-site lattice's BP never needs them.
  private offsetsPtr = 0;
  private factorOut = 0;
  private newMsgPtr = 0;
  private heapPtr = 0;
  private readonly entF: number;
  private readonly entV: number;
  private readonly out: number;
  /** Factor weights ρ_f (1: BP). */
  readonly weights: Float64Array;

  /**
   * Binds `model` into `engine`'s memory with messages at their initial values and every weight ρ_f = 1.
   * @param engine The engine whose memory holds the solver.
   * @param model The model (factors of any arity).
   */
  constructor(readonly engine: Engine, readonly model: Model, what = 'belief propagation') {
    const { n, card, scopeStart, scopeVars } = model;
    const F = model.nFactors, S = scopeVars.length;
    // Message offsets per scope entry, belief offsets per variable, factor belief offsets, scratch sizes.
    const msgStart = new Int32Array(S + 1);
    for (let p = 0; p < S; p++) msgStart[p + 1] = msgStart[p] + card[scopeVars[p]];
    const belStart = new Int32Array(n + 1);
    for (let v = 0; v < n; v++) belStart[v + 1] = belStart[v] + card[v];
    const factorOffsets = new Int32Array(F + 1);
    // Pair index per factor on two binary variables (pair constants and log-odds are per pair).
    const pairIndex = new Int32Array(F).fill(-1);
    let maxT = 1, maxStates = 1, maxArity = 1, nPairs = 0, nMulti = 0;
    for (let f = 0; f < F; f++) {
      let T = 1, states = 0;
      const arity = scopeStart[f + 1] - scopeStart[f];
      for (let p = scopeStart[f]; p < scopeStart[f + 1]; p++) {
        T *= card[scopeVars[p]];
        states += card[scopeVars[p]];
      }
      factorOffsets[f + 1] = factorOffsets[f] + T;
      maxT = Math.max(maxT, T);
      maxStates = Math.max(maxStates, states);
      maxArity = Math.max(maxArity, arity);
      if (arity >= 2) nMulti++;
      if (arity === 2 && card[scopeVars[scopeStart[f]]] === 2 && card[scopeVars[scopeStart[f] + 1]] === 2) pairIndex[f] = nPairs++;
    }
    // The log-odds path needs every factor of arity ≥ 2 to be a binary pair: otherwise no work memory.
    const oddsEntries = nPairs === nMulti ? engine.kernels.bpOddsEntries(nPairs, n) : 0;
    const M = msgStart[S];
    const r = (b: number) => Math.max(16, Math.ceil(b / 16) * 16); // as the arena rounds
    // Every buffer the constructor allocates below (the lazy ones are checked when allocated).
    const extra = () =>
      [8 * M, 8 * M, 8 * belStart[n], 8 * belStart[n], 8 * F, 8 * F, 8 * n, 8 * maxT, 8 * maxStates, 48 * nPairs, 16, 4 * (S + 1), 4 * S, 4 * (n + 1), 4 * F, 4 * maxArity, engine.kernels.bpStateBytes()]
        .reduce((t, b) => t + r(b), oddsEntries ? r(8 * oddsEntries) : 0);
    this.fg = BoundFactorGraph.fromModel(engine, model, what, extra);
    try {
      // Incidence entry q → its scope entry (the incidence rows list factors in increasing order per variable).
      const incPos = new Int32Array(S);
      const fill = new Int32Array(n);
      const incStart = new Int32Array(n + 1);
      for (let p = 0; p < S; p++) incStart[scopeVars[p] + 1]++;
      for (let v = 0; v < n; v++) incStart[v + 1] += incStart[v];
      for (let f = 0; f < F; f++) for (let p = scopeStart[f]; p < scopeStart[f + 1]; p++) incPos[incStart[scopeVars[p]] + fill[scopeVars[p]]++] = p;
      const a = this.fg.arena;
      this.weights = new Float64Array(F).fill(1);
      this.belStart = belStart;
      this.factorOffsets = factorOffsets;
      const ptr = {
        msgStart: a.allocI32(msgStart),
        incPos: a.allocI32(incPos),
        belStart: a.allocI32(belStart),
        weight: a.allocF64(this.weights),
        fac2var: a.alloc(8 * M),
        var2fac: a.alloc(8 * M),
        belief: a.alloc(8 * belStart[n]),
        scratchE: a.alloc(8 * maxT),
        scratchS: a.alloc(8 * maxStates),
        digits: a.alloc(4 * maxArity),
        pairIndex: a.allocI32(pairIndex),
        pairConst: a.alloc(48 * nPairs),
        odds: oddsEntries ? a.alloc(8 * oddsEntries) : 0,
      };
      this.weightPtr = ptr.weight;
      this.fac2varPtr = ptr.fac2var;
      this.msgStart = msgStart;
      this.belPtr = a.alloc(8 * belStart[n]);
      this.entF = a.alloc(8 * F);
      this.entV = a.alloc(8 * n);
      this.out = a.alloc(16);
      this.state = a.alloc(engine.kernels.bpStateBytes());
      engine.call('bp init', (k) => k.bpInit(this.state, this.fg.header, ptr.msgStart, ptr.incPos, ptr.belStart, ptr.weight, ptr.fac2var, ptr.var2fac, ptr.belief, ptr.scratchE, ptr.scratchS, ptr.digits, ptr.pairIndex, nPairs, ptr.pairConst, ptr.odds));
    } catch (e) {
      this.fg.dispose();
      throw e;
    }
  }

  private live(): number {
    this.fg.live();
    return this.state;
  }

  /** Sets the factor weights ρ (all > 0); the messages stay (a warm start), beliefs follow. */
  setWeights(rho: ArrayLike<number>): void {
    const st = this.live();
    if (rho.length !== this.weights.length) throw new ModelError(`expected ${this.weights.length} factor weights, got ${rho.length}`);
    for (let f = 0; f < rho.length; f++) if (!(rho[f] > 0 && Number.isFinite(rho[f]))) throw new ModelError(`factor weight ${f} must be a positive number, got ${rho[f]}`);
    this.weights.set(rho);
    this.fg.arena.f64(this.weightPtr, this.weights.length).set(rho);
    this.engine.call('bp refresh', (k) => k.bpRefresh(st));
  }

  /**
   * Messages pushed off uniform: each factor's message to a variable favours one state, the same
   * state for every message (a deterministic nudge of `size` nats towards state `state`); beliefs follow.
   */
  nudge(state: number, size: number): void {
    const st = this.live();
    const m = this.fg.arena.f64(this.fac2varPtr, this.msgStart[this.msgStart.length - 1]);
    const { scopeStart, scopeVars, card } = this.model;
    for (let p = 0; p < scopeStart[this.model.nFactors]; p++) {
      const K = card[scopeVars[p]];
      if (state < K) m[this.msgStart[p] + state] += size;
    }
    this.engine.call('bp refresh', (k) => k.bpRefresh(st));
  }

  /** Runs `fn` with the factor → variable messages replaced by `values` (laid out as messages()), then puts them back. */
  withMessages<T>(values: Float64Array, fn: () => T): T {
    this.live();
    const n = this.msgStart[this.msgStart.length - 1], saved = this.messages();
    this.fg.arena.f64(this.fac2varPtr, n).set(values);
    try {
      return fn();
    } finally {
      this.fg.arena.f64(this.fac2varPtr, n).set(saved);
    }
  }

  /** Uniform messages. */
  reset(): void {
    const st = this.live();
    this.engine.call('bp reset', (k) => k.bpReset(st));
  }

  /** Iterates from the current messages (in chunks, so a signal can stop it). */
  run(c: BPConfig, signal?: AbortSignal): BPRunInfo {
    const st = this.live();
    const sched = BP_SCHEDULES.indexOf(c.schedule);
    let iterations = 0, converged = false, maxResidual = Infinity;
    const chunk = signal ? 10 : c.maxIterations;
    while (iterations < c.maxIterations && !converged) {
      if (signal?.aborted) break;
      const step = () => this.engine.call('bp run', (k) => k.bpRun(st, Math.min(chunk, c.maxIterations - iterations), c.tolerance, sched, c.damping, this.out));
      let it = step();
      if (it === -2) {
        // The general loop's buffers, on its first run (nothing was changed).
        this.allocateGeneral(c.schedule === 'residual');
        it = step();
      }
      if (it < 0) {
        // Arc consistency never empties a message of a model with a configuration of positive
        // probability: with one known, the messages' log-ratios diverged past the double range
        // (2bitcomp_5.cnf undamped: 1e178 nats by iteration 400), which said "no configuration".
        if (knownPositive(this.engine, this.model)) throw new EngineError(`belief propagation diverged: its messages' log-ratios left the double range within ${iterations + Math.min(chunk, c.maxIterations - iterations)} iterations and emptied a message, although the model has configurations of positive probability; try damping (damping 0.5, --damping 0.5)${c.schedule === 'residual' ? '' : ' or the residual schedule'}`);
        throw new EngineError('belief propagation: every state of some message got zero weight (the model, or its Bethe approximation, has no configuration of positive probability)');
      }
      iterations += it;
      const o = this.fg.arena.f64(this.out, 2);
      converged = o[0] === 1;
      maxResidual = o[1];
    }
    return { iterations, converged, maxResidual };
  }

  /** Allocates newMsg and, for the residual schedule, its heap, if not yet there (the state gets their addresses). */
  private allocateGeneral(residual: boolean): void {
    const a = this.fg.arena, F = this.model.nFactors, st = this.state, M = this.msgStart[this.msgStart.length - 1];
    this.engine.ensureFits((this.newMsgPtr ? 0 : 8 * M + 16) + (residual && !this.heapPtr ? 16 * F + 48 : 0), `belief propagation's ${residual ? 'residual schedule' : 'message updates'} on ${this.model.n} variables`);
    if (!this.newMsgPtr) {
      const p = (this.newMsgPtr = a.alloc(8 * M));
      this.engine.call('bp run', (k) => k.bpSetNewMsg(st, p));
    }
    if (residual && !this.heapPtr) {
      const prio = a.alloc(8 * F), heap = a.alloc(4 * F), heapPos = a.alloc(4 * F);
      this.heapPtr = heap;
      this.engine.call('bp run', (k) => k.bpSetResidual(st, prio, heap, heapPos));
    }
  }

  /** The factor → variable log-messages (each shifted to max 0), laid out by msgStart. */
  messages(): Float64Array {
    this.live();
    return this.fg.arena.readF64(this.fac2varPtr, this.msgStart[this.msgStart.length - 1]);
  }

  /** Node marginals (normalised beliefs). */
  marginals(): Float64Array[] {
    const st = this.live();
    this.engine.call('bp marginals', (k) => k.bpMarginals(st, this.belPtr));
    const all = this.fg.arena.readF64(this.belPtr, this.belStart[this.model.n]);
    // Views of the one copy (a buffer per variable weighed ≈ 200 MB on a 10⁶-site lattice).
    return Array.from({ length: this.model.n }, (_, v) => all.subarray(this.belStart[v], this.belStart[v + 1]));
  }

  /** Factor beliefs b_f(x), each in its factor's table layout (last scope variable fastest). */
  factorBeliefs(): Float64Array[] {
    const st = this.live();
    if (!this.factorOut) {
      const a = this.fg.arena;
      this.engine.ensureFits(8 * this.factorOffsets[this.model.nFactors] + 4 * this.factorOffsets.length + 32, `factor beliefs of ${this.model.nFactors} factors`);
      this.offsetsPtr = a.allocI32(this.factorOffsets);
      this.factorOut = a.alloc(8 * this.factorOffsets[this.model.nFactors]);
    }
    this.engine.call('bp factor beliefs', (k) => k.bpFactorBeliefs(st, this.offsetsPtr, this.factorOut));
    const all = this.fg.arena.readF64(this.factorOut, this.factorOffsets[this.model.nFactors]);
    return Array.from({ length: this.model.nFactors }, (_, f) => all.subarray(this.factorOffsets[f], this.factorOffsets[f + 1]));
  }

  /**
   * The weighted free energy at the current beliefs, for the model as the user built it:
   * logConst + Σ_f (E_{b_f}[θ_f] + ρ_f H(b_f)) + Σ_v (1 − Σ_{f ∋ v} ρ_f) H(b_v). With ρ ≡ 1, the Bethe log Z.
   * Also the entropies it used.
   */
  freeEnergy(): { logZ: number; factorEntropy: Float64Array; nodeEntropy: Float64Array } {
    const st = this.live();
    const energy = this.engine.call('bp entropies', (k) => k.bpEntropies(st, this.entF, this.entV));
    const hf = this.fg.arena.readF64(this.entF, this.model.nFactors), hv = this.fg.arena.readF64(this.entV, this.model.n);
    const { scopeStart, scopeVars } = this.model;
    const c = new Float64Array(this.model.n);
    let logZ = this.model.logConst + energy;
    for (let f = 0; f < this.model.nFactors; f++) {
      logZ += this.weights[f] * hf[f];
      for (let p = scopeStart[f]; p < scopeStart[f + 1]; p++) c[scopeVars[p]] += this.weights[f];
    }
    for (let v = 0; v < this.model.n; v++) logZ += (1 - c[v]) * hv[v];
    return { logZ, factorEntropy: hf, nodeEntropy: hv };
  }

  /** Frees the solver's engine memory. */
  dispose(): void {
    this.fg.dispose();
  }
}

/** Loopy BP: node marginals and the Bethe estimate of log Z. */
export function runBP(engine: Engine, model: Model, opts: BPOptions = {}): InferenceResult {
  checkOptionKeys(opts, BP_OPTION_KEYS);
  const c = bpConfig(opts);
  refuseZeroModel(model, 'bp', engine);
  const t0 = performance.now();
  const solver = new BPSolver(engine, model);
  try {
    const r = solver.run(c, opts.signal);
    const marginals = solver.marginals();
    const { logZ } = solver.freeEnergy();
    const broken = r.converged && !opts.signal?.aborted ? symmetryBroken(solver, model, c, logZ) : null;
    return {
      method: 'bp',
      logZ,
      logZStdErr: null,
      logZKind: 'estimate',
      marginals,
      marginalStdErr: null,
      diagnostics: {
        approximation: 'Bethe',
        iterations: r.iterations,
        converged: r.converged,
        maxResidual: Number.isFinite(r.maxResidual) ? r.maxResidual : null,
        schedule: c.schedule,
        damping: c.damping,
        maxIterations: c.maxIterations,
        tolerance: c.tolerance,
        ...(broken ? { symmetryBrokenLogZ: broken.logZ } : {}),
      },
      seconds: (performance.now() - t0) / 1000,
      partial: opts.signal?.aborted === true,
      warnings: r.converged || opts.signal?.aborted ? (broken ? [broken.warning] : []) : [notConverged('BP', r, c, 'the marginals and the Bethe estimate are those of the last iteration')],
    };
  } finally {
    solver.dispose();
  }
}

/**
 * On a model unchanged by permuting every variable's states together (zero field), uniform messages
 * are a fixed point that BP may never leave, however unstable: zero-field Ising 10×10 at β = 1 said
 * log Z 147.4 after one iteration, "converged", against an exact 180.9 (mean field's lower bound
 * 180.2). BP runs again from messages nudged towards one state; when that reaches a fixed point of
 * higher Bethe log Z, the symmetric one is not the Bethe free energy's minimum: its log Z is reported
 * beside (`symmetryBrokenLogZ`) with a warning. The marginals stay the symmetric ones (exact by symmetry).
 */
function symmetryBroken(solver: BPSolver, model: Model, c: BPConfig, logZ: number): { logZ: number; warning: string } | null {
  const K = stateSymmetry(model);
  // Where BP provably has one fixed point, the nudged run would only come back to it (10⁶ sites at
  // β = 0.3: 7 of its 10 s).
  if (K === 0 || uniqueFixedPoint(model)) return null;
  solver.nudge(0, 1);
  let r = solver.run(c);
  // Parallel updates from the nudge oscillate on antiferromagnets (a 10×10 grid at β = 1, J = −1:
  // residual 51.6 after 1000 iterations), and the check gave up silently at 147.4 against 180.9;
  // sequential updates reach the other fixed point.
  if (!r.converged && c.schedule === 'parallel') {
    solver.nudge(0, 1);
    r = solver.run({ ...c, schedule: 'sequential' });
  }
  const other = solver.freeEnergy().logZ;
  if (!r.converged || !(other > logZ + 1e-9 * Math.max(1, Math.abs(logZ)))) return null;
  return {
    logZ: other,
    warning: `BP converged to the symmetric fixed point (every marginal 1/${K}, as the model's symmetry makes them), but from messages nudged towards one state it reaches a fixed point of higher Bethe log Z, ${other} against ${logZ}: the symmetric one is not the Bethe free energy's minimum and its log Z is far too low; the other's (diagnostics.symmetryBrokenLogZ) counts one of the model's ${K} mirror-image modes — add ln ${K} for all of them — and its marginals are that mode's`,
  };
}

/** Cardinalities past which uniqueFixedPoint does not look (a table costs K⁴). */
const UNIQUENESS_MAX_CARD = 16;

/**
 * Mooij & Kappen (2007), "Sufficient conditions for convergence of the sum–product algorithm": BP
 * on a pairwise model has one fixed point, reached from any messages, when for every directed edge
 * i → j, Σ_{k ∈ ∂i∖j} N(ψ_ki) < 1, where N(ψ) = sup over a ≠ a', b ≠ b' of
 * tanh(¼ log ψ(a,b)ψ(a',b') / (ψ(a',b)ψ(a,b'))) (tanh |J| for an Ising bond; on a degree-4 lattice
 * the condition is β < atanh(1/3), the Bethe critical point). Factors on one pair count separately:
 * the cross ratio adds and tanh is subadditive, so that sum bounds the pair's N. false for factors
 * of arity > 2, cardinalities past UNIQUENESS_MAX_CARD, and zeros (N = 1).
 */
export function uniqueFixedPoint(model: Model): boolean {
  const { scopeStart, scopeVars, tableStart, tables, card } = model;
  const strength = new Float64Array(model.nFactors), load = new Float64Array(model.n);
  const byTable = new Map<number, number>(); // a uniform lattice's bonds share one table
  for (let f = 0; f < model.nFactors; f++) {
    const arity = scopeStart[f + 1] - scopeStart[f];
    if (arity > 2) return false;
    if (arity < 2) continue;
    const i = scopeVars[scopeStart[f]], j = scopeVars[scopeStart[f] + 1], Ki = card[i], Kj = card[j];
    if (Ki > UNIQUENESS_MAX_CARD || Kj > UNIQUENESS_MAX_CARD) return false;
    const t0 = tableStart[f], key = (t0 * (UNIQUENESS_MAX_CARD + 1) + Ki) * (UNIQUENESS_MAX_CARD + 1) + Kj;
    let N = byTable.get(key);
    if (N === undefined) {
      let worst = 0;
      for (let a = 0; a < Ki; a++) {
        for (let a2 = a + 1; a2 < Ki; a2++) {
          for (let b = 0; b < Kj; b++) {
            for (let b2 = b + 1; b2 < Kj; b2++) {
              // Both orders of (b, b') at once: the cross ratio and its inverse.
              const x = tables[t0 + a * Kj + b] + tables[t0 + a2 * Kj + b2] - tables[t0 + a2 * Kj + b] - tables[t0 + a * Kj + b2];
              worst = Math.max(worst, Number.isNaN(x) ? Infinity : Math.abs(x));
            }
          }
        }
      }
      byTable.set(key, (N = Math.tanh(worst / 4)));
    }
    strength[f] = N;
    load[i] += N;
    load[j] += N;
  }
  for (let f = 0; f < model.nFactors; f++) {
    if (scopeStart[f + 1] - scopeStart[f] !== 2) continue;
    const i = scopeVars[scopeStart[f]], j = scopeVars[scopeStart[f] + 1];
    if (!(load[i] - strength[f] < 1 && load[j] - strength[f] < 1)) return false;
  }
  return true;
}

/** The warning of a BP or TRW run stopped at maxIterations (a loopy model can oscillate for ever, silently before). */
export function notConverged(what: string, r: { iterations: number; maxResidual: number }, c: BPConfig, consequence: string): string {
  const residual = Number.isFinite(r.maxResidual) ? r.maxResidual.toPrecision(3) : '∞';
  return `${what} did not converge in ${r.iterations} iterations (largest message change ${residual} > ${c.tolerance}): ${consequence}; try damping (--damping 0.5), the residual schedule or more iterations`;
}
