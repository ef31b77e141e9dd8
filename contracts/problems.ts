/**
 * Problems with a value (a config file, a workflow input, a tool's arguments) as lines a person or a model can
 * act on: `path.to.key: <value> <what is wrong> (<what is accepted>)`, one line each, so every problem can be
 * fixed in one pass. One formatter for every zod schema of the project.
 */
import type { z } from 'zod';

/** Where in the value: keys and list indexes, outermost first. */
export type ProblemPath = readonly PropertyKey[];

/** `['models', 0, 'name']` → `models[0].name`; the empty path (the whole config file) is `config`. */
export function formatPath(path: ProblemPath): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out === '' ? 'config' : out;
}

function showValue(value: unknown): string {
  if (typeof value === 'string')
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  if (Array.isArray(value)) return 'a list';
  if (value !== null && typeof value === 'object') return 'a mapping';
  return String(value);
}

/** A secret is never echoed back, not even in an error message. */
export function isSecretPath(path: ProblemPath): boolean {
  const key = path[path.length - 1];
  // `api_key`, and the LangChain classes' own names for it (`anthropic_api_key`, `google_api_key`, …).
  return typeof key === 'string' && (key === 'api_key' || key.endsWith('_api_key'));
}

/** One problem line; the value is shown unless it is absent or a secret. */
export function problem(path: ProblemPath, input: unknown, message: string): string {
  const where = formatPath(path);
  return input === undefined || isSecretPath(path)
    ? `${where}: ${message}`
    : `${where}: ${showValue(input)} ${message}`;
}

export interface IssueWording {
  /** What the whole value is called, for an issue about it rather than a key: `input` → "input is not …". */
  whole?: string;
  /** The keys accepted where an unknown key was found, for the line's hint. */
  acceptedKeys?: (issue: z.core.$ZodIssueUnrecognizedKeys) => readonly string[] | undefined;
}

/** A zod issue as problem lines (an unknown-keys issue is one line per key). */
export function issueProblems(issue: z.core.$ZodIssue, wording: IssueWording = {}): string[] {
  if (issue.code === 'unrecognized_keys') {
    const accepted = wording.acceptedKeys?.(issue);
    const hint = accepted === undefined ? '' : ` (accepted: ${accepted.join(', ')})`;
    return issue.keys.map((key) => `${formatPath([...issue.path, key])}: unknown key${hint}`);
  }
  if (issue.path.length === 0 && wording.whole !== undefined) return [`${wording.whole} ${issue.message}`];
  return [problem(issue.path, issue.input, issue.message)];
}
