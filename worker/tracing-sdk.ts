/**
 * The OpenTelemetry side of a worker that traces (worker/tracing.ts, `startTracing`, loads this module only
 * then): the tracer provider, its span processor and exporter, the trace context's globals, and the SDK's
 * interceptors.
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
import type { TracingSettings } from '../contracts/config';
import { JsonLinesSpanExporter, OtlpHttpJsonSpanExporter } from './span-exporters';
import type { WorkerTracing } from './tracing';

/** The SDK's workflow interceptors for OpenTelemetry: added to the bundle of a worker that traces. */
export const OTEL_WORKFLOW_INTERCEPTOR_MODULE =
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');

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

/** The worker's tracing, `tracing:` being enabled. */
export function startTracingSdk(settings: TracingSettings): WorkerTracing {
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
