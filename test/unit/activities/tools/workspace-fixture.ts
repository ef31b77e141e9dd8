import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
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
