/**
 * The `task` tool as the lead's model sees it, and the validator of its arguments. The JSON schema shown to
 * the model is generated from the same zod schema that validates a call, so the two cannot drift. The
 * provider is bound by config and only changes the wording; the routing policy and the limits in the text are
 * the shared clauses of `contracts/routing-policy.ts` at the enforced limits.
 */
import { z } from 'zod';
import type { SubagentProvider } from '../../contracts/lead';
import type { ToolSpec } from '../../contracts/messages';
import { routingParagraphs } from '../../contracts/routing-policy';
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

function available(agentNames: readonly string[]): string {
  return agentNames.length === 0 ? 'none is available' : agentNames.join(', ');
}

function missingOr(what: string, issue: { input?: unknown }): string {
  return issue.input === undefined ? `is missing (${what})` : `is not a string (${what})`;
}

function taskArgsSchema(agentNames: readonly string[]) {
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

const PROMPT_WORDING: Record<SubagentProvider, { tool: string; prompt: string }> = {
  spawn: {
    tool:
      'The subagent starts a fresh conversation: it does not see this conversation, so the prompt must stand ' +
      'alone. Give it the goal, every fact, file path and constraint it needs, and say what its final answer ' +
      'must contain.',
    prompt:
      'The complete task for the subagent. It does not see this conversation: include every fact, file path ' +
      'and constraint it needs, and say what its final answer must contain.',
  },
  fork: {
    tool:
      "The subagent is seeded with this conversation's completed turns: it already knows what was said and " +
      'found so far. The prompt should state only what is new: the task itself and what its final answer ' +
      'must contain.',
    prompt:
      "What the subagent should do now. It is seeded with this conversation's completed turns: state only " +
      'what is new (the task and what its final answer must contain), not what was already said.',
  },
};

/** What the tool does, the routing policy for these limits, the provider's wording and the agents. */
function taskToolDescription(options: TaskToolOptions): string {
  const { provider, agents } = options;
  const [weighing, dispatch, limits] = routingParagraphs(options);
  return [
    'Delegate a self-contained task to a subagent. It works on its own, with its own tools, and its final ' +
      "answer comes back as this call's result.",
    weighing,
    dispatch,
    PROMPT_WORDING[provider].tool,
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
    prompt: schema.shape.prompt.describe(PROMPT_WORDING[options.provider].prompt),
  });
  const { $schema: _dialect, ...parameters } = z.toJSONSchema(shown, { io: 'input' });
  return { name: TASK_TOOL_NAME, description: taskToolDescription(options), parameters };
}

function issueLine(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    return `${issue.keys.join(', ')}: not an argument of ${TASK_TOOL_NAME} (accepted: ${ARG_NAMES.join(', ')})`;
  }
  if (issue.path.length === 0) {
    return `the arguments are not a JSON object (an object with ${ARG_NAMES.join(', ')})`;
  }
  return `${issue.path.join('.')}: ${issue.message}`;
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
  let raw: unknown;
  try {
    raw = JSON.parse(rawJson);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return {
      ok: false,
      error:
        `Invalid ${TASK_TOOL_NAME} arguments: they are not valid JSON (${reason}); ` +
        `send an object with ${ARG_NAMES.join(', ')}.`,
    };
  }
  const parsed = taskArgsSchema(agents.map((agent) => agent.name)).safeParse(raw);
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
