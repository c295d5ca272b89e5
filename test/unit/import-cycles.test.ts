// The service's import graph, read from the sources with TypeScript's own pre-parser (every
// import, export ... from and import(), type-only ones included: a type cycle still ties two
// files together for the reader). Layers: bus/ below everything, the three processes beside
// each other above it, never reaching into ops/ or test/; no file imports itself back through
// any path; and no two folders beside each other (actors/face/, actors/models/) depend on each
// other.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '../..');
const SERVICE = ['bus', 'gateway', 'actors', 'storage'];

type Graph = Map<string, Set<string>>;

function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.split('/').includes('node_modules'))
    .map((file) => join(folder, file));
}

/** Each file's relative imports, as paths from the repository's root. */
function importGraph(files: readonly string[]): Graph {
  const graph: Graph = new Map();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true);
    const targets = importedFiles
      .map(({ fileName }) => fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => relative(ROOT, resolve(ROOT, dirname(file), name)));
    graph.set(file, new Set(targets));
  }
  return graph;
}

/** Strongly connected components of more than one node, or a node that reaches itself (Tarjan). */
function cycles(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (stack.includes(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)!.has(node)) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

const within = (folder: string, ancestor: string) => folder === ancestor || folder.startsWith(`${ancestor}/`);

/**
 * The graph of folders beside each other: a file's imports of files in a folder that neither
 * holds its own nor is held by it (a folder's main.ts composes its subfolders, which may use
 * what their parent keeps for all of them, as actors/session/ uses actors/supervisor.ts).
 */
function siblingFolderGraph(files: Graph): Graph {
  const folders: Graph = new Map();
  for (const [file, targets] of files) {
    const from = dirname(file);
    const edges = folders.get(from) ?? new Set<string>();
    folders.set(from, edges);
    for (const to of [...targets].map(dirname)) if (!within(from, to) && !within(to, from)) edges.add(to);
  }
  return folders;
}

const topFolder = (path: string) => path.split('/')[0]!;

const service = importGraph(SERVICE.flatMap(sourceFiles));

test('the cycle finder finds a loop of three files, a pair and a self-import, and passes a chain', () => {
  const graph: Graph = new Map([
    ['a.ts', new Set(['b.ts'])], ['b.ts', new Set(['c.ts'])], ['c.ts', new Set(['a.ts'])],
    ['d.ts', new Set(['e.ts'])], ['e.ts', new Set(['d.ts'])],
    ['f.ts', new Set(['f.ts'])],
    ['g.ts', new Set(['h.ts'])], ['h.ts', new Set(['a.ts'])],
  ]);
  assert.equal(cycles(graph).sort(), [['a.ts', 'b.ts', 'c.ts'], ['d.ts', 'e.ts'], ['f.ts']]);
  assert.equal(cycles(new Map([['x/a.ts', new Set(['y/b.ts'])], ['y/b.ts', new Set<string>()]])), []);
});

test('every import statement is read, type-only, multi-line and re-exports included', () => {
  const { importedFiles } = ts.preProcessFile(
    "import type {\n  A,\n} from './a.ts';\nexport { b } from './b.ts';\nimport './c.ts';\nconst d = await import('./d.ts');\n",
    true,
    true,
  );
  assert.equal(importedFiles.map(({ fileName }) => fileName), ['./a.ts', './b.ts', './c.ts', './d.ts']);
});

test('the service has sources in each folder and every relative import names a file that exists', () => {
  for (const folder of SERVICE) assert.ok([...service.keys()].some((file) => topFolder(file) === folder), folder);
  const missing = [...service].flatMap(([file, targets]) =>
    [...targets].filter((target) => SERVICE.includes(topFolder(target)) && !service.has(target)).map((target) => `${file} -> ${target}`),
  );
  assert.equal(missing, []);
});

test('no two files of the service import each other, directly or in a loop', () => {
  assert.equal(cycles(service), []);
});

test('no folder of the service imports a folder beside it that imports it back', () => {
  assert.equal(cycles(siblingFolderGraph(service)), []);
});

test('bus/ imports no process; a process imports no other process; none imports ops/ or test/', () => {
  const allowed: Record<string, string[]> = {
    bus: ['bus'],
    gateway: ['gateway', 'bus'],
    actors: ['actors', 'bus'],
    storage: ['storage', 'bus'],
  };
  const upward = [...service].flatMap(([file, targets]) =>
    [...targets].filter((target) => !allowed[topFolder(file)]!.includes(topFolder(target))).map((target) => `${file} -> ${target}`),
  );
  assert.equal(upward, []);
});

test.run();
