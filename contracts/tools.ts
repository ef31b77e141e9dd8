import type { ToolCall } from './messages';

export const BUILTIN_TOOL_NAMES = ['bash', 'ls', 'read_file', 'write_file', 'str_replace'] as const;
export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];

/** Delegation is a tool the lead's loop handles itself (a child workflow), never a tool activity. */
export const TASK_TOOL_NAME = 'task';

export interface SandboxSettings {
  /** Run bash on the host (inside the workspace) when no sandbox can start. Off by default, as in the seeds. */
  allow_host_bash: boolean;
  /** Wall-clock limit of one bash command. */
  bash_timeout_seconds: number;
  /** Characters of combined output kept from one command (the rest is cut, and the cut is said). */
  output_cap_chars: number;
}

export const DEFAULT_SANDBOX: SandboxSettings = {
  allow_host_bash: false,
  bash_timeout_seconds: 120,
  output_cap_chars: 20_000,
};

export interface ToolCallInput {
  call: ToolCall;
  /** Absolute path of the run's workspace: every file tool is confined to it. */
  workspace: string;
  /** The tools this agent may run, after allow/deny: the activity refuses anything else by name. */
  allowed_tools: string[];
  sandbox: SandboxSettings;
}

export interface ToolCallResult {
  tool_call_id: string;
  name: string;
  content: string;
  is_error: boolean;
}
