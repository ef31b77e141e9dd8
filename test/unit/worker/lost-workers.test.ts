import type { HeartbeatSeen } from '../../../contracts/worker-heartbeats';
import { SilenceTracker } from '../../../contracts/worker-heartbeats';

const beat = (
  identity: string,
  atMs: number,
  status: HeartbeatSeen['status'] = 'running',
): HeartbeatSeen => ({
  identity,
  status,
  atMs,
});

describe('SilenceTracker', () => {
  it('takes a worker for dead once its heartbeat has stood still for the silence, by this clock, once', () => {
    const tracker = new SilenceTracker('me@host', 3000);
    expect(tracker.observe([beat('a@host', 100)], 0)).toEqual([]);
    expect(tracker.observe([beat('a@host', 1100)], 1000)).toEqual([]);
    // Still 1100 at 3900: silent 2.9 s since first seen.
    expect(tracker.observe([beat('a@host', 1100)], 3900)).toEqual([]);
    expect(tracker.observe([beat('a@host', 1100)], 4000)).toEqual(['a@host']);
    expect(tracker.observe([beat('a@host', 1100)], 9000)).toEqual([]);
  });

  it('takes one found dead that beats again for alive, and finds it again if it falls silent again', () => {
    const tracker = new SilenceTracker('me@host', 3000);
    tracker.observe([beat('a@host', 1000)], 1000, 1000);
    expect(tracker.observe([beat('a@host', 1000)], 4000, 4000)).toEqual(['a@host']);
    expect(tracker.isLost('a@host')).toBe(true);
    tracker.observe([beat('a@host', 6000)], 6000, 6000);
    expect(tracker.isLost('a@host')).toBe(false);
    expect(tracker.observe([beat('a@host', 6000)], 9000, 9000)).toEqual(['a@host']);
  });

  it('does not count a slow reader against a live worker: a late reading finds a newer beat', () => {
    const tracker = new SilenceTracker('me@host', 3000);
    tracker.observe([beat('a@host', 0)], 0);
    tracker.observe([beat('a@host', 1000)], 1000);
    // The reader itself stalled for 10 s; the worker beat meanwhile.
    expect(tracker.observe([beat('a@host', 10_000)], 11_000)).toEqual([]);
    expect(tracker.observe([beat('a@host', 11_000)], 12_000)).toEqual([]);
  });

  it('leaves alone itself, a worker never seen beating, and one that said it stopped', () => {
    const tracker = new SilenceTracker('me@host', 3000);
    const beats = [beat('me@host', 0), beat('old@host', 0), beat('done@host', 0)];
    tracker.observe(beats, 0);
    tracker.observe([beat('me@host', 1000), beat('old@host', 0), beat('done@host', 1000)], 1000);
    const later = [beat('me@host', 1000), beat('old@host', 0), beat('done@host', 1000, 'stopped')];
    expect(tracker.observe(later, 10_000)).toEqual([]);
    expect(tracker.observe(later, 20_000)).toEqual([]);
  });
});
