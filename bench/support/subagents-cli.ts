/**
 * The `subagents` CLI as a benchmark drives it from dist/: one command run to its end, and a `subagents worker`
 * kept up beside a dev server (the split deployment).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';

const CLI = join(__dirname, '..', '..', 'client', 'cli.js');

/** Runs the CLI to its end and resolves with its stdout; rejects with its output when it exits non-zero. */
export async function runSubagentsCli(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`subagents ${args[0]} exited ${code}:\n${output}`);
  return stdout;
}

/** `subagents worker --address <address>`, resolved once it says it polls; stop it with `stopWorker`. */
export async function startSubagentsWorker(address: string, env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const worker = spawn(process.execPath, [CLI, 'worker', '--address', address], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      let log = '';
      const onData = (chunk: Buffer) => {
        log += chunk.toString();
        if (/worker ready|polling/i.test(log)) resolve();
      };
      worker.stdout.on('data', onData);
      worker.stderr.on('data', onData);
      worker.once('exit', (code) => reject(new Error(`the worker exited ${code}:\n${log}`)));
    });
  } catch (err) {
    await stopWorker(worker);
    throw err;
  }
  return worker;
}

/** SIGTERM, then its exit. */
export async function stopWorker(worker: ChildProcess): Promise<void> {
  if (worker.exitCode !== null || worker.signalCode !== null) return;
  const exited = once(worker, 'exit');
  worker.kill('SIGTERM');
  await exited;
}
