/**
 * The activities of a long-running MCP task (workflows/mcp-task.ts waits between them, holding nothing): submit
 * once, then one short status call per poll, the person's answer to `input_required`, and cancel. The three
 * tools answer in `structuredContent`, as DeerFlow's ordinary task driver reads them (text is never parsed):
 * submit `{task_id, status: "running"}`; status `{task_id, status, result, result_artifact, error, error_code,
 * input_required, poll_after_seconds}`; cancel `{task_id, status: cancelled | completed | failed, …}`.
 *
 * A status call that fails (the server down, `isError`, a timeout) is a transient fault the workflow polls again
 * after a backoff; an answer that breaks the contract, or `error_code: task_not_found`, ends the task as failed.
 */
import { z } from 'zod';
import { Context } from '@temporalio/activity';
import type { McpToolCallInput } from '../../contracts/mcp';
import {
  MCP_TASK_STATUSES,
  type McpTaskPoll,
  type McpTaskRef,
  type McpTaskSnapshot,
  type McpTaskSubmitted,
} from '../../contracts/mcp-tasks';
import { currentAttempt, keepHeartbeatDetails, whileHeartbeating } from '../activity-context';
import type { McpCatalog } from './catalog';
import { resolveMcpCall } from './execute-mcp-tool-call';
import { mcpResultText } from './result-text';
import { reasonOf } from './server-connection';

/** A tool's error text kept in a diagnostic (DeerFlow keeps 500 characters of it). */
const ERROR_DETAIL_CHARS = 500;

const artifact = z.looseObject({ uri: z.string().min(1), mime_type: z.string().min(1) });

const submitPayload = z.looseObject({ task_id: z.string().min(1).max(255), status: z.literal('running') });

const statusPayload = z.looseObject({
  task_id: z.string().min(1).max(255),
  status: z.enum(MCP_TASK_STATUSES),
  result: z.unknown().optional(),
  result_artifact: artifact.nullish(),
  error: z.string().nullish(),
  error_code: z.string().nullish(),
  input_required: z.record(z.string(), z.unknown()).nullish(),
  poll_after_seconds: z.number().positive().finite().nullish(),
});

const cancelPayload = statusPayload.extend({ status: z.enum(['cancelled', 'completed', 'failed']) });

/** The contract broken: the task cannot be followed (DeerFlow's McpTaskProtocolError). */
class McpTaskProtocolError extends Error {}

/** What a submit attempt leaves in its heartbeats: the server's task id as soon as it is known. */
interface SubmitProgress {
  task_id?: string;
}

interface CallResult {
  isError?: boolean;
  structuredContent?: unknown;
  content?: readonly unknown[];
}

function structured(result: CallResult, tool: string): unknown {
  if (result.isError === true) {
    const detail = mcpResultText(result, ERROR_DETAIL_CHARS);
    throw new Error(`MCP task tool ${tool} returned an error: ${detail}`);
  }
  if (result.structuredContent === undefined || result.structuredContent === null) {
    throw new McpTaskProtocolError(
      `MCP task tool ${tool} must return structuredContent; text content is not parsed`,
    );
  }
  return result.structuredContent;
}

function parsed<T>(schema: z.ZodType<T>, value: unknown, tool: string): T {
  const checked = schema.safeParse(value);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new McpTaskProtocolError(
      `invalid structuredContent from MCP task tool ${tool}: ${issue.path.join('.') || 'the answer'} ${issue.message}`,
    );
  }
  return checked.data;
}

function snapshotOf(
  payload: z.output<typeof statusPayload>,
  expectedId: string,
  tool: string,
): McpTaskSnapshot {
  if (payload.task_id !== expectedId) {
    throw new McpTaskProtocolError(
      `MCP task tool ${tool} answered for task ${JSON.stringify(payload.task_id)}, not ${JSON.stringify(expectedId)}`,
    );
  }
  if (payload.error_code === 'task_not_found') {
    return { status: 'failed', error: payload.error ?? 'the server does not know the task' };
  }
  if (payload.status === 'input_required' && !payload.input_required) {
    throw new McpTaskProtocolError(`MCP task tool ${tool}: status input_required needs input_required`);
  }
  return {
    status: payload.status,
    ...(payload.result !== undefined && { result: payload.result }),
    ...(payload.result_artifact && {
      result_artifact: { uri: payload.result_artifact.uri, mime_type: payload.result_artifact.mime_type },
    }),
    ...(payload.error != null && { error: payload.error.slice(0, 4000) }),
    ...(payload.input_required && { input_required: payload.input_required }),
    ...(payload.poll_after_seconds != null && { poll_after_seconds: payload.poll_after_seconds }),
  };
}

