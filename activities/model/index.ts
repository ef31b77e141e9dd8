/**
 * The model activity: one model call of an agent turn. Providers are chosen by `model.provider`.
 *
 * Error policy: a provider error that time can fix (HTTP 408/409/429/5xx, network, timeout) is thrown as a
 * retryable ApplicationFailure of type `ModelProviderRetryable`, so Temporal retries the activity with backoff.
 * One that it cannot (400, 401, 403, 404, 422, a malformed response, a broken script) is returned as
 * `error_fallback` with the provider's own message, so the run ends `failed` with it, never `completed`.
 *
 * This module exports the activity function only, so it can be registered and proxied as is; the script
 * format, its loader and the failure type live in model-script.ts, scripted.ts and errors.ts.
 */
import { MODEL_PROVIDERS, type ModelCallInput, type ModelCallResult } from '../../contracts/model';
import { ProviderError, retryableModelFailure } from './errors';
import { callOpenAIModel } from './openai';
import { callScriptedModel, scriptedModelName } from './scripted';

export async function callModel(input: ModelCallInput): Promise<ModelCallResult> {
  try {
    switch (input.model.provider) {
      case 'scripted':
        return await callScriptedModel(input);
      case 'openai':
        return await callOpenAIModel(input);
      default:
        throw new ProviderError(
          `model ${input.model.name}: provider "${String(input.model.provider)}" is unknown (accepted: ${MODEL_PROVIDERS.join(', ')})`,
          undefined,
          false,
        );
    }
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    if (err.retryable) throw retryableModelFailure(input.model.name, err);
    return {
      content: '',
      tool_calls: [],
      model_name: input.model.provider === 'scripted' ? scriptedModelName(input) : input.model.name,
      error_fallback: { message: err.message, ...(err.status === undefined ? {} : { status: err.status }) },
    };
  }
}
