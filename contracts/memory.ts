/**
 * Per-user memory (issue 48, DeerFlow's `memory:`): one entity workflow per user (`memory/<user_id>`) keeps the
 * user's facts; a lead reads them as it starts and is told them in its system prompt (DeerFlow's `<memory>`
 * block, its fact lines and its token cap); in `mode: tool` the lead also gets DeerFlow's four memory tools, each
 * an Update of that workflow. The wire shapes, the workflow's names and the words the model sees are here. Pure:
 * no Node APIs (the workflow bundle imports this file).
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { ModelSettings } from './input-schemas';
import { DEFAULT_USER_ID } from './user';

/** The memory workflow's type, as a worker registers it. */
export const MEMORY_WORKFLOW_TYPE = 'memoryWorkflow';

/** The workflow that keeps `userId`'s facts. */
export function memoryWorkflowId(userId: string | undefined): string {
  return `memory/${userId ?? DEFAULT_USER_ID}`;
}

export {
  DEFAULT_MEMORY_SETTINGS,
  MEMORY_MODES,
  runMemorySchema,
  type MemoryMode,
  type RunMemorySettings,
} from './memory-settings';

/** One remembered fact. */
export interface MemoryFact {
  id: string;
  content: string;
  /** DeerFlow's labels: `preference`, `correction`, `behavior`, `personal`, `context` (the default), … */
  category: string;
  /** 0–1: how sure the agent that stored it was. */
  confidence: number;
  /** The run that stored it (or last changed it); `cli` for a person's own edit. */
  source_run: string;
  created_at: string;
  updated_at: string;
}

// ---- `mode: middleware`: what a run queues for the extraction (contracts/memory-extraction.ts) ----

/** What the extraction needs of the run's config: its model and DeerMem's thresholds. */
export interface MemoryExtractionSettings {
  /** The model that reads the conversations: the lead's. */
  model: ModelSettings;
  /** A new fact less sure than this is not kept (DeerMem's `fact_confidence_threshold`). */
  fact_confidence_threshold: number;
  /** How long after the last run ended the extraction waits for more (DeerMem's `debounce_seconds`). */
  debounce_seconds: number;
}

/** One message of a run's conversation, as the extraction is shown it (DeerFlow keeps user and final AI turns). */
export interface RememberedMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** A run's conversation, queued in the memory workflow until the next extraction. */
export interface PendingConversation {
  run_id: string;
  messages: RememberedMessage[];
  /** When it was queued (the run's workflow time). */
  at: string;
}

/** A change to a user's facts. `op_id` makes it happen once, however often it is sent. */
export type MemoryOp =
  | { kind: 'add'; content: string; category: string; confidence: number }
  | { kind: 'update'; fact_id: string; content?: string; category?: string; confidence?: number }
  | { kind: 'delete'; fact_id: string }
  | { kind: 'clear' }
  /** `middleware`: a run's conversation, queued for the next extraction (a run's again replaces its first). */
  | { kind: 'remember'; messages: RememberedMessage[]; extraction: MemoryExtractionSettings };

export interface MemoryChange {
  /** Who asks, deterministically named (`<workflow id>/<tool call id>`): a retried request is answered, not redone. */
  op_id: string;
  op: MemoryOp;
  /** The run the change comes from (`source_run`); `cli` for a person's own edit. */
  source_run: string;
  /** When, as the asker's clock said (workflow time for a run): the fact's times. */
  at: string;
  /** The asker's `max_facts` (the config may have changed since the workflow started); absent: the workflow's. */
  max_facts?: number;
}

/** What a change did: DeerFlow's tool results (`fact_id` and `status`, or `error`). */
export type MemoryChangeResult =
  | { status: 'added' | 'updated' | 'deleted'; fact_id: string }
  | { status: 'cleared'; count: number }
  | { status: 'queued'; pending: number }
  | { error: string };

/** The memory workflow's input, a new one's or a continued one's. */
export interface MemoryWorkflowInput {
  user_id: string;
  max_facts: number;
  facts?: MemoryFact[];
  /** The number of the last fact id given out. */
  last_fact?: number;
  /** The latest changes' ids and results, so that a change sent again (a retried activity) is not done twice. */
  recent?: Array<[string, MemoryChangeResult]>;
  /** `middleware`: the conversations queued for the next extraction, and its settings (the latest run's). */
  pending?: PendingConversation[];
  extraction?: MemoryExtractionSettings;
}

/** How many changes a memory workflow remembers having done (by `op_id`), across continue-as-new. */
export const MEMORY_RECENT_CHANGES = 256;

