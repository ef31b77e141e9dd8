/**
 * What the activity knows of one remote A2A task, folded from whatever the agent sent (a task snapshot, status
 * and artifact updates, a message-only reply), and the result it becomes. Pure: no SDK at run time (only its
 * types), no I/O, so every mapping has a unit test.
 */
import type {
  Artifact,
  Message,
  Part,
  StreamResponse,
  Task,
  TaskArtifactUpdateEvent,
  TaskStatusUpdateEvent,
} from '@a2a-js/sdk' with { 'resolution-mode': 'require' };
import type { AssistantMessage, TokenUsage } from '../../../contracts/messages';
import type {
  RemoteResumption,
  RemoteRunEnd,
  RemoteSubagentResult,
} from '../../../contracts/remote-subagent';
import { capText, truncateHeadTail } from '../../../contracts/text';

/** The protocol's task states (A2A 1.0 `TaskState`, the numbers its wire enum carries). */
export const TASK_STATE = {
  submitted: 1,
  working: 2,
  completed: 3,
  failed: 4,
  canceled: 5,
  input_required: 6,
  rejected: 7,
  auth_required: 8,
} as const;

/** The agent's role in a message (A2A 1.0 `Role.ROLE_AGENT`). */
const ROLE_AGENT = 2;

/** How a task state ends the activity's wait; undefined while the task is still under way. */
export function endOfState(state: number | undefined): RemoteRunEnd | undefined {
  switch (state) {
    case TASK_STATE.completed:
      return 'completed';
    case TASK_STATE.failed:
      return 'failed';
    case TASK_STATE.canceled:
      return 'cancelled';
    case TASK_STATE.rejected:
      return 'rejected';
    case TASK_STATE.auth_required:
      return 'auth_required';
    case TASK_STATE.input_required:
      return 'input_required';
    default:
      return undefined;
  }
}

/** A state no message can change any more (`cancelTask` is pointless). */
export function isTerminalState(state: number | undefined): boolean {
  return (
    state === TASK_STATE.completed ||
    state === TASK_STATE.failed ||
    state === TASK_STATE.canceled ||
    state === TASK_STATE.rejected
  );
}

/** The step log keeps the agent's last this many messages… */
export const MAX_LOGGED_MESSAGES = 50;
/** …each cut to this many characters (head and tail). */
export const MAX_LOGGED_CHARS = 2_000;
/** The answer handed back (the claim-check codec carries it; the ledger keeps a brief of its own). */
export const MAX_TEXT_CHARS = 100_000;
/** An error or a question: a few paragraphs at most. */
export const MAX_REASON_CHARS = 4_000;
/** What one artifact may grow to while chunks stream in; past it, chunks are dropped (the answer is cut anyway). */
const MAX_ARTIFACT_CHARS = 1_000_000;

/** The text parts of a message or artifact, in order, one per line. */
export function textOfParts(parts: readonly Part[] | undefined): string {
  return (parts ?? [])
    .map((part) => (part.content?.$case === 'text' ? part.content.value : undefined))
    .filter((text): text is string => text !== undefined && text !== '')
    .join('\n');
}

const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0;

/**
 * Token usage from an A2A object's metadata: `usage: {input_tokens, output_tokens, total_tokens?}` (the total
 * defaults to their sum). Anything else is no usage: absent stays absent.
 */
export function usageOf(metadata: { [key: string]: unknown } | undefined): TokenUsage | undefined {
  const usage = metadata?.usage as { [key: string]: unknown } | undefined;
  if (typeof usage !== 'object' || usage === null) return undefined;
  const { input_tokens: input, output_tokens: output, total_tokens: total } = usage;
  if (!isCount(input) || !isCount(output)) return undefined;
  return {
    input_tokens: input,
    output_tokens: output,
    total_tokens: isCount(total) ? total : input + output,
  };
}

/** One artifact's text as it stands: chunks (`append`) are joined as they came. */
interface ArtifactText {
  text: string;
}

function artifactText(artifact: Artifact): string {
  return capText(textOfParts(artifact.parts), MAX_ARTIFACT_CHARS).text;
}

/** The state of one remote task as the activity has seen it, and the result it becomes. */
export class TaskView {
  taskId?: string;
  contextId?: string;
  state?: number;
  /** The text of the current status's message (the question, the failure's reason…), when it has one. */
  statusText?: string;
  usage?: TokenUsage;
  /** How many task events (snapshots and updates) have been folded in. */
  updates = 0;
  /** A message-only reply: the agent answered without a task. */
  private reply?: string;
  private readonly artifacts = new Map<string, ArtifactText>();
  /** The agent's messages by id, oldest first, the last MAX_LOGGED_MESSAGES of them. */
  private readonly log = new Map<string, string>();
  /** The agent's latest message, whole (the log's copy is cut): a completed task's answer when it has no artifact. */
  private lastAgentText?: string;

  /** Where the wait ends: a settled task state, or `completed` for a message-only reply. */
  get end(): RemoteRunEnd | undefined {
    return this.reply !== undefined ? 'completed' : endOfState(this.state);
  }

  /** One event of a stream (`sendMessageStream`, `resubscribeTask`). */
  apply(event: StreamResponse): void {
    const payload = event.payload;
    switch (payload?.$case) {
      case 'task':
        this.applyTask(payload.value);
        break;
      case 'statusUpdate':
        this.applyStatus(payload.value);
        break;
      case 'artifactUpdate':
        this.applyArtifact(payload.value);
        break;
      case 'message':
        this.applyMessage(payload.value);
        break;
      default:
        break;
    }
  }

