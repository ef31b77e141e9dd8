/**
 * Where the tool activity applies `tool_output` and `read_before_write` (issue 46), on the host that holds the
 * run's workspace: a result over its threshold is saved in the workspace (so it is saved with it, and history
 * holds only the synopsis), and a write to an existing file waits for a read of its current version.
 */
import { createHash } from 'node:crypto';
import type { ToolCallInput } from '../../contracts/tools';
import {
  externalizeThreshold,
  gatedPath,
  overBudget,
  READ_MARKING_TOOL,
  readBeforeWriteRefusal,
  readMarkKey,
  type ToolOutputSettings,
} from '../../contracts/tool-output';
import { readTextFile, writeTextFile } from './files';
import type { ToolContext, ToolOutput } from './tool-context';
import { fallbackTruncation, renderToolOutputPreview } from './tool-output-synopsis';
import { resolveForWriting, resolveInWorkspace } from './workspace';

/** File extensions by tool (DeerFlow's `_EXT_MAP`); any other tool's output is `.txt`. */
const EXTENSIONS: Readonly<Record<string, string>> = { bash: 'log', bash_tool: 'log', web_fetch: 'log' };

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * The workspace path an output is saved under: named by the tool and the output's own hash, so a retried call
 * writes the same file again rather than a second one.
 */
export function externalizedPath(settings: ToolOutputSettings, tool: string, content: string): string {
  const safe = tool.replace(/[/\\]/g, '_').replace(/\.\./g, '') || 'unknown';
  return `${settings.storage_subdir}/${safe}-${sha256(content).slice(0, 12)}.${EXTENSIONS[tool] ?? 'txt'}`;
}

/**
 * The result as the model gets it under `tool_output`: unchanged when within its budget or exempt; else saved in
 * the workspace and replaced by DeerFlow's synopsis; where it cannot be saved, cut to `fallback_max_chars`.
 */
export async function budgetedOutput(
  output: ToolOutput,
  tool: string,
  settings: ToolOutputSettings | undefined,
  ctx: ToolContext,
): Promise<ToolOutput> {
  const { content } = output;
  if (settings === undefined || !overBudget(settings, tool, content.length)) return output;
  const threshold = externalizeThreshold(settings, tool);
  if (threshold > 0 && content.length > threshold) {
    const savedAt = externalizedPath(settings, tool, content);
    try {
      await writeTextFile(resolveForWriting(ctx, tool, savedAt), content, false);
      const preview = renderToolOutputPreview(
        content,
        tool,
        savedAt,
        settings.preview_head_chars,
        settings.preview_tail_chars,
      );
      return { ...output, content: preview };
    } catch {
      // Not saved (a full disk, a file in the way): the fallback cut below, as DeerFlow does.
    }
  }
  const cut = fallbackTruncation(
    content,
    tool,
    settings.fallback_max_chars,
    settings.fallback_head_chars,
    settings.fallback_tail_chars,
  );
  return { ...output, content: cut };
}

/** The hash of the file's current content; undefined when it cannot be read (missing, binary, outside). */
async function currentHash(ctx: ToolContext, tool: string, requested: string): Promise<string | undefined> {
  try {
    return sha256(await readTextFile(resolveInWorkspace(ctx, tool, requested)));
  } catch {
    return undefined;
  }
}

/**
 * One gate check and the write it lets through at a time per file (DeerFlow's per-path lock): two writes of one
 * response cannot both pass on the same read. Per process: a run's file tools all run on its workspace's host.
 */
export class PathLocks {
  private readonly tails = new Map<string, Promise<unknown>>();

  async hold<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve();
    const mine = before.then(work, work);
    const tail = mine.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await mine;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

/**
 * A call under `read_before_write` (its input's `read_gate`): a `read_file` that succeeds is marked with the hash
 * of the file's whole current content; a write to a file that exists is refused unless that hash is the mark the
 * agent holds. A file that cannot be inspected lets the tool run and say what is wrong (DeerFlow fails open).
 */
export async function withReadGate(
  input: ToolCallInput,
  ctx: ToolContext,
  locks: PathLocks,
  runTool: () => Promise<ToolOutput>,
): Promise<ToolOutput> {
  const { read_gate: gate, call } = input;
  const requested = gate && gatedPath(call.args);
  if (gate === undefined || requested === undefined) return runTool();
  return locks.hold(readMarkKey(input.workspace, requested), async () => {
    if (call.name === READ_MARKING_TOOL) {
      const output = await runTool();
      if (output.is_error) return output;
      const hash = await currentHash(ctx, call.name, requested);
      return hash === undefined ? output : { ...output, read_mark: hash };
    }
    const hash = await currentHash(ctx, call.name, requested);
    if (hash !== undefined && hash !== gate.mark) {
      return { content: readBeforeWriteRefusal(call.name, requested), is_error: true };
    }
    return runTool();
  });
}
