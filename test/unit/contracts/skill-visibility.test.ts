/**
 * Issue 46, item 5: what an active skill's `allowed-tools` leaves the model (not only what it refuses), which
 * tools count as reading a SKILL.md, `tool_search` under a restricting skill, and the reminder compaction keeps.
 */
import type { ToolCall } from '../../../contracts/messages';
import {
  activeSkillsReminder,
  screenCalls,
  skillMcpFilter,
  skillToolPolicy,
  skillVisibleTools,
  type SnapshotSkill,
} from '../../../contracts/run-skills';

const entry = (name: string, extra: Partial<SnapshotSkill> = {}): SnapshotSkill => ({
  name,
  description: `The ${name} skill.`,
  category: 'public',
  container_path: `/mnt/skills/public/${name}/SKILL.md`,
  content_hash: `sha256:${name}`,
  required_secrets: [],
  ...extra,
});
const lister = entry('issue-lister', { allowed_tools: ['ls', 'github__list_issues'] });
const free = entry('free-form');
const skills = [lister, free];
const call = (name: string, args: Record<string, unknown> = {}): ToolCall => ({
  id: name,
  name,
  args: JSON.stringify(args),
});

describe('allowed-tools hides the other tools', () => {
  const tools = ['bash', 'ls', 'read_file', 'write_file', 'task', 'describe_skill', 'tool_search'];

  it('shows every tool while no active skill restricts them', () => {
    expect(skillVisibleTools(tools, undefined)).toEqual(tools);
    expect(skillVisibleTools(tools, skillToolPolicy([{ name: 'free-form', by: 'read' }], skills))).toEqual(
      tools,
    );
  });

  it('shows only the listed tools, plus describe_skill, read_file and tool_search, in the list’s order', () => {
    const policy = skillToolPolicy([{ name: 'issue-lister', by: 'read' }], skills);
    expect(skillVisibleTools(tools, policy)).toEqual(['ls', 'read_file', 'describe_skill', 'tool_search']);
  });

  it('narrows the MCP filter to the listed tools the agent may already use: it never widens it', () => {
    const policy = skillToolPolicy([{ name: 'issue-lister', by: 'read' }], skills);
    const filter = { allow: ['github__*'], deny: [], deferred: true as const };
    expect(skillMcpFilter(filter, policy)).toEqual({ ...filter, allow: ['github__list_issues'] });
    expect(skillMcpFilter({ allow: ['slack__*'], deny: [] }, policy).allow).toEqual([]);
    expect(skillMcpFilter({ allow: ['*'], deny: ['github__list_issues'] }, policy).allow).toEqual([]);
    expect(skillMcpFilter(filter, undefined)).toBe(filter);
  });
});

describe('the screen under a restricting skill', () => {
  const active = [{ name: 'issue-lister', by: 'read' as const }];

  it('lets tool_search run (its results are narrowed) where the rules of issue 46 apply, refuses it before', () => {
    const search = call('tool_search', { query: 'issues' });
    expect(screenCalls([search], active, skills, undefined, { toolSearchAllowed: true }).screened).toEqual([
      {},
    ]);
    expect(screenCalls([search], active, skills, undefined).screened[0].refusal?.content).toMatch(
      /^Tool tool_search is not allowed while skill issue-lister is active/,
    );
  });

  it('activates a skill read by any of skill_file_read_tool_names, and by none when the list is empty', () => {
    const cat = call('cat', { path: free.container_path });
    expect(screenCalls([cat], [], skills, undefined, { readTools: ['read_file', 'cat'] })).toEqual({
      screened: [{ activated: 'free-form' }],
      active: [{ name: 'free-form', by: 'read' }],
    });
    expect(screenCalls([cat], [], skills, undefined, { readTools: ['read_file'] }).active).toEqual([]);
    const read = call('read_file', { path: free.container_path });
    expect(screenCalls([read], [], skills, undefined, { readTools: [] }).active).toEqual([]);
  });
});

describe('the active skills through compaction', () => {
  it('names each active skill with its SKILL.md to read again, in activation order', () => {
    expect(
      activeSkillsReminder(
        [
          { name: 'issue-lister', by: 'read' },
          { name: 'free-form', by: 'slash' },
        ],
        skills,
      ),
    ).toBe(
      [
        '<active_skills>',
        'Active skills (loaded earlier; read the file again before applying its instructions):',
        '- issue-lister: The issue-lister skill. -> /mnt/skills/public/issue-lister/SKILL.md',
        '- free-form: The free-form skill. -> /mnt/skills/public/free-form/SKILL.md',
        '</active_skills>',
      ].join('\n'),
    );
  });

  it('says nothing without an active skill, or for a name the snapshot lacks', () => {
    expect(activeSkillsReminder([], skills)).toBeUndefined();
    expect(activeSkillsReminder([{ name: 'gone', by: 'read' }], skills)).toBeUndefined();
  });
});
