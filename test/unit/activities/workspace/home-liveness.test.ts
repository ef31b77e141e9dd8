/**
 * Whether a run's home host is alive, gone, or not yet known, from what the server lists: a move costs a
 * restore, so "gone" needs the host to have said it stopped or to have been silent for 10 s at least (three
 * beats of a slower one) by the clocks, or, to an asker that reads again, three beats standing still by its own
 * clock; a beat within the last one and a half says alive.
 */
import { homeVerdict, rememberedVerdict } from '../../../../activities/workspace/home-liveness';
import { SilenceTracker, type HeartbeatSeen } from '../../../../contracts/worker-heartbeats';

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

describe('rememberedVerdict: an asker that asks again while unsure', () => {
  const seen = (identity: string, atMs: number, status: HeartbeatSeen['status'] = 'running') => ({
    identity,
    status,
    atMs,
    intervalMs: 1_000,
  });

  it('takes the home for gone once its beat stood still for three beats of its own clock, not 10 s', () => {
    const tracker = new SilenceTracker('', 3_000);
    // Killed 2 s before the first reading; by the clocks, only a missed beat: unsure.
    const beats = [seen('home@h1', NOW - 2_000)];
    expect(rememberedVerdict('unsure', beats, tracker, 0, NOW)).toBe('unsure');
    expect(rememberedVerdict('unsure', beats, tracker, 2_900, NOW + 2_900)).toBe('unsure');
    expect(rememberedVerdict('unsure', beats, tracker, 3_000, NOW + 3_000)).toBe('gone');
  });

  it('keeps a home alive whose beat moves, however late the asker reads (a slow reader, a busy host)', () => {
    const tracker = new SilenceTracker('', 3_000);
    expect(rememberedVerdict('unsure', [seen('home@h1', NOW - 2_000)], tracker, 0, NOW)).toBe('unsure');
    // The asker stalled 10 s; the home beat meanwhile: its beat is new, so not gone.
    const later = [seen('home@h1', NOW + 9_500)];
    expect(rememberedVerdict('unsure', later, tracker, 10_000, NOW + 10_000)).toBe('unsure');
    expect(rememberedVerdict('unsure', later, tracker, 12_900, NOW + 12_900)).toBe('unsure');
  });

  it('waits for every worker of the home, and leaves a sure verdict as it is', () => {
    const tracker = new SilenceTracker('', 3_000);
    const two = (restartedAt: number) => [seen('old@h1', NOW - 2_000), seen('new@h1', restartedAt)];
    rememberedVerdict('unsure', two(NOW), tracker, 0, NOW);
    expect(rememberedVerdict('unsure', two(NOW + 3_000), tracker, 3_000, NOW + 3_000)).toBe('unsure');
    expect(rememberedVerdict('alive', [seen('old@h1', NOW - 2_000)], tracker, 9_000, NOW)).toBe('alive');
  });
});
