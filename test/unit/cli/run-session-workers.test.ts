import { liveWorkers, type HeartbeatSeen } from '../../../client/worker-liveness';
import { compareWorkers, configTaskQueue, ownQueueLine, serverWorkersLine } from '../../../cli/run-session';

const beat = (identity: string, atMs: number, configDigest?: string): HeartbeatSeen => ({
  identity,
  status: 'running',
  atMs,
  ...(configDigest !== undefined && { configDigest }),
});

describe("the recorded dev server's workers against the run's config", () => {
  it("reads each live worker's digest from its latest heartbeat", () => {
    const heartbeats = [beat('1@a', 1000, 'old'), beat('1@a', 2000, 'new'), beat('2@b', 2000)];
    expect(liveWorkers(['1@a', '2@b', '3@c'], heartbeats)).toEqual([
      { identity: '1@a', heartbeats: true, configDigest: 'new' },
      { identity: '2@b', heartbeats: true },
      { identity: '3@c', heartbeats: false },
    ]);
    // A server that keeps no heartbeats: no worker says its config.
    expect(liveWorkers(['1@a'], undefined)).toEqual([{ identity: '1@a', heartbeats: false }]);
  });

  it('uses them only when every live one runs the same config', () => {
    const same = { identity: '1@a', heartbeats: true, configDigest: 'd1' };
    expect(compareWorkers([], 'd1')).toEqual({ kind: 'none' });
    expect(compareWorkers([same, { ...same, identity: '2@b' }], 'd1')).toEqual({ kind: 'same', workers: 2 });
    expect(compareWorkers([same, { identity: '2@b', heartbeats: true, configDigest: 'd2' }], 'd1')).toEqual({
      kind: 'other',
      theirs: 'd2',
    });
    // One that publishes no digest (an older worker) may run anything.
    expect(compareWorkers([same, { identity: '2@b', heartbeats: true }], 'd1')).toEqual({ kind: 'other' });
  });

  it('says which in one line, and runs its own worker on a task queue of the config', () => {
    expect(serverWorkersLine({ address: '127.0.0.1:7233', taskQueue: 'q', workers: 1 })).toBe(
      'Using the dev server on 127.0.0.1:7233 (started by `subagents dev-server`) and the worker polling its ' +
        'task queue "q": same config as this run\'s; --embedded runs it on a server and a worker of this ' +
        "command's own.",
    );
    expect(configTaskQueue('q', 'd1')).toBe('q-config-d1');
    expect(
      ownQueueLine({
        address: '127.0.0.1:7233',
        taskQueue: 'q',
        ownQueue: 'q-config-d1',
        digest: 'd1',
        theirs: 'd2',
      }),
    ).toBe(
      "Using the dev server on 127.0.0.1:7233 (started by `subagents dev-server`) and a worker of this command's " +
        'own on task queue "q-config-d1": the worker polling its task queue "q" runs another config (d2; this ' +
        "run's: d1).",
    );
    expect(ownQueueLine({ address: 'h:1', taskQueue: 'q', ownQueue: 'q-config-d1', digest: 'd1' })).toMatch(
      /the worker polling its task queue "q" does not say which config it runs\.$/,
    );
  });
});
