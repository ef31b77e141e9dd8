/**
 * What ties the attempts of one delegation together: the message ids a re-sent message is recognised by, and
 * the progress an earlier attempt heartbeated (trusted field by field).
 */
import { createHash } from 'node:crypto';
import type { Context } from '@temporalio/activity';
import type { RemoteProgress, RemoteSubagentInput } from '../../../contracts/remote-subagent';

/** A UUID-shaped id (version 8: derived, not random) from `parts`: the same parts give the same id. */
export function derivedMessageId(...parts: string[]): string {
  const hex = createHash('sha256').update(parts.join('\u0000')).digest('hex');
  const variant = ((parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The prompt's message id: the delegation's, whatever the attempt, so a re-send is recognisably the same. */
export function promptMessageId(delegationId: string): string {
  return derivedMessageId('a2a-prompt', delegationId);
}

/**
 * An answer's message id: the same across the retries of one activity (its run and activity id), another for
 * the next answer, even one with the same words.
 */
export function answerMessageId(input: RemoteSubagentInput, activity: Context | undefined): string {
  const execution = activity?.info;
  return derivedMessageId(
    'a2a-answer',
    input.delegation_id,
    input.answer?.remote_task_id ?? '',
    execution?.workflowExecution?.runId ?? '',
    execution?.activityId ?? '',
    input.answer?.text ?? '',
  );
}

/** What the previous attempt heartbeated, when it was this activity's progress. */
export function previousProgress(details: unknown): RemoteProgress | undefined {
  if (typeof details !== 'object' || details === null) return undefined;
  const d = details as { [key: string]: unknown };
  if (typeof d.prompt_sent !== 'boolean') return undefined;
  return {
    prompt_sent: d.prompt_sent,
    updates: typeof d.updates === 'number' && Number.isFinite(d.updates) ? d.updates : 0,
    ...(typeof d.remote_task_id === 'string' &&
      d.remote_task_id !== '' && { remote_task_id: d.remote_task_id }),
    ...(typeof d.context_id === 'string' && d.context_id !== '' && { context_id: d.context_id }),
  };
}
