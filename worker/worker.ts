/**
 * Worker bootstrap: one Worker that registers every workflow and activity of the project on a task queue.
 * Used by `npm start`, `subagents worker` and the worker processes the crash tests kill.
 */
import { hostname } from 'node:os';
import { Client } from '@temporalio/client';
import { watchLostWorkers } from './lost-workers';
import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Worker,
  type WorkerOptions,
} from '@temporalio/worker';
import { createProjectActivities } from '../activities';
import type { StreamSink } from '../activities/stream/agent-stream';
import { processStreamBridge } from '../payloads/stream/bridge';
import { SlotLeases } from '../activities/admission-lease';
import type { MachineProbes } from '../activities/tools';
import type { McpCatalog } from '../activities/mcp';
import type { RemoteActivityDeps } from '../activities/remote';
import { ModelProviders } from '../activities/model';
import type { CircuitBreakerSettings } from '../activities/model/circuit-breaker';
import type { Transcripts } from '../activities/transcripts';
import {
  DEFAULT_ADMISSION_SETTINGS,
  DEFAULT_RUN_ADMISSION_SETTINGS,
  type AdmissionSettings,
} from '../contracts/admission';
import type { PayloadSettings } from '../contracts/config/payloads';
import type { LeadInputFiller } from '../contracts/minimal-lead-input';
import type { ModelSettings } from '../contracts/model';
import type { ToolEntry } from '../contracts/config/tools';
import { DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE } from '../contracts/config/temporal';
import {
  declareWorkerAdmission,
  disagreeingWorkers,
  withdrawWorkerAdmission,
  type WorkerAdmission,
} from './admission';
import { configDigestPlugin } from './config-digest';
import { EventLoopDelay, loadGuardTuner } from './load-guard';
import { projectDataConverter } from '../payloads/data-converter';
import type { PayloadKeyring } from '../payloads/encryption-codec';
import { processSecretsKeyring } from '../payloads/secrets';
import { activityPayloadStore } from '../payloads/store';
import type { WorkerTracing } from './tracing';
import { waitProgress, type WaitProgress } from './wait-progress';
import { builtWorkflowBundle, type BuiltWorkflowBundle, type BundleWithSources } from './workflow-bundle';

export { withoutSourceMappings } from './workflow-bundle';
import type { WorkspaceHosting } from './workspace-hosting';

/** The model providers a process may keep across its workers' restarts (`providers` below). */
export { ModelProviders };

export interface ProjectWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue?: string;
  /**
   * A prebuilt workflow bundle (tests build one for the whole suite). Omitted: the one `npm run build` made,
   * when it matches the code on disk, else one bundled now.
   */
  workflowBundlePath?: string;
  /** A bundle built in memory (`bundleProjectWorkflows`), e.g. while the server starts. */
  workflowBundleCode?: string;
  /**
   * Where large payloads (the claim-check codec) and the activities' transcripts and checkpoints go; default:
   * this process's (`configurePayloads`).
   */
  payloads?: PayloadSettings;
  /** The MCP servers' catalog the activities call (`startWorkerMcp`); none: no MCP tools. */
  mcpCatalog?: McpCatalog;
  /** What this machine can start for bash (default: new probes); the process's own, when it reports the sandbox. */
  probes?: MachineProbes;
  /**
   * What bash opens request-scoped secrets with (default: the payload keys of `payloads`, and this process's own
   * key when an embedded run made one: payloads/secrets.ts).
   */
  secretsKeyring?: PayloadKeyring;
  /** The model providers (default: new ones); one across restarts keeps the warm-up to once a process. */
  providers?: ModelProviders;
  /**
   * The models of the worker's config (default: none): with an `openai` one among them, that provider is warmed
   * up while the worker starts (ModelProviders.warmUp); without, nothing of it is loaded before a run calls it.
   */
  models?: readonly ModelSettings[];
  /** The config's `circuit_breaker:` (activities/model/circuit-breaker.ts), for providers made here; absent: none. */
  circuitBreaker?: CircuitBreakerSettings;
  /** The config's `tools:` entries: the providers behind the web tools (default: none configured). */
  tools?: readonly ToolEntry[];
  /** The activities' transcripts (default: the worker's own); a test keeps them to clear what they remember. */
  transcripts?: Transcripts;
  /** How remote subagents are reached (default: the A2A and ACP clients); a test hands in doubles. */
  remote?: RemoteActivityDeps;
  /** `subagent_runtime`: declared to the task queue's admission workflow (default: the config defaults). */
  admission?: AdmissionSettings;
  /** `lead_runtime`: declared to the task queue's lead-run admission workflow (default: the config defaults). */
  runAdmission?: AdmissionSettings;
  /** Where admission warnings go (another live worker declared different settings); default stderr. */
  say?: (line: string) => void;
  /**
   * false: this worker leases no spare slots of its pools, every request goes to the admission workflow by
   * signal (a test of that path; the default leases those of pools that can, activities/admission-lease.ts).
   */
  leases?: false;
  /**
   * OpenTelemetry tracing (`startTracing`): its interceptors and sink, and a bundle with its workflow interceptor
   * module (bundled here: a prebuilt bundle has none, so it is not used).
   */
  tracing?: WorkerTracing;
  /**
   * The runs' workspaces this worker serves (worker/workspace-hosting.ts); default: one process serves every
   * call, nothing saved. With a host queue, a second Worker polls it for the activities bound to this disk.
   */
  workspaces?: WorkspaceHosting;
  /** A lead run's full input from the worker's config, for runs started with `{prompt}` alone (none: refused). */
  leadInputs?: LeadInputFiller;
  /**
   * The digest of the config the worker runs with (worker/config-digest.ts), published in its heartbeats: `run`
   * hands a run to a recorded dev server's workers only when theirs is its own.
   */
  configDigest?: string;
  /**
   * Where the activities publish the tree's live stream (docs/live.md); default: this process's bridge
   * (`configureStreamBridge`); false: nowhere.
   */
  stream?: StreamSink | false;
  /** Extra Worker options (identity, slot counts, sticky timeouts). */
  tuning?: Partial<
    Omit<
      WorkerOptions,
      'connection' | 'namespace' | 'taskQueue' | 'workflowsPath' | 'workflowBundle' | 'activities'
    >
  >;
}