/** Changes an execution takes before it continues as new: its history stays small whatever the user's age. */
export const MEMORY_CHANGES_PER_EXECUTION = 500;

export const memoryChangeUpdate = defineUpdate<MemoryChangeResult, [MemoryChange]>('memory_change');
export const memoryFactsQuery = defineQuery<MemoryFact[]>('memory_facts');

/** DeerFlow's key for the duplicate check: the content, trimmed, case folded. */
export function contentKey(content: string): string {
  return content.trim().toLowerCase();
}

/** A confidence kept within 0–1 (DeerFlow's `_coerce_confidence`). */
export function boundedConfidence(value: number, fallback = 0): number {
  if (!Number.isFinite(value)) return Math.max(0, Math.min(1, fallback));
  return Math.max(0, Math.min(1, value));
}

// ---- What the model is told ----

/** `<`, `>` and `&` escaped, so a fact cannot close the `<memory>` block (DeerFlow escapes them too). */
function escaped(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** DeerFlow's fact line: `- [category | 0.90] content`. */
export function factLine(fact: Pick<MemoryFact, 'content' | 'category' | 'confidence'>): string {
  const category = escaped(fact.category.trim() || 'context');
  return `- [${category} | ${boundedConfidence(fact.confidence).toFixed(2)}] ${escaped(fact.content.trim())}`;
}

/**
 * Tokens of `text`, estimated from its characters (DeerFlow's `token_counting: char`, network-free): a CJK
 * character is a token, four others are one.
 */
export function estimatedTokens(text: string): number {
  let cjk = 0;
  for (const ch of text) if (/[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]/.test(ch)) cjk += 1;
  return cjk + Math.ceil((text.length - cjk) / 4);
}

/**
 * The `<memory>` block the lead is told, as DeerFlow injects it: `Facts:` and one line per fact, most confident
 * first, as many as fit in `maxTokens` (a fact that does not fit ends the list, so order is kept). Empty when
 * there is nothing to tell.
 */
export function memoryBlock(facts: readonly MemoryFact[], maxTokens: number): string {
  const ranked = [...facts]
    .filter((fact) => fact.content.trim() !== '')
    .sort((a, b) => b.confidence - a.confidence || a.created_at.localeCompare(b.created_at));
  const header = 'Facts:\n';
  let budget = maxTokens - estimatedTokens(header);
  const lines: string[] = [];
  for (const fact of ranked) {
    const line = factLine(fact);
    const cost = estimatedTokens(lines.length > 0 ? `\n${line}` : line);
    if (cost > budget) break;
    lines.push(line);
    budget -= cost;
  }
  if (lines.length === 0) return '';
  return `<memory>\n${header}${lines.join('\n')}\n</memory>`;
}

// ---- The memory tools (`mode: tool`), DeerFlow's names, arguments and descriptions ----

export const MEMORY_TOOL_NAMES = ['memory_search', 'memory_add', 'memory_update', 'memory_delete'] as const;
export type MemoryToolName = (typeof MEMORY_TOOL_NAMES)[number];

export function isMemoryToolName(name: string): name is MemoryToolName {
  return (MEMORY_TOOL_NAMES as readonly string[]).includes(name);
}

const CATEGORY_EXAMPLES = 'e.g. "preference", "correction", "behavior", "personal"';

/** The four tools' specs, as DeerFlow describes them to the model. */
export function memoryToolSpecs() {
  const string = (description: string) => ({ type: 'string', description });
  const number = (description: string) => ({ type: 'number', description });
  const spec = (name: MemoryToolName, description: string, properties: object, required: string[]) => ({
    name,
    description,
    parameters: { type: 'object', properties, required, additionalProperties: false },
  });
  return [
    spec(
      'memory_search',
      'Search existing facts by natural language query. Use this when you need to check what you already know ' +
        'about the user - their preferences, past corrections, context, or any stored facts.',
      {
        query: string(
          'Natural language query to match against fact content. Case-insensitive substring matching.',
        ),
        category: string(
          'Optional category filter (e.g. "preference", "correction", "context"). Only facts with this exact category are returned.',
        ),
        limit: number('Maximum results to return (default 10).'),
      },
      ['query'],
    ),
    spec(
      'memory_add',
      'Store a new fact about the user or conversation context. Use this when the user shares something worth ' +
        'remembering for future conversations - preferences, corrections, personal details, work context. The fact ' +
        'persists across sessions and will be available via memory_search and automatic context injection.',
      {
        content: string('The fact text to remember. Be specific and factual.'),
        category: string(`Category label for organization (default "context"). ${CATEGORY_EXAMPLES}.`),
        confidence: number(
          'How certain you are about this fact, 0.0-1.0 (default 0.7). Use higher values for explicit user statements, lower for inferences.',
        ),
      },
      ['content'],
    ),
    spec(
      'memory_update',
      'Update an existing fact. Only provided fields are changed; omitted fields stay as-is. Use this when a ' +
        'stored fact is outdated, incorrect, or needs refinement. First use memory_search to find the fact_id, then update it.',
      {
        fact_id: string('Fact ID from memory_search results (required).'),
        content: string('New fact text (unchanged if omitted).'),
        category: string('New category (unchanged if omitted).'),
        confidence: number('New confidence score 0.0-1.0 (unchanged if omitted).'),
      },
      ['fact_id'],
    ),
    spec(
      'memory_delete',
      'Delete a fact by its ID. Use this when a fact is no longer accurate or relevant. First use memory_search ' +
        'to find the fact_id, then delete it.',
      { fact_id: string('Fact ID to delete (from memory_search results).') },
      ['fact_id'],
    ),
  ];
}

/** DeerFlow's `<memory_tool_system>` section of the lead's prompt, in tool mode. */
export const MEMORY_TOOL_SYSTEM = `<memory_tool_system>
Use the memory tools to keep durable user memory accurate:
- Call \`memory_search\` whenever prior preferences, constraints, corrections, or durable context may be relevant. Do not assume an absent fact does not exist until you have searched with an appropriate query.
- Call \`memory_add\` only for stable facts useful in future sessions: explicit user preferences, corrections, personal/work context, or durable project context.
- Call \`memory_update\` when an existing fact is outdated or imprecise; prefer updating over adding a near-duplicate.
- Call \`memory_delete\` only when a fact is clearly wrong or no longer relevant.
</memory_tool_system>`;

/** A memory tool call, read from the model's arguments (DeerFlow's defaults filled in). */
export type MemoryToolCall =
  { tool: 'memory_search'; query: string; category?: string; limit: number } | MemoryOp;

function field(args: Record<string, unknown>, key: string, kind: 'string' | 'number'): unknown {
  const value = args[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== kind) throw new Error(`${key} must be a ${kind}`);
  return value;
}

/** The call's arguments as a memory request, or the error the model is told (DeerFlow's JSON `error`). */
export function parseMemoryToolCall(
  name: MemoryToolName,
  rawArgs: string,
): { ok: true; call: MemoryToolCall } | { ok: false; error: string } {
  try {
    const parsed: unknown = rawArgs.trim() === '' ? {} : JSON.parse(rawArgs);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error('arguments must be an object');
    const args = parsed as Record<string, unknown>;
    const str = (key: string) => field(args, key, 'string') as string | undefined;
    const num = (key: string) => field(args, key, 'number') as number | undefined;
    const need = (key: string) => {
      const value = str(key);
      if (value === undefined || value.trim() === '') throw new Error(`${key} is required`);
      return value;
    };
    switch (name) {
      case 'memory_search': {
        const category = str('category');
        const limit = num('limit') ?? 10;
        return { ok: true, call: { tool: name, query: need('query'), ...(category && { category }), limit } };
      }
      case 'memory_add': {
        const content = str('content')?.trim() ?? '';
        if (content === '') return { ok: false, error: 'empty content' };
        const confidence = boundedConfidence(num('confidence') ?? 0.7, 0.7);
        return {
          ok: true,
          call: { kind: 'add', content, category: str('category') ?? 'context', confidence },
        };
      }
      case 'memory_update': {
        const content = str('content');
        const category = str('category');
        const confidence = num('confidence');
        return {
          ok: true,
          call: {
            kind: 'update',
            fact_id: need('fact_id'),
            ...(content !== undefined && { content }),
            ...(category !== undefined && { category }),
            ...(confidence !== undefined && { confidence: boundedConfidence(confidence) }),
          },
        };
      }
      case 'memory_delete':
        return { ok: true, call: { kind: 'delete', fact_id: need('fact_id') } };
    }
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

/** DeerFlow's `memory_search`: a case-insensitive substring match, most confident first. */
export function searchFacts(
  facts: readonly MemoryFact[],
  request: { query: string; category?: string; limit: number },
): MemoryFact[] {
  const needle = contentKey(request.query);
  return facts
    .filter((fact) => request.category === undefined || fact.category === request.category)
    .filter((fact) => contentKey(fact.content).includes(needle))
    .sort((a, b) => b.confidence - a.confidence)
    .slice(0, Math.max(0, Math.floor(request.limit)));
}
