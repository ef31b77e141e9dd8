/**
 * The graph activity: one graph agent's whole run, durable. The graph runs with a checkpointer whose
 * checkpoints reach the payload store after every super-step (durability `sync`: the next step starts only once
 * the last one is stored), and the activity heartbeats where the latest one is; a retried attempt (the worker
 * died) resumes from there instead of starting over.
 *
 * Guards: the recursion limit maps `max_turns` (what is left of it on a resumed attempt) → `turn_capped`; the
 * token budget's hard stop ends the graph after the super-step that reached it → `token_capped`; the wall clock
 * (`deadline_ms`) and a cancel abort it through the signal LangGraph takes. Each keeps the partial answer: the
 * last AI text in the latest checkpoint.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import { HumanMessage, type AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { LLMResult } from '@langchain/core/outputs';
import type { GraphProgress, GraphRunInput, GraphRunResult } from '../../contracts/graph';
import { addUsage, ZERO_USAGE } from '../../contracts/messages';
import type { TokenBudgetSettings } from '../../contracts/subagent';
import { checkTokenBudget, type TokenBudgetState } from '../../contracts/token-budget';
import { keepHeartbeatDetails, whileHeartbeating } from '../activity-context';
import type { ModelProviders } from '../model';
import { GraphModelFallback, ProjectChatModel } from './chat-model';
import { StoredCheckpointSaver } from './checkpointer';
import { graphStepMessages } from './graph-messages';
import type { GraphActivityDeps } from './index';
import { GraphModuleError, loadGraph, withCheckpointer, type CompiledGraph } from './load-graph';

/** Sums the provider-reported usage of every model call the graph makes (its nodes' calls included). */
class UsageCollector extends BaseCallbackHandler {
  name = 'graph-usage';
  // Counted before the node goes on, so the budget check after the super-step sees every call.
  override awaitHandlers = true;

  constructor(
    private readonly progress: GraphProgress,
    private readonly changed: () => void,
  ) {
    super();
  }

  override handleLLMEnd(output: LLMResult): void {
    this.progress.model_calls += 1;
    for (const generation of output.generations.flat()) {
      const message = (generation as { message?: AIMessage }).message;
      const usage = message?.usage_metadata;
      if (usage) {
        const input = usage.input_tokens || 0;
        const outputTokens = usage.output_tokens || 0;
        this.progress.usage = addUsage(this.progress.usage ?? ZERO_USAGE, {
          input_tokens: input,
          output_tokens: outputTokens,
          total_tokens: usage.total_tokens || input + outputTokens,
        });
      }
      const name = message?.response_metadata?.model_name;
      if (typeof name === 'string' && name !== '') this.progress.model_name = name;
    }
    this.changed();
  }
}

/**
 * Refuses to start a node past the run's super-step budget. LangGraph numbers a run's super-steps from its
 * first checkpoint (`langgraph_step`, resumed attempts included); its own recursion limit counts from where an
 * invocation starts, so only this holds the total on a resumed attempt.
 */
class TurnGate extends BaseCallbackHandler {
  name = 'graph-turn-gate';
  override awaitHandlers = true;
  // A handler's error is only logged unless it says otherwise.
  override raiseError = true;

  constructor(private readonly limit: number) {
    super();
  }

  override handleChainStart(
    _chain: unknown,
    _inputs: unknown,
    _runId: string,
    _runType?: string,
    _tags?: string[],
    metadata?: Record<string, unknown>,
  ): void {
    const step = metadata?.langgraph_step;
    if (typeof step === 'number' && step > this.limit) throw new StopGraph('turn_capped');
  }
}

/** Ends the run early at a super-step's end, with this stop reason. */
class StopGraph extends Error {
  constructor(readonly stopReason: 'token_capped' | 'turn_capped') {
    // Worded for the log line LangChain writes when a handler stops a run.
    super(
      stopReason === 'turn_capped' ? 'the turn budget (max_turns) is spent' : 'the token budget is spent',
    );
  }
}

/** The token budget, asked after every model call of the graph: a one-time note, then the stop. */
class GraphBudget {
  private state: TokenBudgetState;
  private note: string | undefined;
  /** The budget is spent: the graph stops at the end of the super-step it is in. */
  spent = false;

  constructor(
    private readonly budget: TokenBudgetSettings,
    private readonly progress: GraphProgress,
  ) {
    this.state = { warned: progress.budget_warned === true };
  }

  check(): void {
    if (this.progress.usage === undefined) return;
    const { state, verdict } = checkTokenBudget(this.budget, this.state, this.progress.usage.total_tokens);
    this.state = state;
    this.progress.budget_warned = state.warned;
    if (verdict.note !== undefined) this.note = verdict.note;
    if (verdict.stop !== undefined) this.spent = true;
  }

  /** The note for the next model call, once. */
  takeNote(): string | undefined {
    const note = this.note;
    this.note = undefined;
    return note;
  }
}

