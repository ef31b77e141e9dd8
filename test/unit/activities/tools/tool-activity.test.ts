/**
 * A tool call run as the activity: it heartbeats for as long as the tool runs (a long command would otherwise
 * outlive the heartbeat timeout and be retried as lost), and cancelling the activity stops the command.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { BUILTIN_TOOL_NAMES, DEFAULT_SANDBOX, type ToolCallInput } from '../../../../contracts/tools';
import { executeToolCall, makeFixture, removeFixture, type Fixture } from './workspace-fixture';

let fx: Fixture;
beforeEach(async () => {
  fx = await makeFixture();
});
afterEach(async () => {
  await removeFixture(fx);
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function bashCall(command: string): ToolCallInput {
  return {
    call: { id: 'call-1', name: 'bash', args: JSON.stringify({ command }) },
    workspace: fx.workspace,
    allowed_tools: [...BUILTIN_TOOL_NAMES],
    sandbox: { ...DEFAULT_SANDBOX, allow_host_bash: true },
  };
}

it('heartbeats while a command runs, and cancelling the activity stops the command', async () => {
  // A 600 ms heartbeat timeout: a beat every 200 ms.
  const env = new MockActivityEnvironment(
    { heartbeatTimeoutMs: 600 },
    { logger: new DefaultLogger('ERROR') },
  );
  let beats = 0;
  env.on('heartbeat', () => (beats += 1));
  const running = env.run(executeToolCall, bashCall('(sleep 2; echo late > late.txt) & sleep 30'));
  running.catch(() => undefined);
  await sleep(1100);
  expect(beats).toBeGreaterThanOrEqual(2);

  env.cancel();
  await expect(running).rejects.toBeInstanceOf(CancelledFailure);
  const beatsAtCancel = beats;
  await sleep(1500);
  expect(existsSync(path.join(fx.workspace, 'late.txt'))).toBe(false);
  expect(beats).toBe(beatsAtCancel);
});
