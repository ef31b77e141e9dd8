/**
 * One A2A delegation, durable: the prompt goes to the remote agent as one message, the task it makes is
 * followed (a stream when the card says the agent streams, else `getTask` polls), and its id is heartbeated the
 * moment it is known, before any wait. An attempt that starts with that id in its heartbeat details (the
 * worker died) re-attaches to the same task and never sends the prompt again.
 *
 * The window: a crash after the send reached the agent but before its answer (the task id) was heartbeated
 * leaves an attempt without the id. Such an attempt (any attempt after the first that has no id) looks the
 * task up by the prompt's message id, which is derived from the delegation id, among the tasks `ListTasks`
 * shows since the activity was first scheduled. An agent that cannot list tasks (A2A 0.3, or one that does
 * not implement it) gets the prompt again under the same message id: one that keeps message ids as
 * idempotency keys sees it as the same message; one that does not starts the work a second time.
 *
 * Cancellation requested by the workflow cancels the remote task (best effort, bounded) and then lets the
 * activity's cancellation through; the deadline cancels it and ends `timed_out`. A worker shutting down or a
 * heartbeat timeout leaves it running: the next attempt re-attaches.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { Message, StreamResponse, Task, TaskState } from '@a2a-js/sdk' with {
  'resolution-mode': 'require',
};
import type {
  A2AProviderSettings,
  RemoteProgress,
  RemoteResumption,
  RemoteSubagentInput,
  RemoteSubagentResult,
} from '../../../contracts/remote-subagent';
import { keepHeartbeatDetails, whileHeartbeating } from '../../activity-context';
import { redactSecrets, RemoteSettingsError, resolveEnvReferences, type ResolvedValues } from '../shared';
import { connectA2A, type A2AConnection } from './connection';
import {
  A2A_UNAVAILABLE_ERROR_TYPE,
  A2AAuthError,
  A2ACardError,
  A2AUnavailableError,
  isNetworkFault,
  protocolReason,
  reasonOf,
} from './errors';
import { answerMessageId, previousProgress, promptMessageId } from './identity';
import { isTerminalState, TASK_STATE, TaskView } from './task-view';

/** Polling `getTask`: the first wait, growing by half each time up to the last. */
const POLL_FIRST_MS = 250;
const POLL_MAX_MS = 3_000;
/** A stream silent this long is dropped and the task looked at again (a connection may die without a word). */
const STREAM_IDLE_MS = 30_000;
/** How long cancelling the remote task may take before the activity's own cancellation goes on without it. */
const CANCEL_TIMEOUT_MS = 5_000;
/** The re-attach lookup reads at most this many tasks (`ListTasks` pages of 50). */
const LOOKUP_PAGE_SIZE = 50;
const LOOKUP_MAX_PAGES = 4;
/** Slack for the remote clock when tasks are listed by status time. */
const CLOCK_SKEW_MS = 5 * 60_000;

function currentActivity(): Context | undefined {
  try {
    return Context.current();
  } catch {
    // Called directly, outside an activity.
    return undefined;
  }
}

/** The workflow asked for the cancel (not a shutdown, a heartbeat timeout, a pause or a reset). */
function cancelRequested(activity: Context): boolean {
  if (activity.cancellationDetails?.cancelRequested) return true;
  const reason: unknown = activity.cancellationSignal.reason;
  return reason instanceof CancelledFailure && reason.message === 'CANCELLED';
}

/** One A2A delegation (see the file's comment). */
export async function runA2ASubagent(
  input: RemoteSubagentInput & { provider: A2AProviderSettings },
): Promise<RemoteSubagentResult> {
  const run = new A2ARun(input, currentActivity());
  return await run.run();
}

class A2ARun {
  private readonly label: string;
  private readonly progress: RemoteProgress;
  private readonly view = new TaskView();
  private connection?: A2AConnection;
  private resumed?: RemoteResumption;
  private secrets: readonly string[] = [];
  /** The updates earlier attempts saw: the heartbeat's count runs on across attempts. */
  private readonly earlierUpdates: number;

