/**
 * The embedded dev server between commands: `subagents dev-server` records where it listens, so `run`,
 * `status`, `ledger`, `events` and `cancel` find it without flags. Its SQLite file keeps runs across restarts.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { serverAnswers } from '../worker/server-probe';
import { cacheRoot } from '../worker/temporal-cli';

export interface DevServerRecord {
  address: string;
  namespace: string;
  ui_url?: string;
  pid: number;
}

function devServerStatePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), 'dev-server.json');
}

/** The default SQLite file of the embedded server: runs stay inspectable after it restarts. */
export function defaultDevServerDb(env: NodeJS.ProcessEnv = process.env): string {
  mkdirSync(cacheRoot(env), { recursive: true });
  return join(cacheRoot(env), 'dev-server.db');
}

export function recordDevServer(record: DevServerRecord, env: NodeJS.ProcessEnv = process.env): () => void {
  const path = devServerStatePath(env);
  mkdirSync(cacheRoot(env), { recursive: true });
  writeFileSync(path, `${JSON.stringify(record, null, 2)}\n`);
  return () => rmSync(path, { force: true });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The recorded dev server, when its process lives and it answers. */
export async function findRunningDevServer(
  env: NodeJS.ProcessEnv = process.env,
): Promise<DevServerRecord | undefined> {
  let record: DevServerRecord;
  try {
    record = JSON.parse(readFileSync(devServerStatePath(env), 'utf8')) as DevServerRecord;
  } catch {
    return undefined;
  }
  if (!alive(record.pid)) return undefined;
  return (await serverAnswers(record.address, record.namespace, 2000)) ? record : undefined;
}
