/**
 * A worker that protects itself on a busy host. Every heartbeat, every activity's progress and every workflow
 * activation passes through this process's main thread (its event loop). When the host is saturated, or the
 * worker has taken more tasks than its share of the CPU can serve, that loop falls behind: heartbeats leave late,
 * the server gives the attempts up as lost, and an at-most-once tool is reported to the model as "may or may
 * not have run" although its worker is alive. So the worker takes new tasks only while its own event loop keeps
 * up: past a few slots of each kind, a slot is handed out only while the loop's recent delay is under a target.
 * Tasks it does not take wait on the server, which hands them to whichever worker asks next; nothing it holds
 * times out. The measure is this process's own loop, not the host's CPU: a noisy neighbour slows it only as much
 * as it really slows the worker.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type {
  CustomSlotSupplier,
  SlotInfo,
  SlotMarkUsedContext,
  SlotPermit,
  SlotReleaseContext,
  WorkerTuner,
} from '@temporalio/worker';

/** The event loop delay (p99 over the last window) above which no slot past the minimum is handed out. */
export const DEFAULT_EVENT_LOOP_TARGET_MS = 250;

/** How often the delay is read (and its histogram started afresh). */
const WINDOW_MS = 500;

/** How often a reservation waiting on a busy loop looks again (a released slot wakes it at once). */
const RECHECK_MS = 50;

/** Reads the process's event loop delay; `busy()` while its recent p99 is past the target. */
export class EventLoopDelay {
  private readonly histogram: IntervalHistogram;
  private readonly timer: NodeJS.Timeout;
  /** The p99 delay of the last complete window, in ms. */
  recentMs = 0;

  constructor(readonly targetMs: number = DEFAULT_EVENT_LOOP_TARGET_MS) {
    this.histogram = monitorEventLoopDelay({ resolution: 10 });
    this.histogram.enable();
    this.timer = setInterval(() => {
      this.recentMs = this.histogram.percentile(99) / 1e6;
      this.histogram.reset();
    }, WINDOW_MS);
    this.timer.unref();
  }

  busy(): boolean {
    return this.recentMs > this.targetMs;
  }

  stop(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }
}

export interface GuardedSlots {
  /** Always handed out, whatever the loop's delay (the worker never stops making progress). */
  minimum: number;
  /** Never more than this. */
  maximum: number;
}

/**
 * A slot supplier that hands out up to `minimum` slots at once, and more up to `maximum` only while `loop` is not
 * busy. What it counts are permits (a poller waiting for a task holds one), as the SDK's own suppliers do.
 */
export class GuardedSlotSupplier<SI extends SlotInfo> implements CustomSlotSupplier<SI> {
  readonly type = 'custom';
  private held = 0;
  private readonly waiting = new Set<() => void>();

  constructor(
    private readonly loop: Pick<EventLoopDelay, 'busy'>,
    private readonly slots: GuardedSlots,
  ) {}

  /** Permits out now. */
  get inUse(): number {
    return this.held;
  }

  /** Permits a task is using (marked used, not yet released): idle pollers hold permits too, and are not these. */
  private readonly used = new Set<number>();
  private issued = 0;

  // Idle pollers hold permits (one per poller, sticky and shared queue alike): counting them against the minimum
  // let a busy loop leave no permit for the shared queue's poller while the sticky pollers idled, and the worker
  // took no new workflow and no task moved off a dead worker. The minimum counts tasks at work.
  private mayTake(): boolean {
    if (this.held >= this.slots.maximum) return false;
    return this.used.size < this.slots.minimum || !this.loop.busy();
  }

  async reserveSlot(_ctx: unknown, abortSignal: AbortSignal): Promise<SlotPermit> {
    while (!this.mayTake()) {
      await new Promise<void>((resolve, reject) => {
        const done = () => {
          clearTimeout(timer);
          this.waiting.delete(wake);
          abortSignal.removeEventListener('abort', onAbort);
        };
        const wake = () => {
          done();
          resolve();
        };
        // The SDK expects the signal's own reason back (anything else it logs as an error).
        const onAbort = () => {
          done();
          reject(abortSignal.reason);
        };
        const timer = setTimeout(wake, RECHECK_MS);
        this.waiting.add(wake);
        if (abortSignal.aborted) onAbort();
        else abortSignal.addEventListener('abort', onAbort, { once: true });
      });
    }
    this.held += 1;
    return this.permit();
  }

  tryReserveSlot(): SlotPermit | null {
    if (!this.mayTake()) return null;
    this.held += 1;
    return this.permit();
  }

  // Each permit carries its own id: what the SDK hands back may have crossed into its native layer.
  private permit(): SlotPermit {
    this.issued += 1;
    return { id: this.issued };
  }

  markSlotUsed(ctx: SlotMarkUsedContext<SI>): void {
    this.used.add(permitId(ctx.permit));
  }

  releaseSlot(ctx: SlotReleaseContext<SI>): void {
    this.used.delete(permitId(ctx.permit));
    this.held = Math.max(0, this.held - 1);
    const [first] = this.waiting;
    first?.();
  }
}

function permitId(permit: SlotPermit): number {
  return (permit as { id?: number }).id ?? -1;
}

export interface LoadGuardSettings {
  workflowTasks?: GuardedSlots;
  activities?: GuardedSlots;
}

/** Local activities at once: the SDK's own default. */
const LOCAL_ACTIVITY_SLOTS = 100;

/**
 * The maxima are the SDK's own defaults (40 workflow tasks, 100 activities); the minima keep every kind of task
 * moving on a saturated host: a few workflow tasks, and enough activities that a run's model call and its tools
 * never wait on each other.
 */
export const DEFAULT_GUARDED_SLOTS = {
  workflowTasks: { minimum: 4, maximum: 40 },
  activities: { minimum: 4, maximum: 100 },
} as const satisfies Record<string, GuardedSlots>;

/** The worker's tuner: every kind of slot guarded by one reading of the process's event loop. */
export function loadGuardTuner(loop: EventLoopDelay, settings: LoadGuardSettings = {}): WorkerTuner {
  return {
    workflowTaskSlotSupplier: new GuardedSlotSupplier(
      loop,
      settings.workflowTasks ?? DEFAULT_GUARDED_SLOTS.workflowTasks,
    ),
    activityTaskSlotSupplier: new GuardedSlotSupplier(
      loop,
      settings.activities ?? DEFAULT_GUARDED_SLOTS.activities,
    ),
    // Not guarded: a local activity runs inside a workflow task that is already open, so holding it back would
    // only keep that task open longer (a lost worker then costs its whole timeout), not take less work.
    localActivityTaskSlotSupplier: { type: 'fixed-size', numSlots: LOCAL_ACTIVITY_SLOTS },
    nexusTaskSlotSupplier: { type: 'fixed-size', numSlots: 1 },
  };
}
