import { BaseLanguageModel } from '@langchain/core/language_models/base';
import { CancelledFailure } from '@temporalio/common';
// The providers themselves: transcript storage around them is tested in test/unit/transcripts.test.ts.
import { ModelProviders } from '../../../../activities/model';
import type { ChatMessage, ToolSpec } from '../../../../contracts/messages';
import type { ModelSettings } from '../../../../contracts/model';
import { FakeOpenAI, type FakeOpenAIOptions } from '../../../support/fake-openai';
import { activityEnv, callModelIn, modelInput, retryableFailureOf } from './fixtures';

/** One worker's providers: what they keep between calls (parsed scripts, non-streaming endpoints) holds here. */
const providers = new ModelProviders();

const READ_FILE: ToolSpec = {
  name: 'read_file',
  description: 'Read a file of the workspace.',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};

const ask = (text: string): ChatMessage[] => [
  { role: 'system', content: 'You are a test.' },
  { role: 'user', content: text },
];

let fake: FakeOpenAI;
const started: FakeOpenAI[] = [];

async function startFake(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  fake = await FakeOpenAI.start(options);
  started.push(fake);
  return fake;
}

function openai(settings: Partial<ModelSettings> = {}) {
  return { provider: 'openai' as const, name: 'fast', model: 'gpt-test', base_url: fake.url, ...settings };
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((f) => f.close()));
  jest.restoreAllMocks();
});

