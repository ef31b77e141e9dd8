/**
 * The project's own metrics, by the names the Prometheus endpoint shows (the SDK's metric meter adds no prefix;
 * its own metrics are `temporal_*`). Emitted by activities (model turns, tokens) and workflows (delegation
 * outcomes, lead run outcomes, admission waits); docs/operations.md "Metrics and tracing" lists their labels.
 */

/** Counter: model turns (one model activity attempt that got an answer or a final provider error). */
export const MODEL_TURNS = 'subagents_model_turns';

/** Histogram, seconds: how long one model call took, provider included. */
export const MODEL_TURN_SECONDS = 'subagents_model_turn_seconds';

/** Counter: tokens the provider reported, by `kind` (input, output; cache_read, cache_write: parts of input). */
export const MODEL_TOKENS = 'subagents_tokens';

/** Gauge, by `endpoint`: a model circuit breaker's state in this worker (0 closed, 1 half-open, 2 open). */
export const MODEL_CIRCUIT_STATE = 'subagents_model_circuit_state';

/** Counter, by `endpoint`: model calls an open circuit breaker failed at once, without a request. */
export const MODEL_CIRCUIT_REJECTIONS = 'subagents_model_circuit_rejections';

/** Counter: delegations that ended, by status and stop reason. */
export const DELEGATIONS = 'subagents_delegations';

/** Counter: lead runs that ended, by status and stop reason. */
export const LEAD_RUNS = 'subagents_lead_runs';

/** Histogram, seconds: how long an execution slot request waited for its answer (granted or refused). */
export const ADMISSION_WAIT_SECONDS = 'subagents_admission_wait_seconds';

/** Counter: guardrail decisions on tool calls, by `decision` (allow, deny, ask), `tool` and `policy`. */
export const GUARDRAIL_DECISIONS_METRIC = 'subagents_guardrail_decisions';
/**
 * Histogram, seconds: how long a tool call held for approval (a guardrail's `ask`) waited, by `outcome`
 * (approved, denied, timed_out, cancelled) and `tool`.
 */
export const APPROVAL_WAIT_SECONDS = 'subagents_approval_wait_seconds';

/** The label value of an absent stop reason (a label must have a value to be filtered on). */
export const NO_STOP_REASON = 'none';
