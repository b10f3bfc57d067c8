// Text formats: UAI MARKOV networks and evidence, libDAI factor graphs (.fg), and the UAI
// competition's result files (PR, MAR). Browser-safe: nothing here touches the file system
// (bindings/files.ts does, for Node).

import { FormatError, ModelError } from '../core/errors.ts';
import { LIMITS, Model, ModelBuilder } from '../core/model.ts';
import { Tokens } from './tokens.ts';
import { FAST_UAI_MIN_CHARS, readUAIFast } from './fast-uai.ts';

/** The samples of an evidence file in the older form (a count S, then S times n and n pairs) when it parses so; 0 otherwise. */
function samplesInOldForm(vals: number[]): number {
  let p = 1;
  for (let sample = 0; sample < vals[0]; sample++) {
    if (p >= vals.length) return 0;
    p += 1 + 2 * vals[p];
  }
  return p === vals.length ? vals[0] : 0;
}

/** A table size for messages: the number, or 2^x once past 2^53 (a 64-variable scope of 65536 states "needed Infinity entries"). */
function entriesText(cards: number[]): string {
  let size = 1, bits = 0;
  for (const k of cards) (size *= k), (bits += Math.log2(k));
  return size <= Number.MAX_SAFE_INTEGER ? String(size) : `2^${bits.toFixed(1)}`;
}

function listScope(vars: number[]): string {
  return vars.length > 10 ? `${vars.slice(0, 10).join(' ')} …` : vars.join(' ');
}

/**
 * Parses a UAI-format MARKOV or BAYES network (tables list the LAST scope variable fastest; a
 * BAYES network's factors are its conditional probability tables, the child last). Factors of any
 * arity; several factors on one scope are multiplied.
 */
export function readUAI(text: string, file = '<input>'): Model {
  // Large texts: numbers read in the engine (fast-uai.ts); null when it would not read the text as
  // Tokens does without a message, and Tokens reads it again, for the message.
  const fast = typeof text === 'string' && text.length >= FAST_UAI_MIN_CHARS ? readUAIFast(text) : null;
  return fast ?? parseUAI(new Tokens(text, file));
}

/** readUAI with the TypeScript tokenizer alone, whatever the text's size (tests compare the engine's reader with it). */
export function readUAIText(text: string, file = '<input>'): Model {
  return parseUAI(new Tokens(text, file));
}

/** readUAI's parse with the TypeScript tokenizer. */
function parseUAI(tok: Tokens): Model {
  const kind = tok.next()?.toUpperCase();
  if (kind !== 'MARKOV' && kind !== 'BAYES') {
    tok.fail(kind === undefined ? 'empty file: expected MARKOV or BAYES' : `network type '${tok.token}' is not supported: expected MARKOV or BAYES`);
  }

  const n = tok.int('the number of variables', 1, LIMITS.maxVariables);
  const card = new Int32Array(n);
  for (let v = 0; v < n; v++) card[v] = tok.cardinality(`variable ${v}`);

  const nFactors = tok.int('the number of factors', 0, LIMITS.maxFactors);
  const scopeStart = new Int32Array(nFactors + 1);
  const vars: number[] = [];
  for (let f = 0; f < nFactors; f++) {
    tok.factor = f;
    const arity = tok.int('the arity of a factor', 0, LIMITS.maxArity);
    const first = vars.length;
    let size = 1;
    for (let a = 0; a < arity; a++) {
      const v = tok.int('a variable index', 0, n - 1);
      for (let q = first; q < vars.length; q++) if (vars[q] === v) tok.fail(`variable ${v} appears twice in the scope`);
      vars.push(v);
      size *= card[v];
    }
    if (size > LIMITS.maxTableEntries) tok.fail(`scope (${listScope(vars.slice(first))}) needs ${entriesText(vars.slice(first).map((v) => card[v]))} table entries, past the limit of ${LIMITS.maxTableEntries}`);
    scopeStart[f + 1] = vars.length;
  }

  const b = new ModelBuilder(card);
  // One scratch scope per arity and one scratch table viewed at each size: the builder copies
  // what it is given, and allocating them per factor was most of the parsing time.
  const scopeOf: number[][] = [];
  let scratch = new Float64Array(16);
  const views = new Map<number, Float64Array>();
  for (let f = 0; f < nFactors; f++) {
    tok.factor = f;
    const a0 = scopeStart[f], arity = scopeStart[f + 1] - a0;
    const scope = (scopeOf[arity] ??= new Array<number>(arity));
    for (let k = 0; k < arity; k++) scope[k] = vars[a0 + k];
    let size = 1;
    for (let k = 0; k < scope.length; k++) size *= card[scope[k]];
    const count = tok.int('the number of table entries', 0);
    if (count !== size) tok.fail(`table has ${count} entries; scope (${listScope(scope)}) needs ${size}`);
    if (size > scratch.length) {
      scratch = new Float64Array(size);
      views.clear();
    }
    let t = views.get(size);
    if (t === undefined) views.set(size, (t = scratch.subarray(0, size)));
    for (let k = 0; k < size; k++) t[k] = tok.logEntry('table entry');
    if (scope.length === 0) b.addConstant(t[0]);
    else b.addFactor(scope, t);
  }
  tok.expectEnd('the last table');
  return b.build();
}

