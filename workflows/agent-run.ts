/**
 * What the lead and every subagent share around the agent loop: the loop's config from the agent's settings
 * (its guards, its tools, `task` when it may delegate), its children's progress reports, the wall clock raced
 * against the loop, continue-as-new between turns, and every way a run can end as one `AgentRunEnd`. The two
 * workflows keep only what differs: how they start, what their queries answer, what they return.
 */
import type { AcceptanceFailed } from './item-acceptance';
import {
  ActivityFailure,
  CancellationScope,
  isCancellation,
  patched,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import { subagentAdmissionSignal } from '../contracts/admission';
import type { BatchToolSettings } from '../contracts/batch';
import { currentDateContext } from '../contracts/date-context';
import type { DelegationLimitSettings } from '../contracts/lead';
import type { LedgerEntry } from '../contracts/ledger';
import type { McpToolFilter } from '../contracts/mcp';
import type { TaskEvent } from '../contracts/events';
import type { ModelSettings } from '../contracts/model';
import { policyFor } from '../contracts/guardrail-rules';
import type { RunScope } from '../contracts/run-scope';
import { DEFAULT_USER_ID } from '../contracts/skills';
import { guardrailNoticeSignal, subagentProgressSignal } from '../contracts/queries';
import type { ResolvedAgent, TokenBudgetSettings } from '../contracts/subagent';
import type { ProviderProbe, SubagentToolLoad } from '../contracts/subagent-providers';
import type { ToolSpec } from '../contracts/messages';
import { isBuiltinToolName } from '../contracts/tools';
import { runAgentLoop, type AgentLoopState, type LoopEnd, type LoopPlugins } from './agent-loop';
import { combineClaimedCalls } from './claimed-calls';
import { Approvals } from './approvals';
import { Clarifications } from './clarification';
import { historyWantsContinueAsNew } from './continue-as-new';
import { Delegator } from './delegation/delegator';
import { tellParent } from './held-for-a-person';
import { defaultGuards } from './guards';
import { showLiveState } from './outcome';
import { agentSkills, type AgentSkills, type AgentSkillsRequest } from './skills';
import { AgentGuardrails } from './guardrails';
import { WorkspaceRoute, workspaceKey } from './workspace-route';
import { reportWorkspaceNotices } from './workspace-notices';
import { treeBudgetGate } from './budget/gate';
import type { AgentMemory } from './memory/agent-memory';

/** What every agent of one run shares (from the workflow input), and where this agent stands in it. */
export interface RunContext {
  /** The lead run's id: every delegation of the run is counted against it. */
  runId: string;
  /** The agent's delegation depth (the lead is 0). */
  depth: number;
  /** The run's settings, as its input carries them (contracts/run-scope.ts). */
  scope: RunScope;
  /** Where the workspace's calls go: from the scope's placement, placed by the lead as it starts. */
  route: WorkspaceRoute;
}

/** The run context from a workflow input (a lead run's or a subagent's), its scope read as it was recorded. */
export function runContext(input: { depth: number; scope: RunScope }, runId: string): RunContext {
  const { scope } = input;
  return {
    runId,
    depth: input.depth,
    scope,
    route: new WorkspaceRoute(scope.workspace_placement, scope.workspace, workspaceKey(scope)),
  };
}

/** The agent the loop runs as: its model, its tools, its own budgets. */
export interface AgentSpec {
  name: string;
  model: ModelSettings;
  /** Built-in tools the agent may see and run (`task` is added when it may delegate). */
  tools: string[];
  /** MCP tools the agent may see and run; absent: none. */
  mcp?: McpToolFilter;
  maxTurns: number;
  tokenBudget: TokenBudgetSettings;
  /** The wall clock, counted from `clockStartMs`; absent → none. */
  timeoutSeconds?: number;
  /** When the wall clock started (default: when the server started the run's first execution). */
  clockStartMs?: number;
  /** Its `skills:` list and its task, for the run's skills (used when the run has them). */
  skills: AgentSkillsRequest;
}

/** What an agent that may delegate starts with: the agents it may start, the limits, what it has delegated. */
export interface DelegationSpec {
  agents: ResolvedAgent[];
  limits: DelegationLimitSettings;
  ledger?: LedgerEntry[];
  events?: TaskEvent[];
  /** Durable batches (`batch_task`), when the agent may start them. */
  batch?: BatchToolSettings;
  /** The tool loads besides `task` (the lead's `subagent_tools`). */
  loads?: SubagentToolLoad[];
  /** What an earlier execution's probe of the loads' remote providers found (continue-as-new). */
  providerProbe?: ProviderProbe;
}

/** Delegation for one agent, run by the same code at every depth. */
export function createDelegator(
  context: RunContext,
  delegation: DelegationSpec,
  state: () => AgentLoopState,
): Delegator {
  return new Delegator({
    runId: context.runId,
    depth: context.depth,
    scope: context.scope,
    route: context.route,
    agents: delegation.agents,
    limits: delegation.limits,
    transcript: () => state().transcript,
    ...(delegation.ledger && { ledger: delegation.ledger }),
    ...(delegation.events && { events: delegation.events }),
    ...(delegation.batch && { batch: delegation.batch }),
    ...(delegation.loads && { loads: delegation.loads }),
    ...(delegation.providerProbe && { providerProbe: delegation.providerProbe }),
  });
}

/**
 * The agent's questions (`ask_clarification`, when `offered`) and those of its subagents, its Update handler
 * registered: the lead's are logged in its event log and listed by its status.
 */
export function createClarifications(
  context: RunContext,
  agent: { name: string; offered: boolean; leadWorkflowId: string },
  state: () => AgentLoopState,
  delegator?: Delegator,
): Clarifications {
  const clarifications = new Clarifications({
    ...(context.scope.clarification && { settings: context.scope.clarification }),
    offered: agent.offered,
    agentName: agent.name,
    runId: context.runId,
    leadWorkflowId: agent.leadWorkflowId,
    ...(delegator && {
      record: (event) => delegator.recordEvent(event),
      delegationEnded: (taskId) => delegator.hasEnded(taskId),
    }),
    showDoing: (doing, command) =>
      showLiveState({
        agent: agent.name,
        turns: state().turns,
        ...(state().usage && { tokens: state().usage }),
        doing,
        ...(command !== undefined && { command }),
      }),
  });
  clarifications.register();
  return clarifications;
}

/**
 * The agent's tool calls held for approval and those of its subagents, its Updates registered (always: a
 * decision sent to a run that holds nothing is refused in words, not for want of a handler). A subagent's
 * decisions go into its step log.
 */
export function createApprovals(
  context: RunContext,
  agent: { name: string; leadWorkflowId: string; recordSteps: boolean },
  state: () => AgentLoopState,
  delegator?: Delegator,
): Approvals {
  const approvals = new Approvals({
    agentName: agent.name,
    runId: context.runId,
    leadWorkflowId: agent.leadWorkflowId,
    ...(context.scope.guardrails && { timeoutSeconds: context.scope.guardrails.approval_timeout_seconds }),
    counter: state(),
    ...(delegator && { delegationEnded: (taskId: string) => delegator.hasEnded(taskId) }),
    showDoing: (doing, commands) =>
      showLiveState({
        agent: agent.name,
        turns: state().turns,
        ...(state().usage && { tokens: state().usage }),
        doing,
        ...(commands !== undefined && { commands }),
      }),
    ...(agent.recordSteps && {
      recordStep: (step) => {
        const current = state();
        current.step_seq += 1;
        current.steps.push({ ...step, seq: current.step_seq });
      },
    }),
  });
  approvals.register();
  return approvals;
}

export interface AgentRunOptions {
  context: RunContext;
  agent: AgentSpec;
  state: AgentLoopState;
  /** Present when the agent may delegate. */
  delegator?: Delegator;
  /** Its questions (`ask_clarification`), when the run has them. */
  clarifications?: Clarifications;
  /** Asks a person about calls a guardrail decided `ask`; absent when none is attached (a batch item). */
  approvals?: Approvals;
  /** Keep the step log (for a steps query). */
  recordSteps: boolean;
  /** Called after every model response (progress reports). */
  onTurn?: LoopPlugins['onTurn'];
  /** The user's memory (the lead's, when the run has it: workflows/memory/agent-memory.ts); subagents have none. */
  memory?: AgentMemory;
  /** The lead's `<current_date>` moves on past midnight (workflows/lead-date.ts); subagents keep theirs. */
  followsDate?: boolean;
}

/** Histories recorded before a subagent's denial was told to its parent. */
const DENIAL_NOTICE_PATCH = 'guardrail-denial-notice';

/** Histories recorded before a subagent's approved call was told to its parent (`tool_approved`). */
const APPROVAL_NOTICE_PATCH = 'guardrail-approval-notice';

/** Whether this agent is a subagent of the run (it has a parent to tell), not the lead. */
function isSubagent(context: RunContext): boolean {
  return workflowInfo().parent !== undefined && workflowInfo().workflowId !== context.runId;
}

/** `{ guardrails }` for the loop's config when a policy applies to this agent; else nothing. */
function withGuardrails(
  context: RunContext,
  agentName: string,
  delegator: Delegator | undefined,
): { guardrails?: AgentGuardrails } {
  const settings = context.scope.guardrails;
  const policy = settings && policyFor(settings, agentName);
  if (!settings || !policy) return {};
  const guardrails = new AgentGuardrails(
    policy,
    settings,
    { runId: context.runId, userId: context.scope.user_id ?? DEFAULT_USER_ID, agent: agentName },
    // `tool_denied` / `tool_approved` in the agent's event log, when it keeps one (the lead; a subagent that
    // delegates), and in its parent's, up to the lead's.
    {
      denied: (call, decision) => {
        const denial = {
          at: new Date().toISOString(),
          tool: call.name,
          agent: agentName,
          reason: decision.reason,
          policy_id: decision.policy_id,
        };
        delegator?.recordEvent({ type: 'tool_denied', task_id: call.id, ...denial });
        // Histories recorded before subagents told their parent: they sent no signal here.
        if (isSubagent(context) && patched(DENIAL_NOTICE_PATCH)) {
          const notice = { ...denial, workflow_id: workflowInfo().workflowId, call_id: call.id };
          tellParent(guardrailNoticeSignal, notice, context.runId);
        }
      },
      approved: (call, decision, approval) => {
        const at = new Date().toISOString();
        const { reason, policy_id: policyId } = decision;
        delegator?.recordEvent({
          type: 'tool_approved',
          task_id: call.id,
          at,
          tool: call.name,
          agent: agentName,
          ...approval,
          policy_id: policyId,
        });
        // Histories recorded before approvals were told to the parent: they sent no signal here.
        if (isSubagent(context) && patched(APPROVAL_NOTICE_PATCH)) {
          tellParent(
            guardrailNoticeSignal,
            {
              at,
              tool: call.name,
              agent: agentName,
              reason,
              policy_id: policyId,
              approved: approval,
              workflow_id: workflowInfo().workflowId,
              call_id: call.id,
            },
            context.runId,
          );
        }
      },
    },
  );
  return { guardrails };
}

/** A graceful timeout this long before the hard backstop at the latest, so the partial text is kept. */
const BACKSTOP_MARGIN_MS = 5_000;

/**
 * When the wall clock runs out: `timeoutSeconds` after it started, but never later than just before the
 * execution's hard backstop (a subagent that waited long for a slot may have less left than its timeout).
 * An execution started without a timeout (the Temporal CLI, other SDKs, the Web UI) reads as 0 here, not
 * undefined: the server sends an empty duration. No backstop then, only the run's own clock.
 */
export function clockEnd(startedAtMs: number, timeoutSeconds: number): number {
  const { startTime, executionTimeoutMs } = workflowInfo();
  const own = startedAtMs + timeoutSeconds * 1000;
  if (!executionTimeoutMs) return own;
  return Math.min(own, startTime.getTime() + executionTimeoutMs - BACKSTOP_MARGIN_MS);
}

/** Every way a run's execution can end. */
export type AgentRunEnd =
  | LoopEnd
  /** The wall clock ran out: running activities and children were cancelled, the partial text stands. */
  | { kind: 'timed_out' }
  /** The workflow was cancelled (by a user, or by its parent). */
  | { kind: 'cancelled' }
  /** An activity ran out of retries (a provider that kept failing, or never answered). */
  | { kind: 'activity_failed'; message: string }
  /** A remote agent's run ended other than completed (workflows/remote-subagent.ts): an error result. */
  | { kind: 'remote_ended'; status: 'failed' | 'cancelled'; error: string }
  /** A batch item's answer failed its acceptance criteria (workflows/item-acceptance.ts): an error result. */
  | AcceptanceFailed;

/**
 * What the agent reads before its first turn: its skills (when the run has them) and the user's memory (the
 * lead's, once per run: a run without it reads nothing, its history as before). A failed read ends the run.
 */
async function agentStart(
  options: AgentRunOptions,
): Promise<
  { skills: AgentSkills | undefined } | Extract<AgentRunEnd, { kind: 'cancelled' | 'activity_failed' }>
> {
  const { context, agent, state, memory } = options;
  const { scope } = context;
  let skills: AgentSkills | undefined;
  try {
    if (scope.skills) {
      skills = await agentSkills(state, scope.skills, agent.skills, {
        ...(scope.user_id !== undefined && { userId: scope.user_id }),
        ...(scope.secrets !== undefined && { secrets: scope.secrets }),
      });
    }
    await memory?.load(state);
  } catch (err) {
    if (isCancellation(err)) return { kind: 'cancelled' };
    if (err instanceof ActivityFailure) {
      return { kind: 'activity_failed', message: err.cause?.message ?? err.message };
    }
    throw err;
  }
  return { skills };
}

/**
 * Runs the agent's loop until it ends, its wall clock runs out, or it is cancelled. Delegations still in flight
 * have reported back before this returns, so no ledger entry stays `in_progress`.
 */
export async function runAgent(options: AgentRunOptions): Promise<AgentRunEnd> {
  const { context, agent, state, delegator, clarifications, memory } = options;
  const { scope } = context;
  // No await when there is nothing to read: the loop's first commands come in the same step as before.
  const started = scope.skills || memory ? await agentStart(options) : { skills: undefined };
  if ('kind' in started) return started;
  const { skills } = started;
  // The lead's log keeps what any agent's calls found of the run's workspace (moved, not saved).
  reportWorkspaceNotices(
    context.route,
    context.runId,
    delegator && ((n) => delegator.recordWorkspaceNotice(n)),
  );
  const builtinTools = agent.tools.filter(isBuiltinToolName);
  const toolSpecs: ToolSpec[] = [];
  // At the depth cap the tools stay visible and their calls are refused with an explanation.
  if (delegator) toolSpecs.push(...delegator.toolSpecs());
  if (clarifications) toolSpecs.push(...clarifications.toolSpecs());
  if (skills) toolSpecs.push(...skills.toolSpecs());
  if (memory) toolSpecs.push(...memory.toolSpecs());
  if (delegator) {
    setHandler(subagentProgressSignal, (update) => delegator.recordProgress(update));
    setHandler(subagentAdmissionSignal, (update) => delegator.recordAdmission(update));
    setHandler(guardrailNoticeSignal, (notice) => delegator.recordChildDecision(notice));
  }
  // The tree budget, when the run has one: the lead keeps its ledger, every other agent leases from it.
  const budget =
    scope.tree_budget && treeBudgetGate(scope.tree_budget, context.runId, (state.tree_budget ??= {}));
  const delegation = delegator?.plugins();
  const plugins: LoopPlugins = {
    ...delegation,
    claimedCalls: combineClaimedCalls(
      delegation?.claimedCalls,
      clarifications?.claimedCalls(),
      skills?.claimedCalls(),
      memory?.claimedCalls(),
    ),
    onTurn: options.onTurn,
    // Between turns nothing is in flight: when history grows long, the run continues as new there.
    shouldContinueAsNew: () => historyWantsContinueAsNew(workflowInfo()),
  };
  const config = {
    runId: context.runId,
    agentName: agent.name,
    model: agent.model,
    builtinTools,
    toolSpecs,
    allowedTools: agent.tools,
    ...(agent.mcp && { mcpTools: agent.mcp }),
    guards: defaultGuards({
      maxTurns: agent.maxTurns,
      tokenBudget: agent.tokenBudget,
      loopDetection: scope.loop_detection,
    }),
    route: context.route,
    sandbox: scope.sandbox,
    recordSteps: options.recordSteps,
    ...(scope.summarization && { summarization: scope.summarization }),
    ...(skills && { skills }),
    ...withGuardrails(context, agent.name, delegator),
    // No person attached (a batch's item, a scheduled run, what they delegate): `guardrails.unattended` decides.
    ...(options.approvals && !scope.guardrails?.no_approver && { approvals: options.approvals }),
    ...(budget && { budget }),
    ...(options.followsDate && { followsDate: true }),
    ...(scope.tool_output && { toolOutput: scope.tool_output }),
    ...(scope.read_before_write && { readBeforeWrite: true }),
    ...(scope.clarification && { clarification: { timeout_seconds: scope.clarification.timeout_seconds } }),
  };

  // The wall clock counts from when the server started the run (its chain), as the hard backstop
  // (workflowExecutionTimeout) does: time spent waiting for a worker counts against both alike. A subagent's
  // counts from when it got its execution slot.
  const startedAtMs = agent.clockStartMs ?? workflowInfo().startTime.getTime();
  // The date the agent is told: its chain's start in workflow time, kept in state (carried across
  // continue-as-new), so every turn, a replay and a continued execution send the same reminder.
  state.date_context ??= currentDateContext(workflowInfo().startTime);
  const loopScope = new CancellationScope();
  const clockScope = new CancellationScope();
  let continuing = false;
  try {
    const loop = loopScope.run(() => runAgentLoop(state, config, plugins));
    const timeoutSeconds = agent.timeoutSeconds;
    const clock =
      timeoutSeconds === undefined
        ? undefined
        : clockScope.run(() =>
            sleep(Math.max(0, clockEnd(startedAtMs, timeoutSeconds) - Date.now()), {
              summary: `wall clock: timeout_seconds ${timeoutSeconds}`,
            }),
          );
    const end = await (clock ? Promise.race([loop, clock.then(() => 'timed_out' as const)]) : loop);
    continuing = end !== 'timed_out' && end.kind === 'continue_as_new';
    if (end !== 'timed_out') return end;
    // Graceful: running activities (they heartbeat) and children are cancelled, the partial text is kept.
    loopScope.cancel();
    await loop.catch(() => undefined);
    return { kind: 'timed_out' };
  } catch (err) {
    if (isCancellation(err)) return { kind: 'cancelled' };
    if (err instanceof ActivityFailure) {
      return { kind: 'activity_failed', message: err.cause?.message ?? err.message };
    }
    throw err;
  } finally {
    clockScope.cancel();
    // Cancelled children report back before the run ends or continues.
    if (delegator) await CancellationScope.nonCancellable(() => delegator.settle());
    // What it holds of the tree budget goes back, its spend reported, unless it carries on as new.
    if (budget && !continuing) await CancellationScope.nonCancellable(() => budget.close());
  }
}
