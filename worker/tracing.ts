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
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  context as otelContext,
  propagation,
  ROOT_CONTEXT,
  type Context,
  type ContextManager,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { Resource } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { WorkerOptions } from '@temporalio/worker';
import type { TracingSettings } from '../contracts/config';
import { JsonLinesSpanExporter, OtlpHttpJsonSpanExporter } from './span-exporters';

/** The SDK's workflow interceptors for OpenTelemetry: added to the bundle of a worker that traces. */
export const OTEL_WORKFLOW_INTERCEPTOR_MODULE =
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');

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

/**
 * Activity context for OpenTelemetry: a span started in an activity is the parent of what the activity does
 * next (its client's calls), as @opentelemetry/context-async-hooks would give.
 */
class AsyncLocalStorageContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(context, () => fn.call(thisArg, ...args));
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const run = (...args: unknown[]) =>
      this.with(context, () => (target as (...a: unknown[]) => unknown)(...args));
    return run as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.storage.disable();
    return this;
  }
}

let globalsSet = false;

/** Trace context travels in Temporal headers as W3C traceparent; the process-wide OpenTelemetry API reads it. */
function setTracingGlobals(): void {
  if (globalsSet) return;
  globalsSet = true;
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  otelContext.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
}

function spanProcessor(settings: TracingSettings): { processor: SpanProcessor; description: string } {
  if (settings.exporter === 'file') {
    // A file is written at once (no batch to lose when the process ends).
    const file = settings.file!;
    return { processor: new SimpleSpanProcessor(new JsonLinesSpanExporter(file)), description: file };
  }
  return {
    processor: new BatchSpanProcessor(new OtlpHttpJsonSpanExporter(settings.otlp_endpoint)),
    description: `OTLP ${settings.otlp_endpoint}`,
  };
}

/** The worker's tracing by the config's `tracing:`; undefined when it is off. */
export function startTracing(settings: TracingSettings | undefined): WorkerTracing | undefined {
  if (settings?.enabled !== true) return undefined;
  setTracingGlobals();
  const resource = new Resource({ 'service.name': settings.service_name });
  const { processor, description } = spanProcessor(settings);
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  const tracer = provider.getTracer('durable-subagents');
  return {
    workflowInterceptorModules: [OTEL_WORKFLOW_INTERCEPTOR_MODULE],
    workerOptions: {
      interceptors: {
        activity: [
          (ctx) => ({
            inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer }),
            outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
          }),
        ],
        client: { workflow: [new OpenTelemetryWorkflowClientInterceptor({ tracer })] },
      },
      sinks: { exporter: makeWorkflowExporter(processor, resource) },
    },
    description,
    shutdown: () => provider.shutdown(),
  };
}
