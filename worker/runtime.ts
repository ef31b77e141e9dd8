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
  const error = meta?.error;
  return (
    prefixes !== undefined &&
    error instanceof Error &&
    prefixes.some((prefix) => error.message.startsWith(prefix))
  );
}

/**
 * A host's own task queue is polled by a Worker of activities alone (worker/workspace-hosting.ts), which the SDK
 * warns of at every start: by design here, not a fault.
 */
const ACTIVITIES_ONLY_WARNING = 'No workflows registered, not polling for workflow tasks';

/** One line per log on stderr (the SDK's default spreads a core log's fields over several). */
function writeLogLine({ level, message, meta, timestampNanos }: LogEntry): void {
  if (isReportedOutcome(level, message, meta) || message === ACTIVITIES_ONLY_WARNING) return;
  const time = new Date(Number(timestampNanos / 1_000_000n)).toISOString();
  const fields = Object.entries(meta ?? {}).filter(([, value]) => value !== undefined);
  const details =
    fields.length === 0 ? '' : ` ${inspect(Object.fromEntries(fields), { breakLength: Infinity })}`;
  process.stderr.write(`${time} [${level}] ${message}${details}\n`);
}

export interface RuntimeSettings {
  /** The config's `metrics:`: with a port, the runtime serves a Prometheus endpoint (worker/metrics.ts). */
  metrics?: MetricsSettings;
}

/**
 * How often each worker tells the server it runs (one small call for all of a process's workers): clients
 * tell a killed worker from a live one after three missed beats, and a stopped one at once from its last
 * beat (client/worker-liveness.ts); a run whose home host fell silent moves its workspace after three
 * (activities/workspace/home-liveness.ts), so the beat bounds how soon a lost host's runs go on. The SDK's
 * default, 60 s, would leave `run` and `status` guessing for minutes.
 */
export const WORKER_HEARTBEAT_INTERVAL_MS = 2000;

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
    logger: new DefaultLogger(level, writeLogLine),
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
