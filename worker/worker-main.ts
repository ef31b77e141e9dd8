/**
 * A long-running project worker: `subagents worker`, and a process of its own, `node
 * dist/worker/worker-main.js` (the crash tests kill and restart these). The process finds its server as every
 * Temporal SDK does (`@temporalio/envconfig`): TEMPORAL_ADDRESS (required, or a profile's),
 * TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*, TEMPORAL_PROFILE and TEMPORAL_CONFIG_FILE
 * (temporal.toml). Env besides: TASK_QUEUE, WORKFLOW_BUNDLE, WORKER_LOG_LEVEL (default INFO),
 * SUBAGENTS_PAYLOAD_DIR (the local payload store; the default settings apply otherwise), SUBAGENTS_CONFIG (a
 * config file whose `subagent_runtime`, `lead_runtime`, `worker`, `sandbox`, `metrics`, `tracing`,
 * `mcp_servers`, `payloads` and `workspace` the worker runs with; the defaults otherwise).
 * Both print the start lines (`worker ready: …`, the bash sandbox, both admission bounds, whether payloads are
 * encrypted and with which key id) on stdout once the worker polls, log
 * to stderr, and exit 0 after a clean shutdown on SIGINT or SIGTERM.
 */
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { NativeConnection } from '@temporalio/worker';
import { chooseSandbox, machineProbes, type SandboxInUse } from '../activities/tools';
import { describeAdmission, type AdmissionSettings } from '../contracts/admission';
import { DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE } from '../contracts/config/temporal';
import type { SandboxSettings } from '../contracts/tools';
import type { Config, MetricsSettings, TracingSettings } from '../contracts/config';
import type { McpServersConfig } from '../contracts/config/mcp';
import type { McpTasksConfig } from '../contracts/config/mcp-tasks';
import type { LeadInputFiller } from '../contracts/minimal-lead-input';
import type { ModelSettings } from '../contracts/model';
import type { ToolEntry } from '../contracts/config/tools';
import type { CircuitBreakerConfig as CircuitBreakerSettings } from '../contracts/config/memory';
import { loadConfig } from './config';
import { processConfigDigest } from './config-digest';
import { configLeadInputs } from './lead-inputs';
import { startWorkerMcp } from './mcp';
import { metricsBindAddress } from './metrics';
import { processEncryptionKeys } from '../payloads/encryption-keys';
import { configurePayloads, payloadSettings, payloadStore } from '../payloads/store';
import { closeProcessStreamBridge, configureStreamBridge } from '../payloads/stream/bridge';
import { DEFAULT_WORKSPACE_SETTINGS } from '../contracts/workspace';
import {
  describeWorkspaceHosting,
  workspaceHosting,
  type WorkspaceHostingSettings,
} from './workspace-hosting';
import { installRuntime, logLevelFromEnv } from './runtime';
import { runWorkerUntilSignal } from './shutdown';
import { startTracing, type WorkerTracing } from './tracing';
import {
  createProjectWorker,
  hostWorkerStopped,
  withdrawAdmission,
  workerTuning,
  type WorkerSettings,
} from './worker';

export interface WorkerService {
  connection: NativeConnection;
  /** host:port, for the start line. */
  address: string;
  namespace: string;
  taskQueue: string;
  /** A prebuilt workflow bundle; bundled from source when omitted. */
  workflowBundlePath?: string;
  /** The sandbox settings of the worker's config: what `bash` runs in unless a run's config says otherwise. */
  sandbox: SandboxSettings;
  /** `subagent_runtime`: declared to the task queue's admission workflow when the worker starts. */
  admission: AdmissionSettings;
  /** `lead_runtime`: declared to the task queue's lead-run admission workflow when the worker starts. */
  runAdmission: AdmissionSettings;
  /** The `worker:` section (the workflow cache's bound). */
  worker?: WorkerSettings;
  /** The `metrics:` section, for the start line (the runtime serves the endpoint: installRuntime). */
  metrics?: MetricsSettings;
  /** The `tracing:` section: with `enabled`, the worker exports OpenTelemetry spans. */
  tracing?: TracingSettings;
  /** `mcp_servers` (and extensions_config's): connected when the worker starts, their tools offered to runs. */
  mcpServers?: McpServersConfig;
  /** `mcp_tasks:`: with `enabled`, the servers' task toolsets wait for their tasks in child workflows. */
  mcpTasks?: McpTasksConfig;
  /** `models`: the providers they name are warmed up while the worker starts (createProjectWorker). */
  models?: readonly ModelSettings[];
  /** `tools:`: the providers of the web tools this worker's calls use (absent: none configured). */
  tools?: readonly ToolEntry[];
  /** `circuit_breaker:`: one breaker per model provider endpoint in this process (absent: none). */
  circuitBreaker?: CircuitBreakerSettings;
  /** `workspace:` (mode, snapshots) and `worker.host_id`: how this worker's host serves runs' workspaces. */
  workspaces?: WorkspaceHostingSettings;
  /** A lead run's full input from the worker's config, for runs started with `{prompt}` alone. */
  leadInputs?: LeadInputFiller;
  /** The digest of the worker's config and environment, published in its heartbeats (worker/config-digest.ts). */
  configDigest?: string;
  /** Where the lifecycle lines go (stderr). */
  say: (line: string) => void;
}

