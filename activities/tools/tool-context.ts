import type { SandboxSettings } from '../../contracts/tools';

/** What one tool run produced, before it is addressed to its tool call. */
export interface ToolOutput {
  content: string;
  is_error: boolean;
}

/** Everything a tool implementation may touch besides its arguments. */
export interface ToolContext {
  /** The workspace as configured (absolute). */
  workspace: string;
  /** The same folder with every symbolic link resolved: confinement is checked against it. */
  workspaceReal: string;
  sandbox: SandboxSettings;
  /** Aborted when the activity is cancelled; the activity heartbeats meanwhile (executeToolCall). */
  signal?: AbortSignal;
}

/** A mistake the model can fix (bad path, missing file, ambiguous edit): it becomes an error result, never a throw. */
export class ToolError extends Error {
  override name = 'ToolError';
}

export function succeeded(content: string): ToolOutput {
  return { content, is_error: false };
}
