/**
 * The workflow modules a worker evaluates once and shares between all its workflows (worker/worker.ts,
 * PRELOADED_MODULES): the SDK deep-freezes what they export, and whatever state they keep at module level is
 * seen by every workflow. So they keep none (one pure cache, named here), export no zod schema (zod cannot use
 * a frozen one), and the input checks still work once everything is frozen as the worker freezes it.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { defaultConfig } from '../../../contracts/config';
import { buildLeadRunInput } from '../../../contracts/config/lead-input';
import { PRELOADED_MODULES, WORKFLOWS_PATH } from '../../../worker/worker';
import { moduleState } from '../../support/module-state';
import { subagentInput } from '../../support/subagent-input';

const distRoot = join(__dirname, '..', '..', '..');
const sourceRoot = join(distRoot, '..');

/** Module-level state the shared modules may keep, with why it is safe to share. */
const SHARED_STATE = [
  // the input schemas, built on first use: pure, the same for every workflow
  'contracts/inputs.ts: built',
];

/** The project's compiled modules the workflow bundle holds: the relative requires from the entry point. */
function bundledModules(): string[] {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const code = readFileSync(file, 'utf8');
    for (const [, request] of code.matchAll(/require\("(\.{1,2}\/[^"]+)"\)/g)) {
      visit(require.resolve(join(dirname(file), request)));
    }
  };
  visit(WORKFLOWS_PATH);
  return [...seen].sort();
}

/** A module by its path (the bundle's list is known at run time only; jest's registry, so isolateModules holds). */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- paths found at run time, in jest's registry
const load = (path: string): unknown => require(path) as unknown;

const sourceOf = (compiled: string): string => relative(distRoot, compiled).replace(/\.js$/, '.ts');

/** Paths to every zod schema reachable from a value's properties. */
function zodSchemas(value: unknown, path: string, seen = new Set<unknown>()): string[] {
  if (value === null || typeof value !== 'object' || seen.has(value)) return [];
  seen.add(value);
  if ('_zod' in value) return [path];
  return Object.entries(value).flatMap(([key, inner]) => zodSchemas(inner, `${path}.${key}`, seen));
}

/** What the SDK does to a shared module's exports: objects frozen all the way down, functions shallowly. */
function deepFreeze(value: unknown, seen = new Set<unknown>()): void {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function') || seen.has(value)) return;
  seen.add(value);
  if (typeof value === 'object') {
    for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key], seen);
  }
  Object.freeze(value);
}

describe('the workflow modules a worker shares', () => {
  const modules = bundledModules();

  it('are the whole workflow bundle, zod included', () => {
    expect(PRELOADED_MODULES).toEqual(['zod', WORKFLOWS_PATH]);
    expect(modules.map(sourceOf)).toEqual(
      expect.arrayContaining(['workflows/lead-run.ts', 'workflows/subagent.ts', 'contracts/inputs.ts']),
    );
  });

  it('keep no state at module level but the named pure cache', () => {
    expect(modules.map(sourceOf).flatMap((source) => moduleState(sourceRoot, source))).toEqual(SHARED_STATE);
  });

  it('export no zod schema', () => {
    const schemas = modules.flatMap((file) => zodSchemas(load(file), sourceOf(file)));
    expect(schemas).toEqual([]);
  });

  it('still check inputs once frozen as the worker freezes them', () => {
    const lead = buildLeadRunInput(defaultConfig(), { prompt: 'Do it.', workspace: '/srv/project' });
    const subagent = subagentInput({ scriptFile: '/srv/project/script.json', workspace: '/srv/project' });
    // zod keeps its settings on the global object, made by the first zod evaluated: a fresh one, as in a
    // worker's sandbox, where the globals are frozen once the shared modules are evaluated.
    const global = globalThis as { __zod_globalConfig?: object };
    const outer = global.__zod_globalConfig;
    global.__zod_globalConfig = undefined;
    try {
      jest.isolateModules(() => {
        const shared = [load('zod'), ...modules.map(load)];
        for (const exported of shared) deepFreeze(exported);
        deepFreeze(global.__zod_globalConfig);
        const inputs = load(
          join(distRoot, 'contracts', 'inputs.js'),
        ) as typeof import('../../../contracts/inputs');

        expect(inputs.leadRunInputProblems(lead)).toEqual([]);
        expect(inputs.subagentInputProblems(subagent)).toEqual([]);
        expect(inputs.leadRunInputProblems({ ...lead, max_turns: 0, tools: ['rm'] })).toEqual([
          'tools[0]: "rm" is not a known tool (bash, ls, read_file, write_file, str_replace, glob, grep, web_search, web_fetch, image_search, task, ask_clarification)',
          'max_turns: 0 is out of range (1 or more)',
        ]);
      });
    } finally {
      global.__zod_globalConfig = outer;
    }
  });
});
