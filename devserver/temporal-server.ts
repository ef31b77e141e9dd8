/**
 * The embedded Temporal dev server: one module used by the tests, `npm start` and the CLI.
 *
 * `temporal server start-dev` runs the real server (SQLite persistence, the Web UI) as a child process on
 * free loopback ports, with this project's search attributes registered. TEMPORAL_ADDRESS skips all of it
 * and uses a running server instead.
 *
 * Why a spawn of our own rather than the SDK's `TestWorkflowEnvironment.createLocal` with an `existing-path`
 * executable (which takes the same dbFilename, uiPort, search attributes and extra arguments): the SDK stops
 * its server with SIGKILL, so a `subagents dev-server` that keeps runs in a SQLite file would never shut down
 * cleanly; it gives a server 5 s to answer, fixed (a cold start on a busy two-core machine can take longer;
 * here the limit is 60 s and the wait shows progress); it checks the gRPC port only, where this also waits for
 * the namespace and the Web UI the run header links to; and it forwards the server's output to this
 * process's stdout and stderr, where this keeps it and shows its tail only when the server fails to start.
 * The SDK's server remains the last resort, for its download (startWithSdkDownload).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { DEFAULT_NAMESPACE } from '../contracts/config/temporal';
import { SEARCH_ATTRIBUTES } from '../contracts/search-attributes';
import { acquireDbLock } from './dev-server-lock';
import { connectChecked } from '../client/server-probe';
import { addMissingSearchAttributes } from './search-attributes';
import { cacheRoot } from '../payloads/cache-root';
import {
  missingCliMessage,
  resolveTemporalCli,
  TemporalCliNotFoundError,
  type CliSource,
  type ResolvedCli,
} from './temporal-cli';
import { waitProgress, type WaitHandle, type WaitProgress } from '../worker/wait-progress';

export interface DevServerOptions {
  /** Frontend gRPC port; a free one when omitted. */
  port?: number;
  /** Web UI port; a free one when omitted. */
  uiPort?: number;
  /** Run without the Web UI. */
  headless?: boolean;
  /**
   * The codec endpoint the Web UI decodes payloads with (payloads/codec-server.ts), given to the UI as
   * `--ui-codec-endpoint`. It answers no page it was not told of, so it is told the UI's origins before the
   * UI starts.
   */
  uiCodec?: UiCodecEndpoint;
  /**
   * SQLite file: the server's state survives a restart on the same file. In memory when omitted. One server a
   * file: a file another live server uses is refused (DbLockedError, devserver/dev-server-lock.ts).
   */
  dbFilename?: string;
  /** `--sqlite-pragma` entries (pragma → value) for the SQLite file (default: DEV_SERVER_SQLITE_PRAGMAS). */
  sqlitePragmas?: Record<string, string>;
  namespace?: string;
  /** Extra `--dynamic-config-value` entries (key → JSON value). */
  dynamicConfig?: Record<string, unknown>;
  /** Server log level (`warn` by default: the server is chatty). */
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** Result lines: where the CLI came from, where the server listens. */
  log?: (line: string) => void;
  /** Where the waits (fetching the CLI, starting the server) show progress; default: the process's, on stderr. */
  progress?: WaitProgress;
  /** How long to wait for the server to answer (default 60 s). */
  startTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /**
   * Spawn the server in a process group of its own, so a Ctrl-C in the terminal reaches this process only,
   * which then stops the server when it is done with it (a run being cancelled still needs it). Only for a
   * process that handles SIGINT and SIGTERM from before the server starts: one that dies of a signal
   * leaves such a server running.
   */
  ownProcessGroup?: boolean;
  /**
   * The server serves one run of this process and stops with it (`run`, `start --once`): its Go runtime holds
   * its heap near a small limit (ONE_SHOT_GO_ENV), unless the environment already sets GOGC or GOMEMLIMIT. A
   * server kept up for many runs keeps Go's defaults.
   */
  oneShot?: boolean;
}

/**
 * The Go runtime's settings for a one-shot server: a soft memory limit, so the collector runs before the heap
 * doubles. One fan-out run's server peaks ~20 MiB lower (~145 MiB, of which ~90 are the binary's own pages) for
 * ~0.5 s more of its CPU (BENCHMARKS.md, "Memory of one embedded run"); under the load of many runs it costs
 * 1.6–3× the server's CPU, which is why a server kept up does not get it.
 */
