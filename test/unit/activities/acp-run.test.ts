/**
 * The ACP activity against a real agent process (the test agent, test/support/acp-agent.ts, written with the
 * SDK's agent side), inside the SDK's activity harness: how each stop reason ends, the permission answers, a
 * cancel, a crash, a deadline, the resumption after an interrupted attempt, and that no process outlives a run.
 */
import { join } from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { GuardrailPolicy } from '../../../contracts/guardrail-rules';
import type {
  RemoteProgress,
  RemoteSubagentInput,
  RemoteSubagentResult,
} from '../../../contracts/remote-subagent';
import { runAcpSubagent } from '../../../activities/remote/acp';
import { ACP_CONTINUE_PROMPT, ACP_INTERRUPTED_NOTE } from '../../../activities/remote/acp/run-acp-subagent';
import {
  acpTestProvider,
  agentEvents,
  eventsNamed,
  processAlive,
  processDies,
  scriptedPrompt,
  waitForAgentEvent,
} from '../../support/acp-test-agent';
import { emptyWorkspace } from '../../support/subagent-input';

type AcpInput = Parameters<typeof runAcpSubagent>[0];

interface Attempt {
  env: MockActivityEnvironment;
  beats: (RemoteProgress | undefined)[];
  run: (input: AcpInput) => Promise<RemoteSubagentResult>;
}

function attempt(heartbeatDetails?: RemoteProgress, attemptNumber = heartbeatDetails ? 2 : 1): Attempt {
  const env = new MockActivityEnvironment(
    { attempt: attemptNumber, heartbeatTimeoutMs: 3000, heartbeatDetails },
    { logger: new DefaultLogger('ERROR') },
  );
  const beats: (RemoteProgress | undefined)[] = [];
  env.on('heartbeat', (details: RemoteProgress | undefined) =>
    beats.push(details && structuredClone(details)),
  );
  return {
    env,
    beats,
    run: (input) => env.run<[AcpInput], RemoteSubagentResult, typeof runAcpSubagent>(runAcpSubagent, input),
  };
}

/** A delegation to the test agent, with its own workspace and log. */
function delegation(
  label: string,
  prompt: string,
  knobs: Record<string, string> = {},
  more: Partial<Omit<RemoteSubagentInput, 'provider'>> = {},
): { input: AcpInput; logFile: string; workspace: string } {
  const { dir, workspace } = emptyWorkspace(`acp-${label}`);
  const logFile = join(dir, 'agent.log');
  return {
    input: {
      provider: acpTestProvider(logFile, knobs),
      delegation_id: `lead-1/task/${label}`,
      prompt,
      workspace,
      deadline_ms: Date.now() + 60_000,
      ...more,
    },
    logFile,
    workspace,
  };
}

/**
 * Every process the agent logged is gone: the agent itself at once (the activity reaped it), any child it
 * started once the SIGKILL its group got takes effect.
 */
async function expectNoProcessLeft(logFile: string): Promise<void> {
  for (const { pid } of eventsNamed(logFile, 'spawned')) expect(processAlive(pid)).toBe(false);
  expect(eventsNamed(logFile, 'spawned').length).toBeGreaterThan(0);
  for (const { child_pid: pid } of eventsNamed(logFile, 'child'))
    expect(await processDies(pid as number)).toBe(true);
}

it('ends completed on end_turn with the streamed text, the tool calls as steps and the reported usage', async () => {
  const { input, logFile, workspace } = delegation(
    'end-turn',
    scriptedPrompt('Summarize the repo.', [
      { say: 'Looking at the files.' },
      {
        tool: {
          id: 'read-1',
          title: 'Read README.md',
          kind: 'read',
          input: { path: 'README.md' },
          output: '# Repo',
        },
      },
      { say: 'The repo is small.' },
      { usage: { inputTokens: 120, outputTokens: 30, totalTokens: 150 } },
    ]),
  );
  const { run, beats } = attempt();
  const result = await run(input);

  expect(result).toMatchObject({
    end: 'completed',
    text: 'Looking at the files.\n\nThe repo is small.',
    usage: { input_tokens: 120, output_tokens: 30, total_tokens: 150 },
  });
  expect(result.error).toBeUndefined();
  expect(result.resumed).toBeUndefined();
  expect(result.messages).toEqual([
    {
      role: 'assistant',
      content: 'Looking at the files.',
      tool_calls: [{ id: 'read-1', name: 'Read README.md', args: '{"path":"README.md"}' }],
    },
    { role: 'tool', tool_call_id: 'read-1', name: 'Read README.md', content: '# Repo', is_error: false },
    { role: 'assistant', content: 'The repo is small.' },
  ]);
  const session = eventsNamed(logFile, 'session_new')[0];
  expect(session.cwd).toBe(workspace);
  expect(eventsNamed(logFile, 'spawned')[0].cwd).toBe(workspace);
  expect(result.remote_task_id).toBe(session.session_id);
  // The session was heartbeated as prompted: a later attempt resumes it instead of sending the prompt again.
  expect(beats).toContainEqual(
    expect.objectContaining({ session_id: session.session_id, prompt_sent: true }),
  );
  expect(eventsNamed(logFile, 'prompt')).toHaveLength(1);
  await expectNoProcessLeft(logFile);
});

