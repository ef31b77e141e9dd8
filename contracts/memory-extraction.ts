/**
 * `memory.mode: middleware` (DeerFlow's default, issue 48): after a lead run ends, its conversation (the user's
 * input and the final answer, as DeerFlow's MemoryMiddleware keeps them) is queued in the user's memory
 * workflow; once no run has ended for `debounce_seconds` (a durable timer in that workflow) one model call reads
 * every queued conversation and the facts already kept, and answers in DeerMem's JSON: `newFacts` (each with
 * `category`, `confidence` and DeerFlow's `scope` / `durability` / `authority` labels) and `factsToRemove`. The
 * words the extraction model is told, and how its answer is read and filtered, are here. Pure: no Node APIs
 * (the workflow bundle imports this file).
 */
import type { TokenUsage } from './messages';
import {
  boundedConfidence,
  type MemoryExtractionSettings,
  type MemoryFact,
  type PendingConversation,
} from './memory';
import { truncateHeadTail } from './text';

/** A fact the extraction proposes, as DeerMem's `newFacts` entry (its gate labels already checked). */
export interface ExtractedFact {
  content: string;
  category: string;
  confidence: number;
}

/** What one extraction asks of the memory: facts to add and facts to drop. */
export interface MemoryExtraction {
  add: ExtractedFact[];
  /** Ids of kept facts the conversations contradict or retract (DeerMem's user-scoped `factsToRemove`). */
  remove: string[];
  usage?: TokenUsage;
}

/** The extraction activity's input (the memory workflow schedules it). */
export interface MemoryExtractionRequest {
  user_id: string;
  settings: MemoryExtractionSettings;
  facts: MemoryFact[];
  conversations: PendingConversation[];
}

/** The most conversations one extraction reads: past it, the extraction goes without waiting for more. */
export const MEMORY_PENDING_MAX = 20;

/** Characters of one message, and of all the conversations, that the extraction is shown (head and tail kept). */
const MESSAGE_CHARS = 4000;
const CONVERSATIONS_CHARS = 60_000;

/** The extraction's name in the model's metrics and in a scripted model's script. */
export const MEMORY_EXTRACTION_AGENT = 'memory';

/** DeerMem's memory-update instructions (`memory_update.chat.yaml`), for the facts this project keeps. */
export const MEMORY_EXTRACTION_PROMPT = `You are a memory management system. Your task is to analyze a conversation and update the user's memory profile.

Instructions:
1. Analyze the conversation for important information about the user
2. Extract relevant facts, preferences, and context with specific details (numbers, names, technologies)

Scope and Safety Classification:
- scope="user": a property, preference, background detail, ongoing personal state, or durable working pattern of the user that is safe and useful to inject into an unrelated future thread, task, project, or repository.
- scope="thread": information limited to the current request or conversation, including one-off constraints for a reply, file, email, trip, PR, test, or action.
- scope="project": a rule, decision, state, or constraint that is meaningful only inside a particular project or repository, even if it may span several threads.
- durability="durable": expected to remain true across future conversations. durability="temporary": current, short-lived, or one-off information.
- authority="transactional": an instruction, grant, permission, or authorization to perform an action such as editing, deleting, pushing, closing, publishing, or force-pushing. Transactional content must never become long-term memory.
- authority="descriptive": describes the user without granting authority for an action.
- When uncertain, use thread/project or temporary; never guess user+durable.

Facts Extraction:
- Every new fact MUST include scope, durability, and authority. These labels are evaluated by a deterministic write gate and are not persisted.
- Only facts classified as scope="user", durability="durable", authority="descriptive" are eligible for storage.
- Do not create facts for current-task objectives, acceptance criteria, workspace state, exact current file/commit/error state, project-only constraints, or one-time action permissions.
- Extract specific, quantifiable details; include proper nouns; preserve technical terminology and version numbers
- Categories:
  * preference: Tools, styles, approaches user prefers/dislikes
  * knowledge: Specific expertise, technologies mastered, domain knowledge
  * context: Background facts (job title, projects, locations, languages)
  * behavior: Working patterns, communication habits, problem-solving approaches
  * goal: Stated objectives, learning targets, project ambitions
  * correction: Explicit agent mistakes or user corrections, including the correct approach
- Confidence levels:
  * 0.9-1.0: Explicitly stated facts ("I work on X", "My role is Y")
  * 0.7-0.8: Strongly implied from actions/discussions
  * 0.5-0.6: Inferred patterns (use sparingly, only for clear patterns)

Output Format (JSON):
{
  "newFacts": [
    { "content": "...", "category": "preference|knowledge|context|behavior|goal|correction", "confidence": 0.0-1.0, "scope": "user|thread|project", "durability": "durable|temporary", "authority": "descriptive|transactional" }
  ],
  "factsToRemove": [
    { "id": "fact_id_1", "scope": "user|thread|project", "reason": "explicit user-level contradiction or retraction" }
  ]
}

Important Rules:
- Only add facts that are clearly stated (0.9+) or strongly implied (0.7+)
- Do not add a fact that Current Memory State already holds
- Remove an existing fact only when the user explicitly contradicts or retracts it at user scope. A thread/project-local exception does not contradict a user-level fact.
- IMPORTANT: Do NOT record file upload events in memory. Uploaded files are session-specific and ephemeral.

Return ONLY valid JSON, no explanation or markdown.`;

