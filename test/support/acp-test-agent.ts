/**
 * Driving the test ACP agent (./acp-agent.ts) from a test: the provider settings that spawn it, its event log
 * (one JSON line per event, written by the agent's own process) and whether a process it named is still alive.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AcpProviderSettings } from '../../contracts/remote-subagent';

/** The compiled agent: `node <this>`. */
export const ACP_TEST_AGENT = join(__dirname, 'acp-agent.js');

/** A provider that spawns the test agent, its log in `logFile`; `env` adds knobs (see acp-agent.ts). */
export function acpTestProvider(
  logFile: string,
  env: Record<string, string> = {},
  name = 'test_acp',
): AcpProviderSettings {
  return {
    type: 'acp',
    name,
    command: process.execPath,
    args: [ACP_TEST_AGENT],
    env: { ACP_AGENT_LOG: logFile, ...env },
  };
}

/** A prompt that scripts the test agent's turn (its `acp-script:` line after `text`). */
export function scriptedPrompt(text: string, steps: unknown[]): string {
  return `${text}\nacp-script: ${JSON.stringify(steps)}`;
}

export interface AcpAgentEvent {
  event: string;
  pid: number;
  [field: string]: unknown;
}

/** The agent's events so far (every process that wrote to `logFile`). */
export function agentEvents(logFile: string): AcpAgentEvent[] {
  if (!existsSync(logFile)) return [];
  return readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as AcpAgentEvent);
}

/** The events named `event`. */
export function eventsNamed(logFile: string, event: string): AcpAgentEvent[] {
  return agentEvents(logFile).filter((entry) => entry.event === event);
}

/** Waits until the agent has logged `event` (it is written by another process: the file is read again). */
export async function waitForAgentEvent(
  logFile: string,
  event: string,
  timeoutMs = 60_000,
): Promise<AcpAgentEvent> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const found = eventsNamed(logFile, event)[0];
    if (found !== undefined) return found;
    if (Date.now() > until) {
      throw new Error(
        `the test ACP agent logged no ${event} in ${timeoutMs} ms: ${JSON.stringify(agentEvents(logFile))}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Whether a process with this pid is alive: it exists (signal 0 checks without sending anything) and is not
 * a zombie (dead, waiting for a parent to reap it: an orphan's new parent may take its time).
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  // `pid (comm) state …`: the state follows the last parenthesis (comm may hold any).
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}

/** Waits until the process is dead (a SIGKILL takes effect asynchronously); whether it is. */
export async function processDies(pid: number, timeoutMs = 10_000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (processAlive(pid)) {
    if (Date.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}
