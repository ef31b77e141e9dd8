/**
 * Every network model provider against its fake server, the same scenarios on each: a streamed answer with
 * tool calls, usage (cache counts where the provider reports them) and its stop reason in the contract's
 * words; the transcript sent back the way the provider takes it (tool results answering their calls); a 401
 * ending the call at once with the provider's message; a 429 retried with its wait; an overload or outage
 * retried; a cut-off and a refused answer; a context overflow said as such. Then what only one provider does.
 */
import { ModelProviders } from '../../../../activities/model';
import type { ChatMessage, ToolSpec } from '../../../../contracts/messages';
import type { ModelSettings, NetworkModelProvider } from '../../../../contracts/model';
import type { AnthropicRequest } from '../../../support/fake-anthropic';
import type { ConverseRequest } from '../../../support/fake-bedrock';
import type { GeminiRequest } from '../../../support/fake-gemini';
import type { FakeReply } from '../../../support/fake-model-server';
import {
  CACHE_COUNTS_REPORTED,
  FAKE_AWS_ENV,
  NETWORK_PROVIDERS,
  setFakeProviderEnv,
  startProviderFake,
  type ProviderFake,
} from '../../../support/fake-providers';
import { activityEnv, callModelIn, modelInput, retryableFailureOf } from './fixtures';

const providers = new ModelProviders();
let restoreEnv: () => void;
beforeAll(() => {
  restoreEnv = setFakeProviderEnv();
});
afterAll(() => restoreEnv());

const fakes: ProviderFake[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.server.close()));
  jest.restoreAllMocks();
});

async function start(provider: NetworkModelProvider, replies: FakeReply[] = []): Promise<ProviderFake> {
  const fake = await startProviderFake(provider, { replies });
  fakes.push(fake);
  return fake;
}

function settingsOf(fake: ProviderFake, extra: Partial<ModelSettings> = {}): ModelSettings {
  const { api_key: key, ...entry } = fake.model() as Record<string, unknown>;
  return {
    ...(entry as unknown as ModelSettings),
    ...(typeof key === 'string' && { api_key_env: key.slice(1) }),
    ...extra,
  };
}

const READ_FILE: ToolSpec = {
  name: 'read_file',
  description: 'Read a file of the workspace.',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};

const ask = (text: string): ChatMessage[] => [
  { role: 'system', content: 'You are a test.' },
  { role: 'user', content: text },
];

/** A turn that called read_file and got its result back. */
const afterToolCall: ChatMessage[] = [
  ...ask('read a.txt and b.txt'),
  {
    role: 'assistant',
    content: 'Reading both.',
    tool_calls: [
      { id: 'call_r1', name: 'read_file', args: '{"path":"a.txt"}' },
      { id: 'call_r2', name: 'read_file', args: '{"path":"b.txt"}' },
    ],
  },
  { role: 'tool', tool_call_id: 'call_r1', name: 'read_file', content: 'alpha' },
  { role: 'tool', tool_call_id: 'call_r2', name: 'read_file', content: 'beta', is_error: true },
  // A guard's note to the model, after the results: two user turns in a row for a provider that refuses them.
  { role: 'user', content: 'Note: wrap up soon.' },
];

/** Each provider's own words for: an answer cut off at its output limit, and a refused one. */
const STOPS: Record<NetworkModelProvider, { cutOff: [string, string]; refused?: [string, string] }> = {
  openai: { cutOff: ['length', 'length'], refused: ['content_filter', 'content_filter'] },
  azure_openai: { cutOff: ['length', 'length'], refused: ['content_filter', 'content_filter'] },
  anthropic: { cutOff: ['max_tokens', 'max_tokens'], refused: ['refusal', 'refusal'] },
  google: { cutOff: ['MAX_TOKENS', 'max_tokens'], refused: ['PROHIBITED_CONTENT', 'content_filter'] },
  bedrock: { cutOff: ['max_tokens', 'max_tokens'], refused: ['guardrail_intervened', 'content_filter'] },
  ollama: { cutOff: ['length', 'length'] },
};

