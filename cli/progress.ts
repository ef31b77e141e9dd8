/**
 * Watching a run: on a terminal a live tree redrawn in place; elsewhere one line per event (logs, CI).
 * Polls the lead's queries; the workflow needs no signal per step for any of it.
 */
import { ServiceError } from '@temporalio/client';
import type { TaskEvent } from '../contracts/events';
import type { LeadRunResult, LeadStatus } from '../contracts/lead';
import type { LedgerEntry } from '../contracts/ledger';
import type { RunHandle } from '../client/api';
import { StreamTexts } from '../client/stream-text';
import type { StreamEntry } from '../contracts/stream';
import { answerHint, clarificationEventLine } from './questions';
import { foldTaskProgress, renderTree, terminalRows, type TaskProgress, type TreeSnapshot } from './tree';

export interface WatchOptions {
  out: NodeJS.WriteStream | NodeJS.WritableStream;
  /** Redraw a tree in place (a terminal) or print event lines. */
  live: boolean;
  color: boolean;
  uiUrl?: string;
  /** Per task id, the child's Web UI page. */
  childUiUrl?: (workflowId: string) => string | undefined;
  /** What the answer command needs besides the run id (`--address …` for a server only this process knows). */
  answerFlags?: string;
  pollMs?: number;
  /** How often the live tree is drawn again for its elapsed times, whether or not a poll answered. */
  tickMs?: number;
  /**
   * The run's live stream (`RunHandle.stream`): the live tree draws each running agent's newest line of text
   * under its row. Absent: turns and tokens only.
   */
  stream?: (signal: AbortSignal) => AsyncIterable<StreamEntry>;
}

/**
 * One event as a line of text. `description` names a delegation whose event carries none (progress and
 * terminal events), e.g. from the run's ledger.
 */
export function eventLine(event: TaskEvent, description?: string): string {
  const at = event.at.slice(11, 19);
  const named = description === undefined ? '' : ` "${description}"`;
  switch (event.type) {
    case 'task_queued':
      return `${at} ${event.task_id} queued: ${event.subagent_type} "${event.description}" (${event.running} running, ${event.queued} queued)`;
    case 'task_started':
      return `${at} ${event.task_id} started: ${event.subagent_type} "${event.description}" (${event.model_name})`;
    case 'task_running':
      return `${at} ${event.task_id}${named} running: turn ${event.turns}${event.token_usage ? `, ${event.token_usage.total_tokens} tokens` : ''}`;
    case 'batch_started':
      return `${at} ${event.task_id} batch started: ${event.items} items for ${event.subagent_type} "${event.description}" (${event.workflow_id})`;
    case 'clarification_requested':
    case 'clarification_answered':
    case 'clarification_timed_out':
      return clarificationEventLine(event, at);
    case 'tool_denied':
      return `${at} ${event.task_id} ${event.agent}: ${event.tool} denied: ${event.reason} (${event.policy_id})`;
    case 'tool_approved':
      return `${at} ${event.task_id} ${event.agent}: ${event.tool} approved by ${event.by}${event.note !== undefined ? `: ${event.note}` : ''} (${event.policy_id})`;
    case 'subagent_tool_unavailable':
      return `${at} ${event.tool} unavailable in this run: provider ${event.provider} (${event.provider_type}): ${event.reason}`;
    case 'workspace_moved':
      return `${at} workspace moved: host ${event.from_host} was lost; restored on ${event.to_host} (epoch ${event.epoch}, ${event.files} files, ${event.bytes} bytes, ${event.ms} ms)`;
    case 'workspace_not_saved':
      return `${at} workspace not saved: ${event.bytes} bytes, over workspace.snapshot.max_bytes (${event.max_bytes}); a lost host loses what changed from here on`;
    case 'batch_finished': {
      const { completed = 0, failed = 0, cancelled = 0, total } = event.counts;
      const detail = event.error ? `: ${event.error.split('\n')[0]}` : '';
      return `${at} ${event.task_id}${named} batch ${event.status}: ${completed} completed, ${failed} failed, ${cancelled} cancelled of ${total}${detail}`;
    }
    default: {
      const capped = event.stop_reason ? ` (${event.stop_reason})` : '';
      if (event.admission_failure)
        return `${at} ${event.task_id}${named} ${event.status} at admission: ${event.error ?? ''}`;
      const detail = event.error ? `: ${event.error.split('\n')[0]}` : '';
      // Events rebuilt from a closed run's ledger do not know the child's turns (0).
      const turns = event.turns > 0 ? ` after ${event.turns} ${event.turns === 1 ? 'turn' : 'turns'}` : '';
      return `${at} ${event.task_id}${named} ${event.status}${capped}${turns}${detail}`;
    }
  }
}

