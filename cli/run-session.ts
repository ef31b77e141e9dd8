/**
 * Where a lead run of `subagents run` or `subagents start` runs: on a server given by address (its workers
 * already polling), on the recorded dev server by the workers that poll it there with this run's config
 * (`run`), or embedded (a worker in this process, on the recorded dev server or a dev server of its own), and
 * what that means for following it, stopping it and reaching it from another terminal.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { NativeConnection } from '@temporalio/worker';
import type { Config } from '../contracts/config';
import { DEFAULT_NAMESPACE } from '../contracts/config/temporal';
import { chooseSandbox, machineProbes, type MachineProbes, type SandboxInUse } from '../worker/diagnostics';
import { startEmbeddedCodecServer, type RunningCodecServer } from '../payloads/codec-server';
import { settleCoreLogs, WORKER_HEARTBEAT_INTERVAL_MS } from '../worker/runtime';
import { processConfigDigest } from '../worker/config-digest';
import { startDevServer, type TemporalServer } from '../devserver/temporal-server';
import { startWorkerMcp } from '../worker/mcp';
import { configLeadInputs } from '../worker/lead-inputs';
import { startTracing } from '../worker/tracing';
import {
  builtOrBundledWorkflows,
  createProjectWorker,
  ModelProviders,
  ONE_RUN_WORKER_OPTIONS,
  runUntilWithRestarts,
  withoutSourceMappings,
  workerTuning,
} from '../worker/worker';
import { taskQueueLiveWorkers, type LiveWorker } from '../client/worker-liveness';
import { workspaceHosting } from '../worker/workspace-hosting';
import { connectClient, type ConnectionSettings } from '../client/connection';
import { connectWorker } from '../client/worker-connection';
import {
  claimDevServerRecord,
  findRunningDevServer,
  type DevServerRecord,
} from '../devserver/dev-server-state';
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
   * The run goes on on a server whose workers run it: the first signal stops following it. Otherwise this
   * command runs the worker, and the first signal cancels the run and sees it end.
   */
  readonly detaches: boolean;
  /** What becomes of a run this command leaves mid-way, and how to reach it. */
  leftBehind(runId: string, cancelRequested: boolean): string[];
  /** Runs `body` while this command's own worker polls, when it has one, then shuts that worker down. */
  withWorker<T>(body: () => Promise<T>): Promise<T>;
  /** Closes what this command opened (its worker's connection, its embedded server, its record). */
  close(): Promise<void>;
}

export interface SessionOptions {
  /** The run's id: the session may watch it. */
  runId: string;
  configFile?: string;
  /** Record an embedded server this command starts, as `subagents dev-server` does (`start`, kept up). */
  recordServer: boolean;
  /**
   * Submit to the recorded dev server's workers when they poll the run's task queue there with this run's
   * config (`run`).
   */
  useServerWorkers: boolean;
  /** A server and a worker of this command's own, whatever runs already (`run --embedded`). */
  ownServer: boolean;
}

/**
 * How long the recorded dev server's workers have to take a run's first workflow task before this command runs
 * a worker itself. The server marks the task started as it hands it to a waiting poll, however busy the
 * worker's host: a live worker takes it at once. A stopped one stays listed among the pollers for minutes.
 */
export const PICKUP_MS = 5000;

const devServer = (address: string) =>
  `Using the dev server on ${address} (started by \`subagents dev-server\`)`;

/** The line `run` prints when the recorded dev server's workers run its run: they run its config. */
export function serverWorkersLine(place: { address: string; taskQueue: string; workers: number }): string {
  const workers = place.workers === 1 ? 'the worker' : `the ${place.workers} workers`;
  return (
    `${devServer(place.address)} and ${workers} polling its task queue "${place.taskQueue}": same config as ` +
    `this run's; --embedded runs it on a server and a worker of this command's own.`
  );
}

/**
 * The line `run` and `start` print when a worker on the recorded dev server runs another config than the run's
 * (or does not say which): the run goes to a worker of this command's own, on a task queue of its own.
 */
export function ownQueueLine(place: {
  address: string;
  taskQueue: string;
  ownQueue: string;
  digest: string;
  theirs?: string;
}): string {
  const why =
    place.theirs === undefined
      ? 'does not say which config it runs'
      : `runs another config (${place.theirs}; this run's: ${place.digest})`;
  return (
    `${devServer(place.address)} and a worker of this command's own on task queue "${place.ownQueue}": the ` +
    `worker polling its task queue "${place.taskQueue}" ${why}.`
  );
}

/** What the live workers of the run's task queue on the recorded dev server run, next to the run's config. */
export type WorkersThere =
  | { kind: 'none' }
  | { kind: 'same'; workers: number }
  /** `theirs`: the digest of one that differs; undefined when one publishes none. */
  | { kind: 'other'; theirs?: string };

