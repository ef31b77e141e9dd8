/**
 * Approvals against the real server. First, the asking side alone: stand-ins for the lead and a subagent that
 * hold calls through the real `Approvals` (test/fixtures/approvals) show each held call in `status`, the Web
 * UI's current details and a named timer, wait with no activity, take `subagents approve|deny` and the client's
 * `pending/approve/deny`, refuse what does not fit, and deny on the timeout. Then the real flow, a guardrail rule
 * deciding `ask` (workflows/guardrails.ts): a lead run's bash call held across
 * a worker's SIGKILL and approved from the CLI runs exactly once; a deny and a timeout reach the model with
 * their reason; a second decision is refused; a batch item is never held.
 */
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { defaultPayloadConverter } from '@temporalio/common';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { ApprovalRefusedError, SubagentsClient } from '../../client/api';
import type { RecordedDecision } from '../../contracts/approvals';
import type { GuardrailDecision } from '../../contracts/guardrails';
import type { LeadRunInput } from '../../contracts/lead';
import type { ToolCall } from '../../contracts/messages';
import { cliApprover } from '../../cli/approval-commands';
import { leadRunWorkflow, type HoldCallsInput } from '../fixtures/approvals/workflows';
import { leadInput, scriptedWorkspace } from '../support/subagent-input';
import {
  startLeadRun,
  startProjectWorkerProcess,
  suiteCli,
  testNamespace,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
  withWorker,
} from '../harness/temporal';

const testClient = useTestClient();
const workflowsPath = require.resolve('../fixtures/approvals/workflows');

const bash = (id: string, command: string): ToolCall => ({
  id,
  name: 'bash',
  args: JSON.stringify({ command }),
});
const asked = (reason: string): GuardrailDecision => ({ decision: 'ask', reason, policy_id: 'rules[0]' });

/** Runs the stand-in lead on a worker of its own, and `body` while it holds its calls. */
async function holding<T>(
  label: string,
  input: HoldCallsInput,
  body: (run: ReturnType<SubagentsClient['getRun']>, result: Promise<unknown>) => Promise<T>,
): Promise<T> {
  const taskQueue = uniqueTaskQueue(label);
  const workflowId = `${taskQueue}-lead`;
  return withWorker({ taskQueue, workflowsPath }, async () => {
    const handle = await testClient().workflow.start(leadRunWorkflow, {
      taskQueue,
      workflowId,
      args: [input],
    });
    const run = new SubagentsClient(testClient(), testNamespace()).getRun(workflowId);
    const result = handle.result();
    result.catch(() => undefined);
    return body(run, result);
  });
}

async function waitForHeld(run: ReturnType<SubagentsClient['getRun']>, count: number): Promise<void> {
  await waitFor(`${count} held calls`, async () => (await run.pending().catch(() => [])).length === count);
}

const refusal = (err: unknown) => ({
  kind: (err as ApprovalRefusedError).kind,
  message: (err as Error).message,
});

