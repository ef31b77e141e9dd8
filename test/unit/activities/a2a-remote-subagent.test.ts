/**
 * The A2A remote subagent activity against a real A2A agent over HTTP (the SDK's server side, scripted:
 * test/support/a2a-agent.ts), inside the SDK's activity test harness: how each remote end maps, the answer to
 * a question going back to the same task, the remote task cancelled with the activity, and an attempt after an
 * interrupted one re-attaching to the task instead of sending the prompt again.
 */
import { EventEmitter } from 'node:events';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Info } from '@temporalio/activity';
import { ActivityCancellationDetails, ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type {
  A2AProviderSettings,
  RemoteProgress,
  RemoteSubagentInput,
  RemoteSubagentResult,
} from '../../../contracts/remote-subagent';
import { probeA2AProvider, runA2ASubagent } from '../../../activities/remote/a2a';
import { A2A_UNAVAILABLE_ERROR_TYPE } from '../../../activities/remote/a2a/errors';
import { promptMessageId } from '../../../activities/remote/a2a/identity';
import { A2AAgent, type A2AAgentOptions } from '../../support/a2a-agent';

// The A2A SDK's CommonJS build requires `jose` (an ES module, for agent-card signatures, unused here): a worker
// process loads it natively, jest's module registry cannot before Node 24.9. Hoisted above the imports.
jest.mock('jose', () => ({}));

type A2AInput = RemoteSubagentInput & { provider: A2AProviderSettings };

const agents: A2AAgent[] = [];
const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.close()));
  await Promise.all(
    servers.splice(0).map((server) => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    }),
  );
});

async function startAgent(options: A2AAgentOptions = {}): Promise<A2AAgent> {
  const agent = await A2AAgent.start(options);
  agents.push(agent);
  return agent;
}

