/**
 * The items of a durable batch (issue 14), each run as its own subagent, and the acceptance criteria that say
 * whether an item's subagent did its work. Checks only, one line a problem, every problem at once. Pure: no
 * Node APIs (the workflow bundle imports this file), no module state.
 *
 * A batch item is `{ key, prompt, acceptance_criteria? }`. Its key becomes part of a workflow id
 * (`<batch id>/item/<key>/<attempt>`), so it is 1–64 ASCII letters, digits, `.`, `_` and `-`, and neither `.`
 * nor `..`. Keys are unique within a batch. Other keys in an item are refused: a misspelt
 * `acceptance_criteria` would otherwise drop the item's criteria without a word.
 *
 * Acceptance criteria: at most 20 an item, each one string of at most 500 characters, `<form>: <argument>`.
 * The argument is what follows the colon with the spaces around it removed, and may not be empty.
 *
 *   contains: <text>                 the final answer contains <text> (case-sensitive, as written)
 *   not_contains: <text>             the final answer does not contain <text>
 *   matches: <regex>                 the final answer matches <regex>, with no flags: anywhere in the
 *                                    answer, ^ and $ are the start and end of the whole answer (not of a
 *                                    line), case-sensitive unless the regex says otherwise ([Dd]one). It runs
 *                                    on RE2's linear-time engine (contracts/patterns.ts), so no pattern can
 *                                    pin a worker, and RE2 checks it when the batch is checked: a pattern RE2
 *                                    refuses (a backreference, lookaround) is refused up front with RE2's
 *                                    message. Batches checked before that, with JavaScript's RegExp, may hold
 *                                    one; it fails its check, saying so
 *   file_exists: <path>              <path> is a regular file in the item's workspace
 *   file_contains: <path> :: <text>  that file's first MAX_ACCEPTANCE_READ_BYTES (4 MiB) hold <text>, byte
 *                                    for byte (UTF-8); the path ends at the first `::`
 *
 * A path is relative to the item's workspace: absolute paths and any `..` are refused when the batch is
 * checked, and the check itself (activities/acceptance.ts) follows symbolic links only while they stay
 * inside the workspace. A string with no recognised form is refused, naming the forms: a plain sentence
 * ("the tests pass") is a wish no check here can decide, so it is refused up front rather than passed or
 * failed later without a word.
 *
 * The answer-only forms can be decided in the workflow (`answerVerdict`); the file forms need the workspace,
 * so the `checkAcceptance` activity decides them (`needsWorkspace`).
 */
import type { WorkspaceRequest } from './workspace';
import { compileUserPattern } from './patterns';
import { parseStrictJson } from './strict-json';

export interface BatchItem {
  key: string;
  prompt: string;
  acceptance_criteria?: string[];
}

/** The keys a batch item may have. */
export const BATCH_ITEM_KEYS = ['key', 'prompt', 'acceptance_criteria'] as const;

export const MAX_ACCEPTANCE_CRITERIA = 20;
export const MAX_CRITERION_CHARS = 500;
export const MAX_ITEM_KEY_CHARS = 64;
/** What `file_contains` reads of a file at most: a larger file is searched in its first part only. */
export const MAX_ACCEPTANCE_READ_BYTES = 4 * 1024 * 1024;

/** The criterion forms, each with its argument, as a person writes them. */
export const CRITERION_FORMS = {
  contains: 'contains: <text>',
  not_contains: 'not_contains: <text>',
  matches: 'matches: <regex>',
  file_exists: 'file_exists: <path>',
  file_contains: 'file_contains: <path> :: <text>',
} as const;

export type CriterionForm = keyof typeof CRITERION_FORMS;

/** A parsed criterion; `written` is the criterion exactly as it was written, for the verdict. */
export type Criterion =
  | { form: 'contains'; written: string; text: string }
  | { form: 'not_contains'; written: string; text: string }
  | { form: 'matches'; written: string; pattern: string }
  | { form: 'file_exists'; written: string; path: string }
  | { form: 'file_contains'; written: string; path: string; text: string };

