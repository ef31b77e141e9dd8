/**
 * The lead's batch tools as its model sees them, and the validators of their arguments: `batch_task` starts a
 * durable batch (one subagent per item) and returns at once; `batch_status`, `read_batch_result` and
 * `cancel_batch` follow it. Offered only when the config enables batches. As with `task`, the JSON schema
 * shown to the model comes from the zod schema that validates a call; the limits in the text are the
 * configured ceilings, which a call may lower but never raise.
 */
import { z } from 'zod';
import {
  BATCH_STATUS_TOOL_NAME,
  BATCH_TASK_TOOL_NAME,
  CANCEL_BATCH_TOOL_NAME,
  READ_BATCH_RESULT_TOOL_NAME,
  type BatchLimits,
  type BatchToolName,
  type BatchToolSettings,
} from '../../contracts/batch';
import { MAX_ACCEPTANCE_CRITERIA, MAX_CRITERION_CHARS, type BatchItem } from '../../contracts/batch-items';
import type { ToolSpec } from '../../contracts/messages';
import { groupThousands } from '../../contracts/text';
import type { TaskToolAgent } from './task-tool';

/** Items of a batch status page the model may ask for at once. */
export const BATCH_STATUS_PAGE_LIMIT = 50;
/** The longest `batch_status` wait, in seconds: the lead waits durably (a timer), holding no worker. */
export const BATCH_WAIT_MAX_SECONDS = 3600;
/** Characters of answers one `read_batch_result` call returns: default and most. */
export const BATCH_READ_DEFAULT_CHARS = 8000;
export const BATCH_READ_MAX_CHARS = 20_000;

export interface BatchTaskArgs {
  description: string;
  subagent_type: string;
  /** Exactly one of `items` and `items_file`. */
  items?: BatchItem[];
  items_file?: string;
  limits: BatchLimits;
  /** What the call asked for that the configured ceiling lowered, for the tool's answer. */
  lowered: string[];
}

export interface BatchRefArgs {
  batch_id: string;
  offset: number;
  limit: number;
  wait_seconds: number;
  max_chars: number;
}

function batchTaskSchema(agentNames: readonly string[], shownItems: boolean) {
  const item = z.strictObject({
    key: z.string().describe('Unique in the batch: 1–64 characters of A–Z a–z 0–9 . _ -'),
    prompt: z.string().describe("The item's complete task: its subagent sees nothing else."),
    acceptance_criteria: z
      .array(z.string())
      .optional()
      .describe(
        `At most ${MAX_ACCEPTANCE_CRITERIA}, each ≤ ${MAX_CRITERION_CHARS} characters: "contains: TEXT", ` +
          '"not_contains: TEXT", "matches: REGEX" (on the answer), "file_exists: PATH", ' +
          '"file_contains: PATH :: TEXT" (in the workspace). An answer that fails one is a failed attempt.',
      ),
  });
  return z.strictObject({
    description: z.string().trim().min(1, { error: 'is empty (a 3–5 word label for the batch)' }),
    subagent_type: z.enum(agentNames, {
      error: (issue) =>
        `${issue.input === undefined ? 'is missing' : `${JSON.stringify(issue.input)} is not an available subagent`} (${agentNames.join(', ')})`,
    }),
    items: (shownItems ? z.array(item) : z.array(z.unknown()))
      .optional()
      .describe('The items, for a few dozen; for more, write them to a file and give items_file.'),
    items_file: z
      .string()
      .min(1)
      .optional()
      .describe(
        'A JSON Lines file in the workspace, one item a line: {"key": …, "prompt": …, "acceptance_criteria": [...]}.',
      ),
    max_running_items: z.int().min(1).optional(),
    max_live_items: z.int().min(1).optional(),
    max_attempts: z.int().min(1).max(10).optional(),
  });
}

