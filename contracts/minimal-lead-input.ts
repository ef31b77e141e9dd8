/**
 * A lead run started by any Temporal client (the Temporal CLI, another language's SDK, the Web UI) with only
 * its prompt: `{"prompt": "…"}`, optionally with a `run_id`. The worker fills the rest from its config, as our
 * own client does (contracts/config/lead-input.ts), in a local activity recorded in the run's history.
 * The JSON Schema clients in other languages validate against: contracts/lead-input-json-schema.ts.
 */
import type { LeadRunInput } from './lead';

/** What a starter may send instead of the full input. */
export interface MinimalLeadRunInput {
  prompt: string;
  run_id?: string;
}

const MINIMAL_KEYS: ReadonlySet<string> = new Set(['prompt', 'run_id']);

/** Whether `input` is the minimal form: a prompt (and a run id) and nothing else a full input carries. */
export function isMinimalLeadRunInput(input: unknown): input is MinimalLeadRunInput {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return false;
  const record = input as Record<string, unknown>;
  return (
    typeof record.prompt === 'string' &&
    (record.run_id === undefined || typeof record.run_id === 'string') &&
    Object.keys(record).every((key) => MINIMAL_KEYS.has(key))
  );
}

/** What the worker's filling activity is asked: the prompt and the run id it settled on. */
export interface LeadInputRequest {
  prompt: string;
  run_id: string;
}

/** The full input from the worker's config; undefined where a worker has no config to fill it from. */
export type LeadInputFiller = (request: LeadInputRequest) => LeadRunInput;
