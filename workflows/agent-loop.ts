/**
 * The agent loop, one for the lead and every subagent (DESIGN §3): call the model (an activity) → record
 * usage → ask the guards → run the tool calls (activities; concurrent, results in the model's order) →
 * repeat until the model answers without tools or a guard stops the run. Delegation (the lead's, or a
 * subagent's that may delegate) plugs in through `LoopPlugins`; it is not a copy of this loop.
 */
import {
  ActivityFailure,
  isCancellation,
  log,
  proxyActivities,
  proxyLocalActivities,
} from '@temporalio/workflow';
import type { ActivityOptions, LocalActivityOptions } from '@temporalio/common';
import type { ProjectActivities } from '../activities';
import type { LoopCarry } from '../contracts/loop-carry';
import { isMcpToolName, type McpCallInfo, type McpToolFilter } from '../contracts/mcp';
import { addUsage, ZERO_USAGE } from '../contracts/messages';
import type { AssistantMessage, ToolCall, ToolMessage, ToolSpec } from '../contracts/messages';
import type { ModelErrorFallback, ModelSettings } from '../contracts/model';
import type { SubagentStopReason } from '../contracts/status';
import type { SubagentStep } from '../contracts/steps';
import { SUMMARIZER_AGENT_SUFFIX, summaryBlock, type SummarizationRuntime } from '../contracts/summarization';
import { promote, TOOL_SEARCH_TOOL_NAME } from '../contracts/tool-search';
import { isIdempotentCall, type SandboxSettings } from '../contracts/tools';
import { storedUpTo, type Transcript } from '../contracts/transcript';
import { COMPACTION_RETRY_TURNS, estimatedPromptTokens, needsCompaction } from './compaction';
import { sha256Hex } from './digest';
import { runGuards, type Guard } from './guards';
import { runMcpToolCall, runToolSearch } from './mcp-tool-call';
import { modelActivity } from './model-activity';
import { callLine, showLiveState } from './outcome';
import { buildStep } from './steps';

/**
 * Everything the loop carries between turns: plain data, so it can cross continue-as-new. The transcript is
 * a stored prefix (by reference) and a tail: history and memory stay small however long the run.
 */
export interface AgentLoopState extends Omit<LoopCarry, 'continued'> {
  /** This execution's steps, when the config keeps them (a continued run starts a new list; `step_seq` numbers on). */
  steps: SubagentStep[];
}

export interface AgentLoopConfig {
  /** The lead run this agent works for (named in the worker's log lines). */
  runId: string;
  agentName: string;
  model: ModelSettings;
  /** What the model is shown: these built-in tools (the model activity builds their specs), then `toolSpecs`. */
  builtinTools: string[];
  toolSpecs: ToolSpec[];
  /** What the tool activity may run (visibility is not authority: it checks again). */
  allowedTools: string[];
  /** The MCP tools the agent may see and run (the MCP tool activity checks again); absent: none. */
  mcpTools?: McpToolFilter;
  /** Each built with its settings (`defaultGuards`); asked after every model response. */
  guards: readonly Guard[];
  /** Keep a step log in `state.steps` (a subagent answers the steps query with it; the lead has none). */
  recordSteps: boolean;
  workspace: string;
  sandbox: SandboxSettings;
  /** Compaction when the transcript passes its trigger; absent → never. */
  summarization?: SummarizationRuntime;
}

/** What plugs into the loop: delegation (the lead's, or a subagent's that may delegate) and progress reports. */
export interface LoopPlugins {
  /** Context for this turn's system message besides the summary (e.g. the ledger block). */
  systemContext?(): string | undefined;
  /** Called after every model response is recorded (progress reports). */
  onTurn?(state: AgentLoopState): void;
  /** Asked after every turn whose tools have all returned: true ends this execution there (continue-as-new). */
  shouldContinueAsNew?(): boolean;
  /**
   * Applies the delegation limits to a response before its tools run: the calls that may not run are
   * removed, and `capped` ends the run once this turn's other tools have returned.
   */
  applyDelegationLimits?(message: AssistantMessage): { message: AssistantMessage; capped: boolean };
  /** Calls the plugin runs itself (`task`: a child workflow each) instead of the tool activity. */
  claimedCalls?: {
    claims(call: ToolCall): boolean;
    /** One result per call, in the calls' order. */
    run(calls: ToolCall[]): Promise<ToolMessage[]>;
  };
}

