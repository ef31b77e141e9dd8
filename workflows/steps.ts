import type { AssistantMessage, ToolMessage } from '../contracts/messages';
import { SUBAGENT_STEP_MAX_CHARS, type SubagentStep } from '../contracts/steps';
import { capText } from '../contracts/text';

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
