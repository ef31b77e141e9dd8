/**
 * Skill packages' front matter as DeerFlow writes it, every way one can be malformed (each with the reason a
 * skill author reads), and which skills one agent of one user gets from a catalog.
 */
import { parseSkillFrontMatter } from '../../../contracts/skill-front-matter';
import {
  resolveSkills,
  skillNameProblem,
  userIdProblem,
  userSkills,
  type SkillCatalog,
  type SkillEntry,
} from '../../../contracts/skills';

const skillText = (front: string, body = '# Body\n') => `---\n${front}\n---\n${body}`;

describe('SKILL.md front matter', () => {
  it('reads name, description, license, allowed-tools and required-secrets', () => {
    const result = parseSkillFrontMatter(
      skillText(
        'name: csv-summary\ndescription: "Summarize a CSV: rows and columns."\nlicense: MIT\n' +
          'allowed-tools: [bash, " read_file "]\nrequired-secrets:\n  - GITHUB_TOKEN',
      ),
    );
    expect(result).toEqual({
      ok: true,
      front_matter: {
        name: 'csv-summary',
        description: 'Summarize a CSV: rows and columns.',
        license: 'MIT',
        allowed_tools: ['bash', 'read_file'],
        required_secrets: ['GITHUB_TOKEN'],
      },
      warnings: [],
    });
  });

  it('tells an absent allowed-tools (no restriction) from an empty one (no tools)', () => {
    const open = parseSkillFrontMatter(skillText('name: a\ndescription: d'));
    const closed = parseSkillFrontMatter(skillText('name: a\ndescription: d\nallowed-tools: []'));
    expect(open.ok && open.front_matter.allowed_tools).toBeUndefined();
    expect(closed.ok && closed.front_matter.allowed_tools).toEqual([]);
  });

  it('takes CRLF line ends, a byte-order mark, and a file that is front matter alone', () => {
    for (const text of [
      '---\r\nname: a\r\ndescription: d\r\n---\r\nbody',
      '\uFEFF---\nname: a\ndescription: d\n---\n',
      '---\nname: a\ndescription: d\n---',
    ]) {
      expect(parseSkillFrontMatter(text)).toMatchObject({ ok: true, front_matter: { name: 'a' } });
    }
  });

  it('reports keys it does not read, and still reads the skill', () => {
    const result = parseSkillFrontMatter(skillText('name: a\ndescription: d\nallowed_tools: [bash]'));
    expect(result).toMatchObject({
      ok: true,
      warnings: ['has front matter keys this project does not read: allowed_tools'],
    });
  });

  it.each([
    ['no front matter', '# Just a heading\n', 'has no front matter'],
    ['front matter not at the top', '\n---\nname: a\ndescription: d\n---\n', 'has no front matter'],
    ['no closing line', '---\nname: a\ndescription: d\n', 'has no closing --- line'],
    ['bad YAML', skillText('name: a\ndescription: [unclosed'), 'has front matter that is not valid YAML'],
    ['a list, not a mapping', skillText('- name\n- description'), 'is not a mapping'],
    ['empty front matter', '---\n---\n', 'is not a mapping'],
    ['no name', skillText('description: d'), 'has no name in its front matter'],
    ['a name that is not text', skillText('name: 12\ndescription: d'), 'has a name that is not text'],
    ['a name in capitals', skillText('name: CsvSummary\ndescription: d'), 'is not a skill name'],
    ['a name with a slash', skillText('name: ../x\ndescription: d'), 'is not a skill name'],
    ['no description', skillText('name: a'), 'has no description'],
    ['an empty description', skillText('name: a\ndescription: "  "'), 'has an empty description'],
    ['angle brackets', skillText('name: a\ndescription: "use <b>this</b>"'), 'with < or >'],
    ['a long description', skillText(`name: a\ndescription: ${'x'.repeat(1025)}`), 'over 1024 characters'],
    [
      'allowed-tools as text',
      skillText('name: a\ndescription: d\nallowed-tools: bash'),
      'allowed-tools is not a list',
    ],
    ['an empty tool name', skillText('name: a\ndescription: d\nallowed-tools: [""]'), 'not a name'],
    [
      'a secret that is no variable name',
      skillText('name: a\ndescription: d\nrequired-secrets: [github-token]'),
      'is not an environment variable name',
    ],
  ])('refuses %s, saying why', (_case, text, reason) => {
    const result = parseSkillFrontMatter(text);
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.reason).toContain(reason);
  });

  it('refuses a YAML alias bomb without expanding it', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 10; i += 1)
      bomb.push(
        `a${i}: &a${i} [${Array(10)
          .fill(i === 1 ? '*a' : `*a${i - 1}`)
          .join(', ')}]`,
      );
    const result = parseSkillFrontMatter(skillText(`name: a\ndescription: d\n${bomb.join('\n')}`));
    expect(result.ok).toBe(false);
  });
});

