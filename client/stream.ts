/**
 * A lead run's live stream as a reader gets it (docs/live.md): what the workers published to the stream
 * bridge (each agent's deltas, tool results, turn edges; the backlog first, then live), merged with what the
 * run itself answers, read only while someone reads: its task events, the calls and questions it waits on,
 * and its end (`run_ended`, whose text is the run's final output, read from its result); a run read only
 * after its end gets its task events as its result tells them. It ends once the run has closed and the bridge
 * has given everything it held.
 */
import type { LeadStatus, LeadRunResult } from '../contracts/lead';
import { isTaskTerminalEvent, type TaskEvent } from '../contracts/events';
import {
  delegationPathOf,
  type StreamEntry,
  type StreamEvent,
  type StreamEventKind,
} from '../contracts/stream';
import { processStreamBridge, type StreamBridge } from '../payloads/stream/bridge';
import { eventsFromLedger } from './ledger-events';

/** What the merge reads of a run (RunHandle has it). */
export interface StreamedRun {
  readonly runId: string;
  inspect(): Promise<
    { open: true } | { open: false; result?: LeadRunResult; status: string; error?: string }
  >;
  status(): Promise<LeadStatus>;
  events(afterSeq: number): Promise<TaskEvent[]>;
}

export interface RunStreamOptions {
  /** Resume after this bridge entry id (an SSE client's Last-Event-ID); absent: the whole backlog. */
  after?: string;
  /** Ends the stream early. */
  signal?: AbortSignal;
  /** How often the run's own state is read (default 1000 ms). */
  pollMs?: number;
  /** The bridge (default: this process's, `configureStreamBridge`). */
  bridge?: StreamBridge;
}

/** A lifecycle entry has no bridge id: a reader that resumes gets the run's state again. */
const LIFECYCLE_ID = '';

/** The run's stream: bridge entries and lifecycle entries, merged in the order they come. */
export async function* runStream(
  run: StreamedRun,
  options: RunStreamOptions = {},
): AsyncGenerator<StreamEntry> {
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const queue = new EntryQueue();
  const bridge = options.bridge ?? processStreamBridge();
  const caughtUp = new CatchUp();
  const reading = readBridge(bridge, run.runId, options.after, stop.signal, queue, caughtUp);
  const following = followRun(run, options.pollMs ?? 1000, stop.signal, queue, caughtUp);
  void Promise.all([reading, following])
    .catch((err: unknown) => queue.fail(err))
    .finally(() => queue.end());
  try {
    for (;;) {
      const next = await queue.next();
      if (next === undefined) return;
      yield next;
    }
  } finally {
    stop.abort();
    options.signal?.removeEventListener('abort', onAbort);
  }
}

async function readBridge(
  bridge: StreamBridge,
  runId: string,
  after: string | undefined,
  signal: AbortSignal,
  queue: EntryQueue,
  caughtUp: CatchUp,
): Promise<void> {
  for await (const entry of bridge.read(runId, { ...(after !== undefined && { after }), signal })) {
    queue.push(entry);
    caughtUp.saw(entry.event);
  }
}

/**
 * Reads the run's state every `pollMs` until it has closed; then waits for the bridge to hand over the last
 * turn's events (the activities publish before they complete, so they are written by then), adds `run_ended`
 * and stops the bridge's reader.
 */
async function followRun(
  run: StreamedRun,
  pollMs: number,
  signal: AbortSignal,
  queue: EntryQueue,
  caughtUp: CatchUp,
): Promise<void> {
  const lifecycle = new LifecycleState(run.runId);
  let seenOpen = false;
  while (!signal.aborted) {
    const inspected = await run.inspect();
    if (!inspected.open) {
      await caughtUp.finalTurn(inspected.result, signal);
      if (signal.aborted) return;
      // What the polls did not tell (the run read only after its end, or it ended between two polls): its task
      // events as its result tells them, each delegation's end at least.
      if (inspected.result) {
        const { ledger, decisions } = inspected.result;
        const rebuilt = eventsFromLedger(ledger, decisions).filter(
          (event) => !seenOpen || lifecycle.untoldEnd(event),
        );
        for (const entry of lifecycle.changes({}, rebuilt)) queue.push(entry);
      }
      queue.push(lifecycle.ended(inspected));
      queue.end();
      return;
    }
    seenOpen = true;
    const status = await run.status().catch(() => undefined);
    if (status !== undefined) {
      const events = await run.events(lifecycle.lastSeq).catch(() => []);
      for (const entry of lifecycle.changes(status, events)) queue.push(entry);
    }
    await sleep(pollMs, signal);
  }
}