export const ONE_SHOT_GO_ENV: Readonly<Record<string, string>> = { GOMEMLIMIT: '64MiB' };

/** The environment a dev server is started with: `env`, and for a one-shot server ONE_SHOT_GO_ENV unless set. */
export function devServerEnv(env: NodeJS.ProcessEnv, oneShot: boolean): NodeJS.ProcessEnv {
  if (!oneShot || env.GOGC !== undefined || env.GOMEMLIMIT !== undefined) return env;
  return { ...env, ...ONE_SHOT_GO_ENV };
}

/** What the dev server needs of a codec endpoint: its URL, and to let the Web UI's pages call it. */
export interface UiCodecEndpoint {
  url: string;
  allowOrigins(origins: readonly string[]): void;
}

/** The origins of the Web UI's pages on `uiPort`, as a browser names them (both loopback spellings). */
export function webUiOrigins(uiPort: number): string[] {
  return [`http://${LOOPBACK}:${uiPort}`, `http://localhost:${uiPort}`];
}

/** The codec endpoint for a UI on `uiPort`, once it may answer the UI's pages; none when headless. */
function codecForUi(options: DevServerOptions, uiPort: number | undefined): string | undefined {
  if (uiPort === undefined || options.uiCodec === undefined) return undefined;
  options.uiCodec.allowOrigins(webUiOrigins(uiPort));
  return options.uiCodec.url;
}

export interface TemporalServer {
  /** host:port of the frontend. */
  address: string;
  namespace: string;
  /** The Web UI's base URL, when this process started a server with one. */
  uiUrl?: string;
  /** The codec endpoint the Web UI was pointed at, if any. */
  uiCodecEndpoint?: string;
  /**
   * How the server was obtained: a running one, a local binary, the SDK's download, or the server on
   * PostgreSQL that devserver/temporal-postgres.ts starts.
   */
  source: 'TEMPORAL_ADDRESS' | CliSource | 'sdk-download' | 'postgres';
  /** The server's process id, when this process spawned it (benchmarks read its memory and CPU). */
  pid?: number;
  /** Stops a server this process started (a no-op for TEMPORAL_ADDRESS). */
  stop(): Promise<void>;
}

/**
 * Dynamic config this project sets on the dev server. The CLI already makes new search attributes visible at
 * once; task-queue rate limits (UpdateTaskQueueConfig) need no flag on servers 1.29 and 1.32. Each key below
 * was checked to still act on server 1.32.0 (the wheel's) as on 1.29.1: with it, against the server's
 * default, a turn with an activity tool took 41 vs 200 ms, a delegation's overhead 74 vs 197 ms (p50, bench/
 * on a loaded two-core machine), and a 1,500-character workflow id was accepted vs refused.
 */
export const PROJECT_DYNAMIC_CONFIG: Record<string, unknown> = {
  // An agent turn is a model activity then a tool activity: handing the next activity back in the workflow
  // task's completion, instead of through matching, cuts a sequential activity from ~80 ms to ~30 ms here
  // (bench/turn-overhead.ts). Off by default on the server; a cluster operator sets the same key.
  'system.enableActivityEagerExecution': true,
  // The transfer queue (a child's start, a child's completion reaching its parent, a task handed to matching)
  // is read at most 20 times a second per shard by default: ~50 ms at every hand-off on a one-shard dev
  // server. 1000 cuts one delegation's overhead from ~195 ms to ~30 ms here (bench/delegation-overhead.ts).
  'history.transferProcessorMaxPollRPS': 1000,
  // One partition per task queue rather than four: on one server there is nothing to spread, and with four a
  // task often waits in a partition no poller is on, written to the database and read back. Under load
  // (bench/load.ts, 200 runs) this cuts the server's CPU a run by a fifth and lifts runs/s from 3.4 to 5.0 here;
  // it also makes a task queue's rate limit exact (a partition enforces its share of it). A cluster serving many
  // workers keeps more partitions; its operator sets these keys (deploy/temporal-postgres/README.md).
  'matching.numTaskqueueReadPartitions': 1,
  'matching.numTaskqueueWritePartitions': 1,
  // Child ids are `<lead id>/task/<tool_call_id>`, nested per depth: leave room beyond the 1,000-char default.
  'limit.maxIDLength': 2000,
};

