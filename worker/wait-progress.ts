/**
 * Progress on the waits a user sits through (fetching or building the Temporal CLI, starting the dev server,
 * bundling the workflows): nothing for a wait under two seconds; past that, on a terminal one line redrawn
 * in place (a spinner, each wait's elapsed time and what it is doing), elsewhere (CI, a log file) plain lines,
 * at most one per wait every ten seconds. Concurrent waits share the one line.
 */

/** Where progress goes: stderr, or anything with `write` (a test's recorder). */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface WaitProgressOptions {
  out?: ProgressStream;
  /** Redraw one line in place; default: `out` is a terminal and the environment is not CI. */
  live?: boolean;
  /** A wait shorter than this shows nothing (default 2 s). */
  thresholdMs?: number;
  /** Plain lines: at most one per wait this often (default 10 s). */
  plainEveryMs?: number;
  /** Live line: redraw this often (default 100 ms). */
  frameMs?: number;
  now?: () => number;
}

/** What a tracked piece of work may say about itself while it runs. */
export interface WaitHandle {
  /** What is happening now (`checking sha256`, `342 packages compiled`). */
  update(detail: string): void;
}

export interface TrackOptions<T> {
  /** A line printed when the work succeeds, however long it took (else `<label>: done in N s`, if shown). */
  doneLine?: (value: T, elapsedMs: number) => string | undefined;
  /** Where that line goes (default: this reporter's stream). */
  log?: (line: string) => void;
}

interface Wait {
  label: string;
  detail?: string;
  started: number;
  /** When a plain line last said something about it; undefined: never shown. */
  lastShown?: number;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** `7 s`, `4 min 39 s`; with `tenths`, `3.4 s` under a minute (a result line, not a ticking one). */
export function formatElapsed(ms: number, tenths = false): string {
  if (tenths && ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.floor(ms / 1000);
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

export class WaitProgress {
  private readonly out: ProgressStream;
  private readonly live: boolean;
  private readonly thresholdMs: number;
  private readonly plainEveryMs: number;
  private readonly frameMs: number;
  private readonly now: () => number;
  private readonly waits = new Set<Wait>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private frame = 0;
  /** Whether the live line is on screen (the cursor then sits at its end). */
  private drawn = false;

  constructor(options: WaitProgressOptions = {}) {
    this.out = options.out ?? process.stderr;
    this.live = options.live ?? (this.out.isTTY === true && !process.env.CI && process.env.TERM !== 'dumb');
    this.thresholdMs = options.thresholdMs ?? 2000;
    this.plainEveryMs = options.plainEveryMs ?? 10_000;
    this.frameMs = options.frameMs ?? 100;
    this.now = options.now ?? Date.now;
  }

  /** Runs `work`, showing progress while it takes longer than the threshold. */
  async track<T>(
    label: string,
    work: (wait: WaitHandle) => Promise<T>,
    options: TrackOptions<T> = {},
  ): Promise<T> {
    const wait: Wait = { label, started: this.now() };
    this.waits.add(wait);
    this.ensureTimer();
    let value: T;
    try {
      value = await work({ update: (detail) => (wait.detail = detail) });
    } catch (err) {
      this.finish(wait, undefined);
      throw err;
    }
    const elapsed = this.now() - wait.started;
    const shown = wait.lastShown !== undefined;
    this.finish(
      wait,
      options.doneLine?.(value, elapsed) ??
        (shown ? `${label}: done in ${formatElapsed(elapsed, true)}` : undefined),
      options.log,
    );
    return value;
  }

  /** A line of its own (through `sink` when given), without breaking the live line. */
  log(line: string, sink?: (line: string) => void): void {
    this.clear();
    if (sink) sink(line);
    else this.out.write(`${line}\n`);
    this.draw();
  }

  private finish(wait: Wait, line: string | undefined, sink?: (line: string) => void): void {
    this.waits.delete(wait);
    if (line !== undefined) this.log(line, sink);
    else if (this.live) {
      this.clear();
      this.draw();
    }
    if (this.waits.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private ensureTimer(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), this.live ? this.frameMs : 1000);
    // Progress never keeps a process alive.
    this.timer.unref();
  }

  private tick(): void {
    const now = this.now();
    if (this.live) {
      this.frame = (this.frame + 1) % FRAMES.length;
      this.clear();
      this.draw();
      return;
    }
    for (const wait of this.waits) {
      const elapsed = now - wait.started;
      if (elapsed < this.thresholdMs) continue;
      if (wait.lastShown !== undefined && now - wait.lastShown < this.plainEveryMs) continue;
      wait.lastShown = now;
      this.out.write(`${describe(wait, elapsed)}\n`);
    }
  }

  private visible(now: number): Wait[] {
    return [...this.waits].filter((wait) => now - wait.started >= this.thresholdMs);
  }

  private draw(): void {
    if (!this.live) return;
    const now = this.now();
    const shown = this.visible(now);
    if (shown.length === 0) return;
    for (const wait of shown) wait.lastShown ??= now;
    const text = `${FRAMES[this.frame]} ${shown.map((wait) => describe(wait, now - wait.started)).join(' · ')}`;
    // A line longer than the terminal wraps, and `\r` would then redraw only its last row.
    const width = Math.max(20, (this.out.columns || 80) - 1);
    this.out.write(text.length > width ? `${text.slice(0, width - 1)}…` : text);
    this.drawn = true;
  }

  private clear(): void {
    if (!this.drawn) return;
    this.out.write('\r\x1b[K');
    this.drawn = false;
  }
}

function describe(wait: Wait, elapsedMs: number): string {
  return `${wait.label}… ${formatElapsed(elapsedMs)}${wait.detail ? `: ${wait.detail}` : ''}`;
}

let shared: WaitProgress | undefined;

/** The process's reporter, on stderr: stdout stays for what a command prints (and `--json`). */
export function waitProgress(): WaitProgress {
  shared ??= new WaitProgress();
  return shared;
}