it('holds a call with no activity, shows it, takes its approval from the CLI and refuses what does not fit', async () => {
  await holding(
    'approve',
    { calls: [{ call: bash('call_1', 'rm -rf build/'), decision: asked('deletes files') }] },
    async (run, result) => {
      const runId = run.runId;
      await waitForHeld(run, 1);
      const [pending] = await run.pending();
      expect(pending).toMatchObject({
        ref: 'a1',
        id: 'a1',
        workflow_id: runId,
        asked_by: 'lead',
        tool: 'bash',
        args: 'rm -rf build/',
        call_id: 'call_1',
        reason: 'deletes files',
        policy_id: 'rules[0]',
        timeout_seconds: 3600,
      });

      const shown = await suiteCli(['status', runId]);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toContain(
        `approval a1 (lead): bash rm -rf build/ — deletes files (rules[0]); denied at ${pending.expires_at} if undecided`,
      );
      expect(shown.stdout).toContain(`  approve: subagents approve ${runId}\n`);
      expect(shown.stdout).toContain(`  deny:    subagents deny ${runId} --reason "<why>"\n`);

      const handle = testClient().workflow.getHandle(runId);
      const { currentDetails } = await handle.query<{ currentDetails?: string }>(
        '__temporal_workflow_metadata',
      );
      expect(currentDetails).toContain('Now: waiting for approval of a1: bash rm -rf build/ (deletes files)');
      expect(currentDetails).toContain(`Approve with: \`subagents approve ${runId}\``);
      expect(currentDetails).toContain(`Deny with: \`subagents deny ${runId} --reason "<why>"\``);
      const events = (await handle.fetchHistory()).events ?? [];
      // The wait is the workflow's own: a named timer, no activity.
      const timers = events.flatMap((e) =>
        e.timerStartedEventAttributes && e.userMetadata?.summary
          ? [defaultPayloadConverter.fromPayload<string>(e.userMetadata.summary)]
          : [],
      );
      expect(timers).toEqual(['approval: bash rm -rf build/']);
      expect(events.some((e) => e.activityTaskScheduledEventAttributes)).toBe(false);

      // Mistakes in the request: exit 2, nothing decided.
      const empty = await suiteCli(['deny', runId, '--reason', '  ']);
      expect(empty.code).toBe(2);
      expect(empty.stderr).toContain('subagents: deny: the reason is empty');
      const unknown = await suiteCli(['approve', runId, '--call', 'a9']);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain(`run ${runId} has no call "a9" held for approval (its calls: a1)`);

      const approved = await suiteCli(['approve', runId, '--note', 'build is generated']);
      expect(approved.stderr).toBe('');
      expect(approved.code).toBe(0);
      expect(approved.stdout).toMatch(
        new RegExp(
          `^${runId}: a1 \\(lead: bash rm -rf build/\\) approved by ${cliApprover().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} ` +
            'at \\S+ \\(build is generated\\); the call runs\\n$',
        ),
      );
      expect(await result).toEqual({
        outcomes: [
          expect.objectContaining({
            approved: true,
            how: 'approved',
            by: cliApprover(),
            note: 'build is generated',
          }),
        ],
      });
      // The run has ended: a second decision finds nothing waiting (exit 1).
      const again = await suiteCli(['deny', runId, '--call', 'a1', '--reason', 'changed my mind']);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('not waiting for a decision');
      // Who decided is in history: the Update's request.
      const accepted = ((await handle.fetchHistory()).events ?? []).flatMap(
        (e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name ?? [],
      );
      expect(accepted).toEqual(['approve_tool_call']);
    },
  );
});

it('lists several held calls when none is named, decides each, refuses a second decision, and denies on the timeout', async () => {
  await holding(
    'several',
    {
      together: true,
      calls: [
        { call: bash('call_1', 'rm -rf build/'), decision: asked('deletes files') },
        { call: bash('call_2', 'git push --force'), decision: asked('rewrites history') },
      ],
    },
    async (run, result) => {
      const runId = run.runId;
      await waitForHeld(run, 2);
      const several = await suiteCli(['approve', runId]);
      expect(several.code).toBe(2);
      expect(several.stderr).toContain(
        `run ${runId} holds 2 calls for approval (a1 (lead): bash rm -rf build/; a2 (lead): bash git push --force): ` +
          'name one with --call',
      );
      const shown = await suiteCli(['status', runId]);
      expect(shown.stdout).toContain(`  approve: subagents approve ${runId} --call a1\n`);
      expect(shown.stdout).toContain(`  deny:    subagents deny ${runId} --call a2 --reason "<why>"\n`);

      const denied: RecordedDecision = await run.deny('a2', 'never force-push', { by: 'alice' });
      expect(denied).toMatchObject({ ref: 'a2', decision: 'denied', by: 'alice', note: 'never force-push' });
      const second = await run.approve('a2').catch((err: unknown) => err);
      expect(second).toBeInstanceOf(ApprovalRefusedError);
      expect(refusal(second)).toEqual({
        kind: 'ApprovalClosed',
        message: expect.stringMatching(
          /^call a2 \(bash\) was already denied by alice at \S+; a call is decided once$/,
        ),
      });
      // One waits now: no name needed.
      await run.approve(undefined, undefined, { by: 'bob' });
      expect(await result).toEqual({
        outcomes: [
          expect.objectContaining({ approved: true, how: 'approved', by: 'bob' }),
          expect.objectContaining({ approved: false, how: 'denied', by: 'alice', note: 'never force-push' }),
        ],
      });
    },
  );

  await holding(
    'timeout',
    {
      timeout_seconds: 2,
      calls: [{ call: bash('call_1', 'rm -rf build/'), decision: asked('deletes files') }],
    },
    async (run, result) => {
      expect(await result).toEqual({
        outcomes: [
          expect.objectContaining({ approved: false, how: 'timed_out', note: 'no decision came within 2 s' }),
        ],
      });
      expect(refusal(await run.approve('a1').catch((err: unknown) => err))).toMatchObject({
        kind: 'NotWaitingForApproval',
      });
    },
  );
});

it("lists a subagent's held call in the lead's status and routes its decision to the subagent", async () => {
  await holding(
    'child',
    {
      calls: [],
      child: { calls: [{ call: bash('call_9', 'kubectl delete ns prod'), decision: asked('production') }] },
    },
    async (run, result) => {
      const runId = run.runId;
      await waitForHeld(run, 1);
      const [pending] = await run.pending();
      expect(pending).toMatchObject({
        ref: 'child_1/a1',
        workflow_id: `${runId}/task/child_1`,
        asked_by: 'bash',
        args: 'kubectl delete ns prod',
      });
      const shown = await suiteCli(['status', runId]);
      expect(shown.stdout).toContain(`  approve: subagents approve ${runId} --call child_1/a1\n`);
      // A call nobody holds: the refusal lists the run's held calls, its subagents' included.
      const wrong = await suiteCli(['approve', runId, '--call', 'a9']);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain(`run ${runId} holds: child_1/a1 (bash): bash kubectl delete ns prod`);
      const denied = await suiteCli(['deny', runId, '--reason', 'not in prod']);
      expect(denied.stderr).toBe('');
      expect(denied.code).toBe(0);
      expect(denied.stdout).toContain(
        `${runId}: child_1/a1 (bash: bash kubectl delete ns prod) denied by ${cliApprover()}`,
      );
      expect(await result).toEqual({
        outcomes: [],
        child: {
          outcomes: [expect.objectContaining({ approved: false, how: 'denied', note: 'not in prod' })],
        },
      });
    },
  );
});

it('takes a subagent’s call by the id its own page shows (`--call a1`), as well as by its ref', async () => {
  await holding(
    'child-id',
    {
      calls: [],
      child: { calls: [{ call: bash('call_9', 'kubectl delete ns stage'), decision: asked('staging') }] },
    },
    async (run, result) => {
      const runId = run.runId;
      await waitForHeld(run, 1);
      // The Web UI shows the held call on the subagent's page as `a1`; status names it child_1/a1.
      const approved = await suiteCli(['approve', runId, '--call', 'a1', '--note', 'stage is disposable']);
      expect(approved.stderr).toBe('');
      expect(approved.code).toBe(0);
      expect(approved.stdout).toContain(
        `${runId}: child_1/a1 (bash: bash kubectl delete ns stage) approved by`,
      );
      expect(await result).toEqual({
        outcomes: [],
        child: { outcomes: [expect.objectContaining({ approved: true, how: 'approved' })] },
      });
    },
  );
});

// ---------------------------------------------------------------------------------------------------------
// The real flow: a guardrail rule (the deciding side, workflows/guardrails.ts) decides `ask` on a bash call.

/** A lead whose bash calls that match `rm` are held: `guardrails.rules`, as the acceptance suite sets it. */
function guardedLead(script: ModelScriptFileInput, extra: Record<string, unknown> = {}): LeadRunInput {
  const { workspace, scriptFile } = scriptedWorkspace('approvals', script);
  return leadInput({
    workspace,
    scriptFile,
    config: {
      guardrails: {
        enabled: true,
        rules: [{ tool: 'bash', args: { command: 'rm' }, decision: 'ask', reason: 'deletes files' }],
        ...extra,
      },
    },
  });
}

const appendAndRemove = (id: string) => ({
  name: 'bash',
  id,
  args: { command: 'echo ran >> log.txt; rm -f scratch.txt' },
});

describe('with the deciding side (guardrails: rules deciding ask)', () => {
  it('holds a bash call across a worker SIGKILL; approved from the CLI it runs exactly once', async () => {
    const input = guardedLead({
      scripts: [
        {
          agent: 'lead',
          turns: [{ tool_calls: [appendAndRemove('call_1')] }, { content: 'Done: {{tool_result:call_1}}' }],
        },
      ],
    });
    const taskQueue = uniqueTaskQueue('approvals-real');
    const workers: ChildProcess[] = [];
    try {
      workers.push(await startProjectWorkerProcess(taskQueue));
      const handle = await startLeadRun(testClient(), input, taskQueue);
      const run = new SubagentsClient(testClient(), testNamespace()).getRun(handle.workflowId);
      await waitForHeld(run, 1);
      workers[0].kill('SIGKILL');
      await once(workers[0], 'exit');
      workers.push(await startProjectWorkerProcess(taskQueue));
      const approved = await suiteCli(['approve', handle.workflowId]);
      expect(approved.code).toBe(0);
      const result = await handle.result();
      expect(result.status).toBe('completed');
      expect(readFileSync(join(input.scope.workspace, 'log.txt'), 'utf8')).toBe('ran\n');
    } finally {
      for (const worker of workers) worker.kill('SIGKILL');
    }
  });

  it('a deny and a timeout each reach the model with their reason; a second decision is refused', async () => {
    const input = guardedLead(
      {
        scripts: [
          {
            agent: 'lead',
            turns: [
              { tool_calls: [appendAndRemove('call_1')] },
              {
                tool_calls: [appendAndRemove('call_2')],
                if_missing: { text: 'not today', turn: { content: 'The denial did not reach me.' } },
              },
              {
                content: 'Done.',
                if_missing: {
                  text: 'no decision came within 3 s',
                  turn: { content: 'The timeout did not reach me.' },
                },
              },
            ],
          },
        ],
      },
      { approval_timeout_seconds: 3 },
    );
    const taskQueue = uniqueTaskQueue('approvals-deny');
    const workers = [await startProjectWorkerProcess(taskQueue)];
    try {
      const handle = await startLeadRun(testClient(), input, taskQueue);
      const run = new SubagentsClient(testClient(), testNamespace()).getRun(handle.workflowId);
      await waitForHeld(run, 1);
      const denied = await suiteCli(['deny', handle.workflowId, '--reason', 'not today']);
      expect(denied.code).toBe(0);
      const again = await suiteCli(['approve', handle.workflowId, '--call', 'a1']);
      expect(again.code).toBe(1);
      const result = await handle.result();
      expect(result.final_output).toBe('Done.');
      expect(existsSync(join(input.scope.workspace, 'log.txt'))).toBe(false);
    } finally {
      for (const worker of workers) worker.kill('SIGKILL');
    }
  });
});

describe('after the run has ended, with no worker', () => {
  it("steps shows a subagent's approval and denial, and events shows tool_approved and tool_denied", async () => {
    const input = guardedLead({
      scripts: [
        {
          agent: 'lead',
          turns: [
            {
              tool_calls: [
                {
                  name: 'task',
                  id: 'call_1',
                  args: { description: 'Clean up', prompt: 'Clean up.', subagent_type: 'general-purpose' },
                },
              ],
            },
            { content: 'Lead: {{tool_result}}' },
          ],
        },
        {
          agent: 'general-purpose',
          turns: [
            { tool_calls: [appendAndRemove('sub_1')] },
            { tool_calls: [appendAndRemove('sub_2')] },
            { content: 'Cleaned.' },
          ],
        },
      ],
    });
    const taskQueue = uniqueTaskQueue('approvals-closed');
    const worker = await startProjectWorkerProcess(taskQueue);
    let runId = '';
    try {
      const handle = await startLeadRun(testClient(), input, taskQueue);
      runId = handle.workflowId;
      const run = new SubagentsClient(testClient(), testNamespace()).getRun(runId);
      const heldAs = (ref: string) =>
        waitFor(`${ref} held`, async () =>
          (await run.pending().catch(() => [])).some((held) => held.ref === ref),
        );
      await heldAs('call_1/a1');
      // The client reads the held call by any workflow id of the run: the lead's, or the subagent's that holds it.
      const client = new SubagentsClient(testClient(), testNamespace());
      const refs = async (workflowId: string) => (await client.approvals(workflowId)).map((held) => held.ref);
      expect(await refs(runId)).toEqual(['call_1/a1']);
      expect(await refs(`${runId}/task/call_1`)).toEqual(['call_1/a1']);
      expect(await client.delegationStatus(`${runId}/task/call_1`)).toMatchObject({
        kind: 'subagent',
        state: 'open',
        lead_run_id: runId,
        progress: {
          state: 'running',
          approvals: [expect.objectContaining({ ref: 'call_1/a1', tool: 'bash' })],
        },
      });
      await expect(client.delegationStatus(runId)).rejects.toThrow(
        `${runId} is not a subagent, a batch item or a batch (it is a lead run)`,
      );
      // The subagent's own status says it waits for a person, with the commands that decide it.
      const child = await suiteCli(['status', `${runId}/task/call_1`]);
      expect(child.code).toBe(0);
      expect(child.stdout).toContain(
        `${runId}/task/call_1 waits for a person: 1 tool call held for approval\n`,
      );
      expect(child.stdout).toContain(`  approve: subagents approve ${runId} --call call_1/a1\n`);
      // The lead's details in the Web UI say a subagent waits for a person.
      await waitFor('the lead’s details name the held call', async () => {
        const metadata = (await handle.query('__temporal_workflow_metadata')) as { currentDetails?: string };
        return (metadata.currentDetails ?? '').includes('a subagent (general-purpose) waits for a person');
      });
      const approved = await suiteCli(['approve', runId, '--call', 'call_1/a1', '--note', 'scratch only']);
      expect(approved.code).toBe(0);
      await heldAs('call_1/a2');
      const denied = await suiteCli(['deny', runId, '--call', 'call_1/a2', '--reason', 'once is enough']);
      expect(denied.code).toBe(0);
      expect((await handle.result()).status).toBe('completed');
    } finally {
      worker.kill('SIGKILL');
      await once(worker, 'exit');
    }
    // Closed: nothing is held, and the subagent's status is its result, read with no worker.
    const client = new SubagentsClient(testClient(), testNamespace());
    expect(await client.approvals(runId)).toEqual([]);
    expect(await client.delegationStatus(`${runId}/task/call_1`)).toMatchObject({
      state: 'finished',
      result: { status: 'completed' },
    });
    const who = cliApprover();
    const steps = await suiteCli(['steps', `${runId}/task/call_1`]);
    expect(steps.code).toBe(0);
    expect(steps.stdout).toMatch(
      new RegExp(`approval bash \\[sub_1\\] approved by ${escaped(who)} at \\S+: scratch only\n`),
    );
    expect(steps.stdout).toMatch(
      new RegExp(`approval bash \\[sub_2\\] denied by ${escaped(who)} at \\S+: once is enough\n`),
    );
    expect(steps.stdout).toContain(`Guardrail denied: bash — denied by ${who}: once is enough (rules[0])`);
    expect(steps.stdout + steps.stderr).not.toContain('missing');
    const events = await suiteCli(['events', runId]);
    expect(events.code).toBe(0);
    expect(events.stdout).toContain(
      `call_1/sub_1 general-purpose: bash approved by ${who}: scratch only (rules[0])`,
    );
    expect(events.stdout).toContain(
      `call_1/sub_2 general-purpose: bash denied: denied by ${who}: once is enough (rules[0])`,
    );
    const json = (await suiteCli(['events', runId, '--json'])).stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string });
    expect(json.map((event) => event.type)).toEqual(
      expect.arrayContaining(['task_started', 'tool_approved', 'tool_denied', 'task_completed']),
    );
  });
});

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