describe.each(NETWORK_PROVIDERS)('the %s provider against its fake server', (provider) => {
  it('streams an answer with text and tool calls: ids, arguments, usage, the stop reason in the contract’s words', async () => {
    const fake = await start(provider, [
      {
        content: 'Reading both files.',
        tool_calls: [
          { name: 'read_file', args: { path: 'a.txt' }, id: 'call_a' },
          { name: 'read_file', args: { path: 'b.txt' }, id: 'call_b' },
        ],
        usage: { input_tokens: 120, output_tokens: 30 },
      },
    ]);
    const result = await providers.call(
      modelInput(settingsOf(fake), ask('read both'), { tools: [READ_FILE] }),
    );
    expect(result.error_fallback).toBeUndefined();
    expect(result.content).toBe('Reading both files.');
    expect(result.tool_calls.map(({ name, args }) => ({ name, args: JSON.parse(args) as unknown }))).toEqual([
      { name: 'read_file', args: { path: 'a.txt' } },
      { name: 'read_file', args: { path: 'b.txt' } },
    ]);
    // Gemini and Ollama send no ids: LangChain makes distinct ones.
    const ids = result.tool_calls.map((call) => call.id);
    expect(new Set(ids).size).toBe(2);
    if (provider !== 'google' && provider !== 'ollama') expect(ids).toEqual(['call_a', 'call_b']);
    expect(result.usage).toEqual({ input_tokens: 120, output_tokens: 30, total_tokens: 150 });
    expect(['tool_calls', 'stop']).toContain(result.finish_reason);
    expect(fake.server.chatRecords).toHaveLength(1);
  });

  it('sends the transcript back as the provider takes it: the tool calls, their results, the note', async () => {
    const fake = await start(provider, [{ content: 'a.txt says alpha.' }]);
    const result = await providers.call(modelInput(settingsOf(fake), afterToolCall, { tools: [READ_FILE] }));
    // The fakes refuse what their provider refuses (a result that answers no call, roles that do not alternate).
    expect(result.error_fallback).toBeUndefined();
    expect(result.content).toBe('a.txt says alpha.');
    expect(result.finish_reason).toBe('stop');
  });

  it('reports the prompt cache’s counts where the provider does, and leaves them out where it does not', async () => {
    const fake = await start(provider, [
      {
        content: 'Cached.',
        usage: { input_tokens: 5000, output_tokens: 10, cache_read_tokens: 4000, cache_write_tokens: 900 },
      },
    ]);
    const result = await providers.call(modelInput(settingsOf(fake), ask('again')));
    const reported = CACHE_COUNTS_REPORTED[provider];
    expect(result.usage).toEqual({
      input_tokens: 5000,
      output_tokens: 10,
      total_tokens: 5010,
      ...(reported.read && { cache_read_tokens: 4000 }),
      ...(reported.write && { cache_write_tokens: 900 }),
    });
  });

  it('ends the call at once on a 401, with the provider’s own message', async () => {
    const fake = await start(provider, [{ status: 401, error_message: 'invalid x-api-key for this test' }]);
    const result = await providers.call(modelInput(settingsOf(fake), ask('go')));
    expect(result.error_fallback).toEqual({ message: 'invalid x-api-key for this test', status: 401 });
    expect(result.content).toBe('');
    expect(fake.server.chatRecords).toHaveLength(1);
  });

  it('retries a 429, with the wait the provider asked for', async () => {
    const fake = await start(provider, [
      { status: 429, error_message: 'Rate limited: slow down.', retry_after: 3 },
    ]);
    const failure = await retryableFailureOf(
      callModelIn(activityEnv(), modelInput(settingsOf(fake), ask('go'))),
    );
    expect(failure.message).toBe('model fake (HTTP 429): Rate limited: slow down.');
    // Ollama's server sends no wait.
    if (provider !== 'ollama') expect(failure.nextRetryDelay).toBe(3000);
  });

  it('retries an overloaded or unavailable provider', async () => {
    const status = provider === 'anthropic' ? 529 : 503;
    const fake = await start(provider, [{ status, error_message: 'Overloaded' }]);
    const failure = await retryableFailureOf(
      callModelIn(activityEnv(), modelInput(settingsOf(fake), ask('go'))),
    );
    expect(failure.message).toBe(`model fake (HTTP ${status}): Overloaded`);
  });

  it('says an answer cut off at the output limit, and a refused one, in the contract’s words', async () => {
    const { cutOff, refused } = STOPS[provider];
    const fake = await start(provider, [
      { content: 'It was a dark and', finish_reason: cutOff[0] },
      ...(refused ? [{ content: '', finish_reason: refused[0] }] : []),
    ]);
    const first = await providers.call(modelInput(settingsOf(fake), ask('tell a story')));
    expect(first).toMatchObject({ content: 'It was a dark and', finish_reason: cutOff[1] });
    if (refused) {
      const second = await providers.call(modelInput(settingsOf(fake), ask('something refused')));
      expect(second.finish_reason).toBe(refused[1]);
    }
  });

  it('says a context overflow as such, without retrying', async () => {
    const fake = await start(provider, [
      { status: 400, error_message: 'prompt is too long: 210000 tokens > 200000 maximum' },
    ]);
    const result = await providers.call(modelInput(settingsOf(fake), ask('a very long story')));
    expect(result.error_fallback).toEqual({
      message: 'prompt is too long: 210000 tokens > 200000 maximum',
      status: 400,
      context_overflow: true,
    });
  });

  it('contacts nothing but its endpoint (no token counting, no model lists, no metadata endpoint)', async () => {
    const fake = await start(provider, [{ content: 'one two three', usage: null }]);
    const realFetch = globalThis.fetch;
    const fetched: string[] = [];
    jest.spyOn(globalThis, 'fetch').mockImplementation((url, init) => {
      const target = url instanceof Request ? url.url : String(url);
      fetched.push(target);
      if (!target.startsWith(fake.server.origin)) {
        return Promise.reject(new TypeError(`fetch failed: no egress to ${target}`));
      }
      return realFetch(url, init);
    });
    const begun = Date.now();
    const result = await providers.call(modelInput(settingsOf(fake), ask('count'), { tools: [READ_FILE] }));
    expect(Date.now() - begun).toBeLessThan(2000);
    expect(result).toMatchObject({ content: 'one two three' });
    // Anthropic's wire always carries usage.
    if (provider !== 'anthropic') expect(result).not.toHaveProperty('usage');
    expect(fetched.every((url) => url.startsWith(fake.server.origin))).toBe(true);
    expect(fake.server.requests).toHaveLength(1);
  });
});

