import { mkdir, realpath } from 'node:fs/promises';
import * as path from 'node:path';
import type { z } from 'zod';
import {
  bashArgsSchema,
  BUILTIN_TOOL_SPECS,
  globArgsSchema,
  grepArgsSchema,
  imageSearchArgsSchema,
  isBuiltinToolName,
  lsArgsSchema,
  readFileArgsSchema,
  strReplaceArgsSchema,
  webFetchArgsSchema,
  webSearchArgsSchema,
  writeFileArgsSchema,
  type BuiltinToolSpec,
} from '../../contracts/tool-specs';
import type {
  BuiltinToolName,
  ExternalizeInput,
  ExternalizeResult,
  ToolCallInput,
  ToolCallResult,
} from '../../contracts/tools';
import type { PayloadKeyring } from '../../payloads/encryption-codec';
import { whileHeartbeating } from '../activity-context';
import { runBash } from './bash';
import { listDirectory } from './ls';
import type { MachineProbes } from './machine-probes';
import { readFile } from './read-file';
import { mountsInUse } from './skill-mounts';
import { strReplace } from './str-replace';
import { ToolError, type ToolContext, type ToolOutput } from './tool-context';
import { createWebTools, type WebToolDeps } from './web';
import { globFiles, grepFiles } from './workspace-search';
import { writeFile } from './write-file';
import { budgetedOutput, PathLocks, withReadGate } from './tool-output';
import { mayBudget } from '../../contracts/tool-output';
import { oneProcessWorkspaces, withWorkspaceOutcome, type WorkspaceHost } from '../workspace/host';

type Issues = z.ZodError['issues'];

/** Tools that never change the workspace: nothing to save after them. */
const READ_ONLY_TOOLS: ReadonlySet<string> = new Set<BuiltinToolName>([
  'ls',
  'read_file',
  'glob',
  'grep',
  'web_search',
  'web_fetch',
  'image_search',
]);
type PreparedCall = { run: (ctx: ToolContext) => Promise<ToolOutput> } | { issues: Issues };

function bind<T>(schema: z.ZodType<T>, implementation: (args: T, ctx: ToolContext) => Promise<ToolOutput>) {
  return (raw: unknown): PreparedCall => {
    const parsed = schema.safeParse(raw);
    return parsed.success
      ? { run: (ctx) => implementation(parsed.data, ctx) }
      : { issues: parsed.error.issues };
  };
}

type Tools = Readonly<Record<BuiltinToolName, (raw: unknown) => PreparedCall>>;

/**
 * The built-in tools, bash with the probes of the machine it runs on and the keyring its secrets open with, the
 * web tools with the worker's `tools:` entries.
 */
function builtinTools(deps: ToolActivityDeps): Tools {
  const { probes, keyring } = deps;
  const web = createWebTools(deps.web ?? {});
  return {
    bash: bind(bashArgsSchema, (args, ctx) => runBash(args, ctx, probes, keyring)),
    ls: bind(lsArgsSchema, listDirectory),
    read_file: bind(readFileArgsSchema, readFile),
    write_file: bind(writeFileArgsSchema, writeFile),
    str_replace: bind(strReplaceArgsSchema, strReplace),
    glob: bind(globArgsSchema, globFiles),
    grep: bind(grepArgsSchema, grepFiles),
    web_search: bind(webSearchArgsSchema, web.web_search),
    web_fetch: bind(webFetchArgsSchema, web.web_fetch),
    image_search: bind(imageSearchArgsSchema, web.image_search),
  };
}

export interface ToolActivityDeps {
  /** What this machine can start for bash; one per process, shared with whatever reports the sandbox. */
  probes: MachineProbes;
  /**
   * The keys request-scoped secrets were sealed with (payloads/secrets.ts: the worker's payload keys, and an
   * embedded run's own key). Absent: a bash call given secrets fails, naming them.
   */
  keyring?: PayloadKeyring;
  /** The run workspaces this process holds: a placed call runs through it (default: one process, nothing saved). */
  workspaces?: WorkspaceHost;
  /** The web tools' entries of the worker's `tools:` section, and what they resolve and read (default: none). */
  web?: WebToolDeps;
}

/** The built-in tool activity of a worker. */
export function createToolActivities(deps: ToolActivityDeps) {
  const tools = builtinTools(deps);
  const workspaces = deps.workspaces ?? oneProcessWorkspaces();
  const locks = new PathLocks();
  return {
    executeToolCall: (input: ToolCallInput) => executeToolCall(tools, input, workspaces, locks),
    externalizeToolOutput: (input: ExternalizeInput) => externalizeToolOutput(input, workspaces),
  };
}

/** `path (string, required), start_line (integer, optional)`, read off the JSON schema the model was shown. */
function acceptedArguments(spec: BuiltinToolSpec): string {
  const properties = (spec.parameters.properties ?? {}) as Record<string, { type?: unknown }>;
  const required = (spec.parameters.required ?? []) as unknown[];
  const described = Object.entries(properties).map(
    ([name, schema]) =>
      `${name} (${String(schema.type)}, ${required.includes(name) ? 'required' : 'optional'})`,
  );
  return `Accepted arguments: a JSON object with ${described.join(', ')}; no other keys.`;
}

