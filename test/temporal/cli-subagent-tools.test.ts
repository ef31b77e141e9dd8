/**
 * A config whose tool loads are wrong stops `subagents run` and `subagents worker` as they read it: exit code 2,
 * the file and the key named on stderr, and no model called (the model is a fake endpoint that counts calls).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { testAddress, testNamespace } from '../harness/temporal';
import { cliEnv, runCli } from '../support/cli-process';
import { FakeOpenAI } from '../support/fake-openai';
import { tempDir } from '../support/subagent-input';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await FakeOpenAI.start({ respond: () => ({ content: 'Should never be asked.' }) });
});
afterAll(() => fake.close());

const PROVIDERS = { local_acp: { type: 'acp', command: 'node', args: ['agent.mjs'], env: {} } };

const cases: [string, unknown[], string][] = [
  [
    'a duplicate tool_name',
    [
      { tool_name: 'subagent_acp', provider: 'local_acp' },
      { tool_name: 'subagent_acp', provider: 'fork' },
    ],
    'subagent_tools[1].tool_name: "subagent_acp" is listed twice (subagent_tools[0] has it; each load needs a tool name of its own)',
  ],
  [
    'task as a tool_name',
    [{ tool_name: 'task', provider: 'fork' }],
    'subagent_tools[0].tool_name: "task" is the default load',
  ],
  [
    'a capability the provider lacks',
    [
      { tool_name: 'subagent_fork', provider: 'fork' },
      { tool_name: 'subagent_acp', provider: 'local_acp', tool_filter: { deny: ['bash'] } },
    ],
    'subagent_tools[1].tool_filter: provider local_acp (acp) cannot filter tools (its capabilities: persona)',
  ],
  [
    'a bad max_depth',
    [{ tool_name: 'subagent_spawn', provider: 'spawn', max_depth: -2 }],
    'subagent_tools[0].max_depth: -2 is out of range (0 or more)',
  ],
];

describe.each(['run', 'worker'])('subagents %s refuses a config whose tool loads are wrong', (command) => {
  it.each(cases)('%s', async (_case, tools, problem) => {
    const dir = tempDir('cli-subagent-tools');
    const config = join(dir, 'config.yaml');
    writeFileSync(
      config,
      stringify({ ...fake.modelsConfig(), subagent_providers: PROVIDERS, subagent_tools: tools }),
    );
    const args =
      command === 'run'
        ? ['run', '--config', config, '--workspace', join(dir, 'ws'), 'Do the work.']
        : ['worker', '--config', config];
    const finished = await runCli(
      [...args, '--address', testAddress(), '--namespace', testNamespace()],
      cliEnv(),
    );
    expect(finished.code).toBe(2);
    expect(finished.stderr).toContain(`config file ${config} has 1 problem:`);
    expect(finished.stderr).toContain(`  ${problem}`);
    expect(finished.stdout).toBe('');
    expect(fake.chatRequests).toEqual([]);
  });
});
