// The simulator's modules import each other without cycles, type-only imports included: a cycle makes
// the load order decide which module sees the other's exports half-initialised, and a type-only one is
// a sign that a module names a class where it needs only a few of its methods (issue #37: context.ts
// named the classes of the handlers that take a SimContext; it now names interfaces).
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

type Graph = Map<string, string[]>;

/** Every .ts file under `root` (specs excepted) and the files of `root` it imports by relative path. */
function importGraph(root: string): Graph {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) files.push(full);
    }
  };
  walk(root);
  const known = new Set(files);
  const resolve = (from: string, specifier: string): string | undefined => {
    const base = path.resolve(path.dirname(from), specifier);
    return [`${base}.ts`, path.join(base, 'index.ts')].find((candidate) => known.has(candidate));
  };
  const graph: Graph = new Map();
  for (const file of files) {
    // preProcessFile lists `import type` and `export … from` too: a type-only cycle counts.
    const imported = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true).importedFiles.map((ref) => ref.fileName);
    const targets = imported.filter((name) => name.startsWith('.')).map((name) => resolve(file, name));
    graph.set(
      file,
      targets.filter((target): target is string => !!target),
    );
  }
  return graph;
}

/** One import path that leads from a file back to itself, for each cycle found (depth-first). */
function findCycles(graph: Graph): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return cycles;
}

describe('wa-sim import graph', () => {
  it('finds a cycle when there is one (the check can fail)', () => {
    const graph: Graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(findCycles(graph)).toEqual([['a', 'b', 'c', 'a']]);
  });

  it('has no import cycle in libs/wa-sim/src, type-only imports included', () => {
    const root = path.join(__dirname, '..', 'src');
    const graph = importGraph(root);
    expect(graph.size).toBeGreaterThan(30);
    const cycles = findCycles(graph).map((cycle) => cycle.map((file) => path.relative(root, file)).join(' → '));
    expect(cycles).toEqual([]);
  });
});
