// Probability tables for single-site Gibbs (assembly/samplers/gibbs_table.ts): on a model whose
// blocks are all free bits, the conditional p(s_i = 1 | s_−i) of each site with at most
// TABLE_MAX_DEGREE neighbours for every neighbour pattern (sites of higher degree sum their fields
// as before), computed once with the kernels' own arithmetic, so the sweeps read p instead of
// summing the field and evaluating exp and a division.
// The chains are the same bit for bit either way; only the speed differs.
//
// `probabilityTable` option: 'auto' (default) builds the table when the model takes one, it fits
// TABLE_BUDGET_BYTES and the run is long enough to repay the build (TABLE_UPDATES_PER_ENTRY);
// 'on' whenever the model takes one (no budget or length rule; ModelError when it cannot); 'off'
// never.

import type { Engine } from '../core/engine.ts';
import type { BoundModel } from '../core/bound.ts';
import { ModelError } from '../core/errors.ts';

export const PROBABILITY_TABLES = ['auto', 'on', 'off'] as const;
/** See PROBABILITY_TABLES. */
export type TableMode = (typeof PROBABILITY_TABLES)[number];

export function checkTableMode(t: unknown): TableMode {
  if (!PROBABILITY_TABLES.includes(t as TableMode)) throw new ModelError(`probabilityTable must be one of ${PROBABILITY_TABLES.join(', ')}, got "${String(t)}"`);
  return t as TableMode;
}

/** The largest site degree a table takes (assembly/samplers/gibbs_table.ts: 2^8 entries a site). */
export const TABLE_MAX_DEGREE = 8;

/** The share of sites (degree ≤ TABLE_MAX_DEGREE) that must have a table for 'auto' to build one. */
export const TABLE_MIN_SHARE = 0.5;

/**
 * Table memory 'auto' allows at most: 2 MiB (131 072 entries of 16 bytes; sites with identical
 * rows share one). Each update reads one entry per chain at a random pattern, so the table must
 * stay in the core's L2 cache (2 MiB here): on random-coupling tori (bench, 4 chains / 2 chains,
 * M updates/s against 162 / 108 summing the fields) 256 KiB of tables gave 263 / 175, 1 MiB 256 /
 * 169, 2 MiB 218 / 127, 4 MiB 208 / 109, 8 MiB 201 / 102, and the 65 536-site random graph's
 * 34 MB 114 / 78 against 134 / 96. A uniform lattice needs one table of 16 entries.
 */
export const TABLE_BUDGET_BYTES = 2 * 2 ** 20;

/**
 * 'auto' builds the table when the run's site updates (all chains) are at least this many per
 * table entry, and at least TABLE_MIN_UPDATES_PER_SITE per site: filling an entry takes ≈ 7 ns and
 * planning ≈ 75 ns a site, while an update read from the table saves ≈ 2.5 ns.
 */
export const TABLE_UPDATES_PER_ENTRY = 8;
/** See TABLE_UPDATES_PER_ENTRY. */
export const TABLE_MIN_UPDATES_PER_SITE = 32;

/** A built table in a sampler's memory: site i's entries start at entry off[i] of `table`. */
export interface ProbabilityTable {
  readonly off: number;
  readonly table: number;
  /** Entries (16 bytes: p and its accept threshold) in the table, after sharing between identical sites. */
  readonly entries: number;
}

/** Extra WASM bytes a table's planning needs besides the table itself (site offsets, hash scratch). */
export function tablePlanBytes(nBits: number): number {
  return 4 * (nBits + 1) + 4 * hashCapacity(nBits) + 32;
}

/** Whether a sampler may build a table (and so needs tablePlanBytes): not 'off', the f64 sequential scan, and for 'auto' a long enough run. */
export function tableMayApply(mode: TableMode, tableScan: boolean, updates?: number): boolean {
  return mode !== 'off' && tableScan && !(mode === 'auto' && updates !== undefined && updates < TABLE_MIN_UPDATES_PER_SITE);
}

function hashCapacity(nBits: number): number {
  return 2 ** Math.ceil(Math.log2(2 * Math.max(1, nBits) + 1));
}

/**
 * The table for `bound` under `mode`, built in its arena, or null. `updates`: the site updates
 * (all chains, per site) the sampler is expected to run, for 'auto'; undefined: long enough.
 */
export function probabilityTable(engine: Engine, bound: BoundModel, mode: TableMode, updates?: number): ProbabilityTable | null {
  checkTableMode(mode);
  if (mode === 'off') return null;
  const form = bound.form;
  const refuse = (why: string) => {
    if (mode === 'on') throw new ModelError(`probabilityTable 'on': ${why}`);
    return null;
  };
  if (mode === 'auto' && updates !== undefined && updates < TABLE_MIN_UPDATES_PER_SITE) return null;
  if (form.oneHot.some((x) => x !== 0)) return refuse('the model has one-hot blocks (variables with more than two states, or binary ones with a zero potential or evidence); tables take free bits only');
  const nBits = form.nBits;
  const off = bound.arena.alloc(4 * (nBits + 1));
  const cap = hashCapacity(nBits);
  const scratch = engine.arena();
  let entries: number;
  try {
    const hash = scratch.alloc(4 * cap);
    const maxEntries = mode === 'on' ? 2 ** 31 - 512 : Math.min(TABLE_BUDGET_BYTES / 16, updates === undefined ? Infinity : Math.floor((updates * nBits) / TABLE_UPDATES_PER_ENTRY));
    entries = engine.call('gibbs table', (kk) => kk.gibbsTablePlan(bound.header, off, hash, cap, maxEntries));
  } finally {
    scratch.dispose();
  }
  // 'auto': more entries than the budget or the run allow.
  if (entries < 0) return refuse('the table would pass 2^31 entries');
  // Sites of degree > TABLE_MAX_DEGREE have no table (their fields are summed): 'auto' wants at
  // least TABLE_MIN_SHARE of the sites to have one.
  const tabled = bound.arena.i32(off, nBits + 1)[nBits];
  if (tabled === 0 || (mode === 'auto' && tabled < TABLE_MIN_SHARE * nBits)) return refuse(`every site has more than ${TABLE_MAX_DEGREE} neighbours`);
  const table = bound.arena.alloc(16 * Math.max(1, entries), false);
  engine.call('gibbs table', (kk) => kk.gibbsTableFill(bound.header, off, table));
  return { off, table, entries };
}