/** The criteria decided on the final answer alone. */
export type AnswerCriterion = Extract<Criterion, { form: 'contains' | 'not_contains' | 'matches' }>;

/** The input of the `checkAcceptance` activity. */
export interface AcceptanceInput {
  /** As written in the item; one that does not parse fails its check. */
  criteria: string[];
  /** The subagent's final answer. */
  answer: string;
  /** The item's workspace (absolute): file criteria are looked up in it, and never outside it. */
  workspace: string;
  /** Where the workspace lives (contracts/workspace.ts); absent: a batch from before placements. */
  placement?: WorkspaceRequest;
}

export interface AcceptanceCheck {
  criterion: string;
  passed: boolean;
  /** Why it failed, or what limited the check. */
  detail?: string;
}

/** Passed when every check passed (no criteria: passed). */
export interface AcceptanceVerdict {
  passed: boolean;
  checks: AcceptanceCheck[];
}

const FORM_LIST = Object.values(CRITERION_FORMS).join(', ');
const KEY_CHARACTERS = 'ASCII letters, digits, ".", "_" and "-"';

/** A value as a problem line shows it (as contracts/problems.ts does): text quoted and cut at 60, else its kind. */
function shown(value: unknown): string {
  if (typeof value === 'string')
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  if (Array.isArray(value)) return 'a list';
  if (value !== null && typeof value === 'object') return 'a mapping';
  return String(value);
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Why a criterion's `path` cannot name a file in a workspace (a phrase after the criterion), or undefined. */
function pathProblem(path: string): string | undefined {
  const example = 'e.g. out/report.md';
  if (path.startsWith('/'))
    return `names an absolute path (write a path relative to the workspace, ${example})`;
  if (path.includes('\0')) return 'has a NUL character in its path';
  const names = path.split('/');
  if (names.includes('..')) return `has ".." in its path (write a path inside the workspace, ${example})`;
  if (names.every((name) => name === '' || name === '.'))
    return `names the workspace itself, not a file (${example})`;
  return undefined;
}

/** The argument after `form:`, or the problem of its absence. */
function argumentOf(text: string, form: CriterionForm, rest: string): string | { problem: string } {
  const argument = rest.trim();
  return argument === ''
    ? { problem: `${shown(text)} has nothing after "${form}:" (${CRITERION_FORMS[form]})` }
    : argument;
}

/**
 * Which engine checks a `matches:` pattern: `re2`, the one that runs it. `javascript-regexp` is how batches
 * were checked before, kept for workflow code replaying a history that was decided that way
 * (workflows/batch-validation.ts); nothing else asks for it.
 */
export type PatternCheck = 're2' | 'javascript-regexp';

function regexProblem(pattern: string, check: PatternCheck): string | undefined {
  if (check === 're2') {
    const compiled = compileUserPattern(pattern);
    return 'problem' in compiled ? compiled.problem : undefined;
  }
  try {
    new RegExp(pattern);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/**
 * One criterion as written in an item, or the problem with it: `"<criterion>" <what is wrong> (<accepted>)`.
 * Spaces around the criterion are ignored.
 */
export function parseCriterion(text: string): Criterion | { problem: string } {
  return parseCheckedCriterion(text, 're2');
}

function parseCheckedCriterion(text: string, check: PatternCheck): Criterion | { problem: string } {
  if (text.length > MAX_CRITERION_CHARS) {
    return { problem: `${shown(text)} is ${text.length} characters long (at most ${MAX_CRITERION_CHARS})` };
  }
  const trimmed = text.trim();
  const prefix = /^([a-z_]+):/.exec(trimmed);
  const form = prefix?.[1];
  if (prefix === null || form === undefined || !Object.hasOwn(CRITERION_FORMS, form)) {
    return { problem: `${shown(text)} is not a criterion this checks (write one of: ${FORM_LIST})` };
  }
  const known = form as CriterionForm;
  const argument = argumentOf(text, known, trimmed.slice(prefix[0].length));
  if (typeof argument !== 'string') return argument;
  switch (known) {
    case 'contains':
    case 'not_contains':
      return { form: known, written: text, text: argument };
    case 'matches': {
      const invalid = regexProblem(argument, check);
      return invalid === undefined
        ? { form: known, written: text, pattern: argument }
        : { problem: `${shown(text)} is not a valid regular expression: ${invalid}` };
    }
    case 'file_exists': {
      const invalid = pathProblem(argument);
      return invalid === undefined
        ? { form: known, written: text, path: argument }
        : { problem: `${shown(text)} ${invalid}` };
    }
    case 'file_contains': {
      const separator = argument.indexOf('::');
      if (separator === -1) {
        return {
          problem: `${shown(text)} has no "::" between the path and the text (${CRITERION_FORMS[known]})`,
        };
      }
      const path = argument.slice(0, separator).trim();
      const needle = argument.slice(separator + 2).trim();
      if (path === '' || needle === '') {
        return {
          problem: `${shown(text)} has no ${path === '' ? 'path before' : 'text after'} "::" (${CRITERION_FORMS[known]})`,
        };
      }
      const invalid = pathProblem(path);
      return invalid === undefined
        ? { form: known, written: text, path, text: needle }
        : { problem: `${shown(text)} ${invalid}` };
    }
  }
}

export function isAnswerCriterion(criterion: Criterion): criterion is AnswerCriterion {
  return criterion.form === 'contains' || criterion.form === 'not_contains' || criterion.form === 'matches';
}

/** Whether deciding these criteria needs the item's workspace (the `checkAcceptance` activity). */
export function needsWorkspace(criteria: readonly Criterion[]): boolean {
  return criteria.some((criterion) => !isAnswerCriterion(criterion));
}

function answerCheck(criterion: AnswerCriterion, answer: string): AcceptanceCheck {
  const check = (passed: boolean, detail: string): AcceptanceCheck =>
    passed ? { criterion: criterion.written, passed } : { criterion: criterion.written, passed, detail };
  switch (criterion.form) {
    case 'contains':
      return check(answer.includes(criterion.text), `the answer does not contain ${shown(criterion.text)}`);
    case 'not_contains': {
      const at = answer.indexOf(criterion.text);
      return check(at === -1, `the answer contains ${shown(criterion.text)} (at character ${at + 1})`);
    }
    case 'matches': {
      const pattern = compileUserPattern(criterion.pattern);
      if ('problem' in pattern) {
        return check(false, `/${criterion.pattern}/ cannot be checked: ${pattern.problem}`);
      }
      return check(
        pattern.test(answer),
        `the answer (${answer.length} characters) has no match for /${criterion.pattern}/`,
      );
    }
  }
}

/**
 * The verdict on the final answer, deterministic (usable in a workflow). A file criterion fails here, with a
 * detail saying so: only the `checkAcceptance` activity can look into the workspace (see `needsWorkspace`).
 */
export function answerVerdict(criteria: readonly Criterion[], answer: string): AcceptanceVerdict {
  const checks = criteria.map((criterion): AcceptanceCheck =>
    isAnswerCriterion(criterion)
      ? answerCheck(criterion, answer)
      : {
          criterion: criterion.written,
          passed: false,
          detail: "needs the item's workspace: the checkAcceptance activity decides it",
        },
  );
  return { passed: checks.every((check) => check.passed), checks };
}

/** Where an item is, and how a field of it is named in a problem line. */
interface ItemPlace {
  /** `items[3]`, or `batch.jsonl:4`. */
  item: string;
  /** `items[3].key`, or `batch.jsonl:4: key`. */
  field: (name: string) => string;
}

const inList = (index: number): ItemPlace => ({
  item: `items[${index}]`,
  field: (name) => `items[${index}].${name}`,
});

const onLine = (source: string, line: number): ItemPlace => ({
  item: `${source}:${line}`,
  field: (name) => `${source}:${line}: ${name}`,
});

/** Keys that name an object's own machinery: code that indexes items by key must never meet them. */
const RESERVED_KEYS = ['__proto__', 'constructor', 'prototype'] as const;

function keyProblem(key: unknown): string | undefined {
  const accepted = `1–${MAX_ITEM_KEY_CHARS} ${KEY_CHARACTERS}`;
  if (key === undefined) return `is missing (${accepted})`;
  if (typeof key !== 'string') return `${shown(key)} is not text (${accepted})`;
  if (key === '') return '"" is empty (write some text)';
  if (key.length > MAX_ITEM_KEY_CHARS) {
    return `${shown(key)} is ${key.length} characters long (at most ${MAX_ITEM_KEY_CHARS}: the key becomes part of the item's workflow id)`;
  }
  // A literal here, not a module constant: a global regex writes its lastIndex, and the worker freezes
  // what shared workflow modules hold.
  const others = [...new Set(key.match(/[^A-Za-z0-9._-]/g) ?? [])];
  if (others.length > 0) {
    return `${shown(key)} has characters other than ${KEY_CHARACTERS} (${others.map((c) => JSON.stringify(c)).join(', ')}; the key becomes part of the item's workflow id)`;
  }
  if (key === '.' || key === '..') return `${shown(key)} is not a key (write a name, e.g. item-1)`;
  if ((RESERVED_KEYS as readonly string[]).includes(key))
    return `${shown(key)} is a name JavaScript objects reserve (${RESERVED_KEYS.join(', ')}): write another key, e.g. item-1`;
  return undefined;
}

function promptProblem(prompt: unknown): string | undefined {
  if (prompt === undefined) return "is missing (text: the task for the item's subagent)";
  if (typeof prompt !== 'string') return `${shown(prompt)} is not text (the task for the item's subagent)`;
  if (prompt.trim() === '') return `${shown(prompt)} is empty (write some text)`;
  return undefined;
}

function criteriaProblems(criteria: unknown, place: ItemPlace, check: PatternCheck): string[] {
  if (criteria === undefined) return [];
  const where = place.field('acceptance_criteria');
  if (!Array.isArray(criteria)) {
    return [`${where}: ${shown(criteria)} is not a list of criteria (e.g. ["contains: done"])`];
  }
  const problems: string[] = [];
  if (criteria.length > MAX_ACCEPTANCE_CRITERIA) {
    problems.push(
      `${where}: a list of ${criteria.length} criteria is too long (at most ${MAX_ACCEPTANCE_CRITERIA})`,
    );
  }
  criteria.forEach((criterion: unknown, index) => {
    const at = `${where}[${index}]`;
    if (typeof criterion !== 'string') {
      problems.push(`${at}: ${shown(criterion)} is not text (a criterion, e.g. "contains: done")`);
      return;
    }
    const parsed = parseCheckedCriterion(criterion, check);
    if ('problem' in parsed) problems.push(`${at}: ${parsed.problem}`);
  });
  return problems;
}

/** Every problem of one item; none when it is a valid BatchItem. */
function itemProblems(item: unknown, place: ItemPlace, check: PatternCheck = 're2'): string[] {
  if (!isMapping(item)) {
    return [
      `${place.item}: ${shown(item)} is not a mapping (an item: key, prompt and optionally acceptance_criteria)`,
    ];
  }
  const problems: string[] = [];
  const key = keyProblem(item.key);
  if (key !== undefined) problems.push(`${place.field('key')}: ${key}`);
  const prompt = promptProblem(item.prompt);
  if (prompt !== undefined) problems.push(`${place.field('prompt')}: ${prompt}`);
  problems.push(...criteriaProblems(item.acceptance_criteria, place, check));
  for (const name of Object.keys(item)) {
    if (!(BATCH_ITEM_KEYS as readonly string[]).includes(name)) {
      problems.push(`${place.field(name)}: unknown key (accepted: ${BATCH_ITEM_KEYS.join(', ')})`);
    }
  }
  return problems;
}

/** The keys given more than once, in order of first appearance, each with where it was given. */
function duplicateKeys(items: readonly unknown[]): { key: string; at: number[] }[] {
  const seen = new Map<string, number[]>();
  items.forEach((item, index) => {
    if (!isMapping(item) || typeof item.key !== 'string' || item.key === '') return;
    const at = seen.get(item.key);
    if (at === undefined) seen.set(item.key, [index]);
    else at.push(index);
  });
  return [...seen].filter(([, at]) => at.length > 1).map(([key, at]) => ({ key, at }));
}

const UNIQUE = '(each key must be unique)';

/**
 * Every problem of a batch's items, one a line: `items[3].key: "" is empty (write some text)`. None when
 * `items` is a non-empty list of valid BatchItems with unique keys.
 */
export function batchItemsProblems(items: unknown, check: PatternCheck = 're2'): string[] {
  if (items === undefined)
    return ['items: is missing (a list of batch items: key, prompt, acceptance_criteria)'];
  if (!Array.isArray(items)) return [`items: ${shown(items)} is not a list of batch items`];
  if (items.length === 0)
    return ['items: is an empty list (give at least one item, e.g. {"key": "a", "prompt": "…"})'];
  const problems = items.flatMap((item: unknown, index) => itemProblems(item, inList(index), check));
  const duplicates = duplicateKeys(items);
  if (duplicates.length > 0) {
    const named = duplicates.map(({ key, at }) => `${JSON.stringify(key)} ×${at.length}`).join(', ');
    problems.push(`items: duplicate keys: ${named} ${UNIQUE}`);
  }
  return problems;
}

/**
 * The items of a JSON Lines text: one JSON object a line, blank lines skipped. `items` are those valid on
 * their own, in order; use them only when `problems` is empty. Each problem names `source:line`. A line is
 * read strictly (contracts/strict-json.ts): a key given twice is refused. Lines that are not JSON at all are
 * counted in one problem when there are several (a binary file is one mistake, not one per line).
 */
export function parseBatchItemsJsonl(
  text: string,
  source: string,
): { items: BatchItem[]; problems: string[] } {
  const items: BatchItem[] = [];
  const problems: string[] = [];
  const parsed: { value: unknown; line: number }[] = [];
  const notJson: { line: number; reason: string }[] = [];
  // Where the first line that is not JSON is told: in line order with the other problems.
  let notJsonAt = 0;
  const lines = text.replace(/^\uFEFF/, '').split('\n');
  lines.forEach((raw, index) => {
    const line = index + 1;
    const content = raw.trim();
    if (content === '') return;
    const read = parseStrictJson(content);
    if ('notJson' in read) {
      if (notJson.length === 0) notJsonAt = problems.length;
      notJson.push({ line, reason: read.notJson });
      return;
    }
    if ('duplicateKey' in read) {
      problems.push(`${source}:${line}: ${read.duplicateKey}`);
      return;
    }
    const { value } = read;
    parsed.push({ value, line });
    const found = itemProblems(value, onLine(source, line));
    if (found.length === 0) items.push(value as BatchItem);
    else problems.push(...found);
  });
  if (notJson.length === 1) {
    problems.splice(notJsonAt, 0, `${source}:${notJson[0].line}: is not valid JSON (${notJson[0].reason})`);
  } else if (notJson.length > 1) {
    const [first] = notJson;
    problems.splice(
      notJsonAt,
      0,
      `${source}: ${notJson.length} lines are not JSON (first: line ${first.line}: ${first.reason}); ` +
        'an items file is JSON Lines, one JSON object a line',
    );
  }
  if (parsed.length === 0 && problems.length === 0) {
    problems.push(`${source}: has no items (write one JSON object a line, e.g. {"key": "a", "prompt": "…"})`);
  }
  const duplicates = duplicateKeys(parsed.map(({ value }) => value));
  if (duplicates.length > 0) {
    const named = duplicates
      .map(
        ({ key, at }) =>
          `${JSON.stringify(key)} ×${at.length} (lines ${at.map((i) => parsed[i].line).join(', ')})`,
      )
      .join(', ');
    problems.push(`${source}: duplicate keys: ${named} ${UNIQUE}`);
  }
  return { items, problems };
}