/**
 * The dev server's SQLite file, journalled ahead of writes and synced at checkpoints rather than at every
 * commit. The server keeps one connection and commits a transaction for nearly every event it records, and
 * with SQLite's defaults (a rollback journal, a sync per commit) the file on disk was the bottleneck: under
 * load (bench/load.ts, BENCHMARKS.md "Scale") these double the runs a second and halve the server's CPU per run.
 * What they risk: nothing when a process dies (the server, a worker, this CLI: whatever was committed is in the
 * write-ahead log and is read back); after a power cut or a kernel crash, the last transactions committed
 * before it may be lost (the file stays consistent: it is never corrupted). The dev server is for one machine's
 * work; a deployment that must survive power loss runs a Temporal cluster on PostgreSQL, MySQL or Cassandra
 * (deploy/temporal-postgres/README.md), or passes `synchronous: 'FULL'` here (a sync per commit, kept WAL).
 */
export const DEV_SERVER_SQLITE_PRAGMAS: Readonly<Record<string, string>> = {
  journal_mode: 'WAL',
  synchronous: 'NORMAL',
};

const LOOPBACK = '127.0.0.1';

/** A port that was free a moment ago (the kernel picks it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, LOOPBACK, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('could not read the port the kernel picked'));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}

/** Uses TEMPORAL_ADDRESS when set, else starts the embedded dev server. */
export async function connectOrStartServer(options: DevServerOptions = {}): Promise<TemporalServer> {
  const env = options.env ?? process.env;
  if (env.TEMPORAL_ADDRESS) {
    return {
      address: env.TEMPORAL_ADDRESS,
      namespace: options.namespace ?? env.TEMPORAL_NAMESPACE ?? DEFAULT_NAMESPACE,
      source: 'TEMPORAL_ADDRESS',
      stop: async () => undefined,
    };
  }
  return startDevServer(options);
}

export async function startDevServer(options: DevServerOptions = {}): Promise<TemporalServer> {
  const lock = options.dbFilename === undefined ? undefined : acquireDbLock(options.dbFilename);
  if (!lock) return startServer(options);
  let server: TemporalServer;
  try {
    server = await startServer(options);
  } catch (err) {
    lock.release();
    throw err;
  }
  lock.update({
    address: server.address,
    ...(server.uiUrl && { ui_url: server.uiUrl }),
    ...(server.pid !== undefined && { server_pid: server.pid }),
  });
  const stopServer = server.stop;
  return {
    ...server,
    stop: async () => {
      await stopServer();
      lock.release();
    },
  };
}

/** How many times a start that may work again is tried in all. */
const START_ATTEMPTS = 3;

/**
 * The dev server picks the ports of its inner services (matching, history, membership) itself, as this module
 * picks the frontend's: a port free when picked can be taken by another process before it is bound. Such a
 * start fails with `address already in use`, or with a Go panic while the server is being built (a service
 * whose listener failed); it is tried again with fresh ports, which is all a person would do. A start refused
 * for any other reason (a bad flag, a locked file) is not.
 */
async function startServer(options: DevServerOptions): Promise<TemporalServer> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => undefined);
  const progress = options.progress ?? waitProgress();
  const { cli, tried } = await resolveTemporalCli({ env, log, progress });
  if (!cli) return startWithSdkDownload(options, tried);
  for (let attempt = 1; ; attempt++) {
    try {
      return await startCliServer(options, cli, progress, log);
    } catch (err) {
      if (attempt >= START_ATTEMPTS || !mayStartOnRetry(err)) throw err;
      const why = isPortClash(err) ? 'lost a port to another process' : 'crashed while starting';
      progress.log(`Temporal dev server ${why}; starting it again on other ports`, log);
    }
  }
}

const PORT_CLASH = /address already in use/;

/** A start that failed this way may well work when tried again (on other ports). */
export function mayStartOnRetry(err: unknown): boolean {
  return isPortClash(err) || (err instanceof DevServerExitedError && /^panic: /m.test(err.output));
}

