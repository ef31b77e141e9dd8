import type { StrReplaceArgs } from '../../contracts/tool-specs';
import { readTextFile, writeTextFile } from './files';
import { succeeded, ToolError, type ToolContext, type ToolOutput } from './tool-context';
import { resolveForWriting } from './workspace';

const LINES_LISTED = 10;

function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length))
    found.push(at);
  return found;
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let at = text.indexOf('\n'); at !== -1 && at < offset; at = text.indexOf('\n', at + 1)) line += 1;
  return line;
}

function describeLines(text: string, offsets: number[]): string {
  const lines = offsets.slice(0, LINES_LISTED).map((offset) => lineOf(text, offset));
  const more = offsets.length > LINES_LISTED ? `, and ${offsets.length - LINES_LISTED} more` : '';
  return `${lines.length === 1 ? 'line' : 'lines'} ${lines.join(', ')}${more}`;
}

/** The `str_replace` tool: an exact, unambiguous text edit. */
export async function strReplace(args: StrReplaceArgs, ctx: ToolContext): Promise<ToolOutput> {
  const target = resolveForWriting(ctx, 'str_replace', args.path);
  const text = await readTextFile(target);
  const found = occurrences(text, args.old_str);
  if (found.length === 0) {
    throw new ToolError(
      `old_str was not found in "${args.path}"; it must match the file exactly, whitespace and indentation ` +
        'included: read the lines with read_file and copy them',
    );
  }
  if (found.length > 1 && !args.replace_all) {
    throw new ToolError(
      `old_str occurs ${found.length} times in "${args.path}" (${describeLines(text, found)}); include more ` +
        'surrounding lines to make it unique, or set replace_all: true to replace every occurrence',
    );
  }
  // split/join rather than String.replace, which would read `$&` and friends in new_str as patterns.
  const edited = text.split(args.old_str).join(args.new_str);
  await writeTextFile(target, edited, false);
  const count = found.length === 1 ? '1 occurrence' : `${found.length} occurrences`;
  return succeeded(`Replaced ${count} in "${args.path}" (${describeLines(text, found)}).`);
}
