/**
 * The workflow inputs as schemas: a lead run's (`LeadRunInput`) and a subagent's (`SubagentInput`), checked
 * by the client API before anything starts and again by each workflow as its first act, with the value
 * types of the config file, so a limit means the same in a YAML file and in a start request.
 *
 * Checks only: a valid input goes on exactly as it came (nothing is stripped or defaulted), so a run's
 * commands, and the replay of recorded histories, do not change. Objects accept keys they do not know
 * (older and newer shapes); what the workflow writes itself (`carry`, a carried ledger) is only checked for
 * its shape. Pure: no Node APIs (the workflow bundle imports this file).
 */
import { ApplicationFailure } from '@temporalio/common';
import { workflowInfo } from '@temporalio/workflow';
import { z } from 'zod';
import { ConfigError, listOf, mappingOf, oneOf, valueTypes, wholeNumber } from './config/value-types';
import { MAX_CONCURRENT_CEILING, MAX_TOTAL_PER_RUN_CEILING, SUBAGENT_PROVIDERS } from './lead';
import { MODEL_PROVIDERS } from './model';
import { SANDBOX_KINDS } from './tools';
import { issueProblems } from './problems';

/** The failure type a workflow fails with when its input is refused (non-retryable). */
export const INVALID_INPUT_FAILURE_TYPE = 'InvalidWorkflowInput';

/**
 * Folders a run's workspace may never be, nor lie inside: the tools would read and write the system itself.
 * (Subfolders of `/var` and `/home` stay allowed — macOS keeps its temporary folders under /var/folders, a
 * service its state under /var/lib/<name>.)
 */
const SYSTEM_TREES = [
  '/etc',
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/boot',
  '/dev',
  '/proc',
  '/sys',
  '/run',
  '/var/log',
  '/var/run',
  '/var/spool',
  '/System',
  '/Library',
  '/private/etc',
  '/private/var/db',
] as const;

/** Inside a system tree, but where projects live (a container's `WORKDIR /usr/src/app`). */
const PROJECT_TREES = ['/usr/src', '/usr/local/src'] as const;

/** Folders a workspace may not be itself (every folder of its own below them is fine). */
const SYSTEM_FOLDERS = [
  '/usr/src',
  '/usr/local/src',
  '/var/lib',
  '/',
  '/home',
  '/Users',
  '/root',
  '/var',
  '/tmp',
  '/opt',
  '/srv',
  '/mnt',
  '/media',
  '/private',
  '/private/var',
  '/private/tmp',
] as const;

/** `/a//b/./c/../d/` → `/a/b/d` (POSIX, no file system). */
export function normalizePosixPath(path: string): string {
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return `/${parts.join('/')}`;
}

const within = (path: string, folder: string): boolean => path === folder || path.startsWith(`${folder}/`);

function systemTreeProblem(normalized: string): string | undefined {
  if (PROJECT_TREES.some((folder) => normalized.startsWith(`${folder}/`))) return undefined;
  const tree = SYSTEM_TREES.find((folder) => within(normalized, folder));
  return tree === undefined
    ? undefined
    : `is a system folder (${tree} and everything in it are refused: the tools would read and write the system itself; use a project folder of its own)`;
}

const normalizedHome = (home: string | undefined): string | undefined =>
  home === undefined || home === '' ? undefined : normalizePosixPath(home);

/**
 * Why `path` (absolute) cannot be a workspace, or undefined when it can. `home` (the user's home folder, known
 * only where Node runs) is refused itself, as is any folder above it.
 */
export function systemFolderProblem(path: string, home?: string): string | undefined {
  const normalized = normalizePosixPath(path);
  const tree = systemTreeProblem(normalized);
  if (tree !== undefined) return tree;
  const homeFolder = normalizedHome(home);
  if ((SYSTEM_FOLDERS as readonly string[]).includes(normalized) || normalized === homeFolder) {
    return `is a system folder (it holds other users' or programs' files: use a project folder of its own below it, e.g. ${normalized === '/' ? '' : normalized}/my-project)`;
  }
  if (homeFolder !== undefined && within(homeFolder, normalized)) {
    return `holds the home folder ${homeFolder} (use a project folder of its own, e.g. ${homeFolder}/my-project)`;
  }
  return undefined;
}