it.each([
  ['max_tokens', /token limit \(max_tokens\)/],
  ['max_turn_requests', /model requests for one turn \(max_turn_requests\)/],
  ['refusal', /refused to go on \(refusal\)/],
  ['cancelled', /cancelled the turn \(cancelled\)/],
] as const)('ends %s, not completed, with the partial text and an error saying so', async (stop, error) => {
  const { input, logFile } = delegation(
    stop,
    scriptedPrompt('Write it all.', [{ say: 'Part one' }, { stop }]),
  );
  const result = await attempt().run(input);

  expect(result.end).toBe(stop);
  expect(result.text).toBe('Part one');
  expect(result.error).toMatch(error);
  expect(result.error).toMatch(/^ACP agent test_acp: /);
  await expectNoProcessLeft(logFile);
});

describe('permission requests', () => {
  const rules = (decision: 'allow' | 'deny' | 'ask'): GuardrailPolicy => ({
    provider: 'rules',
    rules: [
      { tool: 'execute', args: { command: '^npm test$' }, decision, reason: `the rule says ${decision}` },
    ],
    fail_closed: true,
    unattended: 'deny',
  });
  const guarded = scriptedPrompt('Run the tests.', [
    { permission: { id: 'run-1', title: 'Run npm test', kind: 'execute', input: { command: 'npm test' } } },
  ]);

  it('are allowed when the rules policy allows the call', async () => {
    const { input, logFile } = delegation('permit', guarded, {}, { guardrail_policy: rules('allow') });
    const result = await attempt().run(input);

    expect(eventsNamed(logFile, 'permission').map((entry) => entry.outcome)).toEqual(['allow']);
    expect(result.end).toBe('completed');
    expect(result.messages).toContainEqual({
      role: 'tool',
      tool_call_id: 'run-1',
      name: 'permission',
      content: expect.stringMatching(
        /^allowed execute "Run npm test": the rule says allow \[rules\[0\]\]; answered "Allow once"$/,
      ),
      is_error: false,
    });
    expect(result.messages).toContainEqual(
      expect.objectContaining({ tool_call_id: 'run-1', name: 'Run npm test', is_error: false }),
    );
  });

  it.each([
    ['no policy', undefined, /no guardrail policy applies/],
    ['a deny rule', rules('deny'), /the rule says deny/],
    ['an ask rule (nobody can be asked)', rules('ask'), /nobody can be asked from inside the ACP activity/],
  ])('are refused under %s', async (_label, policy, reason) => {
    const { input, logFile } = delegation('refuse', guarded, {}, policy ? { guardrail_policy: policy } : {});
    const result = await attempt().run(input);

    expect(eventsNamed(logFile, 'permission').map((entry) => entry.outcome)).toEqual(['reject']);
    const step = result.messages.find((message) => message.role === 'tool' && message.name === 'permission');
    expect(step).toMatchObject({ is_error: true, content: expect.stringMatching(reason) });
    expect(step?.content).toMatch(/answered "Reject"$/);
  });
});

it('sends session/cancel when the activity is cancelled, and the agent process is gone afterwards', async () => {
  const { input, logFile } = delegation(
    'cancel',
    scriptedPrompt('Wait.', [{ say: 'Working' }, { hold: true }]),
  );
  const { env, run, beats } = attempt();
  const running = run(input);
  const prompted = await waitForAgentEvent(logFile, 'prompt');
  // Heartbeated before the prompt was sent.
  expect(beats).toContainEqual(
    expect.objectContaining({ session_id: prompted.session_id, prompt_sent: true }),
  );

  env.cancel();
  await expect(running).rejects.toBeInstanceOf(CancelledFailure);
  expect(eventsNamed(logFile, 'cancel').map((entry) => entry.session_id)).toEqual([prompted.session_id]);
  await expectNoProcessLeft(logFile);
});

