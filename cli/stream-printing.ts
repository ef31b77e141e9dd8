/**
 * Printing the tree's live stream (docs/live.md) as text comes: `watch --tokens` (one agent's text) and
 * `run --stream` (every agent's, each subagent's lines prefixed with its delegation path). A model call that a
 * retry superseded (`interrupted`: its worker was killed, or the call failed) is marked where it happened; the
 * retry's text follows and is the one that counts (what history holds).
 */
import { isTaskTerminalEvent, type TaskTerminalEvent } from '../contracts/events';
import type { StreamEvent } from '../contracts/stream';
import { eventLine } from './progress';
import { answerHint } from './questions';

type Write = (text: string) => void;

/** The mark printed where a retried call starts its turn over. */
export function interruptedMark(event: StreamEvent): string {
  return `[interrupted: the model call is retried (attempt ${event.attempt ?? '?'}); its text starts over]`;
}

/** How an agent ended, as `watch --tokens` ends: `run completed`, `part0 failed (turn_capped)`. */
function endLine(who: string, status: string, stopReason?: string, error?: string): string {
  const capped = stopReason ? ` (${stopReason})` : '';
  return `${who} ${status}${capped}${error ? `: ${error.split('\n')[0]}` : ''}`;
}

/**
 * One agent's text (`watch --tokens --agent PATH`): its pieces as they come, a mark where a retry starts a
 * turn over, and one line when it ends: the run's end for the lead; for a subagent the lead delegated to, its
 * task's end once its answer has come too (the run's events and the workers' pieces come by separate ways);
 * for a nested one, or an ended run read afterwards (whose task events are not replayed), the run's end.
 */
export class AgentTextPrinter {
  #atLineStart = true;
  /** The agent's answer (a turn without tool calls) has come. */
  #answered = false;
  /** Its task's end, from the run's events, waiting for the answer. */
  #taskEnd: TaskTerminalEvent | undefined;
  /** How the agent ended (`completed`, `failed`, …), once it has. */
  ended: string | undefined;

  constructor(
    private readonly path: string,
    private readonly out: Write,
  ) {}

  /** Prints what `event` adds; true once the agent has ended (nothing more to print). */
  add(event: StreamEvent): boolean {
    if (this.ended !== undefined) return true;
    if (event.kind === 'run_ended') return this.#end('run', event.status ?? 'ended', event);
    if (
      event.kind === 'task_event' &&
      event.event?.task_id === this.path &&
      isTaskTerminalEvent(event.event)
    ) {
      this.#taskEnd = event.event;
      return this.#taskEnded();
    }
    if (event.path !== this.path) return false;
    if (event.kind === 'text' && event.text) this.#write(event.text);
    else if (event.kind === 'interrupted') this.#line(interruptedMark(event));
    else if (event.kind === 'turn_ended') {
      if (!this.#atLineStart) this.#write('\n');
      this.#answered = (event.tool_calls ?? []).length === 0;
      return this.#taskEnded();
    }
    return false;
  }

  #taskEnded(): boolean {
    const task = this.#taskEnd;
    if (task === undefined || (!this.#answered && task.status === 'completed')) return false;
    return this.#end(this.path, task.status, task);
  }

  #end(who: string, status: string, how: { stop_reason?: string; error?: string }): boolean {
    this.#line(endLine(who, status, how.stop_reason, how.error));
    this.ended = status;
    return true;
  }

  #line(line: string): void {
    this.#write(`${this.#atLineStart ? '' : '\n'}${line}\n`);
  }

  #write(text: string): void {
    this.out(text);
    this.#atLineStart = text.endsWith('\n');
  }
}

/**
 * Every agent's text (`run --stream`): the lead's as it comes, each subagent's a whole line at a time behind
 * `[path] `, so the pieces of agents that turn at once never mix within a line. The run's task events and questions get a line of their own, as the
 * watch prints them without a terminal.
 */
export class TreeTextPrinter {
  /** Whether the lead's text left a line open. */
  #leadOpen = false;
  /** Each subagent's text not yet printed: its line so far (pieces of agents turning at once never mix). */
  readonly #partial = new Map<string, string>();

  constructor(
    private readonly out: Write,
    private readonly runId: string,
    private readonly answerFlags?: string,
  ) {}

  add(event: StreamEvent): void {
    switch (event.kind) {
      case 'text':
        if (event.text) this.#text(event.path, event.text);
        return;
      case 'interrupted':
        // Its unprinted piece is dropped: the retried call's text starts over.
        this.#partial.delete(event.path);
        this.#line(`${prefix(event.path)}${interruptedMark(event)}`);
        return;
      case 'turn_ended':
        if (event.path === '') this.#endLead();
        else this.#flush(event.path);
        return;
      case 'task_event':
        if (event.event) this.#line(eventLine(event.event));
        if (event.event?.type === 'clarification_requested')
          this.#line(answerHint(this.runId, event.event.task_id, this.answerFlags));
        return;
      default:
        return;
    }
  }

  /** Prints what is left of every agent's text (before the run's summary). */
  finish(): void {
    for (const path of [...this.#partial.keys()]) this.#flush(path);
    this.#endLead();
  }

  #text(path: string, text: string): void {
    if (path === '') {
      // The lead's text as it comes, bare.
      this.out(text);
      this.#leadOpen = !text.endsWith('\n');
      return;
    }
    // A subagent's, a whole line at a time behind its path; a long line without a break goes out at a word's end.
    const lines = `${this.#partial.get(path) ?? ''}${text}`.split('\n');
    let rest = lines.pop() ?? '';
    for (const line of lines) this.#line(`${prefix(path)}${line}`);
    const cut = rest.length >= LONG_LINE ? rest.lastIndexOf(' ') : -1;
    if (cut > 0) {
      this.#line(`${prefix(path)}${rest.slice(0, cut)}`);
      rest = rest.slice(cut + 1);
    }
    this.#partial.set(path, rest);
  }

  #flush(path: string): void {
    const rest = this.#partial.get(path);
    this.#partial.delete(path);
    if (rest) this.#line(`${prefix(path)}${rest}`);
  }

  #endLead(): void {
    if (this.#leadOpen) this.out('\n');
    this.#leadOpen = false;
  }

  #line(line: string): void {
    this.#endLead();
    this.out(`${line}\n`);
  }
}

/** A subagent's line without a break is printed once this long, at its last word's end. */
const LONG_LINE = 120;

function prefix(path: string): string {
  return path === '' ? '' : `[${path}] `;
}
