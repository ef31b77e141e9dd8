/**
 * The `openai` model provider: any OpenAI-compatible Chat Completions endpoint with tool calling (OpenAI,
 * DeepSeek, vLLM, Ollama, LM Studio) through LangChain's ChatOpenAI; and `azure_openai`, Azure OpenAI's
 * deployments (`…/openai/deployments/<deployment>/chat/completions?api-version=…`, the key in an `api-key`
 * header) through its AzureChatOpenAI. Both stream, with the provider's own usage chunk
 * (`stream_options.include_usage`); the call itself goes the shared way (chat-call.ts).
 */
import type * as LangChainOpenAI from '@langchain/openai';
import type { ModelCallInput, ModelSettings } from '../../contracts/model';
import { loadOptional } from '../../payloads/optional-packages';
import {
  apiKeyOf,
  keyedEndpoint,
  missingSetting,
  withTools,
  type ChatModelCall,
  type LangChainProvider,
} from './chat-call';
import { classifyProviderError } from './provider-errors';
import { toLangChainMessages } from './langchain-messages';

/**
 * LangChain's OpenAI adapter (with LangChain, the OpenAI client and langsmith: ~550 modules, ~30 MiB), loaded
 * on the first `openai` or `azure_openai` call or warm-up: a worker on the offline model never needs it
 * (BENCHMARKS.md, "Where the memory goes").
 */
function langChainOpenAI(neededBy: string): typeof LangChainOpenAI {
  return loadOptional(
    neededBy,
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy; import() needs --experimental-vm-modules under jest
    () => require('@langchain/openai') as typeof LangChainOpenAI,
  );
}

/** The fields both classes take alike: retries belong to Temporal, never to the client inside one attempt. */
function commonFields(settings: ModelSettings) {
  return {
    model: settings.model,
    temperature: settings.temperature,
    maxTokens: settings.max_tokens,
    ...(settings.reasoning_effort && { reasoning: { effort: settings.reasoning_effort } }),
    maxRetries: 0,
    streamUsage: true,
  };
}

/** Chat Completions' part of a call, whichever class speaks it. */
function chatCompletionsCall(
  input: ModelCallInput,
  endpoint: string,
  build: () => InstanceType<typeof LangChainOpenAI.ChatOpenAI>,
): ChatModelCall {
  return {
    endpoint,
    chatModel: () => {
      const chat = build();
      return withTools(chat, input.tools);
    },
    messages: toLangChainMessages(input.messages, 'raw'),
    stream: true,
    rememberNonStreaming: true,
    // Chat Completions' own words are the contract's.
    finishReason: (reply) => {
      const reason = reply.response_metadata.finish_reason;
      return typeof reason === 'string' ? reason : undefined;
    },
    classify: (err) => classifyProviderError(err, endpoint),
  };
}

export const openaiProvider: LangChainProvider = {
  endpoint(settings, env) {
    return keyedEndpoint(settings, env, settings.base_url || env.OPENAI_BASE_URL || undefined);
  },
  chatCall(input, { baseUrl, apiKey }) {
    return chatCompletionsCall(input, baseUrl ?? 'the OpenAI API', () => {
      const { ChatOpenAI } = langChainOpenAI('the openai model provider');
      return new ChatOpenAI({
        ...commonFields(input.model),
        apiKey,
        configuration: baseUrl ? { baseURL: baseUrl } : undefined,
      });
    });
  },
};

/** The Azure resource, e.g. `https://my-resource.openai.azure.com`, and the deployment a model calls. */
function azureTarget(
  settings: ModelSettings,
  env: NodeJS.ProcessEnv,
): { resource: string; deployment: string } | undefined {
  const url = (settings.base_url || env.AZURE_OPENAI_ENDPOINT || '').replace(/\/+$/, '');
  if (url === '') return undefined;
  // Python's AzureChatOpenAI also takes the deployment's whole URL as `base_url`.
  const [resource, deploymentOfUrl] = url.split('/openai/deployments/');
  const deployment = settings.azure_deployment ?? deploymentOfUrl?.split('/')[0] ?? settings.model;
  return { resource, deployment };
}

export const azureOpenAIProvider: LangChainProvider = {
  endpoint(settings, env) {
    const target = azureTarget(settings, env);
    if (target === undefined) {
      throw missingSetting(
        settings,
        'no Azure endpoint',
        'set base_url (azure_endpoint), e.g. https://my-resource.openai.azure.com, or AZURE_OPENAI_ENDPOINT',
      );
    }
    if (!settings.api_version && !env.OPENAI_API_VERSION) {
      throw missingSetting(
        settings,
        'no Azure API version',
        'set api_version (e.g. 2024-10-21) in the model, or OPENAI_API_VERSION',
      );
    }
    const { key, variable } = apiKeyOf(settings, env);
    if (key === undefined) {
      throw missingSetting(settings, 'no API key', `environment variable ${variable} is not set`);
    }
    // The URL as written: a deployment's whole URL says its deployment (azureTarget, again in chatCall).
    return { baseUrl: settings.base_url || env.AZURE_OPENAI_ENDPOINT, apiKey: key };
  },
  chatCall(input, { baseUrl, apiKey }) {
    const settings = input.model;
    const target = azureTarget({ ...settings, base_url: baseUrl }, process.env) as {
      resource: string;
      deployment: string;
    };
    return chatCompletionsCall(input, `${target.resource} (deployment ${target.deployment})`, () => {
      const { AzureChatOpenAI } = langChainOpenAI('the azure_openai model provider');
      return new AzureChatOpenAI({
        ...commonFields(settings),
        azureOpenAIApiKey: apiKey,
        // The whole path, so that no AZURE_OPENAI_* variable of the worker's can point it elsewhere.
        azureOpenAIBasePath: `${target.resource}/openai/deployments`,
        azureOpenAIApiDeploymentName: target.deployment,
        azureOpenAIApiVersion: settings.api_version ?? process.env.OPENAI_API_VERSION,
      });
    });
  },
};