  constructor(
    private readonly input: RemoteSubagentInput & { provider: A2AProviderSettings },
    private readonly activity: Context | undefined,
  ) {
    this.label = `A2A provider "${input.provider.name}"`;
    this.progress = previousProgress(activity?.info.heartbeatDetails) ?? { prompt_sent: false, updates: 0 };
    this.earlierUpdates = this.progress.updates;
    if (input.answer !== undefined) {
      this.view.taskId = input.answer.remote_task_id;
      this.view.contextId = input.answer.context_id;
    } else {
      this.view.taskId = this.progress.remote_task_id;
      this.view.contextId = this.progress.context_id;
    }
  }

  async run(): Promise<RemoteSubagentResult> {
    keepHeartbeatDetails(() => this.progress);
    let resolved: ResolvedValues;
    try {
      resolved = resolveEnvReferences(
        this.input.provider.headers ?? {},
        process.env,
        `subagent_providers.${this.input.provider.name}.headers`,
      );
    } catch (err) {
      if (err instanceof RemoteSettingsError) return this.view.result('failed', { error: err.message });
      throw err;
    }
    this.secrets = resolved.secrets;
    const left = this.input.deadline_ms - Date.now();
    // Past it already (a retry after the wall clock ran out): nothing is sent, a known task is cancelled.
    if (left <= 0) return await this.timedOut(resolved);
    const deadline = AbortSignal.timeout(left);
    try {
      return await whileHeartbeating((signal) => this.follow(resolved, signal), { signal: deadline });
    } catch (err) {
      return await this.ended(err, deadline.aborted, resolved);
    }
  }

  /** Connects, sends (or re-attaches), and follows the task until it settles. */
  private async follow(resolved: ResolvedValues, signal: AbortSignal): Promise<RemoteSubagentResult> {
    this.connection = await connectA2A(this.input.provider, this.label, resolved, signal);
    if (this.input.answer !== undefined) await this.sendAnswer(this.connection, signal);
    else await this.sendPrompt(this.connection, signal);
    await this.watch(this.connection, signal);
    const end = this.view.end ?? 'failed';
    return this.view.result(end, { ...(this.resumed !== undefined && { resumed: this.resumed }) });
  }

  private async sendPrompt(connection: A2AConnection, signal: AbortSignal): Promise<void> {
    const messageId = promptMessageId(this.input.delegation_id);
    if (this.progress.remote_task_id !== undefined) {
      this.resumed = 'reattached';
      return;
    }
    if (this.progress.prompt_sent || (this.activity?.info.attempt ?? 1) > 1) {
      const found = await this.lookUp(connection, messageId, signal);
      if (found !== undefined) {
        this.view.applyTask(found);
        this.record();
        this.resumed = 'reattached';
        return;
      }
    }
    await this.send(connection, this.message(messageId, this.input.prompt), signal);
  }

  private async sendAnswer(connection: A2AConnection, signal: AbortSignal): Promise<void> {
    const answer = this.input.answer as NonNullable<RemoteSubagentInput['answer']>;
    const messageId = answerMessageId(this.input, this.activity);
    if (this.progress.prompt_sent || (this.activity?.info.attempt ?? 1) > 1) {
      const task = await this.getTask(connection, signal);
      const arrived = task.history.some((m) => m.messageId === messageId);
      if (arrived || task.status?.state !== TASK_STATE.input_required) {
        this.resumed = 'reattached';
        return;
      }
    }
    // The task is known before the send: nothing is left to look up if this attempt dies.
    this.record();
    await this.send(
      connection,
      this.message(messageId, answer.text, { taskId: answer.remote_task_id, contextId: answer.context_id }),
      signal,
    );
  }

  private message(
    messageId: string,
    text: string,
    ids: { taskId?: string; contextId?: string } = {},
  ): Message {
    return {
      messageId,
      taskId: ids.taskId ?? '',
      contextId: ids.contextId ?? '',
      role: 1, // Role.ROLE_USER
      parts: [
        {
          content: { $case: 'text', value: text },
          mediaType: 'text/plain',
          filename: '',
          metadata: undefined,
        },
      ],
      metadata: this.input.model !== undefined ? { model: this.input.model } : undefined,
      extensions: [],
      referenceTaskIds: [],
    };
  }

