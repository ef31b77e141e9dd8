import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { ToolCallResult } from '../../../../contracts/tools';
import { callTool, makeFixture, removeFixture, type Fixture } from './workspace-fixture';

/**
 * Swaps `a` and `b` atomically, over and over, with renameat2(RENAME_EXCHANGE): what another subagent's bash
 * could do in the same workspace. Runs until killed.
 */
const EXCHANGE_LOOP = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
AT_FDCWD, RENAME_EXCHANGE = -100, 2
if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
    sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))
print("ready", flush=True)
while True:
    libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
`;
import { itWhere } from '../../../support/required';

// The race is pushed for a number of calls, not a span of time: a busy machine makes fewer calls a second.
const RACE_CALLS = Number(process.env.SYMLINK_RACE_CALLS ?? 1_000);
const IN_FLIGHT = 8;

function exchangeAvailable(): string | undefined {
  const probe = spawnSync('python3', ['-c', 'import ctypes; ctypes.CDLL(None).renameat2'], {
    encoding: 'utf8',
  });
  if (probe.error || probe.status !== 0) return 'python3 with renameat2 is not available';
  return undefined;
}

const skipReason = process.platform === 'linux' ? exchangeAvailable() : 'renameat2 is Linux-only';
const raceIt = itWhere('python', 'the symlink race test', skipReason);

let fx: Fixture;
let racer: ChildProcess | undefined;

beforeEach(async () => {
  fx = await makeFixture();
  await writeFile(path.join(fx.outside, 'secret.txt'), 'TOP-SECRET\n');
  await writeFile(path.join(fx.outside, 'outside-marker'), '');
  await mkdir(path.join(fx.workspace, 'dir'));
  await writeFile(path.join(fx.workspace, 'dir', 'secret.txt'), 'inside\n');
  await symlink(fx.outside, path.join(fx.workspace, 'swap'));
});

afterEach(async () => {
  racer?.kill('SIGKILL');
  racer = undefined;
  await removeFixture(fx);
});

function startRacer(a: string, b: string): Promise<ChildProcess> {
  const child = spawn('python3', ['-c', EXCHANGE_LOOP, a, b], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout?.once('data', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`the exchange loop exited (${code}): ${stderr}`)));
  });
}

interface Tally {
  calls: number;
  succeeded: number;
  hostReads: number;
  hostListings: number;
}

async function hammer(calls: number): Promise<Tally> {
  const tally: Tally = { calls: 0, succeeded: 0, hostReads: 0, hostListings: 0 };
  let n = 0;
  const one = async (): Promise<void> => {
    const i = n++;
    let result: ToolCallResult;
    switch (i % 4) {
      case 0:
        result = await callTool(fx.workspace, 'write_file', { path: `dir/new-${i}.txt`, content: 'planted' });
        break;
      case 1:
        result = await callTool(fx.workspace, 'read_file', { path: 'dir/secret.txt' });
        break;
      case 2:
        result = await callTool(fx.workspace, 'str_replace', {
          path: 'dir/secret.txt',
          old_str: 'TOP',
          new_str: 'PWNED',
        });
        break;
      default:
        result = await callTool(fx.workspace, 'ls', { path: 'dir' });
    }
    tally.calls += 1;
    if (!result.is_error) tally.succeeded += 1;
    if (result.content.includes('TOP-SECRET')) tally.hostReads += 1;
    if (result.content.includes('outside-marker')) tally.hostListings += 1;
  };
  const lane = async (): Promise<void> => {
    while (n < calls) await one();
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  return tally;
}

describe('file tools against a folder swapped with a link to outside (renameat2 RENAME_EXCHANGE)', () => {
  raceIt(
    'never create, read, change or list anything outside the workspace',
    async () => {
      racer = await startRacer(path.join(fx.workspace, 'dir'), path.join(fx.workspace, 'swap'));
      const tally = await hammer(RACE_CALLS);
      racer.kill('SIGKILL');

      const outsideEntries = (await readdir(fx.outside)).sort();
      const planted = outsideEntries.filter((name) => name.startsWith('new-')).length;
      const secret = await readFile(path.join(fx.outside, 'secret.txt'), 'utf8');
      const report = { ...tally, planted, secretChanged: secret !== 'TOP-SECRET\n' };
      // Printed so a run shows how hard the race was pushed (and, on a regression, how often it was lost).
      process.stderr.write(`symlink race: ${JSON.stringify(report)}\n`);

      expect(tally.calls).toBe(RACE_CALLS);
      expect(report).toMatchObject({ planted: 0, hostReads: 0, hostListings: 0, secretChanged: false });
      expect(outsideEntries).toEqual(['outside-marker', 'secret.txt']);
    },
    120_000,
  );
});