/** Calls one of a toolset's tools on its server, heartbeating, within the server's timeout. */
async function callTaskTool(
  catalog: McpCatalog | undefined,
  serverName: string,
  tool: string,
  args: Record<string, unknown>,
): Promise<CallResult> {
  const server = catalog?.server(serverName);
  if (!server) throw new Error(`no MCP server ${serverName} on this worker`);
  const entry = await server.toolFor(tool);
  if (!entry) throw new Error(`MCP server ${serverName} does not offer ${tool}`);
  const timeoutMs = server.settings.tool_timeout_seconds * 1000;
  return whileHeartbeating((signal) => server.call(tool, args, { signal, timeoutMs }));
}

/**
 * Submits the task, once. The task id is in the attempt's heartbeats the moment the server gives it, so an attempt
 * after a worker died takes it from there; an attempt that finds none does not submit again (the first may have
 * reached the server): the model is told, as for any call that may or may not have run.
 */
export async function submitMcpTask(
  catalog: McpCatalog | undefined,
  input: McpToolCallInput,
): Promise<McpTaskSubmitted> {
  const { call } = input;
  if (currentAttempt() > 1) {
    const recorded = Context.current().info.heartbeatDetails as SubmitProgress | undefined;
    if (typeof recorded?.task_id === 'string') return { kind: 'submitted', task_id: recorded.task_id };
    return {
      kind: 'refused',
      content:
        `MCP task "${call.name}" was interrupted while it was being submitted. It may or may not have been ` +
        'submitted: check before submitting it again.',
    };
  }
  const resolved = resolveMcpCall(catalog, input);
  if (!resolved.ok) return { kind: 'refused', content: resolved.error };
  const { server, tool, args } = resolved;
  try {
    const result = await callTaskTool(catalog, server.name, tool, args);
    const payload = parsed(submitPayload, structured(result, tool), tool);
    const progress: SubmitProgress = { task_id: payload.task_id };
    keepHeartbeatDetails(() => progress);
    return { kind: 'submitted', task_id: payload.task_id };
  } catch (err) {
    return { kind: 'refused', content: `MCP task "${call.name}" was not submitted: ${reasonOf(err)}` };
  }
}

/** One status call: the task's state, or the transient fault that kept it from being read. */
export async function pollMcpTask(catalog: McpCatalog | undefined, ref: McpTaskRef): Promise<McpTaskPoll> {
  try {
    const result = await callTaskTool(catalog, ref.server, ref.tool, { task_id: ref.task_id });
    const payload = parsed(statusPayload, structured(result, ref.tool), ref.tool);
    return { kind: 'snapshot', snapshot: snapshotOf(payload, ref.task_id, ref.tool) };
  } catch (err) {
    if (err instanceof McpTaskProtocolError) {
      return { kind: 'snapshot', snapshot: { status: 'failed', error: err.message } };
    }
    if (Context.current().cancellationSignal.aborted) throw err;
    return { kind: 'error', error: reasonOf(err) };
  }
}

/** Cancels the task on its server (idempotent there); throws a transient fault so the workflow's retry repeats it. */
export async function cancelMcpTask(
  catalog: McpCatalog | undefined,
  ref: McpTaskRef,
): Promise<McpTaskSnapshot> {
  const result = await callTaskTool(catalog, ref.server, ref.tool, { task_id: ref.task_id });
  try {
    const payload = parsed(cancelPayload, structured(result, ref.tool), ref.tool);
    return snapshotOf(payload, ref.task_id, ref.tool);
  } catch (err) {
    if (err instanceof McpTaskProtocolError) return { status: 'cancelled', error: err.message };
    throw err;
  }
}

/** Brings the person's answer to a task waiting for input (the toolset's `input_tool`: `{task_id, input}`). */
export async function answerMcpTask(catalog: McpCatalog | undefined, ref: McpTaskRef): Promise<void> {
  const result = await callTaskTool(catalog, ref.server, ref.tool, {
    task_id: ref.task_id,
    input: ref.input ?? '',
  });
  if (result.isError === true) {
    throw new Error(
      `MCP task tool ${ref.tool} returned an error: ${mcpResultText(result, ERROR_DETAIL_CHARS)}`,
    );
  }
}
