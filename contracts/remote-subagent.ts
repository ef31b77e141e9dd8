/**
 * Remote subagents (the `dsh-tool-subagent` provider registry): a delegation to an agent that runs elsewhere,
 * over A2A (an Agent2Agent endpoint) or ACP (an Agent Client Protocol agent spawned over stdio). It is still a
 * `subagentWorkflow` (ids, ledger entry, events, admission slot, budgets, cancellation, Web UI); its work is
 * one heartbeating activity, `runRemoteSubagent`, whose attempt after a worker crash re-attaches to what the
 * previous attempt started (an A2A task, an ACP session) instead of sending the work twice.
 *
 * The wire shapes here are the one definition shared by the workflow, the activities and the config loader.
 */
import type { WorkspaceRequest } from './workspace';
import type { GuardrailPolicy } from './guardrail-rules';
import type { AssistantMessage, TokenUsage, ToolMessage } from './messages';

export const REMOTE_PROVIDER_TYPES = ['a2a', 'acp'] as const;
export type RemoteProviderType = (typeof REMOTE_PROVIDER_TYPES)[number];

/**
 * An A2A agent: `url` is its agent card (`…/.well-known/agent-card.json`) or its endpoint (the card is then
 * looked for under it). Header values may name environment variables (`Bearer $TEAM_TOKEN`): the worker
 * resolves them when it calls; history only ever holds the names.
 */
export interface A2AProviderSettings {
  type: 'a2a';
  /** Its name in `subagent_providers`. */
  name: string;
  url: string;
  headers?: Record<string, string>;
}

/**
 * An ACP agent: `command` with `args`, spawned by the worker with the workspace as its cwd; `env` is added to
 * the worker's environment (values may name environment variables, resolved by the worker).
 */
export interface AcpProviderSettings {
  type: 'acp';
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
}

export type RemoteProviderSettings = A2AProviderSettings | AcpProviderSettings;

/** One remote delegation: the input of the `runRemoteSubagent` activity. */
export interface RemoteSubagentInput {
  /** Where the run's workspace lives (contracts/workspace.ts): an ACP agent works in it. Absent: a run from before. */
  placement?: WorkspaceRequest;
  provider: RemoteProviderSettings;
  /**
   * The subagent's workflow id: the same for every attempt. The A2A message id derives from it, so a remote
   * agent that keeps idempotency keys sees a re-sent message as the same one.
   */
  delegation_id: string;
  /** The prompt the lead's model wrote (with the load's persona before it, when the load has one). */
  prompt: string;
  /** The load's `agent_options.model`, passed to the remote side where its protocol can take it. */
  model?: string;
  /** The run's workspace: the ACP agent's cwd. */
  workspace: string;
  /** Epoch ms after which the activity gives up and ends `timed_out` (the subagent's wall clock). */
  deadline_ms: number;
  /**
   * A2A `input-required`: the person's answer to the remote agent's question, sent to the same remote task
   * (the workflow asks the person, then runs the activity again with this).
   */
  answer?: { remote_task_id: string; context_id?: string; text: string };
  /**
   * The run's guardrail policy for this subagent (contracts/guardrail-rules.ts `policyFor`): an ACP agent's
   * permission requests are decided by its built-in evaluator (`builtinEvaluator`); an `ask`, a module policy
   * or no policy at all is a refusal (no person can be asked from inside the activity).
   */
  guardrail_policy?: GuardrailPolicy;
}

/**
 * How a remote run ended. `completed` is the only success; every other end reaches the lead as an error result
 * (the seed: never partial output as success). `input_required` is not an end of the delegation: the workflow
 * asks the person and runs the activity again with the answer.
 */
export const REMOTE_RUN_ENDS = [
  'completed',
  'failed',
  'cancelled',
  'rejected',
  'auth_required',
  'input_required',
  'max_tokens',
  'max_turn_requests',
  'refusal',
  'timed_out',
] as const;
export type RemoteRunEnd = (typeof REMOTE_RUN_ENDS)[number];

/** How an attempt that followed an interrupted one went on: the result says which. */
export type RemoteResumption =
  /** A2A: the same remote task was found and followed; the prompt was not sent again. */
  | 'reattached'
  /** ACP: the agent supports `session/load`; the same session was loaded and prompted to go on. */
  | 'session_loaded'
  /** ACP without `session/load`: a new session, its prompt saying the previous attempt was interrupted. */
  | 'restarted';

export interface RemoteSubagentResult {
  end: RemoteRunEnd;
  /** The remote agent's answer (`completed`), or the partial text it produced before another end. */
  text?: string;
  /** Why it ended other than `completed`, in the remote side's words where it gave any. */
  error?: string;
  /** `input_required`: the remote agent's question for the person. */
  question?: string;
  /** The A2A task id or the ACP session id. */
  remote_task_id?: string;
  /** The A2A context id, when the remote side gave one. */
  context_id?: string;
  /**
   * The delegation's usage so far as the remote side reported it (an A2A task's runs on across its questions,
   * so a later exchange's replaces an earlier one's); absent when it reported none.
   */
  usage?: TokenUsage;
  /** The remote agent's steps as the subagent's step log shows them (its messages, tool calls and results). */
  messages: (AssistantMessage | ToolMessage)[];
  /** Set when this attempt followed an interrupted one. */
  resumed?: RemoteResumption;
}

/**
 * What `runRemoteSubagent` heartbeats, recorded before it waits on the remote side: a later attempt (after a
 * worker crash) reads it from `activityInfo().heartbeatDetails` and re-attaches. Small whatever the run.
 */
export interface RemoteProgress {
  /** A2A: the remote task the prompt created (known once the agent answered the send). */
  remote_task_id?: string;
  context_id?: string;
  /** ACP: the session the prompt went to. */
  session_id?: string;
  /** The prompt has been sent: a later attempt must not send it again as new work. */
  prompt_sent: boolean;
  /** Updates seen so far (the Web UI's pending activity shows progress). */
  updates: number;
}

/** Whether a provider can be used for a run starting now (`probeSubagentProviders`). */
export interface RemoteProbeResult {
  available: boolean;
  /** Why not, for the one event and log line that say the tool is absent from this run. */
  reason?: string;
}
