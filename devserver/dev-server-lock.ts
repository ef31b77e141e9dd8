/**
 * One dev server per SQLite file. Two Temporal servers on one file would both write it; the second would also
 * take over what other commands find. The lock is a file beside the database (`<db>.lock`), made exclusively,
 * holding its owner's pid, the Temporal server's pid and, once it serves, where it listens. A lock whose
 * processes are all gone (a killed owner) is stale and taken over.
 */
import { randomUUID } from 'node:crypto';
import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';

export interface DbLockHolder {
  /** The process that started the server and owns the lock. */
  pid: number;
  /** The Temporal server it spawned, once spawned: it may outlive a killed owner, still on the file. */
  server_pid?: number;
  /** host:port and Web UI, once the server serves. */
  address?: string;
  ui_url?: string;
  started_at: string;
  /** Tells this lock from a later one of the same pid. */
  token: string;
}

export class DbLockedError extends Error {
  override name = 'DbLockedError';

  constructor(
    readonly dbFilename: string,
    readonly holder: DbLockHolder,
  ) {
    super(lockedMessage(dbFilename, holder));
  }
}

function lockedMessage(dbFilename: string, holder: DbLockHolder): string {
  const lockPath = dbLockPath(dbFilename);
  if (!processRuns(holder.pid) && holder.server_pid !== undefined) {
    return (
      `${dbFilename} is still used by a Temporal server (pid ${holder.server_pid}) whose dev-server ` +
      `process (pid ${holder.pid}) is gone; stop it (kill ${holder.server_pid}) and start again ` +
      `(lock: ${lockPath})`
    );
  }
  const where = holder.address
    ? `the dev server on ${holder.address}${holder.ui_url ? `, Web UI ${holder.ui_url}` : ''}`
    : 'a dev server that is still starting';
  return (
    `${dbFilename} is in use by ${where} (pid ${holder.pid}): use that one, stop it first, or give ` +
    `another --db-filename (lock: ${lockPath})`
  );
}

export function dbLockPath(dbFilename: string): string {
  return `${dbFilename}.lock`;
}

/** Whether process `pid` exists (one of another user's answers EPERM: it exists too). */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readHolder(path: string): DbLockHolder | undefined {
  try {
    const holder = JSON.parse(readFileSync(path, 'utf8')) as DbLockHolder;
    return typeof holder.pid === 'number' ? holder : undefined;
  } catch {
    return undefined;
  }
}

function live(holder: DbLockHolder): boolean {
  return processRuns(holder.pid) || (holder.server_pid !== undefined && processRuns(holder.server_pid));
}

export interface DbLock {
  readonly path: string;
  /** Records the server's pid and where it listens, for the message a second dev server prints. */
  update(fields: Pick<DbLockHolder, 'server_pid' | 'address' | 'ui_url'>): void;
  /** Removes the lock, if it is still this one. */
  release(): void;
}

/**
 * Takes the lock of `dbFilename`, or throws DbLockedError naming the dev server that holds it. A lock file
 * that cannot be read, or whose processes are gone, is taken over.
 */
export function acquireDbLock(dbFilename: string): DbLock {
  const path = dbLockPath(dbFilename);
  const scratch = `${path}.${process.pid}.tmp`;
  let holder: DbLockHolder = {
    pid: process.pid,
    started_at: new Date().toISOString(),
    token: randomUUID(),
  };
  // Written whole beside the lock first: a reader never sees half a lock.
  const writeScratch = () => writeFileSync(scratch, `${JSON.stringify(holder, null, 2)}\n`);
  writeScratch();
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        // A hard link fails when the lock exists: the exclusive step.
        linkSync(scratch, path);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 2) throw err;
      }
      const current = readHolder(path);
      if (current && live(current)) throw new DbLockedError(dbFilename, current);
      // Stale: removed unless another process took it over meanwhile (the next attempt reads that one).
      if (readHolder(path)?.token === current?.token) rmSync(path, { force: true });
    }
  } finally {
    rmSync(scratch, { force: true });
  }
  const mine = () => readHolder(path)?.token === holder.token;
  return {
    path,
    update(fields) {
      if (!mine()) return;
      holder = { ...holder, ...fields };
      writeScratch();
      renameSync(scratch, path);
    },
    release() {
      if (mine()) rmSync(path, { force: true });
    },
  };
}
