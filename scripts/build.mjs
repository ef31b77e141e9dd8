/**
 * `npm run build`: the TypeScript into dist/ (`tsc -p tsconfig.json`, incremental), then worker/prune-dist,
 * then the workflow bundle the workers load (worker/build-workflow-bundle: skipped when the workflows' code is
 * what it was bundled from). All are skipped when nothing tsc reads has changed since the last good build and
 * the bundle is there: a digest of each source file, the tsconfigs and the installed packages, kept in
 * dist/.build-inputs. An unchanged checkout then builds in a fraction of a second, where even an incremental
 * tsc takes seconds (tens of seconds on a busy machine) to find nothing to do.
 *
 * `--app` (what `npm start` and `temporal:ensure` build): tsconfig.app.json, the application without test/
 * and bench/, about half the lines. A full build covers it (an app build after one is skipped while the
 * application's sources are unchanged); an app build does not cover a full one, so a later `npm test` builds
 * the tests. Both share one tsbuildinfo, which follows the last program built.
 *
 * A light install (`npm install --omit=optional`) leaves out the packages only some configs use
 * (package.json's optionalDependencies). The files that import one then fail tsc's check with "Cannot find
 * module"; an app build still emits them (they load the package only when a config asks for it, and then say
 * which package to install), names them in one line and succeeds. A full build does not: the tests need them.
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
/** `--app`: the application alone (tsconfig.app.json); otherwise everything, tests and benchmarks too. */
const APP = process.argv.includes('--app');
const TSCONFIG = APP ? 'tsconfig.app.json' : 'tsconfig.json';
/** Both, whichever is built: the app's extends the full one. */
const TSCONFIGS = ['tsconfig.json', 'tsconfig.app.json'];
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

/** Each input of `tsconfig`'s build: its sha256, by its path from the project root. */
function inputDigests(tsconfig) {
  const { include } = JSON.parse(readFileSync(join(ROOT, tsconfig), 'utf8'));
  // npm rewrites its record of what is installed on every install: a changed package is a changed input.
  const installed = join(ROOT, 'node_modules', '.package-lock.json');
  const files = [
    ...TSCONFIGS.map((name) => join(ROOT, name)).filter((path) => existsSync(path)),
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

/**
 * The inputs of the last good build, as far as they are this build's: `{ digests }` by path, or undefined when
 * there is none (dist/ may have been deleted since) or it did not cover this one (an app build, then a full
 * one). Written as `{ tsconfig, digests }`.
 */
function lastInputs() {
  if (!existsSync(BUILD_INFO)) return undefined;
  let last;
  try {
    last = JSON.parse(readFileSync(INPUTS, 'utf8'));
  } catch {
    return undefined;
  }
  const covers = last.tsconfig === TSCONFIG || last.tsconfig === 'tsconfig.json';
  if (!covers || typeof last.digests !== 'object') return undefined;
  const { include } = JSON.parse(readFileSync(join(ROOT, TSCONFIG), 'utf8'));
  const ours = (path) => !path.includes('/') || ['node_modules', ...include].includes(path.split('/')[0]);
  return Object.fromEntries(Object.entries(last.digests).filter(([path]) => ours(path)));
}

function changedCount(before, now) {
  const paths = new Set([...Object.keys(before), ...Object.keys(now)]);
  return [...paths].filter((path) => before[path] !== now[path]).length;
}

/** package.json's optionalDependencies that this install lacks. */
function missingOptionalPackages() {
  const manifest = join(ROOT, 'package.json');
  if (!existsSync(manifest)) return [];
  const { optionalDependencies = {} } = JSON.parse(readFileSync(manifest, 'utf8'));
  return Object.keys(optionalDependencies).filter(
    (name) => !existsSync(join(ROOT, 'node_modules', ...name.split('/'), 'package.json')),
  );
}

/** tsc's error lines, plain (`file(1,2): error TS2307: …`) or pretty (`file:1:2 - error TS2307: …`). */
const ERROR_LINE = /^(?<file>[^\s(:][^(:]*?)(?:\(\d+,\d+\):|:\d+:\d+ -) error TS(?<code>\d+): (?<text>.*)$/;
// eslint-disable-next-line no-control-regex -- the colour codes of tsc's --pretty output
const COLOUR = /\x1b\[[0-9;]*m/g;

/**
 * When every error tsc reported is in a file that imports an optional package this install lacks: those files
 * and packages. Such a file still compiles to what it should (the import is a type, or a `require` at the
 * point of use), and nothing runs it unless a config asks for the package, which then names it.
 */
function onlyMissingOptional(output, missing) {
  const errors = output
    .replace(COLOUR, '')
    .split('\n')
    .map((line) => ERROR_LINE.exec(line.trimEnd())?.groups)
    .filter((error) => error !== undefined);
  if (errors.length === 0 || missing.length === 0) return undefined;
  const packages = new Set();
  const files = new Set();
  for (const { file, code, text } of errors) {
    const name = code === '2307' ? /Cannot find module '([^']+)'/.exec(text)?.[1] : undefined;
    const pkg = missing.find((m) => name === m || name?.startsWith(`${m}/`));
    if (pkg !== undefined) {
      packages.add(pkg);
      files.add(file);
    }
  }
  return errors.every(({ file }) => files.has(file)) ? { files, packages } : undefined;
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

/** `tsc -p <tsconfig>`, its output collected (printed after the progress line is gone). */
function compile() {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  // Colours and code frames, as tsc gives them on a terminal, though its output goes through a pipe here.
  const pretty = process.stdout.isTTY === true ? ['--pretty'] : [];
  const child = spawn(process.execPath, [tsc, '-p', TSCONFIG, ...pretty], {
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
  const what = APP ? 'the application, without the tests' : 'everything, with the tests';
  const why = first
    ? `the first build, ${what}: ${APP ? '10–20 s, up to a minute' : '15–30 s, a minute or two'} on a busy machine`
    : changed === undefined
      ? `${what}: checking dist/ against the sources`
      : `${what}: ${changed} ${changed === 1 ? 'file' : 'files'} changed since the last build`;
  const stop = showProgress(`Building TypeScript into dist/ (${why})`, first);
  const result = await compile();
  const { shown, ms } = stop();
  const missing = result.code === 0 ? [] : missingOptionalPackages();
  const light = onlyMissingOptional(result.stdout.toString(), missing);
  if (APP && light !== undefined) {
    const files = light.files.size === 1 ? 'one file that imports' : `${light.files.size} files that import`;
    say(
      `Built without type-checking ${files} ${[...light.packages].join(', ')}, which this install ` +
        'left out (optional: a config that needs one says what to install).',
    );
  } else {
    process.stdout.write(result.stdout);
    process.stderr.write(result.stderr);
  }
  if (result.code !== 0 && !(APP && light !== undefined)) {
    say(`TypeScript build failed after ${elapsed(ms, true)} (tsc exited ${result.code})`);
    if (!APP && missing.length > 0) {
      say(
        `This install lacks optional packages the tests need (${missing.join(', ')}): \`npm install\` adds them.`,
      );
    }
    return result.code;
  }
  const prune = spawnSync(process.execPath, [join(DIST, 'worker', 'prune-dist.js')], { stdio: 'inherit' });
  if (prune.status !== 0) return prune.status ?? 1;
  if (shown) say(`Built TypeScript in ${elapsed(ms, true)}`);
  return 0;
}

async function main() {
  const inputs = inputDigests(TSCONFIG);
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
  writeFileSync(INPUTS, `${JSON.stringify({ tsconfig: TSCONFIG, digests: inputs })}\n`);
  return 0;
}

process.exitCode = await main();
