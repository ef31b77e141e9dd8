/**
 * What the A2A activity makes of what a remote agent sends, without a network: task states → ends, the answer
 * (artifacts, else the agent's last message; partial output kept beside a failure), usage from metadata
 * (absent stays absent), and a step log that stays bounded whatever the agent says.
 */
import type { Message, Part, StreamResponse, Task } from '@a2a-js/sdk' with { 'resolution-mode': 'require' };
import {
  endOfState,
  isTerminalState,
  MAX_LOGGED_CHARS,
  MAX_LOGGED_MESSAGES,
  TaskView,
  TASK_STATE,
  textOfParts,
  usageOf,
} from '../../../activities/remote/a2a/task-view';

const text = (value: string): Part => ({
  content: { $case: 'text', value },
  mediaType: 'text/plain',
  filename: '',
  metadata: undefined,
});

function agentSays(value: string, messageId = `m-${value}`, taskId = 't1'): Message {
  return {
    messageId,
    taskId,
    contextId: 'c1',
    role: 2,
    parts: [text(value)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function task(state: number, more: Partial<Task> = {}): Task {
  return {
    id: 't1',
    contextId: 'c1',
    status: { state, message: undefined, timestamp: undefined },
    artifacts: [],
    history: [],
    metadata: undefined,
    ...more,
  };
}

const statusUpdate = (
  state: number,
  message?: Message,
  metadata?: Record<string, unknown>,
): StreamResponse => ({
  payload: {
    $case: 'statusUpdate',
    value: { taskId: 't1', contextId: 'c1', status: { state, message, timestamp: undefined }, metadata },
  },
});

const artifactUpdate = (artifactId: string, value: string, append: boolean): StreamResponse => ({
  payload: {
    $case: 'artifactUpdate',
    value: {
      taskId: 't1',
      contextId: 'c1',
      artifact: {
        artifactId,
        name: '',
        description: '',
        parts: [text(value)],
        metadata: undefined,
        extensions: [],
      },
      append,
      lastChunk: false,
      metadata: undefined,
    },
  },
});

describe('task states', () => {
  it.each([
    [TASK_STATE.completed, 'completed', true],
    [TASK_STATE.failed, 'failed', true],
    [TASK_STATE.canceled, 'cancelled', true],
    [TASK_STATE.rejected, 'rejected', true],
    [TASK_STATE.auth_required, 'auth_required', false],
    [TASK_STATE.input_required, 'input_required', false],
    [TASK_STATE.working, undefined, false],
    [TASK_STATE.submitted, undefined, false],
    [0, undefined, false],
    [-1, undefined, false],
  ])('state %i ends %s (terminal: %s)', (state, end, terminal) => {
    expect(endOfState(state)).toBe(end);
    expect(isTerminalState(state)).toBe(terminal);
  });
});

describe('text and usage', () => {
  it('joins the text parts, one per line, and skips the others', () => {
    const file: Part = {
      content: { $case: 'url', value: 'http://x/y' },
      mediaType: '',
      filename: 'y',
      metadata: undefined,
    };
    expect(textOfParts([text('one'), file, text(''), text('two')])).toBe('one\ntwo');
    expect(textOfParts(undefined)).toBe('');
  });

  it('reads usage from metadata, its total defaulting to the sum; anything else is no usage', () => {
    expect(usageOf({ usage: { input_tokens: 3, output_tokens: 4 } })).toEqual({
      input_tokens: 3,
      output_tokens: 4,
      total_tokens: 7,
    });
    expect(usageOf({ usage: { input_tokens: 3, output_tokens: 4, total_tokens: 9 } })?.total_tokens).toBe(9);
    for (const metadata of [
      undefined,
      {},
      { usage: null },
      { usage: 'lots' },
      { usage: { input_tokens: 3 } },
      { usage: { input_tokens: -1, output_tokens: 2 } },
      { usage: { inputTokens: 3, outputTokens: 4 } },
    ]) {
      expect(usageOf(metadata)).toBeUndefined();
    }
  });
});

describe('the result', () => {
  it('a completed task answers with its artifacts; streamed chunks are joined as they came', () => {
    const view = new TaskView();
    view.apply({ payload: { $case: 'task', value: task(TASK_STATE.submitted) } });
    view.apply(statusUpdate(TASK_STATE.working, agentSays('thinking')));
    view.apply(artifactUpdate('a', 'Hel', false));
    view.apply(artifactUpdate('a', 'lo', true));
    view.apply(artifactUpdate('b', 'second', false));
    view.apply(
      statusUpdate(TASK_STATE.completed, undefined, { usage: { input_tokens: 1, output_tokens: 2 } }),
    );

    expect(view.end).toBe('completed');
    expect(view.result('completed')).toEqual({
      end: 'completed',
      text: 'Hello\n\nsecond',
      remote_task_id: 't1',
      context_id: 'c1',
      usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
      messages: [{ role: 'assistant', content: 'thinking' }],
    });
  });

  it("without artifacts, a completed task answers with the agent's last message, whole", () => {
    const long = 'x'.repeat(MAX_LOGGED_CHARS * 2);
    const view = new TaskView();
    view.applyTask(task(TASK_STATE.completed, { history: [agentSays('first'), agentSays(long)] }));
    const result = view.result('completed');
    expect(result.text).toBe(long);
    expect(result.messages[1]?.content.length).toBeLessThanOrEqual(MAX_LOGGED_CHARS);
  });

  it('a failure keeps the partial output beside the reason; without a reason it says what happened', () => {
    const view = new TaskView();
    view.applyTask(
      task(TASK_STATE.failed, {
        status: { state: TASK_STATE.failed, message: agentSays('out of memory'), timestamp: undefined },
        artifacts: [
          {
            artifactId: 'a',
            name: '',
            description: '',
            parts: [text('half done')],
            metadata: undefined,
            extensions: [],
          },
        ],
      }),
    );
    expect(view.result('failed')).toMatchObject({
      end: 'failed',
      text: 'half done',
      error: 'the remote agent reported the task failed: out of memory',
    });
    const silent = new TaskView();
    silent.applyTask(task(TASK_STATE.rejected));
    expect(silent.result('rejected')).toMatchObject({ error: 'the remote agent rejected the task' });
    expect(silent.result('rejected').text).toBeUndefined();
  });

  it("input-required asks the status message's question, with the task and context to answer to", () => {
    const view = new TaskView();
    view.apply(statusUpdate(TASK_STATE.input_required, agentSays('Which branch?')));
    expect(view.result('input_required')).toMatchObject({
      end: 'input_required',
      question: 'Which branch?',
      remote_task_id: 't1',
      context_id: 'c1',
    });
    expect(view.result('input_required')).not.toHaveProperty('error');
  });

  it('a message-only reply is completed with its text; a message about a task only adds to the log', () => {
    const view = new TaskView();
    view.apply({ payload: { $case: 'message', value: agentSays('noted', 'm-noted', 't1') } });
    expect(view.end).toBeUndefined();
    view.apply({
      payload: {
        $case: 'message',
        value: {
          ...agentSays('hello', 'm-hello', ''),
          metadata: { usage: { input_tokens: 1, output_tokens: 1 } },
        },
      },
    });
    expect(view.end).toBe('completed');
    expect(view.result('completed')).toMatchObject({ text: 'hello', usage: { total_tokens: 2 } });
  });

  it('the step log keeps the last messages, each once, each cut; the result text is capped too', () => {
    const view = new TaskView();
    for (let i = 0; i < MAX_LOGGED_MESSAGES + 10; i += 1) {
      view.apply(
        statusUpdate(TASK_STATE.working, agentSays(`step ${i} ${'y'.repeat(MAX_LOGGED_CHARS)}`, `m${i}`)),
      );
    }
    // A snapshot repeating the history adds nothing.
    view.applyTask(
      task(TASK_STATE.working, { history: [agentSays('again', `m${MAX_LOGGED_MESSAGES + 9}`)] }),
    );
    const { messages } = view.result('timed_out');
    expect(messages).toHaveLength(MAX_LOGGED_MESSAGES);
    expect(messages[0]?.content).toMatch(/^step 10 /);
    expect(messages.every((m) => m.content.length <= MAX_LOGGED_CHARS)).toBe(true);

    const huge = new TaskView();
    huge.apply(artifactUpdate('a', 'z'.repeat(300_000), false));
    expect(huge.result('completed').text?.length).toBeLessThanOrEqual(100_000);
  });

  it('usage absent everywhere stays absent; the last reported usage wins', () => {
    const view = new TaskView();
    view.applyTask(task(TASK_STATE.working));
    expect(view.result('completed')).not.toHaveProperty('usage');
    view.apply(statusUpdate(TASK_STATE.working, undefined, { usage: { input_tokens: 1, output_tokens: 1 } }));
    view.applyTask(
      task(TASK_STATE.completed, { metadata: { usage: { input_tokens: 5, output_tokens: 5 } } }),
    );
    expect(view.result('completed').usage).toEqual({ input_tokens: 5, output_tokens: 5, total_tokens: 10 });
  });
});
