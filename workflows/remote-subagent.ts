/**
 * A subagent whose work a remote agent does (an `a2a` or `acp` tool load): still a `subagentWorkflow` (its id,
 * ledger entry, events, admission slot, wall clock, cancellation and Web UI are a local one's), whose run is
 * one heartbeating activity, `runRemoteSubagent`. A worker that dies mid-run costs no repeated work: the
 * activity's next attempt re-attaches from its heartbeat details (an A2A task, an ACP session). Cancelling the
 * subagent cancels the activity and waits for it to cancel the remote task or tear the process down. The
 * remote end maps to the subagent's result here, as pure functions: `completed` is the only success, a
 * question (`input_required`) goes to the person through `ask_clarification`'s machinery and its answer back
 * to the same remote task.
 */
import type { WorkspaceRoute } from './workspace-route';
import {
  ActivityCancellationType,
  ActivityFailure,
  CancellationScope,
  isCancellation,
  patched,
  proxyActivities,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { ProjectActivities } from '../activities';
import { QUESTION_MAX_CHARS, timedOutToolText } from '../contracts/clarification';
import type { AssistantMessage } from '../contracts/messages';
import type {
  RemoteResumption,
  RemoteRunEnd,
  RemoteSubagentInput,
  RemoteSubagentResult,
} from '../contracts/remote-subagent';
import { policyFor } from '../contracts/guardrail-rules';
import type { RemoteChildLoad } from '../contracts/input-schemas';
import { providerLabel } from '../contracts/subagent-providers';
import type { SubagentInput } from '../contracts/subagent';
import { truncateHeadTail } from '../contracts/text';
import type { AgentLoopState } from './agent-loop';
import { clockEnd, type AgentRunEnd } from './agent-run';
import type { Clarifications } from './clarification';
import { buildStep } from '../contracts/steps';
import { countReported, treeBudgetGate } from './budget/gate';

const EXPIRED = Symbol('wall clock expired');

/** A dead worker is noticed within seconds, and the activity's next attempt re-attaches. */
export const REMOTE_HEARTBEAT_TIMEOUT = '5 seconds';
/** After the activity's own deadline, the workflow cancels it (an attempt that ignores its deadline). */
const DEADLINE_GRACE_MS = 10_000;
/** Attempts after a worker died or the activity threw (a remote side that keeps failing is a `failed` end). */
const MAX_ATTEMPTS = 10;
/**
 * Histories recorded while a cancel of the subagent ended its run at once: the wall clock's timer, cancelled with
 * the subagent, ended the wait before the activity had cancelled the remote task or torn the agent down.
 */
const CANCEL_WAITS_PATCH = 'remote-subagent-cancel-waits';
/** Histories recorded while a remote agent's usage was not counted against the run's tree budget. */
const REMOTE_SPENDS_PATCH = 'tree-budget-remote';

/** What each end other than `completed` means, in the words of the error the lead reads. */
const END_TEXT: Readonly<Record<Exclude<RemoteRunEnd, 'completed' | 'input_required'>, string>> = {
  failed: 'the remote agent failed',
  cancelled: 'the remote agent cancelled the task',
  rejected: 'the remote agent rejected the task',
  auth_required: 'the remote agent requires authentication',
  max_tokens: 'the remote agent ran out of tokens (max_tokens)',
  max_turn_requests: 'the remote agent reached its turn limit (max_turn_requests)',
  refusal: 'the remote agent refused the task (refusal)',
  timed_out: 'the remote agent did not finish within the wall clock',
};

/** How a resumed attempt went on, in the step log and the result's text. */
const RESUMED_TEXT: Readonly<Record<RemoteResumption, string>> = {
  reattached:
    'the worker running this delegation stopped; the next attempt re-attached to the same remote task',
  session_loaded:
    'the worker running this delegation stopped; the next attempt loaded the same remote session and went on',
  restarted:
    'the worker running this delegation stopped; the remote agent could not resume, so the task was started ' +
    'again (its prompt said the previous attempt was interrupted)',
};

/** The prompt the remote agent gets: the load's persona first, when it has one (the seed's persona capability). */
export function remotePrompt(prompt: string, persona: string | undefined): string {
  return persona === undefined ? prompt : `${persona}\n\n${prompt}`;
}

/** The error of an end other than `completed`: the provider, what the end means, the remote side's reason. */
export function remoteEndError(
  remote: Pick<RemoteChildLoad, 'provider'>,
  result: RemoteSubagentResult,
): string {
  const end = result.end === 'completed' || result.end === 'input_required' ? 'failed' : result.end;
  const reason = result.error?.trim();
  return `${providerLabel(remote.provider)}: ${END_TEXT[end]}${reason ? `: ${reason}` : ''}`;
}

/** How the subagent's run ends for a remote end (not `input_required`, which asks the person first). */
export function remoteRunEnd(
  remote: Pick<RemoteChildLoad, 'provider'>,
  result: RemoteSubagentResult,
): AgentRunEnd {
  switch (result.end) {
    case 'completed':
      return { kind: 'answered' };
    case 'timed_out':
      return { kind: 'timed_out' };
    case 'cancelled':
      return { kind: 'remote_ended', status: 'cancelled', error: remoteEndError(remote, result) };
    default:
      return { kind: 'remote_ended', status: 'failed', error: remoteEndError(remote, result) };
  }
}

/**
 * One exchange with the remote agent, into the loop state the subagent's result and steps query are built
 * from: its messages as steps, its usage as the remote side last reported it (absent stays absent), its text as the answer so far, and a
 * resumption said in the step log and the text.
 */
export function recordRemoteRun(
  state: AgentLoopState,
  result: RemoteSubagentResult,
  modelName: string,
): void {
  state.turns += 1;
  state.model_name = modelName;
  // The remote side's total for the delegation so far (an A2A task's usage runs on across its questions).
  if (result.usage) state.usage = result.usage;
  const note = result.resumed && `(Resumed: ${RESUMED_TEXT[result.resumed]}.)`;
  const messages: AssistantMessage[] = note ? [{ role: 'assistant', content: note }] : [];
  for (const message of [...messages, ...result.messages]) {
    state.step_seq += 1;
    state.steps.push(buildStep(state.step_seq, message));
  }
  const text = result.text?.trim() === '' ? undefined : result.text;
  if (text !== undefined) state.last_text = note ? `${text}\n\n${note}` : text;
}

/** The run's guardrail policy for this subagent: an ACP agent's permission requests are decided by it. */
function withPolicy(input: SubagentInput, agentName: string): Pick<RemoteSubagentInput, 'guardrail_policy'> {
  const { guardrails } = input.scope;
  const policy = guardrails && policyFor(guardrails, agentName);
  return policy ? { guardrail_policy: policy } : {};
}

/** The question a remote agent asked, as `ask_clarification`'s arguments. */
function remoteQuestion(remote: RemoteChildLoad, question: string | undefined) {
  return {
    question: truncateHeadTail(
      question?.trim() || 'The remote agent needs input to go on.',
      QUESTION_MAX_CHARS,
    ),
    clarification_type: 'missing_info' as const,
    context: `Asked by the remote agent ${providerLabel(remote.provider)} through ${remote.tool_name}.`,
  };
}

/** The activity's options: one attempt may take the whole wall clock, a cancel waits for the remote side. */
function remoteActivityOptions(timeoutSeconds: number, remote: RemoteChildLoad) {
  return {
    // One attempt may take the whole wall clock; heartbeats notice a dead worker sooner.
    startToCloseTimeout: `${timeoutSeconds + 60} seconds`,
    heartbeatTimeout: REMOTE_HEARTBEAT_TIMEOUT,
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: MAX_ATTEMPTS },
    // A cancel waits for the activity to cancel the remote task or tear the process down: nothing is left.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    summary: `${remote.tool_name} via ${providerLabel(remote.provider)}`,
  };
}