/** `workers` against the run's config `digest`: every one must run it, or a run could land on one that does not. */
export function compareWorkers(workers: readonly LiveWorker[], digest: string): WorkersThere {
  if (workers.length === 0) return { kind: 'none' };
  const other = workers.find((worker) => worker.configDigest !== digest);
  if (other)
    return { kind: 'other', ...(other.configDigest !== undefined && { theirs: other.configDigest }) };
  return { kind: 'same', workers: workers.length };
}

/**
 * The task queue of a run whose config differs from that of a worker on `taskQueue`: one of the config's own,
 * which that worker does not poll (its subagents and admission follow the run there). Derived from the digest,
 * so the runs of one config share it, and its admission workflows, however many commands run them.
 */
export function configTaskQueue(taskQueue: string, digest: string): string {
  return `${taskQueue}-config-${digest}`;
}

/** A worker's first heartbeat comes one interval after it starts polling: a new one is waited for this long. */
const FIRST_HEARTBEAT_MS = 3 * WORKER_HEARTBEAT_INTERVAL_MS;

/**
 * What the live workers of `settings`' task queue run, next to `digest`. A live worker the server keeps no
 * heartbeat of yet (it has just started) is waited for until its first one, or FIRST_HEARTBEAT_MS.
 */
async function workersThere(
  client: Client,
  settings: ConnectionSettings,
  digest: string,
): Promise<WorkersThere> {
  const deadline = Date.now() + FIRST_HEARTBEAT_MS;
  for (;;) {
    const { workers, heartbeats } = await taskQueueLiveWorkers(
      client,
      settings.namespace,
      settings.taskQueue,
    );
    const unheard = heartbeats && workers.some((worker) => !worker.heartbeats);
    if (!unheard || Date.now() >= deadline) return compareWorkers(workers, digest);
    await sleep(WORKER_HEARTBEAT_INTERVAL_MS / 4);
  }
}

/**
 * A server given by address (its workers run the run); else the recorded dev server, whose workers run it when
 * they poll the run's task queue there with the run's config (`useServerWorkers`), and this command's own
 * worker otherwise (on a task queue of the config's own when one there runs another config); else a server
 * and a worker of this command's own.
 */
export async function openSession(
  config: Config,
  given: ConnectionSettings,
  env: NodeJS.ProcessEnv,
  options: SessionOptions,
): Promise<Session> {
  const { configFile } = options;
  if (given.address) {
    return serverSession({ ...given, address: given.address }, configFile, given.address);
  }
  // What this command's worker publishes, and what the recorded server's must publish to run the run.
  const configDigest = processConfigDigest(config, env);
  const recorded = options.ownServer ? undefined : await findRunningDevServer(env);
  if (recorded) {
    const settings = { ...given, address: recorded.address, namespace: recorded.namespace };
    const opened = await connectClient(settings).catch(() => undefined);
    // A server that refuses the question is taken to have no worker there, as before workers said their config.
    const there: WorkersThere = opened
      ? await workersThere(opened.client, settings, configDigest).catch(() => ({ kind: 'none' }) as const)
      : { kind: 'none' };
    if (opened && there.kind === 'same' && options.useServerWorkers) {
      say(serverWorkersLine({ ...settings, workers: there.workers }));
      return serverWorkersSession(config, settings, recorded, { ...options, configDigest }, opened);
    }
    await opened?.connection.close();
    // Bundling the workflows takes about as long as anything else here: start it first.
    const bundle = startBundle();
    const parts = { bundle, uiUrl: recorded.ui_url, configDigest };
    if (there.kind === 'other') {
      const ownQueue = configTaskQueue(settings.taskQueue, configDigest);
      say(ownQueueLine({ ...settings, ownQueue, digest: configDigest, ...there }));
      return ownWorkerSession(config, { ...settings, taskQueue: ownQueue }, configFile, parts);
    }
    const why =
      options.useServerWorkers && there.kind === 'none'
        ? `; no worker polls its task queue "${settings.taskQueue}", so this command runs one`
        : '';
    say(`${devServer(recorded.address)}${why}.`);
    return ownWorkerSession(config, settings, configFile, parts);
  }
  return embeddedSession(config, given, env, { ...options, configDigest });
}

/**
 * A run on a server whose workers run it: the first signal stops following it, and it goes on there. `where`
 * names the server in the line that says so.
 */
function serverSession(
  settings: ConnectionSettings & { address: string },
  configFile: string | undefined,
  where: string,
  uiUrl = settings.uiUrl,
): Session {
  const { address } = settings;
  const place = (runId: string): RunPlace => ({ ...settings, runId, configFile });
  return {
    settings,
    uiUrl,
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
    leftBehind: (runId) => [`it keeps running on ${where}`, ...detachedLines(place(runId))],
    withWorker: (body) => body(),
    close: async () => undefined,
  };
}

