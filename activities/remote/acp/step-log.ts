/**
 * An ACP agent's turn as the subagent's step log shows it: its `session/update` notifications folded into
 * assistant messages (its text, with the tool calls it made) and tool messages (a call's result, a permission
 * the worker gave or refused). Bounded whatever the agent sends: the last ACP_STEPS_KEPT steps, each capped.
 * Pure: no I/O, so a unit test feeds it updates directly.
 */
import type { AssistantMessage, ToolMessage } from '../../../contracts/messages';
import { SUBAGENT_STEP_MAX_CHARS } from '../../../contracts/steps';
import type { Acp } from './sdk';

/** Steps kept of one turn: the latest; the dropped ones are counted in a note at the head. */
export const ACP_STEPS_KEPT = 200;
/** Characters kept of the agent's answer: the end of it, where an agent concludes. */
export const ACP_ANSWER_MAX_CHARS = 100_000;
/** Characters kept of a tool call's title (it names the step). */
const TITLE_MAX_CHARS = 200;
/** Tool calls remembered for their title, kind and input (a permission request may name only the id). */
const TOOL_CALLS_REMEMBERED = 1000;

export type AcpStep = AssistantMessage | ToolMessage;

/** What the turn has said about one tool call so far. */
export interface AcpToolCallInfo {
  title?: string;
  kind?: string;
  name?: string;
  rawInput?: unknown;
}

const TRUNCATED = ' …[truncated]';

function capped(text: string, max = SUBAGENT_STEP_MAX_CHARS): string {
  return text.length > max ? `${text.slice(0, max - TRUNCATED.length)}${TRUNCATED}` : text;
}

/** A content block in words: its text, or what it is. */
export function contentBlockText(block: Acp.ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'resource_link':
      return `[resource ${block.uri}]`;
    case 'resource':
      return 'text' in block.resource ? block.resource.text : `[resource ${block.resource.uri}]`;
    default:
      return `[${block.type}]`;
  }
}

function toolContentText(content: readonly Acp.ToolCallContent[] | null | undefined): string {
  return (content ?? [])
    .map((item) => {
      if (item.type === 'content') return contentBlockText(item.content);
      if (item.type === 'diff') return `[edited ${item.path}]`;
      return `[terminal ${item.terminalId}]`;
    })
    .join('\n');
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return String(value);
  }
}

export class AcpStepLog {
  private steps: AcpStep[] = [];
  private dropped = 0;
  /** The assistant message text chunks go to; closed by a tool call, a permission, or a new message id. */
  private open: AssistantMessage | undefined;
  private openMessageId: string | undefined;
  private answerText = '';
  private answerCut = false;
  private readonly tools = new Map<string, AcpToolCallInfo>();
  private readonly finished = new Set<string>();

  /** One `session/update` of the turn. */
  update(update: Acp.SessionUpdate): void {
    switch (update.sessionUpdate) {
      case 'agent_message_chunk':
        this.text(contentBlockText(update.content), update.messageId ?? undefined);
        return;
      case 'tool_call':
        this.toolCall(update);
        return;
      case 'tool_call_update':
        this.toolCallUpdate(update);
        return;
      default:
        // Thoughts, plans, commands, modes, usage: progress the heartbeat counts, not steps.
        return;
    }
  }

  /** What the turn said about a tool call so far (`undefined`: nothing). */
  toolCallInfo(id: string): AcpToolCallInfo | undefined {
    return this.tools.get(id);
  }

  /** A permission the worker gave or refused for a tool call. */
  permission(toolCallId: string, content: string, allowed: boolean): void {
    this.close();
    this.push({
      role: 'tool',
      tool_call_id: toolCallId,
      name: 'permission',
      content: capped(content),
      is_error: !allowed,
    });
  }

  /** A line of the worker's own about the run (`[acp] …`), e.g. which model the agent kept. */
  note(text: string): void {
    this.close();
    this.push({ role: 'assistant', content: capped(`[acp] ${text}`) });
  }

  /** The agent's text of the turn: its messages' text, a blank line between two. */
  answer(): string {
    return this.answerCut
      ? `[…the start of the agent's answer was cut]\n${this.answerText}`
      : this.answerText;
  }

