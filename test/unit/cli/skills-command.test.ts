/**
 * `subagents skills list`, run as a user runs it: the shipped demo skills, a user's custom skills shadowing a
 * public one, problems listed, --json alone on stdout, and mistakes ended with one line and exit code 2.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const cli = join(__dirname, '..', '..', '..', 'client', 'cli.js');
const demoSkills = join(__dirname, '..', '..', '..', '..', 'cli', 'demo', 'skills');

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

function skills(args: string[], cwd?: string) {
  const run = spawnSync(process.execPath, [cli, 'skills', ...args], {
    encoding: 'utf8',
    cwd,
    env: { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:1' },
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** A folder with a config.yaml whose skills.path is `path`, and extensions_config.json when `states` is given. */
function configFor(path: string, states?: Record<string, { enabled: boolean }>): string {
  const dir = mkdtempSync(join(tmpdir(), 'skills-cli-'));
  const lines = [`skills:`, `  path: ${JSON.stringify(path)}`];
  if (states !== undefined) {
    write(join(dir, 'extensions_config.json'), JSON.stringify({ mcpServers: {}, skills: states }));
    lines.push('extensions_config: extensions_config.json');
  }
  write(join(dir, 'config.yaml'), `${lines.join('\n')}\n`);
  return join(dir, 'config.yaml');
}

const skill = (name: string, extra = '') =>
  `---\nname: ${name}\ndescription: The ${name} skill.\n${extra}---\n`;

describe('subagents skills list', () => {
  it('lists the demo skills with category, state and allowed tools', () => {
    const run = skills(['list', '--config', configFor(demoSkills)]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`skills in ${demoSkills} for user default: 2`);
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(
        /^ {2}csv-summary \(public, enabled\) tools: bash, read_file: Summarize a small CSV/,
      ),
      expect.stringMatching(/^ {2}incident-brief \(public, enabled\) tools: ls, read_file, write_file: /),
    ]);
  });

  it("shows a user's custom skill over the public one, disabled states and the problems", () => {
    const root = mkdtempSync(join(tmpdir(), 'skills-cli-root-'));
    write(join(root, 'public/report/SKILL.md'), skill('report'));
    write(join(root, 'public/csv/SKILL.md'), skill('csv', 'allowed-tools: []\n'));
    write(join(root, 'public/broken/SKILL.md'), '# no front matter\n');
    write(join(root, 'users/alice/custom/report/SKILL.md'), skill('report', 'allowed-tools: [read_file]\n'));
    const config = configFor(root, { csv: { enabled: false } });

    const alice = skills(['list', '--config', config, '--user', 'alice']);
    expect(alice.code).toBe(0);
    expect(alice.stdout.trimEnd().split('\n')).toEqual([
      `skills in ${root} for user alice: 2`,
      '  csv (public, disabled) tools: none: The csv skill.',
      '  report (custom, enabled, shadows public) tools: read_file: The report skill.',
      'problems:',
      expect.stringMatching(/^ {2}public\/broken\/SKILL\.md: has no front matter .*\(skipped\)$/),
    ]);

    const bob = skills(['list', '--config', config, '--user', 'bob', '--json']);
    expect(bob).toMatchObject({ code: 0, stderr: '' });
    const listing = JSON.parse(bob.stdout) as {
      root: string;
      user: string;
      skills: { name: string; category: string; enabled: boolean; allowed_tools?: string[] }[];
      problems: string[];
    };
    expect(listing).toMatchObject({ root, user: 'bob', container_path: '/mnt/skills' });
    expect(
      listing.skills.map(({ name, category, enabled, allowed_tools }) => ({
        name,
        category,
        enabled,
        allowed_tools,
      })),
    ).toEqual([
      { name: 'csv', category: 'public', enabled: false, allowed_tools: [] },
      { name: 'report', category: 'public', enabled: true, allowed_tools: undefined },
    ]);
    expect(listing.problems).toHaveLength(1);
  });

  it('says there are no skills when the folder does not exist (not an error)', () => {
    const missing = join(tmpdir(), 'no-such-skills-folder-here');
    const run = skills(['list', '--config', configFor(missing)]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toBe(`no skills folder at ${missing} (skills.path): no skills\n`);
  });

  it.each([
    [['list', '--user', '../etc'], /^subagents: --user: "\.\.\/etc" is not a user id \(letters, digits/],
    [['remove'], /^subagents: skills: unknown subcommand "remove" \(list\)$/],
    [['list', 'extra'], /^subagents: skills list: unexpected argument "extra"$/],
    [['list', '--bogus'], /^subagents: Unknown option '--bogus'/],
  ])('ends %j with one line and exit code 2', (args, line) => {
    const run = skills(args);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(line)]);
  });

  it('refuses two packages of one name with exit code 2, naming both', () => {
    const root = mkdtempSync(join(tmpdir(), 'skills-cli-dup-'));
    write(join(root, 'public/a/SKILL.md'), skill('same'));
    write(join(root, 'public/b/SKILL.md'), skill('same'));
    const run = skills(['list', '--config', configFor(root)]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('same: public skills have two packages of this name (public/a, public/b)');
  });

  it('prints its own help', () => {
    const run = skills(['list', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: subagents skills list \[--user USER\] \[--json\]/);
  });
});
