import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, defaultConfig } from '../../../contracts/config';
import { loadConfig } from '../../../worker/config';

describe('loadConfig', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'config-loader-'));
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  function write(name: string, text: string): string {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  }

  it('returns the defaults without a path, the workspace under the working directory', () => {
    const loaded = loadConfig();
    expect(loaded.path).toBeUndefined();
    expect(loaded.warnings).toEqual([]);
    expect(loaded.config.workspace.root).toBe(join(process.cwd(), 'workspace'));
    expect({ ...loaded.config, workspace: defaultConfig().workspace }).toEqual(defaultConfig());
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
    expect(config.workspace).toEqual({ root: join(dir, 'runs'), sample_dir: join(dir, 'conf', 'samples') });
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

  it('returns warnings for the caller to print, and prints nothing itself', () => {
    const file = write('deerflow.yaml', 'memory:\n  enabled: true\nsubagents:\n  max_total_per_run: 4\n');
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const error = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const { config, warnings } = loadConfig(file, {});
      expect(config.subagents.max_total_per_run).toBe(4);
      expect(warnings).toEqual([
        expect.stringMatching(/^ignoring sections this project does not read: memory /),
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

  it('treats an empty file as the defaults', () => {
    const { config, warnings } = loadConfig(write('empty.yaml', '# nothing yet\n'), {});
    expect(warnings).toEqual([]);
    expect(config.subagents).toEqual(defaultConfig().subagents);
  });
});
