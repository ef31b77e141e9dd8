/**
 * A real Temporal server on PostgreSQL, started from here: the PostgreSQL-backed counterpart of the embedded
 * dev server (temporal-server.ts), for tests and load benchmarks that want the persistence a production
 * cluster has rather than SQLite.
 *
 * Three pieces, each found or made once:
 * - PostgreSQL: a throwaway cluster (`initdb` into a temp folder, `postgres` on a free loopback port) from the
 *   server binaries of the machine (Debian/Ubuntu's `postgresql` package puts them in
 *   /usr/lib/postgresql/<major>/bin), or a running one given by `SUBAGENTS_POSTGRES_URL` or the options.
 *   PostgreSQL refuses to run as root: as root the cluster runs as the `postgres` user the package creates.
 * - The server: `deploy/temporal-postgres`, a Go program on the Temporal server library (1.29.1), built with
 *   `go build` into `<cache>/temporal-postgres/<server version>-<source hash>/` on first use (minutes; the
 *   module's README has the figures), or the binary `SUBAGENTS_TEMPORAL_POSTGRES` names.
 * - Its state: the program creates the databases and their schemas when missing, registers the namespace
 *   and the project's search attributes, and reads this project's dynamic config (PROJECT_DYNAMIC_CONFIG)
 *   from a file written here.
 *
 * `stopTemporal()`/`startTemporal()` and `stopPostgres()`/`startPostgres()` restart either on the same data
 * (the server on the same port), which is what a durability test needs; `stop()` stops both and removes a
 * throwaway cluster.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { DEFAULT_NAMESPACE } from '../contracts/config/temporal';
import { SEARCH_ATTRIBUTES } from '../contracts/search-attributes';
import { connectChecked } from '../client/server-probe';
import { lastLine, partialName, removeStalePartials, runTool } from './temporal-cli-builds';
import { goBuildProgress } from './temporal-cli-go';
import { cacheRoot } from '../payloads/cache-root';
import { isExecutable, whichSync } from './temporal-cli';
import { freePort, keepOutputTail, PROJECT_DYNAMIC_CONFIG, type TemporalServer } from './temporal-server';
import { formatElapsed, waitProgress, type WaitHandle, type WaitProgress } from '../worker/wait-progress';

/** The Temporal server library version deploy/temporal-postgres builds against (its go.mod). */
export const TEMPORAL_POSTGRES_SERVER_VERSION = '1.29.1';

/** The Go program's source folder, from dist/devserver/ or devserver/. */
export const TEMPORAL_POSTGRES_SOURCE = join(__dirname, '..', '..', 'deploy', 'temporal-postgres');

const LOOPBACK = '127.0.0.1';
const BINARY = 'temporal-postgres';
/** Packages in the build (`go list -deps`: 1,255 with the standard library); `go build -v` names fewer when warm. */
const COLD_BUILD_PACKAGES = 1255;

/**
 * Over PROJECT_DYNAMIC_CONFIG on PostgreSQL. Its schema stores workflow ids as VARCHAR(255) (SQLite does not
 * enforce a length): a longer id passes the server's 2,000-character check, then fails in the database with
 * an UNAVAILABLE error, and a child workflow's start is retried by the server without end, its parent waiting
 * (measured: a lead whose child id had 257 characters still waited after 60 s). The server's own limit at 255
 * refuses such an id at once, with a message that says why.
 */
export const POSTGRES_DYNAMIC_CONFIG: Record<string, unknown> = { 'limit.maxIDLength': 255 };

/** Where a PostgreSQL server is, and who to log in as. */
export interface PostgresConnection {
  host: string;
  port: number;
  user: string;
  password?: string;
}

