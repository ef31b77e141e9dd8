import type { SealedSecret } from './secrets';
import type { ReadGate, ToolOutputSettings } from './tool-output';
import type { ToolCall } from './messages';
import type { SandboxSettings } from './input-schemas';
import type { WorkspaceOutcome, WorkspaceRequest } from './workspace';

/** The sandbox's tools: every agent's when the config has no `tools:` section, and always the `bash` agent's. */
export const BUILTIN_TOOL_NAMES = ['bash', 'ls', 'read_file', 'write_file', 'str_replace'] as const;
/** Searches of the workspace (DeerFlow's sandbox `glob` and `grep`), offered when `tools:` lists them. */
export const WORKSPACE_SEARCH_TOOL_NAMES = ['glob', 'grep'] as const;
/** The web tools, each served by the provider its `tools:` entry names (activities/tools/web/). */
export const WEB_TOOL_NAMES = ['web_search', 'web_fetch', 'image_search'] as const;
/** Every tool the tool activity runs, in the order the model is shown them. */
export const TOOL_ACTIVITY_NAMES = [
  ...BUILTIN_TOOL_NAMES,
  ...WORKSPACE_SEARCH_TOOL_NAMES,
  ...WEB_TOOL_NAMES,
] as const;
export type BuiltinToolName = (typeof TOOL_ACTIVITY_NAMES)[number];
export type WebToolName = (typeof WEB_TOOL_NAMES)[number];

/**
 * Running the same call twice leaves the same state: safe to retry after a crash without asking. (Here, not
 * beside the specs' schemas: workflows read it, and import nothing that builds a schema.) The searches and the
 * web tools change nothing: they run as local activities, their results recorded, so replay never asks again.
 */
export const IDEMPOTENT_TOOLS: Readonly<Record<BuiltinToolName, boolean>> = {
  bash: false,
  ls: true,
  read_file: true,
  write_file: true,
  str_replace: false,
  glob: true,
  grep: true,
  web_search: true,
  web_fetch: true,
  image_search: true,
};

/** A tool the tool activity runs (the sandbox's, the workspace searches, the web tools). */
export function isBuiltinToolName(name: string): name is BuiltinToolName {
  return (TOOL_ACTIVITY_NAMES as readonly string[]).includes(name);
}

export function isWebToolName(name: string): name is WebToolName {
  return (WEB_TOOL_NAMES as readonly string[]).includes(name);
}

/**
 * Whether this call may be retried blindly after a crash. `write_file` with `append: true` is the exception to
 * its tool's flag: appending twice is not the state appending once leaves.
 */
export function isIdempotentCall(call: ToolCall): boolean {
  if (!isBuiltinToolName(call.name)) return false;
  if (!IDEMPOTENT_TOOLS[call.name]) return false;
  if (call.name !== 'write_file') return true;
  try {
    const args: unknown = JSON.parse(call.args);
    return !(typeof args === 'object' && args !== null && (args as { append?: unknown }).append === true);
  } catch {
    // Arguments that are not JSON are refused before anything is written, so a retry is harmless.
    return true;
  }
}

/** Delegation is a tool the lead's loop handles itself (a child workflow), never a tool activity. */
export const TASK_TOOL_NAME = 'task';

/**
 * Where `bash` runs. `auto`: bubblewrap where it can start, else just-bash (a simulated bash confined to the
 * workspace), else the host when allow_host_bash is set. The others run there or nowhere.
 */
export const SANDBOX_KINDS = ['auto', 'bubblewrap', 'just-bash', 'host'] as const;
export type SandboxKind = (typeof SANDBOX_KINDS)[number];

export type { SandboxSettings } from './input-schemas';

