/**
 * Finding (or building) the Temporal CLI, which carries the dev server and the Web UI.
 *
 * Order of preference (DESIGN §7): TEMPORAL_CLI_PATH → `temporal` on PATH → the cached build → build it
 * with Go into the cache → the SDK's own download (only useful on a machine that is online).
 * TEMPORAL_ADDRESS (use a running server, start nothing) is decided one level up, in temporal-server.ts.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal';
/** The newest tag whose go.mod has no `replace` (so `go install` accepts it): server 1.29.1, UI 2.42.1. */
export const TEMPORAL_CLI_VERSION = 'v1.5.1';

export type CliSource = 'TEMPORAL_CLI_PATH' | 'PATH' | 'cache' | 'go-build';

export interface ResolvedCli {
  path: string;
  source: CliSource;
}

export interface ResolveOptions {
  env?: NodeJS.ProcessEnv;
  /** Progress lines (the Go build takes minutes on a cold machine). */
  log?: (line: string) => void;
  /** Build with Go when nothing is found (default true). */
  allowBuild?: boolean;
}

export class TemporalCliNotFoundError extends Error {
  override name = 'TemporalCliNotFoundError';
}

/** Folder for everything this project caches outside the repo (the CLI build, downloads). */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.DURABLE_SUBAGENTS_CACHE) return env.DURABLE_SUBAGENTS_CACHE;
  const base = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'durable-subagents');
}

export function cliCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), 'temporal-cli', TEMPORAL_CLI_VERSION);
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `name` on the PATH of `env`, if any. */
export function whichSync(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** Where a binary already is, without building anything. */
export function findTemporalCli(env: NodeJS.ProcessEnv = process.env): ResolvedCli | undefined {
  if (env.TEMPORAL_CLI_PATH) {
    if (!isExecutable(env.TEMPORAL_CLI_PATH)) {
      throw new TemporalCliNotFoundError(
        `TEMPORAL_CLI_PATH: ${env.TEMPORAL_CLI_PATH} is not an executable file (unset it, or point it at a temporal binary)`,
      );
    }
    return { path: env.TEMPORAL_CLI_PATH, source: 'TEMPORAL_CLI_PATH' };
  }
  const onPath = whichSync('temporal', env);
  if (onPath) return { path: onPath, source: 'PATH' };
  const cached = join(cliCacheDir(env), 'temporal');
  if (isExecutable(cached)) return { path: cached, source: 'cache' };
  return undefined;
}

/** Finds the CLI, building it with Go into the cache when it is nowhere yet. */
export async function resolveTemporalCli(options: ResolveOptions = {}): Promise<ResolvedCli | undefined> {
  const env = options.env ?? process.env;
  const found = findTemporalCli(env);
  if (found || options.allowBuild === false) return found;
  const go = whichSync('go', env);
  if (!go) return undefined;
  const path = await buildWithGo(go, env, options.log ?? (() => undefined));
  return { path, source: 'go-build' };
}

async function buildWithGo(go: string, env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<string> {
  const dir = cliCacheDir(env);
  mkdirSync(dir, { recursive: true });
  const target = `${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION}`;
  log(
    `Building the Temporal CLI ${TEMPORAL_CLI_VERSION} with Go into ${dir} (first run only; a few minutes)…`,
  );
  const started = Date.now();
  const stderr: string[] = [];
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(go, ['install', target], {
      env: { ...env, GOBIN: dir },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => stderr.push(chunk));
    child.on('error', reject);
    child.on('close', resolve);
  });
  const binary = join(dir, 'temporal');
  if (code !== 0 || !existsSync(binary)) {
    const tail = stderr.join('').trim().split('\n').slice(-15).join('\n');
    throw new TemporalCliNotFoundError(
      `go install ${target} failed (exit ${code}):\n${tail}\n` +
        'Check that the Go module proxy is reachable (GOPROXY), or set TEMPORAL_CLI_PATH to a temporal binary.',
    );
  }
  log(`Built the Temporal CLI in ${Math.round((Date.now() - started) / 1000)} s: ${binary}`);
  return binary;
}

/** The one message a user sees when there is no binary, no Go, and the SDK download failed too. */
export function missingCliMessage(downloadError?: string): string {
  return [
    'No Temporal server available: no TEMPORAL_ADDRESS, no temporal binary (TEMPORAL_CLI_PATH, PATH or the cache),',
    'no Go toolchain to build one, and the SDK download did not work' +
      (downloadError ? ` (${downloadError}).` : '.'),
    'Install Go 1.21 or newer (it fetches the 1.25 toolchain the CLI asks for by itself) and run again: the project builds',
    `\`go install ${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION}\` into ${cliCacheDir()} once.`,
    'Or put a temporal binary on PATH, set TEMPORAL_CLI_PATH, or set TEMPORAL_ADDRESS=host:port to use a running server.',
  ].join('\n');
}
