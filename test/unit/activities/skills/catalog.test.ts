/**
 * The skill catalog read from real folders: packages found, malformed ones left out with one problem line each
 * (file and reason), nested SKILL.md files kept inside their package, duplicate names refused, custom skills
 * per user, enabled state from extensions_config.json, and a content hash that follows the package's files.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ConfigError } from '../../../../contracts/config';
import { parseConfig } from '../../../../contracts/config';
import { resolveSkills } from '../../../../contracts/skills';
import { loadSkillCatalog, readSkillStates, skillsRoot } from '../../../../activities/skills/catalog';

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

const skill = (name: string, extra = '') =>
  `---\nname: ${name}\ndescription: The ${name} skill.\n${extra}---\n# ${name}\n`;

function skillsFolder(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'skills-catalog-'));
  for (const [path, text] of Object.entries(files)) write(join(root, path), text);
  return root;
}

describe('the skill catalog', () => {
  it('reads public packages with their paths, front matter and hash, in name order', () => {
    const root = skillsFolder({
      'public/zeta/SKILL.md': skill('zeta'),
      'public/alpha/SKILL.md': skill(
        'alpha',
        'license: MIT\nallowed-tools: [bash]\nrequired-secrets: [API_TOKEN]\n',
      ),
      'public/alpha/scripts/run.sh': 'echo hi\n',
      'public/README.md': 'not a package',
      'public/.git/SKILL.md': skill('hidden'),
    });
    const catalog = loadSkillCatalog(root, '/mnt/skills');
    expect(catalog.problems).toEqual([]);
    expect(catalog.public.map((entry) => entry.name)).toEqual(['alpha', 'zeta']);
    expect(catalog.public[0]).toEqual({
      name: 'alpha',
      description: 'The alpha skill.',
      category: 'public',
      folder: 'alpha',
      container_path: '/mnt/skills/public/alpha/SKILL.md',
      host_path: join(root, 'public', 'alpha', 'SKILL.md'),
      license: 'MIT',
      allowed_tools: ['bash'],
      required_secrets: ['API_TOKEN'],
      enabled: true,
      content_hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
  });

  it('leaves out each malformed package with one line naming its file and the reason', () => {
    const root = skillsFolder({
      'public/good/SKILL.md': skill('good'),
      'public/plain/SKILL.md': '# No front matter\n',
      'public/nameless/SKILL.md': '---\ndescription: d\n---\n',
      'public/mute/SKILL.md': '---\nname: mute\n---\n',
      'public/broken/SKILL.md': '---\nname: broken\ndescription: [oops\n---\n',
      'public/empty/notes.md': 'no SKILL.md here',
      'public/binary/SKILL.md': '\xff\xfe',
    });
    writeFileSync(join(root, 'public', 'binary', 'SKILL.md'), Buffer.from([0xff, 0xfe, 0x00]));
    const catalog = loadSkillCatalog(root, '/mnt/skills');
    expect(catalog.public.map((entry) => entry.name)).toEqual(['good']);
    expect(catalog.problems).toEqual([
      'public/binary/SKILL.md: is not UTF-8 text (skipped)',
      expect.stringMatching(
        /^public\/broken\/SKILL\.md: has front matter that is not valid YAML \(.+\) \(skipped\)$/,
      ),
      'public/empty/SKILL.md: is missing (a skill is a folder with SKILL.md at its top) (skipped)',
      'public/mute/SKILL.md: has no description in its front matter (skipped)',
      'public/nameless/SKILL.md: has no name in its front matter (skipped)',
      expect.stringMatching(/^public\/plain\/SKILL\.md: has no front matter .* \(skipped\)$/),
    ]);
  });

  it('keeps a nested SKILL.md inside its package: one skill, whose hash covers it', () => {
    const root = skillsFolder({
      'public/outer/SKILL.md': skill('outer'),
      'public/outer/examples/inner/SKILL.md': skill('inner'),
    });
    const before = loadSkillCatalog(root, '/mnt/skills');
    expect(before.public.map((entry) => entry.name)).toEqual(['outer']);
    write(join(root, 'public/outer/examples/inner/SKILL.md'), skill('inner', 'license: MIT\n'));
    const after = loadSkillCatalog(root, '/mnt/skills');
    expect(after.public[0].content_hash).not.toBe(before.public[0].content_hash);
  });

  it('hashes the package: the same files give the same hash, a renamed or changed file another', () => {
    const files = { 'public/a/SKILL.md': skill('a'), 'public/a/data/x.txt': 'x' };
    const hash = (root: string) => loadSkillCatalog(root, '/mnt/skills').public[0].content_hash;
    const one = skillsFolder(files);
    const two = skillsFolder(files);
    expect(hash(one)).toBe(hash(two));
    renameSync(join(two, 'public/a/data/x.txt'), join(two, 'public/a/data/y.txt'));
    expect(hash(two)).not.toBe(hash(one));
    write(join(one, 'public/a/data/x.txt'), 'changed');
    expect(hash(one)).not.toBe(hash(skillsFolder(files)));
  });

  it('hashes a link inside a package by its target, without following it', () => {
    const outside = mkdtempSync(join(tmpdir(), 'skills-outside-'));
    write(join(outside, 'one.txt'), 'one');
    write(join(outside, 'two.txt'), 'two');
    const root = skillsFolder({ 'public/a/SKILL.md': skill('a') });
    const link = join(root, 'public/a/data');
    symlinkSync(join(outside, 'one.txt'), link);
    const hash = () => loadSkillCatalog(root, '/mnt/skills').public[0].content_hash;
    const catalog = loadSkillCatalog(root, '/mnt/skills');
    expect(catalog.public).toHaveLength(1);
    expect(catalog.problems).toEqual([]);
    const first = hash();
    // The file behind the same target changes: not followed, the hash stays.
    write(join(outside, 'one.txt'), 'one, changed');
    expect(hash()).toBe(first);
    // The link points elsewhere: the hash changes.
    rmSync(link);
    symlinkSync(join(outside, 'two.txt'), link);
    expect(hash()).not.toBe(first);
  });

  it('refuses two packages of one name in one category, naming both folders', () => {
    const root = skillsFolder({
      'public/report/SKILL.md': skill('report'),
      'public/report-v2/SKILL.md': skill('report'),
    });
    expect(() => loadSkillCatalog(root, '/mnt/skills')).toThrow(ConfigError);
    expect(() => loadSkillCatalog(root, '/mnt/skills')).toThrow(
      'report: public skills have two packages of this name (public/report, public/report-v2); rename one',
    );
  });

  it("reads each user's custom skills; a custom skill shadows a public one for its user alone", () => {
    const root = skillsFolder({
      'public/report/SKILL.md': skill('report'),
      'public/csv/SKILL.md': skill('csv'),
      'users/alice/custom/report/SKILL.md': skill('report', 'allowed-tools: [read_file]\n'),
      'users/bob/notes.txt': 'no custom folder',
    });
    const catalog = loadSkillCatalog(root, '/mnt/skills');
    expect(Object.keys(catalog.custom)).toEqual(['alice']);
    const alice = resolveSkills(catalog, 'alice', undefined).skills;
    expect(alice.map((entry) => [entry.name, entry.category, entry.container_path])).toEqual([
      ['csv', 'public', '/mnt/skills/public/csv/SKILL.md'],
      ['report', 'custom', '/mnt/skills/custom/report/SKILL.md'],
    ]);
    const bob = resolveSkills(catalog, 'bob', undefined).skills;
    expect(bob.map((entry) => [entry.name, entry.category])).toEqual([
      ['csv', 'public'],
      ['report', 'public'],
    ]);
  });

  it('reads only the users asked for; an unusable user id is refused', () => {
    const root = skillsFolder({
      'users/alice/custom/a/SKILL.md': skill('a'),
      'users/bob/custom/b/SKILL.md': skill('b'),
    });
    expect(Object.keys(loadSkillCatalog(root, '/mnt/skills', { users: ['bob', 'carol'] }).custom)).toEqual([
      'bob',
    ]);
    expect(() => loadSkillCatalog(root, '/mnt/skills', { users: ['../alice'] })).toThrow(
      /user id "\.\.\/alice"/,
    );
  });

  it('says that a custom/ folder at the top and unusable user folders are not read', () => {
    const root = skillsFolder({
      'custom/old/SKILL.md': skill('old'),
      'users/with space/custom/x/SKILL.md': skill('x'),
    });
    const catalog = loadSkillCatalog(root, '/mnt/skills');
    expect(catalog.custom).toEqual({});
    expect(catalog.problems).toEqual([
      'custom/: not read (custom skills belong to a user: users/<user_id>/custom/<name>/SKILL.md)',
      'users/with space/: not read (not a usable user id)',
    ]);
  });

  it('refuses two custom packages of one name for one user', () => {
    const root = skillsFolder({
      'users/alice/custom/x/SKILL.md': skill('dup'),
      'users/alice/custom/y/SKILL.md': skill('dup'),
    });
    expect(() => loadSkillCatalog(root, '/mnt/skills')).toThrow(
      "dup: user alice's custom skills have two packages of this name",
    );
  });

  it('is empty, without problems, when the folder does not exist', () => {
    expect(loadSkillCatalog(join(tmpdir(), 'no-such-skills-folder'), '/mnt/skills')).toMatchObject({
      public: [],
      custom: {},
      problems: [],
    });
  });
});

describe('enabled state from extensions_config.json', () => {
  const root = skillsFolder({
    'public/on/SKILL.md': skill('on'),
    'public/off/SKILL.md': skill('off'),
    'users/alice/custom/mine/SKILL.md': skill('mine'),
  });

  it('switches off the skills its skills object says, custom ones too; the rest stay on', () => {
    const file = join(root, 'extensions_config.json');
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {},
        skills: { off: { enabled: false }, on: { enabled: true }, mine: { enabled: false }, ghost: {} },
      }),
    );
    const states = readSkillStates(file);
    const catalog = loadSkillCatalog(root, '/mnt/skills', { states, statesFile: file });
    expect(catalog.public.map((entry) => [entry.name, entry.enabled])).toEqual([
      ['off', false],
      ['on', true],
    ]);
    expect(catalog.custom.alice[0].enabled).toBe(false);
    expect(resolveSkills(catalog, 'alice', undefined).skills.map((entry) => entry.name)).toEqual(['on']);
    expect(catalog.problems).toEqual([
      `extensions_config ${file}: skills names no skill package here: ghost`,
    ]);
  });

  it('has every skill enabled without a file, and refuses a bad one naming it', () => {
    expect(readSkillStates(undefined)).toEqual({});
    const file = join(root, 'bad.json');
    writeFileSync(file, JSON.stringify({ skills: { off: { enabled: 'no' } } }));
    expect(() => readSkillStates(file)).toThrow(ConfigError);
    expect(() => readSkillStates(file)).toThrow(`extensions_config ${file} has 1 problem:`);
    expect(() => readSkillStates(join(root, 'missing.json'))).toThrow('does not exist');
  });
});

describe('skills.path', () => {
  it("is taken from the config file's folder, or the working folder without a file", () => {
    const settings = parseConfig({ skills: { path: 'packs' } }).config.skills;
    expect(skillsRoot(settings, '/etc/agents/config.yaml', '/home/me')).toBe('/etc/agents/packs');
    expect(skillsRoot(settings, undefined, '/home/me')).toBe('/home/me/packs');
    expect(skillsRoot(parseConfig({}).config.skills, '/srv/config.yaml')).toBe('/srv/skills');
  });
});
