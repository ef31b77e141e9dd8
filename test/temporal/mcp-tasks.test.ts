/**
 * Long-running MCP tasks (`mcp_tasks:` and a server's `task_toolsets`) against the real server, with the test MCP
 * server's report toolset over HTTP (its tasks outlive the workers): a 30 s task completes across a SIGKILLed worker
 * with one submit and its result in the run's answer; a task that asks (`input_required`) waits for `subagents
 * answer` and goes on with the answer; cancelling the run cancels the task on the server.
 */
import { once } from 'node:events';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import type { WorkflowHandle } from '@temporalio/client';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { parseConfig } from '../../contracts/config';
import { leadStatusQuery } from '../../contracts/lead';
import { startWorkerMcp, type WorkerMcp } from '../../worker/mcp';
import type { leadRunWorkflow } from '../../workflows/lead-run';
import {
  childStarts,
  startLeadRun,
  startProjectWorkerProcess,
  suiteCli,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
  withProjectWorker,
} from '../harness/temporal';
import { leadInput, scriptedWorkspace, tempDir } from '../support/subagent-input';

const testClient = useTestClient();
const serverScript = require.resolve('../support/mcp-test-server');
const dir = tempDir('mcp-tasks');
const taskLog = join(dir, 'task-calls.jsonl');

let server: ChildProcess | undefined;
let mcpConfig: Record<string, unknown> = {};

interface TaskCall {
  call: 'submit' | 'status' | 'cancel' | 'answer';
  task_id: string;
  topic?: string;
  input?: string;
}

/** The calls the server saw, of the tasks on `topic`. */
function callsFor(topic: string): TaskCall[] {
  if (!existsSync(taskLog)) return [];
  const calls = readFileSync(taskLog, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TaskCall);
  const ids = new Set(calls.filter((c) => c.call === 'submit' && c.topic === topic).map((c) => c.task_id));
  return calls.filter((c) => ids.has(c.task_id));
}

const submitReport = (args: Record<string, unknown>) => ({
  name: 'reports__submit_report',
  id: 'report',
  args,
});

function setUp(label: string, script: ModelScriptFileInput, extra: Record<string, unknown> = {}) {
  const { workspace, scriptFile } = scriptedWorkspace(label, script);
  return leadInput({ workspace, scriptFile, config: { ...mcpConfig, ...extra } });
}

function leadScript(args: Record<string, unknown>): ModelScriptFileInput {
  return {
    scripts: [
      {
        agent: 'lead',
        turns: [
          { content: 'Ordering the report.', tool_calls: [submitReport(args)] },
          { content: 'The report: {{tool_result:report}}' },
        ],
      },
    ],
  };
}