export function isPortClash(err: unknown): boolean {
  if (err instanceof DevServerExitedError) return PORT_CLASH.test(err.output);
  return err instanceof Error && /exited with code/.test(err.message) && PORT_CLASH.test(err.message);
}

/** The server process ended before it served: its whole output kept, for deciding what went wrong. */
export class DevServerExitedError extends Error {
  constructor(
    readonly code: number | null,
    readonly output: string,
  ) {
    super(`temporal server start-dev exited with code ${code}:\n${startFailureText(output)}`);
    this.name = 'DevServerExitedError';
  }
}

/** Characters of a failed start's output a message shows: the lines that say why, then the tail. */
const FAILURE_TEXT_CHARS = 3000;

/**
 * What a failed start printed, short enough to read: all of it when short, else the lines that name the cause
 * (errors, the panic) and then the tail. A panic's goroutine dump alone would push the cause out of the tail.
 */
export function startFailureText(output: string): string {
  const text = output.trim();
  if (text.length <= FAILURE_TEXT_CHARS) return text;
  const causes = text
    .split('\n')
    .filter((line) => /level=(ERROR|FATAL)|^panic:|^Error:|address already in use/.test(line))
    .slice(0, 6)
    .map((line) => (line.length > 400 ? `${line.slice(0, 399)}…` : line));
  const tail = text.slice(-(FAILURE_TEXT_CHARS - causes.join('\n').length));
  return [...causes, '…', tail].join('\n');
}

async function startCliServer(
  options: DevServerOptions,
  cli: ResolvedCli,
  progress: WaitProgress,
  log: (line: string) => void,
): Promise<TemporalServer> {
  const env = options.env ?? process.env;

  const namespace = options.namespace ?? DEFAULT_NAMESPACE;
  const port = options.port ?? (await freePort());
  const uiPort = options.headless ? undefined : (options.uiPort ?? (await freePort()));
  const args = [
    'server',
    'start-dev',
    '--ip',
    LOOPBACK,
    '--port',
    String(port),
    '--http-port',
    String(await freePort()),
    '--metrics-port',
    String(await freePort()),
    '--namespace',
    namespace,
    '--log-level',
    options.logLevel ?? 'warn',
  ];
  if (uiPort === undefined) args.push('--headless');
  else args.push('--ui-ip', LOOPBACK, '--ui-port', String(uiPort));
  const uiCodecEndpoint = codecForUi(options, uiPort);
  if (uiCodecEndpoint) args.push('--ui-codec-endpoint', uiCodecEndpoint);
  if (options.dbFilename) {
    args.push('--db-filename', options.dbFilename);
    for (const [pragma, value] of Object.entries(options.sqlitePragmas ?? DEV_SERVER_SQLITE_PRAGMAS))
      args.push('--sqlite-pragma', `${pragma}=${value}`);
  }
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES))
    args.push('--search-attribute', `${name}=${type}`);
  for (const [key, value] of Object.entries({ ...PROJECT_DYNAMIC_CONFIG, ...options.dynamicConfig })) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }

  const child = spawn(cli.path, args, {
    env: devServerEnv(env, options.oneShot === true),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.ownProcessGroup === true,
  });
  const output = keepOutputTail(child);
  // A server left behind by a parent that exits normally would hold its ports and its SQLite lock.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const address = `${LOOPBACK}:${port}`;
  const uiUrl = uiPort === undefined ? undefined : `http://${LOOPBACK}:${uiPort}`;
  const stop = async () => {
    process.removeListener('exit', killOnExit);
    await stopChild(child);
  };
  try {
    await progress.track('Starting the Temporal dev server', (wait) =>
      waitUntilServing(child, address, namespace, uiUrl, options.startTimeoutMs ?? 60_000, output, wait),
    );
  } catch (err) {
    await stop();
    throw err;
  }
  progress.log(
    `Temporal dev server (${cli.source}: ${cli.path}) on ${address}` +
      (uiUrl ? `, Web UI ${uiUrl}` : '') +
      (uiCodecEndpoint ? ` (payloads decoded by ${uiCodecEndpoint})` : ''),
    log,
  );
  return { address, namespace, uiUrl, uiCodecEndpoint, source: cli.source, pid: child.pid, stop };
}

