/**
 * PostgreSQL for the PostgreSQL-backed Temporal server: a running one named by URL, or a throwaway cluster
 * (`initdb` into a folder, `postgres` on a free loopback port) from the machine's server binaries. Debian and
 * Ubuntu's `postgresql` package puts them in /usr/lib/postgresql/<major>/bin. PostgreSQL refuses to run as
 * root: as root the cluster runs as the `postgres` user the package creates.
 */
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { isExecutable, whichSync } from './temporal-cli';
import { freePort } from './temporal-server';
import {
  outputTail,
  running,
  spawnKept,
  stopProcess,
  waitReady,
  watchFor,
  type KeptProcess,
} from './kept-process';
import type { WaitHandle } from '../worker/wait-progress';

const LOOPBACK = '127.0.0.1';

/** Where a PostgreSQL server is, and who to log in as. */
export interface PostgresConnection {
  host: string;
  port: number;
  user: string;
  password?: string;
}

/**
 * A piece this machine lacks (no PostgreSQL server binaries, no `postgres` user to run them as root, no Go to
 * build the server): the message says the fix. A setting that points at something wrong, a build or a start
 * that fails, is a plain Error.
 */
export class PostgresServerUnavailableError extends Error {
  override name = 'PostgresServerUnavailableError';
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
export function postgresUser(): { uid: number; gid: number } | undefined {
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

export interface ThrowawayPostgresOptions {
  /** The cluster's folder: given, it is kept (and reused when it holds a cluster); omitted, a temp folder. */
  dataDir?: string;
  /** Folder holding `initdb` and `postgres` (default: `SUBAGENTS_POSTGRES_BINDIR`, then the usual places). */
  postgresBinDir?: string;
  /** Extra `postgres -c` settings. */
  postgresSettings?: Record<string, string | number>;
}

/** A throwaway PostgreSQL cluster: `initdb` once, `postgres` on a loopback port, restartable. */
export class ThrowawayPostgres {
  private child: KeptProcess | undefined;
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

  static async create(options: ThrowawayPostgresOptions, env: NodeJS.ProcessEnv, wait: WaitHandle) {
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

  private spawnAs(command: string, args: string[]): KeptProcess {
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
        `initdb ${this.dataDir} failed (exit ${child.process.exitCode ?? child.process.signalCode}):\n${outputTail(child)}`,
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
      // Each of the four Temporal services opens pools of its own: room for a second server on the cluster.
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
