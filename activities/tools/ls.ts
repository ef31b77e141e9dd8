import * as path from 'node:path';
import type { LsArgs } from '../../contracts/tool-specs';
import { listFolder } from './files';
import { capOutput } from './output';
import { entriesAboveMounts } from './skill-mounts';
import { succeeded, ToolError, type ToolContext, type ToolOutput } from './tool-context';
import { resolveInWorkspace, type WorkspacePath } from './workspace';

function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The `ls` tool: one entry a line, sorted; `/` marks directories, `@` symbolic links. */
export async function listDirectory(args: LsArgs, ctx: ToolContext): Promise<ToolOutput> {
  const requested = args.path ?? '.';
  let target: WorkspacePath;
  try {
    target = resolveInWorkspace(ctx, 'ls', requested);
  } catch (err) {
    // A folder above the skill mounts (`/mnt/skills`, `/mnt`) lists the way down to them.
    const above = entriesAboveMounts(ctx.mounts ?? [], path.resolve(ctx.workspace, requested));
    if (!(err instanceof ToolError) || above === undefined) throw err;
    return succeeded(above.map((name) => `${name}/`).join('\n'));
  }
  const entries = await listFolder(target);
  if (entries.length === 0) return succeeded('(empty directory)');
  const lines = entries
    .sort((a, b) => byCodePoint(a.name, b.name))
    .map((entry) => entry.name + (entry.isDirectory() ? '/' : entry.isSymbolicLink() ? '@' : ''));
  return succeeded(capOutput(lines.join('\n'), ctx.sandbox.output_cap_chars));
}
