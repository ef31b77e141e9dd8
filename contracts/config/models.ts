/**
 * The `models:` section: the models a run may use, in DeerFlow's spellings too (`use:
 * langchain_anthropic:ChatAnthropic`, its keys: contracts/config/deerflow.ts). The first one listed is the lead's.
 */
import { z } from 'zod';
import {
  DEFAULT_MODEL_RETRY,
  MODEL_CLASS_PROVIDERS,
  MODEL_PROVIDERS,
  PROVIDER_ONLY_KEYS,
  providerOfClass,
  type ModelProvider,
  type ModelRetrySettings,
  type ModelSettings,
  type NetworkModelProvider,
} from '../model';
import { modelCallFields } from '../input-schemas';
import { withoutUndefined } from '../records';
import { modelPricingSection, resolvePricing } from './budget';
import {
  apiKeyReference,
  bool,
  httpUrl,
  listOf,
  oneOf,
  section,
  seconds,
  temperature,
  text,
  wholeNumber,
} from './fields';

const backoffCoefficient = z
  .number({
    error: (issue) => (issue.input === undefined ? 'is missing (a number, ≥ 1)' : 'is not a number (≥ 1)'),
  })
  .min(1, { error: 'is out of range (≥ 1)' });

/** `models[].retry`: what is not written keeps its default (DEFAULT_MODEL_RETRY: retry on, no attempt cap). */
const modelRetry = section('models[].retry', {
  initial_interval_seconds: seconds.optional(),
  backoff_coefficient: backoffCoefficient.optional(),
  max_interval_seconds: seconds.optional(),
  max_attempts: wholeNumber(1).optional(),
  max_retry_seconds: seconds.optional(),
}).transform((retry, ctx): ModelRetrySettings => {
  const resolved: ModelRetrySettings = { ...DEFAULT_MODEL_RETRY, ...withoutUndefined(retry) };
  if (resolved.max_interval_seconds < resolved.initial_interval_seconds) {
    ctx.issues.push({
      code: 'custom',
      path: ['max_interval_seconds'],
      input: resolved.max_interval_seconds,
      message: `is below initial_interval_seconds (at least ${resolved.initial_interval_seconds})`,
    });
    return z.NEVER;
  }
  return resolved;
});

const modelEntry = section('models[]', {
  name: text,
  provider: oneOf(MODEL_PROVIDERS).optional(),
  use: text.optional(),
  display_name: text.optional(),
  model: text.optional(),
  base_url: httpUrl.optional(),
  api_key: apiKeyReference.optional(),
  ...modelCallFields({ seconds, temperature, text }),
  /** DeerFlow's ChatOllama `reasoning: true`: Ollama's `think`, read as `thinking`. */
  reasoning: bool.optional(),
  retry: modelRetry.optional(),
  pricing: modelPricingSection.optional(),
}).transform((entry, ctx): ModelSettings => {
  const refuse = (path: string[], input: unknown, message: string): never => {
    ctx.issues.push({ code: 'custom', path, input, message });
    return z.NEVER as never;
  };
  const provider = entryProvider(entry.provider, entry.use);
  if (typeof provider === 'object') return refuse([provider.key], provider.input, provider.message);
  for (const [key, providers] of Object.entries(PROVIDER_ONLY_KEYS)) {
    if ((entry as Record<string, unknown>)[key] === undefined || providers.includes(provider)) continue;
    return refuse([key], undefined, `is not used by provider ${provider} (only by ${providers.join(', ')})`);
  }
  if (entry.reasoning !== undefined && provider !== 'ollama')
    return refuse(
      ['reasoning'],
      undefined,
      `is not used by provider ${provider} (only by ollama; write thinking)`,
    );
  if (entry.reasoning !== undefined && entry.thinking !== undefined)
    return refuse(['reasoning'], undefined, 'and thinking are the same setting (keep one)');
  const thinking =
    entry.thinking ??
    (entry.reasoning === undefined
      ? undefined
      : ({ type: entry.reasoning ? 'enabled' : 'disabled' } as const));
  const thinkingProblem = thinking && thinkingBudgetProblem(provider, thinking, entry.max_tokens);
  if (thinkingProblem) return refuse(['thinking', 'budget_tokens'], undefined, thinkingProblem);
  const model = entry.model ?? (provider === 'azure_openai' ? entry.azure_deployment : undefined);
  if (model === undefined && provider !== 'scripted') {
    return refuse(
      ['model'],
      undefined,
      provider === 'azure_openai'
        ? 'is missing (the model, or azure_deployment: the deployment to call)'
        : `is missing (the provider's model id, e.g. ${MODEL_ID_EXAMPLES[provider]})`,
    );
  }
  return withoutUndefined({
    name: entry.name,
    provider,
    model: model ?? entry.name,
    base_url: entry.base_url,
    api_key_env: entry.api_key,
    temperature: entry.temperature,
    max_tokens: entry.max_tokens,
    request_timeout_seconds: entry.request_timeout_seconds,
    max_answer_bytes: entry.max_answer_bytes,
    script_file: entry.script_file,
    thinking,
    reasoning_effort: entry.reasoning_effort,
    region: entry.region,
    aws_profile: entry.aws_profile,
    azure_deployment: entry.azure_deployment,
    api_version: entry.api_version,
    retry: entry.retry,
    pricing: resolvePricing(entry.pricing),
  });
});