/**
 * The recorded dev server's workers run the run, followed as `run --address` follows one. When none of them
 * has taken its first workflow task within PICKUP_MS (the worker the server listed had stopped), this command
 * runs a worker itself, as when none polls: the run is then its to cancel on the first signal.
 */
function serverWorkersSession(
  config: Config,
  settings: ConnectionSettings & { address: string },
  recorded: DevServerRecord,
  options: SessionOptions & { configDigest: string },
  opened: { client: Client; connection: Connection },
): Session {
  const { runId, configFile, configDigest } = options;
  const uiUrl = recorded.ui_url ?? settings.uiUrl;
  const theirs = serverSession(settings, configFile, `the dev server on ${recorded.address}`, uiUrl);
  let ours: Session | undefined;
  let decide: (taken: boolean) => void = () => undefined;
  const decided = new Promise<boolean>((resolve) => (decide = resolve));
  return {
    settings,
    uiUrl,
    sandbox: theirs.sandbox,
    watchWorkers: (client) => {
      // Only once their workers took the run: before, this session looks itself, and may run one.
      let stop = () => undefined as void;
      let stopped = false;
      void decided.then((taken) => {
        if (taken && !stopped) stop = theirs.watchWorkers(client);
      });
      return () => {
        stopped = true;
        stop();
      };
    },
    get detaches() {
      return ours === undefined;
    },
    leftBehind: (id, cancelRequested) => (ours ?? theirs).leftBehind(id, cancelRequested),
    withWorker: async (body) => {
      let ended: () => void = () => undefined;
      const bodyEnded = new Promise<void>((resolve) => (ended = resolve));
      const fallback = (async () => {
        const taken = await takenWithin(opened.client, runId, PICKUP_MS, bodyEnded);
        decide(taken);
        if (taken) return;
        say(
          `No worker took run ${runId} within ${PICKUP_MS / 1000} s (the one the server listed on task queue ` +
            `"${settings.taskQueue}" may have stopped): this command runs one.`,
        );
        ours = await ownWorkerSession(config, settings, configFile, {
          bundle: startBundle(),
          uiUrl,
          configDigest,
        });
        await ours.withWorker(() => bodyEnded);
      })();
      try {
        // A worker of this command's own that fails ends the command, as an embedded one does.
        return await Promise.race([body(), fallback.then(() => new Promise<never>(() => undefined))]);
      } finally {
        ended();
        decide(true);
        await fallback.catch(() => undefined);
      }
    },
    close: async () => {
      await ours?.close();
      await opened.connection.close();
    },
  };
}

/**
 * Whether a worker took run `runId`'s first workflow task within `ms` of its start, looked at every 250 ms; true
 * as well when `ended` comes first (nothing left to run it for).
 */
async function takenWithin(
  client: Client,
  runId: string,
  ms: number,
  ended: Promise<void>,
): Promise<boolean> {
  let over = false;
  void ended.then(() => (over = true));
  let deadline: number | undefined;
  while (!over) {
    const description = await client.workflow
      .getHandle(runId)
      .describe()
      .catch(() => undefined);
    if (description) {
      const task = description.raw.pendingWorkflowTask;
      const started = temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_STARTED;
      if (description.status.name !== 'RUNNING' || description.historyLength > 2 || task?.state === started) {
        return true;
      }
      // From the moment the run exists: it may take a moment to start on a busy machine.
      deadline ??= Date.now() + ms;
    }
    if (deadline !== undefined && Date.now() >= deadline) return false;
    await Promise.race([new Promise((resolve) => setTimeout(resolve, 250)), ended]);
  }
  return true;
}

/**
 * The workflow bundle `npm run build` made, or, when it is missing or stale, one bundled from now (a failure
 * surfaces where it is awaited). Its source map maps nothing (`withoutSourceMappings`: ~15 MiB less for the
 * one run this process's worker serves), unless DEBUG asks for stack traces in the sources' lines; the whole
 * bundle is not kept.
 */
function startBundle(): Promise<string> {
  const bundle = builtOrBundledWorkflows(say).then((code) =>
    process.env.DEBUG ? code : withoutSourceMappings(code),
  );
  bundle.catch(() => undefined);
  return bundle;
}

/**
 * A worker of this command's own on `settings`' server, which outlives the command: the first signal cancels
 * the run; a second leaves it there for another worker to resume.
 */