/**
 * Why `root` cannot hold run workspaces (config `workspace.root`: each run gets a folder of its own below
 * it, so `/tmp` or the home folder will do), or undefined when it can.
 */
export function workspaceRootProblem(root: string, home?: string): string | undefined {
  const normalized = normalizePosixPath(root);
  const tree = systemTreeProblem(normalized);
  if (tree !== undefined) return tree;
  if (normalized === '/') {
    return 'is the root folder (run folders would sit beside the system folders: use a folder of its own, e.g. /srv/subagents)';
  }
  const homeFolder = normalizedHome(home);
  if (homeFolder !== undefined && homeFolder !== normalized && within(homeFolder, normalized)) {
    return `holds the home folder ${homeFolder} (use a folder of its own, e.g. ${homeFolder}/subagents)`;
  }
  return undefined;
}

interface RawIssue {
  readonly input?: unknown;
}

/** Keys it does not know pass (older and newer shapes); a missing or non-mapping value is named. */
function object<S extends z.ZodRawShape>(shape: S, noun = 'a mapping') {
  return z.object(shape, {
    error: (issue: RawIssue) => (issue.input === undefined ? `is missing (${noun})` : `is not ${noun}`),
  });
}

/**
 * The input schemas, built on first use and kept: only a lead run and a subagent started by a client check
 * theirs (~3 ms and ~300 KB here, bench/load.ts). The worker shares this module between its workflows
 * (worker/worker.ts, PRELOADED_MODULES), so one build serves them all; the schemas are pure, and `built` is
 * not exported, so the sandbox does not freeze them (zod cannot use a frozen schema).
 */
