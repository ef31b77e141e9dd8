/**
 * Temporal's own server and schema tool for PostgreSQL, `temporal-server` (go.temporal.io/server/cmd/server)
 * and `temporal-sql-tool` (…/cmd/tools/sql), built with Go from deploy/temporal-postgres: a module with no code
 * of its own whose go.mod names both as tools, so its go.sum pins the server and every dependency. Built once
 * into `<cache>/temporal-postgres/<server version>-<hash of go.mod and go.sum>/`, or found in the folder
 * `SUBAGENTS_TEMPORAL_POSTGRES` names.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { lastLine, partialName, removeStalePartials, runTool } from './temporal-cli-builds';
import { goBuildProgress } from './temporal-cli-go';
import { isExecutable, whichSync } from './temporal-cli';
import { PostgresServerUnavailableError } from './postgres-cluster';
import { cacheRoot } from '../payloads/cache-root';
import { formatElapsed, waitProgress, type WaitHandle, type WaitProgress } from '../worker/wait-progress';

/** The Temporal server version deploy/temporal-postgres pins (its go.mod). */
export const TEMPORAL_POSTGRES_SERVER_VERSION = '1.29.1';

/** The Go module's folder, from dist/devserver/ or devserver/. */
export const TEMPORAL_POSTGRES_SOURCE = join(__dirname, '..', '..', 'deploy', 'temporal-postgres');

/** Each binary: its file name and the package it is built from (a `tool` line of the module's go.mod). */
const BINARIES = {
  server: { file: 'temporal-server', pkg: 'go.temporal.io/server/cmd/server' },
  sqlTool: { file: 'temporal-sql-tool', pkg: 'go.temporal.io/server/cmd/tools/sql' },
} as const;

/** Packages in the build (`go list -deps` of both, standard library included); `go build -v` names fewer when warm. */
const COLD_BUILD_PACKAGES = 1259;

/** The two binaries a PostgreSQL-backed server runs, in one folder. */
export interface TemporalPostgresBinaries {
  dir: string;
  server: string;
  sqlTool: string;
}

export interface BinariesOptions {
  /** A folder holding both binaries (default: `SUBAGENTS_TEMPORAL_POSTGRES`, else built into the cache). */
  temporalBinDir?: string;
  /** The Go module (default: deploy/temporal-postgres of this checkout). */
  sourceDir?: string;
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
  progress?: WaitProgress;
}

function binariesIn(dir: string): TemporalPostgresBinaries {
  return { dir, server: join(dir, BINARIES.server.file), sqlTool: join(dir, BINARIES.sqlTool.file) };
}

function complete(binaries: TemporalPostgresBinaries): boolean {
  return isExecutable(binaries.server) && isExecutable(binaries.sqlTool);
}

/** A short hash of the module (go.mod, go.sum): a changed pin is built anew. */
export function sourceHash(sourceDir: string): string {
  const hash = createHash('sha256');
  for (const name of ['go.mod', 'go.sum']) {
    hash
      .update(name)
      .update('\0')
      .update(readFileSync(join(sourceDir, name)))
      .update('\0');
  }
  return hash.digest('hex').slice(0, 12);
}

/** `<cache>/temporal-postgres/<server version>-<source hash>`. */
export function temporalPostgresCacheDir(
  env: NodeJS.ProcessEnv,
  sourceDir = TEMPORAL_POSTGRES_SOURCE,
): string {
  return join(
    cacheRoot(env),
    'temporal-postgres',
    `${TEMPORAL_POSTGRES_SERVER_VERSION}-${sourceHash(sourceDir)}`,
  );
}

/** The folder the option or `SUBAGENTS_TEMPORAL_POSTGRES` names, checked; undefined when neither is set. */
function givenBinaries(
  options: BinariesOptions,
  env: NodeJS.ProcessEnv,
): TemporalPostgresBinaries | undefined {
  const given = options.temporalBinDir ?? env.SUBAGENTS_TEMPORAL_POSTGRES;
  if (!given) return undefined;
  const binaries = binariesIn(given);
  if (!complete(binaries)) {
    throw new Error(
      `${given} (${options.temporalBinDir ? 'temporalBinDir' : 'SUBAGENTS_TEMPORAL_POSTGRES'}) must be a folder ` +
        `holding executable ${BINARIES.server.file} and ${BINARIES.sqlTool.file} (deploy/temporal-postgres/README.md)`,
    );
  }
  return binaries;
}