function refSchema(tool: BatchToolName) {
  const batchId = z
    .string()
    .min(1, { error: 'is empty (the id batch_task answered with)' })
    .describe('The id batch_task answered with.');
  const offset = z.int().min(0).optional().describe('First item of the page, from 0 (default 0).');
  const pageLimit = (byDefault: number) =>
    z
      .int()
      .min(1)
      .max(BATCH_STATUS_PAGE_LIMIT)
      .optional()
      .describe(`Items in the page (default ${byDefault}).`);
  switch (tool) {
    case BATCH_STATUS_TOOL_NAME:
      return z.strictObject({
        batch_id: batchId,
        offset,
        limit: pageLimit(20),
        wait_seconds: z
          .int()
          .min(0)
          .max(BATCH_WAIT_MAX_SECONDS)
          .optional()
          .describe('Wait up to this long for the batch to end before answering (default 0: answer now).'),
      });
    case READ_BATCH_RESULT_TOOL_NAME:
      return z.strictObject({
        batch_id: batchId,
        offset,
        limit: pageLimit(10),
        max_chars: z
          .int()
          .min(500)
          .max(BATCH_READ_MAX_CHARS)
          .optional()
          .describe(`Characters of answers at most (default ${BATCH_READ_DEFAULT_CHARS}).`),
      });
    default:
      return z.strictObject({ batch_id: batchId });
  }
}

function ceilingText(settings: BatchToolSettings): string {
  const { limits, max_items: maxItems } = settings;
  return (
    `LIMITS: at most ${groupThousands(maxItems)} items; at most ${limits.max_running_items} running at once ` +
    `and ${limits.max_live_items} started or waiting (you may ask for fewer, not more); an item that fails ` +
    `is tried up to ${limits.max_attempts} times in all.`
  );
}

function parameters(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...shown } = z.toJSONSchema(schema, { io: 'input' });
  return shown;
}

/** The four batch tools for a lead whose delegation may start these agents. */
export function buildBatchToolSpecs(
  agents: readonly TaskToolAgent[],
  settings: BatchToolSettings,
): ToolSpec[] {
  const names = agents.map((agent) => agent.name);
  return [
    {
      name: BATCH_TASK_TOOL_NAME,
      description: [
        'Start a durable batch: many independent items of the same kind, each done by its own subagent in a ' +
          'fresh context (e.g. review 500 requirements one by one). It returns at once with the batch id; the ' +
          'batch runs on its own, survives restarts, and does not count toward the delegation limit. Use ' +
          '`task` for a few related pieces of work; use this for many items that do not depend on each other.',
        'Give the items inline (a few dozen) or as items_file, a JSON Lines file in the workspace (thousands). ' +
          'Each item has a unique key, a self-contained prompt, and optional acceptance criteria.',
        `Then follow it: ${BATCH_STATUS_TOOL_NAME} (counts and a page of items; wait_seconds waits for the end), ` +
          `${READ_BATCH_RESULT_TOOL_NAME} (the answers, page by page), ${CANCEL_BATCH_TOOL_NAME}. The batch ` +
          'keeps running if you answer before it ends.',
        ceilingText(settings),
        ['Subagent types:', ...agents.map((agent) => `- ${agent.name}: ${agent.description}`)].join('\n'),
      ].join('\n\n'),
      parameters: parameters(batchTaskSchema(names, true)),
    },
    {
      name: BATCH_STATUS_TOOL_NAME,
      description:
        "A batch's progress: items by state (pending, waiting, running, completed, failed, cancelled) and a " +
        'page of items with their attempts and errors. With wait_seconds, waits (without using turns) until ' +
        'the batch ends or the time is up.',
      parameters: parameters(refSchema(BATCH_STATUS_TOOL_NAME)),
    },
    {
      name: READ_BATCH_RESULT_TOOL_NAME,
      description:
        "A page of a batch's answers in item order: each finished item's final answer (shortened to fit " +
        'max_chars), its status and acceptance verdict. Page with offset and limit.',
      parameters: parameters(refSchema(READ_BATCH_RESULT_TOOL_NAME)),
    },
    {
      name: CANCEL_BATCH_TOOL_NAME,
      description:
        'Cancel a batch: running items are cancelled, finished ones keep their answers, the rest never run.',
      parameters: parameters(refSchema(CANCEL_BATCH_TOOL_NAME)),
    },
  ];
}

