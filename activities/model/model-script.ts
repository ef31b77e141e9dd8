/**
 * The script file of the `scripted` model provider: planned answers, turn by turn, per agent. YAML or JSON:
 *
 *   scripts:
 *     - agent: lead                  # optional: matches ModelCallInput.agent_name
 *       prompt_contains: "report"    # optional: matches the first user message
 *       repeat_last: false           # when the turns run out: repeat the last turn, or answer a fixed final text
 *       turns:
 *         - content: "text"
 *           tool_calls: [{ name: read_file, args: { path: a.txt }, id: optional }]  # args may be a raw string
 *           usage: { input_tokens: 10, output_tokens: 5 }   # total = sum when omitted; no usage = absent
 *           finish_reason: length                          # default tool_calls / stop
 *           delay_ms: 0
 *           fail_attempts: [{ status: 429, message: "rate limited" }]  # attempt k fails with entry k
 *           error: { status: 400, message: "bad request" }            # this turn fails with a provider error
 *           if_missing: { text: "ledger", turn: { content: "…" } }    # answered instead when no message sent contains text
 *
 * A status in `fail_attempts` or `error` is classified like a real HTTP status; no status means a network error.
 *
 * A turn's `content` may quote what tools returned, so that an answer shows what really happened:
 * `{{tool_result}}` is the content of the last tool result in the transcript sent (with several calls in one
 * turn, the last call's), `{{tool_result:ID}}` that of the result of tool call ID (an `id` given in the script).
 * The text is put in exactly as the tool returned it (a bash result ends with its `[exit code: N]` line, a
 * delegation's with `Task Succeeded. Result: …`). A quoted result missing from the transcript fails the call.
 */
import { stat, readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { ChatMessage, ToolMessage } from '../../contracts/messages';
import { issueProblems } from '../../contracts/problems';
import { ownEntry } from '../../contracts/records';

const scriptedToolCallSchema = z.strictObject({
  name: z.string().min(1),
  args: z.union([z.record(z.string(), z.unknown()), z.string()]).default({}),
  id: z.string().min(1).optional(),
});

const scriptedUsageSchema = z.strictObject({
  input_tokens: z.int().nonnegative(),
  output_tokens: z.int().nonnegative(),
  total_tokens: z.int().nonnegative().optional(),
});

const scriptedErrorSchema = z.strictObject({
  status: z.int().min(100).max(599).optional(),
  message: z.string().min(1),
});

const scriptedTurnFields = {
  content: z.string().default(''),
  tool_calls: z.array(scriptedToolCallSchema).default([]),
  usage: scriptedUsageSchema.optional(),
  finish_reason: z.string().min(1).optional(),
  delay_ms: z.int().nonnegative().default(0),
  fail_attempts: z.array(scriptedErrorSchema).default([]),
  error: scriptedErrorSchema.optional(),
};

const scriptedTurnSchema = z.strictObject({
  ...scriptedTurnFields,
  // This turn as planned only if some message sent contains `text`; otherwise `turn` (a model's reaction to
  // missing context, e.g. re-delegating work whose record it no longer sees).
  if_missing: z
    .strictObject({ text: z.string().min(1), turn: z.strictObject(scriptedTurnFields) })
    .optional(),
});

const scriptSchema = z.strictObject({
  agent: z.string().min(1).optional(),
  prompt_contains: z.string().min(1).optional(),
  repeat_last: z.boolean().default(false),
  turns: z.array(scriptedTurnSchema).min(1),
});

export const modelScriptFileSchema = z.strictObject({
  scripts: z.array(scriptSchema).min(1),
});

/** A script file as written (defaults not yet applied): what tests build and serialise. */
export type ModelScriptFileInput = z.input<typeof modelScriptFileSchema>;
export type ModelScriptFile = z.output<typeof modelScriptFileSchema>;
export type ModelScript = ModelScriptFile['scripts'][number];
export type ScriptedTurn = ModelScript['turns'][number];

/** A script file that cannot be read or does not validate; the message names the file and the key. */
export class ModelScriptError extends Error {
  override readonly name = 'ModelScriptError';
}

// The keys an object may have, by the name of the list or key holding it (for "unknown key" messages).
const ACCEPTED_KEYS: Record<string, string[]> = {
  '': Object.keys(modelScriptFileSchema.shape),
  scripts: Object.keys(scriptSchema.shape),
  turns: Object.keys(scriptedTurnSchema.shape),
  if_missing: ['text', 'turn'],
  turn: Object.keys(scriptedTurnFields),
  tool_calls: Object.keys(scriptedToolCallSchema.shape),
  usage: Object.keys(scriptedUsageSchema.shape),
  fail_attempts: Object.keys(scriptedErrorSchema.shape),
  error: Object.keys(scriptedErrorSchema.shape),
};

/** Script files read and validated, each reused until it changes (path + mtime + size). */
export class ModelScripts {
  readonly #parsed = new Map<string, { mtimeMs: number; size: number; script: ModelScriptFile }>();

  /** Reads and validates a script file, or returns it as parsed before when it has not changed since. */
  async load(file: string): Promise<ModelScriptFile> {
    const path = resolve(file);
    let stats;
    let text;
    try {
      stats = await stat(path);
      const cached = this.#parsed.get(path);
      if (cached && cached.mtimeMs === stats.mtimeMs && cached.size === stats.size) return cached.script;
      text = await readFile(path, 'utf8');
    } catch (err) {
      throw new ModelScriptError(
        `model script ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? err})`,
      );
    }
    const script = parseModelScript(file, text);
    this.#parsed.set(path, { mtimeMs: stats.mtimeMs, size: stats.size, script });
    return script;
  }
}

function parseModelScript(file: string, text: string): ModelScriptFile {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new ModelScriptError(`model script ${file}: not valid YAML or JSON: ${(err as Error).message}`);
  }
  const parsed = modelScriptFileSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ModelScriptError(`model script ${file}: ${parsed.error.issues.map(describeIssue).join('; ')}`);
  }
  return parsed.data;
}

/** A problem of the script file, worded as the config's are (contracts/problems.ts). */
function describeIssue(issue: z.core.$ZodIssue): string {
  return issueProblems(issue, {
    whole: 'the script',
    acceptedKeys: (unknown) => {
      const holder = [...unknown.path].reverse().find((segment) => typeof segment === 'string') ?? '';
      return ownEntry(ACCEPTED_KEYS, String(holder));
    },
  }).join('; ');
}

const TOOL_RESULT = /\{\{tool_result(?::([^{}]+))?\}\}/g;

/** `content` with every `{{tool_result}}` / `{{tool_result:ID}}` replaced by what that tool returned. */
export function quoteToolResults(content: string, messages: readonly ChatMessage[]): string {
  const results = messages.filter((m): m is ToolMessage => m.role === 'tool').reverse();
  return content.replace(TOOL_RESULT, (placeholder: string, id: string | undefined) => {
    const found = id === undefined ? results[0] : results.find((m) => m.tool_call_id === id);
    if (found === undefined) {
      const ids = results.map((m) => m.tool_call_id).reverse();
      throw new ModelScriptError(
        `${placeholder}: no such tool result in the transcript ` +
          `(${ids.length === 0 ? 'it has none' : `tool call ids: ${ids.join(', ')}`})`,
      );
    }
    return found.content;
  });
}
