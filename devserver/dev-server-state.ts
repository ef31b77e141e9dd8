/**
 * The embedded dev server between commands: `subagents dev-server` (and `subagents start` while it keeps its
 * server up) records where it listens, so `run`, `worker`, `status`, `ledger`, `events` and `cancel` find it
 * without flags. Its SQLite file keeps runs across restarts. The record is its owner's: only the process that
 * wrote it erases it.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { processRuns } from './dev-server-lock';
import { serverAnswers } from '../client/server-probe';
import { cacheRoot } from '../payloads/cache-root';

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

/** What claiming the record gave: it is this server's until `forget`, or a live one keeps it. */
export type DevServerClaim =
  { recorded: true; forget: () => void } | { recorded: false; holder: DevServerRecord };

function readRecord(env: NodeJS.ProcessEnv): DevServerRecord | undefined {
  try {
    return JSON.parse(readFileSync(devServerStatePath(env), 'utf8')) as DevServerRecord;
  } catch {
    return undefined;
  }
}

/**
 * Records `record` as the dev server other commands find, unless the recorded one still runs and answers
 * (it stays the one they find). `forget` erases the record only while it is still this one: a record another
 * server wrote meanwhile stays.
 */
export async function claimDevServerRecord(
  record: DevServerRecord,
  env: NodeJS.ProcessEnv = process.env,
): Promise<DevServerClaim> {
  const holder = await findRunningDevServer(env);
  if (holder && holder.pid !== record.pid) return { recorded: false, holder };
  const path = devServerStatePath(env);
  mkdirSync(cacheRoot(env), { recursive: true });
  // Written whole, then moved into place: a reader never sees half a record.
  const scratch = `${path}.${process.pid}.tmp`;
  writeFileSync(scratch, `${JSON.stringify(record, null, 2)}\n`);
  renameSync(scratch, path);
  const forget = () => {
    const current = readRecord(env);
    if (current?.pid === record.pid && current.address === record.address) rmSync(path, { force: true });
  };
  return { recorded: true, forget };
}

/** The recorded dev server, when its process lives and it answers. */
export async function findRunningDevServer(
  env: NodeJS.ProcessEnv = process.env,
): Promise<DevServerRecord | undefined> {
  const record = readRecord(env);
  if (!record || !processRuns(record.pid)) return undefined;
  return (await serverAnswers(record.address, record.namespace, 2000)) ? record : undefined;
}
