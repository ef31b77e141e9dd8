/**
 * What a model call tells the worker's metrics (contracts/metrics.ts): its latency, its outcome and the tokens
 * the provider reported, labelled by model, provider and agent. Emitted through the activity's metric meter,
 * which adds `namespace`, `task_queue` and `activity_type`; outside an activity (a direct call, a unit test)
 * nothing is emitted. A worker that traces (worker/tracing.ts) also gets them on the activity's span.
 */
import { trace } from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import type { MetricMeter } from '@temporalio/common';
import type { ModelCallInput, ModelCallResult } from '../../contracts/model';
import { MODEL_TOKENS, MODEL_TURN_SECONDS, MODEL_TURNS } from '../../contracts/metrics';

/** How a call ended: an answer, a provider error the run ends on, or one Temporal retries. */
export type ModelCallOutcome = 'ok' | 'error' | 'retryable_error';

function activityMeter(): MetricMeter | undefined {
  try {
    return Context.current().metricMeter;
  } catch {
    return undefined;
  }
}

/** Records one model call that took `seconds` and ended with `outcome` (and `result`, when it answered). */
export function recordModelCall(
  input: Pick<ModelCallInput, 'model' | 'agent_name'>,
  seconds: number,
  outcome: ModelCallOutcome,
  result?: Pick<ModelCallResult, 'usage'>,
): void {
  const tags = { model: input.model.model, provider: input.model.provider, agent: input.agent_name };
  trace.getActiveSpan()?.setAttributes({
    'subagents.model': tags.model,
    'subagents.provider': tags.provider,
    'subagents.agent': tags.agent,
    'subagents.model_outcome': outcome,
    ...(result?.usage && {
      'subagents.input_tokens': result.usage.input_tokens,
      'subagents.output_tokens': result.usage.output_tokens,
      ...(result.usage.cache_read_tokens !== undefined && {
        'subagents.cache_read_tokens': result.usage.cache_read_tokens,
      }),
      ...(result.usage.cache_write_tokens !== undefined && {
        'subagents.cache_write_tokens': result.usage.cache_write_tokens,
      }),
    }),
  });
  const meter = activityMeter();
  if (meter === undefined) return;
  meter.createCounter(MODEL_TURNS, 'calls', 'Model calls, by outcome').add(1, { ...tags, outcome });
  meter
    .createHistogram(MODEL_TURN_SECONDS, 'float', 's', 'Model call latency')
    .record(Math.max(0, seconds), { ...tags, outcome });
  const usage = result?.usage;
  if (usage === undefined) return;
  const tokens = meter.createCounter(MODEL_TOKENS, 'tokens', 'Tokens the model provider reported');
  tokens.add(usage.input_tokens, { ...tags, kind: 'input' });
  tokens.add(usage.output_tokens, { ...tags, kind: 'output' });
  // Of the input, what the provider's prompt cache served and took: only where it reported them.
  if (usage.cache_read_tokens !== undefined)
    tokens.add(usage.cache_read_tokens, { ...tags, kind: 'cache_read' });
  if (usage.cache_write_tokens !== undefined) {
    tokens.add(usage.cache_write_tokens, { ...tags, kind: 'cache_write' });
  }
}
