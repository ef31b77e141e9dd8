import type { LsArgs } from '../../contracts/tool-specs';
import { listFolder } from './files';
import { capOutput } from './output';
import { succeeded, type ToolContext, type ToolOutput } from './tool-context';
import { resolveInWorkspace } from './workspace';

function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The `ls` tool: one entry a line, sorted; `/` marks directories, `@` symbolic links. */
export async function listDirectory(args: LsArgs, ctx: ToolContext): Promise<ToolOutput> {
  const target = resolveInWorkspace(ctx, 'ls', args.path ?? '.');
  const entries = await listFolder(ctx, target);
  if (entries.length === 0) return succeeded('(empty directory)');
  const lines = entries
    .sort((a, b) => byCodePoint(a.name, b.name))
    .map((entry) => entry.name + (entry.isDirectory() ? '/' : entry.isSymbolicLink() ? '@' : ''));
  return succeeded(capOutput(lines.join('\n'), ctx.sandbox.output_cap_chars));
}
