import type { SealedSecret } from '../../contracts/secrets';
import type { SandboxSettings } from '../../contracts/tools';
import type { MountInUse } from './skill-mounts';

/** What one tool run produced, before it is addressed to its tool call. */
export interface ToolOutput {
  content: string;
  is_error: boolean;
  /** A `read_file` under `read_before_write`: the hash of the file's whole content when it was read. */
  read_mark?: string;
}

/** Everything a tool implementation may touch besides its arguments. */
export interface ToolContext {
  /** The workspace as configured (absolute). */
  workspace: string;
  /** The same folder with every symbolic link resolved: confinement is checked against it. */
  workspaceReal: string;
  sandbox: SandboxSettings;
  /** The skill folders, read-only at their container paths (skill-mounts.ts), longest path first; absent: none. */
  mounts?: readonly MountInUse[];
  /** The request-scoped secrets bash opens and hands its command (bash.ts); absent: none. */
  secrets?: readonly SealedSecret[];
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
