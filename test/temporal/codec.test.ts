/**
 * The claim-check codec on the real server: a workflow whose argument and result are larger than the threshold
 * leaves only small references in history, a client with the codec reads the real values, and the codec
 * endpoint the Web UI calls turns a reference from that history back into the original JSON; the embedded
 * dev server's Web UI may call that endpoint, and no other page.
 */
import { execFile } from 'node:child_process';
import { renameSync } from 'node:fs';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { CLAIM_CHECK_ENCODING } from '../../payloads/claim-check-codec';
import { startCodecServer, startEmbeddedCodecServer } from '../../payloads/codec-server';
import { projectCodec } from '../../payloads/data-converter';
import { payloadSettings, payloadStore, type LocalDirBlobStore } from '../../payloads/store';
import { findTemporalCli } from '../../devserver/temporal-cli';
import { startDevServer } from '../../devserver/temporal-server';
import {
  connectClient,
  testAddress,
  testNamespace,
  uniqueTaskQueue,
  waitFor,
  withWorker,
} from '../harness/temporal';
import * as activities from '../fixtures/smoke/activities';
import { historyPayloads as everyPayload, payloadsHolding } from '../support/history-payloads';
import { echo } from '../fixtures/smoke/workflows';

type IPayload = temporal.api.common.v1.IPayload;
type IHistory = temporal.api.history.v1.IHistory;

const workflowsPath = require.resolve('../fixtures/smoke/workflows');

const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');
const encodingOf = (payload: IPayload) => text(payload.metadata?.encoding);

/** Every payload the history's events carry as inputs and results. */
function historyPayloads(history: IHistory): IPayload[] {
  return (history.events ?? []).flatMap((event) => [
    ...(event.workflowExecutionStartedEventAttributes?.input?.payloads ?? []),
    ...(event.activityTaskScheduledEventAttributes?.input?.payloads ?? []),
    ...(event.activityTaskCompletedEventAttributes?.result?.payloads ?? []),
    ...(event.workflowExecutionCompletedEventAttributes?.result?.payloads ?? []),
  ]);
}

const toJson = (payload: IPayload) => ({
  metadata: Object.fromEntries(
    Object.entries(payload.metadata ?? {}).map(([key, value]) => [
      key,
      Buffer.from(value ?? []).toString('base64'),
    ]),
  ),
  data: Buffer.from(payload.data ?? []).toString('base64'),
});