type Parsed<T> = { ok: true; args: T } | { ok: false; error: string };

function parseJson(tool: string, rawJson: string): Parsed<unknown> {
  try {
    return { ok: true, args: JSON.parse(rawJson) };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return { ok: false, error: `Invalid ${tool} arguments: they are not valid JSON (${reason}).` };
  }
}

function issuesText(tool: string, issues: readonly z.core.$ZodIssue[]): string {
  const lines = issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') return `- ${issue.keys.join(', ')}: not an argument of ${tool}`;
    if (issue.path.length === 0) return '- the arguments are not a JSON object';
    return `- ${issue.path.join('.')}: ${issue.message}`;
  });
  return [`Invalid ${tool} arguments:`, ...lines].join('\n');
}

/**
 * Validates a `batch_task` call's arguments (the items themselves are checked where they are read, inline or
 * from the file, with the same rules as `subagents batch start`). Limits above the ceiling are lowered.
 */
export function parseBatchTaskArgs(
  rawJson: string,
  agentNames: readonly string[],
  settings: BatchToolSettings,
): Parsed<BatchTaskArgs> {
  const json = parseJson(BATCH_TASK_TOOL_NAME, rawJson);
  if (!json.ok) return json;
  const parsed = batchTaskSchema(agentNames, false).safeParse(json.args);
  if (!parsed.success) return { ok: false, error: issuesText(BATCH_TASK_TOOL_NAME, parsed.error.issues) };
  const { items, items_file: itemsFile, ...args } = parsed.data;
  if ((items === undefined) === (itemsFile === undefined)) {
    return {
      ok: false,
      error: `Invalid ${BATCH_TASK_TOOL_NAME} arguments:\n- give either items or items_file (exactly one of them)`,
    };
  }
  const ceiling = settings.limits;
  const lowered: string[] = [];
  const within = (name: 'max_running_items' | 'max_live_items' | 'max_attempts', asked?: number) => {
    if (asked === undefined) return ceiling[name];
    if (asked <= ceiling[name]) return asked;
    lowered.push(`${name} ${asked} → ${ceiling[name]} (the configured ceiling)`);
    return ceiling[name];
  };
  const live = within('max_live_items', args.max_live_items);
  const running = Math.min(within('max_running_items', args.max_running_items), live);
  return {
    ok: true,
    args: {
      description: args.description,
      subagent_type: args.subagent_type,
      ...(items !== undefined && { items: items as BatchItem[] }),
      ...(itemsFile !== undefined && { items_file: itemsFile }),
      limits: {
        max_running_items: running,
        max_live_items: live,
        max_attempts: within('max_attempts', args.max_attempts),
        retry_backoff_seconds: ceiling.retry_backoff_seconds,
      },
      lowered,
    },
  };
}

/** Validates the arguments of `batch_status`, `read_batch_result` or `cancel_batch`, defaults filled in. */
export function parseBatchRefArgs(tool: BatchToolName, rawJson: string): Parsed<BatchRefArgs> {
  const json = parseJson(tool, rawJson);
  if (!json.ok) return json;
  const parsed = refSchema(tool).safeParse(json.args);
  if (!parsed.success) return { ok: false, error: issuesText(tool, parsed.error.issues) };
  const args: Partial<BatchRefArgs> & { batch_id: string } = parsed.data;
  return {
    ok: true,
    args: {
      batch_id: args.batch_id,
      offset: args.offset ?? 0,
      limit: args.limit ?? (tool === READ_BATCH_RESULT_TOOL_NAME ? 10 : 20),
      wait_seconds: args.wait_seconds ?? 0,
      max_chars: args.max_chars ?? BATCH_READ_DEFAULT_CHARS,
    },
  };
}
