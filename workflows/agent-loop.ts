/**
 * The agent loop, one for the lead and every subagent (DESIGN §3): call the model (an activity) → record
 * usage → ask the guards → run the tool calls (activities; concurrent, results in the model's order) →
 * repeat until the model answers without tools or a guard stops the run. Lead-only behaviour (delegation,
 * per-run limits) plugs in through `LoopHooks`; it is not a copy of this loop.
 */
import { ActivityFailure, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type * as activities from '../activities';
import { addUsage, ZERO_USAGE } from '../contracts/messages';
import type {
  AssistantMessage,
  ChatMessage,
  TokenUsage,
  ToolCall,
  ToolMessage,
  ToolSpec,
} from '../contracts/messages';
import type { ModelErrorFallback, ModelSettings } from '../contracts/model';
import type { RunStopReason } from '../contracts/status';
import type { SubagentStep } from '../contracts/steps';
import type { LoopDetectionSettings, TokenBudgetSettings } from '../contracts/subagent';
import { isIdempotentCall } from '../contracts/tool-specs';
import type { SandboxSettings } from '../contracts/tools';
import { initialGuardStates, runGuards, type Guard, type GuardStates } from './guards';
import { buildStep } from './pure/steps';

/** Everything the loop carries between turns: plain data, so it can cross continue-as-new. */
export interface AgentLoopState {
  messages: ChatMessage[];
  turns: number;
  /** Absent until a provider reports usage: absent usage stays absent rather than estimated as zero. */
  usage?: TokenUsage;
  guard_states: GuardStates;
  steps: SubagentStep[];
  model_name?: string;
}

export interface AgentLoopConfig {
  agentName: string;
  model: ModelSettings;
  /** What the model is shown. */
  toolSpecs: ToolSpec[];
  /** What the tool activity may run (visibility is not authority: it checks again). */
  allowedTools: string[];
  maxTurns: number;
  tokenBudget: TokenBudgetSettings;
  loopDetection: LoopDetectionSettings;
  guards: readonly Guard[];
  workspace: string;
  sandbox: SandboxSettings;
}

/** What plugs into the loop: delegation (lead, or a subagent that may delegate) and progress reports. */
export interface LoopHooks {
  /** The messages the model is sent this turn (the transcript plus, e.g., the ledger block). */
  prepareMessages?(messages: ChatMessage[]): ChatMessage[];
  /** Called after every model response is recorded (progress reports). */
  onTurn?(state: AgentLoopState): void;
  /** Asked after every turn whose tools have all returned: true ends the loop for now (continue-as-new). */
  shouldPause?(): boolean;
  /** Rewrites a response before its tools run (delegation limits); may end the run with its own reason. */
  reviewResponse?(message: AssistantMessage): { message: AssistantMessage; stopReason?: RunStopReason };
  /** Whether this hook runs the call itself (`task`) instead of the tool activity. */
  claimsCall?(call: ToolCall): boolean;
  runClaimedCalls?(calls: ToolCall[]): Promise<ToolMessage[]>;
}

export type LoopEnd =
  | { kind: 'answered'; finishReason?: string }
  | { kind: 'stopped'; stopReason: RunStopReason; finishReason?: string }
  | { kind: 'error_fallback'; error: ModelErrorFallback }
  /** `shouldPause` said so, between two turns: nothing is in flight, the state carries on. */
  | { kind: 'paused' };

// Activities heartbeat every second: a worker that dies is noticed within this, and the attempt retried.
const HEARTBEAT_TIMEOUT = '10 seconds';

const { callModel } = proxyActivities<typeof activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  // 429, 5xx and network errors are thrown by the activity and retried here; 400/401/404 come back as a result.
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 8,
  },
});

function toolActivities(sandbox: SandboxSettings) {
  return {
    // Idempotent calls (ls, read_file, a plain write_file) run as local activities: one marker event in
    // history instead of six, no round trip through matching, and re-running one after a crash is harmless.
    idempotent: proxyLocalActivities<typeof activities>({
      startToCloseTimeout: '2 minutes',
      retry: { initialInterval: '1 second', maximumAttempts: 3 },
    }).executeToolCall,
    // A tool that is not idempotent (bash, str_replace, an append) runs at most once, as a regular activity:
    // after a crash the model is told it may or may not have run, the tool is not run again blindly.
    once: proxyActivities<typeof activities>({
      startToCloseTimeout: `${sandbox.bash_timeout_seconds + 60} seconds`,
      heartbeatTimeout: HEARTBEAT_TIMEOUT,
      retry: { maximumAttempts: 1 },
    }).executeToolCall,
  };
}

