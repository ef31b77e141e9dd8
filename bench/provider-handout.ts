/**
 * Provider hand-out: how long a lead's delegation takes to reach the child's first model call, with the
 * `scripted` model and with each network provider (openai, anthropic, google, bedrock, azure_openai, ollama)
 * against its fake server answering at once (a process of its own like a real endpoint). The same lead on
 * each: one `task` call, a child that answers, the lead's final answer.
 *
 * Each sample runs on a worker process of its own, whose config names the provider's model (so the worker warms
 * that provider up while it starts, as a deployment's does): the first run of a fresh process is what `subagents
 * run` and a restarted worker see; the later runs of the same process are the steady state of a long-lived
 * worker. Read from history, for every provider alike:
 *   - hand-out: the lead's model call started → the child's first model call started (the lead's model call,
 *     its response handled, the child started, its first workflow task);
 *   - the child's first model call, start to close;
 * and for the network providers, the endpoint's own view: the lead's request → the child's first request.
 * The differences that matter — each provider − scripted, each provider − openai — are taken sample by sample
 * (providers alternate within each worker slot, so they see the same machine load).
 *
 *   node dist/bench/provider-handout.js     (HANDOUT_WORKERS=N worker processes per provider, default 10;
 *                                             HANDOUT_PROVIDERS=openai,anthropic to measure some only)
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import type { temporal } from '@temporalio/proto';
import type { ModelScriptFileInput } from '../activities/model/model-script';
import type { LeadRunInput, LeadRunResult } from '../contracts/lead';
import type { ModelProvider } from '../contracts/model';
import { projectDataConverter } from '../payloads/data-converter';
import type { TemporalServer } from '../devserver/temporal-server';
import { bundleProjectWorkflows } from '../worker/worker';
import { spawnWorkerProcess } from '../test/support/chaos-workers';
import { FAKE, startProcess, stop } from '../test/support/cli-process';
import type { FakeReply, RecordedRequest } from '../test/support/fake-model-server';
import { FAKE_AWS_ENV, FAKE_KEY, FAKE_KEY_ENV, NETWORK_PROVIDERS } from '../test/support/fake-providers';
import { leadInput, tempDir, writeScript } from '../test/support/subagent-input';
import { formatTable, msRow, type BenchResult } from './stats';
import { withBenchServer } from './support/bench-server';

/** Worker processes per provider; each serves RUNS_PER_WORKER lead runs, the first of them cold. */
const WORKERS = Number(process.env.HANDOUT_WORKERS ?? 10);
const RUNS_PER_WORKER = 6;
/** Runs of a process not counted as steady state: the first is cold, the second still warming. */
const WARMING_RUNS = 2;

const PROVIDERS: readonly ModelProvider[] = [
  'scripted',
  ...NETWORK_PROVIDERS.filter(
    (provider) =>
      !process.env.HANDOUT_PROVIDERS || process.env.HANDOUT_PROVIDERS.split(',').includes(provider),
  ),
];

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

/** Each network provider's fake process: the model entry that reaches it (what its config's `models` hold). */
interface Endpoint {
  model: Record<string, unknown>;
  /** Where its recorded requests are read (`/_fake/requests` on the server's root). */
  origin: string;
  child: ChildProcess;
}

function networkLead(workspace: string, model: Record<string, unknown>): LeadRunInput {
  return leadInput({ workspace, config: { models: [model] } });
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
  /** Network providers only: the lead's request → the child's first request, as the endpoint received them. */
  endpointHandOut?: number;
}

async function requestsSince(origin: string, since: number): Promise<number[]> {
  const response = await fetch(`${origin}/_fake/requests`);
  const requests = (await response.json()) as RecordedRequest[];
  return requests.filter((r) => r.chat && r.at >= since).map((r) => r.at);
}

async function runOnce(
  client: Client,
  taskQueue: string,
  workflowId: string,
  endpoint: Endpoint | undefined,
): Promise<Sample> {
  const dir = tempDir('bench-handout');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const input = endpoint ? networkLead(workspace, endpoint.model) : scriptedLead(dir, workspace);
  const since = Date.now();
  const result: LeadRunResult = await client.workflow.execute('leadRunWorkflow', {
    taskQueue,
    workflowId,
    args: [input],
  });
  if (result.status !== 'completed' || result.ledger.length !== 1) {
    throw new Error(`${workflowId}: the lead run ended ${JSON.stringify(result).slice(0, 300)}`);
  }
  const lead = firstModelCall((await client.workflow.getHandle(workflowId).fetchHistory()).events ?? []);
  // Gemini and Ollama give no tool-call ids (LangChain makes one): the child is the ledger's.
  const childId = result.ledger[0].workflow_id;
  const child = firstModelCall((await client.workflow.getHandle(childId).fetchHistory()).events ?? []);
  const sample: Sample = { handOut: child.started - lead.started, childCall: child.closed - child.started };
  if (endpoint) {
    const [leadRequest, childRequest] = await requestsSince(endpoint.origin, since);
    sample.endpointHandOut = childRequest - leadRequest;
  }
  return sample;
}

