import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, stat } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { createToolActivities, machineProbes } from '../../../../activities/tools';
import {
  BUILTIN_TOOL_NAMES,
  DEFAULT_SANDBOX,
  type SandboxSettings,
  type SkillMount,
  type ToolCallInput,
  type ToolCallResult,
} from '../../../../contracts/tools';
import type { SealedSecret } from '../../../../contracts/secrets';

/** The tool activity as a worker registers it, over this machine's probes (run once for the test file). */
export const { executeToolCall } = createToolActivities({ probes: machineProbes() });

/** A temporary root holding the workspace and, beside it, a folder the tools must never reach. */
export interface Fixture {
  root: string;
  workspace: string;
  outside: string;
}

export async function makeFixture(): Promise<Fixture> {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'tools-test-')));
  const workspace = path.join(root, 'workspace');
  const outside = path.join(root, 'outside');
  await mkdir(workspace);
  await mkdir(outside);
  return { root, workspace, outside };
}

export async function removeFixture(fixture: Fixture): Promise<void> {
  await rm(fixture.root, { recursive: true, force: true });
}

export interface CallOptions {
  allowed_tools?: string[];
  sandbox?: Partial<SandboxSettings>;
  skill_mounts?: SkillMount[];
  secrets?: SealedSecret[];
  /** The activity to call (default: one without a keyring, as built above). */
  activity?: (input: ToolCallInput) => Promise<ToolCallResult>;
}

/** Calls a tool as the activity would; `args` objects are sent as JSON, strings exactly as given. */
export function callTool(
  workspace: string,
  name: string,
  args: unknown,
  options: CallOptions = {},
): Promise<ToolCallResult> {
  return (options.activity ?? executeToolCall)({
    call: { id: 'call-1', name, args: typeof args === 'string' ? args : JSON.stringify(args) },
    workspace,
    allowed_tools: options.allowed_tools ?? [...BUILTIN_TOOL_NAMES],
    sandbox: { ...DEFAULT_SANDBOX, ...options.sandbox },
    ...(options.skill_mounts && { skill_mounts: options.skill_mounts }),
    ...(options.secrets && { secrets: options.secrets }),
  });
}

/**
 * A job a command leaves running in the background, for the tests that kill a command "with whatever it
 * started": it marks its start (the file `started`), then writes `late.txt` after `seconds` unless killed.
 */
export function lateJob(seconds: number): string {
  return `(touch started; sleep ${seconds}; echo late > late.txt) &`;
}

/** Resolves once the workspace holds `name` (a command's own sign that it got that far). */
export async function appears(workspace: string, name: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(path.join(workspace, name))) {
    if (Date.now() > deadline) throw new Error(`${name} did not appear in the workspace`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Margin past the moment a killed `lateJob` would have written `late.txt`. Generous for a saturated host: what
 * would come late is one `sleep` waking and one small write, which a busy scheduler still serves within tens of
 * ms, not seconds.
 */
const LATE_MARGIN_MS = 1500;

/**
 * Whether the `lateJob(seconds)` a killed command started never wrote: waits until it would have, counted from
 * its own `started` mark (not from a guess at when it began), plus LATE_MARGIN_MS, then looks.
 */
export async function lateJobWrote(workspace: string, seconds: number): Promise<boolean> {
  const started = (await stat(path.join(workspace, 'started'))).mtimeMs;
  const due = started + seconds * 1000 + LATE_MARGIN_MS;
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())));
  return existsSync(path.join(workspace, 'late.txt'));
}
