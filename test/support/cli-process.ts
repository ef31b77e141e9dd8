/** The `subagents` CLI and the fake OpenAI endpoint as processes of their own, for end-to-end tests. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { findTemporalCli } from '../../devserver/temporal-cli';
import { fanOutScript, tempDir, writeScript } from './subagent-input';

export const ROOT = join(__dirname, '..', '..', '..');
export const CLI = join(ROOT, 'dist', 'client', 'cli.js');
export const FAKE = join(ROOT, 'dist', 'test', 'support', 'fake-model-main.js');

/**
 * A config file in `dir` whose scripted lead delegates one general-purpose task per id, all in its first
 * response, then answers "All parts done."; each subagent answers "Part done." (after `childMs`).
 */
export function writeDelegatingConfig(dir: string, ids: readonly string[], childMs = 0): string {
  const script = writeScript(dir, fanOutScript(ids, childMs, 'All parts done.'));
  const config = join(dir, 'config.yaml');
  writeFileSync(config, `models:\n  - name: scripted\n    provider: scripted\n    script_file: ${script}\n`);
  return config;
}

/** Each test gets its own cache folder (no dev server recorded there) and the suite's Temporal binary. */
export function cliEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const cli = findTemporalCli();
  if (!cli) throw new Error('the Temporal CLI should have been found by the suite setup');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DURABLE_SUBAGENTS_CACHE: tempDir('cli-cache'),
    TEMPORAL_CLI_PATH: cli.path,
    NO_COLOR: '1',
    ...extra,
  };
  delete env.TEMPORAL_ADDRESS;
  return env;
}

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunCliOptions {
  /** Piped to the process; without it stdin is empty and not a terminal. */
  stdin?: string;
  /** Another program than `node dist/client/cli.js` (e.g. npm), with its own leading arguments. */
  command?: string;
  base?: string[];
}

/** Runs the CLI to its end and collects what it printed. */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: RunCliOptions = {},
): Promise<Finished> {
  const { command = process.execPath, base = [CLI] } = options;
  const child = spawn(command, [...base, ...args], { env, cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  // The CLI may exit before reading stdin (a refused flag): that is not the test's failure.
  child.stdin.on('error', () => undefined);
  child.stdin.end(options.stdin ?? '');
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts a long-running process and resolves with its first stdout line that matches. */
export async function startProcess(
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn(process.execPath, args, { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const line = await new Promise<string>((resolve, reject) => {
    lines.on('line', (text) => {
      if (ready.test(text)) resolve(text);
    });
    child.once('exit', (code) =>
      reject(new Error(`${args.join(' ')} exited with ${code} before it was ready`)),
    );
  });
  return { child, line };
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}

/** A process whose output the test reads while it runs. */
export class WatchedProcess {
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;

  constructor(args: string[], env: NodeJS.ProcessEnv) {
    this.child = spawn(process.execPath, args, { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout?.on('data', (chunk: Buffer) => (this.stdout += chunk.toString('utf8')));
    this.child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString('utf8')));
    this.exited = once(this.child, 'exit').then(([code, signal]) => ({
      code: code as number | null,
      signal: signal as NodeJS.Signals | null,
    }));
  }

  /** Resolves with the first match of `pattern` in the stream, or fails after `timeoutMs`. */
  async waitFor(stream: 'stdout' | 'stderr', pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = this[stream].match(pattern);
      if (match) return match;
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        throw new Error(`exited before ${stream} matched ${pattern}:\n${this.stdout}\n${this.stderr}`);
      }
      if (Date.now() > deadline) {
        throw new Error(`${stream} did not match ${pattern} within ${timeoutMs} ms:\n${this[stream]}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** How it exited, and how long after this call. */
  async exit(): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }> {
    const started = Date.now();
    return { ...(await this.exited), ms: Date.now() - started };
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }
}
