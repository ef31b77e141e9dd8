/**
 * One delegation to an ACP agent (`runRemoteSubagent` for a provider of type `acp`): spawn the agent in the
 * workspace, `initialize`, open a session, send the prompt, fold its `session/update` notifications into the
 * step log, answer its permission requests from the guardrail policy, and map how the turn stopped. The session
 * id is heartbeated before the prompt is sent: an attempt after a worker crash loads that session when the agent
 * can (`session/load`) and prompts it to go on, else starts a new one told that the last attempt was
 * interrupted, and says which. The agent's process is stopped on every path.
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { clearTimeout, setTimeout } from 'node:timers';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { TokenUsage } from '../../../contracts/messages';
import type {
  AcpProviderSettings,
  RemoteProgress,
  RemoteResumption,
  RemoteRunEnd,
  RemoteSubagentInput,
  RemoteSubagentResult,
} from '../../../contracts/remote-subagent';
import { keepHeartbeatDetails, whileHeartbeating } from '../../activity-context';
import { agentEnvironment } from './agent-env';
import { RemoteSettingsError } from '../shared';
import { AgentProcess, AgentSpawnError, describeExit, type AgentExit } from './agent-process';
import { permissionDecider } from './permissions';
import { acpSdk, type Acp, type AcpSdk } from './sdk';
import { AcpStepLog } from './step-log';

/** The prompt of a loaded session whose last turn an interrupted attempt did not finish. */
export const ACP_CONTINUE_PROMPT =
  'The previous attempt was interrupted; continue the task and give the final answer.';
/** What a new session's prompt starts with when an earlier attempt was interrupted. */
export const ACP_INTERRUPTED_NOTE =
  'Note: a previous attempt at this task was interrupted before it finished. What it did in the workspace ' +
  'may still be there: check before you redo work.';

/** How long a turn has to end after `session/cancel` (the agent then answers `cancelled`). */
const CANCEL_GRACE_MS = 5000;
/** How long a closed connection waits for the agent's exit before it counts as something else. */
const EXIT_WAIT_MS = 2000;
/** The largest message the agent may send, in bytes: one update, not the conversation. */
const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

type AcpInput = RemoteSubagentInput & { provider: AcpProviderSettings };

/** The activity's work for an ACP provider (called by `runRemoteSubagent`). */
export async function runAcpSubagent(input: AcpInput): Promise<RemoteSubagentResult> {
  const previous = previousProgress();
  const progress: RemoteProgress = previous ?? { prompt_sent: false, updates: 0 };
  // From the first beat on, what a later attempt resumes from: the session the last attempt prompted.
  keepHeartbeatDetails(() => progress);
  const log = new AcpStepLog();
  const failed = (error: string): RemoteSubagentResult => ({
    end: 'failed',
    error: `ACP agent ${input.provider.name}: ${error}`,
    messages: log.messages(),
  });

  let env: NodeJS.ProcessEnv;
  try {
    env = agentEnvironment(input.provider);
  } catch (err) {
    if (err instanceof RemoteSettingsError) return failed(err.message);
    throw err;
  }
  const workspace = resolve(input.workspace);
  if (!isDirectory(workspace)) return failed(`its workspace ${workspace} is not a directory`);
  let sdk: AcpSdk;
  try {
    sdk = acpSdk();
  } catch (err) {
    return failed((err as Error).message);
  }
  let agent: AgentProcess;
  try {
    agent = await AgentProcess.start({ ...input.provider, cwd: workspace, env });
  } catch (err) {
    if (err instanceof AgentSpawnError) return failed(`cannot start it: ${err.message}`);
    throw err;
  }

  const turn = new AcpTurn(sdk, agent, input, workspace, progress, log, previous);
  let work: Promise<RemoteSubagentResult> | undefined;
  try {
    return await whileHeartbeating((signal) => (work = turn.run(signal)));
  } catch (err) {
    // A cancel settles the wait at once; the turn meanwhile sends session/cancel and gives the agent its grace.
    if (work !== undefined) await work.catch(() => undefined);
    throw err;
  } finally {
    turn.close();
    // The stop may take seconds (an agent deaf to SIGTERM): beat meanwhile, unless the activity is cancelled.
    const stopping = agent.stop();
    await whileHeartbeating(() => stopping).catch(() => undefined);
    await stopping;
  }
}

/** The turn stopped waiting: the activity was cancelled, or the deadline passed. */
class Stopped extends Error {
  override name = 'Stopped';
}

/** A request the agent answered with an error, or could not answer (the connection closed). */
class RequestFailed extends Error {
  override name = 'RequestFailed';

  constructor(
    readonly method: string,
    override readonly cause: unknown,
  ) {
    super(`${method}: ${causeText(cause)}`);
  }

