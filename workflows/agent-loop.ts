/**
 * The agent loop, one for the lead and every subagent (DESIGN §3): call the model (an activity) → record
 * usage → ask the guards → run the tool calls (activities; concurrent, results in the model's order) →
 * repeat until the model answers without tools or a guard stops the run. Delegation (the lead's, or a
 * subagent's that may delegate) plugs in through `LoopPlugins`; it is not a copy of this loop.
 */
import type { WorkspaceRoute } from './workspace-route';
import { ActivityFailure, isCancellation, log, patched, proxyActivities } from '@temporalio/workflow';
import type { ProjectActivities } from '../activities';
import type { ApprovalOutcome, GuardrailDecision } from '../contracts/guardrails';
import type { LoopCarry } from '../contracts/loop-carry';
import type { ClarificationSettings } from '../contracts/input-schemas';
import type { McpToolFilter } from '../contracts/mcp';
import { addUsage, ZERO_USAGE } from '../contracts/messages';
import type { AssistantMessage, ToolCall, ToolMessage, ToolSpec } from '../contracts/messages';
import { contextOverflowText } from '../contracts/model';
import type { ModelCallInput, ModelCallResult, ModelErrorFallback, ModelSettings } from '../contracts/model';
import type { SubagentStopReason } from '../contracts/status';
import { buildStep, type SubagentStep } from '../contracts/steps';
import { SUMMARIZER_AGENT_SUFFIX, summaryBlock, type SummarizationRuntime } from '../contracts/summarization';
import { promote } from '../contracts/tool-search';
import type { SandboxSettings } from '../contracts/tools';
import type { ToolOutputSettings } from '../contracts/tool-output';
import { storedUpTo, type Transcript } from '../contracts/transcript';
import { COMPACTION_RETRY_TURNS, estimatedPromptTokens, needsCompaction } from './compaction';
import { sha256Hex } from './digest';
import { runGuards, type Guard, type GuardsOutcome } from './guards';
import type { TreeStopReason } from '../contracts/budget';
import { callReservation, countCall, type BudgetGate } from './budget/gate';
import { safetyStop, type SafetyStopped } from './safety-stop';
import type { AgentGuardrails } from './guardrails';
import { modelActivity } from './model-activity';
import { callLine, showLiveState } from './outcome';
import type { AgentSkills } from './skills';
import { activeSkillNames } from './skills';
import { HEARTBEAT_TIMEOUT, ToolCalls } from './tool-calls';
import { followDate } from './lead-date';

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
  /** The run's workspace, and where its calls go (workflows/workspace-route.ts). */
  route: WorkspaceRoute;
  sandbox: SandboxSettings;
  /** Compaction when the transcript passes its trigger; absent → never. */
  summarization?: SummarizationRuntime;
  /** The agent's skills: its prompt block, the folders its tools mount, the `allowed-tools` policy. */
  skills?: AgentSkills;
  /** The agent's guardrails (workflows/guardrails.ts), applied after the skills' policy; absent: none in force. */
  guardrails?: AgentGuardrails;
  /**
   * Who answers a guardrail's `ask` (workflows/approvals.ts); absent when no person is attached to the run (a batch
   * item and what it delegates): `guardrails.unattended` decides.
   */
  approvals?: { ask(call: ToolCall, decision: GuardrailDecision): Promise<ApprovalOutcome> };
  /** The run's tree budget (workflows/budget/gate.ts): each call reserved before it starts; absent: none. */
  budget?: BudgetGate;
  /** The lead's date moves on past midnight (workflows/lead-date.ts); a subagent keeps its first. */
  followsDate?: boolean;
  /** The run's `tool_output` (contracts/tool-output.ts): large results saved in the workspace; absent: off. */
  toolOutput?: ToolOutputSettings;
  /** The run's `read_before_write`: writes to existing files wait for a read of their current version. */
  readBeforeWrite?: boolean;
  /** The run's questions to a person (`clarification:`): an MCP task's `input_required` asks one; absent: off. */
  clarification?: Pick<ClarificationSettings, 'timeout_seconds'>;
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
  /** The provider stopped the response for safety (`safety_finish_reason`): its tool calls were dropped. */
  | SafetyStopped
  /** `shouldContinueAsNew` said so, between two turns: nothing is in flight, the state carries on. */
  | { kind: 'continue_as_new' };

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
  activatedSkill?: string,
): void {
  state.transcript.tail.push(message);
  state.step_seq += 1;
  if (config.recordSteps) state.steps.push(buildStep(state.step_seq, message, promoted, activatedSkill));
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

/** Histories recorded while a summary's tokens were not counted against the tree budget. */
const SUMMARY_SPENDS_PATCH = 'tree-budget-summaries';

/**
 * Replaces the older turns by a summary when the transcript passes its trigger. A summary that fails leaves
 * the transcript as it is (the run goes on, uncompacted) and is tried again a few turns later.
 */
async function compact(state: AgentLoopState, config: AgentLoopConfig): Promise<boolean> {
  const settings = config.summarization;
  if (!settings) return false;
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
    if (outcome.usage) {
      state.usage = addUsage(state.usage ?? ZERO_USAGE, outcome.usage);
      // A summary spends from the tree budget too (counted, not reserved); before the patch it did not.
      const budget = config.budget && patched(SUMMARY_SPENDS_PATCH) ? config.budget : undefined;
      countCall(state, budget, outcome.usage, (settings.model ?? config.model).pricing);
    }
    if (!outcome.compacted) {
      state.compaction_retry_turn = state.turns + COMPACTION_RETRY_TURNS;
      return false;
    }
    state.transcript = storedUpTo(outcome.compacted.transcript_ref);
    // The kept transcript is [system, task, …recent]: the task sits right after the system message.
    state.task_index = 1;
    state.summary = outcome.compacted.summary;
    state.last_prompt_tokens = undefined;
    state.compaction_retry_turn = undefined;
    state.compaction_floor = undefined;
    state.measure_compaction_floor = true;
    // The reads went into the summary: their marks go too (DeerFlow's gate never passes on a read out of context).
    state.read_marks = undefined;
    return true;
  } catch (err) {
    // A cancelled run stops here too; only a summary that failed lets the run go on uncompacted.
    if (!(err instanceof ActivityFailure) || isCancellation(err)) throw err;
    log.warn('compaction failed; the run goes on with its whole transcript', {
      agent: config.agentName,
      error: err.cause?.message ?? err.message,
    });
    state.compaction_retry_turn = state.turns + COMPACTION_RETRY_TURNS;
    return false;
  }
}