describe('openai model: answers', () => {
  it('streams a text answer and reports the provider usage, finish reason and model', async () => {
    await startFake({
      replies: [
        {
          content: 'The file says hello.',
          usage: { input_tokens: 31, output_tokens: 6 },
          model: 'gpt-test-0613',
        },
      ],
    });
    const result = await providers.call(
      modelInput(openai(), ask('What does a.txt say?'), { tools: [READ_FILE] }),
    );
    expect(result).toEqual({
      content: 'The file says hello.',
      tool_calls: [],
      usage: { input_tokens: 31, output_tokens: 6, total_tokens: 37 },
      model_name: 'gpt-test-0613',
      finish_reason: 'stop',
    });
    const [request] = fake.chatRequests;
    expect(request.stream).toBe(true);
    expect(request.stream_options).toEqual({ include_usage: true });
    expect(request.model).toBe('gpt-test');
    expect(request.tools).toEqual([
      {
        type: 'function',
        function: { name: 'read_file', description: READ_FILE.description, parameters: READ_FILE.parameters },
      },
    ]);
  });

  it('parses tool calls with their ids, names and raw argument text, invalid JSON included', async () => {
    await startFake({
      replies: [
        {
          content: 'Reading.',
          tool_calls: [
            { name: 'read_file', args: { path: 'a.txt' }, id: 'call_abc' },
            { name: 'read_file', args: '{"path": "b.txt"', id: 'call_def' },
          ],
        },
      ],
    });
    const result = await providers.call(modelInput(openai(), ask('read both'), { tools: [READ_FILE] }));
    expect(result.tool_calls).toEqual([
      { id: 'call_abc', name: 'read_file', args: '{"path":"a.txt"}' },
      { id: 'call_def', name: 'read_file', args: '{"path": "b.txt"' },
    ]);
    expect(result.finish_reason).toBe('tool_calls');
  });

  it('sends the transcript as Chat Completions messages, tool calls with their raw arguments', async () => {
    await startFake();
    const messages: ChatMessage[] = [
      ...ask('read it'),
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'c1', name: 'read_file', args: '{"path": "a.txt"' }],
      },
      {
        role: 'tool',
        tool_call_id: 'c1',
        name: 'read_file',
        content: 'invalid JSON arguments',
        is_error: true,
      },
    ];
    await providers.call(modelInput(openai(), messages, { tools: [READ_FILE] }));
    expect(fake.chatRequests[0].messages).toEqual([
      { role: 'system', content: 'You are a test.' },
      { role: 'user', content: 'read it' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path": "a.txt"' } },
        ],
      },
      { role: 'tool', content: 'invalid JSON arguments', tool_call_id: 'c1' },
    ]);
  });

  it('leaves usage absent when the provider reports none, and passes finish_reason length through', async () => {
    await startFake({ replies: [{ content: 'It was a dark and', usage: null, finish_reason: 'length' }] });
    const result = await providers.call(modelInput(openai(), ask('tell a story')));
    expect(result.content).toBe('It was a dark and');
    expect(result).not.toHaveProperty('usage');
    expect(result.finish_reason).toBe('length');
  });

  it('falls back to a plain request when the endpoint answers a stream request without a stream', async () => {
    await startFake({
      streaming: false,
      replies: [
        { content: 'ignored: sent to the stream request' },
        {
          content: 'plain answer',
          tool_calls: [{ name: 'read_file', args: { path: 'a.txt' } }],
          usage: { input_tokens: 9, output_tokens: 0 },
        },
        { content: 'second call' },
      ],
    });
    const first = await providers.call(modelInput(openai(), ask('go'), { tools: [READ_FILE] }));
    expect(first.content).toBe('plain answer');
    expect(first.tool_calls).toEqual([{ id: 'call_fake_1_0', name: 'read_file', args: '{"path":"a.txt"}' }]);
    expect(first.usage).toEqual({ input_tokens: 9, output_tokens: 0, total_tokens: 9 });
    expect(fake.chatRequests.map((r) => r.stream ?? false)).toEqual([true, false]);

    const second = await providers.call(modelInput(openai(), ask('again')));
    expect(second.content).toBe('second call');
    expect(fake.chatRequests.map((r) => r.stream ?? false)).toEqual([true, false, false]);
  });

  it('sends the key from the environment variable that api_key_env names', async () => {
    await startFake({ api_key: 'sk-test-123' });
    process.env.MODEL_TEST_KEY = 'sk-test-123';
    try {
      const result = await providers.call(modelInput(openai({ api_key_env: 'MODEL_TEST_KEY' }), ask('hi')));
      expect(result.error_fallback).toBeUndefined();
      expect(fake.requests[0].authorization).toBe('Bearer sk-test-123');
    } finally {
      delete process.env.MODEL_TEST_KEY;
    }
  });

  it('never counts tokens itself, so nothing but the endpoint is contacted and the call returns promptly', async () => {
    await startFake({ replies: [{ content: 'one two three', usage: null }] });
    const fetched: string[] = [];
    const realFetch = globalThis.fetch;
    jest.spyOn(globalThis, 'fetch').mockImplementation((url, init) => {
      const target = url instanceof Request ? url.url : String(url);
      fetched.push(target);
      // Anything else is refused at once, so a regression fails here instead of hanging like an offline machine.
      if (!target.startsWith(fake.url))
        return Promise.reject(new TypeError(`fetch failed: no egress to ${target}`));
      return realFetch(url, init);
    });
    const counted = jest.spyOn(BaseLanguageModel.prototype, 'getNumTokens');
    const begun = Date.now();
    const result = await providers.call(modelInput(openai(), ask('count'), { tools: [READ_FILE] }));
    expect(Date.now() - begun).toBeLessThan(1000);
    expect(result.content).toBe('one two three');
    expect(counted).not.toHaveBeenCalled();
    expect(fetched.length).toBeGreaterThan(0);
    expect(fetched.every((url) => url.startsWith(fake.url))).toBe(true);
  });
});

