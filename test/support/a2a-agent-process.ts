/**
 * The scriptable A2A agent (./a2a-agent.ts) as a process of its own, driven over its `/_test/*` endpoints: what a
 * test needs whose workers are processes it kills, and that must not load the A2A SDK itself (under jest on
 * Node 20 the SDK's CommonJS build needs `jose` mocked; the agent's own process loads it natively).
 *
 *   const agent = await startA2AAgentProcess({ script: [{ keyword: 'HOLD', behaviour: { kind: 'hold' } }] });
 *   agent.url                                   the provider's `url`
 *   await agent.waitFor((s) => s.holding.length === 1)
 *   await agent.release(taskId?)
 *   await agent.stop()
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { A2AAgentStats, A2ABehaviour, A2AScriptEntry } from './a2a-agent';

const MAIN = join(__dirname, 'a2a-agent-main.js');
/** How often `waitFor` reads the stats. */
const STATS_POLL_MS = 50;

export interface A2AAgentProcess {
  /** The endpoint: the provider's `url`. */
  url: string;
  stats(): Promise<A2AAgentStats>;
  /** Resolves with the stats once `holds` is true of them; fails after `timeoutMs` with the last ones read. */
  waitFor(holds: (stats: A2AAgentStats) => boolean, timeoutMs?: number): Promise<A2AAgentStats>;
  /** Lets one held task (or every one) complete. */
  release(taskId?: string): Promise<void>;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

/** Starts the agent with this script and queue; resolves once it listens. */
export async function startA2AAgentProcess(
  options: { script?: A2AScriptEntry[]; queue?: A2ABehaviour[] } = {},
): Promise<A2AAgentProcess> {
  const scriptFile = join(mkdtempSync(join(tmpdir(), 'a2a-agent-')), 'script.json');
  writeFileSync(scriptFile, JSON.stringify(options));
  const child = spawn(process.execPath, [MAIN, '--script', scriptFile], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let url: string;
  try {
    url = await firstLineUrl(child);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  const stats = async (): Promise<A2AAgentStats> => {
    const response = await fetch(`${url}/_test/stats`);
    if (!response.ok) throw new Error(`${url}/_test/stats answered HTTP ${response.status}`);
    return (await response.json()) as A2AAgentStats;
  };
  return {
    url,
    stats,
    async waitFor(holds, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const seen = await stats();
        if (holds(seen)) return seen;
        if (Date.now() > deadline) {
          throw new Error(`the A2A agent did not get there within ${timeoutMs} ms: ${JSON.stringify(seen)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, STATS_POLL_MS));
      }
    },
    async release(taskId) {
      const response = await fetch(`${url}/_test/release`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(taskId === undefined ? {} : { task_id: taskId }),
      });
      if (!response.ok) throw new Error(`${url}/_test/release answered HTTP ${response.status}`);
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The `url` of the JSON line the agent prints once it listens. */
async function firstLineUrl(child: ChildProcess): Promise<string> {
  if (child.stdout === null) throw new Error('the A2A agent process has no stdout');
  const lines = createInterface({ input: child.stdout });
  const exited = once(child, 'exit').then(([code]) => ({ code: code as number | null }));
  const first = await Promise.race([once(lines, 'line').then(([line]) => String(line)), exited]);
  if (typeof first !== 'string') {
    throw new Error(`the A2A agent process exited with code ${String(first.code)} before it listened`);
  }
  lines.close();
  const { url } = JSON.parse(first) as { url?: unknown };
  if (typeof url !== 'string') throw new Error(`the A2A agent printed no url: ${first}`);
  return url;
}
