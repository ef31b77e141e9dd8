/**
 * `ask_clarification`, run by the workflow itself (a claimed call, like `task`): the question is recorded and
 * shown (the run's event log, `status`, the Web UI's current details), then the agent waits on a durable
 * condition, holding no worker slot, until the `answer_clarification` Update brings the answer or the timeout
 * closes the question. A subagent's question is announced to its parent (a signal, passed up to the lead), so
 * the lead's `status` lists every question of the run; the answer goes to the workflow that asked.
 */
import { condition, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  answerClarificationUpdate,
  answerCommandLine,
  answeredToolText,
  answerProblem,
  ANSWER_REFUSALS,
  buildClarificationToolSpec,
  CLARIFICATION_TOOL_NAME,
  clarificationNoticeSignal,
  parseClarificationArgs,
  questionRef,
  timedOutToolText,
  type AnswerRequest,
  type ClarificationArgs,
  type ClarificationNotice,
  type PendingQuestion,
  type QuestionEnd,
  type QuestionRecord,
  type RecordedAnswer,
} from '../contracts/clarification';
import { APPROVER_MAX_CHARS } from '../contracts/approvals';
import type { NewTaskEvent } from '../contracts/events';
import type { ClarificationSettings } from '../contracts/input-schemas';
import { toolMessageFor, type ToolCall, type ToolMessage, type ToolSpec } from '../contracts/messages';
import { RESULT_BRIEF_MAX_CHARS } from '../contracts/subagent';
import { truncateHeadTail } from '../contracts/text';
import type { LoopPlugins } from './agent-loop';
import { holderName, tellParent } from './held-for-a-person';
import { nowIso as now, PendingItems, refusal as refused } from './pending-items';

export interface ClarificationOptions {
  /** The run's settings; absent (disabled, or a run from before) → no tool, and nothing ever waits. */
  settings?: ClarificationSettings;
  /** This agent is offered the tool (the lead when enabled; a subagent whose tools allow it). */
  offered: boolean;
  agentName: string;
  /** The lead run's id (the answer command names it) and its workflow id (question refs count from it). */
  runId: string;
  leadWorkflowId: string;
  /** Appends to the run's event log, where this agent keeps one (it delegates). */
  record?: (event: NewTaskEvent) => void;
  /** Whether this agent's delegation `taskId` has ended (its questions are then gone). */
  delegationEnded?: (taskId: string) => boolean;
  /** Shows what the agent is doing in the Web UI's current details. */
  showDoing?: (doing: string, command?: string) => void;
}

function pendingOf(record: QuestionRecord): PendingQuestion {
  const { state: _state, answer: _answer, closed_at: _closed, ...pending } = record;
  return pending;
}

export class Clarifications {
  /** This execution's own questions and its subagents' still open. */
  private readonly questions: PendingItems<QuestionRecord, PendingQuestion>;
  /** Questions this agent asked, earlier executions included: the next one is `q<asked + 1>`. */
  asked: number;

  constructor(private readonly options: ClarificationOptions) {
    this.asked = options.settings?.questions_asked ?? 0;
    this.questions = new PendingItems({
      prefix: 'q',
      heldBefore: this.asked,
      ...(options.delegationEnded && { delegationEnded: options.delegationEnded }),
      pendingOf,
    });
  }

  /** Answers the Update and hears children's questions. Registering changes no history: safe for any run. */
  register(): void {
    setHandler(answerClarificationUpdate, (request) => this.answer(request), {
      validator: (request) => void this.check(request),
    });
    setHandler(clarificationNoticeSignal, (notice) => this.hear(notice));
  }

  private get settings(): ClarificationSettings | undefined {
    return this.options.offered ? this.options.settings : undefined;
  }

  toolSpecs(): ToolSpec[] {
    const settings = this.settings;
    return settings ? [buildClarificationToolSpec(settings.timeout_seconds)] : [];
  }

  /** The calls this agent runs itself: its questions, one after another (ask one thing at a time). */
  claimedCalls(): LoopPlugins['claimedCalls'] {
    if (!this.settings) return undefined;
    return {
      claims: (call) => call.name === CLARIFICATION_TOOL_NAME,
      run: async (calls) => {
        const results: ToolMessage[] = [];
        for (const call of calls) results.push(await this.ask(call));
        return results;
      },
    };
  }

  /** Every question of this agent and its subagents waiting for an answer, oldest first. */
  pending(): PendingQuestion[] {
    return this.questions.pending();
  }

