/**
 * The workload of issue 13, shared by `bench/load.ts` and `bench/memory.ts`: a lead that delegates three
 * subagents in one response, each subagent making one tool call (`read_file`) and then answering, and the lead
 * answering from their reports. The model is the scripted one, so no provider is waited on.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LeadRunInput } from '../../contracts/lead';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { leadInput, partTaskCalls, tempDir, writeScript } from '../../test/support/subagent-input';

export const FANOUT_CHILDREN = 3;

/**
 * How a subagent of the fan-out works: `read-then-answer` (issue 13's workload: one `read_file`, then its
 * answer — three activities) or `answer` (its answer in its first model call — one activity, the shape of
 * the plain-Temporal floor's child).
 */
export type FanOutChildWork = 'read-then-answer' | 'answer';

/** The model calls, then tool calls, a subagent of each kind makes (the floor's child runs as many no-ops). */
export const CHILD_ACTIVITIES: Record<FanOutChildWork, number> = { 'read-then-answer': 3, answer: 1 };

const CHILD_TURNS: Record<FanOutChildWork, ModelScriptFileInput['scripts'][number]['turns']> = {
  'read-then-answer': [
    {
      tool_calls: [{ name: 'read_file', id: 'notes', args: { path: 'notes.md' } }],
      usage: { input_tokens: 500, output_tokens: 30 },
    },
    { content: 'Part done: {{tool_result:notes}}', usage: { input_tokens: 700, output_tokens: 40 } },
  ],
  answer: [{ content: 'Part done: three suppliers.', usage: { input_tokens: 700, output_tokens: 40 } }],
};

/** The lead delegates three parts at once; each subagent works as `childWork` says. */
function fanOutScript(childWork: FanOutChildWork): ModelScriptFileInput {
  return {
    scripts: [
      {
        agent: 'lead',
        turns: [
          {
            tool_calls: partTaskCalls(FANOUT_CHILDREN, (i) => `Read notes.md and report part ${i}.`),
            usage: { input_tokens: 900, output_tokens: 120 },
          },
          { content: 'Combined: {{tool_result}}', usage: { input_tokens: 1400, output_tokens: 80 } },
        ],
      },
      { agent: 'general-purpose', turns: CHILD_TURNS[childWork] },
    ],
  };
}

/** One input shared by every run of a benchmark (each run gets its own id and reads the same workspace). */
export function fanOutInput(label: string, childWork: FanOutChildWork = 'read-then-answer'): LeadRunInput {
  const dir = tempDir(label);
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  writeFileSync(join(workspace, 'notes.md'), 'Three suppliers, two warehouses, one open incident.\n');
  return leadInput({
    workspace,
    scriptFile: writeScript(dir, fanOutScript(childWork)),
    prompt: 'Review the notes.',
  });
}
