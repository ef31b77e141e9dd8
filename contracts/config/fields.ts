/**
 * The value types of the config file. Each carries its own messages, so every problem reads
 * `path.to.key: <value> <what is wrong> (<allowed>)`, one line each, and a user can fix a file in one pass.
 */
import { z } from 'zod';
import { issueProblems } from '../problems';
import { BUILTIN_TOOL_NAMES, TASK_TOOL_NAME } from '../tools';

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

/**
 * A config problem's lines. A strict section's error map puts its accepted keys in an unknown-key issue's
 * message (see section()), so the hint lists them.
 */
export function configIssueProblems(issue: z.core.$ZodIssue): string[] {
  return issueProblems(issue, { acceptedKeys: (unknown) => unknown.message.split(', ') });
}

const ENV_REFERENCE = /^\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})$/;

/** `$NAME` or `${NAME}` → `NAME`. */
export function envReferenceName(value: string): string | undefined {
  const match = ENV_REFERENCE.exec(value);
  return match === null ? undefined : (match[1] ?? match[2]);
}

interface RawIssue {
  readonly code?: string;
  readonly input?: unknown;
}

function typeError(noun: string, allowed?: string): (issue: RawIssue) => string {
  return (issue) =>
    issue.input === undefined
      ? `is missing (${noun}${allowed === undefined ? '' : `, ${allowed}`})`
      : `is not ${noun}${allowed === undefined ? '' : ` (${allowed})`}`;
}

/** The accepted keys of every strict section, by where they appear; the example file test walks it. */
export const CONFIG_KEYS: Record<string, readonly string[]> = {};

/** A strict mapping: an unknown key is a problem that lists the accepted ones. */
export function section<S extends z.ZodRawShape>(where: string, shape: S) {
  const keys = Object.keys(shape);
  CONFIG_KEYS[where] = keys;
  return z.strictObject(shape, {
    error: (issue: RawIssue) =>
      issue.code === 'unrecognized_keys'
        ? keys.join(', ')
        : typeError('a mapping', `keys: ${keys.join(', ')}`)(issue),
  });
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

/** Seconds may be fractional: short timeouts make fast tests. */
export const seconds = z
  .number({ error: typeError('a number of seconds', 'more than 0') })
  .positive({ error: 'is out of range (more than 0)' });

export const positiveNumber = z
  .number({ error: typeError('a number', 'more than 0') })
  .positive({ error: 'is out of range (more than 0)' });

export const fraction = z
  .number({ error: typeError('a fraction', 'more than 0 and less than 1') })
  .gt(0, { error: 'is out of range (more than 0 and less than 1)' })
  .lt(1, { error: 'is out of range (more than 0 and less than 1)' });

export const temperature = z
  .number({ error: typeError('a number', '0–2') })
  .min(0, { error: 'is out of range (0–2)' })
  .max(2, { error: 'is out of range (0–2)' });

export const bool = z.boolean({ error: typeError('true or false') });

export const text = z.string({ error: typeError('text') }).min(1, { error: 'is empty (write some text)' });

export const httpUrl = z
  .string({ error: typeError('an http(s) URL') })
  .regex(/^https?:\/\/\S+$/, { error: 'is not an http(s) URL (e.g. http://localhost:8000/v1)' });

const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[^\s:/[\]]+):([0-9]{1,5})$/;

function isHostPort(address: string): boolean {
  const port = Number(HOST_PORT.exec(address)?.[2] ?? 0);
  return port >= 1 && port <= 65535;
}

export const hostPort = z
  .string({ error: typeError('host:port', 'e.g. localhost:7233') })
  .refine(isHostPort, {
    error: 'is not host:port (e.g. localhost:7233, port 1–65535)',
  });

export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  const allowed = values.join(', ');
  return z.enum(values, {
    error: (issue: RawIssue) =>
      issue.input === undefined ? `is missing (${allowed})` : `is not an accepted value (${allowed})`,
  });
}

export const KNOWN_TOOL_NAMES = [...BUILTIN_TOOL_NAMES, TASK_TOOL_NAME] as const;

export const toolName = z.enum(KNOWN_TOOL_NAMES, {
  error: (issue: RawIssue) =>
    issue.input === undefined
      ? `is missing (a tool name: ${KNOWN_TOOL_NAMES.join(', ')})`
      : `is not a known tool (${KNOWN_TOOL_NAMES.join(', ')})`,
});

export function listOf<T extends z.ZodType>(item: T, noun: string) {
  return z.array(item, { error: typeError(`a list of ${noun}`) });
}

export function mappingOf<T extends z.ZodType>(value: T, noun: string) {
  return z.record(z.string(), value, { error: typeError(`a mapping of ${noun}`) });
}

/** An API key is only ever the name of an environment variable: a literal would be recorded in history. */
export const apiKeyReference = z
  .string({ error: typeError('an environment reference', 'e.g. $OPENAI_API_KEY') })
  .transform((value, ctx) => {
    const name = envReferenceName(value);
    if (name === undefined) {
      ctx.issues.push({
        code: 'custom',
        input: value,
        message:
          'is a literal key, which is refused (write an environment reference such as $OPENAI_API_KEY: keys ' +
          'come from the environment so they never enter workflow history)',
      });
      return z.NEVER;
    }
    return name;
  });
