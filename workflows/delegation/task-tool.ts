/**
 * The delegation tools as the lead's model sees them, and the validators of their arguments: `task`
 * (DeerFlow's load: `description`, `prompt`, `subagent_type`) and each tool load of the provider registry
 * (the seed's `{description, prompt}`). The JSON schema shown to the model is generated from the same zod
 * schema that validates a call, so the two cannot drift. The provider is bound by config and only changes the
 * wording, which follows its `inherits_parent_context`; the routing policy and the limits in the text are the
 * shared clauses of `contracts/routing-policy.ts` at the enforced limits.
 */
import { z } from 'zod';
import type { SubagentProvider } from '../../contracts/lead';
import type { ToolSpec } from '../../contracts/messages';
import { routingParagraphs } from '../../contracts/routing-policy';
import { PROVIDER_CAPABILITIES } from '../../contracts/subagent-providers';
import { TASK_TOOL_NAME } from '../../contracts/tools';

export interface TaskArgs {
  description: string;
  prompt: string;
  subagent_type: string;
}

export interface TaskToolAgent {
  name: string;
  description: string;
}

export interface TaskToolOptions {
  provider: SubagentProvider;
  /** The agents `task` may start, in the order the model is shown them. */
  agents: readonly TaskToolAgent[];
  maxConcurrent: number;
  maxTotalPerRun: number;
}

const ARG_NAMES = ['description', 'prompt', 'subagent_type'] as const;
const LOAD_ARG_NAMES = ['description', 'prompt'] as const;

function available(agentNames: readonly string[]): string {
  return agentNames.length === 0 ? 'none is available' : agentNames.join(', ');
}

function missingOr(what: string, issue: { input?: unknown }): string {
  return issue.input === undefined ? `is missing (${what})` : `is not a string (${what})`;
}

/** The arguments every delegation tool takes: a short label and the task. */
function loadArgsSchema() {
  return z.strictObject({
    description: z
      .string({ error: (issue) => missingOr('a 3–5 word label for the task', issue) })
      .trim()
      .min(1, { error: 'is empty (a 3–5 word label for the task)' })
      .describe('A short label for the task, 3–5 words (e.g. "Survey the config loader").'),
    prompt: z
      .string({ error: (issue) => missingOr('the task for the subagent', issue) })
      .min(1, { error: 'is empty (the task for the subagent)' })
      .refine((prompt) => prompt.trim() !== '', { error: 'is blank (the task for the subagent)' }),
  });
}

function taskArgsSchema(agentNames: readonly string[]) {
  return loadArgsSchema().extend({
    subagent_type: z
      .enum(agentNames, {
        error: (issue) =>
          issue.input === undefined
            ? `is missing (${available(agentNames)})`
            : `${JSON.stringify(issue.input)} is not an available subagent (${available(agentNames)})`,
      })
      .describe('Which subagent does the task: one of the types listed in the tool description.'),
  });
}

/** The wording a provider's conversation-history descriptor gives a delegation tool and its prompt parameter. */
export interface ProviderWording {
  tool: string;
  prompt: string;
}

const PROMPT_WORDING: Record<'fresh' | 'seeded', ProviderWording> = {
  fresh: {
    tool:
      'The subagent starts a fresh conversation: it does not see this conversation, so the prompt must stand ' +
      'alone. Give it the goal, every fact, file path and constraint it needs, and say what its final answer ' +
      'must contain.',
    prompt:
      'The complete task for the subagent. It does not see this conversation: include every fact, file path ' +
      'and constraint it needs, and say what its final answer must contain.',
  },
  seeded: {
    tool:
      "The subagent is seeded with this conversation's completed turns: it already knows what was said and " +
      'found so far. The prompt should state only what is new: the task itself and what its final answer ' +
      'must contain.',
    prompt:
      "What the subagent should do now. It is seeded with this conversation's completed turns: state only " +
      'what is new (the task and what its final answer must contain), not what was already said.',
  },
};

/**
 * The seed's `providerWording`: a provider whose child starts from the conversation's completed turns (fork)
 * tells the model to state only what is new; any other (spawn, ACP, A2A) that the child does not see it.
 */
export function providerWording(inheritsParentContext: boolean): ProviderWording {
  return PROMPT_WORDING[inheritsParentContext ? 'seeded' : 'fresh'];
}

function taskWording(provider: SubagentProvider): ProviderWording {
  return providerWording(PROVIDER_CAPABILITIES[provider].inherits_parent_context);
}

/** What the tool does, the routing policy for these limits, the provider's wording and the agents. */
function taskToolDescription(options: TaskToolOptions): string {
  const { provider, agents } = options;
  const [weighing, dispatch, limits] = routingParagraphs(options);
  return [
    'Delegate a self-contained task to a subagent. It works on its own, with its own tools, and its final ' +
      "answer comes back as this call's result.",
    weighing,
    dispatch,
    taskWording(provider).tool,
    limits,
    'A result that says "capped" is partial: the subagent hit a guardrail before it finished.',
    ['Subagent types:', ...agents.map((agent) => `- ${agent.name}: ${agent.description}`)].join('\n'),
  ].join('\n\n');
}

