/**
 * The value types of the config file as functions: each call builds new schemas. The config loader
 * (fields.ts) builds them once; a workflow's input check (contracts/inputs.ts) builds its own, because the
 * workflow bundle imports this module and the worker shares it between workflows deep-frozen
 * (worker/worker.ts, PRELOADED_MODULES), and zod cannot use a frozen schema (it defines a schema's methods on
 * the schema at first use). So this module exports no schema, only functions and constants. Pure: no Node
 * APIs.
 */
import { z } from 'zod';
import { NOT_A_USER_ID, userIdProblem } from '../user';
import { CLARIFICATION_TOOL_NAME } from '../clarification';
import { isMcpToolPattern } from '../mcp';
import { TASK_TOOL_NAME, TOOL_ACTIVITY_NAMES } from '../tools';

// zod completes its settings (its default locale, its memoizer) on the global object when it builds its first
// schema. The worker freezes the globals once the shared modules are evaluated, so one is built now, while
// they are: after the freeze zod could not build any.
z.object({ ready: z.boolean() });

/** Every problem, one per line, as `path.to.key: <value> <what is wrong> (<allowed>)`. */
export class ConfigError extends Error {
  readonly problems: string[];

  constructor(problems: string[], heading?: string) {
    super(
      heading === undefined ? problems.join('\n') : [heading, ...problems.map((p) => `  ${p}`)].join('\n'),
    );
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export interface RawIssue {
  readonly code?: string;
  readonly input?: unknown;
}

export function typeError(noun: string, allowed?: string): (issue: RawIssue) => string {
  return (issue) =>
    issue.input === undefined
      ? `is missing (${noun}${allowed === undefined ? '' : `, ${allowed}`})`
      : `is not ${noun}${allowed === undefined ? '' : ` (${allowed})`}`;
}

export function wholeNumber(min: number, max?: number) {
  const allowed = max === undefined ? `${min} or more` : `${min}–${max}`;
  const outOfRange = `is out of range (${allowed})`;
  const atLeast = z
    .number({ error: typeError('a whole number', allowed) })
    .int({ error: `is not a whole number (${allowed})` })
    .min(min, { error: outOfRange });
  return max === undefined ? atLeast : atLeast.max(max, { error: outOfRange });
}

export const KNOWN_TOOL_NAMES = [...TOOL_ACTIVITY_NAMES, TASK_TOOL_NAME, CLARIFICATION_TOOL_NAME] as const;

/** The value types without arguments, built anew on each call. */
export function valueTypes() {
  /** Seconds may be fractional: short timeouts make fast tests. */
  const seconds = z
    .number({ error: typeError('a number of seconds', 'more than 0') })
    .positive({ error: 'is out of range (more than 0)' });

  /** A wall clock that 0 turns off. */
  const secondsOrOff = z
    .number({ error: typeError('a number of seconds', '0 for none, or more') })
    .min(0, { error: 'is out of range (0 for none, or more)' });

  const positiveNumber = z
    .number({ error: typeError('a number', 'more than 0') })
    .positive({ error: 'is out of range (more than 0)' });

  const fraction = z
    .number({ error: typeError('a fraction', 'more than 0 and less than 1') })
    .gt(0, { error: 'is out of range (more than 0 and less than 1)' })
    .lt(1, { error: 'is out of range (more than 0 and less than 1)' });

  const temperature = z
    .number({ error: typeError('a number', '0–2') })
    .min(0, { error: 'is out of range (0–2)' })
    .max(2, { error: 'is out of range (0–2)' });

  const bool = z.boolean({ error: typeError('true or false') });

  const text = z.string({ error: typeError('text') }).min(1, { error: 'is empty (write some text)' });

  // A refinement, not `.regex`: zod's regex check writes the pattern's `lastIndex`, and a workflow's schemas are
  // deep-frozen (they are shared between workflows).
  const userId = z
    .string({ error: typeError('a user id') })
    .refine((id) => userIdProblem(id) === undefined, { error: NOT_A_USER_ID });

  const httpUrl = z
    .string({ error: typeError('an http(s) URL') })
    .regex(/^https?:\/\/\S+$/, { error: 'is not an http(s) URL (e.g. http://localhost:8000/v1)' });

  // MCP tools are named by their server (`<server>__<tool>`, `<server>__*`): which exist is known when a
  // worker connects, so only the shape is checked here.
  const unknownTool = (name: string) =>
    name.includes('__')
      ? 'is not an MCP tool name (<server>__<tool> or <server>__*; a server name has letters, digits, - and single _)'
      : `is not a known tool (${KNOWN_TOOL_NAMES.join(', ')})`;
  const toolName = z
    .string({
      error: (issue: RawIssue) =>
        issue.input === undefined
          ? `is missing (a tool name: ${KNOWN_TOOL_NAMES.join(', ')})`
          : `is not a known tool (${KNOWN_TOOL_NAMES.join(', ')})`,
    })
    .superRefine((name, ctx) => {
      if ((KNOWN_TOOL_NAMES as readonly string[]).includes(name) || isMcpToolPattern(name)) return;
      ctx.addIssue({ code: 'custom', input: name, message: unknownTool(name) });
    });
  return {
    seconds,
    secondsOrOff,
    positiveNumber,
    fraction,
    temperature,
    bool,
    text,
    userId,
    httpUrl,
    toolName,
  };
}

export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  const allowed = values.join(', ');
  return z.enum(values, {
    error: (issue: RawIssue) =>
      issue.input === undefined ? `is missing (${allowed})` : `is not an accepted value (${allowed})`,
  });
}

export function listOf<T extends z.ZodType>(item: T, noun: string) {
  return z.array(item, { error: typeError(`a list of ${noun}`) });
}

export function mappingOf<T extends z.ZodType>(value: T, noun: string) {
  return z.record(z.string(), value, { error: typeError(`a mapping of ${noun}`) });
}
