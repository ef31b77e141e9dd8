/**
 * Tests that load the whole machine by design take turns. The overload test saturates the cores with busy
 * loops; the chaos test kills workers under a deadline. Jest runs two files at once, and it starts the longest
 * first, so without turns these two ran side by side: the chaos runs then met six busy loops, fifty fan-out
 * runs and their own kills at once, and missed their deadline. A turn is a folder made in the suite's own
 * temporary folder (mkdir is atomic); a turn whose holder has died is taken over.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** How long a test waits for its turn: the longest of them (the overload test) with room to spare. */
export const MACHINE_TURN_WAIT_MS = 20 * 60_000;

const LOOK_AGAIN_MS = 250;

function turnDir(): string {
  const bundle = process.env.TEMPORAL_TEST_WORKFLOW_BUNDLE;
  if (!bundle)
    throw new Error('TEMPORAL_TEST_WORKFLOW_BUNDLE is not set: run workflow tests through `npm test`');
  return join(dirname(bundle), 'machine-turn');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function holder(dir: string): number | undefined {
  try {
    return Number(readFileSync(join(dir, 'pid'), 'utf8'));
  } catch {
    return undefined;
  }
}

/** Waits until this test has the machine to itself among the tests that take turns; returns the release. */
export async function takeMachineTurn(): Promise<() => void> {
  const dir = turnDir();
  const asked = Date.now();
  for (;;) {
    try {
      mkdirSync(dir);
      writeFileSync(join(dir, 'pid'), String(process.pid));
      const waited = Date.now() - asked;
      if (waited >= 1000) process.stderr.write(`waited ${(waited / 1000).toFixed(0)} s for the machine\n`);
      return () => rmSync(dir, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const pid = holder(dir);
    // A holder that died without releasing (a crashed jest worker). A folder without its pid yet is a turn
    // being taken right now: wait.
    if (pid !== undefined && pid > 0 && !alive(pid)) rmSync(dir, { recursive: true, force: true });
    else await new Promise((resolve) => setTimeout(resolve, LOOK_AGAIN_MS));
  }
}

/** Takes a turn before the file's tests and releases it after them. */
export function useMachineTurn(): void {
  let release: (() => void) | undefined;
  beforeAll(async () => {
    release = await takeMachineTurn();
  }, MACHINE_TURN_WAIT_MS);
  afterAll(() => release?.());
}
