/**
 * A run on a server given by address waits on workers this process does not own. When none polls the run's
 * task queue, the run would wait in silence: say so once, with the command that starts one.
 */
import { resolve } from 'node:path';
import type { Client } from '@temporalio/client';
import { taskQueueHasWorker } from '../client/worker-liveness';

export interface WorkerPresenceOptions {
  client: Client;
  address: string;
  namespace: string;
  taskQueue: string;
  /** The run's config file: a worker should load the same one (payload store, sandbox). */
  configFile?: string;
  say: (line: string) => void;
  /** The first look; a run that a worker picks up at once never hears of it. */
  firstCheckMs?: number;
  intervalMs?: number;
}

export const FIRST_CHECK_MS = 5000;
const INTERVAL_MS = 5000;

/** `value` as one shell word. */
export function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * The command that starts a worker for this task queue: every hint that tells a user to start one says it
 * (`run`, `status`, `ledger`, `cancel`, `steps`, `report`, `doctor`). The config file as an absolute path: the
 * worker is often started from another folder or terminal.
 */
export function workerCommandLine(options: Omit<WorkerPresenceOptions, 'client' | 'say'>): string {
  const words = ['subagents', 'worker', '--address', options.address, '--task-queue', options.taskQueue];
  if (options.namespace !== 'default') words.push('--namespace', options.namespace);
  if (options.configFile !== undefined) words.push('--config', resolve(options.configFile));
  return words.map(shellWord).join(' ');
}

function hasPollers(options: WorkerPresenceOptions): Promise<boolean> {
  return taskQueueHasWorker(options.client, options.namespace, options.taskQueue);
}

/**
 * Looks for pollers on the run's workflow task queue after `firstCheckMs`, then every `intervalMs`, until it
 * has said once that there are none. The server remembers a poller for a few minutes after it stopped, so a
 * worker that dies mid-run is reported only then. Returns what stops the looking.
 */
export function sayWhenNoWorkerPolls(options: WorkerPresenceOptions): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const look = async () => {
    // A server that refuses the question (permissions, an old version) only loses the hint.
    const polled = await hasPollers(options).catch(() => true);
    if (stopped) return;
    if (!polled) {
      options.say(
        `waiting: no worker polls task queue "${options.taskQueue}" on ${options.address}; the run goes on ` +
          `when one does. Start one with: ${workerCommandLine(options)}`,
      );
      return;
    }
    schedule(options.intervalMs ?? INTERVAL_MS);
  };
  const schedule = (ms: number) => {
    timer = setTimeout(() => void look(), ms);
    // The run's own wait keeps the process alive; this look never should.
    timer.unref();
  };
  schedule(options.firstCheckMs ?? FIRST_CHECK_MS);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
