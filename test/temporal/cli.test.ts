/**
 * The `subagents` CLI end to end, each command a process of its own: a run on an OpenAI-compatible endpoint
 * (a fake one over real HTTP), a dev server with two worker processes and `run --address`, `npm start --once`,
 * and bad flags.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LeadRunResult } from '../../contracts/lead';
import { CLI, cliEnv, FAKE, runCli, startProcess, stop, writeDelegatingConfig } from '../support/cli-process';
import { tempDir } from '../support/subagent-input';

it('runs --json --provider openai against an OpenAI-compatible endpoint and prints the LeadRunResult', async () => {
  const replies = join(tempDir('fake-replies'), 'replies.json');
  writeFileSync(
    replies,
    JSON.stringify([
      {
        content: 'Delegating the count.',
        tool_calls: [
          {
            name: 'task',
            id: 'count',
            args: {
              description: 'Count the files',
              prompt: 'Count the files in the workspace.',
              subagent_type: 'general-purpose',
            },
          },
        ],
        usage: { input_tokens: 800, output_tokens: 40 },
      },
      { content: 'There are no files yet.', usage: { input_tokens: 300, output_tokens: 9 } },
      { content: 'The workspace is empty.', usage: { input_tokens: 900, output_tokens: 8 } },
    ]),
  );
  const fake = await startProcess([FAKE, '--replies', replies, '--api-key', 'sk-e2e'], process.env, /"url"/);
  try {
    const { url } = JSON.parse(fake.line) as { url: string };
    const env = cliEnv({ OPENAI_BASE_URL: url, OPENAI_API_KEY: 'sk-e2e' });
    const run = await runCli(
      [
        'run',
        '--json',
        '--provider',
        'openai',
        '--model',
        'fake-model',
        '--workspace',
        tempDir('ws'),
        'How many files?',
      ],
      env,
    );
    expect(run.stderr).not.toMatch(/unexpected error/);
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as LeadRunResult;
    expect(result).toMatchObject({ status: 'completed', final_output: 'The workspace is empty.', turns: 2 });
    expect(result.ledger.map((e) => [e.id, e.subagent_type, e.status, e.result_brief])).toEqual([
      ['count', 'general-purpose', 'completed', 'There are no files yet.'],
    ]);
    expect(result.token_usage.total).toEqual({ input_tokens: 2000, output_tokens: 57, total_tokens: 2057 });
    const requests = (await (await fetch(url.replace(/\/v1$/, '/_fake/requests'))).json()) as unknown[];
    expect(requests).toHaveLength(3);
  } finally {
    await stop(fake.child);
  }
});

it('completes a run with `run --address` on a `dev-server` served by two `worker` processes', async () => {
  const env = cliEnv();
  const dir = tempDir('cli-cluster');
  const config = writeDelegatingConfig(dir, ['a', 'b', 'c']);

  const server = await startProcess(
    [CLI, 'dev-server', '--db-filename', join(dir, 'temporal.db')],
    env,
    /"address"/,
  );
  const processes = [server.child];
  try {
    const { address } = JSON.parse(server.line) as { address: string };
    for (let i = 0; i < 2; i++) {
      processes.push((await startProcess([CLI, 'worker', '--address', address], env, /worker ready/)).child);
    }
    const run = await runCli(
      ['run', '--address', address, '--config', config, '--json', 'Do the three parts.'],
      env,
    );
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as LeadRunResult;
    expect(result.status).toBe('completed');
    expect(result.ledger.map((e) => e.status)).toEqual(['completed', 'completed', 'completed']);

    const ledger = await runCli(['ledger', result.run_id, '--address', address, '--json'], env);
    expect((JSON.parse(ledger.stdout) as { ledger: unknown[] }).ledger).toHaveLength(3);
    const events = await runCli(['events', result.run_id, '--address', address, '--json'], env);
    const types = events.stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { type: string }).type);
    expect(types.filter((t) => t === 'task_started')).toHaveLength(3);
    expect(types.filter((t) => t === 'task_completed')).toHaveLength(3);
    const status = await runCli(['status', result.run_id], env);
    expect(status.stdout).toMatch(/: completed, 2 lead turns; delegations: 3 completed/);
  } finally {
    for (const child of processes.reverse()) await stop(child);
  }
});

it('`npm start -- --once` runs the demo, prints the completed tree and the Web UI URL, and exits 0', async () => {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const run = await runCli(['start', '--', '--once', '--workspace', tempDir('demo-ws')], cliEnv(), {
    command: npm,
    base: [],
  });
  // On a failure, what it said: the exit code alone tells nothing.
  expect({ code: run.code, stderr: run.code === 0 ? '' : run.stderr.slice(-3000) }).toEqual({
    code: 0,
    stderr: '',
  });
  expect(run.stdout).toMatch(/^lead {2}completed · 2 turns/m);
  expect(run.stdout).toMatch(/├─ ✓ general-purpose {2}Find items to reorder/);
  expect(run.stdout).toMatch(/└─ ✓ general-purpose {2}Rank suppliers by lead time/);
  expect(run.stdout).toMatch(/bash {13}Count incidents per warehouse/);
  expect(run.stdout).toMatch(/Web UI +http:\/\/127\.0\.0\.1:\d+\/namespaces\/default\/workflows\/run-/);
  expect(run.stdout).toContain('Warehouse review');
});

describe('bad input', () => {
  const cases: [string, string[], number, RegExp][] = [
    [
      'a delegation total out of range',
      ['run', '--max-total', '80', 'x'],
      2,
      /^subagents: --max-total: 80 is out of range \(1–50\)$/,
    ],
    [
      'an unknown provider',
      ['run', '--provider', 'gpt', 'x'],
      2,
      /^subagents: --provider: "gpt" is not an accepted value \(scripted, openai, anthropic, google, bedrock, azure_openai, ollama\)$/,
    ],
    ['a run without a prompt', ['run'], 2, /^subagents: run: give the prompt as one argument/],
    ['an unknown flag', ['run', '--turbo', 'x'], 2, /^subagents: Unknown option '--turbo'/],
    ['an unknown command', ['launch'], 2, /^subagents: unknown command "launch"/],
    [
      'a malformed address',
      ['run', '--address', 'nowhere', 'x'],
      2,
      /^subagents: --address: "nowhere" is not host:port/,
    ],
    [
      'an address with a port out of range',
      ['run', '--address', '127.0.0.1:99999', 'x'],
      2,
      /^subagents: --address: "127\.0\.0\.1:99999" is not host:port \(e\.g\. localhost:7233, port 1–65535\)$/,
    ],
    [
      'a missing config file',
      ['run', '--config', '/nonexistent/config.yaml', 'x'],
      2,
      /^subagents: config file \/nonexistent\/config\.yaml does not exist$/,
    ],
    [
      'an unreachable server',
      ['run', '--address', '127.0.0.1:1', 'x'],
      1,
      /^subagents: cannot reach the Temporal server at 127\.0\.0\.1:1/,
    ],
  ];
  it.each(cases)('%s: one line on stderr, a non-zero exit', async (_name, args, code, line) => {
    const run = await runCli(args, cliEnv());
    expect(run.code).toBe(code);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(line);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});
