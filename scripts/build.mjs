/**
 * `npm run build`: the TypeScript into dist/ (`tsc -p .`, incremental), then worker/prune-dist, then the
 * workflow bundle the workers load (worker/build-workflow-bundle: skipped when the workflows' code is what it
 * was bundled from). All are skipped when nothing tsc reads has changed since the last good build and the
 * bundle is there: a digest of each source file, the tsconfig and the installed packages, kept in
 * dist/.build-inputs. An unchanged checkout then builds in a fraction of a second, where even an incremental
 * tsc takes seconds (tens of seconds on a busy machine) to find nothing to do.
 *
 * A build that works says so: the first one (no dist/ yet) at once, before it starts, with what it costs;
 * another past two seconds. Meanwhile its elapsed time (on a terminal one line redrawn in place, elsewhere a
 * line every 10 s), then how long it took. Progress goes to stderr; tsc's own diagnostics to stdout, once it
 * has ended, and its exit code is the build's.
 *
 * Plain JavaScript, beside the code rather than in it: it runs before there is any compiled code.
 */
import { Buffer } from 'node:buffer';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { clearInterval, setInterval } from 'node:timers';
import { fileURLToPath } from 'node:url';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const DIST = join(ROOT, 'dist');
const BUILD_INFO = join(DIST, '.tsbuildinfo');
/** No `.js` or `.json` name: prune-dist keeps it. */
const INPUTS = join(DIST, '.build-inputs');
/** worker/workflow-bundle.ts's BUILT_BUNDLE_PATH and its manifest. */
const WORKFLOW_BUNDLE = [join(DIST, 'workflow-bundle.cjs'), join(DIST, 'workflow-bundle.manifest')];
/** What tsc reads besides the tsconfig: sources, and the JSON modules they import. */
const SOURCE = /\.(ts|tsx|mts|cts|json)$/;
/** A build that is not the first shows nothing for this long. */
const QUIET_MS = 2000;
const PLAIN_EVERY_MS = 10_000;

const say = (line) => process.stderr.write(`${line}\n`);

/** `7 s`, `1 min 44 s`; with `tenths`, `3.4 s` under a minute. */
function elapsed(ms, tenths = false) {
  if (tenths && ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.floor(ms / 1000);
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

function sourceFiles(dir, into) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(path, into);
    else if (SOURCE.test(entry.name)) into.push(path);
  }
  return into;
}

/** Each input's sha256, by its path from the project root. */
function inputDigests() {
  const { include } = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8'));
  // npm rewrites its record of what is installed on every install: a changed package is a changed input.
  const installed = join(ROOT, 'node_modules', '.package-lock.json');
  const files = [
    join(ROOT, 'tsconfig.json'),
    existsSync(installed) ? installed : join(ROOT, 'package-lock.json'),
  ];
  for (const dir of include) {
    if (existsSync(join(ROOT, dir))) sourceFiles(join(ROOT, dir), files);
  }
  const digests = {};
  for (const file of files.sort()) {
    digests[relative(ROOT, file)] = createHash('sha256').update(readFileSync(file)).digest('hex');
  }
  return digests;
}

/** The inputs of the last good build, when there is one (dist/ may have been deleted since). */
function lastInputs() {
  if (!existsSync(BUILD_INFO)) return undefined;
  try {
    return JSON.parse(readFileSync(INPUTS, 'utf8'));
  } catch {
    return undefined;
  }
}

function changedCount(before, now) {
  const paths = new Set([...Object.keys(before), ...Object.keys(now)]);
  return [...paths].filter((path) => before[path] !== now[path]).length;
}

/**
 * Progress on stderr from now on: `announce` at once when `now`, else once QUIET_MS have passed. Returns what
 * ends it, which says whether anything was shown.
 */
function showProgress(announce, now) {
  const started = Date.now();
  const live = process.stderr.isTTY === true && !process.env.CI && process.env.TERM !== 'dumb';
  let shown = false;
  let lastPlain = 0;
  let drawn = false;
  const clear = () => {
    if (drawn) process.stderr.write('\r\x1b[K');
    drawn = false;
  };
  const tick = () => {
    const ms = Date.now() - started;
    if (!shown) {
      if (!now && ms < QUIET_MS) return;
      say(`${announce}…`);
      shown = true;
      lastPlain = Date.now();
    }
    if (live) {
      clear();
      process.stderr.write(`Building TypeScript… ${elapsed(ms)}`);
      drawn = true;
    } else if (Date.now() - lastPlain >= PLAIN_EVERY_MS) {
      say(`Building TypeScript… ${elapsed(ms)}`);
      lastPlain = Date.now();
    }
  };
  tick();
  const timer = setInterval(tick, live ? 1000 : 500);
  return () => {
    clearInterval(timer);
    clear();
    return { shown, ms: Date.now() - started };
  };
}

/** `tsc -p .`, its output collected (printed after the progress line is gone). */
function compile() {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  // Colours and code frames, as tsc gives them on a terminal, though its output goes through a pipe here.
  const pretty = process.stdout.isTTY === true ? ['--pretty'] : [];
  const child = spawn(process.execPath, [tsc, '-p', '.', ...pretty], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = [];
  const err = [];
  child.stdout.on('data', (chunk) => out.push(chunk));
  child.stderr.on('data', (chunk) => err.push(chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) =>
      resolve({ code: code ?? (signal ? 1 : 0), stdout: Buffer.concat(out), stderr: Buffer.concat(err) }),
    );
  });
}

/** The workflow bundle, when the workflows' compiled code is not what the one in dist/ was made from. */
function bundleWorkflows() {
  const step = spawnSync(process.execPath, [join(DIST, 'worker', 'build-workflow-bundle.js')], {
    stdio: 'inherit',
  });
  return step.status ?? 1;
}

/** `tsc`, then prune-dist; the exit code. */
async function compileTypeScript(changed) {
  const first = !existsSync(BUILD_INFO);
  const why = first
    ? 'the first build: 15–30 s, a minute or two on a busy machine'
    : changed === undefined
      ? 'checking dist/ against the sources'
      : `${changed} ${changed === 1 ? 'file' : 'files'} changed since the last build`;
  const stop = showProgress(`Building TypeScript into dist/ (${why})`, first);
  const result = await compile();
  const { shown, ms } = stop();
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  if (result.code !== 0) {
    say(`TypeScript build failed after ${elapsed(ms, true)} (tsc exited ${result.code})`);
    return result.code;
  }
  const prune = spawnSync(process.execPath, [join(DIST, 'worker', 'prune-dist.js')], { stdio: 'inherit' });
  if (prune.status !== 0) return prune.status ?? 1;
  if (shown) say(`Built TypeScript in ${elapsed(ms, true)}`);
  return 0;
}

async function main() {
  const inputs = inputDigests();
  const before = lastInputs();
  const changed = before === undefined ? undefined : changedCount(before, inputs);
  const bundled = WORKFLOW_BUNDLE.every((path) => existsSync(path));
  if (changed === 0 && bundled) return 0;
  // tsc writes dist/ even when it finds errors: until a build succeeds, no record says dist/ is up to date.
  rmSync(INPUTS, { force: true });
  const code = changed === 0 ? 0 : await compileTypeScript(changed);
  if (code !== 0) return code;
  const bundle = bundleWorkflows();
  if (bundle !== 0) return bundle;
  writeFileSync(INPUTS, `${JSON.stringify(inputs)}\n`);
  return 0;
}

process.exitCode = await main();