/**
 * What a worker takes from its config file's sections, and the digest of them in this process's environment
 * (its payload settings configured: configurePayloads): the same for `subagents worker` and this process.
 */
export function configuredWorkerSettings(
  config: Config,
  env: NodeJS.ProcessEnv = process.env,
): Pick<
  WorkerService,
  | 'sandbox'
  | 'admission'
  | 'runAdmission'
  | 'worker'
  | 'metrics'
  | 'tracing'
  | 'mcpServers'
  | 'mcpTasks'
  | 'models'
  | 'tools'
  | 'circuitBreaker'
  | 'workspaces'
  | 'leadInputs'
  | 'configDigest'
> {
  return {
    sandbox: config.sandbox,
    admission: config.subagent_runtime,
    runAdmission: config.lead_runtime,
    worker: config.worker,
    metrics: config.metrics,
    tracing: config.tracing,
    mcpServers: config.mcp_servers,
    ...(config.mcp_tasks && { mcpTasks: config.mcp_tasks }),
    models: config.models,
    ...(config.tools && { tools: config.tools }),
    ...(config.circuit_breaker && { circuitBreaker: config.circuit_breaker }),
    workspaces: {
      workspace: config.workspace,
      ...(config.worker.host_id !== undefined && { hostId: config.worker.host_id }),
    },
    leadInputs: configLeadInputs(config),
    configDigest: processConfigDigest(config, env),
  };
}

/** The keys payloads are sealed and opened with: their ids (never the keys), newest first. */
export interface PayloadKeysInUse {
  keyIds: readonly string[];
  /** The variable that would give keys (payloads.encryption.key_env), for the hint when there are none. */
  keyEnv: string;
}

/** `encrypted with key <id> (N keys held)`, or how to turn encryption on: ids only, never key material. */
export function describePayloadEncryption({ keyIds, keyEnv }: PayloadKeysInUse): string {
  if (keyIds.length === 0) return `not encrypted (set ${keyEnv} to encrypt)`;
  const held = keyIds.length === 1 ? '1 key held' : `${keyIds.length} keys held`;
  return `encrypted with key ${keyIds[0]} (${held})`;
}

/** What the worker serves, printed once when it starts polling. */
export function workerStartLines(
  service: Omit<WorkerService, 'connection' | 'say' | 'sandbox' | 'tracing'>,
  sandbox: SandboxInUse,
  payloadKeys: PayloadKeysInUse,
  tracing?: Pick<WorkerTracing, 'description'>,
  workspaces?: string,
): string[] {
  const namespace = service.namespace === DEFAULT_NAMESPACE ? '' : `, namespace "${service.namespace}"`;
  const metrics = metricsBindAddress(service.metrics);
  // The digest `run` compares with its own (worker/config-digest.ts), for a reader who wonders why it did.
  const config = service.configDigest === undefined ? '' : `, config ${service.configDigest}`;
  return [
    `worker ready: task queue "${service.taskQueue}" on ${service.address}${namespace}${config}`,
    `bash sandbox: ${sandbox.description}${sandbox.fix ? ` (to enable it, ${sandbox.fix})` : ''}`,
    `admission: ${describeAdmission(service.admission)} (every run on the task queue)`,
    `lead runs in flight: ${describeAdmission(service.runAdmission)} (lead_runtime)`,
    `payloads: ${describePayloadEncryption(payloadKeys)}`,
    ...(workspaces === undefined ? [] : [workspaces]),
    ...(metrics === undefined ? [] : [`metrics: http://${metrics}/metrics (Prometheus)`]),
    ...(tracing === undefined ? [] : [`tracing: spans to ${tracing.description}`]),
  ];
}

