/**
 * The argument schemas and descriptions of the tools that find things: the workspace searches (`glob`, `grep`)
 * and the web tools (`web_search`, `web_fetch`, `image_search`), in DeerFlow's names and argument shapes, so a
 * model prompted for DeerFlow calls them as it would there. `contracts/tool-specs.ts` turns them into specs.
 */
import { z } from 'zod';

/** DeerFlow asks for a short reason first; accepted and unused (the step log shows the call). */
const description = z.string().optional().describe('Why you are searching, in a few words (optional).');

/** The most paths `glob` returns (DeerFlow: 200 by default, 1000 at most). */
export const GLOB_MAX_RESULTS = { default: 200, ceiling: 1000 } as const;
/** The most lines `grep` returns (DeerFlow: 100 by default, 500 at most). */
export const GREP_MAX_RESULTS = { default: 100, ceiling: 500 } as const;

export const globArgsSchema = z.strictObject({
  description,
  pattern: z
    .string()
    .min(1)
    .describe('The glob pattern to match, relative to path, e.g. "**/*.py" or "src/*.ts".'),
  path: z
    .string()
    .min(1)
    .optional()
    .describe('The directory to search under, relative to the workspace (default ".", the workspace).'),
  include_dirs: z.boolean().optional().describe('Also return matching directories (default false).'),
  max_results: z
    .int()
    .min(1)
    .optional()
    .describe(`Most paths to return (default ${GLOB_MAX_RESULTS.default}).`),
});

export const grepArgsSchema = z.strictObject({
  description,
  pattern: z
    .string()
    .min(1)
    .describe('The text or regular expression (RE2 syntax: no backreferences, no lookaround) to search for.'),
  path: z
    .string()
    .min(1)
    .optional()
    .describe('The file or directory to search, relative to the workspace (default ".", the workspace).'),
  glob: z
    .string()
    .min(1)
    .optional()
    .describe('Only search files whose path matches this glob, e.g. "**/*.md".'),
  literal: z.boolean().optional().describe('Treat pattern as plain text, not a regex (default false).'),
  case_sensitive: z.boolean().optional().describe('Match case exactly (default false).'),
  max_results: z
    .int()
    .min(1)
    .optional()
    .describe(`Most matching lines to return (default ${GREP_MAX_RESULTS.default}).`),
});

export const webSearchArgsSchema = z.strictObject({
  query: z
    .string()
    .min(1)
    .describe('Search keywords describing what you want to find. Be specific for better results.'),
  max_results: z
    .int()
    .min(1)
    .optional()
    .describe('Most results to return (default 5; the configured max_results is the ceiling).'),
});

export const webFetchArgsSchema = z.strictObject({
  url: z
    .string()
    .min(1)
    .describe('The URL to fetch, with its scheme: https://example.com is valid, example.com is not.'),
});

export const imageSearchArgsSchema = z.strictObject({
  query: z
    .string()
    .min(1)
    .describe('Search keywords describing the images you want to find. Be specific for better results.'),
  max_results: z.int().min(1).optional().describe('Most images to return (default 5).'),
  size: z
    .enum(['Small', 'Medium', 'Large', 'Wallpaper'])
    .optional()
    .describe('Image size filter; "Large" for reference images.'),
  type_image: z
    .enum(['photo', 'clipart', 'gif', 'transparent', 'line'])
    .optional()
    .describe('Image type filter; "photo" for realistic references.'),
  layout: z.enum(['Square', 'Tall', 'Wide']).optional().describe('Layout filter.'),
});

export type GlobArgs = z.infer<typeof globArgsSchema>;
export type GrepArgs = z.infer<typeof grepArgsSchema>;
export type WebSearchArgs = z.infer<typeof webSearchArgsSchema>;
export type WebFetchArgs = z.infer<typeof webFetchArgsSchema>;
export type ImageSearchArgs = z.infer<typeof imageSearchArgsSchema>;

export const SEARCH_TOOL_DESCRIPTIONS = {
  glob:
    'Find files (or directories) of the workspace whose path matches a glob pattern under a directory. ' +
    'Paths come back relative to the workspace, sorted; version-control, dependency and build folders ' +
    '(.git, node_modules, dist, …) are skipped.',
  grep:
    'Search for matching lines inside a file or the files under a directory of the workspace. Each match is ' +
    'shown as path:line: text. Case-insensitive unless case_sensitive is true; binary files and ' +
    'dependency folders are skipped.',
  web_search:
    'Search the web for information. Use this tool to find current information, news, articles, and facts ' +
    'from the internet. Returns JSON with each result’s title, url and content.',
  web_fetch:
    'Fetch the contents of a web page at a given URL, as text. Only fetch EXACT URLs that have been provided ' +
    'directly by the user or have been returned in results from the web_search and web_fetch tools. This ' +
    'tool can NOT access content that requires authentication, such as private documents or pages behind ' +
    'login walls. Do NOT add www. to URLs that do NOT have them. URLs must include the scheme: ' +
    'https://example.com is a valid URL while example.com is an invalid URL.',
  image_search:
    'Search for images online. Use this tool BEFORE image generation to find reference images for ' +
    'characters, portraits, objects, scenes, or any content requiring visual accuracy. Returns JSON with ' +
    'each image’s title, image_url and thumbnail_url.',
} as const;