  /** The steps kept, with a note first when earlier ones were dropped. */
  messages(): AcpStep[] {
    if (this.dropped === 0) return [...this.steps];
    const note: AssistantMessage = {
      role: 'assistant',
      content: `[acp] ${this.dropped} earlier steps of the agent are not kept (the last ${ACP_STEPS_KEPT} are)`,
    };
    return [note, ...this.steps];
  }

  private text(text: string, messageId: string | undefined): void {
    if (text === '') return;
    const sameMessage =
      this.open !== undefined && (messageId === undefined || messageId === this.openMessageId);
    // Another message of the agent's (after a tool call, or a new message id): a new paragraph of the answer.
    const paragraph = !sameMessage && this.answerText !== '';
    if (!sameMessage) {
      this.close();
      this.open = { role: 'assistant', content: '' };
      this.openMessageId = messageId;
      this.push(this.open);
    }
    const open = this.open as AssistantMessage;
    if (open.content.length < SUBAGENT_STEP_MAX_CHARS) open.content = capped(open.content + text);
    this.appendAnswer(paragraph ? `\n\n${text}` : text);
  }

  private appendAnswer(text: string): void {
    this.answerText += text;
    if (this.answerText.length > ACP_ANSWER_MAX_CHARS) {
      this.answerText = this.answerText.slice(-ACP_ANSWER_MAX_CHARS);
      this.answerCut = true;
    }
  }

  private toolCall(update: Acp.ToolCall): void {
    const info = this.remember(update.toolCallId, update);
    const call = { id: update.toolCallId, name: stepName(info), args: capped(json(update.rawInput ?? {})) };
    // A call right after the agent's text belongs to that message, as a model's tool calls do.
    const last = this.steps[this.steps.length - 1];
    if (this.open !== undefined && last === this.open) {
      this.open.tool_calls = [...(this.open.tool_calls ?? []), call];
    } else {
      this.push({ role: 'assistant', content: '', tool_calls: [call] });
    }
    this.close();
    this.finish(update.toolCallId, update);
  }

  private toolCallUpdate(update: Acp.ToolCallUpdate): void {
    this.remember(update.toolCallId, update);
    this.finish(update.toolCallId, update);
  }

  /** A call's result, once its status says it is over. */
  private finish(id: string, update: Acp.ToolCall | Acp.ToolCallUpdate): void {
    if (update.status !== 'completed' && update.status !== 'failed') return;
    if (this.finished.has(id)) return;
    this.finished.add(id);
    this.close();
    const info = this.tools.get(id) ?? {};
    const output =
      toolContentText(update.content) || (update.rawOutput !== undefined ? json(update.rawOutput) : '');
    this.push({
      role: 'tool',
      tool_call_id: id,
      name: stepName(info),
      content: capped(output || update.status),
      is_error: update.status === 'failed',
    });
  }

  private remember(id: string, update: Acp.ToolCall | Acp.ToolCallUpdate): AcpToolCallInfo {
    const info = this.tools.get(id) ?? {};
    if (typeof update.title === 'string') info.title = update.title.slice(0, TITLE_MAX_CHARS);
    if (typeof update.kind === 'string') info.kind = update.kind;
    if (typeof update.name === 'string') info.name = update.name;
    if (update.rawInput !== undefined) info.rawInput = update.rawInput;
    this.tools.delete(id);
    this.tools.set(id, info);
    if (this.tools.size > TOOL_CALLS_REMEMBERED) {
      const oldest = this.tools.keys().next().value as string;
      this.tools.delete(oldest);
      this.finished.delete(oldest);
    }
    return info;
  }

  private close(): void {
    this.open = undefined;
    this.openMessageId = undefined;
  }

  private push(step: AcpStep): void {
    this.steps.push(step);
    if (this.steps.length > ACP_STEPS_KEPT) {
      this.steps.shift();
      this.dropped += 1;
    }
  }
}

/** A tool call's name in the step log: its title (what it does), else its tool name, else its kind. */
function stepName(info: AcpToolCallInfo): string {
  return info.title || info.name || info.kind || 'tool';
}
