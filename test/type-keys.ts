// The property names of exported types as the TypeScript compiler resolves them, for tests that
// hold a list of option names to its options type (one program for several files: each costs seconds).
import ts from 'typescript';
import { fileURLToPath } from 'node:url';

/** A lookup of exported types' property names (sorted) in `files` (paths relative to test/). */
export function typeKeysIn(files: readonly string[]): (file: string, name: string) => string[] {
  const path = (f: string) => fileURLToPath(new URL(f, import.meta.url));
  const program = ts.createProgram(files.map(path), { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, allowImportingTsExtensions: true, noEmit: true });
  const checker = program.getTypeChecker();
  return (file, name) => {
    // Re-exported names (export * from …) too.
    const exported = checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(path(file))!)!).find((e) => e.name === name)!;
    const sym = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    return checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(sym)).map((p) => p.name).sort();
  };
}
