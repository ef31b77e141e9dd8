/**
 * A real Temporal server on PostgreSQL, started from here: the PostgreSQL-backed counterpart of the embedded
 * dev server (temporal-server.ts), for tests and load benchmarks that want the persistence a production
 * cluster has rather than SQLite. It runs Temporal's own binaries the way Temporal documents a PostgreSQL
 * deployment, so what it proves holds for a user's own server:
 * - PostgreSQL: a throwaway cluster, or a running one given by `SUBAGENTS_POSTGRES_URL` (postgres-cluster.ts);
 * - `temporal-server` and `temporal-sql-tool`, built from deploy/temporal-postgres (temporal-postgres-build.ts);
 * - `temporal-sql-tool` create-database, setup-schema -v 0.0, update-schema for both databases, a server config
 *   file and a dynamic config file (temporal-postgres-config.ts), `temporal-server start`, then the namespace
 *   and the project's search attributes (temporal-postgres-setup.ts).
 *
 * `stopTemporal()`/`startTemporal()` and `stopPostgres()`/`startPostgres()` restart either on the same data
 * (the server on the same ports), which is what a durability test needs; `stop()` stops both and removes a
 * throwaway cluster.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { DEFAULT_NAMESPACE } from '../contracts/config/temporal';
import { waitProgress, type WaitProgress } from '../worker/wait-progress';
import type { TemporalServer } from './temporal-server';
import { running, spawnKept, stopProcess, waitReady, type KeptProcess } from './kept-process';
import {
  findPostgresBinDir,
  parsePostgresUrl,
  postgresUser,
  PostgresServerUnavailableError,
  ThrowawayPostgres,
  type PostgresConnection,
  type ThrowawayPostgresOptions,
} from './postgres-cluster';
import {
  resolveTemporalPostgres,
  temporalBinariesMissing,
  TEMPORAL_POSTGRES_SERVER_VERSION,
  type BinariesOptions,
  type TemporalPostgresBinaries,
} from './temporal-postgres-build';
import { allocateServerPorts, dynamicConfigYaml, serverConfigYaml } from './temporal-postgres-config';
import { registerProjectNamespace, setupDatabases } from './temporal-postgres-setup';

export { findPostgresBinDir, parsePostgresUrl, PostgresServerUnavailableError, type PostgresConnection };
export {
  resolveTemporalPostgres,
  TEMPORAL_POSTGRES_SERVER_VERSION,
  TEMPORAL_POSTGRES_SOURCE,
} from './temporal-postgres-build';
export { POSTGRES_DYNAMIC_CONFIG } from './temporal-postgres-config';

const LOOPBACK = '127.0.0.1';
/** The server config's name: `temporal-server --env postgres` reads `postgres.yaml` of its config folder. */
const CONFIG_ENV = 'postgres';

export interface PostgresServerOptions extends ThrowawayPostgresOptions, BinariesOptions {
  /**
   * A running PostgreSQL to use instead of a throwaway cluster (default: `SUBAGENTS_POSTGRES_URL`,
   * `postgres://user:password@host:port`). Its user needs CREATEDB, or the databases must exist.
   */
  postgres?: PostgresConnection;
  /** The persistence and visibility databases (default `temporal`, `temporal_visibility`). */
  database?: string;
  visibilityDatabase?: string;
  /** Frontend gRPC port; a free one when omitted (kept across `startTemporal()`, as are the others). */
  port?: number;
  namespace?: string;
  /** Dynamic config over PROJECT_DYNAMIC_CONFIG and POSTGRES_DYNAMIC_CONFIG (key → value). */
  dynamicConfig?: Record<string, unknown>;
  /** History shards, fixed by the first start on a database (default 4). */
  numHistoryShards?: number;
  /** Server log level (`warn` by default). */
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** How long to wait for PostgreSQL and for the server to answer, each (default 120 s). */
  startTimeoutMs?: number;
}

export interface PostgresTemporalServer extends TemporalServer {
  source: 'postgres';
  /** The PostgreSQL the server uses. */
  postgres: PostgresConnection;
  /** The `temporal-server` binary that runs. */
  binary: string;
  /** The `temporal-sql-tool` that set up its databases. */
  sqlTool: string;
  /** The throwaway cluster's folder, if this started one. */
  dataDir?: string;
  /** Stops the Temporal server only (SIGTERM, then SIGKILL after 15 s). */
  stopTemporal(): Promise<void>;
  /** Starts the Temporal server again, on the same ports and databases. */
  startTemporal(): Promise<void>;
  /** Stops the throwaway PostgreSQL (fast shutdown); an error for a PostgreSQL this did not start. */
  stopPostgres(): Promise<void>;
  /** Starts the throwaway PostgreSQL again on its folder and port. */
  startPostgres(): Promise<void>;
}

