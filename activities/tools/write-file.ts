import type { WriteFileArgs } from '../../contracts/tool-specs';
import { countLines, writeTextFile } from './files';
import { succeeded, type ToolContext, type ToolOutput } from './tool-context';
import { exists, resolveInWorkspace } from './workspace';

/** The `write_file` tool: creates, overwrites or appends, and says which it did. */
export async function writeFile(args: WriteFileArgs, ctx: ToolContext): Promise<ToolOutput> {
  const target = await resolveInWorkspace(ctx, args.path);
  const existed = await exists(target.real);
  const append = args.append ?? false;
  await writeTextFile(target, args.content, append);
  const size = `${args.content.length} chars, ${countLines(args.content)} lines`;
  if (append && existed) return succeeded(`Appended ${size} to "${args.path}".`);
  return succeeded(`${existed ? 'Overwrote' : 'Created'} "${args.path}" (${size}).`);
}