describe('names', () => {
  it.each(['a', 'csv-summary', 'x2', 'a'.repeat(64)])('takes skill name %j', (name) => {
    expect(skillNameProblem(name)).toBeUndefined();
  });
  it.each(['', 'A', 'a--b', '-a', 'a-', 'a_b', 'a b', 'a/b', 'a'.repeat(65)])(
    'refuses skill name %j',
    (name) => {
      expect(skillNameProblem(name)).toBeDefined();
    },
  );
  it.each(['default', 'alice', 'user_7', 'a.b-c'])('takes user id %j', (id) => {
    expect(userIdProblem(id)).toBeUndefined();
  });
  it.each(['', '.', '..', '.hidden', '-x', 'a/b', 'a b', 'ü', 'x'.repeat(129)])(
    'refuses user id %j',
    (id) => {
      expect(userIdProblem(id)).toBeDefined();
    },
  );
});

function entry(name: string, category: 'public' | 'custom', enabled = true): SkillEntry {
  return {
    name,
    description: `${category} ${name}`,
    category,
    folder: name,
    container_path: `/mnt/skills/${category}/${name}/SKILL.md`,
    host_path: `/host/${category}/${name}/SKILL.md`,
    required_secrets: [],
    enabled,
    content_hash: `sha256:${category}-${name}`,
  };
}

describe('resolveSkills', () => {
  const catalog: SkillCatalog = {
    root: '/host',
    container_path: '/mnt/skills',
    public: [entry('report', 'public'), entry('csv', 'public'), entry('off', 'public', false)],
    custom: { alice: [entry('csv', 'custom'), entry('mine', 'custom')] },
    problems: [],
  };
  const names = (skills: SkillEntry[]) => skills.map((skill) => `${skill.category}:${skill.name}`);

  it("lays a user's custom skill over the public one of the same name, for that user only", () => {
    expect(names(resolveSkills(catalog, 'alice', undefined).skills)).toEqual([
      'custom:csv',
      'custom:mine',
      'public:report',
    ]);
    expect(names(resolveSkills(catalog, 'bob', undefined).skills)).toEqual(['public:csv', 'public:report']);
  });

  it('gives every enabled skill without a list, none for [], and the named ones for names', () => {
    expect(names(resolveSkills(catalog, 'bob', []).skills)).toEqual([]);
    expect(resolveSkills(catalog, 'bob', ['report'])).toEqual({ skills: [catalog.public[0]], missing: [] });
  });

  it('leaves out disabled skills, even when the list names them, and says which names found nothing', () => {
    expect(resolveSkills(catalog, 'bob', ['off', 'report', 'mine'])).toEqual({
      skills: [catalog.public[0]],
      missing: ['off', 'mine'],
    });
  });

  it('shows a user every package, disabled ones included', () => {
    expect(names(userSkills(catalog, 'bob'))).toEqual(['public:csv', 'public:off', 'public:report']);
  });
});