it('turns a crash mid-turn into a retryable failure with the end of stderr, and leaves no process behind', async () => {
  const { input, logFile } = delegation(
    'crash',
    scriptedPrompt('Go.', [
      { spawn_child: true },
      { say: 'Halfway' },
      { crash: 'segfault in the agent, on purpose' },
    ]),
  );
  const failure = await attempt()
    .run(input)
    .then(
      () => undefined,
      (err: unknown) => err,
    );

  expect(failure).toBeInstanceOf(ApplicationFailure);
  expect((failure as ApplicationFailure).nonRetryable).toBe(false);
  expect((failure as ApplicationFailure).message).toMatch(
    /^ACP agent test_acp exited with code 3 during its turn; the end of its stderr: segfault in the agent, on purpose$/,
  );
  expect(eventsNamed(logFile, 'child')).toHaveLength(1);
  await expectNoProcessLeft(logFile);
});

it('ends timed_out at the deadline, after session/cancel, with the partial text', async () => {
  const { input, logFile } = delegation(
    'deadline',
    scriptedPrompt('Wait.', [{ say: 'Started' }, { hold: true }]),
    {},
    {
      deadline_ms: Date.now() + 5000,
    },
  );
  const result = await attempt().run(input);

  expect(result.end).toBe('timed_out');
  expect(result.text).toBe('Started');
  expect(result.error).toMatch(/time ran out during its turn \(session\/cancel was sent\)/);
  expect(eventsNamed(logFile, 'cancel')).toHaveLength(1);
  await expectNoProcessLeft(logFile);
});

describe('an attempt after an interrupted one', () => {
  const interrupted: RemoteProgress = {
    session_id: 'session-of-the-lost-worker',
    prompt_sent: true,
    updates: 4,
  };

  it('loads the session and prompts it to go on when the agent supports session/load', async () => {
    const { input, logFile } = delegation('load', 'Fix the bug.', { ACP_AGENT_LOAD_SESSION: '1' });
    const { run, beats } = attempt(interrupted);
    const result = await run(input);

    expect(result).toMatchObject({
      end: 'completed',
      resumed: 'session_loaded',
      remote_task_id: interrupted.session_id,
      text: `echo: ${ACP_CONTINUE_PROMPT}`,
    });
    expect(eventsNamed(logFile, 'session_load').map((entry) => entry.session_id)).toEqual([
      interrupted.session_id,
    ]);
    expect(eventsNamed(logFile, 'session_new')).toHaveLength(0);
    expect(eventsNamed(logFile, 'prompt').map((entry) => entry.text)).toEqual([ACP_CONTINUE_PROMPT]);
    // The loaded session's replayed history is not this turn's steps.
    expect(JSON.stringify(result.messages)).not.toContain('history of the earlier turn');
    // Its first beat kept the session to resume (a plain one would have erased it).
    expect(beats[0]).toMatchObject({ session_id: interrupted.session_id, prompt_sent: true });
  });

  it('starts a new session, its prompt saying the last attempt was interrupted, when the agent cannot load', async () => {
    const { input, logFile } = delegation('restart', 'Fix the bug.');
    const { run, beats } = attempt(interrupted);
    const result = await run(input);

    const session = eventsNamed(logFile, 'session_new')[0];
    expect(result).toMatchObject({
      end: 'completed',
      resumed: 'restarted',
      remote_task_id: session.session_id,
    });
    const prompts = eventsNamed(logFile, 'prompt').map((entry) => entry.text as string);
    expect(prompts).toEqual([`${ACP_INTERRUPTED_NOTE}\n\nFix the bug.`]);
    expect(prompts[0]).toMatch(/previous attempt .* was interrupted/);
    expect(beats.at(-1)).toMatchObject({ session_id: session.session_id, prompt_sent: true });
  });

  it('starts a new session when loading the old one fails, and says so in the steps', async () => {
    const { input, logFile } = delegation('load-fails', 'Fix the bug.', { ACP_AGENT_LOAD_FAILS: '1' });
    const result = await attempt(interrupted).run(input);

    expect(result).toMatchObject({ end: 'completed', resumed: 'restarted' });
    expect(eventsNamed(logFile, 'session_load')).toHaveLength(1);
    expect(eventsNamed(logFile, 'session_new')).toHaveLength(1);
    expect(result.messages[0]).toMatchObject({
      role: 'assistant',
      content: expect.stringMatching(/^\[acp\] could not load session session-of-the-lost-worker/),
    });
  });
});

