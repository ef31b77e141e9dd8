/**
 * Where a run's workspace may be: not a system folder, nor inside one, nor a folder that holds other users' or
 * programs' files. Decided on the path alone (POSIX, no file system), so the workflow input check can ask it;
 * the client API also follows links on the host (client/api.ts). Pure: no Node APIs.
 */

/**
 * Folders a run's workspace may never be, nor lie inside: the tools would read and write the system itself.
 * (Subfolders of `/var` and `/home` stay allowed — macOS keeps its temporary folders under /var/folders, a
 * service its state under /var/lib/<name>.)
 */
const SYSTEM_TREES = [
  '/etc',
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/boot',
  '/dev',
  '/proc',
  '/sys',
  '/run',
  '/var/log',
  '/var/run',
  '/var/spool',
  '/System',
  '/Library',
  '/private/etc',
  '/private/var/db',
] as const;

/** Inside a system tree, but where projects live (a container's `WORKDIR /usr/src/app`). */
const PROJECT_TREES = ['/usr/src', '/usr/local/src'] as const;

/** Folders a workspace may not be itself (every folder of its own below them is fine). */
const SYSTEM_FOLDERS = [
  '/usr/src',
  '/usr/local/src',
  '/var/lib',
  '/',
  '/home',
  '/Users',
  '/root',
  '/var',
  '/tmp',
  '/opt',
  '/srv',
  '/mnt',
  '/media',
  '/private',
  '/private/var',
  '/private/tmp',
] as const;

/** `/a//b/./c/../d/` → `/a/b/d` (POSIX, no file system). */
export function normalizePosixPath(path: string): string {
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return `/${parts.join('/')}`;
}

const within = (path: string, folder: string): boolean => path === folder || path.startsWith(`${folder}/`);

function systemTreeProblem(normalized: string): string | undefined {
  if (PROJECT_TREES.some((folder) => normalized.startsWith(`${folder}/`))) return undefined;
  const tree = SYSTEM_TREES.find((folder) => within(normalized, folder));
  return tree === undefined
    ? undefined
    : `is a system folder (${tree} and everything in it are refused: the tools would read and write the system itself; use a project folder of its own)`;
}

const normalizedHome = (home: string | undefined): string | undefined =>
  home === undefined || home === '' ? undefined : normalizePosixPath(home);

/**
 * Why `path` (absolute) cannot be a workspace, or undefined when it can. `home` (the user's home folder, known
 * only where Node runs) is refused itself, as is any folder above it.
 */
export function systemFolderProblem(path: string, home?: string): string | undefined {
  const normalized = normalizePosixPath(path);
  const tree = systemTreeProblem(normalized);
  if (tree !== undefined) return tree;
  const homeFolder = normalizedHome(home);
  if ((SYSTEM_FOLDERS as readonly string[]).includes(normalized) || normalized === homeFolder) {
    return `is a system folder (it holds other users' or programs' files: use a project folder of its own below it, e.g. ${normalized === '/' ? '' : normalized}/my-project)`;
  }
  if (homeFolder !== undefined && within(homeFolder, normalized)) {
    return `holds the home folder ${homeFolder} (use a project folder of its own, e.g. ${homeFolder}/my-project)`;
  }
  return undefined;
}

/**
 * Why `root` cannot hold run workspaces (config `workspace.root`: each run gets a folder of its own below
 * it, so `/tmp` or the home folder will do), or undefined when it can.
 */
export function workspaceRootProblem(root: string, home?: string): string | undefined {
  const normalized = normalizePosixPath(root);
  const tree = systemTreeProblem(normalized);
  if (tree !== undefined) return tree;
  if (normalized === '/') {
    return 'is the root folder (run folders would sit beside the system folders: use a folder of its own, e.g. /srv/subagents)';
  }
  const homeFolder = normalizedHome(home);
  if (homeFolder !== undefined && homeFolder !== normalized && within(homeFolder, normalized)) {
    return `holds the home folder ${homeFolder} (use a folder of its own, e.g. ${homeFolder}/subagents)`;
  }
  return undefined;
}