beforeAll(async () => {
  server = spawn(process.execPath, [serverScript, '--http', '--task-tools', '--task-log', taskLog], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  server.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await waitFor('the HTTP MCP test server', () => /listening on \d+/.test(out), 20_000);
  const port = Number(/listening on (\d+)/.exec(out)?.[1]);
  mcpConfig = {
    mcp_servers: {
      reports: {
        type: 'http',
        url: `http://127.0.0.1:${port}/mcp`,
        task_toolsets: [
          {
            name: 'report-generation',
            submit_tool: 'submit_report',
            status_tool: 'get_report_status',
            cancel_tool: 'cancel_report',
            input_tool: 'answer_report',
          },
        ],
      },
    },
    mcp_tasks: { enabled: true, poll_interval_seconds: 1, input_required_poll_interval_seconds: 5 },
  };
}, 60_000);

afterAll(async () => {
  if (server && server.exitCode === null && server.signalCode === null) {
    server.kill('SIGKILL');
    await once(server, 'exit');
  }
});

/** An in-process worker whose MCP catalog runs the report toolset. */
async function withTaskWorker<T>(taskQueue: string, body: () => Promise<T>): Promise<T> {
  const { config } = parseConfig(mcpConfig);
  const mcp: WorkerMcp | undefined = await startWorkerMcp(
    config.mcp_servers,
    () => undefined,
    process.env,
    config.mcp_tasks,
  );
  try {
    return await withProjectWorker(taskQueue, body, { ...(mcp && { mcpCatalog: mcp.catalog }) });
  } finally {
    await mcp?.close();
  }
}

/** The MCP task's child workflow of a lead run (its one child). */
async function taskChild(handle: WorkflowHandle): Promise<string> {
  let id: string | undefined;
  await waitFor('the MCP task workflow', async () => {
    id = (await childStarts(handle)).find((child) => child.includes('/task/mcp@'));
    return id !== undefined;
  });
  return id ?? '';
}

it('completes a 30 s task across a SIGKILLed worker, with one submit, its result in the answer', async () => {
  const input = setUp('mcp-task-crash', leadScript({ topic: 'crash-sales', seconds: 30 }));
  const configFile = join(dir, 'worker-config.yaml');
  writeFileSync(configFile, JSON.stringify(mcpConfig));
  const taskQueue = uniqueTaskQueue('mcp-task-crash');
  const workers: ChildProcess[] = [];
  try {
    const env = { SUBAGENTS_CONFIG: configFile };
    workers.push(await startProjectWorkerProcess(taskQueue, env));
    const handle = await startLeadRun(testClient(), input, taskQueue);
    // The task runs on the server, and the workflow has polled it: the worker dies between two polls.
    await waitFor(
      'two status calls',
      () => callsFor('crash-sales').filter((c) => c.call === 'status').length >= 2,
    );
    workers[0].kill('SIGKILL');
    await once(workers[0], 'exit');
    const polledBefore = callsFor('crash-sales').filter((c) => c.call === 'status').length;
    workers.push(await startProjectWorkerProcess(taskQueue, env));

    const result = await handle.result();
    expect(result.final_output).toBe('The report: {"report":"Report on crash-sales"}');
    const calls = callsFor('crash-sales');
    expect(calls.filter((c) => c.call === 'submit')).toHaveLength(1);
    // The second worker went on polling the same task.
    expect(calls.filter((c) => c.call === 'status').length).toBeGreaterThan(polledBefore);
    expect(calls.filter((c) => c.call === 'cancel')).toEqual([]);

    // The waiting was timers, not an activity held open: one submit and short polls in the child's history.
    const child = testClient().workflow.getHandle(await taskChild(handle));
    const events = (await child.fetchHistory()).events ?? [];
    const activities = events.flatMap(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
    );
    expect(activities.filter((name) => name === 'submitMcpTask')).toHaveLength(1);
    expect(activities.filter((name) => name !== 'submitMcpTask' && name !== 'pollMcpTask')).toEqual([]);
    expect(events.filter((e) => e.timerStartedEventAttributes).length).toBeGreaterThanOrEqual(
      activities.length - 1,
    );
  } finally {
    for (const worker of workers) worker.kill('SIGKILL');
  }
}, 240_000);

it('asks the person when the task needs input, and the answer reaches the task', async () => {
  const input = setUp(
    'mcp-task-ask',
    leadScript({ topic: 'ask-budget', seconds: 1, ask: 'Which quarter?' }),
    { clarification: { timeout_seconds: 600 } },
  );
  const taskQueue = uniqueTaskQueue('mcp-task-ask');
  await withTaskWorker(taskQueue, async () => {
    const handle = await startLeadRun(testClient(), input, taskQueue);
    const runId = handle.workflowId;
    let ref = '';
    await waitFor('the task question in the run status', async () => {
      const questions = (await handle.query(leadStatusQuery).catch(() => undefined))?.questions ?? [];
      ref = questions.find((q) => q.question === 'Which quarter?')?.ref ?? '';
      return ref !== '';
    });
    expect(ref).toMatch(/^mcp@\d+\.0\/q1$/);
    const answered = await suiteCli(['answer', runId, 'Q3', '--question', ref]);
    expect(answered.stderr).toBe('');
    expect(answered.code).toBe(0);

    const result = await (handle as WorkflowHandle<typeof leadRunWorkflow>).result();
    expect(result.final_output).toBe('The report: {"report":"Report on ask-budget (Q3)"}');
    const calls = callsFor('ask-budget');
    expect(calls.filter((c) => c.call === 'submit')).toHaveLength(1);
    expect(calls.filter((c) => c.call === 'answer').map((c) => c.input)).toEqual(['Q3']);
  });
}, 180_000);

it('cancels the task on the server when the run is cancelled', async () => {
  const input = setUp('mcp-task-cancel', leadScript({ topic: 'cancel-forecast', seconds: 600 }));
  const taskQueue = uniqueTaskQueue('mcp-task-cancel');
  await withTaskWorker(taskQueue, async () => {
    const handle = await startLeadRun(testClient(), input, taskQueue);
    await waitFor('a status call', () => callsFor('cancel-forecast').some((c) => c.call === 'status'));
    await handle.cancel();
    await handle.result().catch(() => undefined);
    // The child cancels the task on the server before it closes (it may close after its parent).
    const child = testClient().workflow.getHandle(await taskChild(handle));
    await waitFor('the task workflow closed', async () => (await child.describe()).status.name !== 'RUNNING');
    expect((await child.describe()).status.name).toBe('CANCELLED');
    const calls = callsFor('cancel-forecast');
    expect(calls.filter((c) => c.call === 'submit')).toHaveLength(1);
    expect(calls.filter((c) => c.call === 'cancel')).toHaveLength(1);
  });
}, 180_000);