export function initialLoopState(messages: ChatMessage[], guards: readonly Guard[]): AgentLoopState {
  return { messages, turns: 0, guard_states: initialGuardStates(guards), steps: [] };
}

function record(state: AgentLoopState, message: AssistantMessage | ToolMessage): void {
  state.messages.push(message);
  state.steps.push(buildStep(state.steps.length + 1, message));
}

function interruptedToolMessage(call: ToolCall, err: unknown): ToolMessage {
  const cause = err instanceof ActivityFailure && err.cause ? err.cause.message : String(err);
  const content = isIdempotentCall(call)
    ? `Tool "${call.name}" failed: ${cause}`
    : `Tool "${call.name}" was interrupted (${cause}). It may or may not have run: check its effects before running it again.`;
  return { role: 'tool', tool_call_id: call.id, name: call.name, content, is_error: true };
}

/** Runs turns until the model answers without tool calls or a guard (or a hook) stops the run. */
export async function runAgentLoop(
  state: AgentLoopState,
  config: AgentLoopConfig,
  hooks: LoopHooks = {},
): Promise<LoopEnd> {
  const tools = toolActivities(config.sandbox);
  const runTool = async (call: ToolCall): Promise<ToolMessage> => {
    const execute = isIdempotentCall(call) ? tools.idempotent : tools.once;
    try {
      const result = await execute({
        call,
        workspace: config.workspace,
        allowed_tools: config.allowedTools,
        sandbox: config.sandbox,
      });
      return {
        role: 'tool',
        tool_call_id: result.tool_call_id,
        name: result.name,
        content: result.content,
        is_error: result.is_error,
      };
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      return interruptedToolMessage(call, err);
    }
  };

  for (;;) {
    const response = await callModel({
      model: config.model,
      agent_name: config.agentName,
      messages: hooks.prepareMessages ? hooks.prepareMessages(state.messages) : state.messages,
      tools: config.toolSpecs,
    });
    state.turns += 1;
    state.model_name = response.model_name;
    if (response.usage) state.usage = addUsage(state.usage ?? ZERO_USAGE, response.usage);
    if (response.error_fallback) return { kind: 'error_fallback', error: response.error_fallback };

    const verdict = runGuards(config.guards, state.guard_states, {
      turn: state.turns,
      maxTurns: config.maxTurns,
      usage: state.usage ?? ZERO_USAGE,
      response,
      settings: { token_budget: config.tokenBudget, loop_detection: config.loopDetection },
    });
    state.guard_states = verdict.states;
    hooks.onTurn?.(state);

    let message: AssistantMessage = { role: 'assistant', content: response.content };
    if (response.tool_calls.length > 0) message.tool_calls = response.tool_calls;
    if (verdict.stop) {
      // The guard's cap: this turn's tool calls are dropped and the run ends with the text so far.
      record(state, { role: 'assistant', content: response.content });
      return { kind: 'stopped', stopReason: verdict.stop, finishReason: response.finish_reason };
    }
    let hookStop: RunStopReason | undefined;
    if (hooks.reviewResponse) ({ message, stopReason: hookStop } = hooks.reviewResponse(message));
    record(state, message);
    const calls = message.tool_calls ?? [];
    if (calls.length === 0) {
      return hookStop
        ? { kind: 'stopped', stopReason: hookStop, finishReason: response.finish_reason }
        : { kind: 'answered', finishReason: response.finish_reason };
    }

    const claimed = calls.filter((call) => hooks.claimsCall?.(call) ?? false);
    const claimedResults =
      claimed.length > 0 && hooks.runClaimedCalls ? hooks.runClaimedCalls(claimed) : Promise.resolve([]);
    const [toolResults, delegated] = await Promise.all([
      Promise.all(calls.filter((call) => !claimed.includes(call)).map(runTool)),
      claimedResults,
    ]);
    const byId = new Map([...toolResults, ...delegated].map((m) => [m.tool_call_id, m]));
    for (const call of calls) {
      const result = byId.get(call.id);
      if (!result) throw new Error(`no result for tool call ${call.id} (${call.name})`);
      record(state, result);
    }
    if (verdict.notes.length > 0) state.messages.push({ role: 'user', content: verdict.notes.join('\n\n') });
    if (hookStop) return { kind: 'stopped', stopReason: hookStop, finishReason: response.finish_reason };
    if (hooks.shouldPause?.()) return { kind: 'paused' };
  }
}