/** The resource limits one bash command runs under (rlimits of each process it starts). */
export interface SandboxLimits {
  /** Processes and threads (RLIMIT_NPROC, which binds no root worker; pids.max where a cgroup can be made). */
  max_processes: number;
  /** Address space of each process, in MiB (RLIMIT_AS). */
  max_memory_mb: number;
  /** Memory of all the command's processes together, in MiB (memory.max, where a cgroup can be made). */
  max_total_memory_mb: number;
  /** Largest file a process may write, in MiB (RLIMIT_FSIZE). */
  max_file_size_mb: number;
  /** CPU time of each process, in seconds (RLIMIT_CPU). */
  max_cpu_seconds: number;
}

export const DEFAULT_SANDBOX_LIMITS: Omit<SandboxLimits, 'max_cpu_seconds'> = {
  max_processes: 256,
  max_memory_mb: 4096,
  max_total_memory_mb: 4096,
  max_file_size_mb: 1024,
};

/** The limits in force: what the settings say, else the defaults (CPU time: the bash timeout). */
export function sandboxLimits(settings: SandboxSettings): SandboxLimits {
  return {
    max_processes: settings.max_processes ?? DEFAULT_SANDBOX_LIMITS.max_processes,
    max_memory_mb: settings.max_memory_mb ?? DEFAULT_SANDBOX_LIMITS.max_memory_mb,
    max_total_memory_mb: settings.max_total_memory_mb ?? DEFAULT_SANDBOX_LIMITS.max_total_memory_mb,
    max_file_size_mb: settings.max_file_size_mb ?? DEFAULT_SANDBOX_LIMITS.max_file_size_mb,
    max_cpu_seconds: settings.max_cpu_seconds ?? Math.ceil(settings.bash_timeout_seconds),
  };
}

export const DEFAULT_SANDBOX: SandboxSettings = {
  allow_host_bash: false,
  bash_timeout_seconds: 120,
  output_cap_chars: 20_000,
};

/**
 * A folder of skill packages as the tools see it (issue 30): readable — never writable — at `container_path`
 * (`/mnt/skills/public`, `/mnt/skills/custom`), its files on the worker's machine at `host_path`.
 */
export interface SkillMount {
  container_path: string;
  host_path: string;
}

export interface ToolCallInput {
  call: ToolCall;
  /** Absolute path of the run's workspace: every file tool is confined to it. */
  workspace: string;
  /** The tools this agent may run, after allow/deny: the activity refuses anything else by name. */
  allowed_tools: string[];
  sandbox: SandboxSettings;
  /** The run's skill folders, read-only at their container paths in every sandbox kind; absent: none. */
  skill_mounts?: SkillMount[];
  /**
   * The request-scoped secrets this agent's active skills declare (contracts/secrets.ts): bash gets them as
   * environment variables, and its output shows each value masked. Absent: none.
   */
  secrets?: SealedSecret[];
  /** Where the run's workspace lives (contracts/workspace.ts); absent: a run from before placements. */
  placement?: WorkspaceRequest;
  /** The run's `tool_output` (contracts/tool-output.ts): a result over its budget is saved; absent: off. */
  tool_output?: ToolOutputSettings;
  /** `read_before_write` for a gated call (`read_file`, `write_file`, `str_replace`); absent: not gated. */
  read_gate?: ReadGate;
}

/**
 * A result the workflow produced (an MCP tool's, a `task` child's) that is over its `tool_output` budget: saved in
 * the workspace by an activity on the workspace's host, like a built-in tool's.
 */
export interface ExternalizeInput {
  tool: string;
  content: string;
  workspace: string;
  sandbox: SandboxSettings;
  tool_output: ToolOutputSettings;
  placement?: WorkspaceRequest;
}

/** What the model gets instead: the synopsis, or the fallback cut where it could not be saved. */
export interface ExternalizeResult extends WorkspaceOutcome {
  content: string;
}

export interface ToolCallResult extends WorkspaceOutcome {
  tool_call_id: string;
  name: string;
  content: string;
  is_error: boolean;
  /** A gated `read_file`: the hash of the version it read, the agent's mark for the file. */
  read_mark?: string;
}
