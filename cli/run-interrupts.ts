/**
 * SIGINT and SIGTERM while `run` (or `start`) works: what the first one does depends on where the command is
 * (starting, following a run, keeping the server up), the second exits at once and says what it leaves
 * behind. And the lines that say how to reach a run this command leaves.
 */
import type { LeadRunResult } from '../contracts/lead';
import { onShutdownSignal } from '../worker/shutdown';
import { shellWord, workerCommandLine } from './worker-presence';

/** The first signal received, and what it does at this point of the command. */
export class RunInterrupts {
  /** The first SIGINT or SIGTERM, once received. */
  signal?: NodeJS.Signals;
  private onFirst: (signal: NodeJS.Signals) => void = () => undefined;
  private leaving: () => string[] = () => [];
  private readonly waiters: ((signal: NodeJS.Signals) => void)[] = [];
  private readonly release: () => void;

  constructor(say: (line: string) => void) {
    this.release = onShutdownSignal(
      (signal) => {
        this.signal = signal;
        this.onFirst(signal);
        for (const wake of this.waiters.splice(0)) wake(signal);
      },
      say,
      () => this.leaving(),
    );
  }

  /**
   * From now on the first signal calls `onFirst`, and a second one prints `leaving()` as it exits. A first
   * signal that came already is not replayed: the caller looks at `signal`.
   */
  during(onFirst: (signal: NodeJS.Signals) => void, leaving: () => string[] = () => []): void {
    this.onFirst = onFirst;
    this.leaving = leaving;
  }

  /** Resolves with the first signal (at once when it came already). */
  first(): Promise<NodeJS.Signals> {
    const { signal } = this;
    if (signal) return Promise.resolve(signal);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  dispose(): void {
    this.release();
  }
}

/** What a cancelled run ended with, from its result: `Cancelled run X: 2 delegations cancelled, 1 completed`. */
export function cancelledRunLine(result: LeadRunResult): string {
  const counts = new Map<string, number>();
  for (const entry of result.ledger) counts.set(entry.status, (counts.get(entry.status) ?? 0) + 1);
  // Cancelled first: it is what the user asked for; the rest in the order they are first seen.
  const statuses = [...counts.keys()].sort((a, b) => Number(b === 'cancelled') - Number(a === 'cancelled'));
  const parts = statuses.map((status, i) => {
    const n = counts.get(status) ?? 0;
    return i === 0 ? `${n} delegation${n === 1 ? '' : 's'} ${status}` : `${n} ${status}`;
  });
  const delegations = parts.length > 0 ? parts.join(', ') : 'no delegations';
  if (result.status === 'cancelled') return `Cancelled run ${result.run_id}: ${delegations}`;
  // The run ended on its own before the cancellation reached it.
  return `Run ${result.run_id} ended ${result.status} before the cancellation reached it: ${delegations}`;
}

/** Where a run is, for the commands that reach it from another shell. */
export interface RunPlace {
  runId: string;
  address: string;
  namespace: string;
  taskQueue: string;
  configFile?: string;
}

function command(place: RunPlace, words: string[]): string {
  const tail = ['--address', place.address];
  if (place.namespace !== 'default') tail.push('--namespace', place.namespace);
  if (place.configFile !== undefined) tail.push('--config', place.configFile);
  return ['subagents', ...words, place.runId, ...tail].map(shellWord).join(' ');
}

/** A run on a server given by address, no longer followed: it goes on there. */
export function detachedLines(place: RunPlace): string[] {
  return [
    `  follow it: ${command(place, ['status'])}`,
    `             ${command(place, ['events'])} --follow`,
    `  cancel it: ${command(place, ['cancel'])}`,
  ];
}

/** A run left mid-way on a dev server that outlives this command: a worker resumes it, or cancel it. */
export function resumableLines(place: RunPlace, cancelRequested: boolean): string[] {
  return [
    `run ${place.runId} stays on the dev server on ${place.address}` +
      (cancelRequested ? ', its cancellation requested: it ends cancelled once a worker polls again' : ''),
    `  resume it: ${workerCommandLine(place)}`,
    `  cancel it: ${command(place, ['cancel'])}`,
  ];
}