/**
 * Parses a UAI evidence file: the number of observed variables, then (variable, value) pairs.
 * Also accepts the older form with a leading sample count of 1 when only that form fits.
 * Indices are checked against a model by applyEvidence.
 */
export function readEvidence(text: string, file = '<evid>'): Map<number, number> {
  return readEvidenceWithLines(text, file).evidence;
}

/**
 * readEvidence, also returning the line each observed variable is given on (for applyEvidence's
 * messages). A variable given twice with the same value counts once; with two values it is refused.
 */
export function readEvidenceWithLines(text: string, file = '<evid>'): { evidence: Map<number, number>; lines: Map<number, number> } {
  const tok = new Tokens(text, file);
  const vals: number[] = [];
  const lines: number[] = [];
  while (!tok.done()) {
    vals.push(tok.int('an evidence entry', 0));
    lines.push(tok.line);
  }
  const evidence = new Map<number, number>();
  const lineOf = new Map<number, number>();
  if (vals.length === 0) return { evidence, lines: lineOf };
  let start: number;
  if (vals.length === 1 + 2 * vals[0]) start = 1;
  else if (vals[0] === 1 && vals.length === 2 + 2 * vals[1]) start = 2;
  else {
    if (samplesInOldForm(vals) > 1) throw new FormatError(file, null, `the file holds ${vals[0]} evidence samples (the older form's sample count, then each sample); only one sample is supported: keep one, as "1 n v₁ x₁ …" or "n v₁ x₁ …"`);
    throw new FormatError(file, null, `expected the number of observed variables followed by that many (variable, value) pairs; found ${vals.length} numbers starting with ${vals[0]}`);
  }
  for (let p = start; p < vals.length; p += 2) {
    const v = vals[p], x = vals[p + 1], seen = evidence.get(v);
    if (seen !== undefined && seen !== x) {
      throw new FormatError(file, `line ${lines[p]}`, `variable ${v} is observed twice, as ${seen} on line ${lineOf.get(v)} and as ${x} here`);
    }
    if (seen === undefined) {
      evidence.set(v, x);
      lineOf.set(v, lines[p]);
    }
  }
  return { evidence, lines: lineOf };
}

/**
 * Clamps observed variables: each one gets a unary factor that keeps its observed state and is
 * −Infinity elsewhere (so the evidence applies whatever the arity of its factors), and ordinary
 * inference on the result gives log Z with evidence and the conditional marginals (a point mass
 * for each observed variable, as UAI's MAR lists them). Exact enumeration holds observed variables
 * fixed, so every factor is in effect restricted to them. With `source` (the evidence file and
 * each variable's line), a variable or value out of range is a FormatError naming the file and
 * line; otherwise a ModelError.
 */
