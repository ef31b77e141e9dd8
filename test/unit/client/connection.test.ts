import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSConfig } from '@temporalio/client';
import { parseConfig } from '../../../contracts/config';
import { configOverrides, parseFlags } from '../../../cli/flags';
import { connectionSettings } from '../../../client/connection';

const temporal = { task_queue: 'durable-subagents' };

function dir(): string {
  return mkdtempSync(join(tmpdir(), 'connection-'));
}

/** A Temporal config file (temporal.toml) with a default and a `prod` profile. */
function profiles(): string {
  const file = join(dir(), 'temporal.toml');
  writeFileSync(
    file,
    [
      '[profile.default]',
      'address = "profile:7233"',
      'namespace = "profile-ns"',
      '',
      '[profile.prod]',
      'address = "prod.tmprl.cloud:7233"',
      'namespace = "prod.a1b2c"',
      'api_key = "prod-key"',
      '[profile.prod.grpc_meta]',
      'team = "agents"',
    ].join('\n'),
  );
  return file;
}

/** The settings a command resolves: the config file's `temporal:` with the flags written in, then the rest. */
function resolved(args: string[], file: Record<string, unknown>, env: NodeJS.ProcessEnv) {
  const { values } = parseFlags(args, {});
  const { config } = parseConfig({ temporal: file }, { env, overrides: configOverrides(values, env) });
  return connectionSettings(config.temporal, env, () => undefined);
}

const tls = (settings: { tls?: TLSConfig | false }): TLSConfig => {
  if (!settings.tls) throw new Error('TLS is off');
  return settings.tls;
};