/** What the reader already told of the run's state, so each change is told once. */
class LifecycleState {
  lastSeq = 0;
  readonly #approvals = new Set<string>();
  readonly #questions = new Set<string>();
  /** The delegations whose end was told. */
  readonly #ended = new Set<string>();

  /** Whether `event` is a delegation's end not told yet. */
  untoldEnd(event: TaskEvent): boolean {
    return isTaskTerminalEvent(event) && !this.#ended.has(event.task_id);
  }

  constructor(private readonly runId: string) {}

  changes(status: Pick<LeadStatus, 'approvals' | 'questions'>, events: TaskEvent[]): StreamEntry[] {
    const out: StreamEntry[] = [];
    for (const event of events) {
      if (isTaskTerminalEvent(event)) this.#ended.add(event.task_id);
      this.lastSeq = Math.max(this.lastSeq, event.seq);
      out.push(this.entry('task_event', this.runId, { event }));
    }
    for (const approval of status.approvals ?? []) {
      if (this.#approvals.has(approval.ref)) continue;
      this.#approvals.add(approval.ref);
      out.push(this.entry('waiting_approval', approval.workflow_id, { approval, agent: approval.asked_by }));
    }
    for (const question of status.questions ?? []) {
      if (this.#questions.has(question.ref)) continue;
      this.#questions.add(question.ref);
      out.push(this.entry('question', question.workflow_id, { question, agent: question.asked_by }));
    }
    return out;
  }

  ended(closed: { result?: LeadRunResult; status: string; error?: string }): StreamEntry {
    const { result } = closed;
    return this.entry('run_ended', this.runId, {
      status: result?.status ?? closed.status,
      ...(result?.stop_reason !== undefined && { stop_reason: result.stop_reason }),
      ...((result?.error ?? closed.error) !== undefined && { error: result?.error ?? closed.error }),
      ...(result !== undefined && { text: result.final_output }),
    });
  }

  entry(kind: StreamEventKind, workflowId: string, fields: Partial<StreamEvent>): StreamEntry {
    const event: StreamEvent = {
      kind,
      run_id: this.runId,
      path: delegationPathOf(workflowId),
      workflow_id: workflowId,
      at: new Date().toISOString(),
      ...fields,
    };
    return { id: LIFECYCLE_ID, event };
  }
}

/**
 * Whether the bridge has handed over the lead's last turn. A run that closed with an answer ends with the
 * lead's `turn_ended` of that text; one that closed otherwise (cancelled, failed before a turn) gets a short
 * grace for whatever its workers published last.
 */
class CatchUp {
  #leadText: string | undefined;
  #seen: (() => void) | undefined;

  saw(event: StreamEvent): void {
    if (event.path === '' && event.kind === 'turn_ended') {
      this.#leadText = event.text;
      this.#seen?.();
    }
  }

  async finalTurn(result: LeadRunResult | undefined, signal: AbortSignal): Promise<void> {
    const wanted = result?.status === 'completed' ? result.final_output : undefined;
    const graceMs = wanted === undefined ? 500 : 5000;
    const deadline = Date.now() + graceMs;
    while (!signal.aborted && Date.now() < deadline) {
      if (wanted !== undefined && this.#leadText === wanted) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(deadline - Date.now(), 0));
        this.#seen = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }
}

/** An async queue of entries with one reader. */
class EntryQueue {
  readonly #items: StreamEntry[] = [];
  #waiter: (() => void) | undefined;
  #ended = false;
  #error: unknown;

  push(entry: StreamEntry): void {
    if (this.#ended) return;
    this.#items.push(entry);
    this.#waiter?.();
  }

  end(): void {
    this.#ended = true;
    this.#waiter?.();
  }

  fail(err: unknown): void {
    this.#error ??= err;
    this.end();
  }

  async next(): Promise<StreamEntry | undefined> {
    while (this.#items.length === 0) {
      if (this.#ended) {
        if (this.#error !== undefined) throw this.#error;
        return undefined;
      }
      await new Promise<void>((resolve) => (this.#waiter = resolve));
      this.#waiter = undefined;
    }
    return this.#items.shift();
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
