import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WorkspaceExcludes } from '../../../../activities/workspace/exclude';
import { readTreeFile, scanTree } from '../../../../activities/workspace/tree';
import { tempDir } from '../../../support/subagent-input';

let root: string;

beforeEach(() => {
  root = tempDir('workspace-tree');
});

afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('scanTree and readTreeFile', () => {
  it('lists files, directories and links without following a link, and leaves FIFOs out', () => {
    mkdirSync(join(root, 'dir'));
    writeFileSync(join(root, 'dir', 'file'), 'content');
    symlinkSync('/', join(root, 'to-root'));
    execFileSync('mkfifo', [join(root, 'pipe')]);
    const tree = scanTree(root, WorkspaceExcludes.compile([]));
    expect([...tree.keys()].sort()).toEqual(['dir', 'dir/file', 'to-root']);
    expect(tree.get('to-root')).toMatchObject({ kind: 'symlink', target: '/' });
    expect(tree.get('dir/file')).toMatchObject({ kind: 'file', size: 7 });
    expect(typeof tree.get('dir/file')?.mtime_ns).toBe('bigint');
  });

  it('reads a plain file, and nothing for a link, a FIFO or a path that vanished', async () => {
    writeFileSync(join(root, 'file'), 'content');
    symlinkSync(join(root, 'file'), join(root, 'link'));
    execFileSync('mkfifo', [join(root, 'pipe')]);
    const read = await readTreeFile(join(root, 'file'));
    expect(read?.bytes.toString('utf8')).toBe('content');
    expect(read?.entry).toMatchObject({ kind: 'file', size: 7 });
    expect(await readTreeFile(join(root, 'link'))).toBeUndefined();
    expect(await readTreeFile(join(root, 'pipe'))).toBeUndefined();
    expect(await readTreeFile(join(root, 'gone'))).toBeUndefined();
  });
});
