/** The span exporters of tracing: OTLP/HTTP JSON to a collector (a local server here), JSON lines to a file. */
import { once } from 'node:events';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { Resource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { JsonLinesSpanExporter, OtlpHttpJsonSpanExporter } from '../../../worker/span-exporters';

const span: ReadableSpan = {
  name: 'RunActivity:callModel',
  kind: SpanKind.INTERNAL,
  spanContext: () => ({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 }),
  parentSpanId: 'c'.repeat(16),
  startTime: [1_700_000_000, 500_000_000],
  endTime: [1_700_000_001, 0],
  status: { code: SpanStatusCode.OK },
  attributes: { 'subagents.agent': 'lead', 'subagents.input_tokens': 20, ratio: 0.5, replay: false },
  links: [],
  events: [{ name: 'retry', time: [1_700_000_000, 600_000_000], attributes: { attempt: 2 } }],
  duration: [0, 500_000_000],
  ended: true,
  resource: new Resource({ 'service.name': 'agents' }),
  instrumentationLibrary: { name: 'durable-subagents' },
  droppedAttributesCount: 0,
  droppedEventsCount: 0,
  droppedLinksCount: 0,
};

function exported(run: (done: (result: ExportResult) => void) => void): Promise<ExportResult> {
  return new Promise((resolve) => run(resolve));
}

describe('OtlpHttpJsonSpanExporter', () => {
  it('posts the OTLP JSON encoding of the spans', async () => {
    const bodies: unknown[] = [];
    const server = createServer((request: IncomingMessage, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        expect(request.url).toBe('/v1/traces');
        expect(request.headers['content-type']).toBe('application/json');
        bodies.push(JSON.parse(body));
        response.end('{}');
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    try {
      const exporter = new OtlpHttpJsonSpanExporter(`http://127.0.0.1:${port}/v1/traces`);
      const result = await exported((done) => exporter.export([span], done));
      expect(result.code).toBe(ExportResultCode.SUCCESS);
      await exporter.shutdown();
    } finally {
      server.close();
    }
    expect(bodies).toEqual([
      {
        resourceSpans: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: 'agents' } }] },
            scopeSpans: [
              {
                scope: { name: 'durable-subagents' },
                spans: [
                  {
                    traceId: 'a'.repeat(32),
                    spanId: 'b'.repeat(16),
                    parentSpanId: 'c'.repeat(16),
                    name: 'RunActivity:callModel',
                    kind: 1,
                    startTimeUnixNano: '1700000000500000000',
                    endTimeUnixNano: '1700000001000000000',
                    attributes: [
                      { key: 'subagents.agent', value: { stringValue: 'lead' } },
                      { key: 'subagents.input_tokens', value: { intValue: '20' } },
                      { key: 'ratio', value: { doubleValue: 0.5 } },
                      { key: 'replay', value: { boolValue: false } },
                    ],
                    events: [
                      {
                        timeUnixNano: '1700000000600000000',
                        name: 'retry',
                        attributes: [{ key: 'attempt', value: { intValue: '2' } }],
                      },
                    ],
                    status: { code: 1 },
                  },
                ],
              },
            ],
          },
        ],
      },
    ]);
  });

  it('reports a collector that refuses the spans as a failed export', async () => {
    const server = createServer((_request, response) => {
      response.statusCode = 503;
      response.end();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    try {
      const exporter = new OtlpHttpJsonSpanExporter(`http://127.0.0.1:${port}/v1/traces`);
      const result = await exported((done) => exporter.export([span], done));
      expect(result.code).toBe(ExportResultCode.FAILED);
      expect(result.error?.message).toMatch(/HTTP 503/);
    } finally {
      server.close();
    }
  });
});

describe('JsonLinesSpanExporter', () => {
  it('appends one JSON line a span', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'spans-')), 'nested', 'spans.jsonl');
    const exporter = new JsonLinesSpanExporter(file);
    await exported((done) => exporter.export([span], done));
    await exported((done) => exporter.export([span], done));
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[0])).toEqual({
      trace_id: 'a'.repeat(32),
      span_id: 'b'.repeat(16),
      parent_span_id: 'c'.repeat(16),
      name: 'RunActivity:callModel',
      kind: SpanKind.INTERNAL,
      start: '2023-11-14T22:13:20.500Z',
      duration_ms: 500,
      status: { code: SpanStatusCode.OK },
      attributes: { 'subagents.agent': 'lead', 'subagents.input_tokens': 20, ratio: 0.5, replay: false },
      events: [{ name: 'retry', attributes: { attempt: 2 } }],
      service: 'agents',
    });
  });
});
