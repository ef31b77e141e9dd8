/**
 * The `models:` section: the models a run may use, in DeerFlow's spellings too (`use:
 * langchain_openai:ChatOpenAI`). The first one listed is the lead's.
 */
import { z } from 'zod';
import { DEFAULT_MODEL_RETRY, MODEL_PROVIDERS, type ModelRetrySettings, type ModelSettings } from '../model';
import { modelCallFields } from '../input-schemas';
import { withoutUndefined } from '../records';
import {
  apiKeyReference,
  httpUrl,
  listOf,
  oneOf,
  section,
  seconds,
  temperature,
  text,
  wholeNumber,
} from './fields';

/** DeerFlow names its model classes (`use: langchain_openai:ChatOpenAI`); any ChatOpenAI speaks our openai. */
const OPENAI_CLASS_MARKER = 'ChatOpenAI';

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
  retry: modelRetry.optional(),
}).transform((entry, ctx): ModelSettings => {
  let provider = entry.provider;
  if (provider === undefined) {
    if (entry.use === undefined) {
      ctx.issues.push({
        code: 'custom',
        path: ['provider'],
        input: undefined,
        message: `is missing (${MODEL_PROVIDERS.join(', ')}; or DeerFlow's use: langchain_openai:ChatOpenAI)`,
      });
      return z.NEVER;
    }
    if (!entry.use.includes(OPENAI_CLASS_MARKER)) {
      ctx.issues.push({
        code: 'custom',
        path: ['use'],
        input: entry.use,
        message:
          `is not a model class this project runs (langchain_openai:ChatOpenAI for any OpenAI-compatible ` +
          `endpoint, or set provider: ${MODEL_PROVIDERS.join(' | ')})`,
      });
      return z.NEVER;
    }
    provider = 'openai';
  }
  if (provider === 'openai' && entry.model === undefined) {
    ctx.issues.push({
      code: 'custom',
      path: ['model'],
      input: undefined,
      message: "is missing (the provider's model id, e.g. gpt-4o-mini)",
    });
    return z.NEVER;
  }
  return withoutUndefined({
    name: entry.name,
    provider,
    model: entry.model ?? entry.name,
    base_url: entry.base_url,
    api_key_env: entry.api_key,
    temperature: entry.temperature,
    max_tokens: entry.max_tokens,
    request_timeout_seconds: entry.request_timeout_seconds,
    max_answer_bytes: entry.max_answer_bytes,
    script_file: entry.script_file,
    retry: entry.retry,
  });
});

/** Offline and deterministic: what `npm start` runs with when no model is configured. */
export const DEFAULT_MODEL_ENTRY = { name: 'scripted', provider: 'scripted' } as const;

export const modelsSection = listOf(modelEntry, 'models')
  .min(1, { error: 'is empty (list at least one model, or leave models out for the scripted default)' })
  .prefault([DEFAULT_MODEL_ENTRY]);