export function applyEvidence(model: Model, evidence: Map<number, number>, source?: { file: string; lines: Map<number, number> }): {
  /** The clamped model. */
  model: Model;
  /** The evidence that was applied (variable → state). */
  observed: Map<number, number>;
} {
  const observed = new Map<number, number>();
  const clamps: { v: number; logTable: Float64Array }[] = [];
  const fail = (v: number, detail: string): never => {
    if (source) throw new FormatError(source.file, source.lines.has(v) ? `line ${source.lines.get(v)}` : null, detail);
    throw new ModelError(detail);
  };
  if (!(evidence instanceof Map)) throw new ModelError('evidence must be a Map from variable to observed state');
  for (const [v, x] of evidence) {
    if (typeof v !== 'number' || typeof x !== 'number') fail(v, `evidence: ${JSON.stringify(v)} → ${JSON.stringify(x)} must map a variable number to a state number`);
    if (!Number.isInteger(v) || v < 0 || v >= model.n) fail(v, `evidence: variable ${v} is out of range 0…${model.n - 1}`);
    const K = model.card[v];
    if (!Number.isInteger(x) || x < 0 || x >= K) fail(v, `evidence: variable ${v} has ${K} state${K === 1 ? '' : 's'}; observed value ${x} is out of range 0…${K - 1}`);
    const t = new Float64Array(K).fill(-Infinity);
    t[x] = 0;
    clamps.push({ v, logTable: t });
    observed.set(v, x);
  }
  // A built Model is never modified: the clamps are new unary factors on a copy.
  return { model: clamps.length ? model.withUnaryFactors(clamps) : model, observed };
}

/** |log| of each empty-scope factor writeUAI emits, far enough from exp()'s overflow at ~709.8. */
const MAX_CONST_LOG = 700;

/**
 * Empty-scope factors writeUAI may emit for the constant (each e^±700), and copies of one wide table:
 * past this it refuses instead of writing for hours (10¹² nats: 1.4·10⁹ lines) or for ever (past
 * ≈ 10¹⁸, where c − 700 is c). A 10⁶-site lattice at β = 3.6 needs 10 276 of them.
 */
const MAX_CONST_FACTORS = 1_000_000;

/**
 * Writes a model as a UAI MARKOV network: one factor per factor of the model (any arity, scopes in
 * increasing order) and empty-scope factors for the constant. Each table is scaled so its largest
 * entry is 1 (the scale moves into the constant), so large log-potentials do not overflow. A table
 * whose finite log entries span more than MAX_CONST_LOG nats is written as k factors on the same
 * scope, each with 1/k of its log entries, so that none underflows to 0 (a learned coupling of 760
 * nats was written as "0 0 0 1", a model of probability zero on the training data). Numbers are
 * printed shortest-round-trip. Throws ModelError for a constant past MAX_CONST_FACTORS · 700 nats.
 */
export function writeUAI(model: Model): string {
  const { scopeStart, scopeVars, tableStart, tables: logTables } = model;
  const F = model.nFactors;
  // Scope lines and table lines written as bytes, each number printed once: a string per entry,
  // per table and per scope, joined, took 8 s for a 10⁶-site lattice, most of it collecting garbage.
  const scopes = new AsciiWriter(), tables = new AsciiWriter();
  let lines = 0;
  const newLine = (): void => {
    if (lines++ > 0) scopes.byte(10), tables.byte(10);
  };
  // A table several factors share is printed once, its line copied (shared: some factor's table at or below an earlier one's).
  let shared = false;
  for (let f = 1; f < F && !shared; f++) shared = tableStart[f] <= tableStart[f - 1];
  const printed = shared ? new Map<number, { from: number; to: number; pieces: number; m: number }>() : null;
  let c = model.logConst;
  for (let f = 0; f < F; f++) {
    const at = tableStart[f], size = model.tableSize(f), seen = printed?.get(at);
    let m = -Infinity, lo = Infinity, pieces = 1;
    if (seen) (m = seen.m), (pieces = seen.pieces);
    else {
      for (let e = at; e < at + size; e++) {
        const x = logTables[e];
        if (x > m) m = x;
        if (x > -Infinity && x < lo) lo = x;
      }
      if (m === -Infinity) m = 0; // all zeros: nothing to scale
      // Pieces: each scaled table's finite entries stay above e^−MAX_CONST_LOG (a normal double).
      pieces = lo < Infinity ? Math.max(1, Math.ceil((m - lo) / MAX_CONST_LOG)) : 1;
      if (pieces > MAX_CONST_FACTORS) throw new ModelError(`factor ${f}'s finite log-potentials span ${(m - lo).toPrecision(4)} nats: UAI's probability tables would need more than ${MAX_CONST_FACTORS} copies of it to keep its smallest entries from becoming 0`);
    }
    c += m;
    // The table's line: printed at its first factor, copied for its other pieces and factors.
    let from = seen?.from ?? -1, to = seen?.to ?? -1;
    for (let k = 0; k < pieces; k++) {
      newLine();
      const s0 = scopeStart[f], s1 = scopeStart[f + 1];
      scopes.int(s1 - s0);
      for (let q = s0; q < s1; q++) scopes.byte(32), scopes.int(scopeVars[q]);
      if (from >= 0) {
        tables.copy(from, to);
        continue;
      }
      from = tables.length;
      tables.int(size);
      tables.byte(10);
      for (let e = at; e < at + size; e++) {
        if (e > at) tables.byte(32);
        tables.str(String(Math.exp((logTables[e] - m) / pieces)));
      }
      tables.byte(10);
      to = tables.length;
      printed?.set(at, { from, to, pieces, m });
    }
  }

  const addConstant = (value: number): void => {
    newLine();
    scopes.byte(48);
    tables.str(`1\n${String(value)}\n`);
  };
  if (c === -Infinity) addConstant(0);
  else if (!Number.isFinite(c)) throw new ModelError(`constant log-potential ${c} cannot be written`);
  else {
    // The constant in MAX_CONST_LOG steps, at most MAX_CONST_FACTORS of them.
    if (Math.abs(c) > MAX_CONST_FACTORS * MAX_CONST_LOG) throw new ModelError(`the model's constant log-potential (its tables' largest entries summed) is ${c} nats: UAI's probability tables would need more than ${MAX_CONST_FACTORS} constant factors of e^±${MAX_CONST_LOG} to hold it`);
    for (; Math.abs(c) > MAX_CONST_LOG; c -= Math.sign(c) * MAX_CONST_LOG) addConstant(Math.exp(Math.sign(c) * MAX_CONST_LOG));
    if (c !== 0) addConstant(Math.exp(c));
  }
  const head = `MARKOV\n${model.n}\n${model.card.join(' ')}\n${lines}\n`;
  // Past 2^29 − 24 characters no JavaScript string holds it (V8): said so, not "Invalid string length".
  const length = head.length + scopes.length + 2 + tables.length;
  if (length > MAX_STRING) throw new ModelError(`the UAI text would have ${length} characters, past the ${MAX_STRING} a JavaScript string holds`);
  return `${head}${scopes.text()}\n\n${tables.text()}`;
}

