/**
 * The import graph of contracts/ (type-only imports and `export … from` included, as TypeScript reads them).
 * One circle is known: input-schemas.ts infers the wire types that the domain modules re-export and use, and
 * imports their constants and carry types back. It may shrink, never grow, and no other circle may form: a
 * change that adds a member or a second circle fails here. Breaking it (issue 44, item 5) moves the sub-schemas
 * the domain types need (the transcript reference, sandbox, MCP filter, model settings) and the constants the
 * schemas check against into leaf modules under input-schemas.ts, as workspace.ts already is; then the list
 * below is empty.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import * as ts from 'typescript';

const ROOT = join(__dirname, '..', '..', '..', '..');

/** The circle through input-schemas.ts as it stands: only ever made smaller. */
const KNOWN_CIRCLE = [
  'contracts/batch.ts',
  'contracts/config/value-types.ts',
  'contracts/input-schemas.ts',
  'contracts/lead.ts',
  'contracts/loop-carry.ts',
  'contracts/mcp.ts',
  'contracts/model.ts',
  'contracts/run-skills.ts',
  'contracts/subagent-providers.ts',
  'contracts/tool-search.ts',
  'contracts/tools.ts',
  'contracts/transcript.ts',
];

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** File → the files of `dir` it imports (relative imports resolved as TypeScript does: `x.ts`, `x/index.ts`). */
function importGraph(dir: string): Map<string, string[]> {
  const files = new Set(sourceFiles(dir));
  const isFile = (path: string) => files.has(path) && statSync(join(ROOT, path)).isFile();
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, false);
    const targets = importedFiles
      .map(({ fileName }) => fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => relative(ROOT, join(ROOT, dirname(file), name)))
      .flatMap((base) => [`${base}.ts`, `${base}/index.ts`].filter(isFile).slice(0, 1));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The strongly connected parts of more than one file (Tarjan), each sorted. */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const part: string[] = [];
    for (let member = stack.pop()!; ; member = stack.pop()!) {
      onStack.delete(member);
      part.push(member);
      if (member === node) break;
    }
    if (part.length > 1) found.push(part.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found.sort((a, b) => a[0].localeCompare(b[0]));
}

test('finds a circle of any length, and none in a graph that only goes down', () => {
  const graph = (edges: Record<string, string[]>) => new Map(Object.entries(edges));
  expect(circles(graph({ a: ['b'], b: ['c'], c: ['a', 'd'], d: [], e: ['a'] }))).toEqual([['a', 'b', 'c']]);
  expect(circles(graph({ a: ['b', 'c'], b: ['c'], c: [] }))).toEqual([]);
  expect(circles(graph({ a: ['b'], b: ['a'], c: ['d'], d: ['c'] }))).toEqual([
    ['a', 'b'],
    ['c', 'd'],
  ]);
});

test('contracts/ holds no import circle but the known one through input-schemas.ts, and that one has not grown', () => {
  const found = circles(importGraph('contracts'));
  const known = found.filter((part) => part.includes('contracts/input-schemas.ts'));
  expect(found.filter((part) => !known.includes(part))).toEqual([]);
  // Grown: a new import closed the circle over another file. Shrunk: take the file off KNOWN_CIRCLE.
  expect(known.flat()).toEqual(KNOWN_CIRCLE);
});
