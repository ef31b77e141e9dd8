/**
 * After `tsc`: removes compiled files whose source is gone (a moved or deleted module), so a stale test or
 * module can never run from dist/. Only such files go: a build while tests or a worker run from dist/ (a test
 * that runs `npm start`) takes nothing from under them.
 */
import { existsSync, readdirSync, rmdirSync, unlinkSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const DIST = join(ROOT, 'dist');

/** The source a compiled file came from: `x.js` and `x.js.map` from `x.ts`, a copied `x.json` from itself. */
function sourceOf(compiled: string): string | undefined {
  const rel = relative(DIST, compiled);
  const match = /^(.*)\.js(\.map)?$/.exec(rel);
  if (match) return join(ROOT, `${match[1]}.ts`);
  if (rel.endsWith('.json')) return join(ROOT, rel);
  return undefined;
}

/** Prunes `dir`; whether it is empty afterwards. */
function prune(dir: string): boolean {
  let left = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (prune(path)) rmdirSync(path);
      else left += 1;
      continue;
    }
    const source = sourceOf(path);
    if (source !== undefined && !existsSync(source)) unlinkSync(path);
    else left += 1;
  }
  return left === 0;
}

if (existsSync(DIST)) prune(DIST);
