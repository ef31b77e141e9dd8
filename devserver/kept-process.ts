/**
 * Processes the PostgreSQL-backed server starts and stops (PostgreSQL, the Temporal server): each keeps the
 * tail of its output for error messages, and can be waited on until ready or stopped by signal.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { keepOutputTail } from './temporal-server';
import type { WaitHandle } from '../worker/wait-progress';

/** A process this module started, with the tail of its output kept for error messages. */
export interface KeptProcess {
  process: ChildProcess;
  output: string[];
  exited: Promise<void>;
}

/** Spawns a process that keeps its last lines of output; `exited` settles when it ends. */
export function spawnKept(
  command: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string; uid?: number; gid?: number },
): KeptProcess {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = keepOutputTail(child);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', (err) => {
      output.push(`cannot run ${command}: ${err.message}\n`);
      resolve();
    });
  });
  return { process: child, output, exited };
}

/** Whether `text` has appeared in the process's output since this call (a line the tail may have dropped). */
export function watchFor(child: KeptProcess, text: string): () => boolean {
  let seen = false;
  let recent = '';
  const look = (chunk: Buffer) => {
    recent = (recent + chunk.toString('utf8')).slice(-2 * text.length - 4096);
    if (recent.includes(text)) seen = true;
  };
  child.process.stdout?.on('data', look);
  child.process.stderr?.on('data', look);
  return () => seen;
}

export function outputTail(child: KeptProcess): string {
  return child.output.join('').trim().slice(-3000);
}

export function running(child: KeptProcess | undefined): child is KeptProcess {
  return child !== undefined && child.process.exitCode === null && child.process.signalCode === null;
}

export async function stopProcess(
  child: KeptProcess | undefined,
  signal: NodeJS.Signals,
  killAfterMs: number,
) {
  if (!running(child)) return;
  child.process.kill(signal);
  const timer = setTimeout(() => child.process.kill('SIGKILL'), killAfterMs);
  await child.exited;
  clearTimeout(timer);
}

/** Waits until `ready` says so, failing early with the process's output if it exits. */
export async function waitReady(
  child: KeptProcess,
  what: string,
  timeoutMs: number,
  ready: () => Promise<boolean>,
  wait: WaitHandle,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void child.exited.then(() => (exited = true));
  while (Date.now() < deadline) {
    if (exited || !running(child)) {
      throw new Error(
        `${what} exited (code ${child.process.exitCode ?? child.process.signalCode}):\n${outputTail(child)}`,
      );
    }
    wait.update(`waiting for ${what}`);
    if (await ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what} did not answer within ${timeoutMs} ms:\n${outputTail(child)}`);
}
