/**
 * The live stream over Redis Streams (`stream_bridge: {type: redis}`), against the real server and Debian's
 * redis-server: two workers (two hosts' identities), each publishing through a Redis connection of its own,
 * run a three-part run and both take part of it (history says which ran each agent's model calls); a reader
 * with a third connection sees every agent's tool result and every text piece of both workers, in order per
 * agent, then the end; a reader after the end gets the same backlog.
 */
import { SubagentsClient } from '../../client/api';
import { DEFAULT_STREAM_BRIDGE_SETTINGS } from '../../contracts/config/stream-bridge';
import type { StreamEntry, StreamEvent } from '../../contracts/stream';
import { RedisStreamBridge } from '../../payloads/stream/redis-bridge';
import { leadInput, scriptedWorkspace } from '../support/subagent-input';
import { LEAD_ANSWER, PARTS, partAnswer, streamedText, threePartScript } from '../support/live-stream';
import { redisServerPath, startRedis } from '../support/redis';
import {
  startLeadRun,
  testNamespace,
  uniqueTaskQueue,
  useTestClient,
  withProjectWorker,
} from '../harness/temporal';

const testClient = useTestClient();

const HOSTS = ['live-redis-host-a', 'live-redis-host-b'];

/** The identities of the workers that ran a workflow's model calls, from its history. */
async function modelCallHosts(workflowId: string): Promise<string[]> {
  const history = await testClient().workflow.getHandle(workflowId).fetchHistory();
  const scheduled = new Set<string>();
  const hosts = new Set<string>();
  for (const event of history.events ?? []) {
    const kind = event.activityTaskScheduledEventAttributes?.activityType?.name;
    if (kind === 'callModel') scheduled.add(String(event.eventId));
    const started = event.activityTaskStartedEventAttributes;
    if (started && scheduled.has(String(started.scheduledEventId)) && started.identity)
      hosts.add(started.identity);
  }
  return [...hosts];
}

/** Per agent, its model calls' events in the order a worker published them: turn by turn, within its edges. */
function expectPublishedOrder(events: readonly StreamEvent[], path: string): void {
  const own = events.filter(
    (event) => event.path === path && event.attempt !== undefined && event.kind !== 'tool_result',
  );
  const turns = own.map((event) => event.turn ?? -1);
  expect(turns).toEqual([...turns].sort((a, b) => a - b));
  for (const turn of new Set(turns)) {
    const kinds = own.filter((event) => event.turn === turn).map((event) => event.kind);
    expect(kinds.indexOf('turn_started')).toBe(kinds[0] === 'agent_started' ? 1 : 0);
    expect(kinds.lastIndexOf('turn_ended')).toBe(kinds.length - 1);
  }
  const at = own.map((event) => Date.parse(event.at));
  expect(at).toEqual([...at].sort((a, b) => a - b));
}
const withRedis =
  redisServerPath() !== undefined || process.env.SUBAGENTS_REQUIRE_REDIS === '1' ? it : it.skip;

withRedis('two workers publish to Redis; a third reader gets every delta in order per agent', async () => {
  const redis = await startRedis();
  const bridges = [0, 1, 2].map(() => new RedisStreamBridge(redis.url, DEFAULT_STREAM_BRIDGE_SETTINGS));
  try {
    const { workspace, scriptFile } = scriptedWorkspace('live-redis', threePartScript(300));
    const input = leadInput({
      workspace,
      scriptFile,
      config: { subagent_runtime: { max_running: 3 }, subagents: { max_concurrent: 3 } },
    });
    const taskQueue = uniqueTaskQueue('live-redis');
    const [first, second, reader] = bridges;
    await withProjectWorker(
      taskQueue,
      () =>
        withProjectWorker(
          taskQueue,
          async () => {
            const handle = await startLeadRun(testClient(), input, taskQueue);
            const run = new SubagentsClient(testClient(), testNamespace()).getRun(handle.workflowId);
            const live: StreamEntry[] = [];
            for await (const entry of run.stream({ bridge: reader, pollMs: 200 })) live.push(entry);
            const result = await handle.result();
            expect(result.final_output).toBe(LEAD_ANSWER);
            const events = live.map((entry) => entry.event);
            // Both hosts ran agents of the tree.
            const hostsOf = new Map<string, string[]>();
            for (const path of ['', ...PARTS]) {
              const workflowId = path === '' ? handle.workflowId : `${handle.workflowId}/task/${path}`;
              hostsOf.set(path, await modelCallHosts(workflowId));
            }
            expect(new Set([...hostsOf.values()].flat())).toEqual(new Set(HOSTS));
            // Every agent's tool result and text, whichever host ran it, each in the order it was published.
            for (const id of PARTS) {
              expect(events.find((e) => e.path === id && e.kind === 'tool_result')?.tool_result?.name).toBe(
                'write_file',
              );
              expect(streamedText(events, id)).toBe(partAnswer(id));
            }
            for (const path of hostsOf.keys()) expectPublishedOrder(events, path);
            // Reading order is the bridge's: entry ids only grow.
            const entryIds = live.filter((e) => e.id !== '').map((e) => e.id.split('-').map(Number));
            for (let k = 1; k < entryIds.length; k++) {
              const [ms, seq] = entryIds[k];
              const [lastMs, lastSeq] = entryIds[k - 1];
              expect(ms > lastMs || (ms === lastMs && seq > lastSeq)).toBe(true);
            }
            expect(events[events.length - 1]).toMatchObject({ kind: 'run_ended', text: LEAD_ANSWER });

            const late: StreamEntry[] = [];
            for await (const entry of run.stream({ bridge: reader, pollMs: 200 })) late.push(entry);
            const ids = (entries: StreamEntry[]) => entries.filter((e) => e.id !== '').map((e) => e.id);
            expect(ids(late)).toEqual(ids(live));
          },
          { stream: second, tuning: { identity: HOSTS[1] } },
        ),
      { stream: first, tuning: { identity: HOSTS[0] } },
    );
  } finally {
    for (const bridge of bridges) await bridge.close();
    await redis.stop();
  }
});
