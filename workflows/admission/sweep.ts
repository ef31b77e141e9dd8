/**
 * The sweep (`Sweep`): while slots are held, every ADMISSION_SWEEP_INTERVAL_MS the admission workflow asks
 * which of their owners have closed (terminated from the UI, say: no code of theirs gives the slot back) and
 * gives their slots back. The activity is handed in, so a unit test drives it without a server.
 */
import { log } from '@temporalio/workflow';
import type { Slots } from './slots';

/** How often the owners of held slots are checked, while any are held. */
export const ADMISSION_SWEEP_INTERVAL_MS = 10_000;

/**
 * Owners a sweep describes at most (one describe each), those checked longest ago first: with hundreds of
 * slots held, describing every holder every 10 s was a load of its own on the server (bench/load.ts).
 */
export const ADMISSION_SWEEP_BATCH = 16;

/** What a sweep reads and changes of the semaphore. */
export type SweptSlots = Pick<Slots, 'running' | 'owners' | 'reclaim' | 'checkedOpen'>;

export interface SweepEffects {
  /** The owners, of those named, that have closed (an activity). */
  closedOwners(owners: string[]): Promise<string[]>;
}

export class Sweep {
  /** When the next sweep is due (undefined: no slot held, or none since the last look). */
  private at?: number;

  constructor(
    private readonly slots: SweptSlots,
    private readonly effects: SweepEffects,
  ) {}

  /** When the loop must wake for the next sweep (Infinity: no slot held). */
  dueAt(now: number): number {
    if (this.slots.running.length === 0) return Infinity;
    return this.at ?? now + ADMISSION_SWEEP_INTERVAL_MS;
  }

  /**
   * The loop's look: true when a sweep is due now. A slot held starts the interval; none held stops it.
   */
  due(now: number): boolean {
    if (this.slots.running.length === 0) {
      this.at = undefined;
      return false;
    }
    if (this.at === undefined) {
      this.at = now + ADMISSION_SWEEP_INTERVAL_MS;
      return false;
    }
    return now >= this.at;
  }

  /**
   * Describes the owners due a check and gives back the slots of those closed; the next sweep is due an interval
   * after it. A sweep that fails gives nothing back on a guess: the next one tries again.
   */
  async run(): Promise<void> {
    const owners = this.slots.owners(Date.now());
    if (owners.length > 0) {
      try {
        const closed = await this.effects.closedOwners(owners);
        const now = Date.now();
        this.slots.reclaim(closed, now);
        this.slots.checkedOpen(owners, now);
      } catch (err) {
        log.warn('admission sweep failed', { error: err instanceof Error ? err.message : String(err) });
      }
    }
    this.at = Date.now() + ADMISSION_SWEEP_INTERVAL_MS;
  }
}
