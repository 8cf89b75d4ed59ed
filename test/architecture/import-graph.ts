// The static import graph of a source tree: every relative import, export-from and dynamic import,
// type-only ones included (a type import is a dependency of the design even when it is erased).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** File (relative to the root, `/`-separated) → the files it imports (relative to the root too). */
export type ImportGraph = Map<string, string[]>;

/** The graph of the TypeScript files under `dirs` of `root`; their imports may lead anywhere in `root`. */
export function importGraph(root: string, dirs: string[]): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const file of dirs.flatMap((dir) => sourceFiles(root, dir))) {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
    const targets = importedFiles
      .map(({ fileName }) => fileName)
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => resolveSpecifier(root, file, specifier));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

function sourceFiles(root: string, dir = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...sourceFiles(root, path));
    else if (/\.tsx?$/.test(entry.name) && !/\.d\.ts$/.test(entry.name)) out.push(path);
  }
  return out;
}

/** `./x.js` → `x.ts` (or `x/index.ts`), relative to the root; the specifier itself if no such file. */
function resolveSpecifier(root: string, from: string, specifier: string): string {
  const base = resolve(root, dirname(from), specifier);
  const stem = base.replace(/\.js$/, '');
  const found = [`${stem}.ts`, `${stem}.tsx`, join(stem, 'index.ts'), base].find((c) => existsSync(c));
  return relative(root, found ?? base).split('\\').join('/');
}

/** Every file reachable from `start` (itself excluded unless a cycle leads back), with one path to each. */
export function reachable(graph: ImportGraph, start: string): Map<string, string[]> {
  const paths = new Map<string, string[]>();
  const queue: string[][] = [[start]];
  while (queue.length > 0) {
    const path = queue.shift()!;
    for (const next of graph.get(path[path.length - 1]!) ?? []) {
      if (paths.has(next)) continue;
      const longer = [...path, next];
      paths.set(next, longer);
      queue.push(longer);
    }
  }
  return paths;
}

/** The strongly connected components of more than one file (Tarjan): the import cycles. */
export function cycles(graph: ImportGraph): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    indices.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!indices.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, indices.get(w)!));
      }
    }
    if (low.get(v) === indices.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) out.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!indices.has(v)) visit(v);
  return out;
}
