/**
 * A worker process with `tracing.enabled` exports OpenTelemetry spans (here to a JSON-lines file): the lead's
 * workflow run, its child's, their activities, linked in one trace through Temporal headers.
 */
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { leadInput, tempDir, writeScript } from '../support/subagent-input';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { startProjectWorkerProcess, uniqueTaskQueue, useTestClient } from '../harness/temporal';

const testClient = useTestClient();

interface SpanLine {
  trace_id: string;
  span_id: string;
  parent_span_id?: string;
  name: string;
  attributes: Record<string, string | number | boolean>;
  service: string;
}

describe('a worker with tracing enabled', () => {
  it('exports linked spans of a lead run, its subagent and their activities', async () => {
    const dir = tempDir('tracing');
    const spansFile = join(dir, 'spans.jsonl');
    const configFile = join(dir, 'config.yaml');
    writeFileSync(
      configFile,
      stringify({
        tracing: { enabled: true, exporter: 'file', file: spansFile, service_name: 'trace-test' },
      }),
    );
    const workspace = join(dir, 'workspace');
    mkdirSync(workspace);
    const scriptFile = writeScript(dir, {
      scripts: [
        {
          agent: 'lead',
          turns: [
            {
              tool_calls: [
                {
                  name: 'task',
                  id: 'a',
                  args: { description: 'Part a', prompt: 'Do part a.', subagent_type: 'general-purpose' },
                },
              ],
            },
            { content: 'Combined.' },
          ],
        },
        {
          agent: 'general-purpose',
          turns: [{ content: 'Part done.', usage: { input_tokens: 20, output_tokens: 5 } }],
        },
      ],
    });
    const taskQueue = uniqueTaskQueue('tracing');
    // The suite's prebuilt bundle has no tracing interceptors: the worker bundles its own.
    const worker = await startProjectWorkerProcess(taskQueue, { SUBAGENTS_CONFIG: configFile });
    try {
      const result = await testClient().workflow.execute(leadRunWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}-lead`,
        args: [leadInput({ workspace, scriptFile })],
      });
      expect(result.status).toBe('completed');
    } finally {
      const exited = once(worker, 'exit');
      worker.kill('SIGTERM');
      await exited;
    }

    expect(existsSync(spansFile)).toBe(true);
    const spans = readFileSync(spansFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as SpanLine);
    const named = (name: string) => spans.filter((span) => span.name === name);
    const [leadRun] = named('RunWorkflow:leadRunWorkflow');
    const [childRun] = named('RunWorkflow:subagentWorkflow');
    expect(leadRun).toBeDefined();
    expect(childRun).toBeDefined();
    expect(spans.every((span) => span.service === 'trace-test')).toBe(true);
    // One trace: the child's run hangs under the lead's start of it, its model call under the child's run.
    expect(childRun.trace_id).toBe(leadRun.trace_id);
    const childStart = named('StartChildWorkflow:subagentWorkflow')[0];
    expect(childStart).toBeDefined();
    expect(childRun.parent_span_id).toBe(childStart.span_id);
    const childModelCall = spans.find(
      (span) =>
        span.name === 'RunActivity:callModel' && span.attributes['subagents.agent'] === 'general-purpose',
    );
    expect(childModelCall).toMatchObject({
      trace_id: leadRun.trace_id,
      attributes: {
        'subagents.model': 'test',
        'subagents.provider': 'scripted',
        'subagents.input_tokens': 20,
        'subagents.output_tokens': 5,
      },
    });
    const childActivityStart = spans.find((span) => span.span_id === childModelCall!.parent_span_id);
    expect(childActivityStart?.name).toBe('StartActivity:callModel');
    expect(named('RunActivity:callModel').length).toBe(3);
  });
});