/**
 * A model call the provider refused because the transcript passed the model's context window: summarized and
 * tried again once when summarization is on (true), else the error the run ends with, saying so.
 */
async function recoverFromOverflow(
  state: AgentLoopState,
  config: AgentLoopConfig,
  error: ModelErrorFallback,
): Promise<true | ModelErrorFallback> {
  if (config.summarization && !state.overflow_compacted && (await compact(state, config))) {
    state.overflow_compacted = true;
    return true;
  }
  return { ...error, message: contextOverflowText(error.message, config.summarization !== undefined) };
}

/**
 * The specs built here (the task tool, describe_skill) go by value the first time and by key after: one key for
 * each list an active skill's `allowed-tools` leaves (usually one list for the whole run).
 */
class SentSpecs {
  private readonly keys = new Map<string, string>();
  private readonly stored = new Set<string>();

  /** The specs to send and the key they are stored by (none for an empty list). */
  sendable(specs: ToolSpec[]): { tools: ToolSpec[]; key?: string } {
    if (specs.length === 0) return { tools: [] };
    const names = specs.map((spec) => spec.name).join('\n');
    let key = this.keys.get(names);
    if (key === undefined) {
      key = sha256Hex(JSON.stringify(specs));
      this.keys.set(names, key);
    }
    return { tools: this.stored.has(key) ? [] : specs, key };
  }

  /** What a response said the activity stored. */
  heard(storedKey: string | undefined): void {
    if (storedKey !== undefined) this.stored.add(storedKey);
  }
}

/** The system context that changes between calls: the summary, the active skills after it, the plugins'. */
function systemContext(state: AgentLoopState, config: AgentLoopConfig, plugins: LoopPlugins): string {
  const summary = state.summary;
  return [
    summary && summaryBlock(summary),
    // Compaction summarized the reads of the active skills' SKILL.md away: point at them (DeerFlow's reminder).
    summary && config.skills?.reminder(),
    plugins.systemContext?.(),
  ]
    .filter((part): part is string => Boolean(part))
    .join('\n\n');
}

