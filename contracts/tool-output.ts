/**
 * Large tool outputs and the read-before-write gate (issue 46), as a run carries them: DeerFlow's `tool_output:`
 * (a result over its threshold is saved in the workspace and the model gets a synopsis of it) and
 * `read_before_write:` (an existing file is changed only after this agent read its current version).
 *
 * Pure: the wire shapes, DeerFlow's defaults, which result is externalized, and the key a read is marked under.
 * No Node APIs (the workflow bundle imports this file).
 */
import { z } from 'zod';

/** DeerFlow's `TOOL_RESULTS_DIRNAME`: the workspace folder externalized results are saved in. */
export const DEFAULT_TOOL_RESULTS_DIR = '.tool-results';

/** DeerFlow's `ToolOutputConfig` defaults, for the keys a `tool_output:` section leaves out. */
export const DEFAULT_TOOL_OUTPUT = {
  externalize_min_chars: 12_000,
  preview_head_chars: 2_000,
  preview_tail_chars: 1_000,
  fallback_max_chars: 30_000,
  fallback_head_chars: 8_000,
  fallback_tail_chars: 3_000,
  storage_subdir: DEFAULT_TOOL_RESULTS_DIR,
  exempt_tools: ['read_file', 'read_file_tool'],
} as const;

/** One folder name: no separator, not `.` or `..` (DeerFlow's rule for `storage_subdir`). */
export function isSingleFolderName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !/[/\\\0]/.test(name);
}

/**
 * `tool_output` as a run's scope carries it (resolved from the config; absent when the section is absent or
 * `enabled: false`). Built anew on each call, as every input schema is.
 */
export function toolOutputSchema() {
  const count = z.number().int().min(0);
  return z.strictObject({
    externalize_min_chars: count,
    preview_head_chars: count,
    preview_tail_chars: count,
    fallback_max_chars: count,
    fallback_head_chars: count,
    fallback_tail_chars: count,
    storage_subdir: z.string().refine(isSingleFolderName, { error: 'is not a single folder name' }),
    exempt_tools: z.array(z.string()),
    /** Per-tool `externalize_min_chars` (0: never externalized). */
    tool_overrides: z.record(z.string(), count).optional(),
  });
}
export type ToolOutputSettings = z.output<ReturnType<typeof toolOutputSchema>>;

/** The threshold a tool's result is externalized above; 0: never. */
export function externalizeThreshold(settings: ToolOutputSettings, tool: string): number {
  const override = settings.tool_overrides?.[tool];
  return override ?? settings.externalize_min_chars;
}

/**
 * Whether a result of `tool` may be changed by `tool_output` (externalized, or cut where it cannot be saved):
 * what the tool activity must save the workspace after, even for a tool that changes nothing else.
 */
export function mayBudget(settings: ToolOutputSettings | undefined, tool: string): boolean {
  if (settings === undefined || settings.exempt_tools.includes(tool)) return false;
  return externalizeThreshold(settings, tool) > 0 || settings.fallback_max_chars > 0;
}

/** Whether a result of `length` characters from `tool` is over its budget (DeerFlow's pre-check). */
export function overBudget(settings: ToolOutputSettings | undefined, tool: string, length: number): boolean {
  if (!mayBudget(settings, tool) || settings === undefined) return false;
  const threshold = externalizeThreshold(settings, tool);
  return (
    (threshold > 0 && length > threshold) ||
    (settings.fallback_max_chars > 0 && length > settings.fallback_max_chars)
  );
}

/** The tools the read-before-write gate holds (DeerFlow's `_GATED_WRITE_TOOLS`), and the one that marks reads. */
export const GATED_WRITE_TOOLS: readonly string[] = ['write_file', 'str_replace'];
export const READ_MARKING_TOOL = 'read_file';

/**
 * What a gated tool call carries to its activity: for `read_file`, that the read is to be marked; for a write,
 * the hash of the version this agent last read (absent: none read).
 */
export interface ReadGate {
  mark?: string;
}

/**
 * The key a read of `requested` is marked under: the absolute path in the workspace, `.` and `..` resolved
 * (DeerFlow's `posixpath.normpath`), so `notes.md`, `./notes.md` and `<workspace>/notes.md` are one file.
 */
export function readMarkKey(workspace: string, requested: string): string {
  const joined = requested.startsWith('/') ? requested : `${workspace}/${requested}`;
  const names: string[] = [];
  for (const name of joined.split('/')) {
    if (name === '' || name === '.') continue;
    if (name === '..') names.pop();
    else names.push(name);
  }
  return `/${names.join('/')}`;
}

/** The `path` argument of a gated call, when its arguments are JSON with one; else nothing to gate. */
export function gatedPath(args: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(args);
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { path } = parsed as { path?: unknown };
    return typeof path === 'string' && path !== '' ? path : undefined;
  } catch {
    return undefined;
  }
}

/** DeerFlow's refusal (`_BLOCK_MESSAGE`), word for word. */
export function readBeforeWriteRefusal(tool: string, path: string): string {
  return (
    `Error: ${tool} blocked — ${path} already exists and you have not read its current version. ` +
    'Any write invalidates earlier reads, so re-read before every modification. ' +
    'Call read_file on it (a ranged read of the relevant section is enough, e.g. the last ~30 lines ' +
    'before an append), check what is already there, then retry.'
  );
}
