/**
 * The one activity helper: heartbeats paced by the heartbeat timeout the workflow declared (so a changed
 * timeout cannot leave the beats behind), cancellation that ends the wait at once, the attempt number.
 */
import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { currentAttempt, heartbeatIntervalMs, whileHeartbeating } from '../../../activities/activity-context';

function activityEnv(heartbeatTimeoutMs: number | undefined, attempt = 1): MockActivityEnvironment {
  return new MockActivityEnvironment({ heartbeatTimeoutMs, attempt }, { logger: new DefaultLogger('ERROR') });
}

/** Work that ends only when told to; it ignores its signal, as a careless library would. */
function pendingWork(): { work: () => Promise<string>; finish: (value: string) => void } {
  let finish: (value: string) => void = () => undefined;
  const done = new Promise<string>((resolve) => (finish = resolve));
  return { work: () => done, finish };
}

describe('heartbeats', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it.each([3_000, 30_000])(
    'beat three times per declared heartbeat timeout (%i ms), and stop when the work is done',
    async (timeoutMs) => {
      const env = activityEnv(timeoutMs);
      let beats = 0;
      env.on('heartbeat', () => (beats += 1));
      const { work, finish } = pendingWork();
      const running = env.run(() => whileHeartbeating(work));

      jest.advanceTimersByTime(timeoutMs - 1);
      expect(beats).toBe(2);
      jest.advanceTimersByTime(1);
      expect(beats).toBe(3);

      finish('done');
      await expect(running).resolves.toBe('done');
      jest.advanceTimersByTime(timeoutMs);
      expect(beats).toBe(3);
    },
  );

  it('are not sent when the activity declares no heartbeat timeout (a local activity)', async () => {
    const env = activityEnv(undefined);
    let beats = 0;
    env.on('heartbeat', () => (beats += 1));
    const { work, finish } = pendingWork();
    const running = env.run(() => whileHeartbeating(work));
    jest.advanceTimersByTime(60_000);
    finish('done');
    await expect(running).resolves.toBe('done');
    expect(beats).toBe(0);
  });

  it('are derived from the timeout, a third of it', () => {
    expect(heartbeatIntervalMs(3_000)).toBe(1_000);
    expect(heartbeatIntervalMs(90_000)).toBe(30_000);
    expect(heartbeatIntervalMs(undefined)).toBeUndefined();
    expect(heartbeatIntervalMs(0)).toBeUndefined();
  });
});

describe('cancellation', () => {
  it("ends the wait with the activity's CancelledFailure, even when the work ignores its signal", async () => {
    const env = activityEnv(3_000);
    let handed: AbortSignal | undefined;
    const { work } = pendingWork();
    const running = env.run(() =>
      whileHeartbeating((signal) => {
        handed = signal;
        return work();
      }),
    );
    env.cancel();
    await expect(running).rejects.toBeInstanceOf(CancelledFailure);
    expect(handed?.aborted).toBe(true);
  });

  it("ends the wait when the caller's own signal aborts, with that signal's reason", async () => {
    const deadline = new AbortController();
    const { work } = pendingWork();
    const running = whileHeartbeating(work, { signal: deadline.signal });
    const reason = new Error('deadline passed');
    deadline.abort(reason);
    await expect(running).rejects.toBe(reason);
  });

  it("passes the work's own failure through when nothing aborted", async () => {
    const failure = new Error('disk full');
    await expect(whileHeartbeating(() => Promise.reject(failure))).rejects.toBe(failure);
  });
});

describe('attempt', () => {
  it("is the activity's attempt number, and 1 outside an activity", async () => {
    expect(await activityEnv(3_000, 4).run(async () => currentAttempt())).toBe(4);
    expect(currentAttempt()).toBe(1);
  });
});
