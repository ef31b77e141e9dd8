/**
 * The `models:` section as DeerFlow's users write it: a LangChain class path names the provider, the Python
 * classes' own key names are read as ours, keys only some providers read are refused on the others, and
 * thinking's budget is checked where Anthropic's rules apply.
 */
import { parseConfig } from '../../../../contracts/config';
import { configProblems } from '../../../support/config-problems';

const modelOf = (entry: Record<string, unknown>, env?: Record<string, string>) =>
  parseConfig({ models: [{ name: 'm', ...entry }] }, env ? { env } : {}).config.models[0];

const problemsOf = (entry: Record<string, unknown>) => configProblems({ models: [{ name: 'm', ...entry }] });

describe('models: DeerFlow’s class paths name the provider', () => {
  it.each([
    ['langchain_openai:ChatOpenAI', 'openai'],
    ['deerflow.models.patched_openai:PatchedChatOpenAI', 'openai'],
    ['langchain_openai:AzureChatOpenAI', 'azure_openai'],
    ['langchain_anthropic:ChatAnthropic', 'anthropic'],
    ['langchain_google_genai:ChatGoogleGenerativeAI', 'google'],
    ['langchain_aws:ChatBedrockConverse', 'bedrock'],
    ['langchain_ollama:ChatOllama', 'ollama'],
  ])('%s → %s', (use, provider) => {
    expect(
      modelOf({ use, model: 'x', ...(provider === 'bedrock' && { region: 'us-east-1' }) }),
    ).toMatchObject({
      provider,
      model: 'x',
    });
  });

  it('refuses a class path and a provider that disagree, and a class it does not run', () => {
    expect(problemsOf({ use: 'langchain_anthropic:ChatAnthropic', provider: 'openai', model: 'x' })).toEqual([
      'models[0].use: "langchain_anthropic:ChatAnthropic" names provider anthropic, not openai (keep one of use and provider)',
    ]);
    expect(problemsOf({ use: 'langchain_aws:ChatBedrock', model: 'x' })[0]).toMatch(
      /^models\[0\]\.use: "langchain_aws:ChatBedrock" is not a model class this project runs \(/,
    );
  });
});

describe('models: the Python classes’ spellings', () => {
  it('reads them as ours', () => {
    expect(
      modelOf({
        use: 'langchain_aws:ChatBedrockConverse',
        model_id: 'anthropic.claude-3-5-haiku-20241022-v1:0',
        region_name: 'eu-west-1',
        credentials_profile_name: 'work',
        endpoint_url: 'https://bedrock.internal.example',
        max_tokens_to_sample: 2048,
        timeout: 120,
      }),
    ).toEqual({
      name: 'm',
      provider: 'bedrock',
      model: 'anthropic.claude-3-5-haiku-20241022-v1:0',
      region: 'eu-west-1',
      aws_profile: 'work',
      base_url: 'https://bedrock.internal.example',
      max_tokens: 2048,
      request_timeout_seconds: 120,
    });
    expect(
      modelOf({
        use: 'langchain_openai:AzureChatOpenAI',
        deployment_name: 'gpt-4o-prod',
        openai_api_version: '2024-10-21',
        azure_endpoint: 'https://r.openai.azure.com',
        azure_openai_api_key: '$AZ_KEY',
      }),
    ).toEqual({
      name: 'm',
      provider: 'azure_openai',
      // No model: the deployment names it.
      model: 'gpt-4o-prod',
      azure_deployment: 'gpt-4o-prod',
      api_version: '2024-10-21',
      base_url: 'https://r.openai.azure.com',
      api_key_env: 'AZ_KEY',
    });
    expect(
      modelOf({ use: 'langchain_ollama:ChatOllama', model: 'qwen3:8b', num_predict: 512, reasoning: true }),
    ).toEqual({
      name: 'm',
      provider: 'ollama',
      model: 'qwen3:8b',
      max_tokens: 512,
      thinking: { type: 'enabled' },
    });
  });

  it('keeps a key under any of its names a reference, even where the environment is read', () => {
    const model = modelOf(
      {
        use: 'langchain_google_genai:ChatGoogleGenerativeAI',
        model: 'gemini-2.5-flash',
        gemini_api_key: '$GEMINI_API_KEY',
      },
      { GEMINI_API_KEY: 'the-secret-value' },
    );
    expect(model.api_key_env).toBe('GEMINI_API_KEY');
    expect(JSON.stringify(model)).not.toContain('the-secret-value');
  });
});

describe('models: keys one provider reads are refused on the others', () => {
  it.each([
    [
      { provider: 'anthropic', model: 'c', region: 'us-east-1' },
      'models[0].region: is not used by provider anthropic (only by bedrock)',
    ],
    [
      { provider: 'openai', model: 'g', thinking: { type: 'enabled' } },
      'models[0].thinking: is not used by provider openai (only by anthropic, google, bedrock, ollama)',
    ],
    [
      { provider: 'anthropic', model: 'c', reasoning_effort: 'high' },
      'models[0].reasoning_effort: is not used by provider anthropic (only by openai, azure_openai)',
    ],
    [
      { provider: 'openai', model: 'g', api_version: '2024-10-21' },
      'models[0].api_version: is not used by provider openai (only by azure_openai)',
    ],
    [
      { provider: 'google', model: 'g', reasoning: true },
      'models[0].reasoning: is not used by provider google (only by ollama; write thinking)',
    ],
  ])('%j', (entry, problem) => {
    expect(problemsOf(entry)).toEqual([problem]);
  });

  it('names the keys it accepts when it meets a misspelt one', () => {
    const [line] = problemsOf({ provider: 'anthropic', model: 'c', temprature: 0.5 });
    expect(line).toMatch(/^models\[0\]\.temprature: unknown key \(accepted: /);
    expect(line).toContain('thinking');
    expect(line).toContain('azure_deployment');
  });
});

describe('models: thinking', () => {
  it('takes Anthropic’s shape, with its budget checked where Anthropic’s rules apply', () => {
    expect(
      modelOf({
        provider: 'anthropic',
        model: 'c',
        max_tokens: 16000,
        thinking: { type: 'enabled', budget_tokens: 4096 },
      }).thinking,
    ).toEqual({
      type: 'enabled',
      budget_tokens: 4096,
    });
    expect(problemsOf({ provider: 'anthropic', model: 'c', thinking: { type: 'enabled' } })).toEqual([
      'models[0].thinking.budget_tokens: is missing (1024 or more, below max_tokens: type enabled needs a budget)',
    ]);
    expect(
      problemsOf({
        provider: 'bedrock',
        model: 'c',
        region: 'us-east-1',
        max_tokens: 4000,
        thinking: { type: 'enabled', budget_tokens: 4096 },
      }),
    ).toEqual(['models[0].thinking.budget_tokens: 4096 is out of range (below max_tokens, 4000)']);
    expect(
      problemsOf({ provider: 'ollama', model: 'q', thinking: { type: 'enabled', budget_tokens: 2048 } }),
    ).toEqual(['models[0].thinking.budget_tokens: is not used by provider ollama (type alone)']);
    // Gemini takes a budget of any size, or none (dynamic).
    expect(modelOf({ provider: 'google', model: 'g', thinking: { type: 'enabled' } }).thinking).toEqual({
      type: 'enabled',
    });
  });
});
