// Data sets as CSV: one sample a row, one variable a column, states as integers 0…K−1 (0/1 for
// binary models). An optional header is a first line none of whose fields is a number. Blank
// lines are skipped; every fault names the file and its line.

import { FormatError } from '../core/errors.ts';

/** A data set read from CSV: `rows` samples of `cols` integer states. */
export interface CSVData {
  /** Number of samples (data lines). */
  rows: number;
  /** Number of variables (fields a line). */
  cols: number;
  /** Row-major states. */
  values: Uint8Array;
  /** Column names from the header line; null when the file has none. */
  header: string[] | null;
}

/** Parses CSV text whose values must lie in 0…maxState (at most 255). */
export function readCSV(text: string, file = '<data>', maxState = 1): CSVData {
  const lines = text.split(/\r\n|\r|\n/); // CRLF, LF, and old Mac CR-only files
  let header: string[] | null = null, cols = -1;
  const out: number[] = [];
  let rows = 0;
  for (let ln = 0; ln < lines.length; ln++) {
    const line = lines[ln].trim();
    if (line === '') continue;
    const fields = line.split(',').map((f) => f.trim());
    // Tab- or semicolon-separated rows were one field each: the first taken as a header, then a puzzle.
    if (fields.length === 1 && /[\t;]/.test(line)) throw new FormatError(file, `line ${ln + 1}`, `no comma, but ${line.includes('\t') ? 'tabs' : 'semicolons'}: the values must be separated by commas`);
    if (cols < 0 && fields.every((f) => f !== '' && Number.isNaN(Number(f)))) {
      header = fields;
      cols = fields.length;
      continue;
    }
    if (cols < 0) cols = fields.length;
    if (fields.length !== cols) throw new FormatError(file, `line ${ln + 1}`, `${fields.length} values, expected ${cols} (the ${header ? 'header' : 'first row'} has ${cols})`);
    for (let c = 0; c < cols; c++) {
      const f = fields[c];
      // Number() also reads hex, octal and binary literals ("0x1"), which no data file means (the UAI reader refuses them too).
      const x = /^\s*[+-]?0[xob]/i.test(f) ? NaN : Number(f);
      // On the first row, a name beside numbers: it is no header, which must have no number among its fields.
      const hint = rows === 0 && !header && f !== '' ? ' (a header line must have no field that is a number)' : '';
      if (f === '' || !Number.isFinite(x)) throw new FormatError(file, `line ${ln + 1}`, `column ${c + 1}: "${f}" is not a number${hint}`);
      if (!Number.isInteger(x) || x < 0 || x > maxState) throw new FormatError(file, `line ${ln + 1}`, `column ${c + 1}: ${f} is not a state in 0…${maxState}`);
      out.push(x);
    }
    rows++;
  }
  if (rows === 0) throw new FormatError(file, null, header ? 'a header but no data rows' : 'empty: no data rows');
  return { rows, cols, values: Uint8Array.from(out), header };
}