  /** The agent answered with a JSON-RPC error (it did not just go away). */
  get answered(): boolean {
    return typeof (this.cause as { code?: unknown } | undefined)?.code === 'number';
  }

  get code(): number | undefined {
    const code = (this.cause as { code?: unknown } | undefined)?.code;
    return typeof code === 'number' ? code : undefined;
  }
}

/** ACP's "authentication required" error code. */
const AUTH_REQUIRED_CODE = -32000;

function causeText(cause: unknown): string {
  const message = (cause as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' && message !== '' ? message : String(cause);
}

/** One run of the agent: its connection, its session and the turn the prompt starts. */
class AcpTurn {
  private connection: Acp.ClientConnection | undefined;
  private sessionId: string | undefined;
  /** Updates before the prompt (a loaded session's history) are not this turn's steps. */
  private collecting = false;
  /** session/cancel is sent: what the agent asks from now on is answered `cancelled`. */
  private cancelling = false;
  private readonly decide: ReturnType<typeof permissionDecider>;

  constructor(
    private readonly sdk: AcpSdk,
    private readonly agent: AgentProcess,
    private readonly input: AcpInput,
    private readonly workspace: string,
    private readonly progress: RemoteProgress,
    private readonly log: AcpStepLog,
    private readonly previous: RemoteProgress | undefined,
  ) {
    this.decide = permissionDecider(input.guardrail_policy, {
      provider: input.provider.name,
      delegation_id: input.delegation_id,
    });
  }

  async run(signal: AbortSignal): Promise<RemoteSubagentResult> {
    const deadline = AbortSignal.timeout(Math.max(0, this.input.deadline_ms - Date.now()));
    const stop = AbortSignal.any([signal, deadline]);
    try {
      return await this.converse(stop);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (err instanceof Stopped) {
        const when = this.collecting ? 'during its turn (session/cancel was sent)' : 'before its turn began';
        return this.result('timed_out', `the subagent's time ran out ${when}`);
      }
      if (err instanceof RequestFailed) return await this.requestFailed(err);
      throw err;
    }
  }

  /** Lets go of the connection (the process is stopped by its owner). */
  close(): void {
    this.connection?.close();
  }

  private async converse(stop: AbortSignal): Promise<RemoteSubagentResult> {
    const { sdk } = this;
    const app = sdk
      .client({ name: 'durable-subagents' })
      .onNotification('session/update', ({ params }) => this.onUpdate(params))
      .onRequest('session/request_permission', ({ params }) => this.onPermission(params));
    this.connection = app.connect(
      sdk.ndJsonStream(
        Writable.toWeb(this.agent.stdin) as WritableStream<Uint8Array>,
        Readable.toWeb(this.agent.stdout) as ReadableStream<Uint8Array>,
        { maxMessageBytes: MAX_MESSAGE_BYTES },
      ),
    );
    const peer = this.connection.agent;
    const init = await this.request(stop, 'initialize', () =>
      // No file system or terminal of the worker's is offered: the agent works in its own process.
      peer.request('initialize', {
        protocolVersion: sdk.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      }),
    );
    if (init.protocolVersion !== sdk.PROTOCOL_VERSION) {
      return this.result(
        'failed',
        `it speaks ACP version ${init.protocolVersion}; this worker speaks version ${sdk.PROTOCOL_VERSION}`,
      );
    }
    const opened = await this.openSession(stop, peer, init.agentCapabilities?.loadSession === true);
    this.sessionId = opened.sessionId;
    await this.chooseModel(stop, peer, opened.sessionId, opened.configOptions ?? []);

    this.progress.session_id = opened.sessionId;
    this.progress.prompt_sent = true;
    // Recorded before the prompt goes: a later attempt must not send it as new work.
    keepHeartbeatDetails(() => this.progress);
    this.collecting = true;
    return await this.prompt(stop, peer, opened.sessionId, opened.prompt, opened.resumed);
  }

  /**
   * The session the prompt goes to: a new one, or, after an interrupted attempt, that attempt's session loaded
   * (when the agent can) or a new one whose prompt says what happened.
   */
  private async openSession(
    stop: AbortSignal,
    peer: Acp.ClientConnection['agent'],
    canLoad: boolean,
  ): Promise<{
    sessionId: string;
    configOptions?: Acp.SessionConfigOption[] | null;
    prompt: string;
    resumed?: RemoteResumption;
  }> {
    const earlier = this.previous?.session_id;
    if (earlier !== undefined && canLoad) {
      try {
        const loaded = await this.request(stop, 'session/load', () =>
          peer.request('session/load', { sessionId: earlier, cwd: this.workspace, mcpServers: [] }),
        );
        return {
          sessionId: earlier,
          configOptions: loaded.configOptions,
          prompt: ACP_CONTINUE_PROMPT,
          resumed: 'session_loaded',
        };
      } catch (err) {
        if (!(err instanceof RequestFailed && err.answered)) throw err;
        this.log.note(`could not load session ${earlier} (${causeText(err.cause)}); starting a new one`);
      }
    }
    const created = await this.request(stop, 'session/new', () =>
      peer.request('session/new', { cwd: this.workspace, mcpServers: [] }),
    );
    return earlier === undefined
      ? { sessionId: created.sessionId, configOptions: created.configOptions, prompt: this.input.prompt }
      : {
          sessionId: created.sessionId,
          configOptions: created.configOptions,
          prompt: `${ACP_INTERRUPTED_NOTE}\n\n${this.input.prompt}`,
          resumed: 'restarted',
        };
  }

  /**
   * The load's `agent_options.model`, through the session's model option (ACP's `session/set_config_option`)
   * when the agent offers that model; otherwise a note, and the agent's own choice stands.
   */
  private async chooseModel(
    stop: AbortSignal,
    peer: Acp.ClientConnection['agent'],
    sessionId: string,
    configOptions: readonly Acp.SessionConfigOption[],
  ): Promise<void> {
    const model = this.input.model;
    if (model === undefined) return;
    const option = configOptions.find(
      (candidate) => candidate.category === 'model' && candidate.type === 'select',
    );
    const values =
      option?.type === 'select'
        ? option.options.flatMap((entry) => ('group' in entry ? entry.options : [entry]))
        : [];
    const value = values.find((entry) => entry.value === model || entry.name === model);
    if (option === undefined || option.type !== 'select' || value === undefined) {
      this.log.note(`the agent offers no model ${model}; it runs with its own choice`);
      return;
    }
    if (option.currentValue === value.value) return;
    try {
      await this.request(stop, 'session/set_config_option', () =>
        peer.request('session/set_config_option', { sessionId, configId: option.id, value: value.value }),
      );
    } catch (err) {
      if (!(err instanceof RequestFailed && err.answered)) throw err;
      this.log.note(
        `the agent refused model ${model} (${causeText(err.cause)}); it runs with its own choice`,
      );
    }
  }

  private async prompt(
    stop: AbortSignal,
    peer: Acp.ClientConnection['agent'],
    sessionId: string,
    text: string,
    resumed: RemoteResumption | undefined,
  ): Promise<RemoteSubagentResult> {
    const response = peer.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
    // Whichever way the wait ends, the answer is observed (a rejection after a cancel is expected).
    response.catch(() => undefined);
    let answered: Acp.PromptResponse;
    try {
      answered = await until(response, stop);
    } catch (err) {
      if (!(err instanceof Stopped)) throw await this.promptFailed(err);
      this.cancelling = true;
      await peer.notify('session/cancel', { sessionId }).catch(() => undefined);
      // The agent ends the turn with `cancelled` and its updates so far; it gets a grace to do it.
      await settledWithin(response, CANCEL_GRACE_MS);
      throw err;
    }
    return this.stopped(answered, resumed);
  }

  /** The result for how the turn stopped; `completed` only for `end_turn`. */
  private stopped(response: Acp.PromptResponse, resumed: RemoteResumption | undefined): RemoteSubagentResult {
    const usage = reportedUsage(response);
    const extra = { ...(usage && { usage }), ...(resumed && { resumed }) };
    switch (response.stopReason) {
      case 'end_turn':
        return { ...this.result('completed'), ...extra };
      case 'max_tokens':
        return {
          ...this.result('max_tokens', 'it stopped at its token limit (max_tokens) before it finished'),
          ...extra,
        };
      case 'max_turn_requests':
        return {
          ...this.result(
            'max_turn_requests',
            'it reached its limit of model requests for one turn (max_turn_requests) before it finished',
          ),
          ...extra,
        };
      case 'refusal':
        return { ...this.result('refusal', 'it refused to go on (refusal)'), ...extra };
      case 'cancelled':
        return { ...this.result('cancelled', 'it cancelled the turn (cancelled)'), ...extra };
      default:
        return {
          ...this.result(
            'failed',
            `it stopped for a reason this worker does not know: ${String(response.stopReason)}`,
          ),
          ...extra,
        };
    }
  }

  /** Why the prompt's request failed, as what the activity throws or returns. */
  private async promptFailed(err: unknown): Promise<unknown> {
    if (typeof (err as { code?: unknown }).code === 'number') return new RequestFailed('session/prompt', err);
    const exit = await this.exitSoon();
    if (exit === undefined) return new RequestFailed('session/prompt', err);
    // A crash mid-turn: the next attempt resumes the session (or starts again, told so).
    const tail = this.agent.stderrTail();
    return ApplicationFailure.retryable(
      `ACP agent ${this.input.provider.name} ${describeExit(exit)} during its turn` +
        (tail === '' ? '' : `; the end of its stderr: ${tail}`),
      'AcpAgentExited',
    );
  }

  /** A request before the prompt failed: the agent went away, refused, or wants authentication. */
  private async requestFailed(err: RequestFailed): Promise<RemoteSubagentResult> {
    if (err.code === AUTH_REQUIRED_CODE) {
      return this.result(
        'auth_required',
        `it requires authentication (${err.method}: ${causeText(err.cause)})`,
      );
    }
    if (!err.answered) {
      const exit = await this.exitSoon();
      if (exit !== undefined) {
        const tail = this.agent.stderrTail();
        return this.result(
          'failed',
          `it ${describeExit(exit)} before its turn (during ${err.method})` +
            (tail === '' ? '' : `; the end of its stderr: ${tail}`),
        );
      }
    }
    return this.result('failed', `${err.method} failed: ${causeText(err.cause)}`);
  }

  /** How the agent exited, if it does within a moment (a closed connection is usually its exit). */
  private async exitSoon(): Promise<AgentExit | undefined> {
    await settledWithin(this.agent.exited, EXIT_WAIT_MS);
    return this.agent.exit;
  }

  private result(end: RemoteRunEnd, error?: string): RemoteSubagentResult {
    const text = this.log.answer();
    return {
      end,
      ...(text !== '' && { text }),
      ...(error !== undefined && { error: `ACP agent ${this.input.provider.name}: ${error}` }),
      ...(this.sessionId !== undefined && { remote_task_id: this.sessionId }),
      messages: this.log.messages(),
    };
  }

  /** A request to the agent, raced against `stop`; its failure as a RequestFailed. */
  private async request<T>(stop: AbortSignal, method: string, send: () => Promise<T>): Promise<T> {
    const sent = send();
    sent.catch(() => undefined);
    try {
      return await until(sent, stop);
    } catch (err) {
      if (err instanceof Stopped) throw err;
      throw new RequestFailed(method, err);
    }
  }

  private onUpdate(params: Acp.SessionNotification): void {
    if (!this.collecting || params.sessionId !== this.sessionId) return;
    this.progress.updates += 1;
    this.log.update(params.update);
  }

  private onPermission(params: Acp.RequestPermissionRequest): Acp.RequestPermissionResponse {
    const id = params.toolCall.toolCallId;
    if (this.cancelling) {
      this.log.permission(id, 'refused: the turn is being cancelled; answered cancelled', false);
      return { outcome: { outcome: 'cancelled' } };
    }
    const answer = this.decide(params, this.log.toolCallInfo(id));
    this.log.permission(id, answer.step, answer.allowed);
    return { outcome: answer.outcome };
  }
}

/** `promise`, or a Stopped rejection as soon as `stop` aborts. */
function until<T>(promise: Promise<T>, stop: AbortSignal): Promise<T> {
  if (stop.aborted) return Promise.reject(new Stopped('stopped'));
  return new Promise<T>((resolvePromise, reject) => {
    const onStop = (): void => reject(new Stopped('stopped'));
    stop.addEventListener('abort', onStop, { once: true });
    promise.then(
      (value) => {
        stop.removeEventListener('abort', onStop);
        resolvePromise(value);
      },
      (err: unknown) => {
        stop.removeEventListener('abort', onStop);
        reject(err);
      },
    );
  });
}

/** Waits until `promise` settles, at most `ms`. */
async function settledWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolvePromise) => {
    timer = setTimeout(resolvePromise, ms);
  });
  try {
    await Promise.race([
      promise.then(
        () => undefined,
        () => undefined,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Token usage the agent reported with the turn (an ACP field still marked unstable); absent when none. */
function reportedUsage(response: Acp.PromptResponse): TokenUsage | undefined {
  const usage = (response as { usage?: unknown }).usage;
  if (usage === null || typeof usage !== 'object') return undefined;
  const { inputTokens, outputTokens, totalTokens } = usage as Record<string, unknown>;
  const count = (value: unknown): value is number =>
    typeof value === 'number' && Number.isFinite(value) && value >= 0;
  if (!count(inputTokens) || !count(outputTokens)) return undefined;
  return {
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    total_tokens: count(totalTokens) ? totalTokens : inputTokens + outputTokens,
  };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The last heartbeat of an earlier attempt, when it had opened a session. */
function previousProgress(): RemoteProgress | undefined {
  let details: unknown;
  try {
    details = Context.current().info.heartbeatDetails;
  } catch {
    return undefined;
  }
  if (details === null || typeof details !== 'object') return undefined;
  const { session_id: sessionId, updates } = details as Partial<RemoteProgress>;
  if (typeof sessionId !== 'string' || sessionId === '') return undefined;
  return { session_id: sessionId, prompt_sent: true, updates: typeof updates === 'number' ? updates : 0 };
}