describe('failures before the turn', () => {
  it('a command that does not exist ends failed, saying so, not retried', async () => {
    const { input } = delegation('enoent', 'Hi.');
    input.provider = { ...input.provider, command: 'no-such-acp-agent-anywhere', args: [] };
    const result = await attempt().run(input);
    expect(result).toMatchObject({
      end: 'failed',
      error: 'ACP agent test_acp: cannot start it: no-such-acp-agent-anywhere was not found on the PATH',
    });
  });

  it('an env value naming an unset variable ends failed, naming the variable and no value', async () => {
    process.env.ACP_TEST_SET_SECRET = 'sekrit-value';
    delete process.env.ACP_TEST_UNSET_VARIABLE;
    const { input, logFile } = delegation('unset', 'Hi.', {
      ACP_AGENT_PROBE: 'Bearer $ACP_TEST_SET_SECRET',
      ACP_AGENT_OTHER: '${ACP_TEST_UNSET_VARIABLE}',
    });
    const result = await attempt().run(input);
    expect(result.end).toBe('failed');
    expect(result.error).toBe(
      'ACP agent test_acp: subagent_providers.test_acp.env.ACP_AGENT_OTHER names ' +
        "$ACP_TEST_UNSET_VARIABLE, which is not set in the worker's environment",
    );
    expect(agentEvents(logFile)).toEqual([]);
  });

  it('env values are resolved from the worker environment', async () => {
    process.env.ACP_TEST_SET_SECRET = 'sekrit-value';
    const { input, logFile } = delegation('env', 'Hi.', {
      ACP_AGENT_PROBE: 'Bearer $ACP_TEST_SET_SECRET/${ACP_TEST_SET_SECRET}$$',
    });
    await attempt().run(input);
    expect(eventsNamed(logFile, 'spawned')[0].probe).toBe('Bearer sekrit-value/sekrit-value$');
  });

  it('an agent that requires authentication ends auth_required', async () => {
    const { input, logFile } = delegation('auth', 'Hi.', { ACP_AGENT_AUTH_REQUIRED: '1' });
    const result = await attempt().run(input);
    expect(result).toMatchObject({
      end: 'auth_required',
      error: expect.stringMatching(/requires authentication/),
    });
    expect(eventsNamed(logFile, 'prompt')).toHaveLength(0);
    await expectNoProcessLeft(logFile);
  });

  it('an agent of another protocol version ends failed', async () => {
    const { input } = delegation('version', 'Hi.', { ACP_AGENT_PROTOCOL_VERSION: '7' });
    const result = await attempt().run(input);
    expect(result).toMatchObject({
      end: 'failed',
      error: expect.stringMatching(/speaks ACP version 7; this worker speaks version 1/),
    });
  });

  it('an agent that exits before its turn ends failed with the end of its stderr', async () => {
    const { input } = delegation('early-exit', 'Hi.');
    input.provider = {
      ...input.provider,
      command: process.execPath,
      args: ['-e', 'console.error("bad flag --x"); process.exit(2)'],
    };
    const result = await attempt().run(input);
    expect(result).toMatchObject({
      end: 'failed',
      error: expect.stringMatching(
        /exited with code 2 before its turn \(during initialize\); the end of its stderr: bad flag --x$/,
      ),
    });
  });
});

describe('the model', () => {
  it('is chosen through the session model option when the agent offers it', async () => {
    const { input, logFile } = delegation(
      'model',
      'Hi.',
      { ACP_AGENT_CONFIG_MODELS: 'small,large' },
      { model: 'large' },
    );
    const result = await attempt().run(input);
    expect(result.end).toBe('completed');
    expect(eventsNamed(logFile, 'set_config_option')).toEqual([
      expect.objectContaining({ config_id: 'model', value: 'large' }),
    ]);
  });

  it('is left to the agent, with a note, when the agent does not offer it', async () => {
    const { input, logFile } = delegation(
      'no-model',
      'Hi.',
      { ACP_AGENT_CONFIG_MODELS: 'small' },
      { model: 'huge' },
    );
    const result = await attempt().run(input);
    expect(eventsNamed(logFile, 'set_config_option')).toHaveLength(0);
    expect(result.messages[0]).toEqual({
      role: 'assistant',
      content: '[acp] the agent offers no model huge; it runs with its own choice',
    });
  });
});

it('kills an agent that ignores its stdin closing and SIGTERM', async () => {
  const { input, logFile } = delegation('stubborn', 'Hi.', { ACP_AGENT_STUBBORN: '1' });
  const result = await attempt().run(input);
  expect(result.end).toBe('completed');
  expect(eventsNamed(logFile, 'sigterm')).toHaveLength(1);
  expect(eventsNamed(logFile, 'exit')).toHaveLength(0);
  await expectNoProcessLeft(logFile);
});
