import { WORKSPACE_MARKER, WorkspaceExcludes } from '../../../../activities/workspace/exclude';

const FILE = false;
const DIR = true;

describe('WorkspaceExcludes', () => {
  it.each([
    // pattern, path, is a directory, excluded
    ['*.log', 'a.log', FILE, true],
    ['*.log', 'deep/down/b.log', FILE, true],
    ['*.log', 'a.log.txt', FILE, false],
    ['*.log', 'logs/a.txt', FILE, false],
    ['node_modules/', 'node_modules', DIR, true],
    ['node_modules/', 'pkg/node_modules', DIR, true],
    ['node_modules/', 'node_modules', FILE, false],
    ['build/out', 'build/out', DIR, true],
    ['build/out', 'src/build/out', DIR, false],
    ['/build', 'build', DIR, true],
    ['/build', 'src/build', DIR, false],
    ['src/**/gen', 'src/gen', DIR, true],
    ['src/**/gen', 'src/a/b/gen', DIR, true],
    ['src/**/gen', 'lib/a/gen', DIR, false],
    ['**/cache', 'x/y/cache', FILE, true],
    ['logs/**', 'logs/2026/today.txt', FILE, true],
    ['data-?.csv', 'data-1.csv', FILE, true],
    ['data-?.csv', 'data-10.csv', FILE, false],
    ['*', 'anything', FILE, true],
    ['a*b*c', 'axxbyyc', FILE, true],
    ['a*b*c', 'axxbyy', FILE, false],
  ] as const)('%s on %s (dir: %s) → %s', (pattern, path, isDir, excluded) => {
    expect(WorkspaceExcludes.compile([pattern]).excludes(path, isDir)).toBe(excluded);
  });

  it("always excludes the protocol's marker at the root, and only there", () => {
    const excludes = WorkspaceExcludes.compile([]);
    expect(excludes.excludes(WORKSPACE_MARKER, FILE)).toBe(true);
    expect(excludes.excludes(WORKSPACE_MARKER, DIR)).toBe(true);
    expect(excludes.excludes(`sub/${WORKSPACE_MARKER}`, FILE)).toBe(false);
  });

  it('covers everything inside an excluded directory', () => {
    const excludes = WorkspaceExcludes.compile(['node_modules/', '/tmp']);
    expect(excludes.covers('pkg/node_modules/left-pad/index.js', FILE)).toBe(true);
    expect(excludes.covers('tmp/x/y', FILE)).toBe(true);
    expect(excludes.covers('src/tmp/x', FILE)).toBe(false);
    expect(excludes.covers('src/index.js', FILE)).toBe(false);
  });

  it('matches in linear time where a backtracking engine would not return', () => {
    const excludes = WorkspaceExcludes.compile(['*a*a*a*a*a*a*a*a*a*a*b', '**/**/**/**/**/**/x']);
    const started = performance.now();
    expect(excludes.excludes('a'.repeat(200), FILE)).toBe(false);
    expect(excludes.excludes(Array.from({ length: 200 }, () => 'd').join('/'), FILE)).toBe(false);
    expect(performance.now() - started).toBeLessThan(200);
  });

  it('refuses a pattern that cannot name a workspace path, naming it', () => {
    expect(() => WorkspaceExcludes.compile(['a//b'])).toThrow(
      'workspace exclude pattern "a//b" is not usable: it must name something',
    );
    expect(() => WorkspaceExcludes.compile(['/'])).toThrow('workspace exclude pattern "/" is not usable');
    expect(() => WorkspaceExcludes.compile(['../up'])).toThrow('no "." or ".." segment');
  });
});