it('keeps a large argument and result out of history, and decodes them for clients and the Web UI', async () => {
  const taskQueue = uniqueTaskQueue('codec');
  const workflowId = `${taskQueue}-echo`;
  // ~40 KB of JSON, past the default 16 KiB threshold.
  const large = Array.from({ length: 1000 }, (_, i) => `line ${i}: the quick brown fox`).join('\n');
  const { client, close } = await connectClient();
  const plainConnection = await Connection.connect({ address: testAddress() });
  // As `subagents codec-server` serves a UI of `temporal server start-dev` listed in allowed_origins.
  const codecServer = await startCodecServer({
    codec: projectCodec(),
    allowedOrigins: ['http://127.0.0.1:8233', 'http://localhost:8233'],
  });
  try {
    const result = await withWorker({ taskQueue, workflowsPath, activities }, () =>
      client.workflow.execute(echo, { taskQueue, workflowId, args: [large] }),
    );
    expect(result).toBe(`Hello, ${large}!`);

    // A client without the codec sees what the server stores: references of about a hundred bytes.
    const plain = new Client({ connection: plainConnection, namespace: testNamespace() });
    const history = await plain.workflow.getHandle(workflowId).fetchHistory();
    const payloads = historyPayloads(history);
    expect(payloads).toHaveLength(4);
    for (const payload of payloads) {
      expect(encodingOf(payload)).toBe(CLAIM_CHECK_ENCODING);
      expect(JSON.parse(text(payload.data))).toEqual({
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        size: expect.any(Number),
      });
      expect(payload.data?.length).toBeLessThan(120);
    }
    // Every payload of every event, each read as the bytes it is: the text is in none.
    expect(payloadsHolding(everyPayload(history), 'the quick brown fox')).toEqual([]);
    // The workflow hands its input to the activity and returns the activity's result: two blobs, not four.
    const hashes = payloads.map((payload) => (JSON.parse(text(payload.data)) as { sha256: string }).sha256);
    expect(hashes[1]).toBe(hashes[0]);
    expect(hashes[3]).toBe(hashes[2]);
    expect(hashes[2]).not.toBe(hashes[0]);
    await expect(plain.workflow.getHandle(workflowId).result()).rejects.toThrow(/binary\/claim-check/);

    // The client with the codec reads the real value.
    expect(await client.workflow.getHandle(workflowId).result()).toBe(`Hello, ${large}!`);

    // The Web UI's call: the workflow's input, as the UI posts it, comes back as the original JSON.
    const started = payloads[0];
    const response = await fetch(`${codecServer.url}/decode`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Namespace': testNamespace(),
        Origin: 'http://127.0.0.1:8233',
      },
      body: JSON.stringify({ payloads: [toJson(started)] }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:8233');
    const decoded = (await response.json()) as {
      payloads: { metadata: Record<string, string>; data: string }[];
    };
    expect(Buffer.from(decoded.payloads[0].metadata.encoding, 'base64').toString('utf8')).toBe('json/plain');
    expect(JSON.parse(Buffer.from(decoded.payloads[0].data, 'base64').toString('utf8'))).toBe(large);

    // The browser asks first; the endpoint answers for the UI's origin and the headers it sends.
    const preflight = await fetch(`${codecServer.url}/decode`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'http://localhost:8233',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type,x-namespace,authorization',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    expect(preflight.headers.get('access-control-allow-headers')).toBe(
      'content-type,x-namespace,authorization',
    );

    // The Temporal CLI decodes through the same endpoint (how recorded histories stay self-contained).
    // The suite's server runs on the Temporal CLI: a missing one is a failure, not a check left out.
    const cli = findTemporalCli();
    if (!cli) throw new Error('the Temporal CLI is missing');
    const { stdout } = await promisify(execFile)(
      cli.path,
      [
        'workflow',
        'show',
        '--workflow-id',
        workflowId,
        '--address',
        testAddress(),
        '--namespace',
        testNamespace(),
      ].concat(['--codec-endpoint', codecServer.url, '--output', 'json']),
      { maxBuffer: 16 * 1024 * 1024 },
    );
    expect(stdout).not.toContain(CLAIM_CHECK_ENCODING);
    expect(stdout).toContain(Buffer.from(JSON.stringify(large)).toString('base64').slice(0, 40));
  } finally {
    await codecServer.close();
    await plainConnection.close();
    await close();
  }
});

it('fails the workflow task on a missing blob with a message naming it, and goes on once it is back', async () => {
  const taskQueue = uniqueTaskQueue('codec-missing');
  const workflowId = `${taskQueue}-echo`;
  const large = 'a line of a long transcript\n'.repeat(1000);
  const { client, close } = await connectClient();
  try {
    // Started before any worker polls: the input's blob is in the store, its reference in history.
    const handle = await client.workflow.start(echo, { taskQueue, workflowId, args: [large] });
    const [input] = historyPayloads(await handle.fetchHistory());
    const { sha256 } = JSON.parse(text(input.data)) as { sha256: string };
    const blob = (payloadStore() as LocalDirBlobStore).pathOf(sha256);
    renameSync(blob, `${blob}.aside`);

    const failures = async () =>
      ((await handle.fetchHistory()).events ?? []).flatMap((event) => {
        const message = event.workflowTaskFailedEventAttributes?.failure?.message;
        return message ? [message] : [];
      });
    const result = await withWorker({ taskQueue, workflowsPath, activities }, async () => {
      await waitFor('a failed workflow task', async () => (await failures()).length > 0);
      const [message] = await failures();
      expect(message).toContain(`payload blob ${sha256} is missing from ${payloadStore().description}`);
      renameSync(`${blob}.aside`, blob);
      return handle.result();
    });
    expect(result).toBe(`Hello, ${large}!`);
  } finally {
    await close();
  }
});

it('lets the embedded dev server’s Web UI decode through its codec endpoint, and no other page', async () => {
  const codec = await startEmbeddedCodecServer(payloadSettings());
  if (codec === undefined) throw new Error('the codec endpoint is on by default');
  const lines: string[] = [];
  const server = await startDevServer({ uiCodec: codec, log: (line) => lines.push(line) }).catch(
    async (err: unknown) => {
      await codec.close();
      throw err;
    },
  );
  try {
    expect(server.uiCodecEndpoint).toBe(codec.url);
    expect(lines.join('\n')).toContain(`(payloads decoded by ${codec.url})`);
    expect(codec.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // The UI was started with the endpoint: its settings, which its pages read, name it.
    const settings = (await (await fetch(`${server.uiUrl}/api/v1/settings`)).json()) as {
      Codec?: { Endpoint?: string };
    };
    expect(settings.Codec?.Endpoint).toBe(codec.url);

    const uiPort = Number(new URL(server.uiUrl ?? '').port);
    const reference = {
      metadata: { encoding: Buffer.from('json/plain').toString('base64') },
      data: Buffer.from(JSON.stringify('hello')).toString('base64'),
    };
    const call = (origin: string, method: 'OPTIONS' | 'POST', action = 'decode') =>
      fetch(`${codec.url}/${action}`, {
        method,
        headers: {
          Origin: origin,
          ...(method === 'OPTIONS'
            ? {
                'Access-Control-Request-Method': 'POST',
                'Access-Control-Request-Headers': 'content-type,x-namespace',
              }
            : { 'Content-Type': 'application/json', 'X-Namespace': server.namespace }),
        },
        ...(method === 'POST' ? { body: JSON.stringify({ payloads: [reference] }) } : {}),
      });
    // The UI's own pages, by either loopback name.
    for (const origin of [`http://127.0.0.1:${uiPort}`, `http://localhost:${uiPort}`]) {
      const preflight = await call(origin, 'OPTIONS');
      expect([origin, preflight.status]).toEqual([origin, 204]);
      expect(preflight.headers.get('access-control-allow-origin')).toBe(origin);
      const decoded = await call(origin, 'POST');
      expect([origin, decoded.status]).toEqual([origin, 200]);
      expect(decoded.headers.get('access-control-allow-origin')).toBe(origin);
      expect(((await decoded.json()) as { payloads: unknown[] }).payloads).toEqual([reference]);
    }
    // Any other page: another local app, a name that merely starts like a loopback address.
    for (const origin of [
      `http://127.0.0.1:${uiPort === 65535 ? 65534 : uiPort + 1}`,
      `http://127.0.0.1.nip.io:${uiPort}`,
      'http://127.attacker.example',
    ]) {
      const preflight = await call(origin, 'OPTIONS');
      expect([origin, preflight.status]).toEqual([origin, 403]);
      expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    }
    // Writing is off unless asked for, even for the UI's own pages.
    expect((await call(`http://127.0.0.1:${uiPort}`, 'POST', 'encode')).status).toBe(403);
  } finally {
    await server.stop();
    await codec.close();
  }
});
