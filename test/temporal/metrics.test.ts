/**
 * A worker process with `metrics.port` set serves the SDK's metrics and the project's on one Prometheus
 * endpoint: a lead run's model turns and tokens (its activities), how its delegations and the run ended and
 * how long each waited for a slot (its workflows).
 */
import { type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { leadInput, tempDir, writeScript } from '../support/subagent-input';
import type { LeadRunInput } from '../../contracts/lead';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { startProjectWorkerProcess, uniqueTaskQueue, useTestClient } from '../harness/temporal';

const testClient = useTestClient();

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text format → samples (comments skipped). */
function parseSamples(text: string): Sample[] {
  return text.split('\n').flatMap((line) => {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!match) return [];
    const labels = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [
        m[1],
        m[2],
      ]),
    );
    return [{ name: match[1], labels, value: Number(match[3]) }];
  });
}

/** The sum of `name`'s samples whose labels include `labels`. */
function total(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

/** A lead that delegates two tasks at once; every model turn reports usage (lead 100 + 10, child 20 + 5). */
function twoTaskLead(dir: string): LeadRunInput {
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const task = (id: string) => ({
    name: 'task',
    id,
    args: { description: `Part ${id}`, prompt: `Do part ${id}.`, subagent_type: 'general-purpose' },
  });
  const scriptFile = writeScript(dir, {
    scripts: [
      {
        agent: 'lead',
        turns: [
          { tool_calls: [task('a'), task('b')], usage: { input_tokens: 100, output_tokens: 10 } },
          { content: 'Combined.', usage: { input_tokens: 100, output_tokens: 10 } },
        ],
      },
      {
        agent: 'general-purpose',
        repeat_last: true,
        turns: [{ content: 'Part done.', usage: { input_tokens: 20, output_tokens: 5 } }],
      },
    ],
  });
  return leadInput({ workspace, scriptFile });
}

async function scrape(port: number): Promise<Sample[]> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(response.status).toBe(200);
  return parseSamples(await response.text());
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

describe('a worker with metrics.port', () => {
  it('serves the SDK runtime’s metrics and the project’s on /metrics', async () => {
    const dir = tempDir('metrics');
    const port = await freePort();
    const configFile = join(dir, 'config.yaml');
    writeFileSync(configFile, stringify({ metrics: { port } }));
    const taskQueue = uniqueTaskQueue('metrics');
    const worker = await startProjectWorkerProcess(taskQueue, { SUBAGENTS_CONFIG: configFile });
    try {
      const client = testClient();
      const run = await client.workflow.execute(leadRunWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}-lead`,
        args: [twoTaskLead(dir)],
      });
      expect(run.status).toBe('completed');

      const samples = await scrape(port);
      // The SDK runtime's own metrics (prefixed temporal_, snake_case labels).
      expect(total(samples, 'temporal_workflow_completed', { workflow_type: 'leadRunWorkflow' })).toBe(1);
      expect(total(samples, 'temporal_workflow_completed', { workflow_type: 'subagentWorkflow' })).toBe(2);
      // The model activity's: two lead turns and one turn per child, with the tokens each reported.
      const lead = { agent: 'lead', model: 'test', provider: 'scripted' };
      const child = { agent: 'general-purpose', model: 'test', provider: 'scripted' };
      expect(total(samples, 'subagents_model_turns', { ...lead, outcome: 'ok' })).toBe(2);
      expect(total(samples, 'subagents_model_turns', { ...child, outcome: 'ok' })).toBe(2);
      expect(
        total(samples, 'subagents_model_turn_seconds_count', { ...lead, activityType: 'callModel' }),
      ).toBe(2);
      expect(total(samples, 'subagents_model_turn_seconds_bucket', { ...child, le: '+Inf' })).toBe(2);
      expect(
        samples.some((s) => s.name === 'subagents_model_turn_seconds_bucket' && s.labels.le === '0.05'),
      ).toBe(true);
      expect(total(samples, 'subagents_tokens', { ...lead, kind: 'input' })).toBe(200);
      expect(total(samples, 'subagents_tokens', { ...lead, kind: 'output' })).toBe(20);
      expect(total(samples, 'subagents_tokens', { ...child, kind: 'input' })).toBe(40);
      expect(total(samples, 'subagents_tokens', { ...child, kind: 'output' })).toBe(10);
      // The workflows' own: how each delegation and the run ended, and the slot waits (the run's and its two
      // children's).
      const delegations = (labels: Record<string, string>) => total(samples, 'subagents_delegations', labels);
      expect(
        delegations({
          agent_type: 'general-purpose',
          status: 'completed',
          stop_reason: 'none',
          admission_failure: 'false',
        }),
      ).toBe(2);
      expect(delegations({})).toBe(2);
      expect(total(samples, 'subagents_lead_runs', { status: 'completed', stop_reason: 'none' })).toBe(1);
      expect(total(samples, 'subagents_lead_runs', {})).toBe(1);
      expect(
        total(samples, 'subagents_admission_wait_seconds_count', { pool: 'subagents', outcome: 'granted' }),
      ).toBe(2);
      expect(
        total(samples, 'subagents_admission_wait_seconds_count', { pool: 'runs', outcome: 'granted' }),
      ).toBe(1);
    } finally {
      await stop(worker);
    }
  });
});
