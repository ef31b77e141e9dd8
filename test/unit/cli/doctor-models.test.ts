/**
 * `subagents doctor`'s models: each provider's endpoint and key resolved as the worker resolves them, what is
 * missing with its fix, and with `--check-models` each model reached (its fake server here) with one tiny call.
 */
import { modelsCheck, describeModel } from '../../../cli/doctor-models';
import { parseConfig } from '../../../contracts/config';
import type { ModelSettings } from '../../../contracts/model';
import {
  FAKE_AWS_ENV,
  FAKE_KEY,
  FAKE_KEY_ENV,
  setFakeProviderEnv,
  startProviderFake,
  type ProviderFake,
} from '../../support/fake-providers';

function modelsOf(entries: Record<string, unknown>[]): ModelSettings[] {
  return parseConfig({ models: entries }).config.models;
}

describe('doctor: each model, as the worker would reach it', () => {
  it.each([
    [
      {
        name: 'claude',
        use: 'langchain_anthropic:ChatAnthropic',
        model: 'claude-sonnet-4-5',
        api_key: '$MY_ANTHROPIC',
      },
      { MY_ANTHROPIC: 'sk' },
      "claude: anthropic claude-sonnet-4-5 at Anthropic's own endpoint; MY_ANTHROPIC is set",
    ],
    [
      { name: 'gemini', provider: 'google', model: 'gemini-2.5-flash' },
      { GEMINI_API_KEY: 'k' },
      "gemini: google gemini-2.5-flash at the Gemini API's own endpoint; GEMINI_API_KEY is set",
    ],
    [
      { name: 'local', use: 'langchain_ollama:ChatOllama', model: 'qwen3:8b' },
      {},
      'local: ollama qwen3:8b at http://127.0.0.1:11434; no key needed',
    ],
    [
      { name: 'br', provider: 'bedrock', model: 'anthropic.claude-v2', region: 'eu-west-1' },
      FAKE_AWS_ENV,
      "br: bedrock anthropic.claude-v2 at Bedrock's regional endpoint; region eu-west-1, signed with AWS_ACCESS_KEY_ID",
    ],
    [
      {
        name: 'az',
        use: 'langchain_openai:AzureChatOpenAI',
        azure_deployment: 'prod',
        api_version: '2024-10-21',
        base_url: 'https://r.openai.azure.com',
      },
      { AZURE_OPENAI_API_KEY: 'k' },
      'az: azure_openai prod at https://r.openai.azure.com; AZURE_OPENAI_API_KEY is set',
    ],
  ])('%j', (entry, env, line) => {
    const [model] = modelsOf([entry]);
    expect(describeModel(model, env)).toEqual({ line });
  });

  it.each([
    [
      { name: 'claude', provider: 'anthropic', model: 'c' },
      'no API key for model claude: environment variable ANTHROPIC_API_KEY is not set (set it, or set base_url for an endpoint without keys)',
    ],
    [
      { name: 'br', provider: 'bedrock', model: 'm' },
      'no AWS region for model br: set region (region_name) in the model, or AWS_REGION',
    ],
    [
      { name: 'az', provider: 'azure_openai', model: 'gpt-4o', base_url: 'https://r.openai.azure.com' },
      'no Azure API version for model az: set api_version (e.g. 2024-10-21) in the model, or OPENAI_API_VERSION',
    ],
  ])('says what is missing: %j', (entry, problem) => {
    const [model] = modelsOf([entry]);
    expect(describeModel(model, {}).problem).toBe(problem);
  });
});

describe('doctor --check-models', () => {
  // The calls read the process's environment, as a worker's do.
  let restoreEnv: () => void;
  beforeAll(() => {
    restoreEnv = setFakeProviderEnv();
  });
  afterAll(() => restoreEnv());
  const fakes: ProviderFake[] = [];
  afterEach(async () => {
    await Promise.all(fakes.splice(0).map((fake) => fake.server.close()));
  });

  it('reaches each network model with one tiny call, and says which one did not answer', async () => {
    const anthropic = await startProviderFake('anthropic', { replies: [{ content: 'OK' }] });
    const gemini = await startProviderFake('google', {
      replies: [{ status: 403, error_message: 'API key not valid for this project.' }],
    });
    fakes.push(anthropic, gemini);
    const models = modelsOf([
      { name: 'scripted', provider: 'scripted' },
      anthropic.model('claude'),
      gemini.model('gemini'),
    ]);
    const env = { [FAKE_KEY_ENV]: FAKE_KEY };
    const check = await modelsCheck({
      env,
      values: { 'check-models': true },
      config: { config: { ...parseConfig({}).config, models }, warnings: [] },
    });
    expect(check.status).toBe('missing');
    expect(check.lines).toContainEqual(
      expect.stringMatching(/^claude: reached, answered in \d+ ms by claude-fake$/),
    );
    expect(check.lines).toContain('gemini: not reached: API key not valid for this project.');
    expect(check.fix).toBe('check the key and endpoint of model gemini (HTTP 403)');
    // One tiny request each: a few output tokens, no tools.
    const [probe] = anthropic.server.chatRequests as Array<{ max_tokens: number; tools?: unknown }>;
    expect(probe.max_tokens).toBe(16);
    expect(probe.tools).toBeUndefined();
    expect(gemini.server.chatRecords).toHaveLength(1);
  });

  it('without the flag, reaches nothing and says how to', async () => {
    const anthropic = await startProviderFake('anthropic');
    fakes.push(anthropic);
    const check = await modelsCheck({
      env: { [FAKE_KEY_ENV]: FAKE_KEY },
      values: {},
      config: {
        config: { ...parseConfig({}).config, models: modelsOf([anthropic.model('claude')]) },
        warnings: [],
      },
    });
    expect(check.status).toBe('ok');
    expect(check.lines).toContain('--check-models reaches each model with one tiny call');
    expect(anthropic.server.requests).toHaveLength(0);
  });
});
