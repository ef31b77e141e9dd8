/**
 * The built-in tools as the model sees them, and the zod schemas their arguments are validated with. The
 * JSON schema shown to the model is generated from the zod schema, so what the model is told and what the
 * tool activity accepts cannot drift apart. The specs are plain data. The model activity builds them from the
 * tool names a workflow sends (ModelCallInput.builtin_tools): no workflow builds a schema, which would cost
 * each workflow its own (a workflow evaluates its modules in a sandbox of its own).
 */
import { z } from 'zod';
import type { ToolSpec } from './messages';
import { IDEMPOTENT_TOOLS, isBuiltinToolName, type BuiltinToolName } from './tools';
import { TOOL_SEARCH_MAX_RESULTS, TOOL_SEARCH_TOOL_NAME } from './tool-search';
import {
  globArgsSchema,
  grepArgsSchema,
  imageSearchArgsSchema,
  SEARCH_TOOL_DESCRIPTIONS,
  webFetchArgsSchema,
  webSearchArgsSchema,
} from './search-tool-specs';

export { isBuiltinToolName, isIdempotentCall } from './tools';
export {
  globArgsSchema,
  grepArgsSchema,
  imageSearchArgsSchema,
  webFetchArgsSchema,
  webSearchArgsSchema,
  type GlobArgs,
  type GrepArgs,
  type ImageSearchArgs,
  type WebFetchArgs,
  type WebSearchArgs,
} from './search-tool-specs';

export const bashArgsSchema = z.strictObject({
  command: z.string().min(1).describe('The bash command line to run, e.g. "npm test 2>&1 | tail -n 40".'),
  timeout_seconds: z
    .number()
    .positive()
    .optional()
    .describe('Time limit in seconds; defaults to, and may not exceed, the configured limit.'),
});

export const lsArgsSchema = z.strictObject({
  path: z
    .string()
    .min(1)
    .optional()
    .describe('Directory to list, relative to the workspace (default ".", the workspace itself).'),
});

export const readFileArgsSchema = z.strictObject({
  path: z.string().min(1).describe('File to read, relative to the workspace.'),
  start_line: z.int().min(1).optional().describe('First line to show (1-based, default 1).'),
  end_line: z.int().min(1).optional().describe('Last line to show, inclusive (default: the last line).'),
});

export const writeFileArgsSchema = z.strictObject({
  path: z.string().min(1).describe('File to write, relative to the workspace; missing folders are created.'),
  content: z.string().describe('The text to write.'),
  append: z
    .boolean()
    .optional()
    .describe('Add the content to the end of the file instead of replacing it (default false).'),
});

export const strReplaceArgsSchema = z.strictObject({
  path: z.string().min(1).describe('File to edit, relative to the workspace.'),
  old_str: z
    .string()
    .min(1)
    .describe('The exact text to replace, whitespace and indentation included; must occur exactly once.'),
  new_str: z.string().describe('The text to put in its place (may be empty to delete old_str).'),
  replace_all: z
    .boolean()
    .optional()
    .describe('Replace every occurrence of old_str instead of requiring exactly one (default false).'),
});

export type BashArgs = z.infer<typeof bashArgsSchema>;
export type LsArgs = z.infer<typeof lsArgsSchema>;
export type ReadFileArgs = z.infer<typeof readFileArgsSchema>;
export type WriteFileArgs = z.infer<typeof writeFileArgsSchema>;
export type StrReplaceArgs = z.infer<typeof strReplaceArgsSchema>;

export interface BuiltinToolSpec extends ToolSpec {
  name: BuiltinToolName;
  /** Running the same call twice leaves the same state: safe to retry after a crash without asking. */
  idempotent: boolean;
}

/** The JSON schema the model is shown, without the `$schema` header and the meaningless safe-integer maximum. */
function parametersOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...parameters } = z.toJSONSchema(schema, {
    io: 'input',
    override: ({ jsonSchema }) => {
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
    },
  });
  return parameters;
}

