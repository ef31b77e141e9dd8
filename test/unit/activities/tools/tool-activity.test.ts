/**
 * A tool call run as the activity: it heartbeats for as long as the tool runs (a long command would otherwise
 * outlive the heartbeat timeout and be retried as lost), and cancelling the activity stops the command.
 */
import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { BUILTIN_TOOL_NAMES, DEFAULT_SANDBOX, type ToolCallInput } from '../../../../contracts/tools';
import {
  appears,
  executeToolCall,
  lateJob,
  lateJobWrote,
  makeFixture,
  removeFixture,
  type Fixture,
} from './workspace-fixture';

let fx: Fixture;
beforeEach(async () => {
  fx = await makeFixture();
});
afterEach(async () => {
  await removeFixture(fx);
});

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
  let twoBeats: () => void = () => undefined;
  const beaten = new Promise<void>((resolve) => (twoBeats = resolve));
  env.on('heartbeat', () => {
    beats += 1;
    if (beats === 2) twoBeats();
  });
  const running = env.run(executeToolCall, bashCall(`${lateJob(2)} sleep 30`));
  running.catch(() => undefined);
  // Events, not a guess at how long they take on this host: two beats, and the command has started its job.
  await Promise.all([beaten, appears(fx.workspace, 'started')]);

  env.cancel();
  await expect(running).rejects.toBeInstanceOf(CancelledFailure);
  const beatsAtCancel = beats;
  expect(await lateJobWrote(fx.workspace, 2)).toBe(false);
  expect(beats).toBe(beatsAtCancel);
});
