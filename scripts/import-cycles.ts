// Lists import cycles between the files of assembly/ and bindings/ (type-only imports and re-exports
// count): `node --import tsx scripts/import-cycles.ts`; exit 1 if there is one.
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return f === '__tests__' ? [] : files(p);
    return p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : [];
  });
}

const graph = new Map<string, string[]>();
for (const top of ['assembly', 'bindings']) {
  for (const f of files(join(ROOT, top))) {
    const src = readFileSync(f, 'utf8');
    const deps: string[] = [];
    for (const m of src.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]/gms)) {
      let t = resolve(dirname(f), m[1]);
      if (!t.endsWith('.ts')) t += '.ts';
      if (existsSync(t)) deps.push(t);
    }
    graph.set(f, deps);
  }
}

// Tarjan's strongly connected components: every component of more than one file is a cycle.
let index = 0;
const idx = new Map<string, number>(), low = new Map<string, number>(), stack: string[] = [], onStack = new Set<string>();
const cycles: string[][] = [];
function visit(v: string): void {
  idx.set(v, index);
  low.set(v, index++);
  stack.push(v);
  onStack.add(v);
  for (const w of graph.get(v) ?? []) {
    if (!idx.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v)!, low.get(w)!));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
  }
  if (low.get(v) === idx.get(v)) {
    const comp: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      comp.push(relative(ROOT, w));
    } while (w !== v);
    if (comp.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(comp.sort());
  }
}
for (const v of graph.keys()) if (!idx.has(v)) visit(v);
for (const c of cycles) console.log(`cycle: ${c.join(' ↔ ')}`);
console.log(`${graph.size} files, ${cycles.length} import cycle(s)`);
process.exit(cycles.length ? 1 : 0);