function spec(name: BuiltinToolName, description: string, args: z.ZodType): BuiltinToolSpec {
  return { name, description, parameters: parametersOf(args), idempotent: IDEMPOTENT_TOOLS[name] };
}

export const BUILTIN_TOOL_SPECS: Readonly<Record<BuiltinToolName, BuiltinToolSpec>> = {
  bash: spec(
    'bash',
    'Run a bash command in the workspace directory and return its combined stdout and stderr and its exit ' +
      'code. Normally it runs in a sandbox: the workspace is the only project folder it can see and the only ' +
      'one it can write, system folders are read-only and there is no network. Every call is a fresh shell: ' +
      'the current directory, variables and anything written outside the workspace do not carry over. A ' +
      'command that runs past its time limit is killed; long output is cut in the middle.',
    bashArgsSchema,
  ),
  ls: spec(
    'ls',
    'List a directory of the workspace: one entry a line, sorted, hidden entries included; directories end ' +
      'with "/", symbolic links with "@". Not recursive.',
    lsArgsSchema,
  ),
  read_file: spec(
    'read_file',
    'Read a text file of the workspace. Lines are shown numbered like `cat -n` (number, tab, text); use ' +
      'start_line and end_line to read part of a long file. The numbers are not part of the file.',
    readFileArgsSchema,
  ),
  write_file: spec(
    'write_file',
    'Create or overwrite a file of the workspace with the given content (or append to it), creating missing ' +
      'folders. To change part of an existing file, prefer str_replace.',
    writeFileArgsSchema,
  ),
  str_replace: spec(
    'str_replace',
    'Edit a file of the workspace by replacing old_str with new_str. old_str must match the file exactly ' +
      '(whitespace and indentation included) and occur exactly once, unless replace_all is true; read the ' +
      'file first and include enough surrounding lines to make it unique.',
    strReplaceArgsSchema,
  ),
  glob: spec('glob', SEARCH_TOOL_DESCRIPTIONS.glob, globArgsSchema),
  grep: spec('grep', SEARCH_TOOL_DESCRIPTIONS.grep, grepArgsSchema),
  web_search: spec('web_search', SEARCH_TOOL_DESCRIPTIONS.web_search, webSearchArgsSchema),
  web_fetch: spec('web_fetch', SEARCH_TOOL_DESCRIPTIONS.web_fetch, webFetchArgsSchema),
  image_search: spec('image_search', SEARCH_TOOL_DESCRIPTIONS.image_search, imageSearchArgsSchema),
};

/** The specs shown to the model for these tool names, in their order; names that are not built-in are skipped. */
export function builtinToolSpecs(names: readonly string[]): ToolSpec[] {
  return names.filter(isBuiltinToolName).map((name) => {
    const { description, parameters } = BUILTIN_TOOL_SPECS[name];
    return { name, description, parameters };
  });
}

export const toolSearchArgsSchema = z.strictObject({
  query: z
    .string()
    .min(1)
    .describe(
      'What to load: "select:name_a,name_b" (those tools by exact name), "+keyword more words" (tools whose ' +
        'name contains keyword, ranked by the other words), or words / a regex matched against names and ' +
        'descriptions.',
    ),
});

/** `tool_search`, shown beside the promoted MCP tools when the agent's MCP tools are deferred. */
export const TOOL_SEARCH_SPEC: ToolSpec = {
  name: TOOL_SEARCH_TOOL_NAME,
  description:
    'Fetches the full schema definitions of deferred tools so they can be called. Deferred tools are listed by ' +
    'name in <available-deferred-tools> in the system message; until fetched, only the name is known and a ' +
    "call is refused. This tool matches a query against the deferred tools and returns the matched tools' " +
    'complete schemas; once returned, a tool becomes callable from your next response on. Query forms: ' +
    '"select:github__create_issue,github__list_issues" fetches these exact tools; "+github issue" fetches ' +
    `tools whose name contains "github", best matches for "issue" first; "notebook jupyter" is a keyword or ` +
    `regex search over names and descriptions. Searches return at most ${TOOL_SEARCH_MAX_RESULTS} tools.`,
  parameters: parametersOf(toolSearchArgsSchema),
};