export interface PostgresServerOptions {
  /**
   * A running PostgreSQL to use instead of a throwaway cluster (default: `SUBAGENTS_POSTGRES_URL`,
   * `postgres://user:password@host:port`). Its user needs CREATEDB, or the databases must exist.
   */
  postgres?: PostgresConnection;
  /**
   * The throwaway cluster's folder: given, it is kept (and reused when it holds a cluster); omitted, a temp
   * folder that `stop()` removes.
   */
  dataDir?: string;
  /** Folder holding `initdb` and `postgres` (default: `SUBAGENTS_POSTGRES_BINDIR`, then the usual places). */
  postgresBinDir?: string;
  /** Extra `postgres -c` settings of the throwaway cluster. */
  postgresSettings?: Record<string, string | number>;
  /** The persistence and visibility databases (default `temporal`, `temporal_visibility`). */
  database?: string;
  visibilityDatabase?: string;
  /** Frontend gRPC port; a free one when omitted (kept across `startTemporal()`). */
  port?: number;
  namespace?: string;
  /** Dynamic config over PROJECT_DYNAMIC_CONFIG (key → value). */
  dynamicConfig?: Record<string, unknown>;
  /** History shards, fixed by the first start on a database (default 4). */
  numHistoryShards?: number;
  /** Server log level (`warn` by default). */
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** The built server binary (default: `SUBAGENTS_TEMPORAL_POSTGRES`, else built with Go into the cache). */
  binary?: string;
  /** The Go program's source (default: deploy/temporal-postgres of this checkout). */
  sourceDir?: string;
  /** Result lines. */
  log?: (line: string) => void;
  progress?: WaitProgress;
  /** How long to wait for PostgreSQL and for the server to answer, each (default 120 s). */
  startTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

export interface PostgresTemporalServer extends TemporalServer {
  source: 'postgres';
  /** The PostgreSQL the server uses. */
  postgres: PostgresConnection;
  /** The server binary that runs. */
  binary: string;
  /** The throwaway cluster's folder, if this started one. */
  dataDir?: string;
  /** Stops the Temporal server only (SIGTERM, then SIGKILL after 15 s). */
  stopTemporal(): Promise<void>;
  /** Starts the Temporal server again, on the same port and databases. */
  startTemporal(): Promise<void>;
  /** Stops the throwaway PostgreSQL (fast shutdown); an error for a PostgreSQL this did not start. */
  stopPostgres(): Promise<void>;
  /** Starts the throwaway PostgreSQL again on its folder and port. */
  startPostgres(): Promise<void>;
}

/**
 * A piece this machine lacks (no PostgreSQL server binaries, no `postgres` user to run them as root, no Go to
 * build the server): the message says the fix. A setting that points at something wrong, a build or a start
 * that fails, is a plain Error.
 */
export class PostgresServerUnavailableError extends Error {
  override name = 'PostgresServerUnavailableError';
}

/** A process this module started, with the tail of its output kept for error messages. */
interface Child {
  process: ChildProcess;
  output: string[];
  exited: Promise<void>;
}

/** `postgres://user:password@host:port` → a connection. */
export function parsePostgresUrl(text: string): PostgresConnection {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`SUBAGENTS_POSTGRES_URL: "${text}" is not a URL (postgres://user:password@host:port)`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new Error(
      `SUBAGENTS_POSTGRES_URL: expected postgres://user:password@host:port, got ${url.protocol}`,
    );
  }
  return {
    host: url.hostname || LOOPBACK,
    port: url.port ? Number(url.port) : 5432,
    user: decodeURIComponent(url.username) || 'postgres',
    ...(url.password && { password: decodeURIComponent(url.password) }),
  };
}

/**
 * The folder with PostgreSQL's `initdb` and `postgres`: the option, `SUBAGENTS_POSTGRES_BINDIR`, Debian's
 * /usr/lib/postgresql/<major>/bin (newest major first), then both on PATH. Throws what it looked at and how
 * to install them.
 */
export function findPostgresBinDir(
  options: { postgresBinDir?: string; env?: NodeJS.ProcessEnv } = {},
): string {
  const env = options.env ?? process.env;
  const has = (dir: string) => isExecutable(join(dir, 'initdb')) && isExecutable(join(dir, 'postgres'));
  const given = options.postgresBinDir ?? env.SUBAGENTS_POSTGRES_BINDIR;
  if (given) {
    if (has(given)) return given;
    // A setting that is wrong is an error to fix, not a machine without PostgreSQL.
    throw new Error(
      `${given} (${options.postgresBinDir ? 'postgresBinDir' : 'SUBAGENTS_POSTGRES_BINDIR'}) holds no ` +
        'executable initdb and postgres',
    );
  }
  const debian = '/usr/lib/postgresql';
  let majors: string[] = [];
  try {
    majors = readdirSync(debian)
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
  } catch {
    // No Debian layout.
  }
  for (const major of majors) {
    const dir = join(debian, major, 'bin');
    if (has(dir)) return dir;
  }
  // Both from one folder (initdb starts the `postgres` beside it).
  const initdb = whichSync('initdb', env);
  if (initdb && has(dirname(initdb))) return dirname(initdb);
  throw new PostgresServerUnavailableError(
    `no PostgreSQL server binaries (initdb, postgres): none in ${debian}/<major>/bin nor on PATH. Install ` +
      'them (Debian/Ubuntu: apt-get install postgresql; macOS: brew install postgresql), set ' +
      'SUBAGENTS_POSTGRES_BINDIR to their folder, or point SUBAGENTS_POSTGRES_URL at a running PostgreSQL ' +
      '(postgres://user:password@host:port)',
  );
}