/** Runs a project worker until SIGINT or SIGTERM, then shuts it down once; resolves when it has stopped. */
export async function serveWorker(service: WorkerService): Promise<void> {
  const tracing = startTracing(service.tracing);
  const mcp = await startWorkerMcp(service.mcpServers, service.say, process.env, service.mcpTasks);
  // One set for the activities and the start line: the line names the sandbox bash really runs in.
  const probes = machineProbes();
  const hosting = workspaceHosting(
    service.workspaces ?? { workspace: DEFAULT_WORKSPACE_SETTINGS },
    service.taskQueue,
    true,
  );
  try {
    const worker = await createProjectWorker({
      connection: service.connection,
      namespace: service.namespace,
      taskQueue: service.taskQueue,
      workflowBundlePath: service.workflowBundlePath,
      admission: service.admission,
      runAdmission: service.runAdmission,
      tuning: workerTuning(service.worker),
      say: service.say,
      probes,
      ...(service.models && { models: service.models }),
      ...(service.tools && { tools: service.tools }),
      ...(service.circuitBreaker && { circuitBreaker: service.circuitBreaker }),
      ...(service.leadInputs && { leadInputs: service.leadInputs }),
      ...(service.configDigest !== undefined && { configDigest: service.configDigest }),
      ...(mcp && { mcpCatalog: mcp.catalog }),
      ...(tracing && { tracing }),
      workspaces: hosting,
    });
    const sandbox = await chooseSandbox(service.sandbox, probes);
    // The settings the worker's data converter was built with (createProjectWorker: this process's).
    const encryption = payloadSettings().encryption;
    const payloadKeys = {
      keyIds: processEncryptionKeys(encryption).map((key) => key.id),
      keyEnv: encryption.key_env,
    };
    const stopped = runWorkerUntilSignal(worker, service.say);
    const workspaces = describeWorkspaceHosting(hosting, payloadStore().description);
    const lines = workerStartLines(service, sandbox, payloadKeys, tracing, workspaces);
    process.stdout.write(`${lines.join('\n')}\n`);
    await stopped;
    await hostWorkerStopped(worker);
    await withdrawAdmission(worker);
  } finally {
    // The spans still buffered go out before the process ends.
    await tracing?.shutdown();
    await mcp?.close();
    // Its Redis connection (stream_bridge: redis) would keep the process alive after the worker stopped.
    await closeProcessStreamBridge().catch(() => undefined);
  }
  service.say('worker stopped');
}

async function main(): Promise<void> {
  const configFile = process.env.SUBAGENTS_CONFIG;
  const { config } = loadConfig(configFile === '' ? undefined : configFile);
  // The store its activities, its codec and its workspaces' snapshots use (SUBAGENTS_PAYLOAD_DIR still wins).
  configurePayloads(config.payloads);
  configureStreamBridge(config.stream_bridge);
  // After the config (its `metrics:` decide the runtime's endpoint), before any native connection.
  installRuntime(logLevelFromEnv('WORKER_LOG_LEVEL', 'INFO'), { metrics: config.metrics });
  const { connectionOptions, namespace } = loadClientConnectConfig();
  const address = connectionOptions.address;
  if (!address) {
    throw new Error(
      'TEMPORAL_ADDRESS must be set (host:port of the Temporal frontend), or a Temporal profile',
    );
  }
  const connection = await NativeConnection.connect(connectionOptions);
  try {
    await serveWorker({
      connection,
      address,
      namespace: namespace ?? DEFAULT_NAMESPACE,
      taskQueue: process.env.TASK_QUEUE ?? DEFAULT_TASK_QUEUE,
      workflowBundlePath: process.env.WORKFLOW_BUNDLE,
      ...configuredWorkerSettings(config),
      say: (line) => process.stderr.write(`${line}\n`),
    });
  } finally {
    await connection.close();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