function lastSeq(events: readonly TaskEvent[], fallback: number): number {
  return events.length > 0 ? events[events.length - 1].seq : fallback;
}

/** A second: the elapsed times' finest unit once past ten seconds. */
const TICK_MS = 1000;

/** Polls in a row whose queries failed before the watch gives up (about 10 s at the default pace). */
const MAX_FAILED_POLLS = 30;

function sleepMs(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** What of a run's status its tree shows. */
type SnapshotStatus = Pick<
  LeadStatus,
  'state' | 'admission' | 'turns' | 'token_usage' | 'questions' | 'approvals'
>;

/** The tree of the watched run at this moment: its status, ledger and its tasks' progress. */
function runTreeSnapshot(
  runId: string,
  status: SnapshotStatus,
  ledger: LedgerEntry[],
  watched: {
    startedAt: number;
    progress: Record<string, TaskProgress>;
    finished?: LeadRunResult;
    texts?: StreamTexts;
  },
  options: WatchOptions,
): TreeSnapshot {
  const { startedAt, progress, finished, texts } = watched;
  const newest =
    texts &&
    ['', ...ledger.map((entry) => entry.id)].flatMap((path) => {
      const text = texts.newestLine(path);
      return text === undefined ? [] : [[path, text] as const];
    });
  return {
    run_id: runId,
    lead: {
      state: status.state,
      ...(status.admission && { admission: status.admission }),
      ...(finished && {
        status: finished.status,
        ...(finished.stop_reason && { stop_reason: finished.stop_reason }),
      }),
      turns: status.turns,
      token_usage: status.token_usage,
      started_at_ms: startedAt,
      ...(status.state === 'finished' && { finished_at_ms: Date.now() }),
    },
    ledger,
    progress,
    ...(status.questions && status.state !== 'finished' && { questions: status.questions }),
    ...(status.approvals && status.state !== 'finished' && { approvals: status.approvals }),
    ...(options.answerFlags && { answer_flags: options.answerFlags }),
    ...(options.uiUrl && { ui_url: options.uiUrl }),
    ...(options.childUiUrl && {
      children_ui_urls: Object.fromEntries(
        ledger.flatMap((e) => {
          const url = options.childUiUrl?.(e.workflow_id);
          return url ? [[e.id, url]] : [];
        }),
      ),
    }),
    ...(newest && newest.length > 0 && { newest_text: Object.fromEntries(newest) }),
  };
}

/** Follows the run until it ends; returns its result. */
export async function watchRun(handle: RunHandle, options: WatchOptions): Promise<LeadRunResult> {
  const { out } = options;
  const startedAt = Date.now();
  let seen = 0;
  let progress: Record<string, TaskProgress> = {};
  let drawnRows = 0;
  const columns = 'columns' in out && typeof out.columns === 'number' ? out.columns : 100;
  const result = handle.result();
  let finished: LeadRunResult | undefined;
  void result.then((r) => (finished = r)).catch(() => undefined);

  // The agents' text as it streams, read beside the polls while the tree is drawn; a stream that fails leaves
  // the tree as it is without it.
  const texts = options.live && options.stream ? new StreamTexts() : undefined;
  const stopStream = new AbortController();
  if (texts && options.stream) {
    const entries = options.stream(stopStream.signal);
    void (async () => {
      for await (const { event } of entries) texts.add(event);
    })().catch(() => undefined);
  }

  let drawn: TreeSnapshot | undefined;
  const draw = (snapshot: TreeSnapshot) => {
    drawn = snapshot;
    const lines = renderTree(snapshot, { now: Date.now(), color: options.color, width: columns });
    // Move up over the previous frame and clear it, then draw the new one.
    if (drawnRows > 0) out.write(`\x1b[${drawnRows}F\x1b[0J`);
    out.write(`${lines.join('\n')}\n`);
    drawnRows = terminalRows(lines, columns);
  };

  const treeSnapshot = (status: SnapshotStatus, ledger: LedgerEntry[]): TreeSnapshot =>
    runTreeSnapshot(
      handle.runId,
      status,
      ledger,
      { startedAt, progress, ...(finished && { finished }), ...(texts && { texts }) },
      options,
    );
  /** The tree of a run whose result is in, when its queries can no longer be answered. */
  const finishedSnapshot = (result: LeadRunResult): TreeSnapshot =>
    treeSnapshot({ state: 'finished', turns: result.turns, token_usage: result.token_usage }, result.ledger);

  const follow = async (): Promise<LeadRunResult> => {
    let failedPolls = 0;
    for (;;) {
      let polled: [LeadStatus, LedgerEntry[], TaskEvent[]];
      try {
        polled = await Promise.all([handle.status(), handle.ledger(), handle.events(seen)]);
        failedPolls = 0;
      } catch (err) {
        // A query can fail for a moment (its workflow being evicted and replayed on a busy worker, a cancel in
        // progress): the next poll asks again, and only a run of failures ends the watch.
        failedPolls += 1;
        // The run has ended (its worker may be gone already): its result says the rest, and without a terminal
        // the tree is still printed once, from the result, after the event lines.
        if (finished) {
          if (!options.live) {
            const final = finishedSnapshot(finished);
            out.write(
              `\n${renderTree(final, { now: Date.now(), color: false, width: columns }).join('\n')}\n`,
            );
          }
          return finished;
        }
        if (!(err instanceof ServiceError) || failedPolls >= MAX_FAILED_POLLS) throw err;
        await Promise.race([result.catch(() => undefined), sleepMs(options.pollMs ?? 300)]);
        continue;
      }
      const [status, polledLedger, polledEvents] = polled;
      // Each query is answered on its own, so one poll can mix moments; once the run has ended its state is
      // final: the result's ledger, and whatever events the poll missed.
      const closed = status.state === 'finished' && finished !== undefined;
      const events = closed
        ? [...polledEvents, ...(await handle.events(lastSeq(polledEvents, seen)))]
        : polledEvents;
      const ledger = closed && finished ? finished.ledger : polledLedger;
      progress = foldTaskProgress(progress, events);
      seen = lastSeq(events, seen);
      const snapshot = (): TreeSnapshot => treeSnapshot(status, ledger);
      if (options.live) draw(snapshot());
      else
        for (const event of events) {
          out.write(`${eventLine(event)}\n`);
          if (event.type === 'clarification_requested')
            out.write(`${answerHint(handle.runId, event.task_id, options.answerFlags)}\n`);
        }
      if (closed && finished) {
        // Without a terminal the tree is printed once, complete, after the event lines.
        if (!options.live) {
          out.write(
            `\n${renderTree(snapshot(), { now: Date.now(), color: false, width: columns }).join('\n')}\n`,
          );
        }
        return finished;
      }
      await Promise.race([result.catch(() => undefined), sleepMs(options.pollMs ?? 300)]);
      if (status.state === 'finished' && !finished) await result;
    }
  };

  // The elapsed times run on this clock, not on the polls: a query no worker answers waits (30 s on the server)
  // or fails, and meanwhile the last tree is drawn again as time passes.
  const ticker = options.live
    ? setInterval(() => {
        if (drawn) draw(drawn);
      }, options.tickMs ?? TICK_MS)
    : undefined;
  ticker?.unref();
  try {
    return await follow();
  } finally {
    clearInterval(ticker);
    stopStream.abort();
  }
}