/** The uid and gid PostgreSQL runs as when this process is root (PostgreSQL refuses root). */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  let passwd = '';
  try {
    passwd = readFileSync('/etc/passwd', 'utf8');
  } catch {
    // Reported below.
  }
  const entry = passwd.split('\n').find((line) => line.startsWith('postgres:'));
  const [, , uid, gid] = entry?.split(':') ?? [];
  if (uid === undefined || gid === undefined) {
    throw new PostgresServerUnavailableError(
      'PostgreSQL refuses to run as root and there is no `postgres` user to run it as (the postgresql ' +
        'package creates one; or: useradd --system postgres), or run this as another user',
    );
  }
  return { uid: Number(uid), gid: Number(gid) };
}

/** A short hash of the Go program's source (main.go, go.mod, go.sum): a changed program is built anew. */
export function sourceHash(sourceDir: string): string {
  const hash = createHash('sha256');
  for (const name of ['go.mod', 'go.sum', 'main.go']) {
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

/**
 * Why a PostgreSQL-backed server cannot be started here, without starting or building anything (no
 * PostgreSQL binaries and no SUBAGENTS_POSTGRES_URL, root without a `postgres` user, no built binary and no
 * Go), with the fix; undefined when it can.
 */
export function postgresServerMissing(
  options: Pick<PostgresServerOptions, 'postgres' | 'postgresBinDir' | 'binary' | 'sourceDir' | 'env'> = {},
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
  if (options.binary ?? env.SUBAGENTS_TEMPORAL_POSTGRES) return undefined;
  const sourceDir = options.sourceDir ?? TEMPORAL_POSTGRES_SOURCE;
  if (isExecutable(join(temporalPostgresCacheDir(env, sourceDir), BINARY))) return undefined;
  return whichSync('go', env) ? undefined : noGoMessage(sourceDir);
}

function noGoMessage(sourceDir: string): string {
  return (
    `the Temporal server for PostgreSQL is built from ${sourceDir} with Go, and there is no \`go\` on PATH: ` +
    'install Go 1.21 or newer (it fetches the 1.25 toolchain the module asks for through the Go module ' +
    'proxy), or set SUBAGENTS_TEMPORAL_POSTGRES to a binary built elsewhere (go build in that folder)'
  );
}

/**
 * The server binary: `SUBAGENTS_TEMPORAL_POSTGRES` (or the option), the cache, else `go build` into the
 * cache. Throws, with the fix, where there is no Go.
 */
export async function resolveTemporalPostgres(
  options: Pick<PostgresServerOptions, 'binary' | 'sourceDir' | 'env' | 'log' | 'progress'> = {},
): Promise<{ path: string; built: boolean }> {
  const env = options.env ?? process.env;
  const given = options.binary ?? env.SUBAGENTS_TEMPORAL_POSTGRES;
  if (given) {
    if (!isExecutable(given)) {
      throw new Error(`${given} (SUBAGENTS_TEMPORAL_POSTGRES) is not an executable file`);
    }
    return { path: given, built: false };
  }
  const sourceDir = options.sourceDir ?? TEMPORAL_POSTGRES_SOURCE;
  const dir = temporalPostgresCacheDir(env, sourceDir);
  const path = join(dir, BINARY);
  if (isExecutable(path)) return { path, built: false };
  const go = whichSync('go', env);
  if (!go) throw new PostgresServerUnavailableError(noGoMessage(sourceDir));
  const progress = options.progress ?? waitProgress();
  await progress.track(
    `Building the Temporal server ${TEMPORAL_POSTGRES_SERVER_VERSION} for PostgreSQL with Go (once, minutes)`,
    (wait) => goBuild(go, sourceDir, dir, env, wait),
    {
      doneLine: (_value, elapsedMs) =>
        `Temporal server for PostgreSQL built in ${formatElapsed(elapsedMs)}: ${path}`,
      log: options.log,
    },
  );
  return { path, built: true };
}

async function goBuild(go: string, sourceDir: string, dir: string, env: NodeJS.ProcessEnv, wait: WaitHandle) {
  mkdirSync(dir, { recursive: true });
  removeStalePartials(dir);
  // Built beside the cache entry, moved into place once it runs: a killed build leaves no half binary there.
  const partial = mkdtempSync(join(dir, partialName('go-build')));
  try {
    const output = join(partial, BINARY);
    wait.update(`go build in ${sourceDir}`);
    // `-C`: build the module of that folder (its go.sum pins every dependency).
    const args = ['build', '-C', sourceDir, '-v', '-o', output, '.'];
    const build = await runTool(go, args, {
      env,
      timeoutMs: 30 * 60_000,
      onStderrLine: goBuildProgress(wait, COLD_BUILD_PACKAGES),
    });
    if (build.code !== 0) {
      throw new Error(
        `go build in ${sourceDir} ${build.timedOut ? 'did not finish within 30 minutes' : `failed (exit ${build.code}): ${lastLine(build.stderr)}`}` +
          ' (is the Go module proxy reachable? see GOPROXY)',
      );
    }
    const version = await runTool(output, ['-version'], { env, timeoutMs: 30_000 });
    const expected = `server ${TEMPORAL_POSTGRES_SERVER_VERSION}`;
    if (version.code !== 0 || !version.stdout.includes(expected)) {
      throw new Error(
        `the binary built in ${sourceDir} says "${version.stdout.trim() || lastLine(version.stderr)}", expected "${expected}"`,
      );
    }
    // Same file system (the partial folder is inside `dir`): one atomic step.
    renameSync(output, join(dir, BINARY));
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
}

/** Spawns a process that keeps its last lines of output; `exited` settles when it ends. */
function spawnKept(
  command: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string; uid?: number; gid?: number },
): Child {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = keepOutputTail(child);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', (err) => {
      output.push(`cannot run ${command}: ${err.message}\n`);
      resolve();
    });
  });
  return { process: child, output, exited };
}

