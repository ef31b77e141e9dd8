/**
 * docs/patches.md and the workflow code agree: every patch id that workflows/ checks (`patched`) or retires
 * (`deprecatePatch`) has a row with that state, no row names an id the code no longer has, and every input flag
 * the page names is still in the input schemas. Read from the sources, so a patch added without its row fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

type State = 'active' | 'deprecated';

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The code without its comments (which name `patched()` in prose). */
function code(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

/**
 * Patch id → its state in the code. An id is a `*_PATCH` constant of the file that checks it; a check through a
 * lifecycle's `patch` field counts every constant handed to such a field.
 */
function patchesInCode(): { states: Map<string, State>; problems: string[] } {
  const states = new Map<string, State>();
  const problems: string[] = [];
  const note = (id: string, state: State, where: string) => {
    const before = states.get(id);
    if (before !== undefined && before !== state)
      problems.push(`${id} is both active and deprecated (${where})`);
    states.set(id, state);
  };
  const files = sourceFiles('workflows').map((path) => ({ path, text: code(read(path)) }));
  const fieldIds: string[] = [];
  for (const { path, text } of files) {
    const constants = new Map(
      [...text.matchAll(/\bconst ([A-Z][A-Z0-9_]*_PATCH) = '([^']+)'/g)].map((m) => [m[1], m[2]] as const),
    );
    for (const m of text.matchAll(/\bpatch: ([A-Z][A-Z0-9_]*_PATCH)\b/g)) {
      const id = constants.get(m[1]);
      if (id === undefined) problems.push(`${path}: ${m[1]} is not a constant of the file`);
      else fieldIds.push(id);
    }
    for (const m of text.matchAll(/\b(patched|deprecatePatch)\(([^)]*)\)/g)) {
      const state: State = m[1] === 'patched' ? 'active' : 'deprecated';
      const arg = m[2].trim();
      if (arg === 'life.slot.patch') continue;
      const id = constants.get(arg);
      if (id === undefined) problems.push(`${path}: ${m[0]} does not name a *_PATCH constant of the file`);
      else note(id, state, path);
    }
  }
  const lifecycle = files.find(({ path }) => path === 'workflows/run-lifecycle.ts');
  if (lifecycle?.text.includes('patched(life.slot.patch)')) {
    for (const id of fieldIds) note(id, 'active', 'workflows/run-lifecycle.ts');
  }
  return { states, problems };
}

/** The rows of one table of the page: first cell's `id` → second cell. */
function rows(section: string): Map<string, string> {
  return new Map([...section.matchAll(/^\| `([^`]+)` +\| ([a-z]+) +\|/gm)].map((m) => [m[1], m[2]] as const));
}

const page = read('docs/patches.md');
const [patchSection, flagSection] = page.split('## Input flags');

test('every patch id in workflows/ has a row in docs/patches.md with its state, and no row names one that is gone', () => {
  const { states, problems } = patchesInCode();
  expect(problems).toEqual([]);
  // The inventory is real: the code has many patches, some of them already deprecated.
  expect(states.size).toBeGreaterThanOrEqual(19);
  expect([...states.values()]).toContain('deprecated');
  expect(Object.fromEntries(rows(patchSection))).toEqual(Object.fromEntries(states));
});

test('every input flag docs/patches.md names is still in the input schemas and read by workflow code', () => {
  const flags = [...rows(flagSection ?? '').keys()];
  expect(flags).toEqual(expect.arrayContaining(['asks_slot', 'uncancelled_timers', 'honest_close']));
  const schemas = ['contracts/input-schemas.ts', 'contracts/batch.ts'].map(read).join('\n');
  const workflows = sourceFiles('workflows')
    .map((path) => code(read(path)))
    .join('\n');
  const gone = flags.filter(
    (flag) => !new RegExp(`\\b${flag}\\??:`).test(schemas) || !workflows.includes(`.${flag}`),
  );
  expect(gone).toEqual([]);
});
