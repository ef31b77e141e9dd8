/**
 * Questions a run waits on (`ask_clarification`) as the CLI prints them: in `status`, in the live tree and the
 * event lines of `subagents run`, in `subagents events`. One line for the question, one for how to answer it.
 */
import { answerCommandLine, type PendingQuestion } from '../contracts/clarification';
import type { ClarificationEvent } from '../contracts/events';
import { oneLine } from '../contracts/text';

export { oneLine } from '../contracts/text';

function choices(options: readonly string[] | undefined): string {
  return options === undefined ? '' : ` [${options.map(oneLine).join(' | ')}]`;
}

/** `q1 (lead, missing_info): "Which region?" [EU | US]` */
export function questionText(
  question: Omit<PendingQuestion, 'ref' | 'workflow_id'> & { ref: string },
): string {
  return (
    `${question.ref} (${oneLine(question.asked_by)}, ${question.clarification_type}): ` +
    `"${oneLine(question.question)}"${choices(question.options)}`
  );
}

/**
 * The two lines of a waiting question: what is asked, and the command that answers it (`--question` only when
 * the run waits on more than one).
 */
export function questionLines(
  runId: string,
  question: PendingQuestion,
  several: boolean,
  flags?: string,
): string[] {
  return [
    `question ${questionText(question)}`,
    `${answerHint(runId, several || question.ref.includes('/') ? question.ref : undefined, flags)} ` +
      `(closes unanswered at ${question.expires_at})`,
  ];
}

/** How to answer the question `ref` (the line under its event while a run is followed). */
export function answerHint(runId: string, ref?: string, flags?: string): string {
  return `  answer: ${answerCommandLine(runId, ref, flags)}`;
}

/** Every waiting question's lines. */
export function pendingQuestionLines(
  runId: string,
  questions: readonly PendingQuestion[] = [],
  flags?: string,
): string[] {
  return questions.flatMap((question) => questionLines(runId, question, questions.length > 1, flags));
}

/** A `clarification_*` event as one line (after its time). */
export function clarificationEventLine(event: ClarificationEvent, at: string): string {
  switch (event.type) {
    case 'clarification_requested':
      return `${at} ${questionText({ ...event, ref: event.task_id, id: event.question_id, asked_at: event.at, expires_at: '' })} waits for an answer (${event.timeout_seconds} s)`;
    case 'clarification_answered':
      return `${at} ${event.task_id} answered${event.by !== undefined ? ` by ${oneLine(event.by)}` : ''}: "${oneLine(event.answer)}"`;
    case 'clarification_timed_out':
      return `${at} ${event.task_id} timed out: no answer within ${event.timeout_seconds} s`;
  }
}
