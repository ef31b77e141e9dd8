import { existsSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import {
  bubblewrapMountArgs,
  containerOutput,
  entriesAboveMounts,
  hostCommand,
  mountsInUse,
  SKILLS_READ_ONLY,
} from '../../../../activities/tools/skill-mounts';
import { bubblewrapArgs } from '../../../../activities/tools/sandbox';
import type { SandboxSettings, SkillMount } from '../../../../contracts/tools';
import { describeEachSandbox } from '../../../support/sandboxes';
import { callTool, makeFixture, removeFixture, type Fixture } from './workspace-fixture';

let fx: Fixture;
let mounts: SkillMount[];
const SKILL_TEXT = '---\nname: demo\ndescription: A demo skill.\n---\nRun the script.\n';

beforeEach(async () => {
  fx = await makeFixture();
  // <root>/skills/public/demo/SKILL.md; the user's custom folder is missing (a user without custom skills).
  const skills = path.join(fx.root, 'skills');
  await mkdir(path.join(skills, 'public', 'demo'), { recursive: true });
  await writeFile(path.join(skills, 'public', 'demo', 'SKILL.md'), SKILL_TEXT);
  await writeFile(path.join(fx.outside, 'secret.txt'), 'outside the skills\n');
  mounts = [
    { container_path: '/mnt/skills/public', host_path: path.join(skills, 'public') },
    { container_path: '/mnt/skills/custom', host_path: path.join(skills, 'users', 'alice', 'custom') },
  ];
});

afterEach(async () => {
  await removeFixture(fx);
});

const skillFile = () => path.join(fx.root, 'skills', 'public', 'demo', 'SKILL.md');
const tool = (name: string, args: unknown, sandbox: Partial<SandboxSettings> = {}) =>
  callTool(fx.workspace, name, args, { skill_mounts: mounts, sandbox });

describe('skill mounts, pure parts', () => {
  it('orders the mounts longest first and leaves a missing folder empty', async () => {
    const found = await mountsInUse([
      { container_path: '/mnt/skills', host_path: path.join(fx.root, 'skills') },
      ...mounts,
    ]);
    expect(found.map((mount) => [mount.container_path, mount.hostReal !== undefined])).toEqual([
      ['/mnt/skills/public', true],
      ['/mnt/skills/custom', false],
      ['/mnt/skills', true],
    ]);
    // bubblewrap binds the existing folders, outer first, read-only.
    expect(bubblewrapMountArgs(found)).toEqual([
      '--ro-bind',
      path.join(fx.root, 'skills'),
      '/mnt/skills',
      '--ro-bind',
      path.join(fx.root, 'skills', 'public'),
      '/mnt/skills/public',
    ]);
    const args = bubblewrapArgs(fx.workspace, found);
    expect(args.indexOf('--ro-bind', args.indexOf(fx.workspace))).toBeLessThan(args.indexOf('--remount-ro'));
  });

  it('refuses a mount that is not an absolute, normalized path', async () => {
    await expect(mountsInUse([{ container_path: 'mnt/skills', host_path: fx.root }])).rejects.toThrow(
      /container_path "mnt\/skills" is not an absolute/,
    );
    await expect(mountsInUse([{ container_path: '/mnt/../etc', host_path: fx.root }])).rejects.toThrow(
      /not an absolute, normalized/,
    );
    await expect(mountsInUse([{ container_path: '/mnt/skills', host_path: 'skills' }])).rejects.toThrow(
      /host_path "skills" is not an absolute path/,
    );
  });

  it('lists the way down to the mounts, and rewrites paths for host bash both ways', async () => {
    const found = await mountsInUse(mounts);
    // The empty mount (no custom folder) is not there, as in the sandboxes.
    expect(entriesAboveMounts(found, '/mnt/skills')).toEqual(['public']);
    expect(entriesAboveMounts(found, '/mnt')).toEqual(['skills']);
    expect(entriesAboveMounts(found, '/etc')).toBeUndefined();
    const host = path.join(fx.root, 'skills', 'public');
    expect(
      hostCommand('cat /mnt/skills/public/demo/SKILL.md /mnt/skills/publicity x/mnt/skills/public', found),
    ).toBe(`cat ${host}/demo/SKILL.md /mnt/skills/publicity x/mnt/skills/public`);
    // The empty mount's paths stay as written (and are not found).
    expect(hostCommand('ls /mnt/skills/custom', found)).toBe('ls /mnt/skills/custom');
    expect(containerOutput(`${host}/demo/SKILL.md\n`, found)).toBe('/mnt/skills/public/demo/SKILL.md\n');
  });
});

describe('file tools under a skill mount', () => {
  it('read_file and ls read the mount folder at its container path', async () => {
    const read = await tool('read_file', { path: '/mnt/skills/public/demo/SKILL.md' });
    expect(read).toMatchObject({ is_error: false });
    expect(read.content).toContain('name: demo');
    expect(await tool('ls', { path: '/mnt/skills/public' })).toMatchObject({
      content: 'demo/',
      is_error: false,
    });
    expect(await tool('ls', { path: '/mnt/skills' })).toMatchObject({ content: 'public/', is_error: false });
    // A relative path that lands in a mount is the same path.
    const relative = path.relative(fx.workspace, '/mnt/skills/public/demo/SKILL.md');
    expect(await tool('read_file', { path: relative })).toMatchObject({ is_error: false });
  });

  it('says a missing file is missing in the mount, and a mount without a folder is not there', async () => {
    expect(await tool('read_file', { path: '/mnt/skills/public/nope/SKILL.md' })).toEqual(
      expect.objectContaining({
        is_error: true,
        content: '"/mnt/skills/public/nope/SKILL.md" does not exist in /mnt/skills/public',
      }),
    );
    const empty = await tool('ls', { path: '/mnt/skills/custom' });
    expect(empty.is_error).toBe(true);
    expect(empty.content).toContain('no skills folder is mounted at /mnt/skills/custom');
  });

  it('confines reads to the mount folder: no .. and no symbolic link out of it', async () => {
    await symlink(fx.outside, path.join(fx.root, 'skills', 'public', 'demo', 'escape'));
    const linked = await tool('read_file', { path: '/mnt/skills/public/demo/escape/secret.txt' });
    expect(linked).toMatchObject({ is_error: true });
    expect(linked.content).toContain('leads outside /mnt/skills/public through a symbolic link');
    // `..` leaves the mount's container path, and with it the mount: then it is outside the workspace.
    const dotdot = await tool('read_file', { path: '/mnt/skills/public/../../../etc/passwd' });
    expect(dotdot).toMatchObject({ is_error: true });
    expect(dotdot.content).toContain('is outside the workspace');
  });

  it.each([
    ['write_file', { path: '/mnt/skills/public/demo/SKILL.md', content: 'changed' }],
    ['write_file', { path: '/mnt/skills/public/demo/new.md', content: 'new' }],
    ['write_file', { path: '/mnt/skills/custom/mine/SKILL.md', content: 'new' }],
    ['str_replace', { path: '/mnt/skills/public/demo/SKILL.md', old_str: 'Run', new_str: 'Skip' }],
    ['write_file', { path: '/mnt/skills/new-skill/SKILL.md', content: 'new' }],
  ])('%s under a mount is refused as read-only (%j)', async (name, args) => {
    const result = await tool(name, args);
    expect(result.is_error).toBe(true);
    expect(result.content).toContain(SKILLS_READ_ONLY);
    expect(await readFile(skillFile(), 'utf8')).toBe(SKILL_TEXT);
    expect(existsSync(path.join(fx.root, 'skills', 'public', 'demo', 'new.md'))).toBe(false);
    expect(existsSync(path.join(fx.root, 'skills', 'users'))).toBe(false);
  });

  it('leaves the workspace as it was: its paths read and write as before', async () => {
    expect(await tool('write_file', { path: 'notes.md', content: 'mine\n' })).toMatchObject({
      is_error: false,
    });
    expect(await tool('read_file', { path: 'notes.md' })).toMatchObject({ is_error: false });
  });
});

describeEachSandbox('bash with skill mounts', (sandbox) => {
  const bash = (command: string) => tool('bash', { command }, { kind: sandbox.kind });

  it('reads the skills at their container paths', async () => {
    const result = await bash('cat /mnt/skills/public/demo/SKILL.md && ls /mnt/skills');
    // The user's custom folder is missing: nothing is mounted there.
    expect(result.content).toBe(`${SKILL_TEXT}public\n[exit code: 0]`);
    // A skill's file copied into the workspace is the workspace's to change.
    const copied = await bash('cp /mnt/skills/public/demo/SKILL.md copy.md && echo more >> copy.md');
    expect(copied.content).toBe('(no output)\n[exit code: 0]');
    expect(await readFile(path.join(fx.workspace, 'copy.md'), 'utf8')).toBe(`${SKILL_TEXT}more\n`);
  });

  it.each([
    'echo changed > /mnt/skills/public/demo/SKILL.md',
    'echo more >> /mnt/skills/public/demo/SKILL.md',
    'touch /mnt/skills/public/demo/new.md',
    'rm /mnt/skills/public/demo/SKILL.md',
    'mkdir /mnt/skills/public/more',
    'mv /mnt/skills/public/demo/SKILL.md /mnt/skills/public/demo/new.md',
    'cp /mnt/skills/public/demo/SKILL.md /mnt/skills/public/demo/new.md',
  ])('cannot change, add or remove a skill file: %s', async (command) => {
    const result = await bash(command);
    expect(result.content).toMatch(/read-only file system/i);
    expect(result.content).not.toMatch(/\[exit code: 0\]$/);
    expect(await readFile(skillFile(), 'utf8')).toBe(SKILL_TEXT);
    expect(existsSync(path.join(fx.root, 'skills', 'public', 'demo', 'new.md'))).toBe(false);
    expect(existsSync(path.join(fx.root, 'skills', 'public', 'more'))).toBe(false);
  });

  it('does not follow a link out of the skills folder', async () => {
    await symlink(path.join(fx.outside, 'secret.txt'), path.join(fx.root, 'skills', 'public', 'demo', 'out'));
    const result = await bash('cat /mnt/skills/public/demo/out');
    expect(result.content).not.toContain('outside the skills');
  });
});

describe('host bash with skill mounts (allow_host_bash: unsandboxed)', () => {
  const host: Partial<SandboxSettings> = { kind: 'host', allow_host_bash: true };

  it('reads the skills by their container paths, rewritten to the host folders, and shows those paths back', async () => {
    const result = await tool(
      'bash',
      { command: 'cat /mnt/skills/public/demo/SKILL.md; ls -d /mnt/skills/public/demo' },
      host,
    );
    expect(result.content).toBe(`${SKILL_TEXT}/mnt/skills/public/demo\n[exit code: 0]`);
  });

  it('still refuses writes through the file tools', async () => {
    const result = await tool('write_file', { path: '/mnt/skills/public/demo/SKILL.md', content: 'x' }, host);
    expect(result.content).toContain(SKILLS_READ_ONLY);
  });
});
