import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { DEFAULT_WORKSPACE_SETTINGS } from '../../../../contracts/workspace';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, defaultConfig } from '../../../../contracts/config';
import type { ConfigOverrides } from '../../../../contracts/config/overrides';
import { loadConfig } from '../../../../worker/config';

describe('loadConfig', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'config-loader-'));
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  function write(name: string, text: string | Buffer): string {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  }

  it('returns the defaults without a path, the workspace under the working directory', () => {
    const loaded = loadConfig();
    expect(loaded.path).toBeUndefined();
    expect(loaded.warnings).toEqual([]);
    expect(loaded.config.workspace.root).toBe(join(process.cwd(), 'workspace'));
    expect(loaded.config.skills.path).toBe(join(process.cwd(), 'skills'));
    const { workspace, skills } = defaultConfig();
    expect({ ...loaded.config, workspace, skills }).toEqual(defaultConfig());
  });

  it('takes relative paths from the config file’s folder', () => {
    mkdirSync(join(dir, 'conf'));
    const file = write(
      'conf/config.yaml',
      [
        'models:',
        '  - name: s',
        '    provider: scripted',
        '    script_file: scripts/plan.yaml',
        'workspace:',
        '  root: ../runs',
        '  sample_dir: samples',
        'temporal:',
        '  tls:',
        '    client_cert_path: certs/client.pem',
        '    client_key_path: /etc/keys/client.key',
      ].join('\n'),
    );
    const { config, path } = loadConfig(file, {});
    expect(path).toBe(file);
    expect(config.workspace).toEqual({
      ...DEFAULT_WORKSPACE_SETTINGS,
      root: join(dir, 'runs'),
      sample_dir: join(dir, 'conf', 'samples'),
    });
    expect(config.models[0].script_file).toBe(join(dir, 'conf', 'scripts', 'plan.yaml'));
    expect(config.temporal.tls).toEqual({
      client_cert_path: join(dir, 'conf', 'certs', 'client.pem'),
      client_key_path: '/etc/keys/client.key',
    });
  });

  it('says clearly when the file does not exist', () => {
    const missing = join(dir, 'nope.yaml');
    expect(() => loadConfig(missing)).toThrow(ConfigError);
    expect(() => loadConfig(missing)).toThrow(`config file ${missing} does not exist`);
  });

  it('gives the line of a YAML syntax error', () => {
    const file = write('broken.yaml', 'subagents:\n  max_turns: 3\n  agents: [bash\n');
    expect(() => loadConfig(file)).toThrow(/is not valid YAML:\n.*line \d+, column \d+/);
    const duplicate = write('duplicate.yaml', 'subagents:\n  max_turns: 3\n  max_turns: 4\n');
    expect(() => loadConfig(duplicate)).toThrow(/line 3, column 3/);
  });

  it('names the file above the problems it has', () => {
    const file = write('bad.yaml', 'subagents:\n  max_total_per_run: 80\n');
    expect(() => loadConfig(file)).toThrow(
      `config file ${file} has 1 problem:\n  subagents.max_total_per_run: 80 is out of range (1–50)`,
    );
  });

  it('checks the command line’s settings with the file, naming the file only above its own problems', () => {
    const file = write('limits.yaml', 'subagents:\n  max_total_per_run: 4\n');
    const overrides = (value: unknown): ConfigOverrides => ({
      settings: [{ path: ['subagent_runtime', 'max_running'], value, source: '--max-running' }],
    });
    expect(loadConfig(file, {}, overrides(5)).config.subagent_runtime.max_running).toBe(5);
    expect(() => loadConfig(file, {}, overrides(0))).toThrow(
      new ConfigError(['--max-running: 0 is out of range (1 or more)']),
    );
    const bad = write('bad.yaml', 'subagents:\n  max_total_per_run: 80\n');
    expect(() => loadConfig(bad, {}, overrides(0))).toThrow(
      `config file ${bad} and the command line have 2 problems:\n` +
        '  subagents.max_total_per_run: 80 is out of range (1–50)\n' +
        '  --max-running: 0 is out of range (1 or more)',
    );
  });

  it('returns warnings for the caller to print, and prints nothing itself', () => {
    const file = write('deerflow.yaml', 'scheduler:\n  enabled: true\nsubagents:\n  max_total_per_run: 4\n');
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const error = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const { config, warnings } = loadConfig(file, {});
      expect(config.subagents.max_total_per_run).toBe(4);
      expect(warnings).toEqual([
        expect.stringMatching(/^ignoring sections this project does not read: scheduler /),
      ]);
      expect(log).not.toHaveBeenCalled();
      expect(warn).not.toHaveBeenCalled();
      expect(error).not.toHaveBeenCalled();
    } finally {
      log.mockRestore();
      warn.mockRestore();
      error.mockRestore();
    }
  });

  it('reads $NAME values from the given environment', () => {
    const file = write('env.yaml', 'temporal:\n  address: $TEMPORAL_ADDRESS\n  api_key: $TEMPORAL_API_KEY\n');
    const { config } = loadConfig(file, { TEMPORAL_ADDRESS: 'temporal.internal:7233' });
    expect(config.temporal).toMatchObject({
      address: 'temporal.internal:7233',
      api_key_env: 'TEMPORAL_API_KEY',
    });
    expect(() => loadConfig(file, {})).toThrow(
      'temporal.address: "$TEMPORAL_ADDRESS" is not set in the environment',
    );
  });

  it('treats an empty file (YAML null) as the defaults, without warnings', () => {
    const { config, warnings } = loadConfig(write('empty.yaml', '# nothing yet\n'), {});
    expect(warnings).toEqual([]);
    expect(config.workspace.root).toBe(join(dir, 'workspace'));
    expect(config.skills.path).toBe(join(dir, 'skills'));
    const { workspace, skills } = defaultConfig();
    expect({ ...config, workspace, skills }).toEqual(defaultConfig());
  });

  it('refuses a YAML alias bomb in one line, at once', () => {
    const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (const [from, to] of ['ab', 'bc', 'cd', 'de', 'ef', 'fg', 'gh', 'hi']) {
      lines.push(`${to}: &${to} [${Array(9).fill(`*${from}`).join(',')}]`);
    }
    const file = write('bomb.yaml', `${lines.join('\n')}\n`);
    const started = Date.now();
    expect(() => loadConfig(file, {})).toThrow(ConfigError);
    expect(() => loadConfig(file, {})).toThrow(
      new RegExp(
        `^config file ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} expands its YAML aliases too far \\([^\n]*\\)$`,
      ),
    );
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('names an alias whose anchor is missing', () => {
    const file = write('alias.yaml', 'subagents:\n  max_turns: *turns\n');
    expect(() => loadConfig(file, {})).toThrow(
      `config file ${file} is not valid YAML: Unresolved alias (the anchor must be set before the alias): turns`,
    );
  });

  it('still reads a config with a few aliases', () => {
    const file = write(
      'aliases.yaml',
      'models:\n  - &fast { name: fast, provider: scripted, model: a }\nsubagents:\n  max_turns: 3\n',
    );
    expect(loadConfig(file, {}).config.models[0]).toMatchObject({ name: 'fast', model: 'a' });
  });

  it('refuses a binary or non-UTF-8 file in one line', () => {
    const expected = (file: string) =>
      `config file ${file} is not a YAML text file (binary data, or not UTF-8)`;
    const binary = write('binary.yaml', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x00, 0x00, 0x0a]));
    expect(() => loadConfig(binary, {})).toThrow(ConfigError);
    expect(() => loadConfig(binary, {})).toThrow(expected(binary));
    const latin1 = write('latin1.yaml', Buffer.from('subagents:\n  max_turns: 3 # r\xe9sum\xe9\n', 'latin1'));
    expect(() => loadConfig(latin1, {})).toThrow(expected(latin1));
    expect(() => loadConfig(binary, {})).not.toThrow(/\n/);
  });

  it('refuses a file over 1 MB without reading it', () => {
    const file = write('huge.yaml', `# ${'x'.repeat(1024 * 1024)}\n`);
    expect(() => loadConfig(file, {})).toThrow(
      `config file ${file} is over 1 MB, the most a config file may be`,
    );
  });

  it('refuses a device, which may never end', () => {
    expect(() => loadConfig('/dev/zero', {})).toThrow('config file /dev/zero is not a regular file');
  });

  it('reads a UTF-8 file with a byte order mark', () => {
    const file = write('bom.yaml', Buffer.from('\ufeffsubagents:\n  max_total_per_run: 4\n', 'utf8'));
    expect(loadConfig(file, {}).config.subagents.max_total_per_run).toBe(4);
  });

  it('says a folder given as the config file is a folder', () => {
    expect(() => loadConfig(dir, {})).toThrow(`config file ${dir} is a folder, not a file`);
  });
});