export const WORKFLOWS_PATH = require.resolve('../workflows');

/**
 * Modules evaluated once per worker and shared by every workflow it runs, rather than evaluated again in each
 * workflow's own module cache (~10 ms and ~640 KB a workflow for the project's modules, ~400 modules for zod).
 * The SDK deep-freezes what they export, so these modules keep no state of their own beyond pure caches, and
 * export no zod schema a workflow uses (contracts/config/fields.ts, valueTypes()). test/shared-modules.test.ts
 * holds them to that.
 */
export const PRELOADED_MODULES = ['zod', WORKFLOWS_PATH];

/**
 * What the workflow bundle leaves out, for every worker's workflow thread holds the bundle and the SDK parses its
 * inline source map twice (BENCHMARKS.md, "Where the memory goes"): the sources' text in the source map (the
 * mappings stay, so a workflow's stack trace still names our .ts files and lines; the text is shown only with
 * the Worker option showStackTraceSources, which no worker here sets), ~13 MiB of the workflow thread's heap
 * and ~20 MiB of the process; and zod's translated error messages (~60 locales evaluated at load, which
 * workflow code never selects: zod's English messages come from its own module, not from this index).
 */
export const LEAN_BUNDLE = {
  devtool: 'inline-nosources-source-map',
  resolve: { alias: { [require.resolve('zod/v4/locales/index.cjs')]: false } },
} as const;

/**
 * Bundles the project's workflows (webpack: ~2 s on a quiet machine, 7–21 s on a busy one, so it shows progress
 * past two seconds): start it early and concurrently with other work. `npm run build` makes one for every
 * worker (worker/workflow-bundle.ts); this is for a worker without it, and for one that traces.
 */
export async function bundleProjectWorkflows(
  progress: WaitProgress = waitProgress(),
  tracing?: Pick<WorkerTracing, 'workflowInterceptorModules'>,
): Promise<string> {
  return (await bundleProjectWorkflowsWithSources(progress, tracing)).code;
}

/** The bundle, and every file webpack read to make it: what the built bundle's manifest records. */
export async function bundleProjectWorkflowsWithSources(
  progress: WaitProgress = waitProgress(),
  tracing?: Pick<WorkerTracing, 'workflowInterceptorModules'>,
): Promise<BundleWithSources> {
  return progress.track('Bundling the workflows', async () => {
    let sources: string[] = [];
    const { code } = await bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      logger: new DefaultLogger('WARN'),
      preloadModules: PRELOADED_MODULES,
      // Only a worker that traces: without tracing the bundle is what it always was.
      ...(tracing && { workflowInterceptorModules: tracing.workflowInterceptorModules }),
      webpackConfigHook: (config) => ({
        ...config,
        ...LEAN_BUNDLE,
        resolve: { ...config.resolve, alias: { ...config.resolve?.alias, ...LEAN_BUNDLE.resolve.alias } },
        // The files the bundle came from, as the bundler saw them: nothing is left out by a guess of ours.
        plugins: [
          ...(config.plugins ?? []),
          {
            apply: (compiler) =>
              compiler.hooks.done.tap('workflow-bundle-sources', (stats) => {
                sources = [...stats.compilation.fileDependencies];
              }),
          },
        ],
      }),
    });
    return { code, sources };
  });
}