async function ownWorkerSession(
  config: Config,
  settings: ConnectionSettings & { address: string },
  configFile: string | undefined,
  parts: { bundle: Promise<string>; uiUrl?: string; configDigest: string },
): Promise<Session> {
  const connection = await connectWorker(settings);
  // One set for the run's header and the worker: the header names the sandbox bash really runs in.
  const probes = machineProbes();
  return {
    settings,
    uiUrl: parts.uiUrl,
    sandbox: () => chooseSandbox(config.sandbox, probes),
    watchWorkers: () => () => undefined,
    detaches: false,
    leftBehind: (runId, cancelRequested) =>
      resumableLines({ ...settings, runId, configFile }, cancelRequested),
    withWorker: (body) =>
      withOwnWorker(
        config,
        settings,
        connection,
        { bundle: parts.bundle, probes, configDigest: parts.configDigest },
        body,
      ),
    close: () => connection.close(),
  };
}

/** A dev server of this command's own (recorded when `recordServer`), and a worker of its own on it. */
async function embeddedSession(
  config: Config,
  given: ConnectionSettings,
  env: NodeJS.ProcessEnv,
  options: SessionOptions & { configDigest: string },
): Promise<Session> {
  // Bundling the workflows, when the build's bundle will not do, takes as long as starting a server: both at once.
  const bundle = startBundle();
  // The Web UI shows large payloads through this process's codec endpoint instead of as references.
  const codec: RunningCodecServer | undefined = await startEmbeddedCodecServer(config.payloads);
  const server: TemporalServer = await startDevServer({
    log: say,
    namespace: given.namespace,
    uiCodec: codec,
    // A Ctrl-C must not take the server down while the run it cancels still needs it.
    ownProcessGroup: true,
    // Not recorded: it serves this run alone and stops with it (`run`, `start --once`).
    oneShot: !options.recordServer,
  }).catch(async (err: unknown) => {
    await codec?.close();
    throw err;
  });
  let forgetServer = () => undefined as void;
  let serverRecorded = false;
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
  const settings = { ...given, address: server.address };
  const connection = await connectWorker(settings);
  const namespaceFlag = settings.namespace === DEFAULT_NAMESPACE ? '' : ` --namespace ${settings.namespace}`;
  const probes = machineProbes();
  return {
    settings,
    uiUrl: server.uiUrl,
    ...(!serverRecorded && { reachFlags: `--address ${server.address}${namespaceFlag}` }),
    sandbox: () => chooseSandbox(config.sandbox, probes),
    watchWorkers: () => () => undefined,
    detaches: false,
    leftBehind: (runId) => [
      `run ${runId} is lost with this command's dev server, which kept it in memory ` +
        '(a run on `subagents dev-server` outlives the command: its SQLite file keeps it)',
    ],
    withWorker: (body) =>
      withOwnWorker(
        config,
        settings,
        connection,
        { bundle, probes, configDigest: options.configDigest },
        body,
      ),
    close: async () => {
      await connection.close();
      forgetServer();
      await server.stop();
      await codec?.close();
    },
  };
}

/** Runs `body` while a worker of this command's own polls the run's task queue, then shuts it down. */
async function withOwnWorker<T>(
  config: Config,
  settings: ConnectionSettings,
  connection: NativeConnection,
  { bundle, probes, configDigest }: { bundle: Promise<string>; probes: MachineProbes; configDigest: string },
  body: () => Promise<T>,
): Promise<T> {
  const tracing = startTracing(config.tracing);
  // After the bundle's progress line has ended: the MCP servers' lines follow it.
  const workflowBundleCode = await bundle;
  const mcp = await startWorkerMcp(config.mcp_servers, say, process.env, config.mcp_tasks);
  // Kept across restarts, as the probes are: the warm-up and what the providers learnt are the process's.
  const providers = new ModelProviders({
    ...(config.circuit_breaker && { circuitBreaker: config.circuit_breaker }),
    say,
  });
  // One host for the process's workers, restarted ones included: the workspaces it holds are its own.
  const workspaces = workspaceHosting(
    {
      workspace: config.workspace,
      ...(config.worker.host_id !== undefined && { hostId: config.worker.host_id }),
    },
    settings.taskQueue,
    false,
  );
  const create = () =>
    createProjectWorker({
      connection,
      namespace: settings.namespace,
      taskQueue: settings.taskQueue,
      workflowBundleCode,
      admission: config.subagent_runtime,
      runAdmission: config.lead_runtime,
      // It serves this command's run alone: its workflows in this thread (worker/worker.ts says why).
      tuning: { ...ONE_RUN_WORKER_OPTIONS, ...workerTuning(config.worker) },
      say,
      probes,
      providers,
      models: config.models,
      ...(config.tools && { tools: config.tools }),
      leadInputs: configLeadInputs(config),
      configDigest,
      ...(mcp && { mcpCatalog: mcp.catalog }),
      ...(tracing && { tracing }),
      workspaces,
    });
  try {
    return await runUntilWithRestarts(create, body, say);
  } finally {
    await tracing?.shutdown();
    await mcp?.close();
    await settleCoreLogs();
  }
}
