import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectionSettings } from '../../../client/connection';

const temporal = { task_queue: 'durable-subagents' };

describe('connection settings', () => {
  it('takes the config (where the flags are written in) over TEMPORAL_*, and TEMPORAL_* over the defaults', () => {
    const config = { ...temporal, address: 'config:7233' };
    expect(connectionSettings(config, {}).address).toBe('config:7233');
    expect(connectionSettings(config, { TEMPORAL_ADDRESS: 'env:7233' }).address).toBe('config:7233');
    expect(connectionSettings(temporal, { TEMPORAL_ADDRESS: 'env:7233' }).address).toBe('env:7233');
    expect(connectionSettings(temporal, {}).namespace).toBe('default');
    expect(connectionSettings(temporal, { TEMPORAL_NAMESPACE: 'prod' }).namespace).toBe('prod');
    expect(
      connectionSettings({ ...temporal, namespace: 'staging' }, { TEMPORAL_NAMESPACE: 'prod' }).namespace,
    ).toBe('staging');
  });

  it('leaves the address unset when none is given, so the CLI can go embedded', () => {
    const settings = connectionSettings(temporal, {});
    expect(settings.address).toBeUndefined();
    expect(settings.tls).toBeUndefined();
  });

  it('reads an API key from the named variable and turns TLS on for it', () => {
    const settings = connectionSettings({ ...temporal, api_key_env: 'CLOUD_KEY' }, { CLOUD_KEY: 'k-123' });
    expect(settings.apiKey).toBe('k-123');
    expect(settings.tls).toEqual({});
    expect(() => connectionSettings({ ...temporal, api_key_env: 'CLOUD_KEY' }, {})).toThrow(
      'temporal.api_key: the environment variable CLOUD_KEY is not set',
    );
  });

  it('loads mTLS files, and refuses a certificate without its key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tls-'));
    writeFileSync(join(dir, 'client.pem'), 'CERT');
    writeFileSync(join(dir, 'client.key'), 'KEY');
    const settings = connectionSettings(temporal, {
      TEMPORAL_TLS_CERT: join(dir, 'client.pem'),
      TEMPORAL_TLS_KEY: join(dir, 'client.key'),
      TEMPORAL_TLS_SERVER_NAME: 'ns.tmprl.cloud',
    });
    expect(settings.tls?.serverNameOverride).toBe('ns.tmprl.cloud');
    expect(settings.tls?.clientCertPair?.crt.toString()).toBe('CERT');
    expect(settings.tls?.clientCertPair?.key.toString()).toBe('KEY');
    expect(() => connectionSettings(temporal, { TEMPORAL_TLS_CERT: join(dir, 'client.pem') })).toThrow(
      /needs both/,
    );
    expect(() =>
      connectionSettings(temporal, {
        TEMPORAL_TLS_CERT: join(dir, 'missing.pem'),
        TEMPORAL_TLS_KEY: join(dir, 'client.key'),
      }),
    ).toThrow(/TLS client certificate: cannot read .*missing\.pem \(ENOENT\)/);
  });
});
