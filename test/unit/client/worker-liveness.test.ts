import { pollerLiveness, type HeartbeatSeen, type PollerSeen } from '../../../client/worker-liveness';

const now = 1_000_000;
const poller = (identity: string): PollerSeen => ({ identity, lastAccessMs: now - 50_000 });
const beat = (identity: string, status: HeartbeatSeen['status'], agoMs: number, intervalMs = 5000) => ({
  identity,
  status,
  atMs: now - agoMs,
  intervalMs,
});

describe('pollerLiveness', () => {
  it('on a server that keeps no heartbeats, every listed poller counts as live', () => {
    const idle = { identity: '1@a', lastAccessMs: now - 600_000 };
    expect(pollerLiveness([idle], undefined, now)).toEqual({ live: ['1@a'], gone: [] });
  });

  it('a poller with no heartbeat yet is gone once it has asked for nothing for 90 s', () => {
    expect(pollerLiveness([poller('1@a')], [], now)).toEqual({ live: ['1@a'], gone: [] });
    const silent = { identity: '1@a', lastAccessMs: now - 91_000 };
    expect(pollerLiveness([silent], [], now)).toEqual({ live: [], gone: ['1@a'] });
    // Another worker's heartbeats say nothing of this one.
    expect(pollerLiveness([silent], [beat('2@b', 'running', 1000)], now).gone).toEqual(['1@a']);
  });

  it('a worker that shut down is gone at once, though the server still lists its poller', () => {
    expect(pollerLiveness([poller('1@a')], [beat('1@a', 'stopping', 1000)], now)).toEqual({
      live: [],
      gone: ['1@a'],
    });
    expect(pollerLiveness([poller('1@a')], [beat('1@a', 'stopped', 0)], now).gone).toEqual(['1@a']);
  });

  it('a running worker is gone after three missed heartbeats, never sooner than 15 s', () => {
    expect(pollerLiveness([poller('1@a')], [beat('1@a', 'running', 14_000)], now).live).toEqual(['1@a']);
    expect(pollerLiveness([poller('1@a')], [beat('1@a', 'running', 16_000)], now).gone).toEqual(['1@a']);
    // A worker that beats every 60 s (the SDK's default) is given three minutes.
    expect(pollerLiveness([poller('1@a')], [beat('1@a', 'running', 170_000, 60_000)], now).live).toEqual([
      '1@a',
    ]);
    expect(pollerLiveness([poller('1@a')], [beat('1@a', 'running', 190_000, 60_000)], now).gone).toEqual([
      '1@a',
    ]);
  });

  it('one identity with a stopped worker and a running one (two workers in one process) is live', () => {
    const beats = [beat('1@a', 'stopped', 30_000), beat('1@a', 'running', 2000)];
    expect(pollerLiveness([poller('1@a')], beats, now)).toEqual({ live: ['1@a'], gone: [] });
  });

  it('judges each identity on its own heartbeats and lists each once', () => {
    const pollers = [poller('1@a'), poller('2@b'), poller('2@b'), poller('3@c')];
    const beats = [beat('1@a', 'running', 1000), beat('2@b', 'stopped', 1000)];
    expect(pollerLiveness(pollers, beats, now)).toEqual({ live: ['1@a', '3@c'], gone: ['2@b'] });
  });
});
