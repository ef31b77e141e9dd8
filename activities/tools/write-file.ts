import type { WriteFileArgs } from '../../contracts/tool-specs';
import { countLines, writeTextFile } from './files';
import { succeeded, type ToolContext, type ToolOutput } from './tool-context';
import { resolveForWriting } from './workspace';

/** The `write_file` tool: creates, overwrites or appends, and says which it did. */
export async function writeFile(args: WriteFileArgs, ctx: ToolContext): Promise<ToolOutput> {
  const target = resolveForWriting(ctx, 'write_file', args.path);
  const append = args.append ?? false;
  const { created } = await writeTextFile(target, args.content, append);
  const size = `${args.content.length} chars, ${countLines(args.content)} lines`;
  if (append && !created) return succeeded(`Appended ${size} to "${args.path}".`);
  return succeeded(`${created ? 'Created' : 'Overwrote'} "${args.path}" (${size}).`);
}
