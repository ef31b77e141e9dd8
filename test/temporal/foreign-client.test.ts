/**
 * Leads started by another Temporal client (here the Temporal CLI's `workflow start`, as the Python and Go SDKs
 * and the Web UI start them: no execution timeout) run as leads our own client starts.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseConfig } from '../../contracts/config';
import { configLeadInputs } from '../../worker/lead-inputs';
import { findTemporalCli } from '../../devserver/temporal-cli';
import type { LeadRunInput, LeadRunResult } from '../../contracts/lead';
import {
  suiteCli,
  testAddress,
  testNamespace,
  uniqueTaskQueue,
  useTestClient,
  withProjectWorker,
} from '../harness/temporal';
import { leadInput, scriptedWorkspace } from '../support/subagent-input';

const run = promisify(execFile);
const testClient = useTestClient();

/** `temporal workflow start` of a lead with `input` (plain JSON, as any client would send it). */
async function cliStart(taskQueue: string, workflowId: string, input: unknown): Promise<void> {
  const cli = findTemporalCli();
  if (!cli) throw new Error('the Temporal CLI should have been found by the suite setup');
  await run(cli.path, [
    'workflow',
    'start',
    '--type',
    'leadRunWorkflow',
    '--task-queue',
    taskQueue,
    '--workflow-id',
    workflowId,
    '--input',
    JSON.stringify(input),
    '--address',
    testAddress(),
    '--namespace',
    testNamespace(),
  ]);
}

/** A lead that runs a tool (an activity: a timer of a millisecond would end the run first), then answers. */
const SCRIPT = {
  scripts: [
    {
      agent: 'lead',
      turns: [{ tool_calls: [{ name: 'bash', args: { command: 'echo listed' } }] }, { content: 'Answered.' }],
    },
  ],
};

function recordedInput(): LeadRunInput {
  const { workspace, scriptFile } = scriptedWorkspace('foreign', SCRIPT);
  return leadInput({ workspace, scriptFile });
}

async function resultOf(workflowId: string): Promise<LeadRunResult> {
  return testClient().workflow.getHandle(workflowId).result() as Promise<LeadRunResult>;
}

describe('a lead started by another Temporal client', () => {
  it('completes when started with another lead’s recorded input, its own run id and no execution timeout', async () => {
    const taskQueue = uniqueTaskQueue('foreign-one');
    const input = recordedInput();
    await withProjectWorker(taskQueue, async () => {
      await cliStart(taskQueue, `${taskQueue}-lead`, { ...input, run_id: `${taskQueue}-lead` });
      const result = await resultOf(`${taskQueue}-lead`);
      expect(result).toMatchObject({ status: 'completed', final_output: 'Answered.' });
      expect(result.error).toBeUndefined();
      // Its wall clock is its own `timeout_seconds` (21600 by default), not a missing execution timeout.
      const history = await testClient().workflow.getHandle(`${taskQueue}-lead`).fetchHistory();
      const timers = (history.events ?? []).map((e) =>
        Number(e.timerStartedEventAttributes?.startToFireTimeout?.seconds ?? 0),
      );
      expect(Math.max(...timers)).toBeGreaterThan(21_000);
    });
  });

  it('completes ten leads started at once', async () => {
    const taskQueue = uniqueTaskQueue('foreign-ten');
    const input = recordedInput();
    const ids = Array.from({ length: 10 }, (_, i) => `${taskQueue}-lead-${i}`);
    await withProjectWorker(taskQueue, async () => {
      await Promise.all(ids.map((id) => cliStart(taskQueue, id, { ...input, run_id: id })));
      const results = await Promise.all(ids.map(resultOf));
      expect(results.map((r) => [r.status, r.error])).toEqual(ids.map(() => ['completed', undefined]));
    });
  });

  it('completes with `{prompt}` alone, the worker’s config filling the rest', async () => {
    const taskQueue = uniqueTaskQueue('foreign-prompt');
    const { dir, scriptFile } = scriptedWorkspace('foreign-prompt', SCRIPT);
    const { config } = parseConfig({
      models: [{ name: 'scripted', provider: 'scripted', model: 'test', script_file: scriptFile }],
      workspace: { root: join(dir, 'runs') },
    });
    const workflowId = `${taskQueue}-lead`;
    await withProjectWorker(
      taskQueue,
      async () => {
        await cliStart(taskQueue, workflowId, { prompt: 'List the files.' });
        const result = await resultOf(workflowId);
        expect(result).toMatchObject({ status: 'completed', final_output: 'Answered.', run_id: workflowId });
        // The filled input is the run's own, in its history: a replay and a continue-as-new go on with it.
        const history = await testClient().workflow.getHandle(workflowId).fetchHistory();
        const markers = (history.events ?? []).filter((e) => e.markerRecordedEventAttributes);
        expect(markers.length).toBeGreaterThan(0);
      },
      { leadInputs: configLeadInputs(config) },
    );
  });

  it('prints the input’s JSON Schema: `{prompt}` alone, or the full input', async () => {
    const { code, stdout } = await suiteCli(['schema', 'lead-input']);
    expect(code).toBe(0);
    const schema = JSON.parse(stdout) as {
      anyOf: { required: string[]; properties: Record<string, { required?: string[] }> }[];
    };
    expect(schema.anyOf[0]?.required).toEqual(['prompt']);
    expect(schema.anyOf[1]?.required).toEqual(expect.arrayContaining(['prompt', 'model', 'scope']));
    // The run's settings are one object, the workspace among them.
    expect(schema.anyOf[1]?.properties.scope?.required).toEqual(
      expect.arrayContaining(['workspace', 'sandbox']),
    );
  });
});
