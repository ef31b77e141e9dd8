/**
 * Which paths of a workspace are left out of its images: glob patterns relative to the workspace's root, read
 * the way gitignore reads them. `*` matches a run of characters within one name, `?` one character, and `**`
 * standing as a whole name any number of names, none included (`logs/**` leaves out `logs` too). A trailing `/`
 * matches only a directory; a pattern without a slash matches that name at any depth, one with a slash is
 * anchored at the root (a leading `/` only anchors). An excluded directory is excluded with all below it.
 *
 * Matched name by name with the two-pointer wildcard walk rather than through a regular expression: a scan
 * asks this for every path of the workspace on every save, RE2's JavaScript port costs about 100 µs a match
 * (a 2,000-file scan would spend 200 ms here), and JavaScript's own RegExp backtracks exponentially on some
 * `*` patterns. The walk takes at most (pattern length × text length) steps, for names and for `**`.
 */

/** A name the workspace protocol keeps at the root of every workspace for itself: never saved, never restored. */
export const WORKSPACE_MARKER = '.subagents-workspace';

interface CompiledPattern {
  /** Names to match, `**` standing for any number of names. */
  names: string[];
  /** Matches only a directory (the pattern ended in `/`). */
  dirOnly: boolean;
  /** `**` then one name (an unanchored `*.log`, `node_modules/`): only a path's last name decides. */
  lastNameOnly: boolean;
}

/** The exclude patterns of a workspace, compiled once for many paths. */
export class WorkspaceExcludes {
  private constructor(private readonly patterns: readonly CompiledPattern[]) {}

  /** `patterns` compiled, with the protocol's marker at the root always among them; a bad pattern is refused. */
  static compile(patterns: readonly string[]): WorkspaceExcludes {
    return new WorkspaceExcludes([`/${WORKSPACE_MARKER}`, ...patterns].map(compilePattern));
  }

  /** Whether the entry at `path` (a relative POSIX path; a directory when `isDir`) is excluded itself. */
  excludes(path: string, isDir: boolean): boolean {
    // Most patterns look at the last name alone; the path is split only for one that needs every name.
    const lastName = path.slice(path.lastIndexOf('/') + 1);
    let names: string[] | undefined;
    for (const pattern of this.patterns) {
      if (pattern.dirOnly && !isDir) continue;
      if (
        pattern.lastNameOnly
          ? matchName(pattern.names[1], lastName)
          : matchNames(pattern.names, (names ??= path.split('/')))
      )
        return true;
    }
    return false;
  }

  /** Whether `path` is excluded or lies inside an excluded directory. */
  covers(path: string, isDir: boolean): boolean {
    for (let slash = path.indexOf('/'); slash >= 0; slash = path.indexOf('/', slash + 1)) {
      if (this.excludes(path.slice(0, slash), true)) return true;
    }
    return this.excludes(path, isDir);
  }
}

function compilePattern(pattern: string): CompiledPattern {
  const refuse = (why: string) =>
    new Error(`workspace exclude pattern ${JSON.stringify(pattern)} is not usable: ${why}`);
  if (pattern.includes('\0')) throw refuse('it holds a NUL character');
  const dirOnly = pattern.endsWith('/');
  const body = dirOnly ? pattern.slice(0, -1) : pattern;
  const anchored = body.includes('/');
  const names = (body.startsWith('/') ? body.slice(1) : body).split('/');
  if (names.some((name) => name === ''))
    throw refuse('it must name something, with no empty segment (write `dir/` or `a/b`, not `//`)');
  if (names.some((name) => name === '.' || name === '..'))
    throw refuse('a workspace path holds no "." or ".." segment');
  // An unanchored pattern matches at any depth: as if it began with `**/`.
  const withDepth = anchored ? names : ['**', ...names];
  // `**/**` means what `**` means; collapsing keeps the walk's backtracking to one `**` at a time.
  const collapsed = withDepth.filter((name, i) => !(name === '**' && withDepth[i - 1] === '**'));
  const lastNameOnly = collapsed.length === 2 && collapsed[0] === '**' && collapsed[1] !== '**';
  return { names: collapsed, dirOnly, lastNameOnly };
}

/**
 * Whether `pattern` (with `**` for any number of names) matches `names` exactly: the two-pointer wildcard
 * walk, a `**` the star. After a mismatch it resumes one name further past the last `**`, which is enough
 * because a `**` can absorb anything.
 */
function matchNames(pattern: readonly string[], names: readonly string[]): boolean {
  let p = 0;
  let n = 0;
  let star = -1;
  let resume = 0;
  while (n < names.length) {
    if (p < pattern.length && pattern[p] === '**') {
      star = p++;
      resume = n;
    } else if (p < pattern.length && matchName(pattern[p], names[n])) {
      p++;
      n++;
    } else if (star >= 0) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '**') p++;
  return p === pattern.length;
}

/** Whether the glob `pattern` (`*` any run of characters, `?` one) matches the whole of `name`. */
function matchName(pattern: string, name: string): boolean {
  let p = 0;
  let n = 0;
  let star = -1;
  let resume = 0;
  while (n < name.length) {
    const c = pattern[p];
    if (c === '*') {
      star = p++;
      resume = n;
    } else if (p < pattern.length && (c === '?' || c === name[n])) {
      p++;
      n++;
    } else if (star >= 0) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}
