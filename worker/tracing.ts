/**
 * OpenTelemetry tracing of a worker (config `tracing:`, off by default), with the SDK's interceptors
 * (`@temporalio/interceptors-opentelemetry`): a span for each workflow run, activity, child workflow, signal and
 * client call, linked into one trace per lead run through W3C trace context in Temporal headers. Workflow spans
 * are made inside the sandbox and leave it by the interceptors' sink (`exporter`), which the SDK does not call
 * during replay.
 *
 * The workflow side is an interceptor module bundled with the workflows (`workflowInterceptorModules`), so a
 * worker that traces runs a bundle of its own; with tracing off the bundle is the project's usual one, byte for
 * byte, and nothing here is loaded into it.
 */
import type { WorkerOptions } from '@temporalio/worker';
import type { TracingSettings } from '../contracts/config';
import type * as TracingSdk from './tracing-sdk';
import { loadOptional } from '../payloads/optional-packages';

/** The tracing of one worker process: what its Worker is made with, and the flush when it stops. */
export interface WorkerTracing {
  /** `bundleWorkflowCode`'s workflowInterceptorModules. */
  workflowInterceptorModules: string[];
  /** The interceptors (activities, the activities' client) and the sink that takes the workflows' spans. */
  workerOptions: Pick<WorkerOptions, 'interceptors' | 'sinks'>;
  /** Where the spans go, for the start line. */
  description: string;
  /** Exports what is still buffered; call once the worker has stopped. */
  shutdown(): Promise<void>;
}

/** The worker's tracing by the config's `tracing:`; undefined when it is off. */
export function startTracing(settings: TracingSettings | undefined): WorkerTracing | undefined {
  if (settings?.enabled !== true) return undefined;
  return tracingSdk().startTracingSdk(settings);
}

/**
 * The OpenTelemetry SDK and the SDK's interceptors (~140 modules), loaded by a worker that traces: with tracing
 * off (the default) none of it is loaded (BENCHMARKS.md, "Where the memory goes").
 */
function tracingSdk(): typeof TracingSdk {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy; import() needs --experimental-vm-modules under jest
  return loadOptional('tracing (tracing.enabled: true)', () => require('./tracing-sdk') as typeof TracingSdk);
}
