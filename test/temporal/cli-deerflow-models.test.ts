/**
 * A DeerFlow `config.yaml` as DeerFlow's users have it, run as is: its model named by class path
 * (`use: langchain_anthropic:ChatAnthropic`, `api_key: $ANTHROPIC_API_KEY`, `base_url`), its own keys and
 * sections beside ours, chosen with `--model claude` and no `--provider`. The CLI runs as a process of its own
 * (its own worker and dev server) against a fake Anthropic Messages API that checks the key.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LeadRunResult } from '../../contracts/lead';
import { cliEnv, runCli } from '../support/cli-process';
import { FakeAnthropic, type AnthropicRequest } from '../support/fake-anthropic';
import type { FakeRequestView } from '../support/fake-model-server';
import { tempDir } from '../support/subagent-input';

const KEY = 'sk-ant-e2e-key';

function deerflowConfig(dir: string, baseUrl: string): string {
  const file = join(dir, 'config.yaml');
  writeFileSync(
    file,
    `config_version: 33
log_level: info
token_usage:
  enabled: true
models:
  - name: gpt-4
    display_name: GPT-4
    use: langchain_openai:ChatOpenAI
    model: gpt-4
    api_key: $OPENAI_API_KEY
    request_timeout: 600.0
    max_retries: 2
    max_tokens: 4096
    temperature: 0.7
    supports_vision: true
  - name: claude
    display_name: Claude Sonnet 4.5
    use: langchain_anthropic:ChatAnthropic
    model: claude-sonnet-4-5
    api_key: $ANTHROPIC_API_KEY
    base_url: ${baseUrl}
    default_request_timeout: 600.0
    max_retries: 2
    max_tokens: 16000
    context_window: 200000
    supports_vision: true
    supports_thinking: true
    when_thinking_enabled:
      thinking:
        type: enabled
        budget_tokens: 4096
tool_groups:
  - name: file:read
tools:
  - name: ls
    group: file:read
    use: deerflow.sandbox.tools:ls_tool
subagents:
  enabled: true
  timeout_seconds: 600
`,
  );
  return file;
}

it('runs a DeerFlow config naming langchain_anthropic:ChatAnthropic as is, with --model claude', async () => {
  const fake = await FakeAnthropic.start({
    api_key: KEY,
    respond: (_body, _index, view: FakeRequestView) => {
      if (!view.tools.includes('task')) return { content: `Part done: ${view.last_user_text}` };
      if (view.tool_results.length === 0) {
        return {
          tool_calls: [
            {
              name: 'task',
              id: 'toolu_part',
              args: {
                description: 'Survey the repo',
                prompt: 'Survey the repository.',
                subagent_type: 'general-purpose',
              },
            },
          ],
          usage: { input_tokens: 3000, output_tokens: 40, cache_write_tokens: 2500 },
        };
      }
      return {
        content: 'All surveyed.',
        usage: { input_tokens: 3200, output_tokens: 20, cache_read_tokens: 2500 },
      };
    },
  });
  try {
    const dir = tempDir('deerflow-models');
    const config = deerflowConfig(dir, fake.origin);
    const env = cliEnv({ ANTHROPIC_API_KEY: KEY, OPENAI_API_KEY: 'sk-unused' });
    const run = await runCli(
      [
        'run',
        '--json',
        '--config',
        config,
        '--model',
        'claude',
        '--workspace',
        join(dir, 'ws'),
        'Survey the repository.',
      ],
      env,
    );
    expect(run.stderr).not.toMatch(/unexpected error/);
    expect(run.code).toBe(0);
    // DeerFlow's own keys and sections are accepted with a warning, never refused.
    expect(run.stderr).toMatch(/ignoring DeerFlow keys this project does not use: .*supports_thinking/);
    const result = JSON.parse(run.stdout) as LeadRunResult;
    expect(result).toMatchObject({ status: 'completed', final_output: 'All surveyed.' });
    expect(result.ledger.map((entry) => [entry.id, entry.status])).toEqual([['toolu_part', 'completed']]);
    expect(result.token_usage.lead).toMatchObject({ cache_read_tokens: 2500, cache_write_tokens: 2500 });

    const requests = fake.chatRecords;
    expect(requests).toHaveLength(3);
    for (const request of requests) {
      expect(request.headers['x-api-key']).toBe(KEY);
      const body = request.body as AnthropicRequest;
      expect(body).toMatchObject({ model: 'claude-sonnet-4-5', max_tokens: 16000, stream: true });
      // when_thinking_enabled is DeerFlow's toggle, not a setting: no thinking unless `thinking:` says so.
      expect(body.thinking).toBeUndefined();
      expect(JSON.stringify(body.system)).toContain('"cache_control":{"type":"ephemeral"}');
    }
  } finally {
    await fake.close();
  }
});
