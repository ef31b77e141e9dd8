/**
 * `loadRunSkills`: one agent's snapshot of real folders — a user's custom skill shadowing the public one for
 * that user only, the agent's list applied, the folders the tools mount, and a catalog that cannot be read
 * giving no skills with its reason.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadRunSkills } from '../../../../activities/skills/run-skills';

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

const skill = (name: string, description: string, extra = '') =>
  `---\nname: ${name}\ndescription: ${description}\n${extra}---\n# ${name}\n`;

function skillsFolder(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'run-skills-'));
  for (const [path, text] of Object.entries(files)) write(join(root, path), text);
  return root;
}

describe('loadRunSkills', () => {
  const root = skillsFolder({
    'public/a/SKILL.md': skill('a', 'Public a.', 'allowed-tools: [read_file]\n'),
    'public/b/SKILL.md': skill('b', 'Public b.', 'required-secrets: [B_TOKEN]\n'),
    'users/alice/custom/my-a/SKILL.md': skill('a', 'Alice a.'),
  });
  const load = (user: string, skills?: string[]) =>
    loadRunSkills({ root, container_path: '/mnt/skills', user_id: user, ...(skills && { skills }) });

  it('gives alice her own a, in place of the public one, and bob the public one', () => {
    const alice = load('alice');
    expect(alice.skills.map((s) => [s.name, s.category, s.description, s.container_path])).toEqual([
      ['a', 'custom', 'Alice a.', '/mnt/skills/custom/my-a/SKILL.md'],
      ['b', 'public', 'Public b.', '/mnt/skills/public/b/SKILL.md'],
    ]);
    expect(alice.mounts).toEqual([
      { container_path: '/mnt/skills/public', host_path: join(root, 'public') },
      { container_path: '/mnt/skills/custom', host_path: join(root, 'users', 'alice', 'custom') },
    ]);
    const bob = load('bob');
    expect(bob.skills.map((s) => [s.name, s.description])).toEqual([
      ['a', 'Public a.'],
      ['b', 'Public b.'],
    ]);
    expect(bob.skills[0]).toMatchObject({
      allowed_tools: ['read_file'],
      content_hash: expect.stringMatching(/^sha256:/),
    });
    expect(bob.skills[1].required_secrets).toEqual(['B_TOKEN']);
    expect(bob.mounts).toEqual([{ container_path: '/mnt/skills/public', host_path: join(root, 'public') }]);
  });

  it('applies the agent’s list, and names what it asks for that is not there', () => {
    expect(load('bob', ['a']).skills.map((s) => s.name)).toEqual(['a']);
    expect(load('bob', []).skills).toEqual([]);
    expect(load('bob', ['a', 'zed']).problems).toEqual([
      "zed: named in the agent's skills, but no enabled skill has this name",
    ]);
  });

  it('gives no skills for a missing folder, and none with the reason for a catalog it cannot read', () => {
    expect(
      loadRunSkills({ root: join(root, 'nope'), container_path: '/mnt/skills', user_id: 'bob' }),
    ).toEqual({
      skills: [],
      mounts: [],
      problems: [],
    });
    const twice = skillsFolder({
      'public/one/SKILL.md': skill('same', 'One.'),
      'public/two/SKILL.md': skill('same', 'Two.'),
    });
    const snapshot = loadRunSkills({ root: twice, container_path: '/mnt/skills', user_id: 'bob' });
    expect(snapshot.skills).toEqual([]);
    expect(snapshot.problems).toEqual([
      'skills not loaded: same: public skills have two packages of this name (public/one, public/two); rename one',
    ]);
  });
});
