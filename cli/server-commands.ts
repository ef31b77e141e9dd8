/** `subagents worker`, `subagents dev-server` and `subagents ensure-temporal`. */
import { resolve } from 'node:path';
import { startEmbeddedCodecServer } from '../payloads/codec-server';
import { readCliVersion } from '../devserver/temporal-cli-builds';
import {
  describeCliSource,
  missingCliMessage,
  resolveTemporalCli,
  TemporalCliNotFoundError,
} from '../devserver/temporal-cli';
import { DbLockedError } from '../devserver/dev-server-lock';
import { installRuntime } from '../worker/runtime';
import { startDevServer, type TemporalServer } from '../devserver/temporal-server';
import { untilShutdownRequested } from '../worker/shutdown';
import { configuredWorkerSettings, serveWorker } from '../worker/worker-main';
import { loadCommandConfig, requireServer } from './command-setup';
import { connectWorker } from '../client/worker-connection';
import { claimDevServerRecord, defaultDevServerDb } from '../devserver/dev-server-state';
import { integerFlag, parseFlags, stringFlag, UsageError } from './flags';

const say = (line: string) => process.stderr.write(`${line}\n`);

export async function workerCommand(args: string[]): Promise<number> {
  // --max-running, --max-runs: the bounds this worker declares to every run on its task queue (admission).
  // --metrics-port: its Prometheus endpoint (metrics.port).
  const { values, positionals } = parseFlags(
    args,
    { 'max-running': { type: 'string' }, 'max-runs': { type: 'string' }, 'metrics-port': { type: 'string' } },
    'worker',
  );
  if (positionals.length > 0)
    throw new UsageError(`worker: unexpected argument ${JSON.stringify(positionals[0])}`);
  const config = loadCommandConfig(values);
  // The one command that installs the runtime itself (cli/cli.ts): its endpoint comes from the config.
  installRuntime(undefined, { metrics: config.metrics });
  const settings = await requireServer('worker', config);
  const connection = await connectWorker(settings);
  try {
    await serveWorker({
      connection,
      address: settings.address,
      namespace: settings.namespace,
      taskQueue: settings.taskQueue,
      ...configuredWorkerSettings(config),
      say,
    });
    return 0;
  } finally {
    await connection.close();
  }
}

export async function devServerCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    args,
    { port: { type: 'string' }, 'ui-port': { type: 'string' }, 'db-filename': { type: 'string' } },
    'dev-server',
  );
  if (positionals.length > 0)
    throw new UsageError(`dev-server: unexpected argument ${JSON.stringify(positionals[0])}`);
  const config = loadCommandConfig(values);
  const dbFilename = resolve(stringFlag(values, 'db-filename') ?? defaultDevServerDb());
  // Listening from before the server starts: it runs in a process group of its own, so a Ctrl-C reaches
  // this process alone, which stops the server cleanly (its SQLite file closed) and erases its record.
  const stopRequested = untilShutdownRequested(say);
  // The Web UI decodes large payloads through this process: workers and clients share its payload store.
  const codec = await startEmbeddedCodecServer(config.payloads);
  let server: TemporalServer;
  try {
    server = await startDevServer({
      port: integerFlag(values, 'port', 1, 65535),
      uiPort: integerFlag(values, 'ui-port', 1, 65535),
      dbFilename,
      uiCodec: codec,
      log: say,
      ownProcessGroup: true,
    });
  } catch (err) {
    await codec?.close();
    if (!(err instanceof DbLockedError)) throw err;
    say(`subagents: dev-server: ${err.message}`);
    return 1;
  }
  try {
    const claim = await claimDevServerRecord({
      address: server.address,
      namespace: server.namespace,
      ...(server.uiUrl && { ui_url: server.uiUrl }),
      pid: process.pid,
    });
    try {
      say(
        `Temporal dev server on ${server.address}${server.uiUrl ? `, Web UI ${server.uiUrl}` : ''}` +
          `${codec ? `, codec endpoint ${codec.url}` : ''} (Ctrl-C to stop).`,
      );
      if (!claim.recorded) {
        say(
          `Other commands keep finding the dev server on ${claim.holder.address} (pid ${claim.holder.pid}); ` +
            `give them --address ${server.address} for this one.`,
        );
      }
      process.stdout.write(
        `${JSON.stringify({ address: server.address, ui_url: server.uiUrl, codec_endpoint: codec?.url })}\n`,
      );
      await stopRequested;
      return 0;
    } finally {
      if (claim.recorded) claim.forget();
    }
  } finally {
    await server.stop();
    await codec?.close();
  }
}

export async function ensureTemporalCommand(args: string[]): Promise<number> {
  parseFlags(args, {}, 'ensure-temporal');
  // Preparing ahead of time (CI, `npm run temporal:ensure`) moves a cache that holds only the older Go build
  // to the wheel's newer server.
  const { cli, tried } = await resolveTemporalCli({ log: say, preferNewest: true });
  if (!cli) throw new TemporalCliNotFoundError(missingCliMessage(tried));
  process.stdout.write(`${cli.path}\n`);
  say(`${await readCliVersion(cli.path)}: ${describeCliSource(cli)}`);
  return 0;
}
