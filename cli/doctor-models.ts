/**
 * `subagents doctor`'s models: each model of the config with its provider, endpoint and key (resolved as the
 * worker resolves them: worker/diagnostics.ts), what is missing with the fix; with `--check-models`,
 * each network model reached with one tiny call. And the packages the config's providers need.
 */
import {
  apiKeyOf,
  callModelOnce,
  modelEndpoint,
  ProviderError,
  type ProviderEndpoint,
} from '../worker/diagnostics';
import type { ModelSettings, NetworkModelProvider } from '../contracts/model';
import type { DoctorCheck, DoctorContext } from './doctor';

/** Where a provider's requests go when the model names no endpoint. */
const DEFAULT_ENDPOINTS: Readonly<Record<NetworkModelProvider, string>> = {
  openai: "OpenAI's own endpoint",
  azure_openai: 'AZURE_OPENAI_ENDPOINT',
  anthropic: "Anthropic's own endpoint",
  google: "the Gemini API's own endpoint",
  bedrock: "Bedrock's regional endpoint",
  ollama: 'http://127.0.0.1:11434',
};

/** The LangChain package each provider loads (with @langchain/core). */
export const PROVIDER_PACKAGES: Readonly<Record<NetworkModelProvider, string>> = {
  openai: '@langchain/openai',
  azure_openai: '@langchain/openai',
  anthropic: '@langchain/anthropic',
  google: '@langchain/google-genai',
  bedrock: '@langchain/aws',
  ollama: '@langchain/ollama',
};

/** How long `--check-models` waits for one model's answer. */
const CHECK_TIMEOUT_SECONDS = 30;

interface ModelLine {
  line: string;
  problem?: string;
}

function credentials(model: ModelSettings, env: NodeJS.ProcessEnv, endpoint: ProviderEndpoint): string {
  const provider = model.provider as NetworkModelProvider;
  if (provider === 'ollama') return endpoint.apiKey ? 'a key is set' : 'no key needed';
  if (provider === 'bedrock') {
    const region = model.region ?? (env.AWS_REGION || env.AWS_DEFAULT_REGION);
    const signer = endpoint.apiKey
      ? `a Bedrock API key (${apiKeyOf(model, env).variable})`
      : endpoint.aws
        ? 'AWS_ACCESS_KEY_ID'
        : `the profile ${model.aws_profile ?? env.AWS_PROFILE}`;
    return `region ${region}, signed with ${signer}`;
  }
  const { key, variable } = apiKeyOf(model, env);
  return key ? `${variable} is set` : `${variable} not set (fine for an endpoint without keys)`;
}

/** One model: what it is, where it goes, with what key; or what is missing. */
export function describeModel(model: ModelSettings, env: NodeJS.ProcessEnv): ModelLine {
  if (model.provider === 'scripted') {
    return {
      line: `${model.name}: scripted (offline${model.script_file ? `, script ${model.script_file}` : ''}; no key needed)`,
    };
  }
  const provider = model.provider;
  const head = `${model.name}: ${provider} ${model.model}`;
  try {
    const endpoint = modelEndpoint(provider, model, env);
    return {
      line: `${head} at ${endpoint.baseUrl ?? DEFAULT_ENDPOINTS[provider]}; ${credentials(model, env, endpoint)}`,
    };
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    return { line: `${head}: ${err.message}`, problem: err.message };
  }
}

/**
 * One tiny call of `model` (a few output tokens, no tools, no thinking), outside any workflow: the answer's
 * latency and the model that answered, or the provider's error.
 */
async function reachModel(model: ModelSettings): Promise<ModelLine> {
  const begun = performance.now();
  const probe: ModelSettings = {
    ...model,
    max_tokens: 16,
    thinking: undefined,
    reasoning_effort: undefined,
    request_timeout_seconds: Math.min(
      model.request_timeout_seconds ?? CHECK_TIMEOUT_SECONDS,
      CHECK_TIMEOUT_SECONDS,
    ),
  };
  try {
    const result = await callModelOnce({
      model: probe,
      agent_name: 'doctor',
      messages: [
        { role: 'system', content: 'Answer with the single word OK.' },
        { role: 'user', content: 'Are you there?' },
      ],
      tools: [],
    });
    if (result.error_fallback) {
      return {
        line: `${model.name}: not reached: ${result.error_fallback.message}`,
        problem: `check the key and endpoint of model ${model.name} (${result.error_fallback.status ? `HTTP ${result.error_fallback.status}` : 'refused'})`,
      };
    }
    const ms = Math.round(performance.now() - begun);
    return { line: `${model.name}: reached, answered in ${ms} ms by ${result.model_name}` };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return {
      line: `${model.name}: not reached: ${message}`,
      problem: `model ${model.name} is not reachable now (${message.split('\n')[0]})`,
    };
  }
}

export async function modelsCheck({ env, values, config }: DoctorContext): Promise<DoctorCheck> {
  const name = 'Models';
  if ('error' in config) {
    // The Config check shows why.
    return { name, status: 'missing', lines: ['unknown: the config file cannot be read (see Config)'] };
  }
  const models = config.config.models;
  const described = models.map((model) => describeModel(model, env));
  if (values['check-models'] === true) {
    // One at a time: a doctor's calls are few, and each answer's latency is read alone.
    for (const [i, model] of models.entries()) {
      if (model.provider === 'scripted' || described[i].problem) continue;
      const reached = await reachModel(model);
      described.push(reached);
    }
  }
  const onModel = Boolean(env.OPENAI_BASE_URL && env.OPENAI_API_KEY);
  const problems = described.flatMap((d) => (d.problem ? [d.problem] : []));
  return {
    name,
    status: problems.length > 0 ? 'missing' : 'ok',
    lines: [
      `config: ${config.path ?? 'none (the defaults; --config FILE reads one)'}`,
      ...described.map((d) => d.line),
      onModel
        ? `npm start: on ${env.OPENAI_MODEL ?? 'gpt-4o-mini'} at ${env.OPENAI_BASE_URL} (OPENAI_BASE_URL and OPENAI_API_KEY are set)`
        : 'npm start: the offline scripted demo (OPENAI_BASE_URL and OPENAI_API_KEY together run it on a model)',
      ...(values['check-models'] === true || !models.some((model) => model.provider !== 'scripted')
        ? []
        : ['--check-models reaches each model with one tiny call']),
    ],
    ...(problems.length > 0 && { fix: problems.join('; ') }),
  };
}