  private async ask(call: ToolCall): Promise<ToolMessage> {
    const parsed = parseClarificationArgs(call.args);
    if (!parsed.ok) return toolMessageFor(call, parsed.error, true);
    const outcome = await this.askPerson(parsed.args);
    return toolMessageFor(
      call,
      outcome.answered ? answeredToolText(outcome.answer) : timedOutToolText(outcome.timeoutSeconds),
    );
  }

  /** Whether this agent may ask the person now: the run has questions on, and the agent is offered them. */
  get canAsk(): boolean {
    return this.settings !== undefined;
  }

  /**
   * Asks the person a question on this agent's behalf and waits for the answer, as `ask_clarification` does
   * (its call, or a remote agent's `input-required`): recorded, shown, announced to the parent, answered by
   * the Update or closed by the timeout. Throws when the wait is cancelled. Only while `canAsk`.
   */
  async askPerson(
    args: ClarificationArgs,
  ): Promise<{ answered: true; answer: string } | { answered: false; timeoutSeconds: number }> {
    const settings = this.settings;
    if (!settings) throw new Error(`${this.options.agentName} may not ask the person (clarification is off)`);
    this.asked += 1;
    const id = `q${this.asked}`;
    const { workflowId } = workflowInfo();
    const askedAt = new Date();
    const timeoutMs = settings.timeout_seconds * 1000;
    const question: QuestionRecord = {
      ...args,
      ref: questionRef(this.options.leadWorkflowId, workflowId, id),
      id,
      workflow_id: workflowId,
      asked_by: this.options.agentName,
      asked_at: askedAt.toISOString(),
      expires_at: new Date(askedAt.getTime() + timeoutMs).toISOString(),
      timeout_seconds: settings.timeout_seconds,
      state: 'pending',
    };
    this.questions.add(question);
    this.opened(pendingOf(question));
    this.options.showDoing?.(
      `waiting for an answer to ${question.ref}: "${question.question}"`,
      answerCommandLine(this.options.runId, question.ref),
    );
    let answered: boolean;
    try {
      answered = await condition(() => question.state !== 'pending', timeoutMs, {
        summary: `ask_clarification: waiting for an answer to ${question.ref}`,
      });
    } catch (err) {
      // Cancelled, or the agent's wall clock ran out: the question closes with the agent.
      if (question.state === 'pending') this.close(question, 'cancelled');
      throw err;
    }
    if (!answered) {
      this.close(question, 'timed_out');
      return { answered: false, timeoutSeconds: settings.timeout_seconds };
    }
    this.closed(question);
    return { answered: true, answer: question.answer ?? '' };
  }

  private close(question: QuestionRecord, end: Exclude<QuestionEnd, 'answered'>): void {
    question.state = end;
    question.closed_at = now();
    this.closed(question);
  }

  /** The refusal for `request`, thrown (the Update's validator), or the question it answers. */
  private check(request: AnswerRequest): QuestionRecord {
    const problem = answerProblem(request?.answer);
    if (problem !== undefined) throw refused(ANSWER_REFUSALS.invalid, problem);
    const id = request.question_id;
    const found = this.questions.lookup(id);
    switch (found.kind) {
      case 'found':
        break;
      case 'ambiguous':
        throw refused(
          ANSWER_REFUSALS.ambiguous,
          `${found.open.length} questions are waiting (${found.open.map((q) => q.ref).join(', ')}): name one with --question`,
        );
      case 'not_waiting':
        throw refused(ANSWER_REFUSALS.notWaiting, this.notWaitingText());
      case 'closed_before':
        throw refused(
          ANSWER_REFUSALS.closed,
          `question ${id} of ${holderName(this.options)} is closed (asked before the run continued as new)`,
        );
      case 'unknown':
        throw refused(
          ANSWER_REFUSALS.unknown,
          `${holderName(this.options)} has no question ${JSON.stringify(id)} (its questions: ${found.known.join(', ') || 'none'})`,
        );
    }
    const question = found.record;
    switch (question.state) {
      case 'pending':
        return question;
      case 'answered':
        throw refused(
          ANSWER_REFUSALS.closed,
          `question ${question.ref} was already answered at ${question.closed_at} ` +
            `(${JSON.stringify(truncateHeadTail(question.answer ?? '', 200))}); an answer is taken once`,
        );
      case 'timed_out':
        throw refused(
          ANSWER_REFUSALS.closed,
          `question ${question.ref} timed out at ${question.closed_at} (no answer within ` +
            `${question.timeout_seconds} s); the run went on without it`,
        );
      case 'cancelled':
        throw refused(
          ANSWER_REFUSALS.closed,
          `question ${question.ref} was closed at ${question.closed_at}: its agent was cancelled or ran out of time`,
        );
    }
  }

