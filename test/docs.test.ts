// The API reference (`npm run docs`, TypeDoc) is generated from doc comments; this test finds the
// exported symbols of the package's entries (bindings/index.ts, bindings/browser.ts) and their
// public members that have none. The files listed in DOCUMENTED must have no such symbol; for the
// rest the count and the first few names are reported as a diagnostic (documentation still owed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOCUMENTED = [
  'bindings/plot/',
  'bindings/core/',
  'bindings/learn/',
  'bindings/logz/',
  'bindings/relax/',
  'bindings/linalg/',
  'bindings/variational/',
  'bindings/samplers/',
  'bindings/io/',
  'bindings/parallel/',
  'bindings/infer.ts',
  'bindings/exact/',
  'bindings/queue/',
];

/** Exported symbols of `entries` (and their members) declared under `root` + 'bindings/' without a doc comment. */
function undocumented(entries = ['bindings/index.ts', 'bindings/browser.ts'].map((f) => ROOT + f), root = ROOT): { name: string; file: string }[] {
  const program = ts.createProgram(entries, { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, allowImportingTsExtensions: true, noEmit: true, skipLibCheck: true });
  const checker = program.getTypeChecker();
  const out = new Map<string, { name: string; file: string }>();
  const hasDoc = (s: ts.Symbol) => s.getDocumentationComment(checker).length > 0 || (s.declarations ?? []).some((d) => ts.getJSDocCommentsAndTags(d).length > 0);
  const fileOf = (s: ts.Symbol) => (s.declarations?.[0]?.getSourceFile().fileName ?? '').replace(root, '');
  const visit = (s: ts.Symbol, name: string, depth: number) => {
    const file = fileOf(s);
    if (!file.startsWith('bindings/')) return;
    const decl = s.declarations?.[0];
    if (decl && (ts.getCombinedModifierFlags(decl as ts.Declaration) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected))) return;
    if (name.split('.').pop()!.startsWith('_')) return;
    if (!hasDoc(s)) out.set(`${file}:${name}`, { name, file });
    if (depth > 0) return;
    // Members of interfaces, classes and object types declared by us (properties, methods, accessors).
    if (s.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.Class)) {
      const type = checker.getDeclaredTypeOfSymbol(s);
      for (const m of type.getProperties()) {
        if (fileOf(m) === file && !(m.flags & ts.SymbolFlags.Prototype)) visit(m, `${name}.${m.name}`, depth + 1);
      }
      if (s.flags & ts.SymbolFlags.Class) {
        const statics = checker.getTypeOfSymbolAtLocation(s, decl!);
        for (const m of statics.getProperties()) if (m.name !== 'prototype' && fileOf(m) === file) visit(m, `${name}.${m.name}`, depth + 1);
      }
    }
  };
  for (const entry of entries) {
    const mod = checker.getSymbolAtLocation(program.getSourceFile(entry)!)!;
    for (const e of checker.getExportsOfModule(mod)) {
      const s = e.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(e) : e;
      visit(s, e.name, 0);
    }
  }
  return [...out.values()];
}

test('every exported symbol of the documented files has a doc comment; the rest is counted', (t) => {
  const missing = undocumented();
  const inDocumented = missing.filter((m) => DOCUMENTED.some((d) => m.file.startsWith(d)));
  assert.deepEqual(inDocumented.map((m) => `${m.file}: ${m.name}`), []);
  const rest = missing.filter((m) => !inDocumented.includes(m));
  const byFile = new Map<string, number>();
  for (const m of rest) byFile.set(m.file, (byFile.get(m.file) ?? 0) + 1);
  t.diagnostic(`still without doc comments: ${rest.length} (${[...byFile].sort((a, b) => b[1] - a[1]).map(([f, n]) => `${f} ${n}`).join(', ')})`);
});

test('the check reports what lacks a doc comment and nothing else (power)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'relaxmrf-docs-')) + '/';
  mkdirSync(dir + 'bindings');
  writeFileSync(dir + 'bindings/index.ts', [
    '/** Documented. */',
    'export const a = 1;',
    'export const b = 2;',
    '/** Documented. */',
    'export interface C {',
    '  /** Documented. */',
    '  x: number;',
    '  y: number;',
    '}',
    'export class D {',
    '  /** Documented. */',
    '  m(): void {}',
    '  n(): void {}',
    '  private p(): void {}',
    '}',
  ].join('\n'));
  const found = undocumented([dir + 'bindings/index.ts'], dir).map((m) => m.name).sort();
  rmSync(dir, { recursive: true, force: true });
  assert.deepEqual(found, ['C.y', 'D', 'D.n', 'b']);
});
