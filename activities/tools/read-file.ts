import type { ReadFileArgs } from '../../contracts/tool-specs';
import { readTextFile } from './files';
import { capOutput } from './output';
import { succeeded, ToolError, type ToolContext, type ToolOutput } from './tool-context';
import { resolveInWorkspace } from './workspace';

/** The `read_file` tool: the lines asked for, numbered like `cat -n`. */
export async function readFile(args: ReadFileArgs, ctx: ToolContext): Promise<ToolOutput> {
  const target = resolveInWorkspace(ctx, 'read_file', args.path);
  const text = await readTextFile(target);
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  if (text === '') return succeeded('(empty file)');

  const start = args.start_line ?? 1;
  if (start > lines.length) {
    throw new ToolError(
      `start_line ${start} is past the end of "${args.path}", which has ${lines.length} lines`,
    );
  }
  if (args.end_line !== undefined && args.end_line < start) {
    throw new ToolError(`end_line ${args.end_line} is before start_line ${start}`);
  }
  const end = Math.min(args.end_line ?? lines.length, lines.length);
  const numbered = lines
    .slice(start - 1, end)
    .map((line, i) => `${String(start + i).padStart(6)}\t${line}`)
    .join('\n');
  const whole = start === 1 && end === lines.length;
  const body = whole ? numbered : `${numbered}\n(lines ${start}–${end} of ${lines.length})`;
  return succeeded(capOutput(body, ctx.sandbox.output_cap_chars));
}