  /** A snapshot (`getTask`, a send's answer, a stream's first event): it replaces what it carries. */
  applyTask(task: Task): void {
    this.updates += 1;
    this.identify(task.id, task.contextId);
    // History first: the status message is the latest word, whether or not the history holds it too.
    for (const message of task.history) if (message.role === ROLE_AGENT) this.logMessage(message);
    if (task.status !== undefined) this.applyStatusValue(task.status.state, task.status.message);
    if (task.artifacts.length > 0) {
      this.artifacts.clear();
      for (const artifact of task.artifacts)
        this.artifacts.set(artifact.artifactId, { text: artifactText(artifact) });
    }
    this.usage = usageOf(task.metadata) ?? this.usage;
  }

  applyStatus(event: TaskStatusUpdateEvent): void {
    this.updates += 1;
    this.identify(event.taskId, event.contextId);
    if (event.status !== undefined) this.applyStatusValue(event.status.state, event.status.message);
    this.usage = usageOf(event.metadata) ?? this.usage;
  }

  applyArtifact(event: TaskArtifactUpdateEvent): void {
    this.updates += 1;
    this.identify(event.taskId, event.contextId);
    const artifact = event.artifact;
    if (artifact === undefined) return;
    const known = this.artifacts.get(artifact.artifactId);
    const text = artifactText(artifact);
    if (event.append && known !== undefined) known.text = capText(known.text + text, MAX_ARTIFACT_CHARS).text;
    else this.artifacts.set(artifact.artifactId, { text });
    this.usage = usageOf(event.metadata) ?? usageOf(artifact.metadata) ?? this.usage;
  }

  /**
   * A message outside a task's status: the agent's whole answer when no task was made (a message-only reply
   * is `completed`); a message about a task only adds to the step log.
   */
  applyMessage(message: Message): void {
    this.usage = usageOf(message.metadata) ?? this.usage;
    if (message.taskId !== '' && message.taskId !== undefined) {
      this.logMessage(message);
      return;
    }
    this.contextId = this.contextId ?? (message.contextId || undefined);
    this.reply = textOfParts(message.parts);
  }

  /** What the activity returns, for how it ended (`end`, or the view's own end when it has one). */
  result(
    end: RemoteRunEnd,
    extras: { error?: string; resumed?: RemoteResumption } = {},
  ): RemoteSubagentResult {
    const text = this.text(end);
    const error = extras.error ?? this.defaultError(end);
    return {
      end,
      ...(text !== undefined && text !== '' && { text: truncateHeadTail(text, MAX_TEXT_CHARS) }),
      ...(error !== undefined && { error: truncateHeadTail(error, MAX_REASON_CHARS) }),
      ...(end === 'input_required' && {
        question: truncateHeadTail(this.statusText || this.lastAgentText || '', MAX_REASON_CHARS),
      }),
      ...(this.taskId !== undefined && { remote_task_id: this.taskId }),
      ...(this.contextId !== undefined && { context_id: this.contextId }),
      ...(this.usage !== undefined && { usage: this.usage }),
      messages: [...this.log.values()].map((content): AssistantMessage => ({ role: 'assistant', content })),
      ...(extras.resumed !== undefined && { resumed: extras.resumed }),
    };
  }

  /**
   * The answer: a message-only reply's text; else the artifacts' text; else (completed) the agent's last
   * message. For any other end, what the artifacts held so far (partial output, marked by the end).
   */
  private text(end: RemoteRunEnd): string | undefined {
    if (this.reply !== undefined) return this.reply;
    const artifacts = [...this.artifacts.values()].map((a) => a.text).filter((t) => t !== '');
    if (artifacts.length > 0) return artifacts.join('\n\n');
    return end === 'completed' ? this.lastAgentText : undefined;
  }

  private defaultError(end: RemoteRunEnd): string | undefined {
    const said = this.statusText !== undefined && this.statusText !== '' ? `: ${this.statusText}` : '';
    switch (end) {
      case 'failed':
        return `the remote agent reported the task failed${said}`;
      case 'cancelled':
        return `the remote agent cancelled the task${said}`;
      case 'rejected':
        return `the remote agent rejected the task${said}`;
      case 'auth_required':
        return `the remote agent needs authentication to go on${said}`;
      default:
        return undefined;
    }
  }

  private identify(taskId: string | undefined, contextId: string | undefined): void {
    if (taskId) this.taskId = taskId;
    if (contextId) this.contextId = contextId;
  }

  private applyStatusValue(state: number, message: Message | undefined): void {
    this.state = state;
    this.statusText = message === undefined ? undefined : textOfParts(message.parts) || undefined;
    if (message === undefined) return;
    this.usage = usageOf(message.metadata) ?? this.usage;
    this.logMessage(message);
  }

  private logMessage(message: Message): void {
    const text = textOfParts(message.parts);
    // A message without an id (the protocol asks for one) is told apart by its text.
    const key = message.messageId || `text:${text}`;
    if (text === '' || this.log.has(key)) return;
    this.lastAgentText = capText(text, MAX_TEXT_CHARS).text;
    this.log.set(key, truncateHeadTail(text, MAX_LOGGED_CHARS));
    while (this.log.size > MAX_LOGGED_MESSAGES) {
      const oldest = this.log.keys().next().value;
      if (oldest === undefined) break;
      this.log.delete(oldest);
    }
  }
}
