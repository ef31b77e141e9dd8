/**
 * The demo (`npm start` runs `subagents start`) on a machine without bubblewrap, as a process of its own with
 * a PATH that has no `bwrap`: bash falls back on just-bash, and the answer carries what the commands printed.
 */
import { existsSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { LeadRunResult } from '../../contracts/lead';
import { cliEnv, runCli } from '../support/cli-process';
import { tempDir } from '../support/subagent-input';

/** The worker's PATH with `program` taken out: each folder holding it is replaced by links to all the rest. */
function pathWithout(program: string): string {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .map((dir) => {
      if (!existsSync(join(dir, program))) return dir;
      const copy = tempDir(`path-without-${program}`);
      for (const name of readdirSync(dir)) {
        if (name !== program) symlinkSync(join(dir, name), join(copy, name));
      }
      return copy;
    })
    .join(delimiter);
}

const PATH_WITHOUT_BWRAP = pathWithout('bwrap');

async function demo(extraArgs: string[] = []): Promise<LeadRunResult> {
  const run = await runCli(
    ['start', '--once', '--json', '--workspace', tempDir('demo-ws'), ...extraArgs],
    cliEnv({ PATH: PATH_WITHOUT_BWRAP }),
  );
  expect(run.stderr).not.toMatch(/unexpected error/);
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as LeadRunResult;
}

it('the PATH of these tests really has no bwrap', () => {
  const found = PATH_WITHOUT_BWRAP.split(delimiter).filter((dir) => existsSync(join(dir, 'bwrap')));
  expect(found).toEqual([]);
});

it('completes with just-bash where bubblewrap is missing, its answer quoting the real counts', async () => {
  const result = await demo();
  expect(result.status).toBe('completed');
  expect(result.final_output).toContain(
    'Incidents per warehouse: Task Succeeded. Result: Counted with `grep -c` in notes/incidents.md; ' +
      'the bash tool answered:\nnorth: 2\nsouth: 1\neast: 0\n[exit code: 0]\n',
  );
  // The reorder subagent read the csv-summary skill at /mnt/skills and ran its script there.
  expect(result.final_output).toContain(
    "The csv-summary skill's script printed:\nsku,name,warehouse,quantity,reorder_level\n" +
      'A-101,Steel nuts M8,north,300,500\nB-200,Copper wire 2mm,south,80,100\n2 of 5 rows below\n[exit code: 0]',
  );
});

it('shows a bash that cannot run in its answer, instead of counts it never made', async () => {
  const config = join(tempDir('demo-config'), 'config.yaml');
  writeFileSync(config, 'sandbox:\n  kind: bubblewrap\n');
  const result = await demo(['--config', config]);
  expect(result.final_output).toContain(
    'the bash tool answered:\nbash is unavailable: no sandbox could start (sandbox.kind is bubblewrap, and ' +
      'bubblewrap cannot start: bwrap was not found on PATH).',
  );
  expect(result.final_output).not.toMatch(/north: \d/);
});