  /** Sends one message: `prompt_sent` is heartbeated first, the task id as soon as the agent names it. */
  private async send(connection: A2AConnection, message: Message, signal: AbortSignal): Promise<void> {
    this.progress.prompt_sent = true;
    this.beat();
    const request = {
      tenant: '',
      message,
      configuration: {
        acceptedOutputModes: [],
        taskPushNotificationConfig: undefined,
        // Polling: the send answers with the task at once (its id is recorded before any wait).
        returnImmediately: true,
      },
      metadata: undefined,
    };
    if (connection.streaming) {
      await this.consume((s) => connection.client.sendMessageStream(request, { signal: s }), signal);
      return;
    }
    const answer = await connection.client.sendMessage(request, { signal });
    if ('messageId' in answer) this.view.applyMessage(answer);
    else this.view.applyTask(answer);
    this.record();
  }

  /**
   * Follows the task until it settles: a fresh snapshot first (a stream may have ended early, a re-attached
   * attempt knows nothing yet), then the stream again, or a poll.
   */
  private async watch(connection: A2AConnection, signal: AbortSignal): Promise<void> {
    let streaming = connection.streaming;
    let wait = 0;
    let interval = POLL_FIRST_MS;
    for (;;) {
      if (this.view.taskId === undefined) {
        if (this.view.end !== undefined) return; // A message-only reply.
        throw new A2AUnavailableError(`${this.label}: the agent's answer named no task and gave no message`);
      }
      if (wait > 0) await sleep(wait, undefined, { signal });
      this.view.applyTask(await this.getTask(connection, signal));
      this.record();
      if (this.view.end !== undefined) return;
      if (!streaming) {
        wait = interval;
        interval = Math.min(Math.round(interval * 1.5), POLL_MAX_MS);
        continue;
      }
      const before = this.view.updates;
      const id = this.view.taskId;
      try {
        await this.consume(
          (s) => connection.client.resubscribeTask({ tenant: '', id }, { signal: s }),
          signal,
        );
      } catch (err) {
        // The agent does not resubscribe (or the task settled meanwhile): the next snapshot says which.
        if (protocolReason(err) !== 'UNSUPPORTED_OPERATION') throw err;
        streaming = false;
      }
      // A stream that gives the snapshot alone and ends will not tell more next time: poll instead.
      if (this.view.end === undefined && this.view.updates - before <= 1) streaming = false;
      wait = 0;
    }
  }

  /**
   * Folds a stream's events into the view until the task settles. A stream that breaks off, or stays silent
   * for STREAM_IDLE_MS, ends quietly once the task is known (the caller looks again); before that it is the
   * agent being unavailable.
   */
  private async consume(
    open: (signal: AbortSignal) => AsyncGenerator<StreamResponse, void, undefined>,
    signal: AbortSignal,
  ): Promise<void> {
    const idle = new AbortController();
    const timer = setTimeout(() => idle.abort(), STREAM_IDLE_MS);
    try {
      for await (const event of open(AbortSignal.any([signal, idle.signal]))) {
        timer.refresh();
        this.view.apply(event);
        this.record();
        if (this.view.end !== undefined) return;
      }
    } catch (err) {
      if (signal.aborted) throw err;
      if (!idle.signal.aborted && !isNetworkFault(err)) throw err;
      if (this.view.taskId === undefined) {
        throw new A2AUnavailableError(`${this.label}: the stream broke off before the agent named its task`);
      }
    } finally {
      clearTimeout(timer);
      // Closes the connection of a stream left before its end.
      idle.abort();
    }
  }

  private async getTask(connection: A2AConnection, signal: AbortSignal): Promise<Task> {
    return await connection.client.getTask({ tenant: '', id: this.view.taskId ?? '' }, { signal });
  }

