/**
 * The lead's memory (issue 48): as it starts, the user's facts are read (an activity) and kept in the loop's
 * state as the `<memory>` block of its system prompt (carried across continue-as-new, so every turn and a replay
 * send the same text); in `mode: tool` the lead is given DeerFlow's four memory tools, run by the workflow itself
 * (claimed calls) as one activity each: a search reads, the others are an Update of `memory/<user_id>`. Only the
 * lead has memory: subagents are never given it.
 */
import { proxyActivities, uuid4, workflowInfo } from '@temporalio/workflow';
import type { ProjectActivities } from '../../activities';
import {
  DEFAULT_MEMORY_SETTINGS,
  isMemoryToolName,
  MEMORY_TOOL_SYSTEM,
  memoryToolSpecs,
  parseMemoryToolCall,
  type MemoryChangeResult,
  type RememberedMessage,
  type RunMemorySettings,
} from '../../contracts/memory';
import type { ModelSettings } from '../../contracts/input-schemas';
import { toolMessageFor, type ToolCall, type ToolMessage, type ToolSpec } from '../../contracts/messages';
import { DEFAULT_USER_ID } from '../../contracts/user';
import type { AgentLoopState, LoopPlugins } from '../agent-loop';

const { memoryContext, memorySearch, memoryChange } = proxyActivities<ProjectActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

export class AgentMemory {
  private readonly userId: string;

  constructor(
    private readonly settings: RunMemorySettings,
    userId: string | undefined,
    private readonly runId: string,
  ) {
    this.userId = userId ?? DEFAULT_USER_ID;
  }

  private get tools(): boolean {
    return this.settings.mode === 'tool';
  }

  /** Reads the user's facts into the state once per run (a continued execution keeps what its first read). */
  async load(state: AgentLoopState): Promise<void> {
    if (state.memory_context !== undefined) return;
    let block = '';
    if (this.settings.injection_enabled) {
      const read = await memoryContext({
        user_id: this.userId,
        max_injection_tokens: this.settings.max_injection_tokens,
      });
      block = read.block;
    }
    state.memory_context = [block, this.tools ? MEMORY_TOOL_SYSTEM : ''].filter(Boolean).join('\n\n');
  }

  toolSpecs(): ToolSpec[] {
    return this.tools ? memoryToolSpecs() : [];
  }

  /** The memory tools' calls, run one after another in the model's order (a search sees an add before it). */
  claimedCalls(): LoopPlugins['claimedCalls'] {
    if (!this.tools) return undefined;
    return {
      claims: (call) => isMemoryToolName(call.name),
      run: async (calls) => {
        const results: ToolMessage[] = [];
        for (const call of calls) results.push(await this.run(call));
        return results;
      },
    };
  }

  /**
   * `mode: middleware`: the run's conversation (the user's task and the final answer, the turns DeerFlow's
   * MemoryMiddleware keeps) queued in the user's memory workflow, which extracts facts from it with `model`
   * once no run has ended for `debounce_seconds`. Named by the run: a retried activity queues it once.
   */
  async remember(prompt: string, answer: string, model: ModelSettings): Promise<void> {
    const messages: RememberedMessage[] = [
      { role: 'user', content: prompt },
      ...(answer.trim() !== '' ? [{ role: 'assistant' as const, content: answer }] : []),
    ];
    await memoryChange({
      user_id: this.userId,
      max_facts: this.settings.max_facts,
      change: {
        op_id: `${workflowInfo().workflowId}/memory/remember`,
        op: {
          kind: 'remember',
          messages,
          extraction: {
            model,
            fact_confidence_threshold:
              this.settings.fact_confidence_threshold ?? DEFAULT_MEMORY_SETTINGS.fact_confidence_threshold,
            debounce_seconds: this.settings.debounce_seconds ?? DEFAULT_MEMORY_SETTINGS.debounce_seconds,
          },
        },
        source_run: this.runId,
        at: new Date().toISOString(),
        max_facts: this.settings.max_facts,
      },
    });
  }

  private async run(call: ToolCall): Promise<ToolMessage> {
    if (!isMemoryToolName(call.name))
      return toolMessageFor(call, JSON.stringify({ error: 'unknown tool' }), true);
    const parsed = parseMemoryToolCall(call.name, call.args);
    if (!parsed.ok) return toolMessageFor(call, JSON.stringify({ error: parsed.error }), true);
    const request = parsed.call;
    if ('tool' in request) {
      const results = await memorySearch({
        user_id: this.userId,
        query: request.query,
        ...(request.category !== undefined && { category: request.category }),
        limit: request.limit,
      });
      if (!Array.isArray(results)) return toolMessageFor(call, JSON.stringify(results), true);
      return toolMessageFor(call, JSON.stringify({ results, count: results.length }));
    }
    const result: MemoryChangeResult = await memoryChange({
      user_id: this.userId,
      max_facts: this.settings.max_facts,
      change: {
        // Named here, once: a retried activity sends the same id, and the change is made once.
        op_id: `${workflowInfo().workflowId}/memory/${uuid4()}`,
        op: request,
        source_run: this.runId,
        at: new Date().toISOString(),
        max_facts: this.settings.max_facts,
      },
    });
    return toolMessageFor(call, JSON.stringify(result), 'error' in result);
  }
}
