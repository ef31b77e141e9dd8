/**
 * The value types of the config file. Each carries its own messages, so every problem reads
 * `path.to.key: <value> <what is wrong> (<allowed>)`, one line each, and a user can fix a file in one pass.
 */
import { z } from 'zod';
import { issueProblems } from '../problems';
import {
  ConfigError,
  KNOWN_TOOL_NAMES,
  listOf,
  mappingOf,
  oneOf,
  RawIssue,
  typeError,
  valueTypes,
  wholeNumber,
} from './value-types';

export { ConfigError, KNOWN_TOOL_NAMES, listOf, mappingOf, oneOf, valueTypes, wholeNumber };

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

export const {
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
} = valueTypes();

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
