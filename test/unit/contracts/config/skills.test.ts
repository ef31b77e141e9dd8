/**
 * `skills:` in DeerFlow's shape and an agent's `skills: [..]` list: defaults, DeerFlow's keys read, a bad
 * name refused with its path, and what each agent's list means.
 */
import { ConfigError, parseConfig } from '../../../../contracts/config';
import { agentSkillNames, leadSkillNames } from '../../../../contracts/config/agents';
import { buildBatchInput } from '../../../../contracts/config/batch-input';
import { buildLeadRunInput } from '../../../../contracts/config/lead-input';

describe('skills:', () => {
  it('defaults to ./skills beside the config, seen at /mnt/skills, discovery not deferred', () => {
    expect(parseConfig({}).config.skills).toEqual({
      path: './skills',
      container_path: '/mnt/skills',
      deferred_discovery: false,
    });
  });

  it("reads DeerFlow's section as written, its storage class accepted and ignored", () => {
    const { config, warnings } = parseConfig({
      skills: {
        use: 'deerflow.skills.storage.local_skill_storage:LocalSkillStorage',
        path: '/srv/skills',
        container_path: '/mnt/skills/',
        deferred_discovery: true,
      },
    });
    expect(warnings).toEqual([]);
    expect(config.skills).toEqual({
      path: '/srv/skills',
      container_path: '/mnt/skills',
      deferred_discovery: true,
    });
  });

  it.each([
    ['mnt/skills', 'is not an absolute path'],
    ['/', 'is the root folder'],
    ['/mnt/../etc', 'has a . or .. segment'],
  ])('refuses container_path %j', (containerPath, message) => {
    expect(() => parseConfig({ skills: { container_path: containerPath } })).toThrow(
      `skills.container_path: ${JSON.stringify(containerPath)} ${message}`,
    );
  });

  it('refuses a misspelt key, listing the accepted ones; drops a DeerFlow key it does not read, with a warning', () => {
    expect(() => parseConfig({ skills: { container_pth: '/s' } })).toThrow(
      'skills.container_pth: unknown key (accepted: use, path, container_path, deferred_discovery)',
    );
    expect(parseConfig({ skills: { enabled: true } }).warnings).toContain(
      'ignoring DeerFlow keys this project does not read (yet): skills.enabled',
    );
  });
});

describe("an agent's skills list", () => {
  const config = parseConfig({
    lead: { skills: ['csv-summary'] },
    subagents: {
      agents: { bash: { skills: [] }, analyst: { skills: ['report'] } },
      custom_agents: {
        analyst: { description: 'Analyses.', system_prompt: 'Analyse.', skills: ['csv-summary'] },
        writer: { description: 'Writes.', system_prompt: 'Write.', skills: [] },
        helper: { description: 'Helps.', system_prompt: 'Help.' },
      },
    },
  }).config;

  it('is kept: absent means every enabled skill, [] none, names those', () => {
    expect(leadSkillNames(config)).toEqual(['csv-summary']);
    expect(leadSkillNames(parseConfig({}).config)).toBeUndefined();
    expect(agentSkillNames(config, 'general-purpose')).toBeUndefined();
    expect(agentSkillNames(config, 'bash')).toEqual([]);
    expect(agentSkillNames(config, 'writer')).toEqual([]);
    expect(agentSkillNames(config, 'helper')).toBeUndefined();
  });

  it("takes subagents.agents.<name>.skills over a custom agent's own (DeerFlow's order)", () => {
    expect(agentSkillNames(config, 'analyst')).toEqual(['report']);
  });

  it('is no longer ignored with a warning', () => {
    const { warnings } = parseConfig({ subagents: { agents: { bash: { skills: ['a'] } } } });
    expect(warnings).toEqual([]);
  });

  it('refuses a name that is not a skill name, with its path; every one in one pass', () => {
    const problems = (): string[] => {
      try {
        parseConfig({
          lead: { skills: ['Bad Name'] },
          subagents: {
            agents: { bash: { skills: 'csv-summary' } },
            custom_agents: { a: { description: 'A.', system_prompt: 'A.', skills: ['ok', '../x'] } },
          },
        });
      } catch (error) {
        if (error instanceof ConfigError) return [...error.problems].sort();
        throw error;
      }
      return [];
    };
    const notAName = 'is not a skill name (lowercase letters, digits and single hyphens, e.g. csv-summary)';
    expect(problems()).toEqual([
      `lead.skills[0]: "Bad Name" ${notAName}`,
      'subagents.agents.bash.skills: "csv-summary" is not a list of skill names',
      `subagents.custom_agents.a.skills[1]: "../x" ${notAName}`,
    ]);
  });
});

describe("a run's skills settings", () => {
  const config = parseConfig({
    models: [{ name: 'scripted', provider: 'scripted', model: 'test' }],
    skills: { container_path: '/opt/skills/', deferred_discovery: true },
    lead: { skills: ['csv-summary'] },
    subagents: { agents: { bash: { skills: [] } } },
  }).config;

  it('rides on the lead run input only when the caller found a skills folder', () => {
    expect(buildLeadRunInput(config, { prompt: 'p', workspace: '/tmp/w' }).scope.skills).toBeUndefined();
    expect(
      buildLeadRunInput(config, { prompt: 'p', workspace: '/tmp/w', skills_root: '/srv/skills' }).scope
        .skills,
    ).toEqual({
      root: '/srv/skills',
      container_path: '/opt/skills',
      deferred_discovery: true,
      lead: ['csv-summary'],
      agents: { bash: [] },
    });
  });

  it('rides on a batch input the same way', () => {
    const request = { description: 'd', subagent_type: 'bash', items: [], workspace: '/tmp/w' };
    expect(buildBatchInput(config, request).scope.skills).toBeUndefined();
    expect(buildBatchInput(config, { ...request, skills_root: '/srv/skills' }).scope.skills).toMatchObject({
      root: '/srv/skills',
      agents: { bash: [] },
    });
  });
});