/**
 * The workflow bundle a worker runs: the one given, or, for a worker that traces, one with its interceptors;
 * else the one `npm run build` made when it matches the code on disk, else one bundled now (saying why).
 */
async function projectWorkflowBundle(
  options: ProjectWorkerOptions,
): Promise<NonNullable<WorkerOptions['workflowBundle']>> {
  if (options.tracing) return { code: await bundleProjectWorkflows(undefined, options.tracing) };
  if (options.workflowBundleCode !== undefined) return { code: options.workflowBundleCode };
  if (options.workflowBundlePath) return { codePath: options.workflowBundlePath };
  return { code: await builtOrBundledWorkflows(options.say) };
}

/**
 * The code of the bundle `npm run build` made when it was made from the code on disk now; otherwise, after one
 * line saying why, a bundle made now. `built` and `bundle` are for tests.
 */
export async function builtOrBundledWorkflows(
  say: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
  built: () => BuiltWorkflowBundle = builtWorkflowBundle,
  bundle: () => Promise<string> = bundleProjectWorkflows,
): Promise<string> {
  const found = built();
  if (found.ok) return found.code;
  say(
    `not using the built workflow bundle: ${found.reason}; bundling the workflows now (npm run build makes it once)`,
  );
  return bundle();
}

/**
 * What every project worker gets unless `tuning` says otherwise: how soon a dead worker's work moves on
 * (bench/recovery.ts; BENCHMARKS.md, "Recovery after a worker dies").
 */
export const RECOVERY_TUNING = {
  // A workflow task waiting on a dead worker's sticky queue (the SDK waits 10 s) moves to the shared queue,
  // where any worker takes it. A live worker polls its sticky queue all the time: healthy runs never wait 1 s.
  stickyQueueScheduleToStartTimeout: '1 second',
  // Activities beat every third of the heartbeat timeout their workflow declares
  // (activities/activity-context.ts); the SDK would hold a beat back for up to 0.8 × that timeout, this sends
  // each within a second. With the workflows' 3 s (workflows/agent-loop.ts) a beat reaches the server every
  // second, and two may be missed before the attempt is given up.
  maxHeartbeatThrottleInterval: '1 second',
} as const satisfies Partial<WorkerOptions>;

/**
 * Said when a worker starts with no workflow cache. The SDK evicts a run to make room for any other workflow's
 * task, local activities in flight included; a run's admission asks by one, so its task waits out the workflow
 * task timeout (10 s) and is tried again: a trivial run measured 18.7 s against 5.9 s with the default cache.
 */
export const NO_CACHE_WARNING =
  'worker.max_cached_workflows is 0: with no workflow cache the SDK drops local activities in flight (each run ' +
  "and subagent asks admission by one), so starts wait out a 10 s workflow task timeout; leave it unset (the SDK's " +
  'default) or give 2 or more';

/** The config's `worker:` section. */
export interface WorkerSettings {
  /** The SDK's maxCachedWorkflows: bounds the workflows kept in memory (0: none), at the cost of replays. */
  max_cached_workflows?: number;
}

/** The Worker options the `worker:` section sets (nothing: the SDK's defaults). */
export function workerTuning(settings: WorkerSettings = {}): Partial<WorkerOptions> {
  return settings.max_cached_workflows === undefined
    ? {}
    : { maxCachedWorkflows: settings.max_cached_workflows };
}

/**
 * The Worker options of a worker that serves one run and ends with it (`run`, `start`, `fork`, `resume` with a
 * worker of their own): its workflows run in the process's main thread rather than in a worker thread of their
 * own. The SDK's thread is a second V8 isolate, with its own heap, its own copy of the workflow bundle and of
 * its source map (parsed in WebAssembly memory) and its own allocator arena: ~35 MiB of an embedded run's
 * process at its peak (BENCHMARKS.md, "Memory of one embedded run"). The main thread is how the SDK replays histories
 * (`Worker.runReplayHistory`) and what its `debugMode` does; the deadlock bound stays the SDK's usual 5 s
 * rather than debugMode's none. What it costs: a workflow activation holds the process's event loop while it
 * runs (milliseconds), where a long-lived `subagents worker` serving many runs at once keeps the thread.
 */
