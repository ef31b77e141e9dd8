/**
 * `glob` and `grep` over the workspace, as DeerFlow's sandbox has them: the same arguments, the same result
 * lines, the same folders skipped. Confined as the file tools are: every folder is opened through
 * `openInWorkspace` (no link followed by the kernel), and links met in the walk are not followed at all. Patterns
 * run on RE2 (contracts/patterns.ts): a model's regex cannot pin the worker.
 */
import type { Dirent } from 'node:fs';
import * as path from 'node:path';
import { compileUserPattern, literalUserPattern, type UserPattern } from '../../contracts/patterns';
import { GLOB_MAX_RESULTS, GREP_MAX_RESULTS } from '../../contracts/search-tool-specs';
import type { GlobArgs, GrepArgs } from '../../contracts/tool-specs';
import { listFolder, readTextFile } from './files';
import { capOutput } from './output';
import { succeeded, ToolError, type ToolContext, type ToolOutput } from './tool-context';
import { resolveInWorkspace, type WorkspacePath } from './workspace';

/** DeerFlow's IGNORE_PATTERNS: folders and files no search looks into. */
const IGNORED_NAMES: ReadonlySet<string> = new Set([
  ...['.git', '.svn', '.hg', '.bzr', 'node_modules', '__pycache__', '.venv', 'venv', '.env', 'env'],
  ...['.tox', '.nox', '.eggs', 'site-packages', 'dist', 'build', '.next', '.nuxt', '.output', '.turbo'],
  ...['target', 'out', '.idea', '.vscode', '.project', '.classpath', '.settings', '.DS_Store'],
  ...['Thumbs.db', 'desktop.ini', '.cache', 'logs', '.coverage', 'coverage', '.nyc_output', 'htmlcov'],
  ...['.pytest_cache', '.mypy_cache', '.ruff_cache'],
]);
const IGNORED_SUFFIXES = [
  '.egg-info',
  '.swp',
  '.swo',
  '~',
  '.lnk',
  '.log',
  '.tmp',
  '.temp',
  '.bak',
  '.cache',
];

/** Entries a walk visits at most: a search of a huge tree ends, saying it was cut. */
const MAX_ENTRIES_VISITED = 20_000;
/** DeerFlow's line summary length. */
const MAX_LINE_CHARS = 200;
/** Files larger than this are not searched (DeerFlow's DEFAULT_MAX_FILE_SIZE_BYTES). */
const MAX_GREP_FILE_CHARS = 1_000_000;

function ignored(name: string): boolean {
  return IGNORED_NAMES.has(name) || IGNORED_SUFFIXES.some((suffix) => name.endsWith(suffix));
}

/** A glob as an anchored RE2 pattern: `**` any depth, `*` and `?` within a name, `[…]` and `{a,b}` as in shells. */
export function globToRegex(glob: string): string {
  let out = '';
  for (let i = 0; i < glob.length; i += 1) {
    const c = glob[i] as string;
    if (c === '*' && glob[i + 1] === '*') {
      const slash = glob[i + 2] === '/';
      out += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end < 0) out += '\\[';
      else {
        const body = glob
          .slice(i + 1, end)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\');
        out += `[${body}]`;
        i = end;
      }
    } else if (c === '{') {
      const end = glob.indexOf('}', i);
      if (end < 0) out += '\\{';
      else {
        out += `(?:${glob
          .slice(i + 1, end)
          .split(',')
          .map((part) => globToRegex(part).slice(1, -1))
          .join('|')})`;
        i = end;
      }
    } else out += /[\\^$.|+()]/.test(c) ? `\\${c}` : c;
  }
  return `^${out}$`;
}

/** Whether a path (relative to the search root, `/`-separated) matches: a pattern without `/` matches a name at any depth. */
function globMatcher(glob: string): (relative: string) => boolean {
  const compiled = compileUserPattern(globToRegex(glob));
  if ('problem' in compiled) throw new ToolError(`glob pattern ${JSON.stringify(glob)}: ${compiled.problem}`);
  const byName = !glob.includes('/');
  return (relative) => compiled.test(byName ? path.posix.basename(relative) : relative);
}

interface Walked {
  /** Workspace-relative path (`/`-separated), and the entry. */
  relative: string;
  underRoot: string;
  entry: Dirent;
  target: WorkspacePath;
}

/** Every entry under `root`, breadth-first in name order, links and ignored names skipped; stops at `limit`. */
async function* walk(root: WorkspacePath, limit: { left: number }): AsyncGenerator<Walked> {
  const queue: WorkspacePath[] = [root];
  for (let folder = queue.shift(); folder !== undefined; folder = queue.shift()) {
    const entries = (await listFolder(folder)).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const entry of entries) {
      if (entry.isSymbolicLink() || ignored(entry.name)) continue;
      if (limit.left-- <= 0) return;
      const components = [...folder.components, entry.name];
      const target = { ...folder, components, requested: components.join('/') };
      const underRoot = components.slice(root.components.length).join('/');
      yield { relative: components.join('/'), underRoot, entry, target };
      if (entry.isDirectory()) queue.push(target);
    }
  }
}