/** What the model is sent this turn: the transcript (stored prefix by reference), the context, the tools. */
function modelRequest(
  state: AgentLoopState,
  config: AgentLoopConfig,
  plugins: LoopPlugins,
  specs: SentSpecs,
): ModelCallInput {
  const { transcript } = state;
  // One leading system message reaches the provider: the agent's prompt, then these (activities/transcripts.ts).
  // The date and the skills block are fixed for the run, so the prompt's prefix stays the same; the summary and
  // the ledger change, and go apart: a provider with a prompt cache puts them after the transcript.
  const joined = (parts: Array<string | undefined>) =>
    parts.filter((part): part is string => Boolean(part)).join('\n\n');
  const prefix = joined([state.memory_context, state.date_context, config.skills?.promptBlock()]);
  const context = systemContext(state, config, plugins);
  // An active skill's `allowed-tools` hides the other tools (visibility; the screen refuses them too).
  const all = {
    builtin: config.builtinTools,
    specs: config.toolSpecs,
    ...(config.mcpTools && { mcp: config.mcpTools }),
  };
  const shown = config.skills ? config.skills.visible(all) : all;
  const sent = specs.sendable(shown.specs);
  return {
    model: config.model,
    agent_name: config.agentName,
    messages: transcript.tail,
    ...(transcript.stored && { transcript_ref: transcript.stored }),
    ...(transcript.fork_from && { fork_from: transcript.fork_from }),
    ...(prefix && { system_prefix: prefix }),
    ...(context && { system_context: context }),
    builtin_tools: shown.builtin,
    ...(shown.mcp && { mcp_tools: shown.mcp }),
    ...(shown.mcp?.deferred && { mcp_promoted: state.promoted_tools ?? [] }),
    // The specs go by key once an earlier call of this execution stored them.
    tools: sent.tools,
    ...(sent.key !== undefined && { tools_key: sent.key }),
    turn_index: state.turns,
  };
}

/** A model response into the state: the turn, the model, what is stored now, the usage. */
function recordResponse(state: AgentLoopState, response: ModelCallResult): void {
  state.turns += 1;
  state.model_name = response.model_name;
  // What was sent is stored now: the next call sends the reference and only what comes after it.
  if (response.transcript_ref) state.transcript = storedUpTo(response.transcript_ref);
  if (response.usage) {
    state.usage = addUsage(state.usage ?? ZERO_USAGE, response.usage);
    state.last_prompt_tokens = response.usage.input_tokens;
  }
  // Schemas the routing keywords promoted before the call: recorded as a search's are (the result is history).
  if (response.auto_promoted && response.auto_promoted.length > 0) {
    state.promoted_tools = promote(state.promoted_tools, response.auto_promoted);
  }
  if (state.measure_compaction_floor) {
    state.compaction_floor = estimatedPromptTokens(state);
    state.measure_compaction_floor = undefined;
  }
}

/** The active skills, for the live state. */
function withSkills(state: AgentLoopState): { skills?: string[] } {
  const skills = activeSkillNames(state);
  return skills ? { skills } : {};
}

/** The Web UI's live state while the model thinks. */
function showWaiting(state: AgentLoopState, config: AgentLoopConfig, lastCall: string | undefined): void {
  showLiveState({
    agent: config.agentName,
    turns: state.turns,
    ...(state.usage && { tokens: state.usage }),
    doing: `waiting for ${config.model.name} (turn ${state.turns + 1})`,
    ...(lastCall !== undefined && { lastCall }),
    ...(state.promoted_tools && { promoted: state.promoted_tools }),
    ...withSkills(state),
  });
}

/** The Web UI's live state while the response's tools run; returns the last call's line. */
function showRunning(state: AgentLoopState, config: AgentLoopConfig, calls: ToolCall[]): string {
  const lastCall = callLine(calls[calls.length - 1].name, calls[calls.length - 1].args);
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
    ...withSkills(state),
  });
  return lastCall;
}