/** A plain HTTP server answering every request with `answer` (for what the double does not do). */
async function startServer(answer: http.RequestListener): Promise<string> {
  const server = http.createServer(answer);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

let delegations = 0;

function inputFor(url: string, prompt: string, more: Partial<A2AInput> = {}): A2AInput {
  delegations += 1;
  return {
    provider: { type: 'a2a', name: 'team_a2a', url },
    delegation_id: `lead-a2a/task/call_${delegations}`,
    prompt,
    workspace: '/tmp',
    deadline_ms: Date.now() + 60_000,
    ...more,
  };
}

/** One attempt of the activity in the harness, with its heartbeats observed. */
function attempt(info: Partial<Info> = {}) {
  const env = new MockActivityEnvironment(
    { attempt: 1, heartbeatTimeoutMs: 3_000, scheduledTimestampMs: Date.now(), ...info },
    { logger: new DefaultLogger('ERROR') },
  );
  const beats = new EventEmitter();
  let last: RemoteProgress | undefined;
  env.on('heartbeat', (details: RemoteProgress | undefined) => {
    if (details === undefined) return;
    last = structuredClone(details);
    beats.emit('beat');
  });
  return {
    env,
    run: (input: A2AInput) =>
      env.run<[A2AInput], RemoteSubagentResult, typeof runA2ASubagent>(runA2ASubagent, input),
    /** Resolves with the first heartbeat (the last one, or a later one) for which `holds` is true. */
    beat: (holds: (progress: RemoteProgress) => boolean) =>
      new Promise<RemoteProgress>((resolve) => {
        const check = (): void => {
          if (last === undefined || !holds(last)) return;
          beats.off('beat', check);
          resolve(last);
        };
        beats.on('beat', check);
        check();
      }),
  };
}

const HOLD = { keyword: 'slow', behaviour: { kind: 'hold', text: 'finished after the hold' } } as const;
const shutdown = () => new ActivityCancellationDetails({ workerShutdown: true });

describe.each([
  ['JSON-RPC, streaming', { streaming: true, transport: 'JSONRPC' }],
  ['JSON-RPC, polling', { streaming: false, transport: 'JSONRPC' }],
  ['HTTP+JSON, streaming', { streaming: true, transport: 'HTTP+JSON' }],
] as const)('over %s', (_name, agentOptions) => {
  it('completes with the artifact text, the reported usage and the progress messages', async () => {
    const usage = { input_tokens: 120, output_tokens: 30 };
    const agent = await startAgent({
      ...agentOptions,
      script: [
        {
          keyword: 'sum',
          behaviour: { kind: 'complete', text: '42', usage, progress: ['reading', 'adding'] },
        },
      ],
    });
    const input = inputFor(agent.url, 'sum the numbers', { model: 'team-model-large' });
    const result = await attempt().run(input);

    expect(result).toEqual({
      end: 'completed',
      text: '42',
      remote_task_id: expect.any(String),
      context_id: expect.any(String),
      usage: { ...usage, total_tokens: 150 },
      messages: [
        { role: 'assistant', content: 'reading' },
        { role: 'assistant', content: 'adding' },
      ],
    });
    const stats = agent.stats();
    expect(stats.messages).toEqual([
      {
        message_id: promptMessageId(input.delegation_id),
        task_id: result.remote_task_id,
        context_id: result.context_id,
        text: 'sum the numbers',
        metadata: { model: 'team-model-large' },
      },
    ]);
    expect(stats.tasks[result.remote_task_id ?? '']?.state).toBe('completed');
  });

  it('sends the answer to a question to the same task, which then completes', async () => {
    const agent = await startAgent({
      ...agentOptions,
      script: [{ keyword: 'which', behaviour: { kind: 'input_required', question: 'Which branch?' } }],
    });
    const input = inputFor(agent.url, 'merge which branch');
    const asked = await attempt().run(input);
    expect(asked).toMatchObject({ end: 'input_required', question: 'Which branch?' });
    expect(asked.remote_task_id).toEqual(expect.any(String));

    const answered = await attempt().run({
      ...input,
      answer: { remote_task_id: asked.remote_task_id ?? '', context_id: asked.context_id, text: 'main' },
    });
    expect(answered).toMatchObject({
      end: 'completed',
      text: 'answer received: main',
      remote_task_id: asked.remote_task_id,
      context_id: asked.context_id,
    });
    const stats = agent.stats();
    expect(stats.messages.map((m) => [m.text, m.task_id])).toEqual([
      ['merge which branch', asked.remote_task_id],
      ['main', asked.remote_task_id],
    ]);
    expect(Object.keys(stats.tasks)).toEqual([asked.remote_task_id]);
  });

  it('re-attaches after an interrupted attempt: the prompt arrives once, the task completes', async () => {
    const usage = { input_tokens: 7, output_tokens: 3, total_tokens: 10 };
    const agent = await startAgent({
      ...agentOptions,
      script: [{ ...HOLD, behaviour: { ...HOLD.behaviour, usage } }],
    });
    const input = inputFor(agent.url, 'slow work');

    const first = attempt({ attempt: 1 });
    const interrupted = first.run(input);
    await agent.waitFor((s) => s.holding.length === 1);
    const progress = await first.beat((p) => p.remote_task_id !== undefined);
    expect(progress).toMatchObject({ prompt_sent: true, context_id: expect.any(String) });
    // The worker goes away: its activities are cancelled without the workflow asking.
    first.env.cancel('WORKER_SHUTDOWN', shutdown());
    await expect(interrupted).rejects.toBeInstanceOf(CancelledFailure);
    expect(agent.stats().cancels_total).toBe(0);

    const second = attempt({ attempt: 2, heartbeatDetails: progress });
    const resumed = second.run(input);
    // The second attempt has read the task (its count of updates grew) before the agent finishes it.
    await second.beat((p) => p.updates > progress.updates);
    agent.release();
    const result = await resumed;

    expect(result).toMatchObject({
      end: 'completed',
      text: 'finished after the hold',
      remote_task_id: progress.remote_task_id,
      usage,
      resumed: 'reattached',
    });
    const stats = agent.stats();
    expect(stats.messages_total).toBe(1);
    expect(stats.messages_by_id).toEqual({ [promptMessageId(input.delegation_id)]: 1 });
    expect(stats.cancels_total).toBe(0);
  });
});

describe('remote ends', () => {
  it.each([
    ['fail', 'failed', 'the remote agent reported the task failed: disk full'],
    ['reject', 'rejected', 'the remote agent rejected the task: disk full'],
    ['auth_required', 'auth_required', 'the remote agent needs authentication to go on: disk full'],
  ] as const)('a task that ends %s is %s, with the reason the agent gave', async (kind, end, error) => {
    const agent = await startAgent({ queue: [{ kind, message: 'disk full' }] });
    const result = await attempt().run(inputFor(agent.url, 'copy the files'));
    expect(result).toMatchObject({ end, error, remote_task_id: expect.any(String) });
    expect(result.text).toBeUndefined();
  });

  it('a message-only reply (no task) is completed with its text and usage', async () => {
    const usage = { input_tokens: 4, output_tokens: 2, total_tokens: 6 };
    const agent = await startAgent({ queue: [{ kind: 'message', text: 'hello there', usage }] });
    const result = await attempt().run(inputFor(agent.url, 'say hello'));
    expect(result).toEqual({
      end: 'completed',
      text: 'hello there',
      context_id: expect.any(String),
      usage,
      messages: [],
    });
  });

  it("a completed task without artifacts answers with the agent's last message; absent usage stays absent", async () => {
    const agent = await startAgent({ queue: [{ kind: 'complete', text: 'all good', artifact: false }] });
    const result = await attempt().run(inputFor(agent.url, 'check'));
    expect(result).toMatchObject({ end: 'completed', text: 'all good' });
    expect(result).not.toHaveProperty('usage');
  });

  it('finds the card at the URL given, or at the root when the endpoint is below it', async () => {
    const agent = await startAgent();
    for (const url of [agent.cardUrl, `${agent.url}/agents/team/`]) {
      await expect(attempt().run(inputFor(url, 'ping'))).resolves.toMatchObject({
        end: 'completed',
        text: 'done: ping',
      });
    }
  });
});

describe('cancellation and the deadline', () => {
  it('cancelling the activity cancels the remote task, then the activity ends cancelled', async () => {
    const agent = await startAgent({ script: [HOLD] });
    const run = attempt();
    const running = run.run(inputFor(agent.url, 'slow work'));
    const { holding } = await agent.waitFor((s) => s.holding.length === 1);
    await run.beat((p) => p.remote_task_id !== undefined);
    run.env.cancel();

    await expect(running).rejects.toBeInstanceOf(CancelledFailure);
    const stats = agent.stats();
    expect(stats.cancels_by_task).toEqual({ [holding[0] ?? '']: 1 });
    expect(stats.tasks[holding[0] ?? '']?.state).toBe('canceled');
  });

  it('past the deadline it cancels the remote task and ends timed_out', async () => {
    const agent = await startAgent({ script: [HOLD] });
    const input = inputFor(agent.url, 'slow work', { deadline_ms: Date.now() + 5_000 });
    const result = await attempt().run(input);

    expect(result).toMatchObject({
      end: 'timed_out',
      error: "the remote agent did not finish within the subagent's time limit",
      remote_task_id: expect.any(String),
    });
    const stats = agent.stats();
    expect(stats.cancels_by_task).toEqual({ [result.remote_task_id ?? '']: 1 });
    expect(stats.messages_total).toBe(1);
  });

  it('an attempt that starts past the deadline sends nothing and cancels the task it knows', async () => {
    const agent = await startAgent({ script: [HOLD] });
    const input = inputFor(agent.url, 'slow work');
    const first = attempt();
    const interrupted = first.run(input);
    await agent.waitFor((s) => s.holding.length === 1);
    const progress = await first.beat((p) => p.remote_task_id !== undefined);
    first.env.cancel('WORKER_SHUTDOWN', shutdown());
    await expect(interrupted).rejects.toBeInstanceOf(CancelledFailure);

    const late = await attempt({ attempt: 2, heartbeatDetails: progress }).run({
      ...input,
      deadline_ms: Date.now() - 1,
    });
    expect(late).toMatchObject({ end: 'timed_out', remote_task_id: progress.remote_task_id });
    const stats = agent.stats();
    expect(stats.messages_total).toBe(1);
    expect(stats.cancels_by_task).toEqual({ [progress.remote_task_id ?? '']: 1 });
  });
});

describe('re-attaching without the task id (the send reached the agent, its answer was not recorded)', () => {
  it.each([
    ['the heartbeat says the prompt was sent', { prompt_sent: true, updates: 0 }],
    ['no heartbeat reached the server', undefined],
  ])(
    '%s: the task is found by the prompt message id, the prompt is not sent again',
    async (_case, details) => {
      const agent = await startAgent({ script: [HOLD] });
      const input = inputFor(agent.url, 'slow work');
      const first = attempt({ attempt: 1 });
      const interrupted = first.run(input);
      await agent.waitFor((s) => s.holding.length === 1);
      first.env.cancel('WORKER_SHUTDOWN', shutdown());
      await expect(interrupted).rejects.toBeInstanceOf(CancelledFailure);

      const second = attempt({ attempt: 2, heartbeatDetails: details });
      const resumed = second.run(input);
      await second.beat((p) => p.remote_task_id !== undefined);
      agent.release();

      await expect(resumed).resolves.toMatchObject({ end: 'completed', resumed: 'reattached' });
      expect(agent.stats().messages_by_id).toEqual({ [promptMessageId(input.delegation_id)]: 1 });
    },
  );

  it('a later attempt whose prompt never arrived sends it (once)', async () => {
    const agent = await startAgent();
    const input = inputFor(agent.url, 'ping');
    const result = await attempt({ attempt: 3 }).run(input);
    expect(result).toMatchObject({ end: 'completed', text: 'done: ping' });
    expect(result.resumed).toBeUndefined();
    expect(agent.stats().messages_by_id).toEqual({ [promptMessageId(input.delegation_id)]: 1 });
  });

  it('a retried answer that already reached the task is not sent again', async () => {
    const agent = await startAgent({ queue: [{ kind: 'input_required', question: 'Which?' }] });
    const input = inputFor(agent.url, 'pick one');
    const asked = await attempt().run(input);
    const answerInput = {
      ...input,
      answer: { remote_task_id: asked.remote_task_id ?? '', context_id: asked.context_id, text: 'that one' },
    };
    const answered = attempt();
    await answered.run(answerInput);

    const retried = await attempt({
      attempt: 2,
      heartbeatDetails: { prompt_sent: true, updates: 1, remote_task_id: asked.remote_task_id },
    }).run(answerInput);
    expect(retried).toMatchObject({
      end: 'completed',
      text: 'answer received: that one',
      resumed: 'reattached',
    });
    expect(agent.stats().messages.map((m) => m.text)).toEqual(['pick one', 'that one']);
  });
});

describe('errors', () => {
  it('an agent that cannot be reached is a retryable failure (Temporal tries again)', async () => {
    const agent = await startAgent();
    const url = agent.url;
    await agent.close();
    const failure = await attempt()
      .run(inputFor(url, 'ping'))
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: A2A_UNAVAILABLE_ERROR_TYPE, nonRetryable: false });
    expect((failure as Error).message).toMatch(/did not reach the agent: fetch failed \(ECONNREFUSED\)/);
  });

  it('a 5xx answer is a retryable failure', async () => {
    const url = await startServer((_req, res) => res.writeHead(503).end('overloaded'));
    await expect(attempt().run(inputFor(url, 'ping'))).rejects.toMatchObject({
      type: A2A_UNAVAILABLE_ERROR_TYPE,
      nonRetryable: false,
      message: expect.stringContaining('HTTP 503: overloaded'),
    });
  });

  it('no agent card (404) ends failed; a card without a transport this worker speaks too', async () => {
    const missing = await startServer((_req, res) => res.writeHead(404).end());
    await expect(attempt().run(inputFor(missing, 'ping'))).resolves.toMatchObject({
      end: 'failed',
      error: expect.stringMatching(/no agent card at .*\.well-known\/agent-card\.json \(HTTP 404\)/),
    });
    const grpcOnly = await startServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          name: 'grpc agent',
          supportedInterfaces: [
            { url: 'http://127.0.0.1:1', protocolBinding: 'GRPC', protocolVersion: '1.0' },
          ],
          capabilities: {},
        }),
      ),
    );
    await expect(attempt().run(inputFor(grpcOnly, 'ping'))).resolves.toMatchObject({
      end: 'failed',
      error: expect.stringContaining('offers no transport this worker speaks (offered: GRPC'),
    });
  });

  describe('credentials', () => {
    const TOKEN_VARIABLE = 'A2A_UNIT_TEST_TOKEN';
    afterEach(() => delete process.env[TOKEN_VARIABLE]);

    it('headers name environment variables, resolved by the worker', async () => {
      const agent = await startAgent({ token: 'sekret-token-1' });
      process.env[TOKEN_VARIABLE] = 'sekret-token-1';
      const input = inputFor(agent.url, 'ping');
      input.provider.headers = { Authorization: `Bearer $${TOKEN_VARIABLE}` };
      await expect(attempt().run(input)).resolves.toMatchObject({ end: 'completed' });
    });

    it('a refused credential (401) ends auth_required, and no message shows its value', async () => {
      const url = await startServer((req, res) =>
        res.writeHead(401).end(`bad credential: ${req.headers.authorization ?? 'none'}`),
      );
      process.env[TOKEN_VARIABLE] = 'sekret-token-2';
      const input = inputFor(url, 'ping');
      input.provider.headers = { Authorization: `Bearer \${${TOKEN_VARIABLE}}` };
      const result = await attempt().run(input);
      expect(result).toMatchObject({ end: 'auth_required', error: expect.stringContaining('(HTTP 401)') });
      expect(result.error).toContain('bad credential: Bearer [redacted]');
      expect(JSON.stringify(result)).not.toContain('sekret-token-2');
    });

    it('a variable that is not set ends failed, naming it', async () => {
      const agent = await startAgent();
      const input = inputFor(agent.url, 'ping');
      input.provider.headers = { Authorization: `Bearer $${TOKEN_VARIABLE}` };
      await expect(attempt().run(input)).resolves.toMatchObject({
        end: 'failed',
        error: `subagent_providers.team_a2a.headers.Authorization names $${TOKEN_VARIABLE}, which is not set in the worker's environment`,
      });
      expect(agent.stats().messages_total).toBe(0);
    });
  });
});

describe('probe', () => {
  const provider = (url: string): A2AProviderSettings => ({ type: 'a2a', name: 'team_a2a', url });

  it('is available when the agent card answers', async () => {
    const agent = await startAgent();
    await expect(probeA2AProvider(provider(agent.url))).resolves.toEqual({ available: true });
  });

  it('is unavailable, with the reason, when nothing answers or the card is refused', async () => {
    const agent = await startAgent({ token: 'probe-token' });
    await expect(probeA2AProvider(provider(agent.url))).resolves.toEqual({
      available: false,
      reason: expect.stringContaining('the agent refused GET /.well-known/agent-card.json (HTTP 401)'),
    });
    const url = agent.url;
    await agent.close();
    await expect(probeA2AProvider(provider(url))).resolves.toEqual({
      available: false,
      reason: expect.stringContaining('did not reach the agent'),
    });
  });
});