function describeIssue(issue: Issues[number]): string {
  const where = issue.path.length > 0 ? issue.path.join('.') : 'arguments';
  if (issue.code === 'invalid_type' && issue.message.endsWith('received undefined')) {
    return `- ${where}: missing (required, ${issue.expected})`;
  }
  return `- ${where}: ${issue.message}`;
}

async function toolContext(
  input: Pick<ToolCallInput, 'workspace' | 'placement' | 'sandbox' | 'skill_mounts' | 'secrets'>,
  signal: AbortSignal,
): Promise<ToolContext> {
  if (!path.isAbsolute(input.workspace)) {
    throw new Error(`workspace: "${input.workspace}" is not an absolute path`);
  }
  const workspace = path.resolve(input.workspace);
  // A placed workspace was made when the run started, and one that is gone is never made again empty
  // (activities/workspace/host.ts); a run from before placements may call before anything made it.
  if (input.placement === undefined) await mkdir(workspace, { recursive: true });
  return {
    workspace,
    workspaceReal: await realpath(workspace),
    sandbox: input.sandbox,
    mounts: await mountsInUse(input.skill_mounts),
    ...(input.secrets && input.secrets.length > 0 && { secrets: input.secrets }),
    signal,
  };
}

/**
 * Runs one built-in tool call for the model. The model's mistakes (unknown or refused tool, arguments that
 * are not JSON or break the tool's schema, paths outside the workspace, missing files) come back as error
 * results it can read and correct; only infrastructure faults throw.
 */
async function executeToolCall(
  tools: Tools,
  input: ToolCallInput,
  workspaces: WorkspaceHost,
  locks: PathLocks,
): Promise<ToolCallResult> {
  const { call } = input;
  const reply = (output: ToolOutput): ToolCallResult => ({
    tool_call_id: call.id,
    name: call.name,
    ...output,
  });
  const refuse = (content: string): ToolCallResult => reply({ content, is_error: true });
  const available = `Available tools: ${input.allowed_tools.join(', ') || 'none'}.`;

  if (!isBuiltinToolName(call.name)) return refuse(`Unknown tool "${call.name}". ${available}`);
  if (!input.allowed_tools.includes(call.name)) {
    return refuse(`Tool "${call.name}" is not available to this agent. ${available}`);
  }
  const spec = BUILTIN_TOOL_SPECS[call.name];

  let raw: unknown;
  try {
    // Some providers send an empty string for a call without arguments.
    raw = call.args.trim() === '' ? {} : JSON.parse(call.args);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return refuse(
      `Invalid arguments for ${call.name}: not valid JSON (${reason}).\n${acceptedArguments(spec)}`,
    );
  }
  const prepared = tools[call.name](raw);
  if ('issues' in prepared) {
    return refuse(
      `Invalid arguments for ${call.name}:\n${prepared.issues.map(describeIssue).join('\n')}\n${acceptedArguments(spec)}`,
    );
  }

  // The read-before-write gate around the tool, then the result's budget (`tool_output`), on the workspace's host.
  const run = (signal: AbortSignal) => async () => {
    const ctx = await toolContext(input, signal);
    const output = await withReadGate(input, ctx, locks, () => prepared.run(ctx));
    return budgetedOutput(output, call.name, input.tool_output, ctx);
  };
  const { placement } = input;
  try {
    // Heartbeats cover the whole call: a command, or a file tool on a slow disk, may outlast the timeout; and
    // the save of what it changed.
    if (placement === undefined) return reply(await whileHeartbeating((signal) => run(signal)()));
    // A result saved by `tool_output` changes the workspace, whatever the tool.
    const mutating = !READ_ONLY_TOOLS.has(call.name) || mayBudget(input.tool_output, call.name);
    const served = await whileHeartbeating((signal) =>
      workspaces.serve(placement, input.workspace, mutating, run(signal)),
    );
    return withWorkspaceOutcome({ ...served, result: reply(served.result) });
  } catch (err) {
    if (err instanceof ToolError) return refuse(err.message);
    throw err;
  }
}

/** `tool_output` for a result the workflow produced (MCP, `task`): saved on the workspace's host, as a tool's. */
async function externalizeToolOutput(
  input: ExternalizeInput,
  workspaces: WorkspaceHost,
): Promise<ExternalizeResult> {
  const output = { content: input.content, is_error: false };
  const budget = (signal: AbortSignal) => async () =>
    budgetedOutput(output, input.tool, input.tool_output, await toolContext(input, signal));
  const { placement } = input;
  if (placement === undefined) {
    const { content } = await whileHeartbeating((signal) => budget(signal)());
    return { content };
  }
  const served = await whileHeartbeating((signal) =>
    workspaces.serve(placement, input.workspace, true, budget(signal)),
  );
  return withWorkspaceOutcome({ ...served, result: { content: served.result.content } });
}
