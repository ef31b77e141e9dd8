/**
 * `subagentWorkflow`: one delegated task, run on the shared agent loop (`runAgent`) and the same run lifecycle
 * as the lead (`runLifecycle`) once it has an execution slot (admission). Its outcome is always a result
 * (`failed`, `timed_out`, `cancelled` and refusals at admission included); only infrastructure faults throw.
 */
import {
  ApplicationFailure,
  getExternalWorkflowHandle,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { CLARIFICATION_TOOL_NAME } from '../contracts/clarification';
import { failOnInvalidSubagentInput } from '../contracts/inputs';
import { scoped, type UnscopedInput } from '../contracts/run-scope';
import type { ChatMessage } from '../contracts/messages';
import {
  recordsAfter,
  subagentProgressQuery,
  subagentProgressSignal,
  subagentStepsQuery,
  type SubagentProgress,
} from '../contracts/queries';
import {
  SUBAGENT_FAILED_PREFIX,
  SUBAGENT_FAILED_TYPE,
  SUBAGENT_TIMED_OUT_PREFIX,
  SUBAGENT_TIMED_OUT_TYPE,
  type SubagentInput,
  type SubagentResult,
} from '../contracts/subagent';
import { initialLoopState, restoreLoopState, type AgentLoopState, type LoopPlugins } from './agent-loop';
import {
  createApprovals,
  createClarifications,
  createDelegator,
  runContext,
  type RunContext,
} from './agent-run';
import type { Approvals } from './approvals';
import { runSubagentAgent } from './graph-subagent';
import { reportsOutcome } from './outcome';
import {
  runLifecycle,
  slotLabel,
  type ExecutionEnd,
  type RunOutcome,
  type RunStanding,
  type SlotRefusal,
} from './run-lifecycle';
import { withActiveSkills } from './skills';
import { forkedState, forkOriginOf } from './fork-state';
import { finishSubagent } from './subagent-result';
import { withAcceptance } from './item-acceptance';

/** Histories recorded before admission started the loop at once. */
const ADMISSION_PATCH = 'subagent-admission';

/** A subagent's words for a cancel, while it waited for its slot or while it ran. */
const CANCELLED = 'Task cancelled by user';

/** A child reports progress to its parent at most this often (history stays small). */
export const PROGRESS_REPORT_INTERVAL_MS = 15_000;

/** Sends `task_running` snapshots to the parent workflow, when there is one. */
function progressReporter(input: SubagentInput): LoopPlugins['onTurn'] {
  const parent = workflowInfo().parent;
  if (!parent) return undefined;
  const handle = getExternalWorkflowHandle(parent.workflowId, parent.runId);
  // The first report waits for the child to have run a while (from the input: older children report after
  // their first turn, and replay as they ran): most short children then send the parent nothing but a result.
  const firstAtMs =
    input.first_report_at !== undefined
      ? Date.parse(input.first_report_at)
      : workflowInfo().runStartTime.getTime() + (input.first_report_after_ms ?? 0);
  let lastReport: number | undefined;
  return (state) => {
    const now = Date.now();
    if (lastReport === undefined && now < firstAtMs) return;
    if (lastReport !== undefined && now - lastReport < PROGRESS_REPORT_INTERVAL_MS) return;
    lastReport = now;
    // A parent that has finished cannot take the report; the child's own result is what counts.
    void handle
      .signal(subagentProgressSignal, {
        task_id: input.task_id,
        turns: state.turns,
        ...(state.usage && { token_usage: state.usage }),
        ...(state.cost_usd !== undefined && { cost_usd: state.cost_usd }),
        ...(state.model_name && { model_name: state.model_name }),
      })
      .catch(() => undefined);
  };
}

/** What a subagent that may delegate starts with, from its input: the run's tool loads and their probe too. */
function delegationSpec({ provider_probe: probe, ...delegation }: NonNullable<SubagentInput['delegation']>) {
  return { ...delegation, ...(probe && { providerProbe: probe }) };
}

/** A new subagent's state, or the previous execution's when this one continues it. */
function startingState(input: SubagentInput): AgentLoopState {
  if (input.carry) return restoreLoopState(input.carry);
  // A fork's first execution: the original's kept turns, read from its history (workflows/fork-subagent.ts).
  if (input.fork) return forkedState(input.fork);
  // A fork child starts from the lead's completed turns (stored ones by reference); its prompt states only
  // what is new.
  const messages: ChatMessage[] = [
    { role: 'system', content: input.agent.system_prompt },
    ...(input.fork_messages ?? []).filter((m) => m.role !== 'system'),
    { role: 'user', content: input.prompt },
  ];
  return initialLoopState(
    { tail: messages, ...(input.fork_from && { fork_from: input.fork_from }) },
    messages.length - 1,
  );
}

/** What the progress query answers: where the subagent stands, its turns, tokens and last step. */
function subagentProgress(
  state: AgentLoopState,
  { awaitingSlot, finished }: RunStanding,
  approvals: Approvals | undefined,
): SubagentProgress {
  const held = approvals?.pending() ?? [];
  return {
    state: finished ? 'finished' : awaitingSlot ? 'queued' : 'running',
    turns: state.turns,
    ...(state.usage && { token_usage: state.usage }),
    ...(state.model_name && { model_name: state.model_name }),
    last_seq: state.step_seq,
    ...withActiveSkills(state),
    ...(held.length > 0 && { approvals: held }),
  };
}

/** The agent's own `skills:` list from the run's skills settings: absent, every enabled skill. */
function agentSkillList(input: SubagentInput): { list?: string[] } {
  const lists = input.scope.skills?.agents;
  return lists && Object.hasOwn(lists, input.agent.name) ? { list: lists[input.agent.name] } : {};
}

/** The subagent's run (its graph, or the agent loop), its wall clock counted from `admittedAt`. */
async function runSubagent(
  input: SubagentInput,
  context: RunContext,
  state: AgentLoopState,
  admittedAt: string | undefined,
  running: { approvals?: Approvals },
): Promise<ExecutionEnd<SubagentInput>> {
  const { agent } = input;
  // An agent that may delegate in turn runs the same delegation as the lead, one level deeper.
  const delegation = input.delegation && delegationSpec(input.delegation);
  const delegator = delegation && createDelegator(context, delegation, () => state);
  const clarifications = createClarifications(
    context,
    {
      name: agent.name,
      // A remote agent's questions (`input-required`) go to the person whenever the run takes questions.
      offered:
        input.scope.clarification !== undefined &&
        (input.remote !== undefined || agent.tools.includes(CLARIFICATION_TOOL_NAME)),
      // The lead's workflow id is its run id (every starter of this project sets it so).
      leadWorkflowId: input.run_id,
    },
    () => state,
    delegator,
  );
  const approvals = createApprovals(
    context,
    { name: agent.name, leadWorkflowId: input.run_id, recordSteps: true },
    () => state,
    delegator,
  );
  running.approvals = approvals;
  const end = await runSubagentAgent(input, {
    context,
    agent: {
      name: agent.name,
      model: agent.model,
      tools: agent.tools,
      ...(agent.mcp && { mcp: agent.mcp }),
      maxTurns: agent.max_turns,
      tokenBudget: agent.token_budget,
      // The wall clock spans every execution of the run: a continued one waits only for what is left of it.
      timeoutSeconds: agent.timeout_seconds,
      // From the slot's grant: a wait in the queue is not the subagent's own time.
      ...(admittedAt !== undefined && { clockStartMs: Date.parse(admittedAt) }),
      skills: { ...agentSkillList(input), prompt: input.prompt },
    },
    state,
    ...(delegator && { delegator }),
    clarifications,
    approvals,
    recordSteps: true,
    onTurn: progressReporter(input),
  });
  return {
    end: await withAcceptance(end, input.acceptance_criteria, state.last_text, context.route),
    clarifications,
    next: (carry) => ({
      ...input,
      scope: { ...input.scope, ...context.route.inputField() },
      // The transcript carries the fork's turns from here on.
      fork_messages: undefined,
      fork_from: undefined,
      ...(input.delegation && delegator && { delegation: { ...input.delegation, ledger: delegator.ledger } }),
      carry,
    }),
  };
}

/** Refused its slot before any model call: the result says so, so a batch can tell it from a failed run. */
function refusedResult({ status, error }: SlotRefusal): SubagentResult {
  return { status, error, ...(status === 'failed' && { admission_failure: true as const }), turns: 0 };
}

/** A fork's result says which run it is and where it came from (docs/fork.md); any other's is as it was. */
function withForkOrigin(input: SubagentInput, result: SubagentResult): SubagentResult {
  if (!input.fork) return result;
  return { ...result, run_id: input.run_id, ...forkOriginOf(input.fork, []) };
}

/** The structured result, from how the run ended and what its loop state holds. */
function endedResult(outcome: RunOutcome, input: SubagentInput, state: AgentLoopState): SubagentResult {
  return finishSubagent({
    status: outcome.status,
    // A subagent's stop reasons are the guards' (the status contract): the delegation limit is said in its
    // text, never as a stop reason.
    ...(outcome.stopReason && { stopReason: outcome.stopReason }),
    ...(outcome.errorFallback && { errorFallback: outcome.errorFallback }),
    ...(outcome.error !== undefined && { error: outcome.error }),
    finalText: state.last_text,
    timeoutSeconds: input.agent.timeout_seconds,
    modelName: state.model_name,
    tokenUsage: state.usage,
    costUsd: state.cost_usd,
    turns: state.turns,
  });
}

/** `started`: its run's settings in `scope`, or (recorded before the scope) at its top level. */
export async function subagentWorkflow(
  started: SubagentInput | UnscopedInput<SubagentInput>,
): Promise<SubagentResult> {
  const input = scoped<SubagentInput>(started);
  failOnInvalidSubagentInput(input);
  const context = runContext(input, input.run_id);
  const state = startingState(input);
  /** What the status query reads of the run once it runs: its held calls. */
  const running: { approvals?: Approvals } = {};
  setHandler(subagentStepsQuery, (afterSeq = 0) => recordsAfter(state.steps, afterSeq));
  return runLifecycle({
    input,
    state,
    agent: input.subagent_type,
    slot: {
      patch: ADMISSION_PATCH,
      request: {
        fairness_key: input.scope.fairness_key ?? input.run_id,
        label: slotLabel(input.subagent_type, input.description),
      },
      taskId: input.task_id,
      // The wall clock counts from the server's start (a wait for a worker counts, as for the hard backstop),
      // unless the subagent waited in the queue: then from the grant.
      clockFromStart: true,
    },
    status: {
      query: subagentProgressQuery,
      answer: (standing) => subagentProgress(state, standing, running.approvals),
    },
    run: (admittedAt) => runSubagent(input, context, state, admittedAt, running),
    cancelled: CANCELLED,
    refused: (refusal) => withForkOrigin(input, refusedResult(refusal)),
    ended: (outcome) => withForkOrigin(input, endedResult(outcome, input, state)),
    tokens: (result) => result.token_usage,
    costUsd: (result) => result.cost_usd,
    failures: {
      failed: { type: SUBAGENT_FAILED_TYPE, prefix: SUBAGENT_FAILED_PREFIX },
      timedOut: { type: SUBAGENT_TIMED_OUT_TYPE, prefix: SUBAGENT_TIMED_OUT_PREFIX },
    },
    // Readers of a failed or timed-out subagent (`failedSubagentResult`, the client's `subagentResult`) take
    // its result from the failure's details, a cancelled one's from its memo.
    closedBefore: failIfFailed,
  });
}

/**
 * How a subagent closed before `closeWith`: a failed one failed its workflow, its result in the failure's
 * details; workflows started before outcomes were reported returned it. Kept so their histories replay.
 */
function failIfFailed(result: SubagentResult): SubagentResult {
  if (result.status !== 'failed' || !reportsOutcome()) return result;
  throw ApplicationFailure.create({
    type: SUBAGENT_FAILED_TYPE,
    message: `${SUBAGENT_FAILED_PREFIX}${result.error ?? 'no error given'}`,
    nonRetryable: true,
    details: [result],
  });
}