function shown(target: WorkspacePath, relative: string): string {
  return target.place === undefined ? relative : path.posix.join(target.place, relative);
}

/** DeerFlow's `glob`: `Found N paths under <path>`, then one numbered path a line. */
export async function globFiles(args: GlobArgs, ctx: ToolContext): Promise<ToolOutput> {
  const requested = args.path ?? '.';
  const root = resolveInWorkspace(ctx, 'glob', requested);
  const matches = globMatcher(args.pattern);
  const max = Math.min(args.max_results ?? GLOB_MAX_RESULTS.default, GLOB_MAX_RESULTS.ceiling);
  const limit = { left: MAX_ENTRIES_VISITED };
  const found: string[] = [];
  let truncated = false;
  for await (const { relative, underRoot, entry } of walk(root, limit)) {
    if (entry.isDirectory() && !args.include_dirs) continue;
    if (!matches(underRoot)) continue;
    if (found.length === max) {
      truncated = true;
      break;
    }
    found.push(shown(root, relative));
  }
  truncated ||= limit.left < 0;
  if (found.length === 0) return succeeded(`No files matched under ${requested}`);
  const lines = [
    `Found ${found.length} paths under ${requested}${truncated ? ` (showing first ${found.length})` : ''}`,
  ];
  lines.push(...found.map((match, index) => `${index + 1}. ${match}`));
  if (truncated) lines.push('Results truncated. Narrow the path or pattern to see fewer matches.');
  return succeeded(capOutput(lines.join('\n'), ctx.sandbox.output_cap_chars));
}

function grepPattern(args: GrepArgs): UserPattern {
  const options = { ignoreCase: !(args.case_sensitive ?? false) };
  if (args.literal) return literalUserPattern(args.pattern, options);
  const compiled = compileUserPattern(args.pattern, options);
  if ('problem' in compiled) throw new ToolError(`Invalid regex pattern: ${compiled.problem}`);
  return compiled;
}

/** The text of a file worth searching, or undefined (binary, too large, gone). */
async function searchableText(target: WorkspacePath): Promise<string | undefined> {
  try {
    const text = await readTextFile(target);
    return text.length > MAX_GREP_FILE_CHARS ? undefined : text;
  } catch (err) {
    if (err instanceof ToolError) return undefined;
    throw err;
  }
}

function summaryLine(line: string): string {
  const trimmed = line.replace(/\r$/, '');
  return trimmed.length <= MAX_LINE_CHARS ? trimmed : `${trimmed.slice(0, MAX_LINE_CHARS - 3)}...`;
}

/** The files `grep` reads: the one named, or those under the folder named (matching `glob`, when given). */
async function* grepTargets(
  root: WorkspacePath,
  glob: string | undefined,
  limit: { left: number },
): AsyncGenerator<{ relative: string; target: WorkspacePath }> {
  let folder = true;
  try {
    await listFolder(root);
  } catch (err) {
    if (!(err instanceof ToolError)) throw err;
    folder = false;
  }
  if (!folder) {
    // A file named directly; a path that names nothing is refused by reading it.
    await readTextFile(root);
    yield { relative: root.components.join('/'), target: root };
    return;
  }
  const matches = glob === undefined ? undefined : globMatcher(glob);
  for await (const { relative, underRoot, entry, target } of walk(root, limit)) {
    if (!entry.isFile() || (matches && !matches(underRoot))) continue;
    yield { relative, target };
  }
}

/** DeerFlow's `grep`: `Found N matches under <path>`, then `path:line: text`. */
export async function grepFiles(args: GrepArgs, ctx: ToolContext): Promise<ToolOutput> {
  const requested = args.path ?? '.';
  const root = resolveInWorkspace(ctx, 'grep', requested);
  const pattern = grepPattern(args);
  const max = Math.min(args.max_results ?? GREP_MAX_RESULTS.default, GREP_MAX_RESULTS.ceiling);
  const limit = { left: MAX_ENTRIES_VISITED };
  const found: string[] = [];
  let truncated = false;
  search: for await (const { relative, target } of grepTargets(root, args.glob, limit)) {
    const text = await searchableText(target);
    if (text === undefined) continue;
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i += 1) {
      if (!pattern.test(lines[i] as string)) continue;
      if (found.length === max) {
        truncated = true;
        break search;
      }
      found.push(`${shown(root, relative)}:${i + 1}: ${summaryLine(lines[i] as string)}`);
    }
  }
  truncated ||= limit.left < 0;
  if (found.length === 0) return succeeded(`No matches found under ${requested}`);
  const head = `Found ${found.length} matches under ${requested}${truncated ? ` (showing first ${found.length})` : ''}`;
  const lines = [head, ...found];
  if (truncated) lines.push('Results truncated. Narrow the path or add a glob filter.');
  return succeeded(capOutput(lines.join('\n'), ctx.sandbox.output_cap_chars));
}
