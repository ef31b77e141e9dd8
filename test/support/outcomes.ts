/**
 * What the outcome tests share: a lead whose three delegations end completed, capped and failed, and the
 * headless browser they check pages with (Debian's chromium through playwright-core; `.ci/run` installs it).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LeadRunInput } from '../../contracts/lead';
import { leadInput, tempDir, writeScript } from './subagent-input';

export const usage = { input_tokens: 400, output_tokens: 100 };

const task = (id: string, type: string, description = `Part ${id}`) => ({
  name: 'task',
  id,
  args: { description, prompt: `Work on part ${id}.`, subagent_type: type },
});
const custom = (description: string) => ({
  description,
  system_prompt: 'You help.',
  tools: { allow: ['ls'] },
});

export interface ThreeOutcomesOptions {
  /** The completed delegation's description and final answer (text a model could send). */
  okDescription?: string;
  okAnswer?: string;
  /** How long the completed delegation's second turn takes (its current details can be read meanwhile). */
  okDelayMs?: number;
}

/**
 * A lead whose three delegations end `ok` completed (one `ls`, then its answer), `capped` completed with
 * `token_capped` and `broken` failed (a provider's 400); 500 tokens a model call.
 */
export function threeOutcomesInput(label: string, options: ThreeOutcomesOptions = {}): LeadRunInput {
  const dir = tempDir(label);
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const ls = { name: 'ls', args: { path: '.' } };
  return leadInput({
    workspace,
    scriptFile: writeScript(dir, {
      scripts: [
        {
          agent: 'lead',
          turns: [
            {
              tool_calls: [
                task('ok', 'general-purpose', options.okDescription),
                task('capped', 'capper'),
                task('broken', 'breaker'),
              ],
              usage,
            },
            { content: 'Combined.', usage },
          ],
        },
        {
          agent: 'general-purpose',
          turns: [
            { content: 'Looking.', tool_calls: [ls], usage },
            { content: options.okAnswer ?? 'Part done.', usage, delay_ms: options.okDelayMs ?? 0 },
          ],
        },
        {
          agent: 'capper',
          repeat_last: true,
          turns: [{ content: 'Still looking.', tool_calls: [ls], usage }],
        },
        { agent: 'breaker', turns: [{ error: { status: 400, message: 'bad request' } }] },
      ],
    }),
    config: {
      subagent_runtime: { max_running: 3 },
      subagents: {
        custom_agents: {
          capper: { ...custom('Runs out of tokens.'), token_budget: { max_tokens: 1200 } },
          breaker: custom('Meets a provider error.'),
        },
      },
    },
  });
}

export const CHROMIUM = process.env.SUBAGENTS_CHROMIUM ?? '/usr/bin/chromium';

/**
 * `it`, or `it.skip` where there is no Chromium (said once on stderr); SUBAGENTS_REQUIRE_BROWSER=1 (CI) turns
 * that skip into a failure.
 */
export function itInBrowser(label: string): jest.It {
  const missing = existsSync(CHROMIUM) ? undefined : `no Chromium at ${CHROMIUM}`;
  if (missing === undefined || process.env.SUBAGENTS_REQUIRE_BROWSER === '1') return it;
  process.stderr.write(`[${label}] browser checks SKIPPED, ${missing} (apt-get install chromium)\n`);
  return it.skip;
}

/** The browser's flags: headless, no sandbox of its own (root in CI), nothing fetched in the background. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
];

/** Where screenshots go (a CI artifact): TEST_ARTIFACTS_DIR, or a folder in the system's temp. */
export function artifactsDir(): string {
  const dir = process.env.TEST_ARTIFACTS_DIR ?? join(tmpdir(), 'durable-subagents-test-artifacts');
  mkdirSync(dir, { recursive: true });
  return dir;
}