/** Why the binaries cannot be had without a build that cannot happen (no Go), or undefined. */
export function temporalBinariesMissing(options: BinariesOptions = {}): string | undefined {
  const env = options.env ?? process.env;
  if (givenBinaries(options, env)) return undefined;
  const sourceDir = options.sourceDir ?? TEMPORAL_POSTGRES_SOURCE;
  if (complete(binariesIn(temporalPostgresCacheDir(env, sourceDir)))) return undefined;
  return whichSync('go', env) ? undefined : noGoMessage(sourceDir);
}

function noGoMessage(sourceDir: string): string {
  return (
    `Temporal's server and temporal-sql-tool for PostgreSQL are built from ${sourceDir} with Go, and there is ` +
    'no `go` on PATH: install Go 1.21 or newer (it fetches the 1.25 toolchain the module asks for through the ' +
    'Go module proxy), or set SUBAGENTS_TEMPORAL_POSTGRES to a folder holding both, built elsewhere ' +
    '(deploy/temporal-postgres/README.md)'
  );
}

/**
 * `temporal-server` and `temporal-sql-tool`: the folder `SUBAGENTS_TEMPORAL_POSTGRES` (or the option) names,
 * the cache, else `go build` into the cache. Throws, with the fix, where there is no Go.
 */
export async function resolveTemporalPostgres(
  options: BinariesOptions = {},
): Promise<TemporalPostgresBinaries & { built: boolean }> {
  const env = options.env ?? process.env;
  const given = givenBinaries(options, env);
  if (given) return { ...given, built: false };
  const sourceDir = options.sourceDir ?? TEMPORAL_POSTGRES_SOURCE;
  const cached = binariesIn(temporalPostgresCacheDir(env, sourceDir));
  if (complete(cached)) return { ...cached, built: false };
  const go = whichSync('go', env);
  if (!go) throw new PostgresServerUnavailableError(noGoMessage(sourceDir));
  const progress = options.progress ?? waitProgress();
  await progress.track(
    `Building Temporal's server ${TEMPORAL_POSTGRES_SERVER_VERSION} and temporal-sql-tool with Go (once, minutes)`,
    (wait) => goBuild(go, sourceDir, cached.dir, env, wait),
    {
      doneLine: (_value, elapsedMs) =>
        `Temporal server and temporal-sql-tool built in ${formatElapsed(elapsedMs)}: ${cached.dir}`,
      log: options.log,
    },
  );
  return { ...cached, built: true };
}

async function goBuild(go: string, sourceDir: string, dir: string, env: NodeJS.ProcessEnv, wait: WaitHandle) {
  mkdirSync(dir, { recursive: true });
  removeStalePartials(dir);
  // Built beside the cache entry, moved into place once they run: a killed build leaves no half binary there.
  const partial = mkdtempSync(join(dir, partialName('go-build')));
  try {
    const progress = goBuildProgress(wait, COLD_BUILD_PACKAGES);
    for (const { file, pkg } of Object.values(BINARIES)) {
      const output = join(partial, file);
      wait.update(`go build ${pkg}`);
      // `-C`: in that module, so its go.mod and go.sum pin the server and every dependency.
      const args = ['build', '-C', sourceDir, '-v', '-o', output, pkg];
      const build = await runTool(go, args, { env, timeoutMs: 30 * 60_000, onStderrLine: progress });
      if (build.code !== 0) {
        throw new Error(
          `go build ${pkg} in ${sourceDir} ${build.timedOut ? 'did not finish within 30 minutes' : `failed (exit ${build.code}): ${lastLine(build.stderr)}`}` +
            ' (is the Go module proxy reachable? see GOPROXY)',
        );
      }
      await checkVersion(output);
    }
    // Same file system (the partial folder is inside `dir`): each an atomic step, the server last, since
    // `complete` asks for both.
    for (const { file } of [BINARIES.sqlTool, BINARIES.server])
      renameSync(join(partial, file), join(dir, file));
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
}

/** Both binaries print `<name> version <server version>`. */
async function checkVersion(binary: string): Promise<void> {
  const version = await runTool(binary, ['--version'], { env: process.env, timeoutMs: 30_000 });
  const expected = `version ${TEMPORAL_POSTGRES_SERVER_VERSION}`;
  if (version.code !== 0 || !version.stdout.includes(expected)) {
    throw new Error(
      `${binary} says "${version.stdout.trim() || lastLine(version.stderr)}", expected "${expected}"`,
    );
  }
}