export const ONE_RUN_WORKER_OPTIONS = {
  debugMode: true,
  // Not among WorkerOptions' declared keys, though the SDK reads it from them: its defaults are spread under
  // the options given (WorkerOptionsWithDefaults.isolateExecutionTimeout); test/unit/worker/ holds it.
  isolateExecutionTimeout: '5 seconds',
} as Partial<WorkerOptions>;

const admissions = new WeakMap<Worker, { pools: WorkerAdmission[]; leases?: SlotLeases }>();

/** Each worker's host-queue Worker, as the promise of its run: it runs while the main one does. */
const hostWorkers = new WeakMap<Worker, Promise<void>>();

/**
 * Runs `beside` for as long as `main` runs: it polls from now on, shuts down as soon as `main` begins to, and
 * takes `main` down with it if it fails (a worker that cannot serve its host's queue must not look healthy).
 */
function runBeside(main: Worker, beside: Worker): Promise<void> {
  const running = beside.run();
  void untilState(main, ['STOPPING', 'DRAINING', ...ENDED_STATES], 100).then(() => {
    if (beside.getState() === 'RUNNING') beside.shutdown();
  });
  return running.catch((err: unknown) => {
    if (main.getState() === 'RUNNING') main.shutdown();
    throw err;
  });
}

/** Once the worker's host-queue Worker (if any) has stopped too: a process waits for it before it ends. */
export async function hostWorkerStopped(worker: Worker): Promise<void> {
  await hostWorkers.get(worker);
}

export async function createProjectWorker(options: ProjectWorkerOptions): Promise<Worker> {
  // While the worker starts: a run's first model call then costs what the later ones do (never fails).
  const providers =
    options.providers ??
    new ModelProviders({
      ...(options.circuitBreaker && { circuitBreaker: options.circuitBreaker }),
      ...(options.say && { say: options.say }),
    });
  const warmUp = providers.warmUp(options.models ?? []);
  const namespace = options.namespace ?? DEFAULT_NAMESPACE;
  const taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUE;
  const dataConverter = projectDataConverter(options.payloads);
  // The SDK's own default, named here so the admission workflow knows the worker by what the server shows.
  const identity = options.tuning?.identity ?? `${process.pid}@${hostname()}`;
  const settings = {
    subagents: options.admission ?? DEFAULT_ADMISSION_SETTINGS,
    runs: options.runAdmission ?? DEFAULT_RUN_ADMISSION_SETTINGS,
  };
  const client = new Client({ connection: options.connection, namespace, dataConverter });
  const say = options.say ?? ((line: string) => process.stderr.write(`${line}\n`));
  const pools: WorkerAdmission[] = (['subagents', 'runs'] as const).map((pool) => ({
    client,
    namespace,
    taskQueue,
    pool,
    settings: settings[pool],
    identity,
  }));
  // Declared while the worker is made: the admission workflows exist before the first run asks for a slot.
  const declared = Promise.all(pools.map(declareWorkerAdmission));
  declared.catch(() => undefined);
  // Spare slots of the large pools, granted in this process (activities/admission-lease.ts): asked for once
  // the admission workflows exist, so the first runs find some.
  const leases =
    options.leases === false
      ? undefined
      : new SlotLeases({
          client,
          taskQueue,
          identity,
          settings,
          warn: say,
        });
  void declared.then(() => leases?.prefetch()).catch(() => undefined);
  // One reading of the event loop per worker (worker/load-guard.ts), stopped once the worker has stopped.
  const loop = new EventLoopDelay();
  const guarded = options.tuning?.tuner === undefined;
  const activities = createProjectActivities({
    store: activityPayloadStore(options.payloads),
    admission: { settings, identity, ...(leases && { leases }) },
    ...(options.mcpCatalog && { mcpCatalog: options.mcpCatalog }),
    ...(options.transcripts && { transcripts: options.transcripts }),
    ...(options.probes && { probes: options.probes }),
    ...(options.remote && { remote: options.remote }),
    ...(options.leadInputs && { leadInputs: options.leadInputs }),
    ...(options.tools && { web: { entries: options.tools } }),
    secretsKeyring: options.secretsKeyring ?? processSecretsKeyring(options.payloads?.encryption),
    providers,
    ...(options.workspaces && { workspaces: options.workspaces.host }),
    ...(options.stream !== false && { stream: options.stream ?? processStreamBridge() }),
  });
  const shared = {
    connection: options.connection,
    namespace,
    dataConverter,
    ...options.tracing?.workerOptions,
    ...RECOVERY_TUNING,
    ...(guarded && { tuner: loadGuardTuner(loop) }),
    ...options.tuning,
    identity,
  };
  const worker = await Worker.create({
    ...shared,
    taskQueue,
    // Without a prebuilt bundle, bundled here rather than by Worker.create: the same work, with progress.
    workflowBundle: await projectWorkflowBundle(options),
    activities,
    ...(options.configDigest !== undefined && { plugins: [configDigestPlugin(options.configDigest)] }),
  }).catch((err: unknown) => {
    loop.stop();
    leases?.stop();
    throw err;
  });
  // The host's own queue: the workspace calls of the runs homed here (activities only).
  const hostQueue = options.workspaces?.queue;
  if (hostQueue !== undefined) {
    const hostWorker = await Worker.create({ ...shared, taskQueue: hostQueue, activities }).catch(
      (err: unknown) => {
        loop.stop();
        leases?.stop();
        throw err;
      },
    );
    hostWorkers.set(worker, runBeside(worker, hostWorker));
  }
  if (!guarded) loop.stop();
  // Once the worker shuts down: its leases' grants reported and their spare slots given back (while it still
  // drains, so it may answer that report itself); once it has stopped, the load guard's reading ends.
  if (leases)
    void untilState(worker, ['STOPPING', 'DRAINING', ...ENDED_STATES], 100).then(() => leases.close());
  // Workers of the queue that die are found in seconds, and the attempts they held failed (worker/lost-workers.ts).
  const lostWorkers = watchLostWorkers({ client, namespace, taskQueue, identity, say });
  void untilState(worker, ENDED_STATES, 1000).then(() => {
    leases?.stop();
    loop.stop();
    void lostWorkers.stop();
  });
  await declared;
  admissions.set(worker, { pools, leases });
  // Once it runs, the worker says whether a live worker declared other settings (never fails, never waits).
  if (options.tuning?.maxCachedWorkflows === 0) say(NO_CACHE_WARNING);
  void whenRunning(worker)
    .then(async (running) => (running ? (await Promise.all(pools.map(disagreeingWorkers))).flat() : []))
    .then((lines) => lines.forEach((line) => say(line)))
    .catch(() => undefined);
  await warmUp;
  return worker;
}