const MODEL_ID_EXAMPLES: Readonly<Record<NetworkModelProvider, string>> = {
  openai: 'gpt-4o-mini',
  anthropic: 'claude-sonnet-4-5',
  google: 'gemini-2.5-flash',
  bedrock: 'anthropic.claude-3-5-haiku-20241022-v1:0',
  azure_openai: 'gpt-4o',
  ollama: 'qwen3:8b',
};

interface EntryProblem {
  key: string;
  input: unknown;
  message: string;
}

/** The entry's provider, from `provider:` or DeerFlow's `use:` class path (both: they must agree). */
function entryProvider(
  provider: ModelProvider | undefined,
  use: string | undefined,
): ModelProvider | EntryProblem {
  const classes = Object.keys(MODEL_CLASS_PROVIDERS)
    .map((name) => `${CLASS_PACKAGES[MODEL_CLASS_PROVIDERS[name]]}:${name}`)
    .join(', ');
  const named = use === undefined ? undefined : providerOfClass(use);
  if (use !== undefined && named === undefined && provider === undefined) {
    return {
      key: 'use',
      input: use,
      message: `is not a model class this project runs (${classes}; or set provider: ${MODEL_PROVIDERS.join(' | ')})`,
    };
  }
  if (provider !== undefined && named !== undefined && named !== provider) {
    return {
      key: 'use',
      input: use,
      message: `names provider ${named}, not ${provider} (keep one of use and provider)`,
    };
  }
  const chosen = provider ?? named;
  if (chosen === undefined) {
    return {
      key: 'provider',
      input: undefined,
      message: `is missing (${MODEL_PROVIDERS.join(', ')}; or DeerFlow's use: with a class: ${classes})`,
    };
  }
  return chosen;
}

/** The Python package DeerFlow's class path names for each provider, for the error's list. */
const CLASS_PACKAGES: Readonly<Record<NetworkModelProvider, string>> = {
  openai: 'langchain_openai',
  azure_openai: 'langchain_openai',
  anthropic: 'langchain_anthropic',
  google: 'langchain_google_genai',
  bedrock: 'langchain_aws',
  ollama: 'langchain_ollama',
};

/** Anthropic's models (direct or on Bedrock) think within a budget of 1024 tokens or more, below max_tokens. */
function thinkingBudgetProblem(
  provider: ModelProvider,
  thinking: NonNullable<ModelSettings['thinking']>,
  maxTokens: number | undefined,
): string | undefined {
  const budget = thinking.budget_tokens;
  if (provider === 'ollama' && budget !== undefined) return 'is not used by provider ollama (type alone)';
  if (thinking.type !== 'enabled') {
    return budget === undefined ? undefined : `is only read with type: enabled (not ${thinking.type})`;
  }
  if (provider !== 'anthropic' && provider !== 'bedrock') return undefined;
  if (budget === undefined) return 'is missing (1024 or more, below max_tokens: type enabled needs a budget)';
  if (budget < 1024) return `${budget} is out of range (1024 or more, below max_tokens)`;
  if (maxTokens !== undefined && budget >= maxTokens)
    return `${budget} is out of range (below max_tokens, ${maxTokens})`;
  return undefined;
}

/** Offline and deterministic: what `npm start` runs with when no model is configured. */
export const DEFAULT_MODEL_ENTRY = { name: 'scripted', provider: 'scripted' } as const;

export const modelsSection = listOf(modelEntry, 'models')
  .min(1, { error: 'is empty (list at least one model, or leave models out for the scripted default)' })
  .prefault([DEFAULT_MODEL_ENTRY]);