/**
 * How the run ends when the remote agent asked (`input_required`) and no person can answer: questions are off
 * in this run, or the remote side named no task to answer.
 */
function unanswerableQuestion(
  remote: Pick<RemoteChildLoad, 'provider'>,
  result: RemoteSubagentResult,
  canAsk: boolean,
): AgentRunEnd {
  if (!canAsk) {
    return {
      kind: 'remote_ended',
      status: 'failed',
      error:
        `${providerLabel(remote.provider)}: the remote agent needs input ` +
        `(${JSON.stringify(truncateHeadTail(result.question ?? '', 500))}), but questions to a person are ` +
        'off in this run (clarification.enabled)',
    };
  }
  return {
    kind: 'remote_ended',
    status: 'failed',
    error: `${providerLabel(remote.provider)}: the remote agent needs input but named no task to answer`,
  };
}

/**
 * The subagent's run on its remote provider: the activity, again with the person's answer after each
 * question, raced against the wall clock; cancellation reaches the remote side through the activity.
 */
export async function runRemoteAgent(
  input: SubagentInput,
  remote: RemoteChildLoad,
  state: AgentLoopState,
  clarifications: Clarifications | undefined,
  clockStartMs: number | undefined,
  route: WorkspaceRoute,
): Promise<AgentRunEnd> {
  const { agent } = input;
  const deadlineMs = clockEnd(clockStartMs ?? workflowInfo().startTime.getTime(), agent.timeout_seconds);
  const modelName = remote.model ?? providerLabel(remote.provider);
  const options = remoteActivityOptions(agent.timeout_seconds, remote);
  const { runRemoteSubagent } = proxyActivities<ProjectActivities>(options);
  const request: RemoteSubagentInput = {
    provider: remote.provider,
    // The same on every attempt and every answer: the remote side can tell a re-sent message.
    delegation_id: workflowInfo().workflowId,
    prompt: remotePrompt(input.prompt, remote.persona),
    ...(remote.model !== undefined && { model: remote.model }),
    workspace: input.scope.workspace,
    deadline_ms: deadlineMs,
    ...withPolicy(input, agent.name),
  };
  const cancelWaits = patched(CANCEL_WAITS_PATCH);
  // The tree budget counts what the remote agent reports spending (it cannot be reserved: it is known after).
  const budget =
    input.scope.tree_budget && patched(REMOTE_SPENDS_PATCH)
      ? treeBudgetGate(input.scope.tree_budget, input.run_id, (state.tree_budget ??= {}), true)
      : undefined;
  const scope = new CancellationScope();
  const clockScope = new CancellationScope();
  const expired = clockScope
    .run(() =>
      sleep(Math.max(0, deadlineMs + DEADLINE_GRACE_MS - Date.now()), {
        summary: `wall clock: timeout_seconds ${agent.timeout_seconds}`,
      }),
    )
    .then((): typeof EXPIRED => EXPIRED);
  // Cancelled with its scope when the run ends first.
  expired.catch(() => undefined);
  /** `work` in the cancellable scope, raced against the wall clock: its value, or EXPIRED (it was cancelled). */
  const inTime = async <T>(work: () => Promise<T>): Promise<T | typeof EXPIRED> => {
    const running = scope.run(work);
    // A cancel of the subagent cancels the clock's timer too: the run then ends when the activity has
    // acknowledged the cancel (the remote task cancelled, the agent's process gone), not before.
    const clock = cancelWaits ? expired.catch(() => running) : expired;
    const first = await Promise.race([running, clock]);
    if (first === EXPIRED) {
      scope.cancel();
      // It settles once the activity acknowledges the cancel (a question closes at once); the clock has spoken.
      running.catch(() => undefined);
    }
    return first;
  };
  try {
    let answer: RemoteSubagentInput['answer'];
    for (;;) {
      const result = await inTime(() =>
        // An ACP agent works in the run's workspace: on its home (a retried attempt re-attaches there; a moved
        // one starts on the new home); an A2A agent is elsewhere.
        remote.provider.type === 'acp'
          ? route.run(
              (place) =>
                runRemoteSubagent.executeWithOptions({ ...options, ...place.home, retry: options.retry }, [
                  {
                    ...request,
                    placement: place.placement,
                    ...(answer && { answer }),
                  },
                ]),
              true,
            )
          : runRemoteSubagent.executeWithOptions(options, [{ ...request, ...(answer && { answer }) }]),
      );
      if (result === EXPIRED) return { kind: 'timed_out' };
      const before = state.usage;
      recordRemoteRun(state, result, modelName);
      if (budget) countReported(budget, before, state.usage);
      if (result.end !== 'input_required') return remoteRunEnd(remote, result);
      if (!clarifications?.canAsk || result.remote_task_id === undefined) {
        return unanswerableQuestion(remote, result, clarifications?.canAsk === true);
      }
      const person = clarifications;
      const asked = await inTime(() => person.askPerson(remoteQuestion(remote, result.question)));
      if (asked === EXPIRED) return { kind: 'timed_out' };
      answer = {
        remote_task_id: result.remote_task_id,
        ...(result.context_id !== undefined && { context_id: result.context_id }),
        // No answer in time: the remote agent is told so, as a model is, and goes on on its best judgement.
        text: asked.answered ? asked.answer : timedOutToolText(asked.timeoutSeconds),
      };
    }
  } catch (err) {
    // A cancel of the subagent, or a dead worker's attempt ended by the cancel it could not acknowledge.
    if (isCancellation(err) || CancellationScope.current().consideredCancelled) return { kind: 'cancelled' };
    if (err instanceof ActivityFailure) {
      return {
        kind: 'remote_ended',
        status: 'failed',
        error: `${providerLabel(remote.provider)}: ${err.cause?.message ?? err.message}`,
      };
    }
    throw err;
  } finally {
    clockScope.cancel();
    // Its spend goes to the run's ledger, unless it carries on as new (a remote run does not).
    if (budget) await CancellationScope.nonCancellable(() => budget.close());
  }
}