/** The longest string V8 holds (characters). */
const MAX_STRING = 2 ** 29 - 24;

/** ASCII text in a growing byte buffer (writeUAI's), read back as one string. */
class AsciiWriter {
  private buf = new Uint8Array(1 << 16);
  length = 0;
  private room(k: number): void {
    if (this.length + k <= this.buf.length) return;
    const b = new Uint8Array(Math.max(2 * this.buf.length, this.length + k));
    b.set(this.buf.subarray(0, this.length));
    this.buf = b;
  }
  byte(c: number): void {
    if (this.length === this.buf.length) this.room(1);
    this.buf[this.length++] = c;
  }
  /** A non-negative integer's digits. */
  int(x: number): void {
    if (x < 10) return this.byte(48 + x);
    this.room(16);
    let digits = 1;
    for (let t = x; t >= 10; t = Math.floor(t / 10)) digits++;
    for (let p = this.length + digits - 1; p >= this.length; p--, x = Math.floor(x / 10)) this.buf[p] = 48 + (x % 10);
    this.length += digits;
  }
  /** An ASCII string's characters. */
  str(s: string): void {
    this.room(s.length);
    for (let i = 0; i < s.length; i++) this.buf[this.length + i] = s.charCodeAt(i);
    this.length += s.length;
  }
  /** A copy of bytes [from, to) at the end. */
  copy(from: number, to: number): void {
    this.room(to - from);
    this.buf.copyWithin(this.length, from, to);
    this.length += to - from;
  }
  text(): string {
    return new TextDecoder().decode(this.buf.subarray(0, this.length));
  }
}

/** A scope's table as a .fg file is read: the first factor's, later ones multiplied in (readFGWithLabels). */
interface ScopeTable {
  /** The labels in the first factor's order. */
  vars: number[];
  logTable: Float64Array;
  /** Per entry, how many of the later factors listed it (since the last settle). */
  count: Uint16Array | null;
  /** The later factors since the last settle. */
  since: number;
}

/** Zeroes the entries some later factor left out (ScopeTable). */
function settle(scope: ScopeTable): void {
  const { count, logTable, since } = scope;
  if (!count || since === 0) return;
  for (let k = 0; k < logTable.length; k++) if (count[k] !== since) logTable[k] = -Infinity;
  count.fill(0);
  scope.since = 0;
}

