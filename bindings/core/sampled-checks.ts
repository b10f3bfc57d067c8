// Checks of a sampled result that see what its own standard errors cannot: chains that never
// crossed between a symmetric model's mirror-image modes (symmetry.ts), and states that read 0 ± 0
// although no factor rules them out, because zero potentials kept every chain away from the
// configurations that allow them. Applied wherever a sampled result is made: infer, the chains
// folded from workers, the queue client.
import type { Model } from './model.ts';
import type { InferenceResult } from './result.ts';
import { symmetryWarning } from './symmetry.ts';
import { arcConsistentStates } from './feasible.ts';

type Sampled = Pick<InferenceResult, 'marginals' | 'marginalStdErr' | 'warnings'> & { method?: string; diagnostics?: Record<string, unknown> };

/** The result with the warnings of the checks added (each once). */
export function withSampledChecks<R extends Sampled>(model: Model, result: R): R {
  const more = [symmetryWarning(model, result), confinedStatesWarning(model, result), rareStatesWarning(result)].filter((w): w is string => w !== null && !(result.warnings ?? []).includes(w));
  return more.length === 0 ? result : { ...result, warnings: [...(result.warnings ?? []), ...more] };
}

/**
 * The warning for states that read 0 with a standard error of 0 although arc consistency leaves
 * them, on variables that share a zero entry of a factor of several variables with others: single-
 * site moves cannot cross such zeros, so every chain can stay in a part of the configurations where
 * those states are impossible. A random 9-variable model with a pair factor allowing only (0,0),
 * (1,1), (2,1): Gibbs said 1.0000 ± 0.0000 against 0.9012, R̂ 1.04, silently, as all four chains
 * started in (0,0). Arc consistency does not see every impossible state (x3 = x0 through a chain of
 * "not equal" tables), so the warning says the reading may be right and how to tell. Elsewhere a 0
 * is an underflow (a field of 1000 nats), not a confinement. Tree-block Gibbs counting states
 * (raoBlackwell false) has its own warning for the states its chains never visited.
 */
export function confinedStatesWarning(model: Model, result: Sampled): string | null {
  const p = result.marginals, se = result.marginalStdErr;
  if (!p || !se || (result.method === 'treegibbs' && result.diagnostics?.raoBlackwell === false)) return null;
  const zeroRead = (v: number, k: number) => p[v][k] === 0 && se[v][k] === 0;
  if (!p.some((row, v) => row.some((_, k) => zeroRead(v, k)))) return null;
  // Only variables beside a zero of a factor of several variables; arc consistency (a JS pass over
  // every factor: 2 s on 10⁶ sites, where one observed site read 0 ± 0) only when one of them read 0 ± 0.
  const nearZero = new Uint8Array(model.n);
  let candidate = false;
  for (let f = 0; f < model.nFactors; f++) {
    if (model.arity(f) < 2 || !model.table(f).includes(-Infinity)) continue;
    for (const v of model.scope(f)) {
      nearZero[v] = 1;
      candidate ||= p[v].some((_, k) => zeroRead(v, k));
    }
  }
  if (!candidate) return null;
  const { states, variables, first } = zeroReadStates(model, p, se, nearZero);
  if (states === 0) return null;
  const s = states > 1;
  const [moves, remedy] =
    result.method === 'treegibbs' ? ['redrawing one block at a time', 'Parallel tempering (method pt) crosses such walls through its hot replicas']
    : result.method === 'pt' ? ["swapping through the hot replicas, when the swaps are rare,", 'More replicas or samples help']
    : ['moves of one variable at a time', 'Tree-block Gibbs (method treegibbs) redraws whole blocks at once'];
  return `${states} state${s ? 's' : ''} of ${variables} variable${variables > 1 ? 's' : ''} (the first x${first}) that no factor rules out on its own read${s ? '' : 's'} 0 with a standard error of 0: no sampled configuration gave ${s ? 'them' : 'it'} positive probability. Either ${s ? 'they are' : 'it is'} impossible through a chain of zeros, and the reading is right, or zero potentials kept every chain in a part of the configurations that ${moves} cannot leave, and the marginals and their standard errors are wrong; exact inference tells the two apart where it runs. ${remedy}`;
}

/**
 * The states that read 0 with a standard error of 0 although arc consistency (evidence included)
 * leaves them, on the variables `among` marks (all when null): how many, on how many variables, and
 * the first such variable (−1 when none). Runs arc consistency, a JS pass over the factors.
 */
export function zeroReadStates(model: Model, p: ArrayLike<number>[], se: ArrayLike<number>[] | null, among: Uint8Array | null): { states: number; variables: number; first: number } {
  const { start, alive } = arcConsistentStates(model);
  let states = 0, variables = 0, first = -1;
  for (let v = 0; v < model.n; v++) {
    if (among && !among[v]) continue;
    let here = 0;
    for (let k = 0; k < p[v].length; k++) if (p[v][k] === 0 && (se?.[v][k] ?? 0) === 0 && alive[start[v] + k]) here++;
    if (here > 0) (states += here), variables++, first < 0 && (first = v);
  }
  return { states, variables, first };
}

/**
 * The warning for states read below 3 / draws (draws: chains × samples per chain): a state that rare
 * rests on the few configurations that make it likely — the chains may have visited them a few times
 * or never — so it can read far too low with a standard error that cannot show it. Default Gibbs on
 * UAI ObjectDetection_11: 4 states past 4 SE, all below 3 / draws, silently; a 10×10 grid at β = 1,
 * h = 1: 9 such variables; tree-block Gibbs there: 2.7e-9 ± 3.5e-10 against 3.5e-7. States read
 * exactly 0 are the confined-states check's.
 */
export function rareStatesWarning(result: Sampled): string | null {
  const p = result.marginals, d = result.diagnostics;
  const chains = Number(d?.chains), perChain = Number(d?.samplesPerChain);
  if (!p || !result.marginalStdErr || !(chains > 0 && perChain > 0)) return null;
  const draws = chains * perChain, floor = 3 / draws;
  let states = 0, variables = 0, first = -1;
  for (let v = 0; v < p.length; v++) {
    let here = 0;
    for (const x of p[v]) if (x > 0 && x < floor) here++;
    if (here > 0) (states += here), variables++, first < 0 && (first = v);
  }
  if (states === 0) return null;
  const s = states > 1;
  return `${states} state${s ? 's' : ''} of ${variables} variable${variables > 1 ? 's' : ''} (the first x${first}) read below ${floor.toPrecision(2)} (3 / ${draws} draws): marginals this small rest on the few configurations that make them likely, which the chains may have visited a few times or never, so they can read far too low with standard errors that do not show it; more samples, or exact inference where it runs, tell`;
}
