/**
 * Provider hand-out: how long a lead's delegation takes to reach the child's first model call, with the
 * `scripted` model and with the `openai` provider against a local OpenAI-compatible endpoint that answers at
 * once (the fake server, as a process of its own like a real endpoint). The same lead on both: one `task`
 * call, a child that answers, the lead's final answer.
 *
 * Each sample runs on a worker process of its own: the first run of a fresh process is what `subagents run`
 * (a worker started for the run) and a restarted worker see; the later runs of the same process are the
 * steady state of a long-lived worker. Read from history, for both providers alike:
 *   - hand-out: the lead's model call started → the child's first model call started (the lead's model call,
 *     its response handled, the child started, its first workflow task);
 *   - the child's first model call, start to close;
 * and for `openai`, the endpoint's own view: the lead's request → the child's first request. The
 * difference that matters, openai − scripted, is also taken sample by sample.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import type { temporal } from '@temporalio/proto';
import type { ModelScriptFileInput } from '../activities/model/model-script';
import type { LeadRunInput } from '../contracts/lead';
import { projectDataConverter } from '../payloads/data-converter';
import type { TemporalServer } from '../devserver/temporal-server';
import { bundleProjectWorkflows } from '../worker/worker';
import { spawnWorkerProcess } from '../test/support/chaos-workers';
import { FAKE, startProcess, stop } from '../test/support/cli-process';
import type { FakeReply, RecordedRequest } from '../test/support/fake-openai';
import { leadInput, tempDir, writeScript } from '../test/support/subagent-input';
import { msRow, type BenchResult } from './stats';

/** Worker processes per provider; each serves RUNS_PER_WORKER lead runs, the first of them cold. */
const WORKERS = Number(process.env.HANDOUT_WORKERS ?? 10);
const RUNS_PER_WORKER = 6;
/** Runs of a process not counted as steady state: the first is cold, the second still warming. */
const WARMING_RUNS = 2;

const PROVIDERS = ['scripted', 'openai'] as const;
type Provider = (typeof PROVIDERS)[number];

const TASK_CALL = {
  name: 'task',
  id: 'c0',
  args: { description: 'Part zero', prompt: 'Do part 0.', subagent_type: 'general-purpose' },
};

function scriptedLead(dir: string, workspace: string): LeadRunInput {
  const script: ModelScriptFileInput = {
    scripts: [
      { agent: 'lead', turns: [{ tool_calls: [TASK_CALL] }, { content: 'Combined.' }] },
      { agent: 'general-purpose', repeat_last: true, turns: [{ content: 'Part done.' }] },
    ],
  };
  return leadInput({ workspace, scriptFile: writeScript(dir, script) });
}

const openaiModel = (baseUrl: string) =>
  ({ name: 'fake', provider: 'openai', model: 'fake-model', base_url: baseUrl }) as const;

