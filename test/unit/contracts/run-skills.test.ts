/**
 * A run's skills, the pure rules: the prompt blocks (`<available_skills>`, `<skill_index>`), `describe_skill`,
 * activation (a `/name` prompt, a read of a SKILL.md) and the `allowed-tools` policy with the secrets it grants.
 */
import type { ToolCall } from '../../../contracts/messages';
import {
  describeSkills,
  screenCalls,
  skillRefusal,
  skillsPromptBlock,
  skillToolPolicy,
  slashSkill,
  type ActiveSkill,
  type SnapshotSkill,
} from '../../../contracts/run-skills';
import type { SealedSecret } from '../../../contracts/secrets';

const entry = (name: string, extra: Partial<SnapshotSkill> = {}): SnapshotSkill => ({
  name,
  description: `The ${name} skill.`,
  category: 'public',
  container_path: `/mnt/skills/public/${name}/SKILL.md`,
  content_hash: `sha256:${name}`,
  required_secrets: [],
  ...extra,
});

const csv = entry('csv-summary', { allowed_tools: ['read_file'], required_secrets: ['WAREHOUSE_TOKEN'] });
const brief = entry('incident-brief');
const shell = entry('shell-helper', { allowed_tools: ['bash', 'ls'] });
const skills = [shell, csv, brief];

let ids = 0;
const call = (name: string, args: Record<string, unknown> = {}): ToolCall => ({
  id: `c${++ids}`,
  name,
  args: JSON.stringify(args),
});
const readSkill = (skill: SnapshotSkill) => call('read_file', { path: skill.container_path });
const sealed = (name: string): SealedSecret => ({ name, key_id: 'k1', sealed: 'AAAA' });

describe('skillsPromptBlock', () => {
  it('lists every skill by name with its description and path, sorted by name', () => {
    const block = skillsPromptBlock(skills, false)!;
    expect(block.startsWith('<available_skills>\n<skill>\n<name>csv-summary</name>')).toBe(true);
    expect(block).toContain('<description>The csv-summary skill.</description>');
    expect(block).toContain('<location>/mnt/skills/public/csv-summary/SKILL.md</location>');
    const order = ['csv-summary', 'incident-brief', 'shell-helper'].map((name) =>
      block.indexOf(`<name>${name}</name>`),
    );
    expect(order).toEqual([...order].sort((a, b) => a - b));
    // The same input, the same block: the prompt's prefix is stable.
    expect(skillsPromptBlock([...skills].reverse(), false)).toBe(block);
  });

  it('gives names only in a skill index when discovery is deferred, and no block without skills', () => {
    const block = skillsPromptBlock(skills, true)!;
    expect(block).toMatch(/^<skill_index>\n- csv-summary\n- incident-brief\n- shell-helper\n<\/skill_index>/);
    expect(block).not.toContain('The csv-summary skill.');
    expect(block).toContain('describe_skill');
    expect(skillsPromptBlock([], false)).toBeUndefined();
    expect(skillsPromptBlock([], true)).toBeUndefined();
  });
});

describe('describeSkills', () => {
  it('answers a name with its description, path and allowed tools', () => {
    const answer = describeSkills(skills, call('describe_skill', { query: 'csv-summary' }));
    expect(answer).toMatchObject({ role: 'tool', name: 'describe_skill', is_error: false });
    expect(answer.content).toBe(
      [
        'name: csv-summary',
        'description: The csv-summary skill.',
        'read it at: /mnt/skills/public/csv-summary/SKILL.md',
        'allowed-tools: read_file',
      ].join('\n'),
    );
    expect(describeSkills(skills, call('describe_skill', { name: 'incident-brief' })).content).toContain(
      'allowed-tools: any',
    );
  });

  it('matches words against names and descriptions, and says when nothing matches', () => {
    expect(describeSkills(skills, call('describe_skill', { query: 'Helper skill' })).content).toMatch(
      /^name: shell-helper/,
    );
    const none = describeSkills(skills, call('describe_skill', { query: 'kubernetes' }));
    expect(none.content).toBe(
      'No skill matches "kubernetes". Skills: csv-summary, incident-brief, shell-helper',
    );
    expect(describeSkills(skills, { id: 'x', name: 'describe_skill', args: '{' }).is_error).toBe(true);
    expect(describeSkills(skills, call('describe_skill', {})).is_error).toBe(true);
  });
});

