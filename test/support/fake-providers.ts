/**
 * The fake servers of every network model provider, side by side, for suites that run the same scenario on
 * each: how to start one, and the `models[]` entry of a model it serves (with the environment it reads).
 */
import type { NetworkModelProvider } from '../../contracts/model';
import { FakeAnthropic } from './fake-anthropic';
import { FakeBedrock } from './fake-bedrock';
import { FakeGemini } from './fake-gemini';
import type { FakeModelServer, FakeServerOptions } from './fake-model-server';
import { FakeOllama } from './fake-ollama';
import { FakeAzureOpenAI, FakeOpenAI } from './fake-openai';

/** The key every fake checks, read from this variable by the models below. */
export const FAKE_KEY_ENV = 'FAKE_PROVIDER_API_KEY';
export const FAKE_KEY = 'sk-fake-key';
/** Bedrock signs with AWS credentials: the fake checks the access key id. */
export const FAKE_AWS_ENV = { AWS_ACCESS_KEY_ID: 'AKIAFAKEKEY', AWS_SECRET_ACCESS_KEY: 'fake-secret' };

export interface ProviderFake {
  provider: NetworkModelProvider;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each fake has its own request shape
  server: FakeModelServer<any>;
  /** A `models[]` entry named `name` served by this fake. */
  model(name?: string): Record<string, unknown>;
}

type Options = FakeServerOptions<never>;

const FAKES: Readonly<Record<NetworkModelProvider, (options: Options) => Promise<ProviderFake>>> = {
  openai: async (options) => {
    const server = await FakeOpenAI.start({ api_key: FAKE_KEY, ...options } as object);
    return {
      provider: 'openai',
      server,
      model: (name = 'fake') => ({
        name,
        provider: 'openai',
        model: 'fake-model',
        base_url: server.url,
        api_key: `$${FAKE_KEY_ENV}`,
      }),
    };
  },
  azure_openai: async (options) => {
    const server = await FakeAzureOpenAI.start({ api_key: FAKE_KEY, ...options } as object);
    return {
      provider: 'azure_openai',
      server,
      model: (name = 'fake') => ({
        name,
        provider: 'azure_openai',
        model: 'gpt-fake',
        azure_deployment: 'fake-deployment',
        api_version: '2024-10-21',
        base_url: server.origin,
        api_key: `$${FAKE_KEY_ENV}`,
      }),
    };
  },
  anthropic: async (options) => {
    const server = await FakeAnthropic.start({ api_key: FAKE_KEY, ...options } as object);
    return {
      provider: 'anthropic',
      server,
      model: (name = 'fake') => ({
        name,
        provider: 'anthropic',
        model: 'claude-fake',
        base_url: server.origin,
        api_key: `$${FAKE_KEY_ENV}`,
        max_tokens: 1024,
      }),
    };
  },
  google: async (options) => {
    const server = await FakeGemini.start({ api_key: FAKE_KEY, ...options } as object);
    return {
      provider: 'google',
      server,
      model: (name = 'fake') => ({
        name,
        provider: 'google',
        model: 'gemini-fake',
        base_url: server.origin,
        api_key: `$${FAKE_KEY_ENV}`,
      }),
    };
  },
  bedrock: async (options) => {
    const server = await FakeBedrock.start({ api_key: FAKE_AWS_ENV.AWS_ACCESS_KEY_ID, ...options } as object);
    return {
      provider: 'bedrock',
      server,
      model: (name = 'fake') => ({
        name,
        provider: 'bedrock',
        model: 'anthropic.claude-fake-v1:0',
        region: 'us-east-1',
        base_url: server.origin,
      }),
    };
  },
  ollama: async (options) => {
    const server = await FakeOllama.start(options as object);
    return {
      provider: 'ollama',
      server,
      model: (name = 'fake') => ({ name, provider: 'ollama', model: 'fake-model', base_url: server.origin }),
    };
  },
};

export const NETWORK_PROVIDERS = Object.keys(FAKES) as NetworkModelProvider[];

/** Which of the prompt cache's counts each provider's wire reports (and so each provider's usage carries). */
export const CACHE_COUNTS_REPORTED: Readonly<
  Record<NetworkModelProvider, { read: boolean; write: boolean }>
> = {
  openai: { read: true, write: false },
  azure_openai: { read: true, write: false },
  anthropic: { read: true, write: true },
  google: { read: true, write: false },
  bedrock: { read: true, write: true },
  ollama: { read: false, write: false },
};

/** Starts the fake of `provider`, checking its key (Ollama's: none). */
export function startProviderFake(
  provider: NetworkModelProvider,
  options: Options = {},
): Promise<ProviderFake> {
  return FAKES[provider](options);
}

/** Sets the variables the fakes' models read (the key, AWS's credentials); returns how to put them back. */
export function setFakeProviderEnv(env: NodeJS.ProcessEnv = process.env): () => void {
  const values: Record<string, string> = { [FAKE_KEY_ENV]: FAKE_KEY, ...FAKE_AWS_ENV };
  const before = Object.fromEntries(Object.keys(values).map((name) => [name, env[name]]));
  Object.assign(env, values);
  return () => {
    for (const [name, value] of Object.entries(before)) {
      if (value === undefined) delete env[name];
      else env[name] = value;
    }
  };
}
