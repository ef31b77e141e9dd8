import {
  answerProblem,
  ANSWER_MAX_CHARS,
  buildClarificationToolSpec,
  CLARIFICATION_TOOL_NAME,
  CLARIFICATION_TYPES,
  parseClarificationArgs,
  questionRef,
  questionTarget,
  QUESTION_MAX_CHARS,
} from '../../../contracts/clarification';

describe('ask_clarification as the model sees it', () => {
  it("has DeerFlow's name, arguments and clarification types, and says how long a question waits", () => {
    const spec = buildClarificationToolSpec(90);
    expect(spec.name).toBe(CLARIFICATION_TOOL_NAME);
    expect(spec.name).toBe('ask_clarification');
    const parameters = spec.parameters as {
      properties: Record<string, { enum?: string[] }>;
      required: string[];
    };
    expect(Object.keys(parameters.properties).sort()).toEqual(
      ['clarification_type', 'context', 'options', 'question'].sort(),
    );
    expect(parameters.required.sort()).toEqual(['clarification_type', 'question']);
    expect(parameters.properties.clarification_type.enum).toEqual([
      'missing_info',
      'ambiguous_requirement',
      'approach_choice',
      'risk_confirmation',
      'suggestion',
    ]);
    expect(CLARIFICATION_TYPES).toEqual(parameters.properties.clarification_type.enum);
    expect(spec.description).toContain('Ask the user for clarification when you need more information');
    expect(spec.description).toContain('within 90 seconds');
  });
});

describe('parseClarificationArgs', () => {
  it('takes a question with its type, context and options (trimmed)', () => {
    expect(
      parseClarificationArgs(
        JSON.stringify({
          question: ' Which region? ',
          clarification_type: 'approach_choice',
          context: 'Two data sets.',
          options: ['EU', ' US '],
        }),
      ),
    ).toEqual({
      ok: true,
      args: {
        question: 'Which region?',
        clarification_type: 'approach_choice',
        context: 'Two data sets.',
        options: ['EU', 'US'],
      },
    });
  });

  it('takes options sent as a JSON string, as some models send lists', () => {
    const parsed = parseClarificationArgs(
      JSON.stringify({ question: 'Which?', clarification_type: 'suggestion', options: '["A", "B"]' }),
    );
    expect(parsed).toEqual({
      ok: true,
      args: { question: 'Which?', clarification_type: 'suggestion', options: ['A', 'B'] },
    });
  });

  it('names every problem for the model, with what is accepted', () => {
    const parsed = parseClarificationArgs(
      JSON.stringify({ question: '  ', clarification_type: 'whim', colour: 'red' }),
    );
    expect(parsed).toEqual({
      ok: false,
      error: [
        'Invalid ask_clarification arguments:',
        '- question: is empty (the question for the user)',
        `- clarification_type: "whim" is not a clarification type (${CLARIFICATION_TYPES.join(', ')})`,
        '- colour: not an argument of ask_clarification (accepted: question, clarification_type, context, options)',
      ].join('\n'),
    });
    expect(parseClarificationArgs('{not json')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^Invalid ask_clarification arguments: they are not valid JSON/),
    });
  });

  it('bounds what reaches history', () => {
    const long = parseClarificationArgs(
      JSON.stringify({ question: 'x'.repeat(QUESTION_MAX_CHARS + 1), clarification_type: 'missing_info' }),
    );
    expect(long).toEqual({
      ok: false,
      error: `Invalid ask_clarification arguments:\n- question: is longer than ${QUESTION_MAX_CHARS} characters (the question for the user)`,
    });
  });
});

describe('answers', () => {
  it('refuses an empty or over-long answer, and takes any other text', () => {
    expect(answerProblem('')).toBe('the answer is empty (write what the run should know)');
    expect(answerProblem(' \n ')).toBe('the answer is empty (write what the run should know)');
    expect(answerProblem(42)).toBe('the answer is not text');
    expect(answerProblem('x'.repeat(ANSWER_MAX_CHARS + 1))).toBe(
      `the answer is ${ANSWER_MAX_CHARS + 1} characters long, above the ${ANSWER_MAX_CHARS} allowed`,
    );
    expect(answerProblem('EU')).toBeUndefined();
  });
});

describe('question names in a run', () => {
  it('name a question by the delegation ids from the lead to the workflow that asked', () => {
    expect(questionRef('run-1', 'run-1', 'q1')).toBe('q1');
    expect(questionRef('run-1', 'run-1/task/call_1', 'q2')).toBe('call_1/q2');
    expect(questionRef('run-1', 'run-1/task/a/task/d1', 'q1')).toBe('a/d1/q1');
    // A workflow outside the run's tree keeps its own id.
    expect(questionRef('run-1', 'other/task/a', 'q1')).toBe('q1');
  });

  it('lead back to the workflow that asked', () => {
    expect(questionTarget('run-1', 'q1')).toEqual({ workflowId: 'run-1', id: 'q1' });
    expect(questionTarget('run-1', 'call_1/q2')).toEqual({ workflowId: 'run-1/task/call_1', id: 'q2' });
    for (const asking of ['run-1', 'run-1/task/call_1', 'run-1/task/a/task/d1']) {
      expect(questionTarget('run-1', questionRef('run-1', asking, 'q3'))).toEqual({
        workflowId: asking,
        id: 'q3',
      });
    }
  });
});
