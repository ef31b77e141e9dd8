import { readdir, stat } from 'node:fs/promises';
import type { LsArgs } from '../../contracts/tool-specs';
import { capOutput } from './output';
import { succeeded, ToolError, type ToolContext, type ToolOutput } from './tool-context';
import { fileError, resolveInWorkspace } from './workspace';

function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The `ls` tool: one entry a line, sorted; `/` marks directories, `@` symbolic links. */
export async function listDirectory(args: LsArgs, ctx: ToolContext): Promise<ToolOutput> {
  const target = await resolveInWorkspace(ctx, args.path ?? '.');
  try {
    if (!(await stat(target.real)).isDirectory()) {
      throw new ToolError(`"${target.requested}" is a file, not a directory; read it with read_file`);
    }
    const entries = await readdir(target.real, { withFileTypes: true });
    if (entries.length === 0) return succeeded('(empty directory)');
    const lines = entries
      .sort((a, b) => byCodePoint(a.name, b.name))
      .map((entry) => entry.name + (entry.isDirectory() ? '/' : entry.isSymbolicLink() ? '@' : ''));
    return succeeded(capOutput(lines.join('\n'), ctx.sandbox.output_cap_chars));
  } catch (err) {
    throw fileError(err, target);
  }
}