/** The user message of the extraction call: the kept facts, then every queued conversation, oldest first. */
export function extractionUserMessage(
  facts: readonly MemoryFact[],
  conversations: readonly PendingConversation[],
): string {
  const current = facts.map(({ id, content, category, confidence }) => ({
    id,
    content,
    category,
    confidence,
  }));
  const conversation = conversations
    .map((c) =>
      c.messages
        .map(
          (m) => `${m.role === 'user' ? 'User' : 'Assistant'}: ${truncateHeadTail(m.content, MESSAGE_CHARS)}`,
        )
        .join('\n\n'),
    )
    .join('\n\n---\n\n');
  return [
    'Current Memory State:',
    '<current_memory>',
    JSON.stringify({ facts: current }, null, 2),
    '</current_memory>',
    '',
    'New Conversation to Process:',
    '<conversation>',
    truncateHeadTail(conversation, CONVERSATIONS_CHARS),
    '</conversation>',
    '',
    'Update the memory based on the above conversation.',
  ].join('\n');
}

const label = (value: unknown) => (typeof value === 'string' ? value.trim().toLowerCase() : undefined);

/** The JSON object of a model's answer, a fenced block or prose around it allowed (models add them). */
function answerObject(text: string): Record<string, unknown> {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end < start) throw new Error('the answer holds no JSON object');
  const parsed: unknown = JSON.parse(text.slice(start, end + 1));
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error('the answer is not a JSON object');
  }
  return parsed as Record<string, unknown>;
}

/**
 * The extraction's answer as changes, filtered as DeerMem's write gate filters them: a new fact is kept only
 * when labelled `scope: user`, `durability: durable`, `authority: descriptive`, with non-empty content and a
 * confidence at or above `threshold`; a removal only when user-scoped, with a reason. Throws on an answer that
 * is not DeerMem's JSON.
 */
export function readExtraction(text: string, threshold: number): Pick<MemoryExtraction, 'add' | 'remove'> {
  const answer = answerObject(text);
  const newFacts = Array.isArray(answer.newFacts) ? (answer.newFacts as unknown[]) : [];
  const removals = Array.isArray(answer.factsToRemove) ? (answer.factsToRemove as unknown[]) : [];
  const add: ExtractedFact[] = [];
  for (const entry of newFacts) {
    if (typeof entry !== 'object' || entry === null) continue;
    const fact = entry as Record<string, unknown>;
    if (label(fact.scope) !== 'user' || label(fact.durability) !== 'durable') continue;
    if (label(fact.authority) !== 'descriptive') continue;
    const confidence = typeof fact.confidence === 'number' ? boundedConfidence(fact.confidence, 0.5) : 0.5;
    if (confidence < threshold || typeof fact.content !== 'string' || fact.content.trim() === '') continue;
    const category =
      typeof fact.category === 'string' && fact.category.trim() ? fact.category.trim() : 'context';
    add.push({ content: fact.content.trim(), category, confidence });
  }
  const remove = removals.flatMap((entry) => {
    if (typeof entry !== 'object' || entry === null) return [];
    const removal = entry as Record<string, unknown>;
    const reason = typeof removal.reason === 'string' ? removal.reason.trim() : '';
    if (label(removal.scope) !== 'user' || reason === '' || typeof removal.id !== 'string') return [];
    return [removal.id];
  });
  return { add, remove };
}