/** The `task` tool's spec for one lead run: wording from the bound provider, limits as enforced. */
export function buildTaskToolSpec(options: TaskToolOptions): ToolSpec {
  if (options.agents.length === 0) {
    throw new Error(
      'task tool: no subagent is available (subagents.enabled is false, or no agent is configured)',
    );
  }
  const schema = taskArgsSchema(options.agents.map((agent) => agent.name));
  const shown = schema.extend({
    prompt: schema.shape.prompt.describe(taskWording(options.provider).prompt),
  });
  const { $schema: _dialect, ...parameters } = z.toJSONSchema(shown, { io: 'input' });
  return { name: TASK_TOOL_NAME, description: taskToolDescription(options), parameters };
}

export interface LoadToolOptions {
  toolName: string;
  /** The bound provider's conversation-history descriptor: the wording follows it. */
  inheritsParentContext: boolean;
  /** The load's own words for the model (`description:`), after the provider's wording. */
  description?: string;
  maxConcurrent: number;
  maxTotalPerRun: number;
}

/** What a load's tool does, the provider's wording, the load's own words, and the limits it shares. */
function loadToolDescription(options: LoadToolOptions): string {
  const calls = (count: number) => `${count} delegation ${count === 1 ? 'call' : 'calls'}`;
  return [
    'Delegate a self-contained task to a subagent. It works on its own and its final answer comes back as ' +
      "this call's result.",
    providerWording(options.inheritsParentContext).tool,
    ...(options.description === undefined ? [] : [options.description]),
    `It shares the run's delegation limits with ${TASK_TOOL_NAME} and every other delegation tool: at most ` +
      `${calls(options.maxConcurrent)} per response in all, at most ${options.maxTotalPerRun} delegations in ` +
      'this run.',
    'A result that is not "Task Succeeded" is an error: the subagent did not finish the task.',
  ].join('\n\n');
}

/** A tool load's spec (the seed's `{description, prompt}`): wording from its provider, limits as enforced. */
export function buildLoadToolSpec(options: LoadToolOptions): ToolSpec {
  const schema = loadArgsSchema();
  const shown = schema.extend({
    prompt: schema.shape.prompt.describe(providerWording(options.inheritsParentContext).prompt),
  });
  const { $schema: _dialect, ...parameters } = z.toJSONSchema(shown, { io: 'input' });
  return { name: options.toolName, description: loadToolDescription(options), parameters };
}

function issueLine(
  issue: z.core.$ZodIssue,
  toolName: string = TASK_TOOL_NAME,
  argNames: readonly string[] = ARG_NAMES,
): string {
  if (issue.code === 'unrecognized_keys') {
    return `${issue.keys.join(', ')}: not an argument of ${toolName} (accepted: ${argNames.join(', ')})`;
  }
  if (issue.path.length === 0) {
    return `the arguments are not a JSON object (an object with ${argNames.join(', ')})`;
  }
  return `${issue.path.join('.')}: ${issue.message}`;
}

/** A call's raw arguments as JSON, or the error the model reads (what to send instead). */
function parseJsonArgs(
  rawJson: string,
  toolName: string,
  argNames: readonly string[],
): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(rawJson) as unknown };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return {
      ok: false,
      error:
        `Invalid ${toolName} arguments: they are not valid JSON (${reason}); ` +
        `send an object with ${argNames.join(', ')}.`,
    };
  }
}

export type ParsedLoadArgs =
  { ok: true; args: Omit<TaskArgs, 'subagent_type'> } | { ok: false; error: string };

/** Validates the raw JSON arguments of a tool load's call; the error is written for the model. */
export function parseLoadArgs(rawJson: string, toolName: string): ParsedLoadArgs {
  const raw = parseJsonArgs(rawJson, toolName, LOAD_ARG_NAMES);
  if (!raw.ok) return raw;
  const parsed = loadArgsSchema().safeParse(raw.value);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `- ${issueLine(issue, toolName, LOAD_ARG_NAMES)}`);
    return { ok: false, error: [`Invalid ${toolName} arguments:`, ...lines].join('\n') };
  }
  return { ok: true, args: parsed.data };
}

export type ParsedTaskArgs<A> = { ok: true; args: TaskArgs; agent: A } | { ok: false; error: string };

/**
 * Validates the raw JSON arguments of a `task` call. The error is written for the model (it becomes the
 * call's tool message): every problem, one a line, with what would be accepted.
 */
export function parseTaskArgs<A extends { name: string }>(
  rawJson: string,
  agents: readonly A[],
): ParsedTaskArgs<A> {
  const raw = parseJsonArgs(rawJson, TASK_TOOL_NAME, ARG_NAMES);
  if (!raw.ok) return raw;
  const parsed = taskArgsSchema(agents.map((agent) => agent.name)).safeParse(raw.value);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `- ${issueLine(issue)}`);
    return { ok: false, error: [`Invalid ${TASK_TOOL_NAME} arguments:`, ...lines].join('\n') };
  }
  // The schema admits only these names, so an agent is always found; the check keeps the type honest.
  const agent = agents.find((candidate) => candidate.name === parsed.data.subagent_type);
  if (!agent)
    return { ok: false, error: `Invalid ${TASK_TOOL_NAME} arguments: no agent ${parsed.data.subagent_type}` };
  return { ok: true, args: parsed.data, agent };
}
