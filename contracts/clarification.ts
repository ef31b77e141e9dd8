/**
 * `ask_clarification`, DeerFlow's tool for a run that stops to ask a person: the tool as the model sees it
 * (DeerFlow's name, arguments and wording), the questions a run records, the Update that answers one and the
 * signal that tells a parent a child is waiting. Declared once for the workflows and the clients (no Node APIs:
 * the workflow bundle imports this file, and shares it between workflows deep-frozen, so schemas are built by
 * functions, never kept in a module constant).
 */
import { defineSignal, defineUpdate } from '@temporalio/workflow';
import { z } from 'zod';
import type { ToolSpec } from './messages';

export const CLARIFICATION_TOOL_NAME = 'ask_clarification';

/** DeerFlow's kinds of clarification, in its order. */
export const CLARIFICATION_TYPES = [
  'missing_info',
  'ambiguous_requirement',
  'approach_choice',
  'risk_confirmation',
  'suggestion',
] as const;
export type ClarificationType = (typeof CLARIFICATION_TYPES)[number];

/** How long a question waits for its answer unless the config says otherwise (`clarification.timeout_seconds`). */
export const DEFAULT_CLARIFICATION_TIMEOUT_SECONDS = 3600;

/** Bounds on what reaches history: a question, its context, its options, an answer. */
export const QUESTION_MAX_CHARS = 2000;
export const CONTEXT_MAX_CHARS = 4000;
export const MAX_OPTIONS = 20;
export const OPTION_MAX_CHARS = 500;
export const ANSWER_MAX_CHARS = 10_000;

function missingOr(what: string, issue: { input?: unknown }): string {
  return issue.input === undefined ? `is missing (${what})` : `is not a string (${what})`;
}

function boundedText(what: string, max: number) {
  return z
    .string({ error: (issue) => missingOr(what, issue) })
    .refine((text) => text.trim() !== '', { error: `is empty (${what})` })
    .refine((text) => text.length <= max, { error: `is longer than ${max} characters (${what})` });
}

function clarificationArgsSchema() {
  const types = CLARIFICATION_TYPES.join(', ');
  return z.strictObject({
    question: boundedText('the question for the user', QUESTION_MAX_CHARS).describe(
      'The clarification question to ask the user. Be specific and clear.',
    ),
    clarification_type: z
      .enum(CLARIFICATION_TYPES, {
        error: (issue) =>
          issue.input === undefined
            ? `is missing (${types})`
            : `${JSON.stringify(issue.input)} is not a clarification type (${types})`,
      })
      .describe(`The type of clarification needed (${types}).`),
    context: boundedText('why the question is asked', CONTEXT_MAX_CHARS)
      .optional()
      .describe(
        'Optional context explaining why clarification is needed. Helps the user understand the situation.',
      ),
    options: z
      .array(boundedText('a choice', OPTION_MAX_CHARS), { error: 'is not a list of choices' })
      .max(MAX_OPTIONS, { error: `has more than ${MAX_OPTIONS} choices` })
      .optional()
      .describe(
        'Optional list of choices (for approach_choice or suggestion types). Present clear options for the ' +
          'user to choose from.',
      ),
  });
}

/** `ask_clarification`'s arguments, as the model sends them and history records them. */
export type ClarificationArgs = z.output<ReturnType<typeof clarificationArgsSchema>>;

/** What the tool does, in DeerFlow's words, and how long a question waits here. */
function clarificationToolDescription(timeoutSeconds: number): string {
  return [
    'Ask the user for clarification when you need more information to proceed.',
    'Use this tool when you encounter situations where you cannot proceed without user input:\n' +
      '- Missing information: required details not provided (e.g., file paths, URLs, specific requirements)\n' +
      '- Ambiguous requirements: multiple valid interpretations exist\n' +
      '- Approach choices: several valid approaches exist and you need user preference\n' +
      '- Risky operations: destructive actions that need explicit confirmation (e.g., deleting files, ' +
      'modifying production)\n' +
      '- Suggestions: you have a recommendation but want user approval before proceeding',
    "The run waits for the user's answer, which comes back as this call's result. If no answer comes within " +
      `${timeoutSeconds} seconds, the result says so: then proceed on your best judgement, or stop and say ` +
      'what you need.',
    "Best practices:\n- Ask ONE clarification at a time for clarity\n- Be specific and clear in your question\n- Don't make assumptions when clarification is needed\n- For risky operations, ALWAYS ask for confirmation",
  ].join('\n\n');
}

