// A model's range check, apart from model.ts (which it would push past its size): whether some
// configuration's log-potential could leave the double range.
import { ModelError } from './errors.ts';

/** What the check reads of a model (model.ts's Model; named here so the two files do not import each other). */
interface FactorTables {
  readonly logConst: number;
  readonly nFactors: number;
  readonly tableStart: ArrayLike<number>;
  readonly tables: ArrayLike<number>;
  tableSize(f: number): number;
}

/**
 * The model, after checking that no configuration's log-potential can pass the double range: the
 * constant plus every factor's largest entry stays finite. Finite factors of 1e308 on one variable's
 * two scopes summed to +∞: enumeration and bucket elimination answered Z = 0, the junction tree NaN.
 */
export function withSumInRange<M extends FactorTables>(m: M): M {
  let top = m.logConst === -Infinity ? 0 : m.logConst;
  for (let f = 0; f < m.nFactors; f++) {
    let max = -Infinity;
    const t0 = m.tableStart[f], t1 = t0 + m.tableSize(f);
    for (let e = t0; e < t1; e++) if (m.tables[e] > max) max = m.tables[e];
    if (max > 0) top += max;
  }
  if (top === Infinity) throw new ModelError('the factors\' largest log-potentials sum past the double range (+Infinity): rescale them');
  return m;
}
