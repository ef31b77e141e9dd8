/**
 * `glob` and `grep` on the workspace: DeerFlow's result lines, its skipped folders, RE2 for the model's patterns,
 * and the file tools' confinement (no path outside, no link followed out).
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { globToRegex } from '../../../../activities/tools/workspace-search';
import { TOOL_ACTIVITY_NAMES } from '../../../../contracts/tools';
import { callTool, makeFixture, removeFixture, type Fixture } from './workspace-fixture';

let fx: Fixture;
beforeEach(async () => {
  fx = await makeFixture();
  const files: Record<string, string> = {
    'README.md': '# Notes\nTemporal keeps the history.\n',
    'src/a.ts': 'export const answer = 42;\n// TODO: history\n',
    'src/deep/b.ts': 'const history = [];\n',
    'src/deep/c.py': 'print("HISTORY")\n',
    'node_modules/pkg/index.ts': 'history in a dependency\n',
    'bin.dat': 'history\0binary',
  };
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(fx.workspace, name)), { recursive: true });
    await writeFile(path.join(fx.workspace, name), content);
  }
  await writeFile(path.join(fx.outside, 'secret.ts'), 'history outside the workspace\n');
  await symlink(fx.outside, path.join(fx.workspace, 'escape'));
});
afterEach(() => removeFixture(fx));

const allowed = { allowed_tools: [...TOOL_ACTIVITY_NAMES] };

describe('glob', () => {
  it('finds files at any depth, sorted, skipping dependency folders and links', async () => {
    const result = await callTool(
      fx.workspace,
      'glob',
      { description: 'ts files', pattern: '**/*.ts' },
      allowed,
    );
    expect(result).toMatchObject({
      is_error: false,
      content: 'Found 2 paths under .\n1. src/a.ts\n2. src/deep/b.ts',
    });
  });

  it('matches a name pattern at any depth (as DeerFlow does), under a folder, with directories when asked', async () => {
    const names = await callTool(fx.workspace, 'glob', { pattern: '*.py', path: 'src' }, allowed);
    expect(names.content).toBe('Found 1 paths under src\n1. src/deep/c.py');
    const dirs = await callTool(
      fx.workspace,
      'glob',
      { pattern: 'deep', path: 'src', include_dirs: true },
      allowed,
    );
    expect(dirs.content).toBe('Found 1 paths under src\n1. src/deep');
  });

  it('says when it stopped at max_results', async () => {
    const result = await callTool(fx.workspace, 'glob', { pattern: '**/*', max_results: 2 }, allowed);
    expect(result.content).toBe(
      'Found 2 paths under . (showing first 2)\n1. README.md\n2. bin.dat\n' +
        'Results truncated. Narrow the path or pattern to see fewer matches.',
    );
  });

  it('refuses a path outside the workspace', async () => {
    const result = await callTool(fx.workspace, 'glob', { pattern: '*', path: '../outside' }, allowed);
    expect(result).toMatchObject({ is_error: true });
    expect(result.content).toContain('is outside the workspace');
  });

  it('turns globs into anchored RE2 patterns', () => {
    expect(globToRegex('**/*.ts')).toBe('^(?:.*/)?[^/]*\\.ts$');
    expect(globToRegex('src/{a,b}?.[!x]s')).toBe('^src/(?:a|b)[^/]\\.[^x]s$');
  });
});

describe('grep', () => {
  it('finds matching lines case-insensitively as path:line: text, skipping binaries, dependencies and links', async () => {
    const result = await callTool(fx.workspace, 'grep', { pattern: 'histor(y|ies)' }, allowed);
    expect(result.content).toBe(
      'Found 4 matches under .\n' +
        'README.md:2: Temporal keeps the history.\n' +
        'src/a.ts:2: // TODO: history\n' +
        'src/deep/b.ts:1: const history = [];\n' +
        'src/deep/c.py:1: print("HISTORY")',
    );
  });

  it('honours case_sensitive, literal, a glob filter and a single file', async () => {
    const exact = await callTool(fx.workspace, 'grep', { pattern: 'HISTORY', case_sensitive: true }, allowed);
    expect(exact.content).toBe('Found 1 matches under .\nsrc/deep/c.py:1: print("HISTORY")');
    const literal = await callTool(fx.workspace, 'grep', { pattern: '[];', literal: true }, allowed);
    expect(literal.content).toBe('Found 1 matches under .\nsrc/deep/b.ts:1: const history = [];');
    const filtered = await callTool(fx.workspace, 'grep', { pattern: 'history', glob: '**/*.md' }, allowed);
    expect(filtered.content).toBe('Found 1 matches under .\nREADME.md:2: Temporal keeps the history.');
    const file = await callTool(fx.workspace, 'grep', { pattern: 'answer', path: 'src/a.ts' }, allowed);
    expect(file.content).toBe('Found 1 matches under src/a.ts\nsrc/a.ts:1: export const answer = 42;');
  });

  it('refuses a pattern RE2 cannot run, naming the reason', async () => {
    const result = await callTool(fx.workspace, 'grep', { pattern: '(a)\\1' }, allowed);
    expect(result).toMatchObject({ is_error: true });
    expect(result.content).toContain('Invalid regex pattern');
    expect(result.content).toContain('no backreferences');
  });

  it('does not follow a link out of the workspace, even named directly', async () => {
    const named = await callTool(fx.workspace, 'grep', { pattern: 'history', path: 'escape' }, allowed);
    expect(named).toMatchObject({ is_error: true });
    expect(named.content).toContain('outside the workspace');
    expect(named.content).not.toContain('secret.ts');
  });
});
