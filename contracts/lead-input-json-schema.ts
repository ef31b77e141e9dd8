/**
 * The JSON Schema of a lead run's input, generated from its zod schemas (contracts/input-schemas.ts), for
 * clients in other languages: `subagents schema lead-input`. Not imported by workflows.
 */
import { z } from 'zod';
import { buildInputSchemas } from './input-schemas';

/**
 * The JSON Schema of what `leadRunWorkflow` accepts as its one argument: the minimal form or the full input
 * (as a client sends it, defaults optional).
 */
export function leadRunInputJsonSchema(): Record<string, unknown> {
  const minimal = z
    .strictObject({
      prompt: z.string().min(1).describe('The task; the worker fills everything else from its config.'),
      run_id: z.string().min(1).optional().describe('The run id (default: the workflow id).'),
    })
    .describe('The minimal input: a prompt alone, for clients without the config.');
  const full = buildInputSchemas().documentedLeadRun.describe(
    'The full input, as `subagents run` builds it from a config.',
  );
  const schema = z.toJSONSchema(z.union([minimal, full]), { unrepresentable: 'any', io: 'input' });
  return {
    ...schema,
    title: 'LeadRunInput',
    description:
      'The argument of the leadRunWorkflow workflow type (JSON, snake_case). Either {"prompt": "…"} alone, ' +
      'filled from the worker’s config, or the full input.',
  };
}
