/**
 * The tree's live stream against the real server (docs/live.md): a three-part run's workers publish each
 * agent's text and tool results to a file stream bridge; `subagents serve`'s endpoint (`GET
 * /runs/<id>/stream`) gives a client that was there from the start every event live, and one that comes after
 * the end the same backlog; the final text equals the run's result. And who may decide: nobody unsigned.
 */
import { get as httpGet } from 'node:http';
import { SubagentsClient } from '../../client/api';
import { startLiveServer, type LiveServer } from '../../client/live-server';
import type { StreamEvent } from '../../contracts/stream';
import type { FileStreamBridge } from '../../payloads/stream/file-bridge';
import { leadInput, scriptedWorkspace } from '../support/subagent-input';
import {
  LEAD_ANSWER,
  PARTS,
  partAnswer,
  readSse,
  streamedText,
  testFileBridge,
  threePartScript,
} from '../support/live-stream';
import {
  startLeadRun,
  testNamespace,
  uniqueTaskQueue,
  useTestClient,
  withProjectWorker,
} from '../harness/temporal';

const testClient = useTestClient();

async function withLiveServer<T>(
  bridge: FileStreamBridge,
  body: (server: LiveServer) => Promise<T>,
  extra: { tokens?: Map<string, string> } = {},
): Promise<T> {
  const server = await startLiveServer({
    client: new SubagentsClient(testClient(), testNamespace()),
    bridge,
    pollMs: 200,
    ...extra,
  });
  try {
    return await body(server);
  } finally {
    await server.close();
  }
}

const kinds = (events: readonly StreamEvent[], path: string) =>
  events.filter((event) => event.path === path).map((event) => event.kind);

it('streams every agent live, gives a late client the same backlog, and ends with the final text', async () => {
  const { workspace, scriptFile } = scriptedWorkspace('live-stream', threePartScript(400));
  const input = leadInput({
    workspace,
    scriptFile,
    config: { subagent_runtime: { max_running: 3 }, subagents: { max_concurrent: 3 } },
  });
  const bridge = testFileBridge('sse');
  const taskQueue = uniqueTaskQueue('live-stream');
  await withProjectWorker(
    taskQueue,
    () =>
      withLiveServer(bridge, async (server) => {
        const handle = await startLeadRun(testClient(), input, taskQueue);
        const url = `${server.url}/runs/${encodeURIComponent(handle.workflowId)}/stream`;
        // A client from the start: it sees a part's text grow before the run ends.
        let textBeforeEnd = 0;
        let ended = false;
        const live = await readSse(url, {
          onEvent: (event) => {
            if (event.kind === 'run_ended') ended = true;
            if (event.kind === 'text' && event.path !== '' && !ended) textBeforeEnd += 1;
          },
        });
        const result = await handle.result();
        expect(result.status).toBe('completed');
        expect(result.final_output).toBe(LEAD_ANSWER);
        expect(live.contentType).toMatch(/^text\/event-stream/);
        expect(textBeforeEnd).toBeGreaterThan(3);

        const events = live.frames.map((frame) => frame.event);
        for (const id of PARTS) {
          // Each subagent's tool result and its text, in its turn's order, tagged with its delegation path.
          const toolResult = events.find((event) => event.path === id && event.kind === 'tool_result');
          expect(toolResult?.tool_result).toMatchObject({ name: 'write_file', is_error: false });
          expect(toolResult?.workflow_id).toBe(`${handle.workflowId}/task/${id}`);
          expect(streamedText(events, id)).toBe(partAnswer(id));
          const order = kinds(events, id).filter((kind) => kind !== 'text' && kind !== 'task_event');
          expect(order).toEqual([
            'agent_started',
            'turn_started',
            'tool_call',
            'turn_ended',
            'tool_result',
            'turn_started',
            'turn_ended',
          ]);
        }
        const end = events[events.length - 1];
        expect(end).toMatchObject({ kind: 'run_ended', status: 'completed', text: result.final_output });
        expect(streamedText(events, '')).toBe(result.final_output);

        // A client after the end: the backlog, the same bridge entries in the same order, then the end.
        const late = await readSse(url);
        const ids = (read: typeof live) =>
          read.frames.filter((frame) => frame.id !== '').map((frame) => frame.id);
        expect(ids(late)).toEqual(ids(live));
        expect(late.frames[late.frames.length - 1].event).toMatchObject({
          kind: 'run_ended',
          text: result.final_output,
        });

        // The client API reads the same stream.
        const streamed: StreamEvent[] = [];
        for await (const entry of new SubagentsClient(testClient(), testNamespace())
          .getRun(handle.workflowId)
          .stream({ bridge, pollMs: 200 }))
          streamed.push(entry.event);
        expect(streamedText(streamed, 'part1')).toBe(partAnswer('part1'));
        expect(streamed[streamed.length - 1]).toMatchObject({ kind: 'run_ended', text: LEAD_ANSWER });
      }),
    { stream: bridge },
  );
});

it('lets nobody unsigned decide, refuses a wrong token, and answers only to a loopback host', async () => {
  const bridge = testFileBridge('auth');
  await withLiveServer(
    bridge,
    async (server) => {
      const post = (headers: Record<string, string>) =>
        fetch(`${server.url}/runs/none/approve`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: '{}',
        });
      expect((await post({})).status).toBe(401);
      expect((await post({ authorization: 'Bearer wrong' })).status).toBe(401);
      const stream = await fetch(`${server.url}/runs/none/stream`);
      expect(stream.status).toBe(401);
      const who = await fetch(`${server.url}/whoami`, { headers: { authorization: 'Bearer s3cret' } });
      expect(await who.json()).toEqual({ person: 'alice', can_decide: true });
      // A name re-pointed at 127.0.0.1 (DNS rebinding) reaches nothing.
      expect(await statusOf(`${server.url}/whoami`, { host: 'attacker.example' })).toBe(403);
    },
    { tokens: new Map([['s3cret', 'alice']]) },
  );
});

/** The status of a GET with headers fetch would not send as given (Host). */
function statusOf(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpGet(url, { headers }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject);
  });
}