describe('connection settings', () => {
  it('takes a flag over the config file, the file over TEMPORAL_*, TEMPORAL_* over the Temporal profile', () => {
    const env = { TEMPORAL_CONFIG_FILE: profiles() };
    const fileSays = { address: 'file:7233', namespace: 'file-ns' };
    expect(resolved([], {}, env)).toMatchObject({ address: 'profile:7233', namespace: 'profile-ns' });
    const withEnv = { ...env, TEMPORAL_ADDRESS: 'env:7233', TEMPORAL_NAMESPACE: 'env-ns' };
    expect(resolved([], {}, withEnv)).toMatchObject({ address: 'env:7233', namespace: 'env-ns' });
    expect(resolved([], fileSays, withEnv)).toMatchObject({ address: 'file:7233', namespace: 'file-ns' });
    expect(
      resolved(['--address', 'flag:7233', '--namespace', 'flag-ns', '--task-queue', 'q'], fileSays, withEnv),
    ).toMatchObject({ address: 'flag:7233', namespace: 'flag-ns', taskQueue: 'q' });
  });

  it('reads the profile TEMPORAL_PROFILE names: its API key (which turns TLS on) and gRPC headers', () => {
    const settings = resolved([], {}, { TEMPORAL_CONFIG_FILE: profiles(), TEMPORAL_PROFILE: 'prod' });
    expect(settings).toMatchObject({
      address: 'prod.tmprl.cloud:7233',
      namespace: 'prod.a1b2c',
      apiKey: 'prod-key',
      tls: {},
      metadata: { team: 'agents' },
    });
  });

  it('leaves the address unset and the namespace default when nothing names them', () => {
    const settings = connectionSettings(temporal, {});
    expect(settings.address).toBeUndefined();
    expect(settings.namespace).toBe('default');
    expect(settings.tls).toBeUndefined();
  });

  it('reads an API key from the variable the config names, over TEMPORAL_API_KEY, and turns TLS on for it', () => {
    const config = { ...temporal, api_key_env: 'CLOUD_KEY' };
    const settings = connectionSettings(config, { CLOUD_KEY: 'k-123', TEMPORAL_API_KEY: 'k-env' });
    expect(settings.apiKey).toBe('k-123');
    expect(settings.tls).toEqual({});
    expect(connectionSettings(temporal, { TEMPORAL_API_KEY: 'k-env' }).apiKey).toBe('k-env');
    expect(() => connectionSettings(config, { TEMPORAL_API_KEY: 'k-env' })).toThrow(
      'temporal.api_key: the environment variable CLOUD_KEY is not set',
    );
  });

  it('keeps TLS off when TEMPORAL_TLS=false says so, even with an API key', () => {
    expect(connectionSettings(temporal, { TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'false' }).tls).toBe(false);
    expect(connectionSettings(temporal, { TEMPORAL_TLS: 'true' }).tls).toEqual({});
  });

  it('loads mTLS files named by the SDKs’ variables or the config, and refuses a certificate without its key', () => {
    const certs = dir();
    writeFileSync(join(certs, 'client.pem'), 'CERT');
    writeFileSync(join(certs, 'client.key'), 'KEY');
    writeFileSync(join(certs, 'other.pem'), 'OTHER');
    const env = {
      TEMPORAL_TLS_CLIENT_CERT_PATH: join(certs, 'client.pem'),
      TEMPORAL_TLS_CLIENT_KEY_PATH: join(certs, 'client.key'),
      TEMPORAL_TLS_SERVER_NAME: 'ns.tmprl.cloud',
    };
    const settings = connectionSettings(temporal, env);
    expect(tls(settings).serverNameOverride).toBe('ns.tmprl.cloud');
    expect(tls(settings).clientCertPair?.crt.toString()).toBe('CERT');
    expect(tls(settings).clientCertPair?.key.toString()).toBe('KEY');
    const fromConfig = connectionSettings(
      {
        ...temporal,
        tls: { client_cert_path: join(certs, 'other.pem'), client_key_path: join(certs, 'client.key') },
      },
      env,
    );
    expect(tls(fromConfig).clientCertPair?.crt.toString()).toBe('OTHER');
    expect(() =>
      connectionSettings(temporal, { TEMPORAL_TLS_CLIENT_CERT_PATH: join(certs, 'client.pem') }),
    ).toThrow(/needs both a client certificate and its key/);
    expect(() =>
      connectionSettings(temporal, {
        TEMPORAL_TLS_CLIENT_CERT_PATH: join(certs, 'missing.pem'),
        TEMPORAL_TLS_CLIENT_KEY_PATH: join(certs, 'client.key'),
      }),
    ).toThrow(/TLS client certificate: cannot read .*missing\.pem \(ENOENT\)/);
  });

  it('still reads the older TEMPORAL_TLS_CERT / _KEY / _CA, with one deprecation line', () => {
    const certs = dir();
    writeFileSync(join(certs, 'client.pem'), 'CERT');
    writeFileSync(join(certs, 'client.key'), 'KEY');
    writeFileSync(join(certs, 'ca.pem'), 'CA');
    const warnings: string[] = [];
    const settings = connectionSettings(
      temporal,
      {
        TEMPORAL_TLS_CERT: join(certs, 'client.pem'),
        TEMPORAL_TLS_KEY: join(certs, 'client.key'),
        TEMPORAL_TLS_CA: join(certs, 'ca.pem'),
      },
      (line) => warnings.push(line),
    );
    expect(tls(settings).clientCertPair?.crt.toString()).toBe('CERT');
    expect(tls(settings).serverRootCACertificate?.toString()).toBe('CA');
    expect(warnings).toEqual([
      'deprecated environment names, still read for now: TEMPORAL_TLS_CERT → TEMPORAL_TLS_CLIENT_CERT_PATH, ' +
        'TEMPORAL_TLS_KEY → TEMPORAL_TLS_CLIENT_KEY_PATH, TEMPORAL_TLS_CA → TEMPORAL_TLS_SERVER_CA_CERT_PATH ' +
        '(the names every Temporal SDK reads)',
    ]);
    const quiet: string[] = [];
    connectionSettings(temporal, {}, (line) => quiet.push(line));
    expect(quiet).toEqual([]);
  });

  it('says in one line when the Temporal config file is not TOML or has no profile of the name asked for', () => {
    const file = join(dir(), 'temporal.toml');
    writeFileSync(file, '[profile.default\naddress = ');
    expect(() => connectionSettings(temporal, { TEMPORAL_CONFIG_FILE: file })).toThrow(
      /^Temporal config profile \(temporal\.toml\): [^\n]+$/,
    );
    expect(() =>
      connectionSettings(temporal, { TEMPORAL_CONFIG_FILE: profiles(), TEMPORAL_PROFILE: 'staging' }),
    ).toThrow("Temporal config profile (temporal.toml): Profile 'staging' not found in config data");
  });
});
