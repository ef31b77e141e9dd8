#!/usr/bin/env node
/**
 * `subagents`: the command line. Every failure a user can cause ends with one line on stderr and a non-zero
 * exit, never a stack trace.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { NativeConnection, Runtime, DefaultLogger } from '@temporalio/worker';
import { ConfigError } from '../contracts/config';
import { loadConfig, type LoadedConfig } from '../worker/config';
import { resolveTemporalCli, TemporalCliNotFoundError, missingCliMessage } from '../worker/temporal-cli';
import { connectOrStartServer, startDevServer, type TemporalServer } from '../worker/temporal-server';
import { createProjectWorker, DEFAULT_TASK_QUEUE } from '../worker/worker';
import { runDemo } from './demo';

export class CliError extends Error {
  override name = 'CliError';
}

const USAGE = `Usage: subagents <command> [options]

Commands:
  start [--once]            embedded Temporal dev server + a worker + the offline demo; keeps the
                            server up for the Web UI until Ctrl-C (--once: exit when the demo ends)
  worker [--address H:P]    a long-running worker on the project's task queue
  dev-server [--port N] [--ui-port N] [--db-filename F]
                            the Temporal dev server with the Web UI, in the foreground
  ensure-temporal           find or build the Temporal CLI (cached) and print its path

Common options:
  --config FILE             a config.yaml (DeerFlow's keys; see config.example.yaml)
  --help                    this text`;

type Options = ParseArgsConfig['options'];

const COMMON: Options = {
  config: { type: 'string' },
  help: { type: 'boolean' },
};

function parse(args: string[], options: Options) {
  try {
    return parseArgs({ args, options: { ...COMMON, ...options }, allowPositionals: false, strict: true })
      .values;
  } catch (err) {
    throw new CliError(err instanceof Error ? err.message : String(err));
  }
}

function port(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1 || parsed > 65535) {
    throw new CliError(`--${name}: ${String(value)} is not a port number (1–65535)`);
  }
  return parsed;
}

function config(values: Record<string, unknown>): LoadedConfig {
  const loaded = loadConfig(typeof values.config === 'string' ? values.config : undefined);
  for (const warning of loaded.warnings) process.stderr.write(`warning: ${warning}\n`);
  return loaded;
}

const say = (line: string) => process.stderr.write(`${line}\n`);

function untilInterrupted(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
}

async function withServerAndWorker<T>(
  server: TemporalServer,
  taskQueue: string,
  body: () => Promise<T>,
): Promise<T> {
  const connection = await NativeConnection.connect({ address: server.address });
  try {
    const worker = await createProjectWorker({ connection, namespace: server.namespace, taskQueue });
    return await worker.runUntil(body());
  } finally {
    await connection.close();
  }
}

async function start(args: string[]): Promise<number> {
  const values = parse(args, { once: { type: 'boolean' } });
  const { config: cfg } = config(values);
  const server = await connectOrStartServer({ log: say });
  try {
    const taskQueue = cfg.temporal.task_queue ?? DEFAULT_TASK_QUEUE;
    say(`Worker polling task queue "${taskQueue}" on ${server.address}.`);
    const ok = await withServerAndWorker(server, taskQueue, () =>
      runDemo({ server, taskQueue, config: cfg, out: process.stdout }),
    );
    if (!values.once && server.uiUrl) {
      say(`\nThe server stays up for the Web UI: ${server.uiUrl} (Ctrl-C to stop).`);
      await untilInterrupted();
    }
    return ok ? 0 : 1;
  } finally {
    await server.stop();
  }
}

async function worker(args: string[]): Promise<number> {
  const values = parse(args, { address: { type: 'string' }, 'task-queue': { type: 'string' } });
  const { config: cfg } = config(values);
  const address =
    (values.address as string | undefined) ?? cfg.temporal.address ?? process.env.TEMPORAL_ADDRESS;
  if (!address)
    throw new CliError(
      'worker: no server address (--address HOST:PORT, temporal.address or TEMPORAL_ADDRESS)',
    );
  const taskQueue =
    (values['task-queue'] as string | undefined) ?? cfg.temporal.task_queue ?? DEFAULT_TASK_QUEUE;
  const connection = await connectNative(address);
  try {
    const w = await createProjectWorker({ connection, namespace: cfg.temporal.namespace, taskQueue });
    say(`Worker polling task queue "${taskQueue}" on ${address} (Ctrl-C to stop).`);
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => w.shutdown());
    await w.run();
    return 0;
  } finally {
    await connection.close();
  }
}

async function connectNative(address: string): Promise<NativeConnection> {
  try {
    return await NativeConnection.connect({ address });
  } catch (err) {
    throw new CliError(
      `cannot reach the Temporal server at ${address}: ${err instanceof Error ? err.message : err}`,
    );
  }
}

async function devServer(args: string[]): Promise<number> {
  const values = parse(args, {
    port: { type: 'string' },
    'ui-port': { type: 'string' },
    'db-filename': { type: 'string' },
  });
  const server = await startDevServer({
    port: port('port', values.port),
    uiPort: port('ui-port', values['ui-port']),
    dbFilename: values['db-filename'] as string | undefined,
    log: say,
  });
  say(
    `Temporal dev server on ${server.address}${server.uiUrl ? `, Web UI ${server.uiUrl}` : ''} (Ctrl-C to stop).`,
  );
  process.stdout.write(`${JSON.stringify({ address: server.address, ui_url: server.uiUrl })}\n`);
  await untilInterrupted();
  await server.stop();
  return 0;
}

async function ensureTemporal(args: string[]): Promise<number> {
  parse(args, {});
  const cli = await resolveTemporalCli({ log: say });
  if (!cli) throw new CliError(missingCliMessage());
  process.stdout.write(`${cli.path}\n`);
  say(`Temporal CLI (${cli.source}): ${cli.path}`);
  return 0;
}

const COMMANDS: Record<string, (args: string[]) => Promise<number>> = {
  start,
  worker,
  'dev-server': devServer,
  'ensure-temporal': ensureTemporal,
};

export async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (command === undefined || command === '--help' || command === 'help' || args.includes('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return command === undefined ? 2 : 0;
  }
  const run = COMMANDS[command];
  if (!run)
    throw new CliError(`unknown command "${command}" (${Object.keys(COMMANDS).join(', ')}; --help for more)`);
  Runtime.install({ logger: new DefaultLogger('WARN') });
  return run(args);
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      const known =
        err instanceof CliError || err instanceof ConfigError || err instanceof TemporalCliNotFoundError;
      const message = err instanceof Error ? err.message : String(err);
      process.stderr.write(`subagents: ${known ? message : `unexpected error: ${message}`}\n`);
      if (!known && process.env.DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
      process.exit(1);
    },
  );
}
