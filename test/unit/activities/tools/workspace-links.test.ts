import { execFileSync, spawn } from 'node:child_process';
import { mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { lookups } from '../../../../activities/tools/workspace';
import { callTool, makeFixture, removeFixture, type Fixture } from './workspace-fixture';

let fx: Fixture;

beforeEach(async () => {
  fx = await makeFixture();
  await writeFile(path.join(fx.outside, 'secret.txt'), 'TOP-SECRET\n');
});

afterEach(async () => {
  await removeFixture(fx);
});

describe.each([
  ['anchored to opened folders (/proc/self/fd)', true],
  ['by path, as where /proc is missing', false],
])('links inside the workspace, looked up %s', (_how, anchored) => {
  const before = lookups.anchored;

  beforeAll(() => {
    lookups.anchored = anchored;
  });

  afterAll(() => {
    lookups.anchored = before;
  });

  it('follows a linked folder that stays inside, for read, write and ls', async () => {
    await mkdir(path.join(fx.workspace, 'real', 'deep'), { recursive: true });
    await writeFile(path.join(fx.workspace, 'real', 'deep', 'a.txt'), 'alpha\n');
    await symlink('real/deep', path.join(fx.workspace, 'short'));
    await symlink(path.join(fx.workspace, 'real'), path.join(fx.workspace, 'absolute'));

    expect(await callTool(fx.workspace, 'read_file', { path: 'short/a.txt' })).toMatchObject({
      is_error: false,
      content: '     1\talpha',
    });
    expect(await callTool(fx.workspace, 'ls', { path: 'absolute' })).toMatchObject({
      is_error: false,
      content: 'deep/',
    });
    expect(
      await callTool(fx.workspace, 'write_file', { path: 'short/new/b.txt', content: 'b' }),
    ).toMatchObject({ is_error: false, content: 'Created "short/new/b.txt" (1 chars, 1 lines).' });
    expect(await readFile(path.join(fx.workspace, 'real', 'deep', 'new', 'b.txt'), 'utf8')).toBe('b');
  });

  it('resolves `..` in a link against the folder the link is in', async () => {
    await mkdir(path.join(fx.workspace, 'a', 'b'), { recursive: true });
    await writeFile(path.join(fx.workspace, 'top.txt'), 'top\n');
    await symlink('../../top.txt', path.join(fx.workspace, 'a', 'b', 'up'));
    await symlink('../../../outside/secret.txt', path.join(fx.workspace, 'a', 'b', 'out'));
    expect((await callTool(fx.workspace, 'read_file', { path: 'a/b/up' })).content).toBe('     1\ttop');
    expect(await callTool(fx.workspace, 'read_file', { path: 'a/b/out' })).toMatchObject({
      is_error: true,
      content: 'path "a/b/out" leads outside the workspace through a symbolic link',
    });
  });

  it('writes through a dangling link inside by creating its target', async () => {
    await symlink('target.txt', path.join(fx.workspace, 'alias.txt'));
    expect(await callTool(fx.workspace, 'write_file', { path: 'alias.txt', content: 'x' })).toMatchObject({
      is_error: false,
      content: 'Created "alias.txt" (1 chars, 1 lines).',
    });
    expect(await readFile(path.join(fx.workspace, 'target.txt'), 'utf8')).toBe('x');
  });

  it('stops a loop of links', async () => {
    await symlink('b', path.join(fx.workspace, 'a'));
    await symlink('a', path.join(fx.workspace, 'b'));
    for (const name of ['read_file', 'ls']) {
      expect(await callTool(fx.workspace, name, { path: 'a' })).toMatchObject({
        is_error: true,
        content: 'path "a" runs into a loop of symbolic links',
      });
    }
    expect(await callTool(fx.workspace, 'write_file', { path: 'a/x', content: 'x' })).toMatchObject({
      is_error: true,
      content: 'path "a/x" runs into a loop of symbolic links',
    });
  });

  it('refuses a link to outside anywhere on the path, creating nothing there', async () => {
    await mkdir(path.join(fx.workspace, 'sub'));
    await symlink(fx.outside, path.join(fx.workspace, 'sub', 'out'));
    const result = await callTool(fx.workspace, 'write_file', { path: 'sub/out/x/y.txt', content: 'x' });
    expect(result).toMatchObject({
      is_error: true,
      content: 'path "sub/out/x/y.txt" leads outside the workspace through a symbolic link',
    });
    expect(await readdir(fx.outside)).toEqual(['secret.txt']);
  });

  it('says a file is in the way of a folder', async () => {
    await writeFile(path.join(fx.workspace, 'file'), '');
    expect(await callTool(fx.workspace, 'write_file', { path: 'file/x.txt', content: 'x' })).toMatchObject({
      is_error: true,
      content: '"file/x.txt": a part of this path is a file, not a directory',
    });
    expect(await callTool(fx.workspace, 'ls', { path: 'file' })).toMatchObject({
      is_error: true,
      content: '"file" is a file, not a directory; read it with read_file',
    });
  });

  it('refuses the workspace root as a file', async () => {
    expect(await callTool(fx.workspace, 'write_file', { path: '.', content: 'x' })).toMatchObject({
      is_error: true,
      content: '"." is a directory, not a file; list it with ls',
    });
    expect((await callTool(fx.workspace, 'read_file', { path: fx.workspace })).content).toContain(
      'is a directory, not a file',
    );
  });
});

describe('files that are not regular files', () => {
  const fifoIt = process.platform === 'win32' ? it.skip : it;

  fifoIt('refuses a FIFO without waiting for a writer or a reader', async () => {
    execFileSync('mkfifo', [path.join(fx.workspace, 'pipe')]);
    const expected = {
      is_error: true,
      content:
        '"pipe" is not a regular file (a FIFO, socket or device); the file tools handle regular files and folders only',
    };
    expect(await callTool(fx.workspace, 'read_file', { path: 'pipe' })).toMatchObject(expected);
    expect(await callTool(fx.workspace, 'write_file', { path: 'pipe', content: 'x' })).toMatchObject(
      expected,
    );
    expect(await callTool(fx.workspace, 'ls', { path: 'pipe' })).toMatchObject(expected);
  });
});

describe('files created by someone else at the same moment', () => {
  it('appends from many concurrent calls to files that do not exist yet, all succeeding', async () => {
    const rounds = 150;
    const writers = 3;
    const calls = [];
    for (let round = 0; round < rounds; round += 1) {
      for (let writer = 0; writer < writers; writer += 1) {
        calls.push(
          callTool(fx.workspace, 'write_file', {
            path: `logs/${round % 10}/r${round}.txt`,
            content: `w${writer}\n`,
            append: true,
          }),
        );
      }
    }
    const results = await Promise.all(calls);
    expect(results.filter((r) => r.is_error).map((r) => r.content)).toEqual([]);
    const created = results.filter((r) => r.content.startsWith('Created')).length;
    expect(created).toBe(rounds);
    const text = await readFile(path.join(fx.workspace, 'logs', '3', 'r13.txt'), 'utf8');
    expect(text.split('\n').filter(Boolean).sort()).toEqual(['w0', 'w1', 'w2']);
  });

  it('appends to files that another process creates at the same moment', async () => {
    // The other process creates the folders and files in a burst while the tool creates the same ones.
    for (let burst = 0; burst < 3; burst += 1) {
      const names = Array.from({ length: 200 }, (_, i) => `burst${burst}/${i % 7}/f${i}.txt`);
      const other = spawn(
        process.execPath,
        [
          '-e',
          `const fs = require('fs'), path = require('path');
           for (const name of JSON.parse(process.argv[1])) {
             const file = path.join(process.argv[2], name);
             fs.mkdirSync(path.dirname(file), { recursive: true });
             fs.appendFileSync(file, 'other\\n');
           }`,
          JSON.stringify(names),
          fx.workspace,
        ],
        { stdio: 'ignore' },
      );
      const exited = new Promise((resolve) => other.once('exit', resolve));
      const results = await Promise.all(
        names.map((name) =>
          callTool(fx.workspace, 'write_file', { path: name, content: 'tool\n', append: true }),
        ),
      );
      await exited;
      expect(results.filter((r) => r.is_error).map((r) => r.content)).toEqual([]);
      for (const name of names.slice(0, 20)) {
        const lines = (await readFile(path.join(fx.workspace, name), 'utf8')).split('\n').filter(Boolean);
        expect(lines.sort()).toEqual(['other', 'tool']);
      }
    }
    expect(await readdir(fx.outside)).toEqual(['secret.txt']);
  });
});
