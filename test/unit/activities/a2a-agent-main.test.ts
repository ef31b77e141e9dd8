/**
 * The scriptable A2A agent as a process of its own (what end-to-end tests run, so the agent outlives the
 * workers they kill): it prints its URLs, takes its script from a file, answers the A2A activity, tells what
 * it received over HTTP, releases a held task on request, and exits cleanly on SIGTERM.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { runA2ASubagent } from '../../../activities/remote/a2a';
import { promptMessageId } from '../../../activities/remote/a2a/identity';
import type { A2AProviderSettings, RemoteSubagentInput } from '../../../contracts/remote-subagent';
import { fetchA2AStats, releaseA2ATasks, waitForA2AStats } from '../../support/a2a-agent';

// The A2A SDK's CommonJS build requires `jose` (an ES module): see test/support/a2a-agent.ts.
jest.mock('jose', () => ({}));

const MAIN = join(__dirname, '..', '..', 'support', 'a2a-agent-main.js');

it('runs as a process: its URLs on one line, the script from a file, stats and release over HTTP', async () => {
  const scriptFile = join(mkdtempSync(join(tmpdir(), 'a2a-agent-main-')), 'script.json');
  writeFileSync(
    scriptFile,
    JSON.stringify({ script: [{ keyword: 'slow', behaviour: { kind: 'hold', text: 'ok' } }] }),
  );
  const child = spawn(process.execPath, [MAIN, '--script', scriptFile], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
    const { url, card_url: cardUrl, stats_url: statsUrl } = JSON.parse(line) as Record<string, string>;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(cardUrl).toBe(`${url}/.well-known/agent-card.json`);
    expect(statsUrl).toBe(`${url}/_test/stats`);

    const input: RemoteSubagentInput & { provider: A2AProviderSettings } = {
      provider: { type: 'a2a', name: 'team_a2a', url },
      delegation_id: 'lead-main/task/call_1',
      prompt: 'slow work',
      workspace: '/tmp',
      deadline_ms: Date.now() + 60_000,
    };
    const env = new MockActivityEnvironment(
      { heartbeatTimeoutMs: 3_000 },
      { logger: new DefaultLogger('ERROR') },
    );
    const running = env.run(runA2ASubagent, input);
    const { holding } = await waitForA2AStats(url, (s) => s.holding.length === 1);
    await releaseA2ATasks(url, holding[0]);

    await expect(running).resolves.toMatchObject({
      end: 'completed',
      text: 'ok',
      remote_task_id: holding[0],
    });
    const stats = await fetchA2AStats(url);
    expect(stats.messages_by_id).toEqual({ [promptMessageId(input.delegation_id)]: 1 });
    expect(stats.tasks[holding[0] ?? '']?.state).toBe('completed');
  } finally {
    child.kill('SIGTERM');
  }
  const [code] = (await once(child, 'exit')) as [number | null];
  expect(code).toBe(0);
});