describe('openai model: provider errors', () => {
  it.each([
    [400, "Invalid 'messages[2].tool_call_id': no matching tool call."],
    [404, 'The model `gpt-test` does not exist.'],
  ])('returns HTTP %i as error_fallback with the provider message', async (status, message) => {
    await startFake({ replies: [{ status, error_message: message }] });
    const result = await providers.call(modelInput(openai(), ask('go')));
    expect(result).toEqual({
      content: '',
      tool_calls: [],
      model_name: 'fast',
      error_fallback: { message, status },
    });
  });

  it('returns a rejected key (401) as error_fallback with the provider message', async () => {
    await startFake({ api_key: 'the-right-key' });
    const result = await providers.call(modelInput(openai(), ask('go')));
    expect(result.error_fallback).toEqual({ message: 'Incorrect API key provided.', status: 401 });
  });

  it.each([
    [429, 'Rate limit reached for gpt-test.'],
    [500, 'The server had an error while processing your request.'],
  ])(
    'throws HTTP %i as a retryable failure, without retrying inside the attempt',
    async (status, message) => {
      await startFake();
      fake.failNext(1, status, message);
      const failure = await retryableFailureOf(providers.call(modelInput(openai(), ask('go'))));
      expect(failure.message).toContain(message);
      expect(failure.message).toContain(`HTTP ${status}`);
      expect(fake.chatRequests).toHaveLength(1);
    },
  );

  it('throws a refused connection as a retryable failure', async () => {
    await startFake();
    await fake.close();
    const failure = await retryableFailureOf(providers.call(modelInput(openai(), ask('go'))));
    expect(failure.message).toContain(`cannot reach ${fake.url}`);
  });

  it('returns an answer without choices as a malformed-response error_fallback', async () => {
    await startFake({ streaming: false, replies: [{ raw_body: '{}' }, { raw_body: '{}' }] });
    const result = await providers.call(modelInput(openai(), ask('go')));
    expect(result.content).toBe('');
    expect(result.error_fallback?.message).toContain(`malformed response from ${fake.url}`);
    expect(result.error_fallback?.status).toBeUndefined();
  });

  it('returns a stream with broken JSON as a malformed-response error_fallback', async () => {
    await startFake({
      replies: [{ raw_body: 'data: {"choices": [\n\n', content_type: 'text/event-stream' }],
    });
    // The OpenAI client logs the broken chunk before it throws; keep the test output clean.
    const saved = process.env.OPENAI_LOG;
    process.env.OPENAI_LOG = 'off';
    try {
      const result = await providers.call(modelInput(openai(), ask('go')));
      expect(result.error_fallback?.message).toContain('malformed response');
    } finally {
      if (saved === undefined) delete process.env.OPENAI_LOG;
      else process.env.OPENAI_LOG = saved;
    }
  });

  it('needs a key when no base URL is set, and says which variable to set', async () => {
    const saved = process.env.OPENAI_BASE_URL;
    delete process.env.OPENAI_BASE_URL;
    try {
      const result = await providers.call(
        modelInput({ provider: 'openai', name: 'cloud', api_key_env: 'MODEL_TEST_UNSET_KEY' }, ask('go')),
      );
      expect(result.error_fallback?.message).toContain(
        'environment variable MODEL_TEST_UNSET_KEY is not set',
      );
    } finally {
      if (saved !== undefined) process.env.OPENAI_BASE_URL = saved;
    }
  });
});

describe('openai model: warm-up at worker start', () => {
  it('talks only to a loopback server of its own: nothing reaches the configured endpoint, no key is sent', async () => {
    await startFake();
    const saved = { url: process.env.OPENAI_BASE_URL, key: process.env.OPENAI_API_KEY };
    process.env.OPENAI_BASE_URL = fake.url;
    process.env.OPENAI_API_KEY = 'sk-must-stay-home';
    try {
      await expect(providers.warmUp([{ provider: 'openai' }])).resolves.toBeUndefined();
    } finally {
      for (const [name, value] of [
        ['OPENAI_BASE_URL', saved.url],
        ['OPENAI_API_KEY', saved.key],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    expect(fake.requests).toEqual([]);
    // And the provider still answers afterwards.
    expect((await providers.call(modelInput(openai(), ask('go')))).content).toContain('go');
  });
});

describe('openai model: waiting', () => {
  it('heartbeats while a slow stream arrives', async () => {
    await startFake({ replies: [{ content: 'a b c d e f g h', chunk_delay_ms: 110 }] });
    const env = activityEnv();
    let heartbeats = 0;
    env.on('heartbeat', () => heartbeats++);
    const result = await callModelIn(env, modelInput(openai(), ask('go')));
    expect(result.content).toBe('a b c d e f g h');
    expect(heartbeats).toBeGreaterThanOrEqual(1);
  });

  it('aborts the request promptly when the activity is cancelled', async () => {
    await startFake({ replies: [{ content: 'too late', delay_ms: 5000 }] });
    const env = activityEnv();
    const begun = Date.now();
    const call = callModelIn(env, modelInput(openai(), ask('go')));
    setTimeout(() => env.cancel(), 150);
    await expect(call).rejects.toBeInstanceOf(CancelledFailure);
    expect(Date.now() - begun).toBeLessThan(1000);
  });

  it('gives up after request_timeout_seconds with a retryable failure', async () => {
    await startFake({ replies: [{ content: 'too late', delay_ms: 5000 }] });
    const begun = Date.now();
    const failure = await retryableFailureOf(
      providers.call(modelInput(openai({ request_timeout_seconds: 0.3 }), ask('go'))),
    );
    expect(failure.message).toContain('request_timeout_seconds');
    expect(Date.now() - begun).toBeLessThan(1000);
  });
});
