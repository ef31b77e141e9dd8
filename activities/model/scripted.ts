/**
 * The `scripted` model provider: deterministic and offline, for tests and for `npm start` without a model.
 * It keeps no state between calls (the turn is the number of assistant messages already in the transcript),
 * so Temporal retries and replays see the same answer. The script format is in model-script.ts.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChatMessage, ToolCall } from '../../contracts/messages';
import type { ModelCallInput, ModelCallResult } from '../../contracts/model';
import { currentAttempt, whileHeartbeating } from '../activity-context';
import { ProviderError } from './errors';
import type { ModelDeltas } from '../stream/agent-stream';
import {
  ModelScriptError,
  quoteToolResults,
  type ModelScript,
  type ModelScripts,
  type ScriptedTurn,
} from './model-script';

/** The answer once a script without `repeat_last` has used all its turns. */
export const SCRIPT_EXHAUSTED_TEXT = 'The scripted model has no more turns for this conversation.';

export function scriptedModelName(input: ModelCallInput): string {
  return `scripted/${input.model.model}`;
}

export async function callScriptedModel(
  scripts: ModelScripts,
  input: ModelCallInput,
  deltas?: ModelDeltas,
): Promise<ModelCallResult> {
  const modelName = scriptedModelName(input);
  const file = input.model.script_file;
  if (file === undefined) {
    return {
      content: defaultAnswer(input.messages),
      tool_calls: [],
      model_name: modelName,
      finish_reason: 'stop',
    };
  }
  const script = await findScript(scripts, file, input);
  // The agent's own count: a compacted transcript holds fewer assistant messages than turns taken.
  const turnIndex = input.turn_index ?? input.messages.filter((m) => m.role === 'assistant').length;
  const planned =
    script.turns[turnIndex] ?? (script.repeat_last ? script.turns[script.turns.length - 1] : undefined);
  const fallback = planned?.if_missing;
  const turn =
    fallback && !input.messages.some((m) => m.content.includes(fallback.text)) ? fallback.turn : planned;
  if (turn === undefined) {
    return { content: SCRIPT_EXHAUSTED_TEXT, tool_calls: [], model_name: modelName, finish_reason: 'stop' };
  }

  const failure = turn.fail_attempts[currentAttempt() - 1] ?? turn.error;
  if (failure) {
    if (turn.delay_ms > 0) await whileHeartbeating((signal) => sleep(turn.delay_ms, undefined, { signal }));
    throw ProviderError.fromStatus(failure.status, failure.message);
  }
  let content: string;
  try {
    content = quoteToolResults(turn.content, input.messages);
  } catch (err) {
    if (!(err instanceof ModelScriptError)) throw err;
    // The script quotes a result this conversation does not have: a script mistake, not worth a retry.
    throw new ProviderError(
      `model script ${file}: agent "${input.agent_name}", turn ${turnIndex + 1}: ${err.message}`,
      undefined,
      false,
    );
  }
  const answer = answerOf({ ...turn, content }, turnIndex, modelName);
  await whileHeartbeating((signal) => streamAnswer(answer, turn.delay_ms, deltas, signal));
  return answer;
}

/**
 * Spends the turn's `delay_ms` handing its text out word by word, as a provider streams (the live stream's
 * deltas), then its tool calls; without deltas, the delay alone.
 */
async function streamAnswer(
  answer: ModelCallResult,
  delayMs: number,
  deltas: ModelDeltas | undefined,
  signal: AbortSignal,
): Promise<void> {
  const pieces = deltas ? (answer.content.match(/\S+\s*|\s+/g) ?? []) : [];
  const pause = delayMs / Math.max(pieces.length, 1);
  if (pieces.length === 0 && delayMs > 0) await sleep(delayMs, undefined, { signal });
  for (const piece of pieces) {
    if (pause > 0) await sleep(pause, undefined, { signal });
    deltas?.text(piece);
  }
  for (const call of answer.tool_calls) deltas?.toolCall(call.id, call.name);
}

async function findScript(loaded: ModelScripts, file: string, input: ModelCallInput): Promise<ModelScript> {
  let scripts: ModelScript[];
  try {
    scripts = (await loaded.load(file)).scripts;
  } catch (err) {
    // A broken script is a configuration mistake: the run fails with the reason instead of retrying.
    if (err instanceof ModelScriptError) throw new ProviderError(err.message, undefined, false);
    throw err;
  }
  const prompt = input.messages.find((m) => m.role === 'user')?.content ?? '';
  const script = scripts.find(
    (s) =>
      (s.agent === undefined || s.agent === input.agent_name) &&
      (s.prompt_contains === undefined || prompt.includes(s.prompt_contains)),
  );
  if (script === undefined) {
    throw new ProviderError(
      `model script ${file}: no script matches agent "${input.agent_name}" with first user message ` +
        `"${abbreviate(prompt, 80)}" (a script matches when its agent and prompt_contains, if set, both fit)`,
      undefined,
      false,
    );
  }
  return script;
}

function answerOf(turn: ScriptedTurn, turnIndex: number, modelName: string): ModelCallResult {
  const toolCalls: ToolCall[] = turn.tool_calls.map((call, k) => ({
    id: call.id ?? `call_${turnIndex}_${k}`,
    name: call.name,
    args: typeof call.args === 'string' ? call.args : JSON.stringify(call.args),
  }));
  const result: ModelCallResult = {
    content: turn.content,
    tool_calls: toolCalls,
    model_name: modelName,
    finish_reason: turn.finish_reason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
  };
  if (turn.usage) {
    const { input_tokens, output_tokens } = turn.usage;
    result.usage = {
      input_tokens,
      output_tokens,
      total_tokens: turn.usage.total_tokens ?? input_tokens + output_tokens,
    };
  }
  return result;
}

function defaultAnswer(messages: ChatMessage[]): string {
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  return `Scripted answer to: ${abbreviate(lastUser?.content ?? '', 200)}`;
}

function abbreviate(text: string, max: number): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length <= max ? oneLine : `${oneLine.slice(0, max - 1)}…`;
}