/** Maps an entry index over `vars` (first fastest, cardinalities `cards`) to its index over `first`, the same labels in another order; null when the orders agree. */
function reorder(vars: number[], cards: number[], first: number[]): ((k: number) => number) | null {
  if (vars.every((v, j) => v === first[j])) return null;
  const strideOf = new Map<number, number>();
  let s = 1;
  for (const label of first) {
    strideOf.set(label, s);
    s *= cards[vars.indexOf(label)];
  }
  const strides = vars.map((label) => strideOf.get(label)!);
  return (k) => {
    let k0 = 0;
    for (let j = 0; j < cards.length; j++) {
      const d = k % cards[j];
      k = (k - d) / cards[j];
      k0 += d * strides[j];
    }
    return k0;
  };
}

/** Parses a libDAI factor graph; see readFGWithLabels. */
export function readFG(text: string, file = '<input>'): Model {
  return readFGWithLabels(text, file).model;
}

/**
 * Parses a libDAI .fg factor graph (tables list the FIRST variable fastest, sparse "index value"
 * lines, unlisted entries 0). Variable labels are arbitrary non-negative integers: model variable
 * i is the i-th smallest label, and `labels[i]` is that label.
 */
export function readFGWithLabels(text: string, file = '<input>'): {
  /** The factor graph. */
  model: Model;
  /** The file's label of each model variable. */
  labels: number[];
} {
  const tok = new Tokens(text, file, true);
  const nFactors = tok.int('the number of factors', 0);
  const factors: { vars: number[]; logTable: Float64Array }[] = [];
  const cardOf = new Map<number, { card: number; factor: number }>();
  let total = 0;
  // Each scope's one table: factors on a scope read earlier, in any variable order, are multiplied
  // into it (the model would sum their logs anyway), so a file holds one dense table per scope, and
  // the size limit counts each scope once. A factor per order took a table each (ten sparse factors
  // on one 26-variable scope, each in an order of its own: a 1.3 kB file, 49 s and 6.9 GB), and
  // zeroing the entries a repeated factor leaves out took a pass over the table per factor.
  const byScope = new Map<string, ScopeTable>();
  // One flag array for every factor's listed entries, grown to the largest table (cleared after each).
  let flags = new Uint8Array(0);
  const listedOf = (size: number): Uint8Array => (flags.length >= size ? flags : (flags = new Uint8Array(size)));
  const indices: number[] = [];
  for (let f = 0; f < nFactors; f++) {
    tok.factor = f;
    const arity = tok.int('the number of variables of a factor', 0);
    if (arity > LIMITS.maxArity) tok.fail(`arity ${arity} is past the limit of ${LIMITS.maxArity}`);
    const vars: number[] = [];
    for (let a = 0; a < arity; a++) vars.push(tok.int('a variable label', 0));
    for (let q = 1; q < arity; q++) if (vars.indexOf(vars[q]) < q) tok.fail(`variable ${vars[q]} appears twice in the factor`);
    let size = 1;
    const cards: number[] = [];
    for (const label of vars) {
      const k = tok.cardinality(`variable ${label}`);
      const seen = cardOf.get(label);
      if (seen && seen.card !== k) tok.fail(`variable ${label} has cardinality ${k} here but ${seen.card} in factor ${seen.factor}`);
      if (!seen) cardOf.set(label, { card: k, factor: f });
      cards.push(k);
      size *= k;
    }
    if (size > LIMITS.maxTableEntries) tok.fail(`the factor needs ${entriesText(cards)} table entries, past the limit of ${LIMITS.maxTableEntries}`);
    // Before the tables are allocated: a 392-byte file of three sparse 2^26-entry factors took 4.2 GB.
    const key = vars.slice().sort((p, q) => p - q).join(' ');
    let scope = byScope.get(key);
    if (!scope) {
      total += size;
      if (total > LIMITS.maxTotalTableEntries) tok.fail(`the factors so far need ${total} table entries in all, past the limit of ${LIMITS.maxTotalTableEntries}`);
    }
    const nonzero = tok.int('the number of nonzero entries', 0, size);
    const later = scope !== undefined;
    if (!scope) {
      scope = { vars, logTable: new Float64Array(size).fill(-Infinity), count: null, since: 0 };
      byScope.set(key, scope);
      factors.push(scope);
    } else if (scope.count === null) scope.count = new Uint16Array(size);
    // The entry's index in the scope's first order (first variable fastest in both).
    const toFirst = later ? reorder(vars, cards, scope.vars) : null;
    const listed = listedOf(size), { logTable, count } = scope;
    indices.length = 0;
    for (let e = 0; e < nonzero; e++) {
      const k = tok.int('an entry index', 0, size - 1);
      if (listed[k]) tok.fail(`entry ${k} is listed twice`);
      listed[k] = 1;
      indices.push(k);
      const x = tok.logEntry('table entry');
      if (!later) logTable[k] = x;
      else {
        const k0 = toFirst ? toFirst(k) : k;
        logTable[k0] += x;
        count![k0]++;
      }
    }
    for (const k of indices) listed[k] = 0;
    // Unlisted entries are zeros of the product: an entry listed by fewer of the later factors than
    // there were is one. Counted, and settled at the end (or when the count would overflow).
    if (later && ++scope.since === 0xffff) settle(scope);
  }
  for (const scope of byScope.values()) settle(scope);
  tok.expectEnd('the last factor');
  if (cardOf.size === 0) throw new FormatError(file, null, 'the factor graph has no variables');

  const labels = [...cardOf.keys()].sort((p, q) => p - q);
  const index = new Map(labels.map((label, i) => [label, i]));
  const b = new ModelBuilder(labels.map((label) => cardOf.get(label)!.card));
  for (const { vars, logTable } of factors) {
    // First-fastest over (v0 … vk) is last-fastest over the reversed scope.
    if (vars.length === 0) b.addConstant(logTable[0]);
    else b.addFactor(vars.map((label) => index.get(label)!).reverse(), logTable);
  }
  return { model: b.build(), labels };
}