/** The guards' warnings, told to the model after the turn's results (and logged for an operator). */
function tellGuardNotes(state: AgentLoopState, config: AgentLoopConfig, verdict: GuardsOutcome): void {
  if (verdict.notes.length === 0) return;
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

/**
 * The tree budget before a model call: DeerFlow's warning when the tree has passed its warn threshold (told
 * once), then the call's reservation (its prompt as estimated and `max_tokens` of output). A stop reason when
 * the tree cannot cover it: the agent ends as a capped one, with the text it has.
 */
async function reserveCall(
  state: AgentLoopState,
  config: AgentLoopConfig,
  budget: BudgetGate,
): Promise<TreeStopReason | undefined> {
  const warning = budget.takeWarning();
  if (warning !== undefined) {
    log.info(`tree budget warning: ${warning}`, { run_id: config.runId, agent: config.agentName });
    state.transcript.tail.push({ role: 'user', content: warning });
  }
  const want = callReservation(estimatedPromptTokens(state), config.model.max_tokens, config.model.pricing);
  return budget.beforeCall(want);
}

/** Runs turns until the model answers without tool calls, or a guard or the delegation limits stop the run. */
export async function runAgentLoop(
  state: AgentLoopState,
  config: AgentLoopConfig,
  plugins: LoopPlugins = {},
): Promise<LoopEnd> {
  const tools = new ToolCalls(state, config);
  // 429, 5xx and network errors are retried per the model's retry policy; 400/401/404 come back as a result.
  const callModel = modelActivity(config.model, HEARTBEAT_TIMEOUT);
  // Only specs built here (the task tool) travel and are stored by key: built-in tools go by name.
  const specs = new SentSpecs();
  let lastCall: string | undefined;
  for (;;) {
    // Only awaited when due: the model call is scheduled in the same activation as before (replay).
    if (needsCompaction(state, config.summarization)) await compact(state, config);
    const budgetStop = config.budget && (await reserveCall(state, config, config.budget));
    if (budgetStop) return { kind: 'guard_stopped', stopReason: budgetStop };
    if (config.followsDate) followDate(state);
    const request = modelRequest(state, config, plugins, specs);
    showWaiting(state, config, lastCall);
    const response = await callModel(
      request,
      `${config.model.name} · ${config.agentName} turn ${state.turns + 1}`,
    );
    specs.heard(response.tools_stored);
    tools.heard(response.mcp_calls);
    recordResponse(state, response);
    countCall(state, config.budget, response.usage, config.model.pricing);
    if (response.error_fallback?.context_overflow) {
      const recovered = await recoverFromOverflow(state, config, response.error_fallback);
      if (recovered === true) continue;
      return { kind: 'error_fallback', error: recovered };
    }
    if (response.error_fallback) return { kind: 'error_fallback', error: response.error_fallback };
    if (state.overflow_compacted) state.overflow_compacted = undefined;

    const verdict = runGuards(config.guards, state.guard_states, {
      turn: state.turns,
      usage: state.usage ?? ZERO_USAGE,
      response,
    });
    state.guard_states = verdict.states;
    plugins.onTurn?.(state);
    const finishReason = response.finish_reason;
    const safety = safetyStop(response, config.model);
    if (safety) {
      // Stopped for safety: its tool calls (truncated or unreliable) are dropped, never run; the agent fails.
      record(state, config, { role: 'assistant', content: response.content });
      return safety;
    }
    if (verdict.stop) {
      // The guard's cap: this turn's tool calls are dropped and the run ends with the text so far.
      record(state, config, { role: 'assistant', content: response.content });
      return { kind: 'guard_stopped', stopReason: verdict.stop, finishReason };
    }
    let message: AssistantMessage = { role: 'assistant', content: response.content };
    if (response.tool_calls.length > 0) message.tool_calls = response.tool_calls;
    // The provider's thinking goes back to it on the next turns (Anthropic refuses tool results without it).
    if (response.provider_blocks) message.provider_blocks = response.provider_blocks;
    let capped = false;
    if (plugins.applyDelegationLimits) ({ message, capped } = plugins.applyDelegationLimits(message));
    record(state, config, message);
    const calls = message.tool_calls ?? [];
    if (calls.length === 0) {
      return capped ? { kind: 'delegation_capped', finishReason } : { kind: 'answered', finishReason };
    }

    // The skills' policy, in the calls' order: refusals are results, never run; reads of a SKILL.md activate.
    const skillScreen = config.skills?.screen(calls);
    // Then the guardrails, on what the skills let through: a denial is a result too, and never runs. Only a run
    // whose input has guardrails awaits here (no command for a built-in provider; a module's local activity).
    const screened = config.guardrails
      ? await config.guardrails.screen(calls, skillScreen, config.approvals)
      : skillScreen;
    lastCall = showRunning(state, config, calls);
    const settled = await tools.start(calls, plugins.claimedCalls, screened);
    tools.inCallOrder(calls, settled).forEach(({ result, promoted, readMark }, i) => {
      // Promotions in the calls' order, from the search's recorded result: a replay promotes the same.
      if (promoted && promoted.length > 0) state.promoted_tools = promote(state.promoted_tools, promoted);
      // So are the read marks (read_before_write), from the read's recorded result.
      if (readMark) state.read_marks = { ...state.read_marks, [readMark.key]: readMark.hash };
      record(state, config, result, promoted, screened?.[i]?.activated);
    });
    tellGuardNotes(state, config, verdict);
    if (capped) return { kind: 'delegation_capped', finishReason };
    if (plugins.shouldContinueAsNew?.()) return { kind: 'continue_as_new' };
  }
}