interface InputSchemas {
  /** What the client API accepts. */
  leadRunInputSchema: z.ZodType;
  /** What a lead run accepts at its start: its own continued executions included. */
  startedLeadRunInputSchema: z.ZodType;
  subagentInputSchema: z.ZodType;
}
let built: InputSchemas | undefined;
function inputSchemas(): InputSchemas {
  if (built) return built;
  const { bool, fraction, httpUrl, positiveNumber, seconds, temperature, text, toolName } = valueTypes();
  /** An absolute path that is not a system folder. */
  const workspacePath = text
    .refine((path) => path.startsWith('/'), {
      error: 'is not an absolute path (the workspace must be absolute, e.g. /home/me/project)',
    })
    .superRefine((path, ctx) => {
      if (!path.startsWith('/')) return;
      const message = systemFolderProblem(path);
      if (message !== undefined) ctx.addIssue({ code: 'custom', input: path, message });
    });

  const mapping = mappingOf(z.unknown(), 'values');

  const modelRetry = object({
    initial_interval_seconds: seconds,
    backoff_coefficient: z.number().min(1, { error: 'is out of range (≥ 1)' }),
    max_interval_seconds: seconds,
    max_attempts: wholeNumber(1).optional(),
    max_retry_seconds: seconds.optional(),
  });

  const modelSettings = object({
    name: text,
    provider: oneOf(MODEL_PROVIDERS),
    model: text,
    base_url: httpUrl.optional(),
    api_key_env: text.optional(),
    temperature: temperature.optional(),
    max_tokens: wholeNumber(1).optional(),
    request_timeout_seconds: seconds.optional(),
    max_answer_bytes: wholeNumber(1).optional(),
    script_file: text.optional(),
    retry: modelRetry.optional(),
  });

  const tokenBudget = object({
    enabled: bool,
    max_tokens: wholeNumber(1),
    warn_threshold: fraction,
    hard_threshold: positiveNumber,
  });

  const loopDetection = object({
    enabled: bool,
    warn_threshold: wholeNumber(1),
    hard_limit: wholeNumber(1),
    window_size: wholeNumber(1),
    tool_freq_warn: wholeNumber(1),
    tool_freq_hard_limit: wholeNumber(1),
    tool_freq_overrides: mappingOf(
      object({ warn: wholeNumber(1), hard_limit: wholeNumber(1) }),
      'per-tool thresholds',
    ),
  });

  const sandbox = object({
    allow_host_bash: bool,
    kind: oneOf(SANDBOX_KINDS).optional(),
    bash_timeout_seconds: seconds,
    output_cap_chars: wholeNumber(1),
  });

  /** Which MCP tools an agent may use (contracts/mcp.ts): what a run's activities apply, so it is checked. */
  const mcpFilter = object({
    allow: listOf(toolName, 'tool names'),
    deny: listOf(toolName, 'tool names'),
    deferred: z.literal(true).optional(),
  });

  const agent = object({
    name: text,
    description: text,
    system_prompt: text,
    tools: listOf(toolName, 'tool names'),
    max_turns: wholeNumber(1),
    timeout_seconds: seconds,
    token_budget: tokenBudget,
    model: modelSettings,
    mcp: mcpFilter.optional(),
    graph: object({
      module: text,
      export: text,
      nodes_per_turn: wholeNumber(1),
      one_time_nodes: wholeNumber(0),
    }).optional(),
  });

  // The config's ranges, with its messages: an API caller is held to what a config file is. A workflow
  // takes a larger per-response limit from a run started before the ceiling (it continues as new with it).
  const limitsUpTo = (maxConcurrent: number | undefined) =>
    object({
      max_concurrent: wholeNumber(1, maxConcurrent),
      max_total_per_run: wholeNumber(1, MAX_TOTAL_PER_RUN_CEILING),
      max_depth: wholeNumber(0),
      provider: oneOf(SUBAGENT_PROVIDERS),
      fairness_key: text.optional(),
      queue_timeout_seconds: seconds.optional(),
    });
  const limits = limitsUpTo(MAX_CONCURRENT_CEILING);

  const batch = object({
    limits: object({
      max_running_items: wholeNumber(1),
      max_live_items: wholeNumber(1),
      max_attempts: wholeNumber(1),
      retry_backoff_seconds: seconds,
    }),
    max_items: wholeNumber(1),
  });

  const summarization = object({
    trigger_tokens: wholeNumber(1),
    keep_messages: wholeNumber(1),
    summary_prompt: text.optional(),
    model: modelSettings.optional(),
  });

  const clarification = object({ timeout_seconds: seconds, questions_asked: wholeNumber(0).optional() });

  const ledger = listOf(object({ id: z.string(), run_id: z.string() }), 'ledger entries');

  const transcriptRef = object({ key: text, count: wholeNumber(0), chars: wholeNumber(0) });

  /** Written by the workflow itself when it continues as new: its shape only (older carries differ). */
  const carry = object({
    turns: wholeNumber(0).optional(),
    continued: wholeNumber(0).optional(),
    guard_states: mapping.optional(),
    transcript: mapping.optional(),
  });

  const leadRunFields = {
    prompt: text,
    run_id: text.optional(),
    model: modelSettings,
    tools: listOf(toolName, 'tool names'),
    mcp: mcpFilter.optional(),
    agents: listOf(agent, 'agents'),
    workspace: workspacePath,
    sandbox,
    loop_detection: loopDetection,
    token_budget: tokenBudget,
    max_turns: wholeNumber(1),
    timeout_seconds: seconds.optional(),
    summarization: summarization.optional(),
    limits,
    batch: batch.optional(),
    clarification: clarification.optional(),
    depth: wholeNumber(0),
    ledger: ledger.optional(),
    carry: carry.optional(),
    admitted_at: text.optional(),
    asks_slot: z.literal(true).optional(),
    honest_close: z.literal(true).optional(),
  };
  const leadRunInputSchema = object(leadRunFields, 'a lead run input');
  const startedLeadRunInputSchema = object(
    { ...leadRunFields, limits: limitsUpTo(undefined) },
    'a lead run input',
  );

  const subagentInputSchema = object(
    {
      run_id: text,
      task_id: text,
      description: text,
      prompt: text,
      subagent_type: text,
      agent,
      loop_detection: loopDetection,
      workspace: workspacePath,
      sandbox,
      depth: wholeNumber(0),
      fork_messages: listOf(mapping, 'messages').optional(),
      fork_from: transcriptRef.optional(),
      delegation: object({ agents: listOf(agent, 'agents'), limits, ledger: ledger.optional() }).optional(),
      summarization: summarization.optional(),
      clarification: clarification.optional(),
      fairness_key: text.optional(),
      first_report_after_ms: wholeNumber(0).optional(),
      admitted_at: text.optional(),
      asks_slot: z.literal(true).optional(),
      honest_close: z.literal(true).optional(),
      carry: carry.optional(),
    },
    'a subagent input',
  );

  built = { leadRunInputSchema, startedLeadRunInputSchema, subagentInputSchema };
  return built;
}