/** How a loop ended, and who ended it. */
export type LoopEnd =
  | { kind: 'answered'; finishReason?: string }
  /** A guard's cap: the response's tool calls were dropped, the text so far stands. */
  | { kind: 'guard_stopped'; stopReason: SubagentStopReason; finishReason?: string }
  /** The delegation limits: a response asked for delegations after the run's total was spent. */
  | { kind: 'delegation_capped'; finishReason?: string }
  | { kind: 'error_fallback'; error: ModelErrorFallback }
  /** `shouldContinueAsNew` said so, between two turns: nothing is in flight, the state carries on. */
  | { kind: 'continue_as_new' };

// Activities heartbeat every third of this (activities/activity-context.ts): a worker that dies is noticed
// within it, and the attempt retried.
const HEARTBEAT_TIMEOUT = '3 seconds';

// A tool that runs at most once (bash, str_replace, an append): a lost heartbeat is reported to the model as
// "may or may not have run", which makes it repeat work or give up. On a saturated host a live worker's beats
// can arrive seconds late, so these wait longer before the attempt is taken for lost: a false interruption
// costs the run more than a dead worker's bash call noticed a few seconds later.
const AT_MOST_ONCE_HEARTBEAT_TIMEOUT = '10 seconds';

type ExecuteToolCall = ProjectActivities['executeToolCall'];
type ToolRun = (input: Parameters<ExecuteToolCall>[0], summary: string) => ReturnType<ExecuteToolCall>;

function toolActivities(sandbox: SandboxSettings): { idempotent: ToolRun; once: ToolRun } {
  // Idempotent calls (ls, read_file, a plain write_file) run as local activities: one marker event in
  // history instead of six, no round trip through matching, and re-running one after a crash is harmless.
  const local: LocalActivityOptions = {
    startToCloseTimeout: '2 minutes',
    retry: { initialInterval: '1 second', maximumAttempts: 3 },
  };
  // A tool that is not idempotent (bash, str_replace, an append) runs at most once, as a regular activity:
  // after a crash the model is told it may or may not have run, the tool is not run again blindly.
  const remote: ActivityOptions = {
    startToCloseTimeout: `${sandbox.bash_timeout_seconds + 60} seconds`,
    heartbeatTimeout: AT_MOST_ONCE_HEARTBEAT_TIMEOUT,
    retry: { maximumAttempts: 1 },
  };
  const idempotent = proxyLocalActivities<ProjectActivities>(local).executeToolCall;
  const once = proxyActivities<ProjectActivities>(remote).executeToolCall;
  // Each call is named in the Web UI by its tool and arguments (metadata: replay does not compare it).
  return {
    idempotent: (input, summary) => idempotent.executeWithOptions({ ...local, summary }, [input]),
    once: (input, summary) => once.executeWithOptions({ ...remote, summary }, [input]),
  };
}

/** A new agent's state: the transcript so far (system message, a fork's turns, the task), nothing stored. */
export function initialLoopState(transcript: Transcript, taskIndex: number): AgentLoopState {
  return {
    transcript,
    task_index: taskIndex,
    turns: 0,
    // Each guard starts from its `initial()` state the first time it is asked.
    guard_states: {},
    steps: [],
    step_seq: 0,
  };
}

/** The state a continued execution starts from (continue-as-new). */
export function restoreLoopState(carry: LoopCarry): AgentLoopState {
  const { continued: _continued, ...rest } = carry;
  return { ...rest, steps: [] };
}

