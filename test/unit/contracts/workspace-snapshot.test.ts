import {
  readWorkspaceManifest,
  workspacePathProblem,
  writeWorkspaceManifest,
  type WorkspaceManifest,
} from '../../../contracts/workspace-snapshot';

const BLOB = 'a'.repeat(64);
const full: WorkspaceManifest = {
  v: 1,
  seq: 1,
  depth: 0,
  files: 1,
  bytes: 5,
  full: {
    src: { kind: 'dir', mode: 0o755 },
    'src/main.ts': { kind: 'file', blob: BLOB, size: 5, mode: 0o644 },
    'src/link': { kind: 'symlink', target: '../../outside' },
  },
};

describe('workspace manifests', () => {
  it('round-trip through their JSON text, entries in path order', () => {
    const text = writeWorkspaceManifest(full);
    expect(Object.keys(JSON.parse(text).full)).toEqual(['src', 'src/link', 'src/main.ts']);
    expect(readWorkspaceManifest(text, 'manifest m')).toEqual(full);
  });

  it('hold exactly one of full and changes, and a delta names its base', () => {
    const both = { ...full, changes: {} };
    expect(() => readWorkspaceManifest(JSON.stringify(both), 'manifest m')).toThrow(
      'manifest m is not a valid workspace manifest: (manifest): a manifest holds exactly one of full and changes',
    );
    const delta = { v: 1, seq: 2, depth: 1, files: 0, bytes: 0, changes: { 'src/main.ts': null } };
    expect(() => readWorkspaceManifest(JSON.stringify(delta), 'manifest d')).toThrow(
      'base: a delta names the manifest it follows',
    );
    expect(readWorkspaceManifest(JSON.stringify({ ...delta, base: BLOB }), 'manifest d').changes).toEqual({
      'src/main.ts': null,
    });
  });

  it.each(['../x', 'a/../../x', '/etc/passwd', './a', 'a//b', 'a/', ''])(
    'refuse the path %j, which is not inside the workspace',
    (path) => {
      expect(workspacePathProblem(path)).toBeDefined();
      const tampered = { ...full, full: { [path]: { kind: 'dir', mode: 0o755 } } };
      expect(() => readWorkspaceManifest(JSON.stringify(tampered), 'manifest t')).toThrow(
        /^manifest t is not a valid workspace manifest: full\..*: not a workspace path/,
      );
    },
  );

  it('refuse an entry with a mode beyond the permission bits or a blob key that is not one', () => {
    const badMode = { ...full, full: { a: { kind: 'dir', mode: 0o40755 } } };
    expect(() => readWorkspaceManifest(JSON.stringify(badMode), 'manifest t')).toThrow('full.a.mode');
    const badBlob = { ...full, full: { a: { kind: 'file', blob: '../../x', size: 1, mode: 0o644 } } };
    expect(() => readWorkspaceManifest(JSON.stringify(badBlob), 'manifest t')).toThrow('a blob key');
    expect(() => readWorkspaceManifest('{', 'manifest t')).toThrow('manifest t is not JSON');
  });

  it('keep a path named like an Object property as a plain entry', () => {
    const text =
      '{"v":1,"seq":1,"depth":0,"files":0,"bytes":0,"full":{"__proto__":{"kind":"dir","mode":448}}}';
    const read = readWorkspaceManifest(text, 'manifest p');
    expect(Object.entries(read.full ?? {})).toEqual([['__proto__', { kind: 'dir', mode: 0o700 }]]);
  });
});
