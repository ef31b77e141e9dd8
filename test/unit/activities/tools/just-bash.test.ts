/**
 * just-bash as the bash tool's sandbox: the commands a model reaches for work on the workspace's real files,
 * and the limits that apply to it hold. Its escape tests are with the other sandboxes' in bash.test.ts.
 */
import { existsSync, readlinkSync, statSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { probeJustBash } from '../../../../activities/tools/just-bash';
import type { SandboxSettings } from '../../../../contracts/tools';
import { callTool, makeFixture, removeFixture, type Fixture } from './workspace-fixture';

let fx: Fixture;

beforeEach(async () => {
  fx = await makeFixture();
  await mkdir(path.join(fx.workspace, 'notes'));
  await writeFile(
    path.join(fx.workspace, 'inventory.csv'),
    'sku,name,warehouse,quantity,reorder_level\n' +
      'A-100,Steel bolts,north,1200,500\n' +
      'A-101,Steel nuts,north,300,500\n' +
      'B-200,Copper wire,south,80,100\n' +
      'C-300,Safety gloves,east,60,50\n',
  );
  await writeFile(
    path.join(fx.workspace, 'notes', 'incidents.md'),
    '# Incidents\n\n- north: battery failure\n- south: mislabelled pallet\n- north: conveyor jam\n',
  );
});

afterEach(async () => {
  await removeFixture(fx);
});

const bash = async (command: string, settings: Partial<SandboxSettings> = {}): Promise<string> =>
  (await callTool(fx.workspace, 'bash', { command }, { sandbox: { kind: 'just-bash', ...settings } }))
    .content;

it('can start on this machine (it needs nothing but Node)', async () => {
  expect(await probeJustBash()).toEqual({ available: true });
});

describe('just-bash on the workspace files', () => {
  it.each([
    [
      'grep | sort | uniq -c',
      "grep -oE '(north|south|east):' notes/incidents.md | sort | uniq -c",
      '   2 north:\n   1 south:\n',
    ],
    ['grep -c', 'grep -c north notes/incidents.md', '2\n'],
    ['awk', "awk -F, 'NR > 1 && $4 < $5 { print $1 }' inventory.csv", 'A-101\nB-200\n'],
    ['sed', "sed -n '2,3p' inventory.csv | sed 's/,.*//'", 'A-100\nA-101\n'],
    ['wc', 'wc -l < inventory.csv; wc -l notes/incidents.md', '5\n5 notes/incidents.md\n'],
    [
      'sort -n, head, cut',
      'tail -n +2 inventory.csv | sort -t, -k4 -n | head -2 | cut -d, -f1',
      'C-300\nB-200\n',
    ],
    [
      'cat, ls, find',
      'cat notes/incidents.md | head -1; ls; find . -name "*.md"',
      '# Incidents\ninventory.csv\nnotes\n./notes/incidents.md\n',
    ],
    [
      'a loop and $(…)',
      'for w in north south east; do echo "$w $(grep -c " $w:" notes/incidents.md)"; done',
      'north 2\nsouth 1\neast 0\n',
    ],
  ])('%s', async (_what, command, expected) => {
    expect(await bash(command)).toBe(`${expected}[exit code: 0]`);
  });

  it('redirects write the real files: >, >>, 2>&1, <, a here-document', async () => {
    const result = await bash(
      'echo one > out.txt; echo two >> out.txt; ls missing > err.txt 2>&1; wc -l < out.txt; ' +
        'cat <<EOF > doc.txt\nhello\nEOF',
    );
    expect(result).toBe('2\n[exit code: 0]');
    expect(await readFile(path.join(fx.workspace, 'out.txt'), 'utf8')).toBe('one\ntwo\n');
    expect(await readFile(path.join(fx.workspace, 'err.txt'), 'utf8')).toMatch(/missing/);
    expect(await readFile(path.join(fx.workspace, 'doc.txt'), 'utf8')).toBe('hello\n');
  });

  it('follows links that stay inside the workspace, and keeps the links it makes inside', async () => {
    await symlink('notes', path.join(fx.workspace, 'relative'));
    await symlink(path.join(fx.workspace, 'notes'), path.join(fx.workspace, 'absolute'));
    expect(await bash('head -1 relative/incidents.md absolute/incidents.md')).toBe(
      '==> relative/incidents.md <==\n# Incidents\n\n==> absolute/incidents.md <==\n# Incidents\n[exit code: 0]',
    );
    await bash('ln -s /etc/passwd passwd');
    expect(readlinkSync(path.join(fx.workspace, 'passwd'))).toBe(path.join(fx.workspace, 'etc', 'passwd'));
  });

  it('has a scratch /tmp that lasts one call and never reaches the disk', async () => {
    const name = `scratch-${path.basename(fx.root)}`;
    expect(await bash(`echo kept > /tmp/${name}; cat /tmp/${name}`)).toBe('kept\n[exit code: 0]');
    expect(existsSync(`/tmp/${name}`)).toBe(false);
    expect(await bash(`cat /tmp/${name}`)).toMatch(/No such file or directory\n\[exit code: 1\]$/);
  });
});

describe('just-bash limits', () => {
  it('refuses a write past max_file_size_mb, writes nothing of it, and the next command runs', async () => {
    // 588,895 bytes: twice is past 1 MiB.
    const result = await bash('seq 1 100000 > half.txt; cat half.txt half.txt > big.txt', {
      max_file_size_mb: 1,
    });
    expect(result).toBe(
      `bash: EFBIG: file too large, write '${fx.workspace}/big.txt' (the limit is 1 MiB)\n[exit code: 1]`,
    );
    // Opened (so made empty) by the redirection, as in bash; none of the too-large write lands.
    expect(statSync(path.join(fx.workspace, 'big.txt')).size).toBe(0);
    expect(
      await bash('cat half.txt > ok.txt; cat half.txt >> ok.txt; wc -l < ok.txt', { max_file_size_mb: 1 }),
    ).toMatch(/^bash: EFBIG: file too large, write '.*ok\.txt' \(the limit is 1 MiB\)\n\[exit code: 1\]$/);
    expect((await readFile(path.join(fx.workspace, 'ok.txt'), 'utf8')).split('\n')).toHaveLength(100001);
    expect(await bash('echo still fine')).toBe('still fine\n[exit code: 0]');
  });

  it('stops a command past max_memory_mb, saying so in one line', async () => {
    const result = await bash(
      'printf "%0100d\\n" 0 > a; for i in $(seq 1 22); do cat a a > b; mv b a; done; wc -c a',
      { max_memory_mb: 16 },
    );
    expect(result).toBe(
      '[just-bash ran out of memory: the limit is 16 MiB (sandbox.max_memory_mb)]\n[killed by signal SIGABRT]',
    );
    expect(await bash('echo still fine')).toBe('still fine\n[exit code: 0]');
  });
});
