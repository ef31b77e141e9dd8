import { lstat, realpath } from 'node:fs/promises';
import * as path from 'node:path';
import { ToolError, type ToolContext } from './tool-context';

/** A path the model named, checked to lie inside the workspace. */
export interface WorkspacePath {
  /** The path as the model wrote it, for messages. */
  requested: string;
  /** Absolute, with every existing symbolic link resolved: the path to operate on. */
  real: string;
}

function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return (
    relative === '' ||
    (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))
  );
}

// Duck-typed: errors from Node's fs are not always `instanceof Error` of the caller's realm (jest's vm).
function errorCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string'
    ? err.code
    : undefined;
}

/** Whether anything (a dangling link included) is at this path. */
export async function exists(candidate: string): Promise<boolean> {
  try {
    await lstat(candidate);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves `requested` against the workspace and refuses anything that leaves it: `..`, absolute paths
 * elsewhere, and symbolic links pointing out. A path that does not exist yet is judged by the real path of its
 * nearest existing parent, so a write cannot escape through a linked folder either.
 */
export async function resolveInWorkspace(ctx: ToolContext, requested: string): Promise<WorkspacePath> {
  if (requested.includes('\0'))
    throw new ToolError(`path ${JSON.stringify(requested)} contains a NUL character`);
  const lexical = path.resolve(ctx.workspace, requested);
  if (!isInside(ctx.workspace, lexical) && !isInside(ctx.workspaceReal, lexical)) {
    throw new ToolError(
      `path "${requested}" is outside the workspace; use a path relative to the workspace, e.g. "notes.md" or "src/index.ts"`,
    );
  }

  let existing = lexical;
  const missing: string[] = [];
  let base: string;
  for (;;) {
    try {
      base = await realpath(existing);
      break;
    } catch (err) {
      const code = errorCode(err);
      if (code === 'ELOOP') throw new ToolError(`path "${requested}" runs into a loop of symbolic links`);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
      // A link whose target is missing would be followed by a write; where it points is not ours to check.
      if (await exists(existing)) {
        throw new ToolError(`path "${requested}" goes through a symbolic link whose target does not exist`);
      }
      missing.unshift(path.basename(existing));
      existing = path.dirname(existing);
    }
  }

  const real = path.join(base, ...missing);
  if (!isInside(ctx.workspaceReal, real)) {
    throw new ToolError(`path "${requested}" leads outside the workspace through a symbolic link`);
  }
  return { requested, real };
}

/** Turns the file-system errors a model can cause into its error result; anything else is returned as is. */
export function fileError(err: unknown, target: WorkspacePath): unknown {
  const name = `"${target.requested}"`;
  switch (errorCode(err)) {
    case 'ENOENT':
      return new ToolError(`${name} does not exist in the workspace`);
    case 'EISDIR':
      return new ToolError(`${name} is a directory, not a file; list it with ls`);
    case 'ENOTDIR':
    case 'EEXIST':
      return new ToolError(`${name}: a part of this path is a file, not a directory`);
    case 'EACCES':
    case 'EPERM':
      return new ToolError(`permission denied for ${name}`);
    case 'ELOOP':
      return new ToolError(`${name} is a symbolic link; the file tools do not follow links`);
    case 'ENAMETOOLONG':
      return new ToolError(`${name}: a name in this path is too long`);
    default:
      return err;
  }
}
