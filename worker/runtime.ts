/**
 * The SDK's runtime for a process that runs workers: installed once, before any worker or native connection
 * exists (after that the SDK has already made a default one, which prints the Rust core's logs on stdout).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { inspect } from 'node:util';
import { DefaultLogger, Runtime, type LogEntry, type LogLevel } from '@temporalio/worker';
import { ConfigError, type MetricsSettings } from '../contracts/config';
import { metricsExporter } from './metrics';
import { LEAD_RUN_FAILED_PREFIX, LEAD_RUN_TIMED_OUT_PREFIX } from '../contracts/lead';
import { SUBAGENT_FAILED_PREFIX, SUBAGENT_TIMED_OUT_PREFIX } from '../contracts/subagent';
import { WORKER_HEARTBEAT_INTERVAL_MS } from '../contracts/worker-heartbeats';

const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const satisfies readonly LogLevel[];

/** The log level the environment variable `name` sets (any case), or `fallback` when it is unset. */
export function logLevelFromEnv(name: string, fallback: LogLevel, env = process.env): LogLevel {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  const level = LOG_LEVELS.find((candidate) => candidate === value.toUpperCase());
  if (level === undefined) {
    throw new ConfigError([
      `${name}: ${JSON.stringify(value)} is not a log level (${LOG_LEVELS.join(', ')})`,
    ]);
  }
  return level;
}

let installed = false;

/**
 * A lead run or subagent that failed or timed out fails its workflow on purpose, its result in the failure
 * (contracts/closing.ts): an outcome the parent and the CLI report, not a fault of the worker, so the SDK's
 * warning for it (with a stack trace) is left out. The error reaches the logger as a plain copy (its failure
 * type lost), so it is known by its message's prefix.
 */
const REPORTED_OUTCOMES: Readonly<Record<string, readonly string[]>> = {
  subagentWorkflow: [SUBAGENT_FAILED_PREFIX, SUBAGENT_TIMED_OUT_PREFIX],
  leadRunWorkflow: [LEAD_RUN_FAILED_PREFIX, LEAD_RUN_TIMED_OUT_PREFIX],
};

function isReportedOutcome(level: string, message: string, meta: LogEntry['meta']): boolean {
  if (level !== 'WARN' || message !== 'Workflow failed') return false;
  const prefixes = typeof meta?.workflowType === 'string' ? REPORTED_OUTCOMES[meta.workflowType] : undefined;
  // Not `instanceof Error`: a worker that runs its workflows in the main thread (ONE_RUN_WORKER_OPTIONS) logs
  // the workflow context's own Error, from another realm.
  const errorMessage = (meta?.error as { message?: unknown } | undefined)?.message;
  return (
    prefixes !== undefined &&
    typeof errorMessage === 'string' &&
    prefixes.some((prefix) => errorMessage.startsWith(prefix))
  );
}

/**
 * A host's own task queue is polled by a Worker of activities alone (worker/workspace-hosting.ts), which the SDK
 * warns of at every start: by design here, not a fault.
 */
const ACTIVITIES_ONLY_WARNING = 'No workflows registered, not polling for workflow tasks';

/**
 * Logs that are routine in this project but read as breakage in the SDK's words (a 500-character line with a
 * gRPC status): each is said in one line of its own, and the SDK's full text follows only at DEBUG or TRACE.
 */
const PLAIN_WORDS: readonly {
  matches: (message: string, meta: LogEntry['meta']) => boolean;
  line: (meta: LogEntry['meta']) => string;
}[] = [
  {
    // The Rust core answered a query the server had already dropped: its caller (`status`, the live tree, the
    // Web UI) stopped waiting first, most often because the worker was busy. The next query is answered.
    matches: (message) => message.startsWith('Query not found when attempting to respond'),
    line: () =>
      'a query was answered after its caller had stopped waiting (a busy worker answers late; nothing is ' +
      'lost, the next query is answered)',
  },
  {
    // The admission workflow (workflows/admission/leases.ts) frees the slots of a worker that stopped renewing
    // its lease: what it is for, after a worker was stopped or killed.
    matches: (message, meta) =>
      message.startsWith('admission lease given up') && meta?.sdkComponent === 'workflow',
    line: (meta) => {
      const identity = typeof meta?.identity === 'string' ? meta.identity : 'a worker';
      const spare = typeof meta?.spare === 'number' ? meta.spare : 0;
      const queue = typeof meta?.taskQueue === 'string' ? ` on task queue "${meta.taskQueue}"` : '';
      return (
        `admission${queue}: ${identity} stopped reporting, so its lease is given up and its ` +
        `${spare} spare ${spare === 1 ? 'slot is' : 'slots are'} free again`
      );
    },
  },
];