/** Starts each network provider's fake process, serving `runs` lead runs' replies in order. */
async function startEndpoints(dir: string, runs: number): Promise<Map<ModelProvider, Endpoint>> {
  // Every run asks three times, in order: the lead (delegates), the child, the lead (final answer).
  const replies: FakeReply[] = Array.from({ length: runs }, () => [
    { tool_calls: [TASK_CALL] },
    { content: 'Part done.' },
    { content: 'Combined.' },
  ]).flat();
  const repliesFile = join(dir, 'replies.json');
  writeFileSync(repliesFile, JSON.stringify(replies));
  const endpoints = new Map<ModelProvider, Endpoint>();
  for (const provider of PROVIDERS) {
    if (provider === 'scripted') continue;
    const key =
      provider === 'bedrock' ? FAKE_AWS_ENV.AWS_ACCESS_KEY_ID : provider === 'ollama' ? undefined : FAKE_KEY;
    const { child, line } = await startProcess(
      [FAKE, '--provider', provider, '--replies', repliesFile, ...(key ? ['--api-key', key] : [])],
      process.env,
      /"url"/,
    );
    const url = (JSON.parse(line) as { url: string }).url;
    const origin = new URL(url).origin;
    endpoints.set(provider, { child, origin, model: modelEntry(provider, url) });
  }
  return endpoints;
}

/** The `models[]` entry of `provider`'s fake at `url` (test/support/fake-providers.ts's, by hand: a process). */
function modelEntry(provider: ModelProvider, url: string): Record<string, unknown> {
  const common = { name: 'fake', provider, base_url: url, api_key: `$${FAKE_KEY_ENV}` };
  switch (provider) {
    case 'azure_openai':
      return { ...common, model: 'gpt-fake', azure_deployment: 'fake', api_version: '2024-10-21' };
    case 'anthropic':
      return { ...common, model: 'claude-fake', max_tokens: 1024 };
    case 'bedrock':
      return {
        name: 'fake',
        provider,
        base_url: url,
        model: 'anthropic.claude-fake-v1:0',
        region: 'us-east-1',
      };
    case 'ollama':
      return { name: 'fake', provider, base_url: url, model: 'fake-model' };
    default:
      return { ...common, model: 'fake-model' };
  }
}

export async function benchProviderHandout(server: TemporalServer): Promise<BenchResult[]> {
  const dir = tempDir('bench-handout');
  const bundlePath = join(dir, 'workflows.js');
  writeFileSync(bundlePath, await bundleProjectWorkflows());
  const endpoints = await startEndpoints(dir, WORKERS * RUNS_PER_WORKER);
  // The workers' env: the key every fake checks, and AWS's credentials for Bedrock's signature.
  const workerEnv = { [FAKE_KEY_ENV]: FAKE_KEY, ...FAKE_AWS_ENV };

  const connection = await Connection.connect({ address: server.address });
  const client = new Client({
    connection,
    namespace: server.namespace,
    dataConverter: projectDataConverter(),
  });
  const cold = new Map<ModelProvider, Sample[]>(PROVIDERS.map((p) => [p, []]));
  const warm = new Map<ModelProvider, Sample[]>(PROVIDERS.map((p) => [p, []]));
  try {
    for (let w = 0; w < WORKERS; w++) {
      // Alternating, so every provider sees the same machine load.
      for (const provider of PROVIDERS) {
        const endpoint = endpoints.get(provider);
        const taskQueue = `bench-handout-${provider}-${Date.now()}-${w}`;
        // A network provider's worker names its model in its config, as a deployment's does: it warms that
        // provider up while it starts (createProjectWorker), and loads nothing of the others.
        let env: NodeJS.ProcessEnv = workerEnv;
        if (endpoint) {
          const config = join(dir, `${provider}-worker.json`);
          writeFileSync(config, JSON.stringify({ models: [endpoint.model] }));
          env = { ...workerEnv, SUBAGENTS_CONFIG: config };
        }
        const worker = await spawnWorkerProcess({
          address: server.address,
          namespace: server.namespace,
          taskQueue,
          bundlePath,
          env,
        });
        try {
          for (let run = 0; run < RUNS_PER_WORKER; run++) {
            const sample = await runOnce(client, taskQueue, `${taskQueue}-${run}`, endpoint);
            if (run === 0) cold.get(provider)?.push(sample);
            else if (run >= WARMING_RUNS) warm.get(provider)?.push(sample);
          }
        } finally {
          worker.kill('SIGKILL');
        }
      }
    }
  } finally {
    await connection.close();
    await Promise.all([...endpoints.values()].map((endpoint) => stop(endpoint.child)));
  }

  const rows: BenchResult[] = [];
  for (const [when, samples] of [
    ['first run of a fresh worker', cold],
    ['steady state', warm],
  ] as const) {
    const of = (provider: ModelProvider) => samples.get(provider) ?? [];
    for (const provider of PROVIDERS) {
      rows.push(
        msRow(
          `${when}, ${provider}: hand-out (lead's model call → child's first)`,
          of(provider).map((s) => s.handOut),
        ),
        msRow(
          `${when}, ${provider}: child's first model call`,
          of(provider).map((s) => s.childCall),
        ),
      );
    }
    for (const provider of PROVIDERS) {
      if (provider === 'scripted') continue;
      // Each sample less the one taken just before it in the same worker slot and run number: steadier than
      // a difference of medians on a machine whose load drifts.
      const paired = (base: ModelProvider) => of(provider).map((s, i) => s.handOut - of(base)[i].handOut);
      rows.push(msRow(`${when}: hand-out, ${provider} − scripted (paired)`, paired('scripted')));
      if (provider !== 'openai' && PROVIDERS.includes('openai')) {
        rows.push(msRow(`${when}: hand-out, ${provider} − openai (paired)`, paired('openai')));
      }
      rows.push(
        msRow(
          `${when}, ${provider}: lead's request → child's request (endpoint)`,
          of(provider).map((s) => s.endpointHandOut ?? Number.NaN),
        ),
      );
    }
  }
  return rows;
}

if (require.main === module) {
  withBenchServer(benchProviderHandout).then(
    (results) => process.stdout.write(`${formatTable(results)}\n`),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
