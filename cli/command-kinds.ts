/**
 * Which commands run a worker and which only talk to a server or read files: read by `client/cli.ts` before
 * anything else is loaded (to choose V8's flags) and by `cli/cli.ts` (to choose what to install). Imports
 * nothing.
 */

/** Commands that install the SDK's runtime after reading their config (workerCommand). */
export const RUNTIME_FROM_CONFIG: ReadonlySet<string> = new Set(['worker', 'run', 'start', 'fork', 'resume']);

/**
 * Commands that reach the server through @temporalio/client alone: no worker, no native connection, so no
 * SDK runtime (whose module is @temporalio/worker's, with its native library).
 */
export const CLIENT_COMMANDS: ReadonlySet<string> = new Set([
  'status',
  'ledger',
  'events',
  'watch',
  'list',
  'steps',
  'report',
  'cancel',
  'answer',
  'approve',
  'deny',
  'batch',
  'schedule',
  'memory',
  'budget',
]);

/** Commands that read files only (neither a server nor the SDK's runtime) and print their own --help. */
export const LOCAL_COMMANDS: ReadonlySet<string> = new Set(['skills']);

/** A command that never runs workflow code in its process: short-lived, where V8's optimizing compiler costs more memory than it saves time. */
export function runsNoWorker(command: string | undefined): boolean {
  return command !== undefined && (CLIENT_COMMANDS.has(command) || LOCAL_COMMANDS.has(command));
}
