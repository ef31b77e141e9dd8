import { existsSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { callTool, makeFixture, removeFixture, type Fixture } from './workspace-fixture';

let fx: Fixture;

beforeEach(async () => {
  fx = await makeFixture();
  await writeFile(path.join(fx.outside, 'secret.txt'), 'TOP-SECRET\n');
});

afterEach(async () => {
  await removeFixture(fx);
});

describe('ls', () => {
  it('lists entries sorted, marking directories and links, hidden ones included', async () => {
    await mkdir(path.join(fx.workspace, 'src'));
    await writeFile(path.join(fx.workspace, 'b.txt'), '');
    await writeFile(path.join(fx.workspace, '.env.example'), '');
    await symlink('b.txt', path.join(fx.workspace, 'a-link'));
    const result = await callTool(fx.workspace, 'ls', {});
    expect(result).toEqual({
      tool_call_id: 'call-1',
      name: 'ls',
      content: ['.env.example', 'a-link@', 'b.txt', 'src/'].join('\n'),
      is_error: false,
    });
  });

  it('lists a subdirectory, and says when it is empty', async () => {
    await mkdir(path.join(fx.workspace, 'empty'));
    expect((await callTool(fx.workspace, 'ls', { path: 'empty' })).content).toBe('(empty directory)');
  });

  it('accepts a call with no arguments at all', async () => {
    await writeFile(path.join(fx.workspace, 'x'), '');
    expect(await callTool(fx.workspace, 'ls', '')).toMatchObject({ content: 'x', is_error: false });
  });

  it('refuses to list outside the workspace', async () => {
    const result = await callTool(fx.workspace, 'ls', { path: '..' });
    expect(result.is_error).toBe(true);
    expect(result.content).toContain('outside the workspace');
    expect(result.content).not.toContain('outside/');
  });
});

describe('read_file', () => {
  beforeEach(async () => {
    await writeFile(path.join(fx.workspace, 'notes.md'), 'alpha\nbeta\ngamma\ndelta\n');
  });

  it('shows the file with line numbers', async () => {
    const result = await callTool(fx.workspace, 'read_file', { path: 'notes.md' });
    expect(result).toMatchObject({
      is_error: false,
      content: '     1\talpha\n     2\tbeta\n     3\tgamma\n     4\tdelta',
    });
  });

  it('shows a range and says where it sits in the file', async () => {
    const result = await callTool(fx.workspace, 'read_file', {
      path: 'notes.md',
      start_line: 2,
      end_line: 3,
    });
    expect(result.content).toBe('     2\tbeta\n     3\tgamma\n(lines 2–3 of 4)');
  });

  it('explains a start_line past the end', async () => {
    const result = await callTool(fx.workspace, 'read_file', { path: 'notes.md', start_line: 9 });
    expect(result).toMatchObject({
      is_error: true,
      content: 'start_line 9 is past the end of "notes.md", which has 4 lines',
    });
  });

  it('reports a missing file by name', async () => {
    const result = await callTool(fx.workspace, 'read_file', { path: 'nope.txt' });
    expect(result).toMatchObject({ is_error: true, content: '"nope.txt" does not exist in the workspace' });
  });

  it('accepts an absolute path inside the workspace', async () => {
    const result = await callTool(fx.workspace, 'read_file', { path: path.join(fx.workspace, 'notes.md') });
    expect(result.is_error).toBe(false);
    expect(result.content).toContain('alpha');
  });

  it('cuts long output and says how much it kept', async () => {
    await writeFile(path.join(fx.workspace, 'big.txt'), 'x'.repeat(5000));
    const result = await callTool(
      fx.workspace,
      'read_file',
      { path: 'big.txt' },
      { sandbox: { output_cap_chars: 100 } },
    );
    expect(result.is_error).toBe(false);
    expect(result.content).toContain('[… 4,9');
    expect(result.content).toContain(' characters omitted …]');
    expect(result.content.length).toBeLessThanOrEqual(100);
  });
});

describe('write_file', () => {
  it('creates a file with its missing parent folders', async () => {
    const result = await callTool(fx.workspace, 'write_file', { path: 'a/b/c.txt', content: 'one\ntwo\n' });
    expect(result).toMatchObject({ is_error: false, content: 'Created "a/b/c.txt" (8 chars, 2 lines).' });
    expect(await readFile(path.join(fx.workspace, 'a/b/c.txt'), 'utf8')).toBe('one\ntwo\n');
  });

  it('overwrites, and appends when asked', async () => {
    await callTool(fx.workspace, 'write_file', { path: 'log.txt', content: 'first\n' });
    expect(
      (await callTool(fx.workspace, 'write_file', { path: 'log.txt', content: 'second\n' })).content,
    ).toMatch(/^Overwrote/);
    await callTool(fx.workspace, 'write_file', { path: 'log.txt', content: 'third\n', append: true });
    expect(await readFile(path.join(fx.workspace, 'log.txt'), 'utf8')).toBe('second\nthird\n');
  });

  it('refuses to write over a directory', async () => {
    await mkdir(path.join(fx.workspace, 'dir'));
    const result = await callTool(fx.workspace, 'write_file', { path: 'dir', content: 'x' });
    expect(result).toMatchObject({
      is_error: true,
      content: '"dir" is a directory, not a file; list it with ls',
    });
  });
});

describe('str_replace', () => {
  const file = (): string => path.join(fx.workspace, 'app.ts');

  beforeEach(async () => {
    await writeFile(file(), 'const a = 1;\nconst b = 1;\nexport { a };\n');
  });

  it('replaces a unique occurrence', async () => {
    const result = await callTool(fx.workspace, 'str_replace', {
      path: 'app.ts',
      old_str: 'export { a };',
      new_str: 'export { a, b };',
    });
    expect(result).toMatchObject({ is_error: false, content: 'Replaced 1 occurrence in "app.ts" (line 3).' });
    expect(await readFile(file(), 'utf8')).toBe('const a = 1;\nconst b = 1;\nexport { a, b };\n');
  });

  it('refuses an ambiguous old_str, saying where it occurs, and leaves the file alone', async () => {
    const result = await callTool(fx.workspace, 'str_replace', {
      path: 'app.ts',
      old_str: ' = 1;',
      new_str: ' = 2;',
    });
    expect(result.is_error).toBe(true);
    expect(result.content).toContain('occurs 2 times in "app.ts" (lines 1, 2)');
    expect(result.content).toContain('replace_all');
    expect(await readFile(file(), 'utf8')).toBe('const a = 1;\nconst b = 1;\nexport { a };\n');
  });

  it('replaces every occurrence with replace_all, taking new_str literally', async () => {
    await callTool(fx.workspace, 'str_replace', {
      path: 'app.ts',
      old_str: ' = 1;',
      new_str: " = '$&';",
      replace_all: true,
    });
    expect(await readFile(file(), 'utf8')).toBe("const a = '$&';\nconst b = '$&';\nexport { a };\n");
  });

  it('says when old_str is not there', async () => {
    const result = await callTool(fx.workspace, 'str_replace', {
      path: 'app.ts',
      old_str: 'const c',
      new_str: '',
    });
    expect(result.is_error).toBe(true);
    expect(result.content).toContain('old_str was not found in "app.ts"');
  });
});

describe('workspace confinement', () => {
  const secretPath = (): string => path.join(fx.outside, 'secret.txt');

  async function expectRefused(name: string, args: object): Promise<void> {
    const result = await callTool(fx.workspace, name, args);
    expect(result.is_error).toBe(true);
    expect(result.content).toMatch(/outside the workspace|symbolic link/);
    expect(result.content).not.toContain('TOP-SECRET');
  }

  it('refuses ../ escapes for read and write', async () => {
    await expectRefused('read_file', { path: '../outside/secret.txt' });
    await expectRefused('write_file', { path: '../outside/planted.txt', content: 'x' });
    await expectRefused('str_replace', {
      path: 'sub/../../outside/secret.txt',
      old_str: 'TOP',
      new_str: 'x',
    });
    expect(existsSync(path.join(fx.outside, 'planted.txt'))).toBe(false);
    expect(await readFile(secretPath(), 'utf8')).toBe('TOP-SECRET\n');
  });

  it('refuses absolute paths outside the workspace for read and write', async () => {
    await expectRefused('read_file', { path: secretPath() });
    await expectRefused('write_file', { path: path.join(fx.outside, 'planted.txt'), content: 'x' });
    expect(existsSync(path.join(fx.outside, 'planted.txt'))).toBe(false);
  });

  it('refuses a symbolic link to a file outside, for read and write', async () => {
    await symlink(secretPath(), path.join(fx.workspace, 'innocent.txt'));
    await expectRefused('read_file', { path: 'innocent.txt' });
    await expectRefused('write_file', { path: 'innocent.txt', content: 'overwritten' });
    await expectRefused('str_replace', { path: 'innocent.txt', old_str: 'TOP', new_str: 'x' });
    expect(await readFile(secretPath(), 'utf8')).toBe('TOP-SECRET\n');
  });

  it('refuses a linked folder outside, including for files that do not exist yet', async () => {
    await symlink(fx.outside, path.join(fx.workspace, 'linked'));
    await expectRefused('read_file', { path: 'linked/secret.txt' });
    await expectRefused('ls', { path: 'linked' });
    await expectRefused('write_file', { path: 'linked/new/planted.txt', content: 'x' });
    expect(existsSync(path.join(fx.outside, 'new'))).toBe(false);
  });

  it('refuses a dangling link that a write would follow outside', async () => {
    await symlink(path.join(fx.outside, 'planted.txt'), path.join(fx.workspace, 'dangling'));
    await expectRefused('write_file', { path: 'dangling', content: 'x' });
    expect(existsSync(path.join(fx.outside, 'planted.txt'))).toBe(false);
  });

  it('allows a link that stays inside the workspace', async () => {
    await writeFile(path.join(fx.workspace, 'real.txt'), 'inside\n');
    await symlink('real.txt', path.join(fx.workspace, 'alias.txt'));
    expect(await callTool(fx.workspace, 'read_file', { path: 'alias.txt' })).toMatchObject({
      is_error: false,
      content: '     1\tinside',
    });
  });
});

describe('calls the model gets wrong', () => {
  it('answers arguments that are not JSON with what is accepted', async () => {
    const result = await callTool(fx.workspace, 'read_file', '{"path": notes.md}');
    expect(result.is_error).toBe(true);
    expect(result.content).toMatch(/^Invalid arguments for read_file: not valid JSON \(/);
    expect(result.content).toContain('path (string, required), start_line (integer, optional)');
  });

  it('names each argument that breaks the schema', async () => {
    const result = await callTool(fx.workspace, 'write_file', { file_path: 'a.txt', content: 3 });
    expect(result.is_error).toBe(true);
    expect(result.content).toContain('- path: missing (required, string)');
    expect(result.content).toContain('- content: Invalid input: expected string, received number');
    expect(result.content).toContain('Unrecognized key: "file_path"');
    expect(result.content).toContain('append (boolean, optional)');
  });

  it('rejects a JSON value that is not an object', async () => {
    const result = await callTool(fx.workspace, 'ls', '["."]');
    expect(result.is_error).toBe(true);
    expect(result.content).toContain('expected object, received array');
  });

  it('answers an unknown tool with the tools that exist', async () => {
    const result = await callTool(
      fx.workspace,
      'delete_file',
      { path: 'x' },
      { allowed_tools: ['ls', 'read_file'] },
    );
    expect(result).toEqual({
      tool_call_id: 'call-1',
      name: 'delete_file',
      content: 'Unknown tool "delete_file". Available tools: ls, read_file.',
      is_error: true,
    });
  });

  it('refuses a built-in tool this agent was not given, even when the model names it', async () => {
    const result = await callTool(
      fx.workspace,
      'write_file',
      { path: 'x.txt', content: 'x' },
      { allowed_tools: ['ls'] },
    );
    expect(result).toMatchObject({
      is_error: true,
      content: 'Tool "write_file" is not available to this agent. Available tools: ls.',
    });
    expect(existsSync(path.join(fx.workspace, 'x.txt'))).toBe(false);
  });
});

it('creates a workspace that does not exist yet', async () => {
  const fresh = path.join(fx.root, 'fresh', 'workspace');
  expect(await callTool(fresh, 'ls', {})).toMatchObject({ is_error: false, content: '(empty directory)' });
});
