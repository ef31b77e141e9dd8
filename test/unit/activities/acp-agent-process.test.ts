/**
 * An ACP agent's process, as a worker holds it: `stop()` ends an agent that ignores its stdin closing, and an
 * agent whose worker is killed (SIGKILL: no `stop()`, no exit handler) is killed with it, by its watchdog.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { AgentProcess } from '../../../activities/remote/acp/agent-process';

/** An agent that ignores its stdin closing and SIGTERM: only SIGKILL ends it. */
const STUBBORN = ['-c', 'trap "" TERM HUP; while :; do sleep 1; done'];
/** The same, having started a process of its own first (whose pid it writes). */
const STUBBORN_PARENT = 'sleep 1000 & trap "" TERM HUP; echo $!; while :; do sleep 1; done';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether `pid` has ended (a zombie not yet reaped counts as ended), within 30 s. */
async function ends(pid: number): Promise<boolean> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(50)) {
    if (!alive(pid) || zombie(pid)) return true;
  }
  return false;
}

function zombie(pid: number): boolean {
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

const modulePath = require.resolve('../../../activities/remote/acp/agent-process');

it('stops an agent that ignores its stdin closing and SIGTERM', async () => {
  const agent = await AgentProcess.start({ command: '/bin/sh', args: STUBBORN, cwd: '/', env: process.env });
  expect(alive(agent.pid)).toBe(true);
  await agent.stop();
  expect(await ends(agent.pid)).toBe(true);
  expect(agent.exit).toEqual({ code: null, signal: 'SIGKILL' });
});

it('kills the agent, and what it started, when its worker is killed without stopping it', async () => {
  // A stand-in worker: starts the agent (which starts a child of its own), says their pids, then waits.
  const worker = spawn(
    process.execPath,
    [
      '-e',
      `const { AgentProcess } = require(${JSON.stringify(modulePath)});
       const args = ['-c', ${JSON.stringify(STUBBORN_PARENT)}];
       AgentProcess.start({ command: '/bin/sh', args, cwd: '/', env: process.env })
         .then((agent) => agent.stdout.once('data', (line) => console.log(agent.pid, String(line).trim())));
       setInterval(() => undefined, 1000);`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [chunk] = (await once(worker.stdout, 'data')) as [Buffer];
  const line = chunk.toString().trim();
  const [agentPid, grandchildPid] = line.split(' ').map(Number);
  expect(alive(agentPid) && alive(grandchildPid)).toBe(true);
  worker.kill('SIGKILL');
  expect(await ends(agentPid)).toBe(true);
  expect(await ends(grandchildPid)).toBe(true);
});
