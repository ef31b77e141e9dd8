/**
 * Stopping a process that runs a worker: the first SIGINT or SIGTERM asks for one graceful shutdown (the
 * worker stops polling, cancels its running activities, finishes its workflow tasks); a second one exits at
 * once, so an activity that ignores its cancellation cannot hold the terminal.
 */
import { constants } from 'node:os';
import type { Worker } from '@temporalio/worker';
import { settleCoreLogs } from './runtime';

const SHUTDOWN_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/** The exit code of a process ended by `signal`, as a shell reports it: 130 for SIGINT, 143 for SIGTERM. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + constants.signals[signal];
}

/**
 * Calls `onFirst` on the first SIGINT or SIGTERM; on the next one says so (and the lines `leaving` gives: what
 * the process leaves unfinished) and exits at once. Returns what removes the handlers: call it once the
 * graceful shutdown is over.
 */
export function onShutdownSignal(
  onFirst: (signal: NodeJS.Signals) => void,
  say: (line: string) => void,
  leaving: () => string[] = () => [],
) {
  let received = false;
  const handler = (signal: NodeJS.Signals) => {
    if (!received) {
      received = true;
      onFirst(signal);
      return;
    }
    say(`${signal} again: exiting without waiting for the shutdown`);
    for (const line of leaving()) say(line);
    process.exit(signalExitCode(signal));
  };
  for (const signal of SHUTDOWN_SIGNALS) process.on(signal, handler);
  return () => {
    for (const signal of SHUTDOWN_SIGNALS) process.off(signal, handler);
  };
}

/** Resolves on the first SIGINT or SIGTERM; a second one exits at once (a server that will not stop). */
export function untilShutdownRequested(say: (line: string) => void): Promise<void> {
  return new Promise((resolve) => {
    onShutdownSignal(() => resolve(), say);
  });
}

/** Runs `worker` until the first SIGINT or SIGTERM, then shuts it down once; resolves when it has stopped. */
export async function runWorkerUntilSignal(worker: Worker, say: (line: string) => void): Promise<void> {
  const release = onShutdownSignal((signal) => {
    say(`${signal}: stopping the worker (send it again to exit at once)`);
    // Only a running worker can be shut down; one that already stopped (a fatal error) has nothing to drain.
    if (worker.getState() === 'RUNNING') worker.shutdown();
  }, say);
  try {
    await worker.run();
  } finally {
    await settleCoreLogs();
    release();
  }
}