/** Whether a logger at `level` shows DEBUG lines. */
const showsDebug = (level: LogLevel) => level === 'DEBUG' || level === 'TRACE';

/**
 * The lines stderr gets for a log, each whole (the SDK's default spreads a core log's fields over several):
 * none for an expected outcome, one readable line for a routine log the SDK words as a fault (its full text
 * only when the logger's `level` is DEBUG or TRACE), else the log as the SDK gives it.
 */
export function logLines(entry: LogEntry, level: LogLevel): string[] {
  const { level: entryLevel, message, meta, timestampNanos } = entry;
  if (isReportedOutcome(entryLevel, message, meta) || message === ACTIVITIES_ONLY_WARNING) return [];
  const time = new Date(Number(timestampNanos / 1_000_000n)).toISOString();
  const fields = Object.entries(meta ?? {}).filter(([, value]) => value !== undefined);
  const details =
    fields.length === 0 ? '' : ` ${inspect(Object.fromEntries(fields), { breakLength: Infinity })}`;
  const full = `${time} [${entryLevel}] ${message}${details}`;
  const plain = PLAIN_WORDS.find((kind) => kind.matches(message, meta));
  if (plain === undefined) return [full];
  return [
    `${time} [${entryLevel}] ${plain.line(meta)}`,
    ...(showsDebug(level) ? [`${time} [DEBUG] ${message}${details}`] : []),
  ];
}

export interface RuntimeSettings {
  /** The config's `metrics:`: with a port, the runtime serves a Prometheus endpoint (worker/metrics.ts). */
  metrics?: MetricsSettings;
}

/** How often each worker beats (contracts/worker-heartbeats.ts says what reads it). */
export { WORKER_HEARTBEAT_INTERVAL_MS };

/**
 * Every log of the SDK at `level` or above goes to stderr: the TypeScript side's through the logger, the Rust
 * core's forwarded to it, so stdout carries only what a command prints (`run --json`: the JSON alone). The
 * runtime handles no signals: the process shuts its worker down once itself (`worker/shutdown.ts`), so a
 * second shutdown request cannot reach a worker that is already draining. The first call wins: the SDK
 * installs a runtime once a process, before any worker or native connection.
 */
export function installRuntime(
  level: LogLevel = logLevelFromEnv('SUBAGENTS_LOG_LEVEL', 'WARN'),
  settings: RuntimeSettings = {},
): void {
  if (installed) return;
  installed = true;
  const metrics = metricsExporter(settings.metrics);
  Runtime.install({
    logger: new DefaultLogger(level, (entry) => {
      for (const line of logLines(entry, level)) process.stderr.write(`${line}\n`);
    }),
    telemetryOptions: {
      logging: { filter: { core: level, other: 'ERROR' }, forward: {} },
      ...(metrics && { metrics }),
    },
    shutdownSignals: [],
    workerHeartbeatInterval: WORKER_HEARTBEAT_INTERVAL_MS,
  });
}

/**
 * The core pushes its logs to this side in batches, at least every 10 ms, and drops the batch in flight when
 * the runtime shuts down (as the last worker and native connection close): a warning a stopping worker
 * logged would be lost. Waiting this long after a worker stopped lets its last batch arrive.
 */
const CORE_LOG_BATCH_SETTLE_MS = 100;

/** Waits for the core's last forwarded logs: call it after a worker stopped, before closing its connection. */
export async function settleCoreLogs(): Promise<void> {
  await sleep(CORE_LOG_BATCH_SETTLE_MS);
}
