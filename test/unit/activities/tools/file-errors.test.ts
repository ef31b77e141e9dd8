import { spawnSync } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileError } from '../../../../activities/tools/file-errors';
import { ToolError } from '../../../../activities/tools/tool-context';
import type { ToolCallResult } from '../../../../contracts/tools';
import { itWhere } from '../../../support/required';
import { makeFixture, removeFixture, type Fixture } from './workspace-fixture';

const request = { tool: 'write_file', requested: 'notes/a.txt' };

function errnoError(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: simulated`), { code });
}

function messageOf(err: unknown): string {
  expect(err).toBeInstanceOf(ToolError);
  return (err as ToolError).message;
}

describe('fileError', () => {
  it('turns a real ENOSPC (a write to /dev/full) into an error result naming tool, condition, code and path', () => {
    let thrown: unknown;
    try {
      writeFileSync('/dev/full', 'x');
    } catch (err) {
      thrown = err;
    }
    expect(messageOf(fileError(thrown, request, 'writing'))).toBe(
      'write_file: no space left on device (ENOSPC) writing "notes/a.txt"',
    );
  });

  it('turns a real EISDIR and ENOENT into the plain wording the model knows', () => {
    const caught = (action: () => void): unknown => {
      try {
        action();
      } catch (err) {
        return err;
      }
      throw new Error('expected a failure');
    };
    expect(
      messageOf(
        fileError(
          caught(() => writeFileSync('/', 'x')),
          request,
          'writing',
        ),
      ),
    ).toBe('"notes/a.txt" is a directory, not a file; list it with ls');
    expect(
      messageOf(
        fileError(
          caught(() => writeFileSync('/nonexistent-dir/x', 'x')),
          request,
          'writing',
        ),
      ),
    ).toBe('"notes/a.txt" does not exist in the workspace');
  });

  it.each([
    ['EROFS', 'write_file: the file system is read-only (EROFS) writing "notes/a.txt"'],
    ['EDQUOT', 'write_file: disk quota exceeded (EDQUOT) writing "notes/a.txt"'],
    ['EACCES', 'write_file: permission denied (EACCES) writing "notes/a.txt"'],
    ['EPERM', 'write_file: operation not permitted (EPERM) writing "notes/a.txt"'],
    ['EFBIG', 'write_file: the file is larger than the file system allows (EFBIG) writing "notes/a.txt"'],
    ['EIO', 'write_file: input/output error on the disk (EIO) writing "notes/a.txt"'],
    ['ENAMETOOLONG', '"notes/a.txt": a name in this path is too long'],
    ['ENOTDIR', '"notes/a.txt": a part of this path is a file, not a directory'],
    ['ELOOP', 'path "notes/a.txt" runs into a loop of symbolic links'],
  ])('classifies %s as an error result', (code, message) => {
    expect(messageOf(fileError(errnoError(code), request, 'writing'))).toBe(message);
  });

  it('says a write that failed half-way may have left the file partly written', () => {
    expect(messageOf(fileError(errnoError('ENOSPC'), request, 'writing', true))).toBe(
      'write_file: no space left on device (ENOSPC) writing "notes/a.txt"; the file may now be partly written',
    );
  });

  it('leaves faults of the worker (out of descriptors or memory, unknown codes) to be thrown', () => {
    for (const code of ['EMFILE', 'ENFILE', 'ENOMEM', 'EWHATEVER']) {
      const err = errnoError(code);
      expect(fileError(err, request, 'writing')).toBe(err);
    }
    const plain = new Error('not from the file system');
    expect(fileError(plain, request, 'reading')).toBe(plain);
  });

  it('passes a ToolError through', () => {
    const err = new ToolError('already worded');
    expect(fileError(err, request, 'reading')).toBe(err);
  });
});

const CHILD = path.join(__dirname, 'tool-call-child.js');

function runChild(
  command: string,
  argv: string[],
  options: { uid?: number; gid?: number } = {},
): ToolCallResult {
  const child = spawnSync(command, argv, { encoding: 'utf8', timeout: 30_000, ...options });
  if (child.status !== 0) {
    throw new Error(`${command} exited ${child.status}: ${child.stderr || child.error?.message || ''}`);
  }
  return JSON.parse(child.stdout) as ToolCallResult;
}

/** A private mount namespace (unshare -Urm) lets a test mount a tiny or read-only tmpfs without touching the host. */
function mountNamespaceAvailable(): boolean {
  if (process.platform !== 'linux') return false;
  const probe = spawnSync('unshare', ['-Urm', 'sh', '-c', 'mount -t tmpfs tmpfs /mnt'], { timeout: 10_000 });
  return probe.status === 0;
}

/** Runs a tool call with `mountOptions` tmpfs mounted over the workspace, in a namespace of its own. */
function callOnTmpfs(workspace: string, mountOptions: string, name: string, args: unknown): ToolCallResult {
  const script = 'mount -t tmpfs -o "$1" tmpfs "$2" && exec "$3" "$4" "$5"';
  return runChild('unshare', [
    '-Urm',
    'sh',
    '-c',
    script,
    'sh',
    mountOptions,
    workspace,
    process.execPath,
    CHILD,
    JSON.stringify({ workspace, name, args }),
  ]);
}

const NOBODY = { uid: 65534, gid: 65534 };

/** Modes do not stop root: as root, the EACCES test runs its calls as `nobody`, if nobody can run the tools. */
function unprivileged(): { uid?: number; gid?: number } | undefined {
  if (process.getuid?.() !== 0) return {};
  const workspace = mkdtempSync(path.join(os.tmpdir(), 'tools-probe-'));
  try {
    chmodSync(workspace, 0o755);
    const call = JSON.stringify({ workspace, name: 'ls', args: {} });
    const probe = spawnSync(process.execPath, [CHILD, call], { ...NOBODY, timeout: 30_000 });
    return probe.status === 0 ? NOBODY : undefined;
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

describe('file-system conditions reach the model as error results', () => {
  let fx: Fixture;

  beforeEach(async () => {
    fx = await makeFixture();
  });

  afterEach(async () => {
    await chmod(fx.workspace, 0o755).catch(() => undefined);
    await removeFixture(fx);
  });

  const onTmpfs = itWhere(
    'namespaces',
    'the tests on a tmpfs of their own',
    mountNamespaceAvailable()
      ? undefined
      : 'unshare -Urm cannot mount a tmpfs here (util-linux, user namespaces)',
  );

  onTmpfs('a full disk (ENOSPC)', () => {
    const result = callOnTmpfs(fx.workspace, 'size=16k', 'write_file', {
      path: 'notes/a.txt',
      content: 'x'.repeat(64 * 1024),
    });
    expect(result).toMatchObject({
      is_error: true,
      content:
        'write_file: no space left on device (ENOSPC) writing "notes/a.txt"; the file may now be partly written',
    });
  });

  onTmpfs('a read-only file system (EROFS)', () => {
    const result = callOnTmpfs(fx.workspace, 'ro', 'write_file', { path: 'notes/a.txt', content: 'x' });
    expect(result).toMatchObject({
      is_error: true,
      content: 'write_file: the file system is read-only (EROFS) writing "notes/a.txt"',
    });
  });

  const asUser = unprivileged();
  const asUserIt = asUser ? it : it.skip;

  asUserIt('a folder the worker may not write to (EACCES), run as an unprivileged user', async () => {
    await chmod(fx.root, 0o755);
    await chmod(fx.workspace, 0o777);
    await mkdir(path.join(fx.workspace, 'locked'), { mode: 0o555 });
    await chmod(path.join(fx.workspace, 'locked'), 0o555);
    await writeFile(path.join(fx.workspace, 'sealed.txt'), 'sealed\n', { mode: 0o000 });
    await chmod(path.join(fx.workspace, 'sealed.txt'), 0o000);
    const call = (name: string, args: unknown): ToolCallResult =>
      runChild(process.execPath, [CHILD, JSON.stringify({ workspace: fx.workspace, name, args })], asUser);

    expect(call('write_file', { path: 'locked/a.txt', content: 'x' })).toMatchObject({
      is_error: true,
      content: 'write_file: permission denied (EACCES) writing "locked/a.txt"',
    });
    expect(call('read_file', { path: 'sealed.txt' })).toMatchObject({
      is_error: true,
      content: 'read_file: permission denied (EACCES) reading "sealed.txt"',
    });
    expect(call('str_replace', { path: 'sealed.txt', old_str: 'a', new_str: 'b' })).toMatchObject({
      is_error: true,
      content: 'str_replace: permission denied (EACCES) reading "sealed.txt"',
    });
  });
});
