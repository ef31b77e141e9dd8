/**
 * What an activity publishes to the tree's live stream (docs/live.md): one `AgentStream` per activity call,
 * tagged with the lead run, the delegation path and the turn from the activity's own context. The first text
 * delta is written at once, the later ones coalesced and written at most every FLUSH_MS, in order; a failed
 * write is dropped (the stream is beside history: losing it changes no run) and said once per worker.
 */
import {
  delegationPathOf,
  leadRunIdOf,
  streamText,
  type StreamEvent,
  type StreamEventKind,
} from '../../contracts/stream';
import { currentWorkflowCall } from '../activity-context';

/** What the stream needs of a bridge (payloads/stream/bridge.ts). */
export interface StreamSink {
  publish(runId: string, events: readonly StreamEvent[]): Promise<void>;
}

/** Where a provider hands its answer's pieces as they arrive. */
export interface ModelDeltas {
  text(delta: string): void;
  thinking(delta: string): void;
  toolCall(id: string, name: string): void;
}

/** How long deltas wait to be written together. */
const FLUSH_MS = 40;

type EventFields = Omit<StreamEvent, 'kind' | 'run_id' | 'path' | 'workflow_id' | 'at' | 'attempt'>;

/** A worker's publishing: its bridge, and whether it already said that the bridge failed. */
export class StreamPublishing {
  #warned = false;

  constructor(
    readonly sink: StreamSink,
    private readonly warn: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
  ) {}

  /** The stream of the current activity's agent; undefined outside an activity. */
  forActivity(agent?: string, turn?: number): AgentStream | undefined {
    const call = currentWorkflowCall();
    if (call === undefined) return undefined;
    return new AgentStream(this, call.workflowId, call.attempt, agent, turn);
  }

  failed(err: unknown): void {
    if (this.#warned) return;
    this.#warned = true;
    this.warn(
      `live stream: a publish failed, the stream misses events (runs are not affected): ${String(err)}`,
    );
  }
}

export class AgentStream implements ModelDeltas {
  readonly runId: string;
  readonly #path: string;
  #queued: StreamEvent[] = [];
  #timer: NodeJS.Timeout | undefined;
  #written: Promise<void> = Promise.resolve();
  #pieceWritten = false;

  constructor(
    private readonly publishing: StreamPublishing,
    readonly workflowId: string,
    readonly attempt: number,
    private readonly agent: string | undefined,
    private readonly turn: number | undefined,
  ) {
    this.runId = leadRunIdOf(workflowId);
    this.#path = delegationPathOf(workflowId);
  }

  emit(kind: StreamEventKind, fields: EventFields = {}): void {
    this.#queued.push({
      kind,
      run_id: this.runId,
      path: this.#path,
      workflow_id: this.workflowId,
      ...(this.agent !== undefined && { agent: this.agent }),
      ...(this.turn !== undefined && { turn: this.turn }),
      attempt: this.attempt,
      at: new Date().toISOString(),
      ...fields,
    });
    this.#timer ??= setTimeout(() => void this.#write(), FLUSH_MS);
  }

  text(delta: string): void {
    this.#coalesce('text', delta);
  }

  thinking(delta: string): void {
    this.#coalesce('thinking', delta);
  }

  toolCall(id: string, name: string): void {
    this.emit('tool_call', { tool_call: { id, name } });
  }

  toolResult(result: { tool_call_id: string; name: string; content: string; is_error: boolean }): void {
    this.emit('tool_result', {
      tool_result: {
        tool_call_id: result.tool_call_id,
        name: result.name,
        content: streamText(result.content),
        is_error: result.is_error,
      },
    });
  }

  /** Writes what is queued; resolves once every write so far has ended (never rejects). */
  flush(): Promise<void> {
    void this.#write();
    return this.#written;
  }

  #coalesce(kind: 'text' | 'thinking', delta: string): void {
    if (delta === '') return;
    const last = this.#queued[this.#queued.length - 1];
    if (last?.kind === kind) last.text = `${last.text ?? ''}${delta}`;
    else this.emit(kind, { text: delta });
    // The call's first piece goes out at once: a reader sees the answer begin without the coalescing's wait
    // (BENCHMARKS.md, "Live stream"); the pieces after it are coalesced.
    if (!this.#pieceWritten) {
      this.#pieceWritten = true;
      void this.#write();
    }
  }

  #write(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const events = this.#queued;
    if (events.length === 0) return this.#written;
    this.#queued = [];
    this.#written = this.#written
      .then(() => this.publishing.sink.publish(this.runId, events))
      .catch((err: unknown) => this.publishing.failed(err));
    return this.#written;
  }
}