  private notWaitingText(): string {
    const base = `${holderName(this.options)} is not waiting for an answer`;
    const children = this.questions.pendingChildren();
    if (children.length === 0) return `${base} (it has no open question)`;
    return `${base}; its subagents are: ${children.map((q) => q.ref).join(', ')} (name one with --question)`;
  }

  /** The Update's handler: records the answer; the waiting call wakes in the same workflow task. */
  private answer(request: AnswerRequest): RecordedAnswer {
    const question = this.check(request);
    question.state = 'answered';
    question.answer = request.answer;
    // Bounded as an approver's name is (an older client sends none).
    const by = typeof request.by === 'string' ? request.by.trim().slice(0, APPROVER_MAX_CHARS) : '';
    if (by !== '') question.by = by;
    question.closed_at = now();
    return {
      ref: question.ref,
      question_id: question.id,
      question: question.question,
      asked_by: question.asked_by,
      workflow_id: question.workflow_id,
      answer: request.answer,
      answered_at: question.closed_at,
      ...(question.by !== undefined && { by: question.by }),
    };
  }

  /** A question opened here: the run's event log, and the parent told. */
  private opened(question: PendingQuestion): void {
    this.logRequested(question);
    const { ref: _ref, ...asked } = question;
    this.notifyParent({ state: 'asked', question: asked });
  }

  private logRequested(question: PendingQuestion): void {
    this.options.record?.({
      type: 'clarification_requested',
      task_id: question.ref,
      at: now(),
      question_id: question.id,
      asked_by: question.asked_by,
      workflow_id: question.workflow_id,
      question: question.question,
      clarification_type: question.clarification_type,
      ...(question.context !== undefined && { context: question.context }),
      ...(question.options !== undefined && { options: question.options }),
      timeout_seconds: question.timeout_seconds,
    });
  }

  private closed(question: QuestionRecord): void {
    if (question.state === 'pending') return;
    this.endEvent(question, question.state, question.answer, question.by);
    this.notifyParent({
      state: 'closed',
      workflow_id: question.workflow_id,
      id: question.id,
      end: question.state,
      ...(question.answer !== undefined && {
        answer: truncateHeadTail(question.answer, RESULT_BRIEF_MAX_CHARS),
      }),
      ...(question.by !== undefined && { by: question.by }),
    });
  }

  private endEvent(
    question: Pick<PendingQuestion, 'ref' | 'id' | 'timeout_seconds'>,
    end: QuestionEnd,
    answer: string | undefined,
    by: string | undefined,
  ): void {
    const record = this.options.record;
    if (!record) return;
    const at = now();
    const { ref, id } = question;
    if (end === 'answered') {
      record({
        type: 'clarification_answered',
        task_id: ref,
        at,
        question_id: id,
        answer: truncateHeadTail(answer ?? '', RESULT_BRIEF_MAX_CHARS),
        ...(by !== undefined && { by }),
      });
    } else if (end === 'timed_out') {
      record({
        type: 'clarification_timed_out',
        task_id: ref,
        at,
        question_id: id,
        timeout_seconds: question.timeout_seconds,
      });
    }
  }

  /** A subagent's question opened or closed: kept for `pending()`, logged, and passed up. */
  private hear(notice: ClarificationNotice): void {
    if (notice.state === 'asked') {
      const { question } = notice;
      const pending: PendingQuestion = {
        ...question,
        ref: questionRef(this.options.leadWorkflowId, question.workflow_id, question.id),
      };
      this.questions.childAsked(pending);
      this.logRequested(pending);
    } else {
      const pending = this.questions.childClosed(notice.workflow_id, notice.id);
      if (pending) this.endEvent(pending, notice.end, notice.answer, notice.by);
    }
    this.notifyParent(notice);
  }

  /** Passes a notice up to the workflow that started this one (workflows/held-for-a-person.ts). */
  private notifyParent(notice: ClarificationNotice): void {
    tellParent(clarificationNoticeSignal, notice, this.options.leadWorkflowId);
  }
}