/** The tool's spec, with the wait this run allows in its text. */
export function buildClarificationToolSpec(timeoutSeconds: number): ToolSpec {
  const { $schema: _dialect, ...parameters } = z.toJSONSchema(clarificationArgsSchema(), { io: 'input' });
  return {
    name: CLARIFICATION_TOOL_NAME,
    description: clarificationToolDescription(timeoutSeconds),
    parameters,
  };
}

const ARG_NAMES = ['question', 'clarification_type', 'context', 'options'] as const;

function issueLine(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    return `${issue.keys.join(', ')}: not an argument of ${CLARIFICATION_TOOL_NAME} (accepted: ${ARG_NAMES.join(', ')})`;
  }
  if (issue.path.length === 0) return `the arguments are not a JSON object (with ${ARG_NAMES.join(', ')})`;
  return `${issue.path.join('.')}: ${issue.message}`;
}

/** The model's raw JSON arguments checked; the error is written for the model (it becomes the tool result). */
export function parseClarificationArgs(
  rawJson: string,
): { ok: true; args: ClarificationArgs } | { ok: false; error: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(rawJson);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return {
      ok: false,
      error: `Invalid ${CLARIFICATION_TOOL_NAME} arguments: they are not valid JSON (${reason}).`,
    };
  }
  // Some models send a list as a JSON string (DeerFlow's middleware accepts it too).
  if (typeof raw === 'object' && raw !== null && typeof (raw as { options?: unknown }).options === 'string') {
    try {
      raw = { ...raw, options: JSON.parse((raw as { options: string }).options) as unknown };
    } catch {
      // Left as it is: the schema names the problem.
    }
  }
  const parsed = clarificationArgsSchema().safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `- ${issueLine(issue)}`);
    return { ok: false, error: [`Invalid ${CLARIFICATION_TOOL_NAME} arguments:`, ...lines].join('\n') };
  }
  const { question, clarification_type, context, options } = parsed.data;
  return {
    ok: true,
    args: {
      question: question.trim(),
      clarification_type,
      ...(context !== undefined && { context: context.trim() }),
      ...(options !== undefined && options.length > 0 && { options: options.map((o) => o.trim()) }),
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Questions, answers, and the messages that carry them

/** A question waiting for its answer, as `status`, the live tree and the CLI see it. */
export interface PendingQuestion extends ClarificationArgs {
  /**
   * How to name it in this run (`subagents answer --question`): `q1` for the lead's own, `<delegation id>/q1`
   * for a subagent's (`a/b/q1` for a nested one).
   */
  ref: string;
  /** Its id in the workflow that asked: `q1`, `q2`, … */
  id: string;
  /** The workflow that asked and waits (the Update that answers goes there). */
  workflow_id: string;
  /** The agent that asked: `lead`, or the subagent's type. */
  asked_by: string;
  /** ISO 8601 (workflow clock). */
  asked_at: string;
  /** When it closes unanswered. */
  expires_at: string;
  timeout_seconds: number;
}

/** How a question was closed. */
export type QuestionEnd = 'answered' | 'timed_out' | 'cancelled';

/** A question in the workflow that asked it. */
export interface QuestionRecord extends PendingQuestion {
  state: 'pending' | QuestionEnd;
  answer?: string;
  /** Who answered, when the answer named them (`subagents answer`, the live page). */
  by?: string;
  closed_at?: string;
}

/** What `subagents answer` (the Update) sends. */
export interface AnswerRequest {
  /** The asking workflow's id for it (`q1`); absent: the one question it is waiting on. */
  question_id?: string;
  answer: string;
  /** Who answers (`$USER@host` from the CLI, the signed-in person from the live page); absent from older clients. */
  by?: string;
}

/** What the Update returns: what was recorded. */
export interface RecordedAnswer {
  ref: string;
  question_id: string;
  question: string;
  asked_by: string;
  workflow_id: string;
  answer: string;
  answered_at: string;
  by?: string;
}

/** Why an answer is refused: the Update's failure type, so a client can tell a user's mistake from a state. */
export const ANSWER_REFUSALS = {
  /** Empty or too long. */
  invalid: 'InvalidAnswer',
  /** No question of that id. */
  unknown: 'UnknownQuestion',
  /** Nothing is waiting for an answer. */
  notWaiting: 'NotWaitingForAnswer',
  /** That question was answered, timed out or cancelled already. */
  closed: 'QuestionClosed',
  /** Several questions wait: the answer must name one. */
  ambiguous: 'AmbiguousQuestion',
} as const;
export type AnswerRefusal = (typeof ANSWER_REFUSALS)[keyof typeof ANSWER_REFUSALS];

/** Why `answer` cannot be sent as one (empty, too long), or undefined when it can. */
export function answerProblem(answer: unknown): string | undefined {
  if (typeof answer !== 'string') return 'the answer is not text';
  if (answer.trim() === '') return 'the answer is empty (write what the run should know)';
  if (answer.length > ANSWER_MAX_CHARS) {
    return `the answer is ${answer.length} characters long, above the ${ANSWER_MAX_CHARS} allowed`;
  }
  return undefined;
}

export const answerClarificationUpdate = defineUpdate<RecordedAnswer, [AnswerRequest]>(
  'answer_clarification',
);

/** A child's question opened or closed: sent to its parent, which passes it up to the lead. */
export type ClarificationNotice =
  | { state: 'asked'; question: Omit<PendingQuestion, 'ref'> }
  | { state: 'closed'; workflow_id: string; id: string; end: QuestionEnd; answer?: string; by?: string };

export const clarificationNoticeSignal = defineSignal<[ClarificationNotice]>('clarification_notice');

const TASK_SEPARATOR = '/task/';

/**
 * A question's name in the run: its id after the delegation ids between the lead and the asking workflow
 * (children are named `<parent id>/task/<delegation id>`): `q1`, `a/q1`, `a/b/q1`.
 */
export function questionRef(leadWorkflowId: string, askingWorkflowId: string, id: string): string {
  if (askingWorkflowId === leadWorkflowId || !askingWorkflowId.startsWith(leadWorkflowId + TASK_SEPARATOR)) {
    return id;
  }
  const path = askingWorkflowId.slice(leadWorkflowId.length + TASK_SEPARATOR.length).split(TASK_SEPARATOR);
  return [...path, id].join('/');
}

/** Where the question `ref` of the run `leadWorkflowId` waits: the asking workflow's id and its own id there. */
export function questionTarget(leadWorkflowId: string, ref: string): { workflowId: string; id: string } {
  const parts = ref.split('/');
  const id = parts.pop() ?? ref;
  const workflowId = parts.length === 0 ? leadWorkflowId : [leadWorkflowId, ...parts].join(TASK_SEPARATOR);
  return { workflowId, id };
}

/**
 * The one-line command that answers a question of run `runId`; `flags` are what the command needs besides
 * (e.g. `--address HOST:PORT` for a server only the following process knows).
 */
export function answerCommandLine(runId: string, ref?: string, flags = ''): string {
  return `subagents answer ${runId} "<answer>"${ref === undefined ? '' : ` --question ${ref}`}${flags && ` ${flags}`}`;
}

/** The tool result once the user answered. */
export function answeredToolText(answer: string): string {
  return `The user answered: ${answer}`;
}

/** The tool result when no answer came in time. */
export function timedOutToolText(timeoutSeconds: number): string {
  return (
    `No answer came within ${timeoutSeconds} seconds; the question is closed. Proceed on your best judgement ` +
    '(say which assumptions you made), or stop and say what you need.'
  );
}