type WorkerState = ReturnType<Worker['getState']>;
const ENDED_STATES: readonly WorkerState[] = ['STOPPED', 'FAILED', 'DRAINED'];

/** Resolves with the worker's state once it is one of `states` (looked at every `everyMs`). */
async function untilState(
  worker: Worker,
  states: readonly WorkerState[],
  everyMs: number,
): Promise<WorkerState> {
  for (;;) {
    const state = worker.getState();
    if (states.includes(state)) return state;
    await new Promise((resolve) => setTimeout(resolve, everyMs).unref());
  }
}

/** Resolves true once the worker polls, false if it stops first. */
async function whenRunning(worker: Worker): Promise<boolean> {
  return (await untilState(worker, ['RUNNING', ...ENDED_STATES], 100)) === 'RUNNING';
}

/** After a clean shutdown: the worker's admission settings no longer speak for a live worker. */
export async function withdrawAdmission(worker: Worker): Promise<void> {
  const admission = admissions.get(worker);
  await admission?.leases?.close();
  await Promise.all((admission?.pools ?? []).map(withdrawWorkerAdmission));
}

/** A worker that fails while its process still has work is replaced this many times at most. */
export const WORKER_RESTARTS = 5;

/**
 * Runs `body` with a worker from `create`, as `Worker.runUntil` does; a worker that fails while `body` is still
 * going (the SDK gave up on it) is replaced by a new one, so the process that owns it keeps serving its runs.
 * A worker process that dies outright is its supervisor's to restart (docs/deployment.md, "Workers on a busy host").
 */
export async function runUntilWithRestarts<T>(
  create: () => Promise<Worker>,
  body: () => Promise<T>,
  say: (line: string) => void,
  restarts = WORKER_RESTARTS,
): Promise<T> {
  let settled = false;
  let watched: Promise<T> | undefined;
  for (let attempt = 0; ; attempt += 1) {
    const worker = await create();
    // Started once, with the first worker (as runUntil starts a function it is given).
    if (watched === undefined) {
      watched = body().finally(() => (settled = true));
      watched.catch(() => undefined);
    }
    try {
      const value = await worker.runUntil(watched);
      // Its host queue's Worker, if any, holds the same connection until it has stopped too.
      await hostWorkerStopped(worker);
      return value;
    } catch (err) {
      if (settled || attempt >= restarts) throw err;
      const message = err instanceof Error ? err.message : String(err);
      say(`worker failed (${message}); starting a new one (${attempt + 1} of ${restarts})`);
    }
  }
}