/** One graph agent's run (the activity `runGraphSubagent`: ./index.ts). */
export async function runGraphSubagent(
  { store, providers }: GraphActivityDeps,
  input: GraphRunInput,
): Promise<GraphRunResult> {
  const previous = previousProgress();
  const progress: GraphProgress = { super_steps: 0, model_calls: 0, ...previous };
  const beat = (): void => {
    try {
      Context.current().heartbeat(progress);
    } catch {
      // Outside an activity (called directly): nothing to beat.
    }
  };
  keepHeartbeatDetails(() => progress);
  const saver = new StoredCheckpointSaver(store, (head) => {
    progress.head = head;
    beat();
  });
  const thread = { configurable: { thread_id: input.thread_id } };
  // The agent loop's own token rule, asked after every model call.
  const budget = new GraphBudget(input.token_budget, progress);

  let graph: CompiledGraph;
  try {
    if (previous?.head !== undefined) await whileHeartbeating(() => saver.restore(previous.head as string));
    graph = await loadCompiledGraph(input, saver, budget, providers);
  } catch (err) {
    if (!(err instanceof GraphModuleError)) throw err;
    return { end: 'failed', error: err.message, model_calls: 0, super_steps: 0, messages: [] };
  }

  /** The run's result: how it ended, and the answer (or the partial one) in the graph's latest state. */
  const finished = async (end: GraphRunEnding): Promise<GraphRunResult> => {
    // Whatever a stopped graph was still writing is awaited before its state is read.
    const state = await graph.getState(thread);
    const messages = graphStepMessages(
      (state.values as { messages?: BaseMessage[] } | undefined)?.messages ?? [],
    );
    const text = [...messages]
      .reverse()
      .find((m) => m.role === 'assistant' && m.content.trim() !== '')?.content;
    return {
      ...(typeof end === 'string' ? { end } : end),
      ...(text !== undefined && { text }),
      ...(progress.usage && { usage: progress.usage }),
      ...(progress.model_name !== undefined && { model_name: progress.model_name }),
      model_calls: progress.model_calls,
      super_steps: progress.super_steps,
      messages,
      ...(previous?.head !== undefined && { resumed: true }),
    };
  };
  const latest = await saver.getTuple(thread);
  // An earlier attempt may have spent the budget in the step it did not finish.
  budget.check();
  if (budget.spent) return await finished('token_capped');
  const deadline =
    input.deadline_ms === undefined
      ? undefined
      : AbortSignal.timeout(Math.max(0, input.deadline_ms - Date.now()));
  const end = await whileHeartbeating(
    async (signal) => {
      const stream = await graph.stream(
        latest === undefined ? { messages: [new HumanMessage(input.prompt)] } : null,
        {
          ...thread,
          // LangGraph counts this from where an invocation starts (a resumed attempt would get a fresh budget);
          // TurnGate holds the run's total.
          recursionLimit: input.recursion_limit,
          durability: 'sync',
          // Updates name the nodes that ran; values come once the super-step's checkpoint is stored.
          streamMode: ['updates', 'values'],
          callbacks: [
            new UsageCollector(progress, () => {
              budget.check();
              beat();
            }),
            new TurnGate(input.recursion_limit),
          ],
          signal,
        },
      );
      for await (const [mode, chunk] of stream as AsyncIterable<[string, unknown]>) {
        if (mode === 'updates') {
          const nodes = Object.keys(chunk as object);
          if (nodes.length > 0) progress.node = nodes.join(', ');
          continue;
        }
        const snapshot = await graph.getState(thread);
        progress.super_steps = Math.max(0, snapshot.metadata?.step ?? 0);
        beat();
        if (budget.spent) throw new StopGraph('token_capped');
      }
      return 'answered' as const;
    },
    { signal: deadline },
  ).catch((err: unknown) => graphEnding(input, deadline, err));
  return await finished(end);
}

/** The agent's graph, with the project's chat model and the store's checkpointer. */
async function loadCompiledGraph(
  input: GraphRunInput,
  saver: StoredCheckpointSaver,
  budget: GraphBudget,
  providers: ModelProviders,
): Promise<CompiledGraph> {
  const compiled = await loadGraph(input.graph, {
    model: new ProjectChatModel({
      model: input.model,
      agentName: input.agent_name,
      providers,
      takeNote: () => budget.takeNote(),
    }),
    systemPrompt: input.system_prompt,
    agentName: input.agent_name,
    workspace: input.workspace,
  });
  return withCheckpointer(compiled, saver);
}

/** How a run that threw ended: a stop of ours, the deadline, a model's fallback, or a failure of the graph. */
function graphEnding(input: GraphRunInput, deadline: AbortSignal | undefined, err: unknown): GraphRunEnding {
  if (err instanceof StopGraph) return err.stopReason;
  if (deadline?.aborted && err === deadline.reason) return 'timed_out';
  if (err instanceof Error && err.name === 'GraphRecursionError') return 'turn_capped';
  if (err instanceof GraphModelFallback) return { end: 'failed', error_fallback: err.fallback };
  // A cancel, and a provider error time can fix (the attempt is retried and resumes), go to Temporal.
  if (err instanceof ApplicationFailure || Context.current().cancellationSignal.aborted) throw err;
  return {
    end: 'failed',
    error: `graph ${input.agent_name} failed: ${(err as Error).message}`,
  };
}

/** How a run ended: the end alone, or a failure with its reason. */
type GraphRunEnding = GraphRunResult['end'] | Pick<GraphRunResult, 'end' | 'error' | 'error_fallback'>;

/** The last heartbeat of an earlier attempt, when this one is a retry. */
function previousProgress(): GraphProgress | undefined {
  try {
    const details = Context.current().info.heartbeatDetails as GraphProgress | undefined;
    return typeof details === 'object' && details !== null ? details : undefined;
  } catch {
    return undefined;
  }
}
