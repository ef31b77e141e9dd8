/**
 * DeerFlow's `mcp_tasks:` section (issue 48) with its keys, defaults and ranges as written, and a server's
 * `task_toolsets` (DeerFlow keeps them in extensions_config.json; `mcp_servers:` takes them too). A toolset's
 * submit tool is what the model sees; the call then waits in a child workflow that polls the status tool
 * (workflows/mcp-task.ts). `lease_seconds` and `max_concurrent_polls` are DeerFlow's Gateway poller's: accepted,
 * with nothing to do here (each task is its own workflow; Temporal hands it to one worker at a time).
 */
import { z } from 'zod';
import type { McpTaskPolling, McpTaskToolset } from '../mcp-tasks';
import { bool, section, text, wholeNumber } from './fields';

/** `mcp_tasks:`: DeerFlow's keys and defaults (its `McpTasksConfig`). */
export const mcpTasksSection = section('mcp_tasks', {
  enabled: bool.default(false),
  poll_interval_seconds: wholeNumber(1, 300).default(5),
  lease_seconds: wholeNumber(5, 3600).default(120),
  max_concurrent_polls: wholeNumber(1, 64).default(8),
  max_poll_backoff_seconds: wholeNumber(1, 3600).default(300),
  input_required_poll_interval_seconds: wholeNumber(5, 3600).default(60),
  tracking_degraded_after_errors: wholeNumber(1, 100).default(3),
  max_result_bytes: wholeNumber(1024, 10_485_760).default(65_536),
  result_preview_max_chars: wholeNumber(64, 100_000).default(2_000),
});
export type McpTasksConfig = z.output<typeof mcpTasksSection>;

/** One `task_toolsets` entry: DeerFlow's four keys, and `input_tool` (this project's). */
export const mcpTaskToolset = section('mcp_servers.<name>.task_toolsets[]', {
  name: text,
  submit_tool: text,
  status_tool: text,
  cancel_tool: text,
  input_tool: text.optional(),
});

const ROLES = ['submit_tool', 'status_tool', 'cancel_tool', 'input_tool'] as const;

/** A raw tool name in two roles (as DeerFlow refuses it): one problem per repeat, `[index, role]` and its text. */
export function toolsetBindingProblems(
  toolsets: readonly McpTaskToolset[],
): { path: (string | number)[]; message: string }[] {
  const claimed = new Map<string, string>();
  const problems: { path: (string | number)[]; message: string }[] = [];
  toolsets.forEach((toolset, index) => {
    for (const role of ROLES) {
      const raw = toolset[role];
      if (raw === undefined) continue;
      const previous = claimed.get(raw);
      if (previous !== undefined) {
        problems.push({
          path: [index, role],
          message: `names ${raw}, which is already ${previous} (a tool has one role across task_toolsets)`,
        });
      } else claimed.set(raw, `${toolset.name}.${role}`);
    }
  });
  return problems;
}

/** What the waiting reads of `mcp_tasks:` (recorded with the model's response that calls a submit tool). */
export function mcpTaskPolling(config: McpTasksConfig): McpTaskPolling {
  return {
    poll_interval_seconds: config.poll_interval_seconds,
    max_poll_backoff_seconds: config.max_poll_backoff_seconds,
    input_required_poll_interval_seconds: config.input_required_poll_interval_seconds,
    tracking_degraded_after_errors: config.tracking_degraded_after_errors,
    max_result_bytes: config.max_result_bytes,
    result_preview_max_chars: config.result_preview_max_chars,
  };
}

/**
 * The servers whose toolsets cannot run: DeerFlow refuses task_toolsets while `mcp_tasks.enabled` is off, rather
 * than offer the submit tool as an ordinary call that returns a task id nobody follows.
 */
export function taskToolsetsWithoutRuntime(
  servers: Readonly<Record<string, { enabled: boolean; task_toolsets: readonly McpTaskToolset[] }>>,
  tasks: McpTasksConfig | undefined,
): string[] {
  if (tasks?.enabled) return [];
  return Object.entries(servers)
    .filter(([, server]) => server.enabled && server.task_toolsets.length > 0)
    .map(
      ([name]) =>
        `mcp_servers.${name}.task_toolsets: MCP task toolsets are configured, so mcp_tasks.enabled: true is required ` +
        '(the submit tool is not offered as an ordinary call)',
    );
}