/** Whether `text` has appeared in the process's output since this call (a line the tail may have dropped). */
function watchFor(child: Child, text: string): () => boolean {
  let seen = false;
  let recent = '';
  const look = (chunk: Buffer) => {
    recent = (recent + chunk.toString('utf8')).slice(-2 * text.length - 4096);
    if (recent.includes(text)) seen = true;
  };
  child.process.stdout?.on('data', look);
  child.process.stderr?.on('data', look);
  return () => seen;
}

function tail(child: Child): string {
  return child.output.join('').trim().slice(-3000);
}

function running(child: Child | undefined): child is Child {
  return child !== undefined && child.process.exitCode === null && child.process.signalCode === null;
}

async function stopProcess(child: Child | undefined, signal: NodeJS.Signals, killAfterMs: number) {
  if (!running(child)) return;
  child.process.kill(signal);
  const timer = setTimeout(() => child.process.kill('SIGKILL'), killAfterMs);
  await child.exited;
  clearTimeout(timer);
}

/** Waits until `ready` says so, failing early with the process's output if it exits. */
async function waitReady(
  child: Child,
  what: string,
  timeoutMs: number,
  ready: () => Promise<boolean>,
  wait: WaitHandle,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void child.exited.then(() => (exited = true));
  while (Date.now() < deadline) {
    if (exited || !running(child)) {
      throw new Error(
        `${what} exited (code ${child.process.exitCode ?? child.process.signalCode}):\n${tail(child)}`,
      );
    }
    wait.update(`waiting for ${what}`);
    if (await ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what} did not answer within ${timeoutMs} ms:\n${tail(child)}`);
}

/** A throwaway PostgreSQL cluster: `initdb` once, `postgres` on a loopback port, restartable. */
class ThrowawayPostgres {
  private child: Child | undefined;
  readonly connection: PostgresConnection;

  private constructor(
    private readonly binDir: string,
    readonly dir: string,
    private readonly owned: boolean,
    private readonly settings: Record<string, string | number>,
    private readonly user: { uid: number; gid: number } | undefined,
    port: number,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.connection = { host: LOOPBACK, port, user: 'postgres' };
  }

  static async create(options: PostgresServerOptions, env: NodeJS.ProcessEnv, wait: WaitHandle) {
    const binDir = findPostgresBinDir({ postgresBinDir: options.postgresBinDir, env });
    const user = postgresUser();
    const owned = options.dataDir === undefined;
    const dir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'temporal-postgres-'));
    mkdirSync(dir, { recursive: true });
    if (user) chownSync(dir, user.uid, user.gid);
    const cluster = new ThrowawayPostgres(
      binDir,
      dir,
      owned,
      options.postgresSettings ?? {},
      user,
      await freePort(),
      env,
    );
    try {
      await cluster.initdb(wait);
    } catch (err) {
      cluster.remove();
      throw err;
    }
    return cluster;
  }

  private get dataDir(): string {
    return join(this.dir, 'data');
  }

  private spawnAs(command: string, args: string[]): Child {
    // LC_ALL=C: initdb takes the locale of its environment; C works everywhere and sorts bytewise.
    const env = { ...this.env, LC_ALL: 'C', LANG: 'C' };
    return spawnKept(join(this.binDir, command), args, { env, cwd: this.dir, ...this.user });
  }

  private async initdb(wait: WaitHandle): Promise<void> {
    // A folder given again holds its cluster already.
    if (existsSync(join(this.dataDir, 'PG_VERSION'))) return;
    wait.update(`initdb ${this.dataDir}`);
    const child = this.spawnAs('initdb', [
      '-D',
      this.dataDir,
      '--auth=trust',
      '--username=postgres',
      '--encoding=UTF8',
      '--no-sync',
    ]);
    await child.exited;
    if (child.process.exitCode !== 0) {
      throw new Error(
        `initdb ${this.dataDir} failed (exit ${child.process.exitCode ?? child.process.signalCode}):\n${tail(child)}`,
      );
    }
  }

  async start(timeoutMs: number, wait: WaitHandle): Promise<void> {
    if (running(this.child)) return;
    const settings: Record<string, string | number> = {
      listen_addresses: LOOPBACK,
      port: this.connection.port,
      // No Unix socket: /var/run/postgresql may not be writable, and TCP on loopback is all the server uses.
      unix_socket_directories: '',
      // Each of the four Temporal services opens pools of its own (29 connections under load here): room for
      // a second server on the same cluster.
      max_connections: 200,
      ...this.settings,
    };
    const args = ['-D', this.dataDir, ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
    const child = this.spawnAs('postgres', args);
    this.child = child;
    const ready = watchFor(child, 'database system is ready to accept connections');
    await waitReady(
      child,
      `PostgreSQL on ${LOOPBACK}:${this.connection.port}`,
      timeoutMs,
      async () => ready(),
      wait,
    ).catch(async (err) => {
      await this.stop();
      throw err;
    });
  }

  /** Fast shutdown: open transactions roll back, everything committed is on disk. */
  async stop(): Promise<void> {
    await stopProcess(this.child, 'SIGINT', 30_000);
  }

  /** The last-resort stop at process exit: immediate shutdown, no wait. */
  killNow(): void {
    if (running(this.child)) this.child.process.kill('SIGQUIT');
  }

  remove(): void {
    if (this.owned) rmSync(this.dir, { recursive: true, force: true });
  }
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
  const database = options.database ?? 'temporal';
  const visibilityDatabase = options.visibilityDatabase ?? 'temporal_visibility';

  // What is missing is said before anything starts: the PostgreSQL binaries first, then the (long) build.
  const given =
    options.postgres ??
    (env.SUBAGENTS_POSTGRES_URL ? parsePostgresUrl(env.SUBAGENTS_POSTGRES_URL) : undefined);
  if (!given) {
    findPostgresBinDir({ postgresBinDir: options.postgresBinDir, env });
    postgresUser();
  }
  const { path: binary } = await resolveTemporalPostgres({ ...options, env, log, progress });

  let cluster: ThrowawayPostgres | undefined;
  let postgres: PostgresConnection;
  if (given) {
    postgres = given;
  } else {
    const started = await progress.track('Starting a throwaway PostgreSQL', async (wait) => {
      const created = await ThrowawayPostgres.create(options, env, wait);
      try {
        await created.start(timeoutMs, wait);
      } catch (err) {
        created.remove();
        throw err;
      }
      return created;
    });
    cluster = started;
    postgres = started.connection;
  }
  // The dynamic config file sits in the cluster's folder, or a folder of its own beside a given PostgreSQL.
  const configDir = cluster?.dir ?? mkdtempSync(join(tmpdir(), 'temporal-postgres-config-'));
  const dynamicConfigFile = join(configDir, 'dynamic-config.yaml');
  const dynamicConfig = { ...PROJECT_DYNAMIC_CONFIG, ...POSTGRES_DYNAMIC_CONFIG, ...options.dynamicConfig };
  writeFileSync(
    dynamicConfigFile,
    stringify(Object.fromEntries(Object.entries(dynamicConfig).map(([key, value]) => [key, [{ value }]]))),
  );

  const port = options.port ?? (await freePort());
  const address = `${LOOPBACK}:${port}`;
  const args = [
    '-auto-setup',
    '-ip',
    LOOPBACK,
    '-port',
    String(port),
    '-sql-host',
    postgres.host,
    '-sql-port',
    String(postgres.port),
    '-sql-user',
    postgres.user,
    '-database',
    database,
    '-visibility-database',
    visibilityDatabase,
    '-namespace',
    namespace,
    '-dynamic-config-file',
    dynamicConfigFile,
    '-num-history-shards',
    String(options.numHistoryShards ?? 4),
    '-log-level',
    options.logLevel ?? 'warn',
    ...Object.entries(SEARCH_ATTRIBUTES).flatMap(([name, type]) => ['-search-attribute', `${name}=${type}`]),
  ];
  // The password goes by environment, not on the command line (which `ps` shows).
  const serverEnv = { ...env, SQL_PASSWORD: postgres.password ?? '' };

  let server: Child | undefined;
  // A process that exits without stop() (an uncaught error) leaves no server, no PostgreSQL, no temp folder.
  const killOnExit = () => {
    if (running(server)) server.process.kill('SIGKILL');
    cluster?.killNow();
    cluster?.remove();
  };
  process.once('exit', killOnExit);

  const startTemporal = async () => {
    if (running(server)) return;
    const child = spawnKept(binary, args, { env: serverEnv });
    server = child;
    // Printed once the namespace and the search attributes are registered.
    const serving = watchFor(child, 'temporal-postgres: serving');
    await progress
      .track('Starting the Temporal server on PostgreSQL', (wait) =>
        waitReady(
          child,
          `the Temporal server on ${address}`,
          timeoutMs,
          async () => {
            if (!serving()) return false;
            try {
              await (await connectChecked({ address, connectTimeout: 1000 }, namespace)).close();
              return true;
            } catch {
              return false;
            }
          },
          wait,
        ),
      )
      .catch(async (err) => {
        await stopProcess(child, 'SIGTERM', 15_000);
        throw err;
      });
  };
  const stopTemporal = () => stopProcess(server, 'SIGTERM', 15_000);
  const noCluster = async () => {
    throw new Error(
      'this PostgreSQL was given (SUBAGENTS_POSTGRES_URL or options.postgres): not ours to stop',
    );
  };
  const stop = async () => {
    process.removeListener('exit', killOnExit);
    await stopTemporal();
    await cluster?.stop();
    cluster?.remove();
    if (!cluster) rmSync(configDir, { recursive: true, force: true });
  };

  try {
    await startTemporal();
  } catch (err) {
    await stop();
    throw err;
  }
  progress.log(
    `Temporal server ${TEMPORAL_POSTGRES_SERVER_VERSION} on PostgreSQL ${postgres.host}:${postgres.port}` +
      `${cluster ? ` (throwaway cluster in ${cluster.dir})` : ''} on ${address}`,
    log,
  );
  return {
    address,
    namespace,
    source: 'postgres',
    postgres,
    binary,
    ...(cluster && { dataDir: cluster.dir }),
    stop,
    stopTemporal,
    startTemporal,
    stopPostgres: cluster ? () => cluster.stop() : noCluster,
    startPostgres: cluster
      ? () => progress.track('Starting PostgreSQL again', (wait) => cluster.start(timeoutMs, wait))
      : noCluster,
  };
}
