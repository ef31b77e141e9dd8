/**
 * The workspace as the CLI and the config give it: system folders, files and an empty flag are refused
 * with one line before anything starts (no server is needed to say so).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../../../cli/flags';
import { runWorkspace } from '../../../cli/command-setup';
import { ConfigError, defaultConfig } from '../../../contracts/config';
import { loadConfig } from '../../../worker/config';

const dir = mkdtempSync(join(tmpdir(), 'inputs-workspace-'));
const cli = join(__dirname, '..', '..', '..', 'client', 'cli.js');

describe('--workspace', () => {
  it.each([
    ['/', /--workspace: "\/" is a system folder/],
    ['/etc', /--workspace: "\/etc" is a system folder/],
    ['/proc/self', /--workspace: "\/proc\/self" is a system folder/],
    [homedir(), /is a system folder/],
    ['', /--workspace: "" is empty/],
  ])('refuses %j', (workspace, message) => {
    expect(() => runWorkspace(defaultConfig(), { workspace }, 'run-1')).toThrow(UsageError);
    expect(() => runWorkspace(defaultConfig(), { workspace }, 'run-1')).toThrow(message);
  });

  it('refuses a file', () => {
    const file = join(dir, 'file.txt');
    writeFileSync(file, 'x');
    expect(() => runWorkspace(defaultConfig(), { workspace: file }, 'run-1')).toThrow(
      /--workspace: ".*file\.txt" is a file, not a folder/,
    );
  });

  it('makes the run folder below workspace.root', () => {
    const base = defaultConfig();
    const config = { ...base, workspace: { ...base.workspace, root: join(dir, 'runs') } };
    expect(runWorkspace(config, {}, 'run-1')).toBe(join(dir, 'runs', 'run-1'));
  });

  it('ends the CLI with one line and exit code 2', () => {
    const run = spawnSync(process.execPath, [cli, 'run', '--workspace', '/', 'Hello.'], {
      encoding: 'utf8',
      env: { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:1' },
    });
    expect(run.status).toBe(2);
    expect(run.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^subagents: --workspace: "\/" is a system folder/),
    ]);
    expect(run.stdout).toBe('');
  });
});

describe('workspace.root', () => {
  it.each([
    ['/', /workspace\.root: "\/" is the root folder/],
    ['/etc/runs', /workspace\.root: "\/etc\/runs" is a system folder/],
  ])('refuses %s', (root, message) => {
    const file = join(dir, `config-${root.replace(/\//g, '_')}.yaml`);
    writeFileSync(file, `workspace:\n  root: ${root}\n`);
    expect(() => loadConfig(file, {})).toThrow(ConfigError);
    expect(() => loadConfig(file, {})).toThrow(message);
  });

  it('accepts /tmp: each run gets a folder of its own below it', () => {
    const file = join(dir, 'config-tmp.yaml');
    writeFileSync(file, 'workspace:\n  root: /tmp\n');
    expect(loadConfig(file, {}).config.workspace.root).toBe('/tmp');
  });
});