/** The PostgreSQL the options or `SUBAGENTS_POSTGRES_URL` name, if any. */
function givenPostgres(
  options: PostgresServerOptions,
  env: NodeJS.ProcessEnv,
): PostgresConnection | undefined {
  return (
    options.postgres ??
    (env.SUBAGENTS_POSTGRES_URL ? parsePostgresUrl(env.SUBAGENTS_POSTGRES_URL) : undefined)
  );
}

/**
 * Why a PostgreSQL-backed server cannot be started here, without starting or building anything (no
 * PostgreSQL binaries and no SUBAGENTS_POSTGRES_URL, root without a `postgres` user, no built binaries and no
 * Go), with the fix; undefined when it can.
 */
export function postgresServerMissing(
  options: Pick<
    PostgresServerOptions,
    'postgres' | 'postgresBinDir' | 'temporalBinDir' | 'sourceDir' | 'env'
  > = {},
): string | undefined {
  const env = options.env ?? process.env;
  try {
    if (!options.postgres && !env.SUBAGENTS_POSTGRES_URL) {
      findPostgresBinDir({ postgresBinDir: options.postgresBinDir, env });
      postgresUser();
    }
  } catch (err) {
    if (err instanceof PostgresServerUnavailableError) return err.message;
    throw err;
  }
  return temporalBinariesMissing({ ...options, env });
}

/** The throwaway cluster, created and started (removed again if it does not start). */
function startThrowawayPostgres(
  options: PostgresServerOptions,
  env: NodeJS.ProcessEnv,
  progress: WaitProgress,
  timeoutMs: number,
): Promise<ThrowawayPostgres> {
  return progress.track('Starting a throwaway PostgreSQL', async (wait) => {
    const cluster = await ThrowawayPostgres.create(options, env, wait);
    try {
      await cluster.start(timeoutMs, wait);
    } catch (err) {
      cluster.remove();
      throw err;
    }
    return cluster;
  });
}

/**
 * `temporal-server start` on a config folder, restartable on the same ports; ready once the namespace and
 * the search attributes answer.
 */
class TemporalServerProcess {
  private child: KeptProcess | undefined;

  constructor(
    private readonly binary: string,
    private readonly configDir: string,
    readonly address: string,
    private readonly namespace: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  async start(progress: WaitProgress, timeoutMs: number): Promise<void> {
    if (running(this.child)) return;
    const args = ['--root', this.configDir, '--config', '.', '--env', CONFIG_ENV, '--allow-no-auth', 'start'];
    const child = spawnKept(this.binary, args, { env: this.env });
    this.child = child;
    let lastError = '';
    const ready = async () => {
      let connection: Connection | undefined;
      try {
        connection = await Connection.connect({ address: this.address, connectTimeout: 1000 });
        return await registerProjectNamespace(connection, this.namespace);
      } catch (err) {
        lastError = err instanceof Error ? err.message : String(err);
        return false;
      } finally {
        await connection?.close().catch(() => undefined);
      }
    };
    await progress
      .track('Starting the Temporal server on PostgreSQL', (wait) =>
        waitReady(child, `the Temporal server on ${this.address}`, timeoutMs, ready, wait),
      )
      .catch(async (err: Error) => {
        await this.stop();
        throw lastError ? new Error(`${err.message}\nlast answer: ${lastError}`) : err;
      });
  }

  stop(): Promise<void> {
    return stopProcess(this.child, 'SIGTERM', 15_000);
  }

  killNow(): void {
    if (running(this.child)) this.child.process.kill('SIGKILL');
  }
}

/** Writes the server config and dynamic config files into `dir`; returns the server's address. */
async function writeServerConfig(
  dir: string,
  postgres: PostgresConnection,
  options: PostgresServerOptions,
): Promise<string> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const dynamicConfigFile = join(dir, 'dynamic-config.yaml');
  writeFileSync(dynamicConfigFile, dynamicConfigYaml(options.dynamicConfig));
  const ports = await allocateServerPorts(options.port);
  const config = serverConfigYaml({
    postgres,
    database: options.database ?? 'temporal',
    visibilityDatabase: options.visibilityDatabase ?? 'temporal_visibility',
    numHistoryShards: options.numHistoryShards ?? 4,
    ip: LOOPBACK,
    ports,
    dynamicConfigFile,
    logLevel: options.logLevel ?? 'warn',
  });
  // It holds the database password, if there is one: for this user alone.
  writeFileSync(join(dir, `${CONFIG_ENV}.yaml`), config, { mode: 0o600 });
  return `${LOOPBACK}:${ports.grpc.frontend}`;
}

