/**
 * The `subagents run` inputs end to end, each run a process of its own: a prompt longer than one argument
 * allows through `--prompt-file` and stdin (against a fake OpenAI-compatible endpoint that records what the
 * lead sent), and bad inputs (an alias bomb, a binary config, a file as workspace, bad prompt sources) that
 * each end in one line and exit code 2.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LeadRunResult } from '../../contracts/lead';
import { cliEnv, FAKE, runCli, startProcess, stop } from '../support/cli-process';
import type { RecordedRequest } from '../support/fake-openai';
import { tempDir } from '../support/subagent-input';

async function startFake(): Promise<{ child: ChildProcess; url: string }> {
  const { child, line } = await startProcess([FAKE], process.env, /"url"/);
  return { child, url: (JSON.parse(line) as { url: string }).url };
}

/** A prompt over the 128 KiB one argument may hold, with a marker at each end so truncation shows. */
function longPrompt(label: string): string {
  return `BEGIN-${label} ${'Summarise the workspace in one line. '.repeat(5000)}END-${label}`;
}

describe('run reads a long prompt from a file or stdin', () => {
  let fake: { child: ChildProcess; url: string };

  beforeAll(async () => {
    fake = await startFake();
  });

  afterAll(async () => {
    await stop(fake.child);
  });

  async function sentPrompts(): Promise<string[]> {
    const requests = (await (
      await fetch(fake.url.replace(/\/v1$/, '/_fake/requests'))
    ).json()) as RecordedRequest[];
    return requests.flatMap((request) =>
      (request.body?.messages ?? [])
        .filter((message) => message.role === 'user' && typeof message.content === 'string')
        .map((message) => message.content as string),
    );
  }

  const base = (): string[] => [
    'run',
    '--json',
    '--provider',
    'openai',
    '--model',
    'fake-model',
    '--workspace',
    tempDir('ws'),
  ];

  it.each([
    [
      '--prompt-file FILE',
      'file',
      (prompt: string) => {
        const file = join(tempDir('prompt'), 'task.md');
        writeFileSync(file, prompt);
        return { args: ['--prompt-file', file], stdin: undefined };
      },
    ],
    ['- with the prompt on stdin', 'dash', (prompt: string) => ({ args: ['-'], stdin: prompt })],
    ['no prompt, stdin piped', 'piped', (prompt: string) => ({ args: [], stdin: prompt })],
  ])('%s: the whole prompt reaches the lead', async (_name, label, source) => {
    const prompt = longPrompt(label);
    expect(Buffer.byteLength(prompt)).toBeGreaterThan(128 * 1024);
    const { args, stdin } = source(prompt);
    const env = cliEnv({ OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-e2e' });
    const run = await runCli([...base(), ...args], env, { stdin });
    expect(run.stderr).not.toMatch(/unexpected error/);
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as LeadRunResult).status).toBe('completed');
    expect((await sentPrompts()).some((content) => content.includes(prompt))).toBe(true);
  });
});

describe('bad run inputs end in one line and exit code 2', () => {
  const dir = tempDir('cli-inputs');
  const file = (name: string, content: string | Buffer): string => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  const laughs = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (const [from, to] of ['ab', 'bc', 'cd', 'de', 'ef', 'fg', 'gh', 'hi']) {
    laughs.push(`${to}: &${to} [${Array(9).fill(`*${from}`).join(',')}]`);
  }
  const bomb = file('bomb.yaml', `${laughs.join('\n')}\n`);
  // The first bytes of the node executable: binary, and small enough for every size cap.
  const binary = file('binary.yaml', readFileSync(process.execPath).subarray(0, 4096));
  const latin1 = file('latin1.yaml', Buffer.from('subagents:\n  max_turns: 3 # r\xe9sum\xe9\n', 'latin1'));
  const prompt = file('prompt.md', 'Count the files.');
  const emptyPrompt = file('empty.md', '  \n');
  const workspaceFile = file('not-a-folder.txt', 'x');

  const cases: Array<[string, string[], string | undefined, RegExp]> = [
    [
      'an alias bomb config',
      ['run', '--config', bomb, 'x'],
      undefined,
      /^subagents: config file .*bomb\.yaml expands its YAML aliases too far/,
    ],
    [
      'a binary config',
      ['run', '--config', binary, 'x'],
      undefined,
      /^subagents: config file .*binary\.yaml is not a YAML text file/,
    ],
    [
      'a latin-1 config',
      ['run', '--config', latin1, 'x'],
      undefined,
      /^subagents: config file .*latin1\.yaml is not a YAML text file/,
    ],
    ['a folder as config', ['run', '--config', dir, 'x'], undefined, /is a folder, not a file$/],
    [
      'a file as workspace',
      ['run', '--workspace', workspaceFile, 'x'],
      undefined,
      /^subagents: --workspace: ".*not-a-folder\.txt" is a file, not a folder/,
    ],
    [
      'a missing prompt file',
      ['run', '--prompt-file', join(dir, 'nope.md')],
      undefined,
      /^subagents: --prompt-file: ".*nope\.md" does not exist$/,
    ],
    [
      'a binary prompt file',
      ['run', '--prompt-file', binary],
      undefined,
      /^subagents: --prompt-file: .* is not UTF-8 text/,
    ],
    ['an empty prompt file', ['run', '--prompt-file', emptyPrompt], undefined, /is empty/],
    [
      'a prompt argument and --prompt-file',
      ['run', '--prompt-file', prompt, 'x'],
      undefined,
      /^subagents: run: give the prompt one way only/,
    ],
    ['an empty stdin', ['run', '-'], '', /^subagents: the prompt on stdin is empty/],
    [
      'no prompt and nothing piped in',
      ['run'],
      undefined,
      /^subagents: run: give the prompt as one argument, in quotes: .* \(stdin is empty\)$/,
    ],
  ];
  it.each(cases)('%s', async (_name, args, stdin, line) => {
    const run = await runCli(args, cliEnv(), { stdin });
    expect(run.code).toBe(2);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(line);
    expect(run.stderr).not.toMatch(/unexpected error|\n\s+at /);
  });
});