/** What the next execution needs (continue-as-new): the state without this execution's step list. */
export function loopCarry(state: AgentLoopState, continued: number): LoopCarry {
  const { steps: _steps, ...rest } = state;
  return { ...rest, continued };
}

function record(
  state: AgentLoopState,
  config: AgentLoopConfig,
  message: AssistantMessage | ToolMessage,
  promoted?: string[],
): void {
  state.transcript.tail.push(message);
  state.step_seq += 1;
  if (config.recordSteps) state.steps.push(buildStep(state.step_seq, message, promoted));
  if (message.role === 'assistant' && message.content.trim() !== '') state.last_text = message.content;
}

const { summarizeTranscript } = proxyActivities<ProjectActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 5,
  },
});

/**
 * Replaces the older turns by a summary when the transcript passes its trigger. A summary that fails leaves
 * the transcript as it is (the run goes on, uncompacted) and is tried again a few turns later.
 */
async function compact(state: AgentLoopState, config: AgentLoopConfig): Promise<void> {
  const settings = config.summarization;
  if (!settings) return;
  const { transcript } = state;
  try {
    const outcome = await summarizeTranscript({
      model: settings.model ?? config.model,
      agent_name: `${config.agentName}${SUMMARIZER_AGENT_SUFFIX}`,
      messages: transcript.tail,
      ...(transcript.stored && { transcript_ref: transcript.stored }),
      ...(transcript.fork_from && { fork_from: transcript.fork_from }),
      task_index: state.task_index,
      keep_messages: settings.keep_messages,
      ...(settings.summary_prompt !== undefined && { summary_prompt: settings.summary_prompt }),
      ...(state.summary !== undefined && { previous_summary: state.summary }),
    });
    if (outcome.usage) state.usage = addUsage(state.usage ?? ZERO_USAGE, outcome.usage);
    if (!outcome.compacted) {
      state.compaction_retry_turn = state.turns + COMPACTION_RETRY_TURNS;
      return;
    }
    state.transcript = storedUpTo(outcome.compacted.transcript_ref);
    // The kept transcript is [system, task, …recent]: the task sits right after the system message.
    state.task_index = 1;
    state.summary = outcome.compacted.summary;
    state.last_prompt_tokens = undefined;
    state.compaction_retry_turn = undefined;
    state.compaction_floor = undefined;
    state.measure_compaction_floor = true;
  } catch (err) {
    // A cancelled run stops here too; only a summary that failed lets the run go on uncompacted.
    if (!(err instanceof ActivityFailure) || isCancellation(err)) throw err;
    log.warn('compaction failed; the run goes on with its whole transcript', {
      agent: config.agentName,
      error: err.cause?.message ?? err.message,
    });
    state.compaction_retry_turn = state.turns + COMPACTION_RETRY_TURNS;
  }
}

function interruptedToolMessage(
  call: ToolCall,
  err: unknown,
  idempotent = isIdempotentCall(call),
): ToolMessage {
  const cause = err instanceof ActivityFailure && err.cause ? err.cause.message : String(err);
  const content = idempotent
    ? `Tool "${call.name}" failed: ${cause}`
    : `Tool "${call.name}" was interrupted (${cause}). It may or may not have run: check its effects before running it again.`;
  return { role: 'tool', tool_call_id: call.id, name: call.name, content, is_error: true };
}

