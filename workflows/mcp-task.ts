/**
 * One long-running MCP task (DeerFlow's `mcp_tasks:`), as a child workflow of the agent that called a toolset's
 * submit tool: the submit returns at once, then a durable timer loop polls the status tool every
 * `poll_interval_seconds` (each poll a short activity; between polls no activity is open and no worker slot is
 * held, so a worker that dies loses nothing and any other goes on), backing off after transient faults as
 * DeerFlow's service does. `input_required` becomes a question the person answers with `subagents answer`
 * (`ask_clarification`'s machinery), brought to the task by the toolset's `input_tool`. A cancel (the run's)
 * cancels the task on its server before the workflow ends. Its result is the call's tool result.
 */
import {
  ActivityFailure,
  CancellationScope,
  isCancellation,
  log,
  proxyActivities,
  sleep,
} from '@temporalio/workflow';
import type { ProjectActivities } from '../activities';
import { QUESTION_MAX_CHARS, timedOutToolText } from '../contracts/clarification';
import {
  inputRequiredQuestion,
  isFinished,
  nextPollSeconds,
  taskEndText,
  type McpTaskRef,
  type McpTaskSnapshot,
} from '../contracts/mcp-tasks';
import type { McpTaskWorkflowInput } from '../contracts/mcp';
import type { ToolCallResult } from '../contracts/tools';
import { truncateHeadTail } from '../contracts/text';
import { Clarifications } from './clarification';

/** A worker that dies during a call is noticed within this; the call is short (one request to the server). */
const HEARTBEAT_TIMEOUT = '10 seconds';
/** Above the server's own timeout (the activity enforces that one): connecting to a server that was down. */
const CONNECT_MARGIN_SECONDS = 35;

function activities(timeoutSeconds: number) {
  const base = {
    startToCloseTimeout: `${timeoutSeconds + CONNECT_MARGIN_SECONDS} seconds`,
    heartbeatTimeout: HEARTBEAT_TIMEOUT,
  };
  // A second attempt only takes the task id the first one recorded (activities/mcp/tasks.ts): never a resubmit.
  const submitOptions = { ...base, retry: { maximumAttempts: 2 } };
  const { submitMcpTask } = proxyActivities<ProjectActivities>(submitOptions);
  return {
    submit: (args: Parameters<typeof submitMcpTask>[0], summary: string) =>
      submitMcpTask.executeWithOptions({ ...submitOptions, summary }, [args]),
    // One attempt: the loop below backs off and polls again.
    poll: proxyActivities<ProjectActivities>({ ...base, retry: { maximumAttempts: 1 } }).pollMcpTask,
    answer: proxyActivities<ProjectActivities>({ ...base, retry: { maximumAttempts: 1 } }).answerMcpTask,
    // Cancel is idempotent on the server (DeerFlow's contract): retried until it lands, within reason.
    cancel: proxyActivities<ProjectActivities>({
      ...base,
      retry: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 10 },
    }).cancelMcpTask,
  };
}

function failureText(err: unknown): string {
  if (err instanceof ActivityFailure) return err.cause?.message ?? err.message;
  return err instanceof Error ? err.message : String(err);
}

export async function mcpTaskWorkflow(input: McpTaskWorkflowInput): Promise<ToolCallResult> {
  const { call, task, questions } = input;
  const { toolset, polling } = task;
  const calls = activities(input.timeout_seconds);
  const clarifications = new Clarifications({
    ...(questions.clarification && {
      settings: { timeout_seconds: questions.clarification.timeout_seconds },
    }),
    offered: true,
    agentName: call.name,
    runId: questions.run_id,
    leadWorkflowId: questions.lead_workflow_id,
  });
  clarifications.register();
  const reply = (content: string, isError: boolean): ToolCallResult => ({
    tool_call_id: call.id,
    name: call.name,
    content,
    is_error: isError,
  });

  const submitted = await calls.submit(
    { call, filter: input.filter, ...(input.promoted && { promoted: input.promoted }) },
    `submit ${call.name}`,
  );
  if (submitted.kind === 'refused') return reply(submitted.content, true);
  const ref = (tool: string, extra: Partial<McpTaskRef> = {}): McpTaskRef => ({
    server: task.server,
    tool,
    task_id: submitted.task_id,
    ...extra,
  });
  const cancelRemote = () => CancellationScope.nonCancellable(() => calls.cancel(ref(toolset.cancel_tool)));

  let errors = 0;
  let last: McpTaskSnapshot | undefined;
  try {
    for (;;) {
      const waitSeconds = nextPollSeconds(polling, errors, last);
      await sleep(waitSeconds * 1000, {
        summary: `${call.name}: task ${submitted.task_id}, next status call`,
      });
      let polled;
      try {
        polled = await calls.poll(ref(toolset.status_tool));
      } catch (err) {
        if (isCancellation(err)) throw err;
        polled = { kind: 'error' as const, error: failureText(err) };
      }
      if (polled.kind === 'error') {
        errors += 1;
        if (errors === polling.tracking_degraded_after_errors) {
          log.warn(`MCP task ${submitted.task_id} of ${call.name}: tracking degraded`, {
            consecutive_errors: errors,
            error: polled.error,
          });
        }
        continue;
      }
      errors = 0;
      last = polled.snapshot;
      if (isFinished(last.status)) {
        const end = taskEndText(call.name, last, polling);
        return reply(end.content, end.isError);
      }
      if (last.status !== 'input_required') continue;
      const question = inputRequiredQuestion(last.input_required);
      if (toolset.input_tool === undefined || !clarifications.canAsk) {
        // Nobody can bring an answer: the task would wait for ever. Cancelled, and the model told why.
        await cancelRemote().catch(() => undefined);
        const why =
          toolset.input_tool === undefined
            ? `its toolset ${toolset.name} has no input_tool to answer with`
            : 'questions to a person are off in this run (clarification.enabled)';
        return reply(
          `MCP task "${call.name}" needs input (${JSON.stringify(truncateHeadTail(question, 500))}), but ${why}; ` +
            'it was cancelled.',
          true,
        );
      }
      const asked = await clarifications.askPerson({
        question: truncateHeadTail(question, QUESTION_MAX_CHARS),
        clarification_type: 'missing_info',
        context: `Asked by the MCP task ${submitted.task_id} of ${call.name}.`,
      });
      const answer = asked.answered ? asked.answer : timedOutToolText(asked.timeoutSeconds);
      try {
        await calls.answer(ref(toolset.input_tool, { input: answer }));
      } catch (err) {
        if (isCancellation(err)) throw err;
        // The next status call says whether the task still waits (then the person is asked again).
        log.warn(`MCP task ${submitted.task_id} of ${call.name}: the answer did not arrive`, {
          error: failureText(err),
        });
      }
      last = undefined;
    }
  } catch (err) {
    if (!isCancellation(err)) throw err;
    // The run was cancelled: the task is cancelled on its server before this workflow closes as Cancelled.
    await cancelRemote().catch((cancelErr: unknown) =>
      log.warn(`MCP task ${submitted.task_id} of ${call.name}: cancel failed`, {
        error: failureText(cancelErr),
      }),
    );
    throw err;
  }
}
