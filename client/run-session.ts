/**
 * Where a lead run of `subagents run` or `subagents start` runs: on a server given by address (its workers
 * already polling) or embedded (a worker in this process, on the recorded dev server or a dev server of its
 * own), and what that means for following it, stopping it and reaching it from another terminal.
 */
import type { Client } from '@temporalio/client';
import type { Config } from '../contracts/config';
import { DEFAULT_NAMESPACE } from '../contracts/config/temporal';
import { describeSandbox, type SandboxInUse } from '../activities/tools';
import { startEmbeddedCodecServer, type RunningCodecServer } from '../worker/payloads/codec-server';
import { settleCoreLogs } from '../worker/runtime';
import { startDevServer, type TemporalServer } from '../worker/temporal-server';
import { startWorkerMcp } from '../worker/mcp';
import { startTracing } from '../worker/tracing';
import {
  bundleProjectWorkflows,
  createProjectWorker,
  runUntilWithRestarts,
  workerTuning,
} from '../worker/worker';
import { connectionSettings, connectWorker, type ConnectionSettings } from './connection';
import { claimDevServerRecord, findRunningDevServer } from './dev-server-state';
import { detachedLines, resumableLines, type RunPlace } from './run-interrupts';
import { sayWhenNoWorkerPolls } from './worker-presence';

const say = (line: string) => process.stderr.write(`${line}\n`);

export interface Session {
  settings: ConnectionSettings;
  uiUrl?: string;
  /**
   * What another terminal's command needs to reach this run besides its id: `--address …` for an embedded
   * server no record names (the commands find a recorded one, or the address the user gave, themselves).
   */
  reachFlags?: string;
  /** Where `bash` runs, when this command runs the worker itself (elsewhere, the workers there decide). */
  sandbox(): Promise<SandboxInUse | undefined>;
  /**
   * While the run is followed: says once when no worker polls its task queue (workers elsewhere must, when
   * this command runs none). Returns what stops it.
   */
  watchWorkers(client: Client): () => void;
  /**
   * The run goes on on a server given by address, with workers there: the first signal stops following it.
   * Otherwise this command runs the worker, and the first signal cancels the run and sees it end.
   */
  detaches: boolean;
  /** What becomes of a run this command leaves mid-way, and how to reach it. */
  leftBehind(runId: string, cancelRequested: boolean): string[];
  /** Runs `body` while this command's own worker polls, when it has one, then shuts that worker down. */
  withWorker<T>(body: () => Promise<T>): Promise<T>;
  /** Closes what this command opened (its worker's connection, its embedded server, its record). */
  close(): Promise<void>;
}

export interface SessionOptions {
  configFile?: string;
  /** Record an embedded server this command starts, as `subagents dev-server` does (`start`, kept up). */
  recordServer: boolean;
}

/** A server given by address, or the embedded one: the recorded dev server if it runs, else a new one. */
export async function openSession(
  config: Config,
  env: NodeJS.ProcessEnv,
  options: SessionOptions,
): Promise<Session> {
  const { configFile } = options;
  const settings = connectionSettings(config.temporal, env);
  if (settings.address) {
    const address = settings.address;
    const place = (runId: string): RunPlace => ({ ...settings, address, runId, configFile });
    return {
      settings,
      uiUrl: settings.uiUrl,
      sandbox: async () => undefined,
      watchWorkers: (client) =>
        sayWhenNoWorkerPolls({
          client,
          address,
          namespace: settings.namespace,
          taskQueue: settings.taskQueue,
          configFile,
          say,
        }),
      detaches: true,
      leftBehind: (runId) => [`it keeps running on ${address}`, ...detachedLines(place(runId))],
      withWorker: (body) => body(),
      close: async () => undefined,
    };
  }
  let server: TemporalServer | undefined;
  let codec: RunningCodecServer | undefined;
  let forgetServer = () => undefined as void;
  let serverRecorded = false;
  // Bundling the workflows takes as long as starting a server: do both at once.
  const bundle = bundleProjectWorkflows();
  bundle.catch(() => undefined);
  const recorded = await findRunningDevServer(env);
  if (recorded) {
    say(`Using the dev server on ${recorded.address} (started by \`subagents dev-server\`).`);
    settings.address = recorded.address;
    settings.namespace = recorded.namespace;
  } else {
    // The Web UI shows large payloads through this process's codec endpoint instead of as references.
    codec = await startEmbeddedCodecServer(config.payloads);
    server = await startDevServer({
      log: say,
      namespace: settings.namespace,
      uiCodecEndpoint: codec?.url,
      // A Ctrl-C must not take the server down while the run it cancels still needs it.
      ownProcessGroup: true,
    }).catch(async (err: unknown) => {
      await codec?.close();
      throw err;
    });
    settings.address = server.address;
    if (options.recordServer) {
      const claim = await claimDevServerRecord(
        {
          address: server.address,
          namespace: server.namespace,
          ...(server.uiUrl && { ui_url: server.uiUrl }),
          pid: process.pid,
        },
        env,
      );
      if (claim.recorded) {
        forgetServer = claim.forget;
        serverRecorded = true;
      }
    }
  }
  const address = settings.address;
  const uiUrl = recorded?.ui_url ?? server?.uiUrl;
  const connection = await connectWorker(settings);
  const namespaceFlag = settings.namespace === DEFAULT_NAMESPACE ? '' : ` --namespace ${settings.namespace}`;
  return {
    settings,
    uiUrl,
    ...(server && !serverRecorded && { reachFlags: `--address ${server.address}${namespaceFlag}` }),
    sandbox: () => describeSandbox(config.sandbox),
    watchWorkers: () => () => undefined,
    detaches: false,
    leftBehind: (runId, cancelRequested) =>
      server
        ? [
            `run ${runId} is lost with this command's dev server, which kept it in memory ` +
              '(a run on `subagents dev-server` outlives the command: its SQLite file keeps it)',
          ]
        : resumableLines({ ...settings, address, runId, configFile }, cancelRequested),
    withWorker: async (body) => {
      const tracing = startTracing(config.tracing);
      // After the bundle's progress line has ended: the MCP servers' lines follow it.
      const workflowBundleCode = await bundle;
      const mcp = await startWorkerMcp(config.mcp_servers, say);
      const create = () =>
        createProjectWorker({
          connection,
          namespace: settings.namespace,
          taskQueue: settings.taskQueue,
          workflowBundleCode,
          admission: config.subagent_runtime,
          runAdmission: config.lead_runtime,
          tuning: workerTuning(config.worker),
          say,
          ...(tracing && { tracing }),
        });
      try {
        return await runUntilWithRestarts(create, body, say);
      } finally {
        await tracing?.shutdown();
        await mcp?.close();
        await settleCoreLogs();
      }
    },
    close: async () => {
      await connection.close();
      forgetServer();
      await server?.stop();
      await codec?.close();
    },
  };
}
