/**
 * Where tracing's spans go (config `tracing.exporter`): an OpenTelemetry collector over OTLP/HTTP with the
 * JSON encoding, or a file of one JSON line a span for a machine without a collector. Both are written here
 * rather than taken from an exporter package: they are small, and they need nothing beyond the SDK's own
 * OpenTelemetry dependencies.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { HrTime } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

type Primitive = string | number | boolean;

/** Attribute values a span may carry: the SDK's workflow spans also get the workflow info's objects. */
function primitive(value: unknown): Primitive | undefined {
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (value instanceof Date) return value.toISOString();
  return undefined;
}

function plainAttributes(attributes: Record<string, unknown>): Record<string, Primitive> {
  return Object.fromEntries(
    Object.entries(attributes).flatMap(([key, value]) => {
      const kept = primitive(value);
      return kept === undefined ? [] : [[key, kept]];
    }),
  );
}

function nanos([seconds, nanoseconds]: HrTime): bigint {
  return BigInt(seconds) * 1_000_000_000n + BigInt(nanoseconds);
}

/** One span as a JSON line: ids, name, times, attributes, status, events. */
export function spanRecord(span: ReadableSpan): Record<string, unknown> {
  const context = span.spanContext();
  const start = nanos(span.startTime);
  const end = nanos(span.endTime);
  return {
    trace_id: context.traceId,
    span_id: context.spanId,
    ...(span.parentSpanId && { parent_span_id: span.parentSpanId }),
    name: span.name,
    kind: span.kind,
    start: new Date(Number(start / 1_000_000n)).toISOString(),
    duration_ms: Number(end - start) / 1e6,
    status: span.status,
    attributes: plainAttributes(span.attributes),
    ...(span.events.length > 0 && {
      events: span.events.map((event) => ({
        name: event.name,
        ...(event.attributes && { attributes: plainAttributes(event.attributes) }),
      })),
    }),
    service: span.resource.attributes['service.name'],
  };
}

/** Appends each span to `path` as a JSON line (the folder is made when missing). */
export class JsonLinesSpanExporter implements SpanExporter {
  constructor(private readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
  }

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    try {
      const lines = spans.map((span) => `${JSON.stringify(spanRecord(span))}\n`).join('');
      appendFileSync(this.path, lines);
      done({ code: ExportResultCode.SUCCESS });
    } catch (err) {
      done({ code: ExportResultCode.FAILED, error: err instanceof Error ? err : new Error(String(err)) });
    }
  }

  async shutdown(): Promise<void> {}
}

type OtlpValue =
  { stringValue: string } | { boolValue: boolean } | { intValue: string } | { doubleValue: number };

function otlpValue(value: Primitive): OtlpValue {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
}

function otlpAttributes(attributes: Record<string, unknown>): { key: string; value: OtlpValue }[] {
  return Object.entries(plainAttributes(attributes)).map(([key, value]) => ({
    key,
    value: otlpValue(value),
  }));
}

/**
 * The OTLP/HTTP JSON body for `spans` (opentelemetry-proto's JSON mapping: ids in hex, times in nanoseconds
 * as strings, span kinds one above the API's), grouped by resource and instrumentation scope.
 */
export function otlpTraceRequest(spans: readonly ReadableSpan[]): Record<string, unknown> {
  const byResource = new Map<ReadableSpan['resource'], Map<string, ReadableSpan[]>>();
  for (const span of spans) {
    const scopes = byResource.get(span.resource) ?? new Map<string, ReadableSpan[]>();
    byResource.set(span.resource, scopes);
    const scope = JSON.stringify([
      span.instrumentationLibrary.name,
      span.instrumentationLibrary.version ?? '',
    ]);
    scopes.set(scope, [...(scopes.get(scope) ?? []), span]);
  }
  return {
    resourceSpans: [...byResource].map(([resource, scopes]) => ({
      resource: { attributes: otlpAttributes(resource.attributes) },
      scopeSpans: [...scopes].map(([scope, scopeSpans]) => {
        const [name, version] = JSON.parse(scope) as [string, string];
        return {
          scope: { name, ...(version !== '' && { version }) },
          spans: scopeSpans.map((span) => ({
            traceId: span.spanContext().traceId,
            spanId: span.spanContext().spanId,
            ...(span.parentSpanId && { parentSpanId: span.parentSpanId }),
            name: span.name,
            kind: span.kind + 1,
            startTimeUnixNano: String(nanos(span.startTime)),
            endTimeUnixNano: String(nanos(span.endTime)),
            attributes: otlpAttributes(span.attributes),
            events: span.events.map((event) => ({
              timeUnixNano: String(nanos(event.time)),
              name: event.name,
              attributes: otlpAttributes(event.attributes ?? {}),
            })),
            status: { code: span.status.code, ...(span.status.message && { message: span.status.message }) },
          })),
        };
      }),
    })),
  };
}

/** How long one export may take before it counts as failed (a collector that hangs must not hold spans). */
const OTLP_EXPORT_TIMEOUT_MS = 10_000;

/** Posts spans to an OTLP/HTTP traces endpoint (e.g. a collector's http://localhost:4318/v1/traces). */
export class OtlpHttpJsonSpanExporter implements SpanExporter {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly endpoint: string) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    const sent = this.post(spans).then(
      () => done({ code: ExportResultCode.SUCCESS }),
      (err: unknown) =>
        done({ code: ExportResultCode.FAILED, error: err instanceof Error ? err : new Error(String(err)) }),
    );
    this.inFlight.add(sent);
    void sent.finally(() => this.inFlight.delete(sent));
  }

  private async post(spans: ReadableSpan[]): Promise<void> {
    const response = await fetch(this.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(otlpTraceRequest(spans)),
      signal: AbortSignal.timeout(OTLP_EXPORT_TIMEOUT_MS),
    });
    await response.body?.cancel();
    if (!response.ok) throw new Error(`OTLP endpoint ${this.endpoint} answered HTTP ${response.status}`);
  }

  async forceFlush(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  async shutdown(): Promise<void> {
    await this.forceFlush();
  }
}
