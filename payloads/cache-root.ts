/** The one folder this project caches in outside the repo, shared by every floor that keeps files there. */
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Folder for everything this project caches outside the repo (the CLI, the dev server's state). */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.DURABLE_SUBAGENTS_CACHE) return env.DURABLE_SUBAGENTS_CACHE;
  const base = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'durable-subagents');
}