describe('activation', () => {
  it('activates a skill by a /name prompt, only when it is one of the agent’s', () => {
    expect(slashSkill('/csv-summary summarize stock.csv', skills)).toBe('csv-summary');
    expect(slashSkill('  /incident-brief', skills)).toBe('incident-brief');
    expect(slashSkill('/csv-summary-extra go', skills)).toBeUndefined();
    expect(slashSkill('/other go', skills)).toBeUndefined();
    expect(slashSkill('please /csv-summary', skills)).toBeUndefined();
  });

  it('activates a skill when its SKILL.md is read, a file of another skill activates nothing', () => {
    const { screened, active } = screenCalls(
      [
        call('read_file', { path: '/mnt//skills/public/./csv-summary/SKILL.md' }),
        call('read_file', { path: '/mnt/skills/public/other/SKILL.md' }),
        call('read_file', { path: 'notes.txt' }),
      ],
      [],
      skills,
      undefined,
    );
    expect(screened).toEqual([{ activated: 'csv-summary' }, {}, {}]);
    expect(active).toEqual([{ name: 'csv-summary', by: 'read' }]);
  });
});

describe('the allowed-tools policy', () => {
  const byRead = (...names: string[]): ActiveSkill[] => names.map((name) => ({ name, by: 'read' }));

  it('restricts nothing while no active skill declares allowed-tools', () => {
    expect(skillToolPolicy([], skills)).toBeUndefined();
    expect(skillToolPolicy(byRead('incident-brief'), skills)).toBeUndefined();
  });

  it('allows the union of the declared lists; an unrestricted skill does not widen it', () => {
    expect(skillToolPolicy(byRead('csv-summary', 'shell-helper', 'incident-brief'), skills)).toEqual({
      allowed: ['read_file', 'bash', 'ls'],
      by: ['csv-summary', 'shell-helper'],
    });
  });

  it('lets a slash-activated skill dominate', () => {
    const active: ActiveSkill[] = [
      { name: 'incident-brief', by: 'slash' },
      { name: 'csv-summary', by: 'read' },
    ];
    expect(skillToolPolicy(active, skills)).toBeUndefined();
    expect(
      skillToolPolicy([{ name: 'shell-helper', by: 'slash' }, ...byRead('csv-summary')], skills),
    ).toEqual({ allowed: ['bash', 'ls'], by: ['shell-helper'] });
  });

  it('refuses a tool off the list with a clear message, and always allows reading a skill', () => {
    const policy = skillToolPolicy(byRead('csv-summary'), skills);
    expect(skillRefusal(call('bash', { command: 'ls' }), policy, skills)).toBe(
      'Tool bash is not allowed while skill csv-summary is active (allowed-tools: read_file)',
    );
    expect(skillRefusal(call('task'), policy, skills)).toMatch(/^Tool task is not allowed/);
    expect(skillRefusal(readSkill(shell), policy, skills)).toBeUndefined();
    expect(skillRefusal(call('describe_skill', { query: 'x' }), policy, skills)).toBeUndefined();
    expect(skillRefusal(call('read_file', { path: 'a.txt' }), policy, skills)).toBeUndefined();
    const two = skillToolPolicy(byRead('csv-summary', 'shell-helper'), skills);
    expect(skillRefusal(call('write_file'), two, skills)).toBe(
      'Tool write_file is not allowed while skills csv-summary, shell-helper are active (allowed-tools: read_file, bash, ls)',
    );
  });

  it('judges each call by the skills active before it, in the model’s order', () => {
    const { screened, active } = screenCalls(
      [call('bash', { command: 'date' }), readSkill(csv), call('bash', { command: 'date' })],
      [],
      skills,
      undefined,
    );
    expect(screened[0]).toEqual({});
    expect(screened[1]).toEqual({ activated: 'csv-summary' });
    expect(screened[2].refusal).toMatchObject({
      role: 'tool',
      name: 'bash',
      is_error: true,
      content: 'Tool bash is not allowed while skill csv-summary is active (allowed-tools: read_file)',
    });
    expect(active).toEqual([{ name: 'csv-summary', by: 'read' }]);
  });
});

describe('secrets for bash', () => {
  const secrets = [sealed('WAREHOUSE_TOKEN'), sealed('OTHER_TOKEN')];

  it('gives bash only the secrets an active skill declares, and none before it is active', () => {
    const restricted = skills.map((skill) =>
      skill.name === 'shell-helper' ? { ...skill, required_secrets: ['WAREHOUSE_TOKEN'] } : skill,
    );
    const before = screenCalls([call('bash', { command: 'env' })], [], restricted, secrets);
    expect(before.screened).toEqual([{}]);
    const after = screenCalls(
      [call('bash', { command: 'env' })],
      [{ name: 'shell-helper', by: 'read' }],
      restricted,
      secrets,
    );
    expect(after.screened).toEqual([{ secrets: [sealed('WAREHOUSE_TOKEN')] }]);
    const noSecrets = screenCalls(
      [call('bash', { command: 'env' })],
      [{ name: 'shell-helper', by: 'read' }],
      restricted,
      undefined,
    );
    expect(noSecrets.screened).toEqual([{}]);
  });
});