/** A UAI competition PR result: log10 of the partition function. */
export function writePR(logZ: number): string {
  return `PR\n${String(logZ / Math.LN10)}\n`;
}

/** A UAI competition MAP result: the number of variables, then each one's state, on one line. */
export function writeMAP(configuration: ArrayLike<number>): string {
  return `MAP\n${[String(configuration.length), ...Array.from(configuration, String)].join(' ')}\n`;
}

/** Reads a UAI MAP result file (writeMAP's format, `--map --out-format uai`): the configuration, a state per variable. */
export function readMAP(text: string, file = '<MAP>'): number[] {
  const tok = new Tokens(text, file);
  if (tok.next() !== 'MAP') tok.fail(`expected 'MAP'${tok.token ? `, found '${tok.token}'` : ''}`);
  const n = tok.int('the number of variables', 0);
  const states: number[] = [];
  for (let v = 0; v < n; v++) states.push(tok.int(`the state of variable ${v}`, 0));
  tok.expectEnd('the last state');
  return states;
}

/** Reads a PR result file; returns log10 Z as written. */
export function readPR(text: string, file = '<PR>'): number {
  const tok = new Tokens(text, file);
  if (tok.next() !== 'PR') tok.fail(`expected 'PR'${tok.token ? `, found '${tok.token}'` : ''}`);
  const log10Z = tok.number('log10 Z');
  tok.expectEnd('log10 Z');
  return log10Z;
}

/** A UAI competition MAR result: the number of variables, then each one's cardinality and marginal, on one line. */
export function writeMAR(marginals: Float64Array[] | number[][]): string {
  const rows = Array.from(marginals, (p: ArrayLike<number>) => `${p.length} ${Array.from(p, String).join(' ')}`);
  return `MAR\n${[String(marginals.length), ...rows].join(' ')}\n`;
}

/** Reads a MAR result file: one probability vector per variable. */
export function readMAR(text: string, file = '<MAR>'): number[][] {
  const tok = new Tokens(text, file);
  if (tok.next() !== 'MAR') tok.fail(`expected 'MAR'${tok.token ? `, found '${tok.token}'` : ''}`);
  const n = tok.int('the number of variables', 0);
  const marginals: number[][] = [];
  for (let v = 0; v < n; v++) {
    const K = tok.cardinality(`variable ${v}`);
    const p: number[] = [];
    for (let k = 0; k < K; k++) p.push(tok.entry('probability'));
    marginals.push(p);
  }
  tok.expectEnd('the last marginal');
  return marginals;
}