/**
 * Starts a Temporal server on PostgreSQL (a throwaway cluster unless one is given) with this project's
 * namespace, search attributes and dynamic config; resolves once the namespace answers.
 */
export async function startPostgresServer(
  options: PostgresServerOptions = {},
): Promise<PostgresTemporalServer> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => undefined);
  const progress = options.progress ?? waitProgress();
  const timeoutMs = options.startTimeoutMs ?? 120_000;
  const namespace = options.namespace ?? DEFAULT_NAMESPACE;

  // What is missing is said before anything starts: the PostgreSQL binaries first, then the (long) build.
  const given = givenPostgres(options, env);
  if (!given) {
    findPostgresBinDir({ postgresBinDir: options.postgresBinDir, env });
    postgresUser();
  }
  const binaries = await resolveTemporalPostgres({ ...options, env, log, progress });
  let cluster: ThrowawayPostgres | undefined;
  let postgres: PostgresConnection;
  if (given) {
    postgres = given;
  } else {
    cluster = await startThrowawayPostgres(options, env, progress, timeoutMs);
    postgres = cluster.connection;
  }
  // The config files sit in the cluster's folder, or a folder of their own beside a given PostgreSQL.
  const configDir = cluster
    ? join(cluster.dir, 'temporal')
    : mkdtempSync(join(tmpdir(), 'temporal-postgres-config-'));
  let server: TemporalServerProcess | undefined;
  // A process that exits without stop() (an uncaught error) leaves no server, no PostgreSQL, no temp folder.
  const killOnExit = () => {
    server?.killNow();
    cluster?.killNow();
    cluster?.remove();
  };
  process.once('exit', killOnExit);
  const stop = async () => {
    process.removeListener('exit', killOnExit);
    await server?.stop();
    await cluster?.stop();
    cluster?.remove();
    if (!cluster) rmSync(configDir, { recursive: true, force: true });
  };
  try {
    server = await prepareServer(binaries, postgres, configDir, namespace, options, env, progress);
    await server.start(progress, timeoutMs);
  } catch (err) {
    await stop();
    throw err;
  }
  progress.log(
    `Temporal server ${TEMPORAL_POSTGRES_SERVER_VERSION} on PostgreSQL ${postgres.host}:${postgres.port}` +
      `${cluster ? ` (throwaway cluster in ${cluster.dir})` : ''} on ${server.address}`,
    log,
  );
  return serverHandle(server, { binaries, postgres, namespace, cluster, stop, progress, timeoutMs });
}

/** The databases set up and the config written: a server ready to start. */
async function prepareServer(
  binaries: TemporalPostgresBinaries,
  postgres: PostgresConnection,
  configDir: string,
  namespace: string,
  options: PostgresServerOptions,
  env: NodeJS.ProcessEnv,
  progress: WaitProgress,
): Promise<TemporalServerProcess> {
  const databases = {
    database: options.database ?? 'temporal',
    visibilityDatabase: options.visibilityDatabase ?? 'temporal_visibility',
  };
  await progress.track('Setting up the Temporal databases (temporal-sql-tool)', (wait) =>
    setupDatabases(binaries.sqlTool, postgres, databases, env, wait),
  );
  const address = await writeServerConfig(configDir, postgres, options);
  return new TemporalServerProcess(binaries.server, configDir, address, namespace, env);
}

function serverHandle(
  server: TemporalServerProcess,
  parts: {
    binaries: TemporalPostgresBinaries;
    postgres: PostgresConnection;
    namespace: string;
    cluster: ThrowawayPostgres | undefined;
    stop: () => Promise<void>;
    progress: WaitProgress;
    timeoutMs: number;
  },
): PostgresTemporalServer {
  const { cluster, progress, timeoutMs } = parts;
  const noCluster = async () => {
    throw new Error(
      'this PostgreSQL was given (SUBAGENTS_POSTGRES_URL or options.postgres): not ours to stop',
    );
  };
  return {
    address: server.address,
    namespace: parts.namespace,
    source: 'postgres',
    postgres: parts.postgres,
    binary: parts.binaries.server,
    sqlTool: parts.binaries.sqlTool,
    ...(cluster && { dataDir: cluster.dir }),
    stop: parts.stop,
    stopTemporal: () => server.stop(),
    startTemporal: () => server.start(progress, timeoutMs),
    stopPostgres: cluster ? () => cluster.stop() : noCluster,
    startPostgres: cluster
      ? () => progress.track('Starting PostgreSQL again', (wait) => cluster.start(timeoutMs, wait))
      : noCluster,
  };
}