/** Runs turns until the model answers without tool calls, or a guard or the delegation limits stop the run. */
export async function runAgentLoop(
  state: AgentLoopState,
  config: AgentLoopConfig,
  plugins: LoopPlugins = {},
): Promise<LoopEnd> {
  const tools = toolActivities(config.sandbox);
  // 429, 5xx and network errors are retried per the model's retry policy; 400/401/404 come back as a result.
  const callModel = modelActivity(config.model, HEARTBEAT_TIMEOUT);
  // What the model activity said about the MCP tools the current response calls (read-only, timeout).
  let mcpCalls: Record<string, McpCallInfo> = {};
  // What each `tool_search` call of the current response found: promoted once its result is recorded.
  const promotedBy = new Map<ToolCall, string[]>();
  const searchTool = async (call: ToolCall, filter: McpToolFilter): Promise<ToolMessage> => {
    try {
      const found = await runToolSearch(call, filter, callLine(call.name, call.args));
      promotedBy.set(call, found.promoted);
      const { promoted: _promoted, ...result } = found;
      return { role: 'tool', ...result };
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      return interruptedToolMessage(call, err, true);
    }
  };
  const runTool = async (call: ToolCall): Promise<ToolMessage> => {
    if (config.mcpTools?.deferred && call.name === TOOL_SEARCH_TOOL_NAME)
      return searchTool(call, config.mcpTools);
    const execute = isIdempotentCall(call) ? tools.idempotent : tools.once;
    const mcp = config.mcpTools !== undefined && isMcpToolName(call.name) ? config.mcpTools : undefined;
    const mcpInfo = mcp && mcpCalls[call.name];
    try {
      const summary = callLine(call.name, call.args);
      const result = mcp
        ? await runMcpToolCall(call, mcp, mcpInfo, {
            heartbeatTimeout: HEARTBEAT_TIMEOUT,
            summary,
            promoted: state.promoted_tools,
          })
        : await execute(
            {
              call,
              workspace: config.workspace,
              allowed_tools: config.allowedTools,
              sandbox: config.sandbox,
            },
            summary,
          );
      return {
        role: 'tool',
        tool_call_id: result.tool_call_id,
        name: result.name,
        content: result.content,
        is_error: result.is_error,
      };
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      return interruptedToolMessage(call, err, mcp ? mcpInfo?.read_only === true : isIdempotentCall(call));
    }
  };

  // Only specs built here (the task tool) travel and are stored by key: built-in tools go by name.
  const toolsKey = config.toolSpecs.length > 0 ? sha256Hex(JSON.stringify(config.toolSpecs)) : undefined;
  let toolsStored = false;
  let lastCall: string | undefined;
  for (;;) {
    // Only awaited when due: the model call is scheduled in the same activation as before (replay).
    if (needsCompaction(state, config.summarization)) await compact(state, config);
    const { transcript } = state;
    // One leading system message reaches the provider: the agent's prompt, then these (activities/transcripts.ts).
    const context = [
      state.date_context,
      state.summary && summaryBlock(state.summary),
      plugins.systemContext?.(),
    ]
      .filter((part): part is string => Boolean(part))
      .join('\n\n');
    showLiveState({
      agent: config.agentName,
      turns: state.turns,
      ...(state.usage && { tokens: state.usage }),
      doing: `waiting for ${config.model.name} (turn ${state.turns + 1})`,
      ...(lastCall !== undefined && { lastCall }),
      ...(state.promoted_tools && { promoted: state.promoted_tools }),
    });
    const response = await callModel(
      {
        model: config.model,
        agent_name: config.agentName,
        messages: transcript.tail,
        ...(transcript.stored && { transcript_ref: transcript.stored }),
        ...(transcript.fork_from && { fork_from: transcript.fork_from }),
        ...(context && { system_context: context }),
        builtin_tools: config.builtinTools,
        ...(config.mcpTools && { mcp_tools: config.mcpTools }),
        ...(config.mcpTools?.deferred && { mcp_promoted: state.promoted_tools ?? [] }),
        // The specs go by key once an earlier call of this execution stored them.
        tools: toolsStored ? [] : config.toolSpecs,
        ...(toolsKey !== undefined && { tools_key: toolsKey }),
        turn_index: state.turns,
      },
      `${config.model.name} · ${config.agentName} turn ${state.turns + 1}`,
    );
    if (toolsKey !== undefined && response.tools_stored === toolsKey) toolsStored = true;
    mcpCalls = response.mcp_calls ?? {};
    state.turns += 1;
    state.model_name = response.model_name;
    // What was sent is stored now: the next call sends the reference and only what comes after it.
    if (response.transcript_ref) state.transcript = storedUpTo(response.transcript_ref);
    if (response.usage) {
      state.usage = addUsage(state.usage ?? ZERO_USAGE, response.usage);
      state.last_prompt_tokens = response.usage.input_tokens;
    }
    if (state.measure_compaction_floor) {
      state.compaction_floor = estimatedPromptTokens(state);
      state.measure_compaction_floor = undefined;
    }
    if (response.error_fallback) return { kind: 'error_fallback', error: response.error_fallback };

    const verdict = runGuards(config.guards, state.guard_states, {
      turn: state.turns,
      usage: state.usage ?? ZERO_USAGE,
      response,
    });
    state.guard_states = verdict.states;
    plugins.onTurn?.(state);

    let message: AssistantMessage = { role: 'assistant', content: response.content };
    if (response.tool_calls.length > 0) message.tool_calls = response.tool_calls;
    const finishReason = response.finish_reason;
    if (verdict.stop) {
      // The guard's cap: this turn's tool calls are dropped and the run ends with the text so far.
      record(state, config, { role: 'assistant', content: response.content });
      return { kind: 'guard_stopped', stopReason: verdict.stop, finishReason };
    }
    let capped = false;
    if (plugins.applyDelegationLimits) ({ message, capped } = plugins.applyDelegationLimits(message));
    record(state, config, message);
    const calls = message.tool_calls ?? [];
    if (calls.length === 0) {
      return capped ? { kind: 'delegation_capped', finishReason } : { kind: 'answered', finishReason };
    }

    lastCall = callLine(calls[calls.length - 1].name, calls[calls.length - 1].args);
    showLiveState({
      agent: config.agentName,
      turns: state.turns,
      ...(state.usage && { tokens: state.usage }),
      doing:
        calls.length === 1
          ? `running ${callLine(calls[0].name, calls[0].args)}`
          : `running ${calls.length} tool calls: ${[...new Set(calls.map((call) => call.name))].join(', ')}`,
      lastCall,
      ...(state.promoted_tools && { promoted: state.promoted_tools }),
    });
    const claimer = plugins.claimedCalls;
    const isClaimed = calls.map((call) => claimer?.claims(call) ?? false);
    const claimed = calls.filter((_, i) => isClaimed[i]);
    const claimedResults = claimer && claimed.length > 0 ? claimer.run(claimed) : Promise.resolve([]);
    const [toolResults, delegated] = await Promise.all([
      Promise.all(calls.filter((_, i) => !isClaimed[i]).map(runTool)),
      claimedResults,
    ]);
    // Results follow the calls by position, not by id: a model may give two calls the same id.
    let nextTool = 0;
    let nextDelegated = 0;
    calls.forEach((call, i) => {
      const result = isClaimed[i] ? delegated[nextDelegated++] : toolResults[nextTool++];
      if (!result) throw new Error(`no result for tool call ${call.id} (${call.name})`);
      // Promotions in the calls' order, from the search's recorded result: a replay promotes the same.
      const promoted = promotedBy.get(call);
      if (promoted && promoted.length > 0) state.promoted_tools = promote(state.promoted_tools, promoted);
      record(state, config, result, promoted);
    });
    promotedBy.clear();
    if (verdict.notes.length > 0) {
      // An operator sees what the model is told (a token budget at its warn threshold, a loop building up).
      verdict.warnedBy.forEach((guard, i) =>
        log.info(`${guard} warning: ${verdict.notes[i]}`, {
          run_id: config.runId,
          agent: config.agentName,
          ...(state.usage && { total_tokens: state.usage.total_tokens }),
        }),
      );
      state.transcript.tail.push({ role: 'user', content: verdict.notes.join('\n\n') });
    }
    if (capped) return { kind: 'delegation_capped', finishReason };
    if (plugins.shouldContinueAsNew?.()) return { kind: 'continue_as_new' };
  }
}
