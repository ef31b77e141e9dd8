/**
 * scripts/build.mjs (`npm run build`) on a project of two modules of its own, with the real tsc and
 * prune-dist: it says what the first build does before it starts, skips a build whose inputs have not changed,
 * builds a changed JSON module again, and takes no failed build's dist/ for an up-to-date one. The workflow
 * bundle step is a stand-in here (worker/workflow-bundle.ts has its own tests): the build runs it after tsc,
 * and again on its own when its bundle is gone. `--app` (what `npm start` builds) leaves the tests out, and
 * tolerates the files that use an optional package a light install left out.
 */
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../support/subagent-input';

const ROOT = join(__dirname, '..', '..', '..', '..');

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'Node16',
    moduleResolution: 'Node16',
    rootDir: '.',
    outDir: 'dist',
    strict: true,
    resolveJsonModule: true,
    skipLibCheck: true,
    incremental: true,
    tsBuildInfoFile: 'dist/.tsbuildinfo',
    types: ['node'],
  },
  include: ['src', 'worker', 'test'],
};

/** tsconfig.app.json's shape: the same without the tests. */
const APP_TSCONFIG = { extends: './tsconfig.json', include: ['src', 'worker'] };

const GOOD_MODULE = "import data from './data.json';\nexport const count: number = data.count;\n";

/** worker/build-workflow-bundle.ts's stand-in: the two files it leaves in dist/, and a count of its runs. */
const BUNDLE_STEP = `import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const dist = join(__dirname, '..');
writeFileSync(join(dist, 'workflow-bundle.cjs'), 'bundle');
writeFileSync(join(dist, 'workflow-bundle.manifest'), '{}');
appendFileSync(join(dist, '..', 'bundle-runs'), 'run\\n');
`;

/** A project laid out as this one is: the build script, prune-dist, the packages, two modules. */
function scratchProject(): string {
  const dir = tempDir('build-script');
  for (const folder of ['scripts', 'worker', 'src', 'test']) mkdirSync(join(dir, folder));
  copyFileSync(join(ROOT, 'scripts', 'build.mjs'), join(dir, 'scripts', 'build.mjs'));
  copyFileSync(join(ROOT, 'worker', 'prune-dist.ts'), join(dir, 'worker', 'prune-dist.ts'));
  writeFileSync(join(dir, 'worker', 'build-workflow-bundle.ts'), BUNDLE_STEP);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
  writeFileSync(join(dir, 'tsconfig.app.json'), JSON.stringify(APP_TSCONFIG));
  writeFileSync(
    join(dir, 'test', 'count.test.ts'),
    "import { count } from '../src/count';\nexport const seen = count;\n",
  );
  writeFileSync(join(dir, 'src', 'data.json'), '{ "count": 1 }\n');
  writeFileSync(join(dir, 'src', 'count.ts'), GOOD_MODULE);
  writeFileSync(join(dir, 'src', 'extra.ts'), 'export const extra = 1;\n');
  return dir;
}

