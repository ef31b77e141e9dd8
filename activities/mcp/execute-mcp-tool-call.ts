/**
 * The MCP tool activity: one call of one MCP tool, on this worker's connection to its server. Everything that
 * can go wrong with the call (a tool the agent may not use or the catalog does not know, arguments that are
 * not a JSON object, a server that is down, a timeout, a server that dies mid-call, an `isError` result)
 * comes back as an error tool message the model can read; the run goes on.
 */
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type * as McpTypes from '@modelcontextprotocol/sdk/types.js';
import { mcpFilterAllows, splitMcpToolName, type McpToolCallInput } from '../../contracts/mcp';
import { notPromotedText } from '../../contracts/tool-search';
import type { ToolCallResult } from '../../contracts/tools';
import { currentAttempt, whileHeartbeating } from '../activity-context';
import type { McpCatalog } from './catalog';
import { mcpResultText } from './result-text';
import { McpUnavailableError, reasonOf, type McpServerConnection } from './server-connection';
import { loadOptional } from '../../payloads/optional-packages';

/** The failure type a read-only call throws while its server is down and attempts are left (it is retried). */
export const MCP_SERVER_UNAVAILABLE_TYPE = 'McpServerUnavailable';

const MAY_HAVE_RUN = 'It may or may not have run: check its effects before running it again.';

/** The MCP SDK's errors, loaded once a configured server's call failed (server-connection.ts loads the SDK). */
function mcpTypes(): typeof McpTypes {
  return loadOptional(
    'an MCP server (mcp_servers:)',
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy; import() needs --experimental-vm-modules under jest
    () => require('@modelcontextprotocol/sdk/types.js') as typeof McpTypes,
  );
}

function argumentsOf(raw: string): Record<string, unknown> | string {
  let value: unknown;
  try {
    // Some providers send an empty string for a call without arguments.
    value = raw.trim() === '' ? {} : JSON.parse(raw);
  } catch (err) {
    return `not valid JSON (${err instanceof Error ? err.message : String(err)})`;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  return value as Record<string, unknown>;
}

/** A call the agent may make, on its server, with its arguments; or the error text the model gets instead. */
export type ResolvedMcpCall =
  | { ok: true; server: McpServerConnection; tool: string; args: Record<string, unknown>; available: string }
  | { ok: false; error: string };

/**
 * Checks one call before anything runs: the agent's filter (a toolset's status, cancel and input tools are no
 * agent's), a deferred tool not promoted yet, a server the catalog knows, arguments that are a JSON object.
 */
export function resolveMcpCall(catalog: McpCatalog | undefined, input: McpToolCallInput): ResolvedMcpCall {
  const { call, filter } = input;
  const split = splitMcpToolName(call.name);
  const known = catalog?.tools(filter).map((tool) => tool.name) ?? [];
  const available = `Available MCP tools: ${known.join(', ') || 'none'}.`;
  if (
    !split ||
    !mcpFilterAllows(filter, call.name) ||
    catalog?.isTaskInternal(split.server, split.tool) === true
  ) {
    return { ok: false, error: `Tool "${call.name}" is not available to this agent. ${available}` };
  }
  // Deferred: shown by name only until tool_search promoted it in this run (its schema was never sent).
  if (filter.deferred && !(input.promoted ?? []).includes(call.name)) {
    return { ok: false, error: notPromotedText(call.name) };
  }
  const server = catalog?.server(split.server);
  if (!server)
    return { ok: false, error: `Unknown tool "${call.name}": no MCP server "${split.server}". ${available}` };
  const args = argumentsOf(call.args);
  if (typeof args === 'string') {
    return { ok: false, error: `Invalid arguments for ${call.name}: ${args}; it takes a JSON object.` };
  }
  return { ok: true, server, tool: split.tool, args, available };
}

/** `catalog`: the worker's MCP servers (none when its config lists none). */
export async function executeMcpToolCall(
  catalog: McpCatalog | undefined,
  input: McpToolCallInput,
): Promise<ToolCallResult> {
  const { call } = input;
  const reply = (content: string, isError: boolean): ToolCallResult => ({
    tool_call_id: call.id,
    name: call.name,
    content,
    is_error: isError,
  });
  const resolved = resolveMcpCall(catalog, input);
  if (!resolved.ok) return reply(resolved.error, true);
  const { server, tool, args, available } = resolved;

  const { tool_timeout_seconds: timeoutSeconds, output_cap_chars: cap } = server.settings;
  let readOnly = false;
  try {
    const entry = await server.toolFor(tool);
    if (!entry)
      return reply(
        `Unknown tool "${call.name}": MCP server ${server.name} does not offer it. ${available}`,
        true,
      );
    readOnly = entry.read_only;
    const result = await whileHeartbeating((signal) =>
      server.call(entry.tool, args, { signal, timeoutMs: timeoutSeconds * 1000 }),
    );
    return reply(mcpResultText(result, cap), result.isError === true);
  } catch (err) {
    if (err instanceof McpUnavailableError) {
      // Nothing ran: a read-only call with attempts left is tried again (Temporal's retry, with backoff).
      // (The workflow allows more than one attempt only for a read-only tool.)
      if (currentAttempt() < (input.max_attempts ?? 1)) {
        throw ApplicationFailure.retryable(
          `MCP server ${server.name} is unavailable: ${err.message}`,
          MCP_SERVER_UNAVAILABLE_TYPE,
        );
      }
      return reply(
        `MCP server ${server.name} is unavailable (${err.message}), so "${call.name}" did not run.`,
        true,
      );
    }
    const { ErrorCode, McpError } = mcpTypes();
    if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
      const headline = `Tool "${call.name}" timed out after ${timeoutSeconds} s (MCP server ${server.name}'s tool_timeout_seconds).`;
      return reply(readOnly ? headline : `${headline} ${MAY_HAVE_RUN}`, true);
    }
    if (err instanceof McpError && err.code === ErrorCode.ConnectionClosed) {
      const headline = `MCP server ${server.name} closed the connection during "${call.name}" (it may have crashed).`;
      return reply(readOnly ? headline : `${headline} ${MAY_HAVE_RUN}`, true);
    }
    // The activity was cancelled (or timed out): the workflow says what that means for the call.
    if (err instanceof CancelledFailure) throw err;
    const reason = reasonOf(err);
    const headline = `Tool "${call.name}" failed: ${reason}`;
    return reply(readOnly || err instanceof McpError ? headline : `${headline}. ${MAY_HAVE_RUN}`, true);
  }
}