  /**
   * The task an earlier attempt's message made, found by the message's id in the tasks' histories; undefined
   * when none has it, or when the agent cannot list its tasks.
   */
  private async lookUp(
    connection: A2AConnection,
    messageId: string,
    signal: AbortSignal,
  ): Promise<Task | undefined> {
    const since = this.activity?.info.scheduledTimestampMs;
    let pageToken = '';
    for (let page = 0; page < LOOKUP_MAX_PAGES; page += 1) {
      let listed;
      try {
        listed = await connection.client.listTasks(
          {
            tenant: '',
            contextId: '',
            // Any state (the proto's unset value).
            status: 0 as TaskState,
            pageSize: LOOKUP_PAGE_SIZE,
            pageToken,
            statusTimestampAfter:
              since === undefined ? undefined : new Date(since - CLOCK_SKEW_MS).toISOString(),
            includeArtifacts: false,
          },
          { signal },
        );
      } catch (err) {
        if (protocolReason(err) === undefined) throw err;
        this.activity?.log.warn(`${this.label}: the agent cannot list its tasks; the prompt is sent again`, {
          message_id: messageId,
          reason: this.clean(reasonOf(err)),
        });
        return undefined;
      }
      const found = listed.tasks.find((task) => task.history.some((m) => m.messageId === messageId));
      if (found !== undefined) return found;
      if (listed.nextPageToken === '') return undefined;
      pageToken = listed.nextPageToken;
    }
    return undefined;
  }

  /** Heartbeats the task's id and context the first time the view knows them. */
  private record(): void {
    this.progress.updates = this.earlierUpdates + this.view.updates;
    if (this.view.taskId === this.progress.remote_task_id && this.view.contextId === this.progress.context_id)
      return;
    if (this.view.taskId !== undefined) this.progress.remote_task_id = this.view.taskId;
    if (this.view.contextId !== undefined) this.progress.context_id = this.view.contextId;
    this.beat();
  }

  private beat(): void {
    this.activity?.heartbeat(this.progress);
  }

  private clean(text: string): string {
    return redactSecrets(text, this.secrets);
  }

  /** How an attempt that did not settle ends: rethrown, retried, or a result. */
  private async ended(
    err: unknown,
    pastDeadline: boolean,
    resolved: ResolvedValues,
  ): Promise<RemoteSubagentResult> {
    const activity = this.activity;
    if (activity?.cancellationSignal.aborted) {
      if (cancelRequested(activity)) await this.cancelRemote(resolved);
      throw err;
    }
    if (pastDeadline) return await this.timedOut(resolved);
    const resumed = this.resumed !== undefined ? { resumed: this.resumed } : {};
    if (err instanceof A2AAuthError)
      return this.view.result('auth_required', { error: err.message, ...resumed });
    if (isNetworkFault(err)) {
      throw ApplicationFailure.create({
        message: this.clean(
          err instanceof A2AUnavailableError ? err.message : `${this.label}: ${reasonOf(err)}`,
        ),
        type: A2A_UNAVAILABLE_ERROR_TYPE,
        nonRetryable: false,
      });
    }
    if (err instanceof A2ACardError || protocolReason(err) !== undefined || err instanceof Error) {
      const message = err instanceof A2ACardError ? err.message : `${this.label}: ${reasonOf(err)}`;
      return this.view.result('failed', { error: this.clean(message), ...resumed });
    }
    throw err;
  }

  private async timedOut(resolved: ResolvedValues): Promise<RemoteSubagentResult> {
    await this.cancelRemote(resolved);
    return this.view.result('timed_out', {
      error: "the remote agent did not finish within the subagent's time limit",
      ...(this.resumed !== undefined && { resumed: this.resumed }),
    });
  }

  /**
   * Cancels the remote task, best effort within CANCEL_TIMEOUT_MS: the one this attempt knows, or (the send was
   * under way) the one its message made. A task already settled is left alone.
   */
  private async cancelRemote(resolved: ResolvedValues): Promise<void> {
    const signal = AbortSignal.timeout(CANCEL_TIMEOUT_MS);
    try {
      const connection =
        this.connection ??
        (this.progress.remote_task_id !== undefined
          ? await connectA2A(this.input.provider, this.label, resolved, signal)
          : undefined);
      if (connection === undefined) return;
      if (this.view.taskId === undefined && this.progress.prompt_sent && this.input.answer === undefined) {
        const found = await this.lookUp(connection, promptMessageId(this.input.delegation_id), signal);
        if (found !== undefined) this.view.applyTask(found);
      }
      const id = this.view.taskId;
      if (id === undefined || isTerminalState(this.view.state)) return;
      await connection.client.cancelTask({ tenant: '', id, metadata: undefined }, { signal });
    } catch (err) {
      this.activity?.log.warn(`${this.label}: the remote task could not be cancelled`, {
        remote_task_id: this.view.taskId,
        reason: this.clean(reasonOf(err)),
      });
    }
  }
}
