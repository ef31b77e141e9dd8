/**
 * A subagent's step log: one record per assistant turn and per tool result, as DeerFlow's step capture
 * (`subagent.step`) shapes them. Read through a query with an `after_seq` cursor; snake_case on the wire.
 */
import type { AssistantMessage, ToolMessage } from './messages';
import { capText } from './text';

/** Characters kept of a step's text and of each tool call's arguments; the cut is flagged, never silent. */
export const SUBAGENT_STEP_MAX_CHARS = 8192;

export interface SubagentStepToolCall {
  id: string;
  name: string;
  /** The raw JSON argument text the model sent, capped at SUBAGENT_STEP_MAX_CHARS. */
  args: string;
  args_truncated: boolean;
}

interface SubagentStepBase {
  /** Position in the subagent's step log, from 1, so `after_seq: 0` reads everything. */
  seq: number;
  text: string;
  truncated: boolean;
}

/** An assistant turn: its text and the tool calls it asked for. */
export interface SubagentAiStep extends SubagentStepBase {
  kind: 'ai';
  tool_calls: SubagentStepToolCall[];
}

/** A tool's output, tied to the call that asked for it. */
export interface SubagentToolStep extends SubagentStepBase {
  kind: 'tool';
  tool_call_id: string;
  name: string;
  is_error: boolean;
  /** A `tool_search` result: the deferred MCP tools it promoted (their schemas are sent from then on). */
  promoted?: string[];
  /** A read of a skill's SKILL.md: the skill it made active (its allowed-tools apply from then on). */
  activated_skill?: string;
}

/**
 * A person's decision on a tool call a guardrail held for approval (or the wait's timeout): who, when, and
 * their note or reason. It comes between the turn that made the call and the call's result.
 */
export interface SubagentApprovalStep extends SubagentStepBase {
  kind: 'approval';
  tool_call_id: string;
  name: string;
  decision: 'approved' | 'denied' | 'timed_out';
  /** Who decided; absent on a timeout. */
  by?: string;
  /** ISO 8601 (workflow clock). */
  at: string;
  /** The approver's note or the denier's reason. */
  note?: string;
}

export type SubagentStep = SubagentAiStep | SubagentToolStep | SubagentApprovalStep;

/** A held call's end, as its agent's step log records it (before the log gives it its `seq`). */
export function approvalStep(held: {
  ref: string;
  tool: string;
  args: string;
  call_id: string;
  decision: SubagentApprovalStep['decision'];
  by?: string;
  at: string;
  note?: string;
}): Omit<SubagentApprovalStep, 'seq'> {
  const { by, note } = held;
  return {
    kind: 'approval',
    text:
      `${held.ref} ${held.tool} ${held.args}: ${held.decision}` +
      `${by !== undefined ? ` by ${by}` : ''}${note !== undefined ? ` (${note})` : ''}`,
    truncated: false,
    tool_call_id: held.call_id,
    name: held.tool,
    decision: held.decision,
    ...(by !== undefined && { by }),
    at: held.at,
    ...(note !== undefined && { note }),
  };
}

/**
 * The step record of one assistant turn or tool result, with text and arguments capped; a `tool_search`
 * result names the deferred tools it promoted, a read of a SKILL.md the skill it made active.
 */
export function buildStep(
  seq: number,
  message: AssistantMessage | ToolMessage,
  promoted?: readonly string[],
  activatedSkill?: string,
): SubagentStep {
  const { text, truncated } = capText(message.content, SUBAGENT_STEP_MAX_CHARS);
  if (message.role === 'tool') {
    return {
      seq,
      kind: 'tool',
      text,
      truncated,
      tool_call_id: message.tool_call_id,
      name: message.name,
      is_error: message.is_error ?? false,
      ...(promoted && promoted.length > 0 && { promoted: [...promoted] }),
      ...(activatedSkill !== undefined && { activated_skill: activatedSkill }),
    };
  }
  return {
    seq,
    kind: 'ai',
    text,
    truncated,
    tool_calls: (message.tool_calls ?? []).map((call) => {
      const args = capText(call.args, SUBAGENT_STEP_MAX_CHARS);
      return { id: call.id, name: call.name, args: args.text, args_truncated: args.truncated };
    }),
  };
}
