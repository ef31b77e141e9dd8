/**
 * The one-machine stream bridge: an append-only file of JSON lines per lead run. Every worker process of the
 * machine appends to it (one `write` per batch of events, O_APPEND: lines of several processes never
 * interleave) and every reader (`subagents serve`, `handle.stream()`) follows it: the backlog first, then the
 * lines appended after, woken by the file's change notices with a short poll behind them. An entry's id is the
 * byte offset where its line ends, so a reader resumes exactly after what it saw.
 *
 * Retention: a reader's backlog is the run's last `queue_maxsize` events; files untouched for
 * `stream_ttl_seconds` are deleted when a bridge opens.
 *
 * A writer keeps each run's file open while the run publishes (a model call's deltas come every 40 ms) and
 * closes it once the run has been quiet for a few seconds, or when the bridge closes: `appendFile` opened and closed
 * the file for every batch, three calls into the thread pool where one `write` does (issue 50, item 3). Nothing
 * is synced, as before: the stream is beside history, and a crash loses no event a run depends on.
 */
import { watch, type FSWatcher } from 'node:fs';
import { mkdir, open, readdir, stat, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { StreamBridgeSettings } from '../../contracts/config/stream-bridge';
import type { StreamEntry, StreamEvent } from '../../contracts/stream';
import type { StreamBridge, StreamReadOptions } from './bridge';

/** How often a reader looks at the file when no change notice came (a notice is not guaranteed). */
const POLL_MS = 250;
const READ_CHUNK = 256 * 1024;
/**
 * How long a run's file stays open after its last write. A run under load goes seconds between its model calls'
 * batches: a fan-out run of `bench:load` opened its file 9 times with `appendFile`, 4 times when held for a
 * second, once when held for five. Far below the sweep's `stream_ttl_seconds` (a day by default), so a file
 * held open was written moments ago and no sweep deletes it meanwhile.
 */
export const IDLE_CLOSE_MS = 5000;
/** Run files held open at once, at most; past it the least recently written one closes. */
const MAX_OPEN_FILES = 64;

/** A run's file while it is held open: its writes go one after another, in the order they were asked. */
interface OpenRunFile {
  handle: Promise<FileHandle>;
  /** The last write asked for (never rejects): the next one starts after it, the close waits for it. */
  tail: Promise<void>;
  idle: NodeJS.Timeout | undefined;
}

export class FileStreamBridge implements StreamBridge {
  readonly description: string;
  #made: Promise<void> | undefined;
  /** Open run files by path, the least recently written first. */
  readonly #open = new Map<string, OpenRunFile>();
  /** Files being closed: a new handle on one writes only after the old one's writes have ended. */
  readonly #closing = new Map<string, Promise<void>>();

  constructor(
    readonly dir: string,
    private readonly settings: Pick<StreamBridgeSettings, 'queue_maxsize' | 'stream_ttl_seconds'>,
    /** How long a quiet run's file stays open (a test's shorter). */
    private readonly idleCloseMs = IDLE_CLOSE_MS,
  ) {
    this.description = `files in ${dir}`;
  }

  /** The run's file: its id encoded, so no id names another path. */
  fileOf(runId: string): string {
    return join(this.dir, `${encodeURIComponent(runId)}.jsonl`);
  }

  async publish(runId: string, events: readonly StreamEvent[]): Promise<void> {
    if (events.length === 0) return;
    this.#made ??= this.#prepare();
    await this.#made;
    const lines = Buffer.from(events.map((event) => `${JSON.stringify(event)}\n`).join(''), 'utf8');
    const path = this.fileOf(runId);
    const file = this.#held(path);
    const written = file.tail.then(() => file.handle).then((handle) => appendAll(handle, lines));
    file.tail = written.catch(() => undefined);
    clearTimeout(file.idle);
    file.idle = setTimeout(() => this.#release(path), this.idleCloseMs);
    // An idle run's file must not keep a stopping process alive.
    file.idle.unref();
    await written;
  }

  async *read(runId: string, options: StreamReadOptions): AsyncIterable<StreamEntry> {
    const file = this.fileOf(runId);
    let offset = options.after === undefined ? undefined : Number(options.after);
    const waiter = new ChangeWaiter(file, options.signal);
    try {
      while (!options.signal.aborted) {
        const read = await readFrom(file, offset ?? 0);
        const fresh = offset === undefined ? read.entries.slice(-this.settings.queue_maxsize) : read.entries;
        offset = read.end;
        for (const entry of fresh) {
          if (options.signal.aborted) return;
          yield entry;
        }
        if (read.entries.length === 0) await waiter.next();
      }
    } finally {
      waiter.close();
    }
  }

  /** Closes the run files held open, once their writes have ended. */
  async close(): Promise<void> {
    for (const path of [...this.#open.keys()]) this.#release(path);
    await Promise.all(this.#closing.values());
  }

  /** The run's file, held open (opened now if it is not), as the most recently written. */
  #held(path: string): OpenRunFile {
    const held = this.#open.get(path);
    if (held) {
      this.#open.delete(path);
      this.#open.set(path, held);
      return held;
    }
    if (this.#open.size >= MAX_OPEN_FILES) {
      const [oldest] = this.#open.keys();
      if (oldest !== undefined) this.#release(oldest);
    }
    // O_APPEND: each write lands at the file's end, whatever other processes append meanwhile.
    const after = this.#closing.get(path) ?? Promise.resolve();
    const handle = after.then(() => open(path, 'a', 0o600));
    const file: OpenRunFile = { handle, tail: handle.then(noop, noop), idle: undefined };
    // A file that cannot be opened is not held: the publish that asked fails, the next one tries again.
    handle.catch(() => {
      if (this.#open.get(path) !== file) return;
      this.#open.delete(path);
      clearTimeout(file.idle);
    });
    this.#open.set(path, file);
    return file;
  }

  /** Stops holding the file: it closes after its last write (a later publish opens it again). */
  #release(path: string): void {
    const file = this.#open.get(path);
    if (!file) return;
    this.#open.delete(path);
    clearTimeout(file.idle);
    const closed = file.tail
      .then(() => file.handle)
      .then((handle) => handle.close())
      .catch(() => undefined)
      .finally(() => {
        if (this.#closing.get(path) === closed) this.#closing.delete(path);
      });
    this.#closing.set(path, closed);
  }

  async #prepare(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    void this.#sweep().catch(() => undefined);
  }

  /** Deletes the run files nobody wrote to for `stream_ttl_seconds`. */
  async #sweep(): Promise<void> {
    const ttlMs = this.settings.stream_ttl_seconds * 1000;
    if (ttlMs === 0) return;
    for (const name of await readdir(this.dir)) {
      if (!name.endsWith('.jsonl')) continue;
      const path = join(this.dir, name);
      const info = await stat(path).catch(() => undefined);
      if (info && Date.now() - info.mtimeMs > ttlMs) await unlink(path).catch(() => undefined);
    }
  }
}

const noop = (): void => undefined;

/** Writes all of `bytes` at the file's end (a write may take part of them). */
async function appendAll(handle: FileHandle, bytes: Buffer): Promise<void> {
  for (let offset = 0; offset < bytes.length;) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset, null);
    offset += bytesWritten;
  }
}

/** The complete lines of `file` from byte `offset`, each with the offset where it ends; none when it is missing. */
async function readFrom(file: string, offset: number): Promise<{ entries: StreamEntry[]; end: number }> {
  const handle = await open(file, 'r').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (handle === undefined) return { entries: [], end: offset };
  try {
    const entries: StreamEntry[] = [];
    let position = offset;
    let pending: Buffer = Buffer.alloc(0);
    for (;;) {
      const chunk = Buffer.alloc(READ_CHUNK);
      const { bytesRead } = await handle.read(chunk, 0, READ_CHUNK, position + pending.length);
      if (bytesRead === 0) break;
      pending = Buffer.concat([pending, chunk.subarray(0, bytesRead)]);
      let newline = pending.indexOf(0x0a);
      while (newline >= 0) {
        const line = pending.subarray(0, newline).toString('utf8');
        position += newline + 1;
        pending = pending.subarray(newline + 1);
        const event = parseLine(line);
        if (event) entries.push({ id: String(position), event });
        newline = pending.indexOf(0x0a);
      }
    }
    return { entries, end: position };
  } finally {
    await handle.close();
  }
}

function parseLine(line: string): StreamEvent | undefined {
  try {
    return JSON.parse(line) as StreamEvent;
  } catch {
    return undefined;
  }
}

/**
 * Resolves `next()` when the file may have grown: a change notice, the poll, or the reader's end. A notice
 * that comes while the reader is reading is kept (`#changed`), so the next wait returns at once.
 */
class ChangeWaiter {
  #watcher: FSWatcher | undefined;
  /** The watcher watches the folder, for the file's creation. */
  #watchingFolder = false;
  #wake: (() => void) | undefined;
  #changed = false;

  constructor(
    private readonly file: string,
    private readonly signal: AbortSignal,
  ) {
    signal.addEventListener('abort', () => this.#wake?.(), { once: true });
    this.#watch();
  }

  next(): Promise<void> {
    this.#watch();
    if (this.#changed || this.signal.aborted) {
      this.#changed = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        this.#changed = false;
        resolve();
      };
      const timer = setTimeout(wake, POLL_MS);
      this.#wake = wake;
    });
  }

  #notice(): void {
    this.#changed = true;
    this.#wake?.();
  }

  #watch(): void {
    if ((this.#watcher !== undefined && !this.#watchingFolder) || this.signal.aborted) return;
    try {
      const watcher = watch(this.file, { persistent: false }, () => this.#notice());
      this.close();
      this.#watcher = watcher;
      this.#watchingFolder = false;
      this.#watcher.on('error', () => this.close());
    } catch {
      // Not there yet (a reader that came before the run's first event): its folder tells when it is made, so
      // the first events come at once rather than at the next poll; the next wait watches the file itself.
      if (this.#watcher === undefined) this.#watchFolder();
    }
  }

  #watchFolder(): void {
    const name = basename(this.file);
    try {
      this.#watcher = watch(dirname(this.file), { persistent: false }, (_kind, changed) => {
        if (changed === null || String(changed) === name) this.#notice();
      });
      this.#watchingFolder = true;
      this.#watcher.on('error', () => this.close());
    } catch {
      // No folder yet either: the poll finds the file.
    }
  }

  close(): void {
    this.#watcher?.close();
    this.#watcher = undefined;
  }
}