/** The last chunks a server process wrote (stdout and stderr), shown only when it fails to start. */
export function keepOutputTail(child: ChildProcess, chunks = 200): string[] {
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString('utf8'));
    if (output.length > chunks) output.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return output;
}

async function waitUntilServing(
  child: ChildProcess,
  address: string,
  namespace: string,
  uiUrl: string | undefined,
  timeoutMs: number,
  output: string[],
  wait: WaitHandle,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));
  let lastError = '';
  while (Date.now() < deadline) {
    if (exited !== undefined) {
      throw new DevServerExitedError(exited, output.join(''));
    }
    try {
      wait.update(`waiting for the frontend on ${address}`);
      const connection = await connectChecked({ address, connectTimeout: 1000 }, namespace);
      try {
        // A database kept from before one of them existed lacks it (the server registers them only when it
        // makes its database).
        await addMissingSearchAttributes(connection, namespace);
      } finally {
        await connection.close();
      }
      if (uiUrl) {
        wait.update(`waiting for the Web UI on ${uiUrl}`);
        const response = await fetch(uiUrl, { signal: AbortSignal.timeout(1000) });
        if (!response.ok) throw new Error(`Web UI answered ${response.status}`);
      }
      return;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  throw new Error(`Temporal dev server on ${address} did not answer within ${timeoutMs} ms: ${lastError}`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/**
 * Last resort on a machine that is online but has no binary, no Python and no Go: the SDK downloads the CLI.
 * The SDK starts that server itself (the module comment says what that costs).
 */
async function startWithSdkDownload(options: DevServerOptions, tried: string[]): Promise<TemporalServer> {
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  const progress = options.progress ?? waitProgress();
  const namespace = options.namespace ?? DEFAULT_NAMESPACE;
  const port = options.port ?? (await freePort());
  const uiPort = options.headless ? undefined : (options.uiPort ?? (await freePort()));
  const searchAttributes = Object.entries(SEARCH_ATTRIBUTES).map(([name, type]) => `${name}=${type}`);
  const uiCodecEndpoint = codecForUi(options, uiPort);
  const codecArgs = uiCodecEndpoint ? ['--ui-codec-endpoint', uiCodecEndpoint] : [];
  const dynamicConfigArgs = Object.entries({ ...PROJECT_DYNAMIC_CONFIG, ...options.dynamicConfig }).flatMap(
    ([key, value]) => ['--dynamic-config-value', `${key}=${JSON.stringify(value)}`],
  );
  const pragmaArgs = options.dbFilename
    ? Object.entries(options.sqlitePragmas ?? DEV_SERVER_SQLITE_PRAGMAS).flatMap(([pragma, value]) => [
        '--sqlite-pragma',
        `${pragma}=${value}`,
      ])
    : [];
  try {
    const testEnv = await progress.track('Downloading the Temporal CLI with the SDK and starting it', () =>
      TestWorkflowEnvironment.createLocal({
        server: {
          executable: { type: 'cached-download', downloadDir: join(cacheRoot(options.env), 'sdk-download') },
          ip: LOOPBACK,
          port,
          namespace,
          ui: uiPort !== undefined,
          uiPort,
          dbFilename: options.dbFilename,
          // The SDK forwards the server's output to this process's stdout: errors only.
          log: { format: 'pretty', level: 'error' },
          extraArgs: [
            ...searchAttributes.flatMap((sa) => ['--search-attribute', sa]),
            ...codecArgs,
            ...dynamicConfigArgs,
            ...pragmaArgs,
          ],
        },
      }),
    );
    progress.log(`Temporal dev server (SDK download) on ${LOOPBACK}:${port}`, options.log);
    return {
      address: `${LOOPBACK}:${port}`,
      namespace,
      uiUrl: uiPort === undefined ? undefined : `http://${LOOPBACK}:${uiPort}`,
      uiCodecEndpoint,
      source: 'sdk-download',
      stop: () => testEnv.teardown(),
    };
  } catch (err) {
    throw new TemporalCliNotFoundError(
      missingCliMessage(tried, err instanceof Error ? err.message : String(err)),
    );
  }
}