/** A refused workflow input: every problem, one a line, `field: value what is wrong (what is accepted)`. */
export class InvalidInputError extends ConfigError {
  constructor(problems: string[], heading: string) {
    super(problems, heading);
    this.name = 'InvalidInputError';
  }
}

function problemsOf(schema: z.ZodType, input: unknown): string[] {
  const parsed = schema.safeParse(input, { reportInput: true });
  if (parsed.success) return [];
  return parsed.error.issues.flatMap((issue) => issueProblems(issue, { whole: 'input' }));
}

/** Every problem of a lead run's input (none when it is valid). */
export function leadRunInputProblems(input: unknown): string[] {
  return problemsOf(inputSchemas().leadRunInputSchema, input);
}

/**
 * Every problem of a lead run's input as the run itself checks it at its start: a per-response limit above
 * the API's ceiling is taken from a run started before the ceiling (which continues as new with it).
 */
export function startedLeadRunInputProblems(input: unknown): string[] {
  return problemsOf(inputSchemas().startedLeadRunInputSchema, input);
}

/** Every problem of a subagent's input (none when it is valid). */
export function subagentInputProblems(input: unknown): string[] {
  return problemsOf(inputSchemas().subagentInputSchema, input);
}

function heading(what: string, count: number): string {
  return `${what} is refused, ${count === 1 ? '1 problem' : `${count} problems`}:`;
}

/** Throws InvalidInputError naming every problem of a lead run's input. */
export function assertLeadRunInput(input: unknown): void {
  const problems = leadRunInputProblems(input);
  if (problems.length > 0) throw new InvalidInputError(problems, heading('lead run input', problems.length));
}

function failWorkflow(what: string, problems: () => string[]): void {
  // Decided once, at the run's first workflow task, and recorded by its outcome: a run started before this
  // check existed (or before it grew stricter) replays as it ran instead of failing on non-determinism.
  if (workflowInfo().unsafe.isReplaying) return;
  const found = problems();
  if (found.length === 0) return;
  const error = new InvalidInputError(found, heading(what, found.length));
  // Non-retryable: the run fails at once with the reason, rather than retrying a task that can never pass.
  throw ApplicationFailure.create({
    message: error.message,
    type: INVALID_INPUT_FAILURE_TYPE,
    nonRetryable: true,
    details: [found],
  });
}

/**
 * A workflow's first act: a refused input fails the run at once (ApplicationFailure, non-retryable). Only in
 * a workflow (it reads `workflowInfo`).
 */
export function failOnInvalidLeadRunInput(input: unknown): void {
  failWorkflow('lead run input', () => startedLeadRunInputProblems(input));
}

/**
 * A workflow's first act: a refused input fails the run at once (ApplicationFailure, non-retryable). Only a
 * subagent started by a client is checked: a child's input is built by its parent's own code from the parent's
 * input, checked when the parent started, and the task's arguments, checked by the task tool.
 */
export function failOnInvalidSubagentInput(input: unknown): void {
  if (workflowInfo().parent) return;
  failWorkflow('subagent input', () => subagentInputProblems(input));
}