function build(dir: string, ...args: string[]) {
  const run = spawnSync(process.execPath, [join(dir, 'scripts', 'build.mjs'), ...args], {
    cwd: dir,
    encoding: 'utf8',
    // Plain lines, as in CI and logs.
    env: { ...process.env, CI: '1' },
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('scripts/build.mjs', () => {
  const dir = scratchProject();
  const dist = (...path: string[]) => join(dir, 'dist', ...path);
  const bundleRuns = () =>
    existsSync(join(dir, 'bundle-runs'))
      ? readFileSync(join(dir, 'bundle-runs'), 'utf8').split('\n').length - 1
      : 0;

  it('says what the first build does before it starts, and how long it took', () => {
    const first = build(dir);
    expect(first).toMatchObject({ code: 0, stdout: '' });
    const lines = first.stderr.trim().split('\n');
    expect(lines[0]).toMatch(
      /^Building TypeScript into dist\/ \(the first build, everything, with the tests: .+\)…$/,
    );
    expect(lines[lines.length - 1]).toMatch(
      /^Built TypeScript in \d+(\.\d)? s$|^Built TypeScript in \d+ min/,
    );
    expect(readFileSync(dist('src', 'count.js'), 'utf8')).toContain('.default.count');
    expect(bundleRuns()).toBe(1);
  });

  it('does nothing, and says nothing, when no input changed', () => {
    const before = statSync(dist('.tsbuildinfo')).mtimeMs;
    expect(build(dir)).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(statSync(dist('.tsbuildinfo')).mtimeMs).toBe(before);
    expect(bundleRuns()).toBe(1);
  });

  it('makes the workflow bundle again when it is gone, without tsc', () => {
    const before = statSync(dist('.tsbuildinfo')).mtimeMs;
    rmSync(dist('workflow-bundle.cjs'));
    expect(build(dir)).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(statSync(dist('.tsbuildinfo')).mtimeMs).toBe(before);
    expect(existsSync(dist('workflow-bundle.cjs'))).toBe(true);
    expect(bundleRuns()).toBe(2);
    expect(build(dir)).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(bundleRuns()).toBe(2);
  });

  it('builds again when a JSON module changed, and prunes the output of a deleted source', () => {
    writeFileSync(join(dir, 'src', 'data.json'), '{ "count": 2 }\n');
    const extra = join(dir, 'src', 'extra.ts');
    rmSync(extra);
    const again = build(dir);
    expect(again.code).toBe(0);
    expect(JSON.parse(readFileSync(dist('src', 'data.json'), 'utf8'))).toEqual({ count: 2 });
    expect(existsSync(dist('src', 'extra.js'))).toBe(false);
  });

  it('a type error fails the build with tsc’s diagnostics, and its dist/ is not taken as up to date', () => {
    const source = join(dir, 'src', 'count.ts');
    writeFileSync(source, "export const count: number = 'many';\n");
    const failed = build(dir);
    expect(failed.code).not.toBe(0);
    expect(failed.stdout).toContain('error TS2322');
    expect(failed.stderr).toMatch(/^TypeScript build failed after .+ \(tsc exited \d+\)$/m);
    // tsc wrote the broken module all the same: back to the last good source, it is built again.
    expect(readFileSync(dist('src', 'count.js'), 'utf8')).toContain('many');
    writeFileSync(source, GOOD_MODULE);
    expect(build(dir).code).toBe(0);
    expect(readFileSync(dist('src', 'count.js'), 'utf8')).not.toContain('many');
  });
});

describe('scripts/build.mjs --app (npm start)', () => {
  it('builds the application without the tests; a later full build builds them; an app build after it does nothing', () => {
    const dir = scratchProject();
    const app = build(dir, '--app');
    expect(app.code).toBe(0);
    expect(app.stderr.split('\n')[0]).toMatch(
      /^Building TypeScript into dist\/ \(the first build, the application, without the tests: .+\)…$/,
    );
    expect(existsSync(join(dir, 'dist', 'src', 'count.js'))).toBe(true);
    expect(existsSync(join(dir, 'dist', 'test'))).toBe(false);
    expect(build(dir, '--app')).toEqual({ code: 0, stdout: '', stderr: '' });
    // The app build does not stand for a full one: the tests are built.
    expect(build(dir).code).toBe(0);
    expect(existsSync(join(dir, 'dist', 'test', 'count.test.js'))).toBe(true);
    // A full build covers the app's.
    expect(build(dir, '--app')).toEqual({ code: 0, stdout: '', stderr: '' });
    // A changed test is no input of the app's build.
    writeFileSync(join(dir, 'test', 'count.test.ts'), 'export const seen = 2;\n');
    expect(build(dir, '--app')).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(build(dir).code).toBe(0);
    expect(readFileSync(join(dir, 'dist', 'test', 'count.test.js'), 'utf8')).toContain('seen = 2');
  });

  it('builds, and names, a file that uses an optional package the install lacks; a full build fails on it', () => {
    const dir = scratchProject();
    const missing = 'durable-subagents-absent-package';
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ optionalDependencies: { [missing]: '1.0.0' } }),
    );
    writeFileSync(
      join(dir, 'src', 'uses-optional.ts'),
      `import type * as Absent from '${missing}/sub.js';\nexport type Lib = typeof Absent;\nexport const lazy = 1;\n`,
    );
    const app = build(dir, '--app');
    expect(app.code).toBe(0);
    expect(app.stdout).toBe('');
    expect(app.stderr).toContain(
      `Built without type-checking one file that imports ${missing}, which this install left out`,
    );
    expect(existsSync(join(dir, 'dist', 'src', 'uses-optional.js'))).toBe(true);
    const full = build(dir);
    expect(full.code).not.toBe(0);
    expect(full.stdout).toContain('error TS2307');
    expect(full.stderr).toContain(
      `lacks optional packages the tests need (${missing}): \`npm install\` adds them`,
    );
  });

  it('still fails on any other error', () => {
    const dir = scratchProject();
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ optionalDependencies: { 'absent-pkg-x': '1.0.0' } }),
    );
    writeFileSync(join(dir, 'src', 'count.ts'), "export const count: number = 'many';\n");
    const app = build(dir, '--app');
    expect(app.code).not.toBe(0);
    expect(app.stdout).toContain('error TS2322');
  });
});
