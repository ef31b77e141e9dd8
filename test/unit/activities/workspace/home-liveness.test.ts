/**
 * Whether a run's home host is alive, gone, or not yet known, from what the server lists: a move costs a
 * restore, so "gone" needs the host to have said it stopped or to have been silent for 10 s at least (three
 * beats of a slower one); a beat within the last one and a half says alive.
 */
import { homeVerdict } from '../../../../activities/workspace/home-liveness';

const NOW = 1_000_000;
const beat = (silenceMs: number, status = 'running') => ({
  status,
  atMs: NOW - silenceMs,
  intervalMs: 2_000,
});

describe('homeVerdict', () => {
  it('is alive while the host beats', () => {
    expect(homeVerdict([{}], [beat(500)], NOW)).toBe('alive');
    expect(homeVerdict([{}], [beat(3_900)], NOW)).toBe('alive');
  });

  it('is unsure after a missed beat, and gone after 10 s of silence (three beats of a slower host)', () => {
    expect(homeVerdict([{}], [beat(4_500)], NOW)).toBe('unsure');
    expect(homeVerdict([{}], [beat(9_900)], NOW)).toBe('unsure');
    expect(homeVerdict([{}], [beat(10_100)], NOW)).toBe('gone');
    // A slower beat waits longer: three of its intervals.
    expect(homeVerdict([{}], [{ ...beat(14_000), intervalMs: 5_000 }], NOW)).toBe('unsure');
  });

  it('is gone at once when the host said it stopped, or nothing polls and nothing beats', () => {
    expect(homeVerdict([{}], [beat(100, 'stopped')], NOW)).toBe('gone');
    expect(homeVerdict([{}], [beat(100, 'stopping')], NOW)).toBe('gone');
    expect(homeVerdict([], [], NOW)).toBe('gone');
  });

  it('is alive when one of two workers of the host beats (a restarted one beside the dead one)', () => {
    expect(homeVerdict([{}, {}], [beat(60_000), beat(200)], NOW)).toBe('alive');
  });

  it('leaves the poller list to answer on a server that keeps no heartbeats', () => {
    expect(homeVerdict([{ lastAccessMs: NOW - 1_000 }], undefined, NOW)).toBe('alive');
    expect(homeVerdict([], undefined, NOW)).toBe('gone');
  });

  it('gives a poller that never beat 15 s before it counts as gone', () => {
    expect(homeVerdict([{ lastAccessMs: NOW - 5_000 }], [], NOW)).toBe('unsure');
    expect(homeVerdict([{ lastAccessMs: NOW - 20_000 }], [], NOW)).toBe('gone');
  });
});