function openaiLead(workspace: string, baseUrl: string): LeadRunInput {
  return leadInput({ workspace, config: { models: [openaiModel(baseUrl)] } });
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Start and close of the first `callModel` in a history. */
function firstModelCall(events: HistoryEvent[]): { started: number; closed: number } {
  const scheduled = events.find(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel',
  );
  const id = scheduled?.eventId;
  const started = events.find((e) =>
    e.activityTaskStartedEventAttributes?.scheduledEventId?.equals(id ?? -1),
  );
  const closed = events.find((e) =>
    e.activityTaskCompletedEventAttributes?.scheduledEventId?.equals(id ?? -1),
  );
  if (!started || !closed) throw new Error('no completed callModel in history');
  return { started: tsToMs(started.eventTime), closed: tsToMs(closed.eventTime) };
}

interface Sample {
  handOut: number;
  childCall: number;
  /** openai only: the lead's request → the child's first request, as the endpoint received them. */
  endpointHandOut?: number;
}

async function requestsSince(baseUrl: string, since: number): Promise<number[]> {
  const response = await fetch(baseUrl.replace(/\/v1$/, '/_fake/requests'));
  const requests = (await response.json()) as RecordedRequest[];
  return requests.filter((r) => r.body !== undefined && r.at >= since).map((r) => r.at);
}

async function runOnce(
  client: Client,
  taskQueue: string,
  workflowId: string,
  provider: Provider,
  baseUrl: string,
): Promise<Sample> {
  const dir = tempDir('bench-handout');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const input = provider === 'openai' ? openaiLead(workspace, baseUrl) : scriptedLead(dir, workspace);
  const since = Date.now();
  const result = await client.workflow.execute('leadRunWorkflow', { taskQueue, workflowId, args: [input] });
  if ((result as { status?: string }).status !== 'completed') {
    throw new Error(`${workflowId}: the lead run ended ${JSON.stringify(result).slice(0, 300)}`);
  }
  const lead = firstModelCall((await client.workflow.getHandle(workflowId).fetchHistory()).events ?? []);
  const child = firstModelCall(
    (await client.workflow.getHandle(`${workflowId}/task/${TASK_CALL.id}`).fetchHistory()).events ?? [],
  );
  const sample: Sample = { handOut: child.started - lead.started, childCall: child.closed - child.started };
  if (provider === 'openai') {
    const [leadRequest, childRequest] = await requestsSince(baseUrl, since);
    sample.endpointHandOut = childRequest - leadRequest;
  }
  return sample;
}

export async function benchProviderHandout(server: TemporalServer): Promise<BenchResult[]> {
  const dir = tempDir('bench-handout');
  const bundlePath = join(dir, 'workflows.js');
  writeFileSync(bundlePath, await bundleProjectWorkflows());
  // Every openai run asks three times, in order: the lead (delegates), the child, the lead (final answer).
  const replies: FakeReply[] = Array.from({ length: WORKERS * RUNS_PER_WORKER }, () => [
    { tool_calls: [TASK_CALL] },
    { content: 'Part done.' },
    { content: 'Combined.' },
  ]).flat();
  const repliesFile = join(dir, 'replies.json');
  writeFileSync(repliesFile, JSON.stringify(replies));
  const fake = await startProcess([FAKE, '--replies', repliesFile], process.env, /"url"/);
  const baseUrl = (JSON.parse(fake.line) as { url: string }).url;
  // The openai workers' config names the model, as a deployment's does: a worker warms up the providers its
  // config names while it starts (createProjectWorker), and loads nothing of the others before a run calls one.
  const openaiConfig = join(dir, 'openai-worker.json');
  writeFileSync(openaiConfig, JSON.stringify({ models: [openaiModel(baseUrl)] }));

  const connection = await Connection.connect({ address: server.address });
  const client = new Client({
    connection,
    namespace: server.namespace,
    dataConverter: projectDataConverter(),
  });
  const cold: Record<Provider, Sample[]> = { scripted: [], openai: [] };
  const warm: Record<Provider, Sample[]> = { scripted: [], openai: [] };
  try {
    for (let w = 0; w < WORKERS; w++) {
      // Alternating, so both providers see the same machine load.
      for (const provider of PROVIDERS) {
        const taskQueue = `bench-handout-${provider}-${Date.now()}-${w}`;
        const worker = await spawnWorkerProcess({
          address: server.address,
          namespace: server.namespace,
          taskQueue,
          bundlePath,
          ...(provider === 'openai' && { env: { SUBAGENTS_CONFIG: openaiConfig } }),
        });
        try {
          for (let run = 0; run < RUNS_PER_WORKER; run++) {
            const sample = await runOnce(client, taskQueue, `${taskQueue}-${run}`, provider, baseUrl);
            if (run === 0) cold[provider].push(sample);
            else if (run >= WARMING_RUNS) warm[provider].push(sample);
          }
        } finally {
          worker.kill('SIGKILL');
        }
      }
    }
  } finally {
    await connection.close();
    await stop(fake.child);
  }

  const row = msRow;
  const rows: BenchResult[] = [];
  for (const [when, samples] of [
    ['first run of a fresh worker', cold],
    ['steady state', warm],
  ] as const) {
    for (const provider of PROVIDERS) {
      rows.push(
        row(
          `${when}, ${provider}: hand-out (lead's model call → child's first)`,
          samples[provider].map((s) => s.handOut),
        ),
        row(
          `${when}, ${provider}: child's first model call`,
          samples[provider].map((s) => s.childCall),
        ),
      );
    }
    rows.push(
      // Each openai sample less the scripted one taken just before it (same worker slot and run number):
      // steadier than a difference of medians on a machine whose load drifts.
      row(
        `${when}: hand-out, openai − scripted (paired)`,
        samples.openai.map((s, i) => s.handOut - samples.scripted[i].handOut),
      ),
      row(
        `${when}, openai: lead's request → child's request (endpoint)`,
        samples.openai.map((s) => s.endpointHandOut ?? Number.NaN),
      ),
    );
  }
  return rows;
}