describe('the anthropic provider: prompt caching', () => {
  it('marks the system prompt and the transcript’s end as cache breakpoints, the system context after them', async () => {
    const fake = await start('anthropic', [{ content: 'Done.' }]);
    await providers.call({
      ...modelInput(settingsOf(fake), afterToolCall, { tools: [READ_FILE] }),
      system_context: '<ledger>2 delegations</ledger>',
    });
    const request = fake.server.chatRequests[0] as AnthropicRequest;
    expect(request.stream).toBe(true);
    expect(request.system).toEqual([
      { type: 'text', text: 'You are a test.', cache_control: { type: 'ephemeral' } },
    ]);
    const [last, context] = request.messages.slice(-2);
    // The transcript's last block (the note) is the second breakpoint; the context follows, uncached.
    expect(last.content).toEqual([
      { type: 'text', text: 'Note: wrap up soon.', cache_control: { type: 'ephemeral' } },
    ]);
    expect(context).toEqual({ role: 'user', content: '<ledger>2 delegations</ledger>' });
    // The context never reaches the system prompt, whose prefix is cached.
    expect(JSON.stringify(request.system)).not.toContain('ledger');
    const marks = JSON.stringify(request).match(/cache_control/g) ?? [];
    expect(marks).toHaveLength(2);
  });

  it('keeps the thinking of an answer and sends it back in front of its tool calls, as Anthropic requires', async () => {
    const thinking = { type: 'enabled' as const, budget_tokens: 2048 };
    const fake = await start('anthropic', [
      {
        thinking: 'The user wants a.txt; read it first.',
        content: 'Reading.',
        tool_calls: [{ name: 'read_file', args: { path: 'a.txt' }, id: 'toolu_1' }],
      },
      { content: 'a.txt says alpha.' },
      { content: 'never served: the request without the thinking block is refused first' },
    ]);
    const settings = settingsOf(fake, { max_tokens: 8000, thinking });
    const first = await providers.call(modelInput(settings, ask('read a.txt'), { tools: [READ_FILE] }));
    expect(first.content).toBe('Reading.');
    expect(first.provider_blocks).toEqual({
      provider: 'anthropic',
      blocks: [
        { type: 'thinking', thinking: 'The user wants a.txt; read it first.', signature: 'sig-fake-0' },
      ],
    });
    const turn = (blocks: typeof first.provider_blocks): ChatMessage[] => [
      ...ask('read a.txt'),
      {
        role: 'assistant',
        content: first.content,
        tool_calls: first.tool_calls,
        ...(blocks && { provider_blocks: blocks }),
      },
      { role: 'tool', tool_call_id: 'toolu_1', name: 'read_file', content: 'alpha' },
    ];
    const second = await providers.call(
      modelInput(settings, turn(first.provider_blocks), { tools: [READ_FILE] }),
    );
    expect(second).toMatchObject({ content: 'a.txt says alpha.' });
    const [, resent] = (fake.server.chatRequests[1] as AnthropicRequest).messages;
    expect(resent.content).toEqual([
      { type: 'thinking', thinking: 'The user wants a.txt; read it first.', signature: 'sig-fake-0' },
      { type: 'text', text: 'Reading.' },
      { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.txt' } },
    ]);
    // The fake refuses what Anthropic refuses: the same turn without its thinking.
    const without = await providers.call(modelInput(settings, turn(undefined), { tools: [READ_FILE] }));
    expect(without.error_fallback?.message).toMatch(
      /a final `assistant` message must start with a thinking block/,
    );
    // Another provider's blocks are never sent to this one.
    const foreign = await providers.call(
      modelInput(settings, turn({ provider: 'bedrock', blocks: [{ type: 'reasoning_content' }] }), {
        tools: [READ_FILE],
      }),
    );
    expect(foreign.error_fallback?.status).toBe(400);
  });

  it('sends extended thinking as configured', async () => {
    const fake = await start('anthropic', [{ content: 'Thought.' }]);
    await providers.call(
      modelInput(
        settingsOf(fake, { max_tokens: 8000, thinking: { type: 'enabled', budget_tokens: 2048 } }),
        ask('think'),
      ),
    );
    const request = fake.server.chatRequests[0] as AnthropicRequest;
    expect(request.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(request.max_tokens).toBe(8000);
  });
});

describe('the azure_openai provider', () => {
  it('calls the deployment’s URL with the api-version and the key in the api-key header', async () => {
    const fake = await start('azure_openai', [{ content: 'Hello from Azure.' }]);
    const result = await providers.call(modelInput(settingsOf(fake), ask('hi')));
    expect(result.content).toBe('Hello from Azure.');
    const [record] = fake.server.chatRecords;
    expect(record.path).toBe('/openai/deployments/fake-deployment/chat/completions');
    expect(record.query).toEqual({ 'api-version': '2024-10-21' });
    expect(record.headers['api-key']).toBe('sk-fake-key');
    expect(record.authorization).toBeUndefined();
  });

  it('reads the deployment from a whole deployment URL', async () => {
    const fake = await start('azure_openai', [{ content: 'Hi.' }]);
    const settings = settingsOf(fake, {
      base_url: `${fake.server.origin}/openai/deployments/other-deployment`,
      azure_deployment: undefined,
    });
    await providers.call(modelInput(settings, ask('hi')));
    expect(fake.server.chatRecords[0].path).toBe('/openai/deployments/other-deployment/chat/completions');
  });
});

describe('the bedrock provider', () => {
  it('keeps a Claude model’s reasoning and sends it back, signed, with its tool calls', async () => {
    const fake = await start('bedrock', [
      {
        thinking: 'Read the file first.',
        content: 'Reading.',
        tool_calls: [{ name: 'read_file', args: { path: 'a.txt' }, id: 'tooluse_1' }],
      },
      { content: 'It says alpha.' },
    ]);
    const settings = settingsOf(fake, {
      max_tokens: 8000,
      thinking: { type: 'enabled', budget_tokens: 2048 },
    });
    const first = await providers.call(modelInput(settings, ask('read a.txt'), { tools: [READ_FILE] }));
    expect(first.content).toBe('Reading.');
    expect(first.provider_blocks?.provider).toBe('bedrock');
    const transcript: ChatMessage[] = [
      ...ask('read a.txt'),
      {
        role: 'assistant',
        content: first.content,
        tool_calls: first.tool_calls,
        provider_blocks: first.provider_blocks,
      },
      { role: 'tool', tool_call_id: 'tooluse_1', name: 'read_file', content: 'alpha' },
    ];
    const second = await providers.call(modelInput(settings, transcript, { tools: [READ_FILE] }));
    expect(second).toMatchObject({ content: 'It says alpha.' });
    const request = fake.server.chatRequests[1] as ConverseRequest;
    expect(request.additionalModelRequestFields).toEqual({
      thinking: { type: 'enabled', budget_tokens: 2048 },
    });
    expect(request.messages[1].content[0]).toEqual({
      reasoningContent: { reasoningText: { text: 'Read the file first.', signature: 'sig-fake-0' } },
    });
  });

  it('signs with the environment’s AWS credentials for the configured region, and streams ConverseStream', async () => {
    const fake = await start('bedrock', [{ content: 'Signed.' }]);
    await providers.call(modelInput(settingsOf(fake), ask('hi')));
    const [record] = fake.server.chatRecords;
    expect(record.path).toBe('/model/anthropic.claude-fake-v1%3A0/converse-stream');
    expect(record.authorization).toMatch(
      new RegExp(
        `^AWS4-HMAC-SHA256 Credential=${FAKE_AWS_ENV.AWS_ACCESS_KEY_ID}/\\d{8}/us-east-1/bedrock/aws4_request`,
      ),
    );
  });

  it('joins a user note to the tool results before it: Converse takes no two user turns in a row', async () => {
    const fake = await start('bedrock', [{ content: 'ok' }]);
    await providers.call(modelInput(settingsOf(fake), afterToolCall, { tools: [READ_FILE] }));
    const request = fake.server.chatRequests[0] as ConverseRequest;
    expect(request.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(request.messages[2])).toContain('Note: wrap up soon.');
  });

  it('fails at once, saying what to set, without a region or credentials (never asking a metadata endpoint)', async () => {
    const fake = await start('bedrock', []);
    const saved = { ...process.env };
    delete process.env.AWS_ACCESS_KEY_ID;
    delete process.env.AWS_PROFILE;
    delete process.env.AWS_BEARER_TOKEN_BEDROCK;
    delete process.env.AWS_REGION;
    delete process.env.AWS_DEFAULT_REGION;
    try {
      const result = await providers.call(modelInput(settingsOf(fake), ask('hi')));
      expect(result.error_fallback?.message).toMatch(
        /^no AWS credentials for model fake: set AWS_ACCESS_KEY_ID/,
      );
      const noRegion = await providers.call(modelInput(settingsOf(fake, { region: undefined }), ask('hi')));
      expect(noRegion.error_fallback?.message).toMatch(/^no AWS region for model fake/);
    } finally {
      Object.assign(process.env, saved);
    }
    expect(fake.server.requests).toHaveLength(0);
  });
});

describe('the google provider', () => {
  it('calls streamGenerateContent with alt=sse and the key in x-goog-api-key', async () => {
    const fake = await start('google', [{ content: 'Gemini here.' }]);
    await providers.call(modelInput(settingsOf(fake), ask('hi')));
    const [record] = fake.server.chatRecords;
    expect(record.path).toBe('/v1beta/models/gemini-fake:streamGenerateContent');
    expect(record.query).toEqual({ alt: 'sse' });
    expect(record.headers['x-goog-api-key']).toBe('sk-fake-key');
  });

  it("sends Gemini 3's thought signature back on the function call it came with", async () => {
    const fake = await start('google', [
      {
        thinking: 'unused: Gemini sends the signature only',
        tool_calls: [{ name: 'read_file', args: { path: 'a.txt' } }],
      },
      { content: 'a.txt says alpha.' },
      { content: 'Again.' },
    ]);
    const settings = settingsOf(fake);
    const first = await providers.call(modelInput(settings, ask('read a.txt'), { tools: [READ_FILE] }));
    const [call] = first.tool_calls;
    expect(first.provider_blocks).toEqual({
      provider: 'google',
      blocks: [{ type: 'function_call_thought_signatures', signatures: { [call.id]: 'sig-fake-0' } }],
    });
    const turn = (blocks: typeof first.provider_blocks): ChatMessage[] => [
      ...ask('read a.txt'),
      {
        role: 'assistant',
        content: '',
        tool_calls: first.tool_calls,
        ...(blocks && { provider_blocks: blocks }),
      },
      { role: 'tool', tool_call_id: call.id, name: 'read_file', content: 'alpha' },
    ];
    const modelParts = (k: number) =>
      (fake.server.chatRequests[k] as GeminiRequest).contents.find((c) => c.role === 'model')?.parts;
    await providers.call(modelInput(settings, turn(first.provider_blocks), { tools: [READ_FILE] }));
    expect(modelParts(1)).toEqual([
      { functionCall: { name: 'read_file', args: { path: 'a.txt' } }, thoughtSignature: 'sig-fake-0' },
    ]);
    // Another provider's blocks are not Gemini's signatures.
    const foreign = { provider: 'anthropic', blocks: first.provider_blocks?.blocks ?? [] };
    await providers.call(modelInput(settings, turn(foreign), { tools: [READ_FILE] }));
    expect(modelParts(2)?.[0]).not.toHaveProperty('thoughtSignature');
  });
});

describe('the ollama provider', () => {
  it('calls /api/chat with no key, and thinking turned on as configured', async () => {
    const fake = await start('ollama', [{ content: 'Local.' }]);
    await providers.call(modelInput(settingsOf(fake, { thinking: { type: 'enabled' } }), ask('hi')));
    const [record] = fake.server.chatRecords;
    expect(record.path).toBe('/api/chat');
    expect(record.authorization).toBeUndefined();
    expect((record.body as { think?: boolean }).think).toBe(true);
  });
});
