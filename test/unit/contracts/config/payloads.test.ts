import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultConfig, parseConfig } from '../../../../contracts/config';
import { defaultPayloadSettings } from '../../../../contracts/config/payloads';
import { projectCodec } from '../../../../payloads/data-converter';
import type { SharedFieldsCodec } from '../../../../payloads/shared-fields-codec';
import { loadConfig } from '../../../../worker/config';
import { configProblems } from '../../../support/config-problems';

const problemsOf = (payloads: unknown): string[] => configProblems({ payloads });

/** The codec endpoint's defaults: no page allowed until listed, /encode off, bounded when on. */
const CODEC_SERVER_DEFAULTS = {
  enabled: true,
  allowed_origins: [],
  allow_encode: false,
  token_env: 'SUBAGENTS_CODEC_TOKEN',
  max_encode_bytes_per_client: 64 * 1024 * 1024,
  max_encode_bytes: 256 * 1024 * 1024,
  encode_window_seconds: 3600,
};

describe('the payloads: section', () => {
  it('defaults to a local store, a 16 KiB threshold and the codec endpoint on, trusting no page, /encode off', () => {
    expect(defaultConfig().payloads).toEqual({
      threshold_bytes: 16384,
      shared_fields: true,
      store: 'local',
      codec_server: CODEC_SERVER_DEFAULTS,
      encryption: { key_env: 'SUBAGENTS_ENCRYPTION_KEY', key_command_timeout_seconds: 10 },
    });
    expect(defaultPayloadSettings()).toEqual(defaultConfig().payloads);
  });

  it('reads an S3 store, with its defaults, a folder-like prefix and the keys from named variables', () => {
    const { config } = parseConfig({
      payloads: {
        threshold_bytes: 65536,
        store: 's3',
        s3: {
          endpoint: 'http://minio.internal:9000',
          bucket: 'agent-runs',
          prefix: 'team-a',
          access_key_id_env: 'RUNS_KEY_ID',
          secret_access_key_env: '$RUNS_SECRET',
        },
        codec_server: { port: 8099, allowed_origins: ['https://temporal.example.com'] },
      },
    });
    expect(config.payloads).toEqual({
      threshold_bytes: 65536,
      shared_fields: true,
      store: 's3',
      s3: {
        endpoint: 'http://minio.internal:9000',
        bucket: 'agent-runs',
        region: 'us-east-1',
        prefix: 'team-a/',
        access_key_id_env: 'RUNS_KEY_ID',
        secret_access_key_env: 'RUNS_SECRET',
        force_path_style: true,
      },
      codec_server: {
        ...CODEC_SERVER_DEFAULTS,
        port: 8099,
        allowed_origins: ['https://temporal.example.com'],
      },
      encryption: { key_env: 'SUBAGENTS_ENCRYPTION_KEY', key_command_timeout_seconds: 10 },
    });
    const aws = parseConfig({ payloads: { store: 's3', s3: { bucket: 'agent-runs', region: 'eu-west-1' } } });
    expect(aws.config.payloads.s3).toEqual({
      bucket: 'agent-runs',
      region: 'eu-west-1',
      prefix: 'durable-subagents/payloads/',
      force_path_style: false,
    });
  });

  it('says what is wrong with a value, with what would be accepted', () => {
    expect(problemsOf({ threshold_bytes: 100 })).toEqual([
      'payloads.threshold_bytes: 100 is out of range (1024–2097152)',
    ]);
    expect(problemsOf({ store: 'gcs' })).toEqual([
      'payloads.store: "gcs" is not an accepted value (local, s3)',
    ]);
    expect(problemsOf({ codec_server: { port: 70000 } })).toEqual([
      'payloads.codec_server.port: 70000 is out of range (1–65535)',
    ]);
    expect(problemsOf({ codec_server: { allowed_origins: ['https://ui.example.com/path'] } })).toEqual([
      'payloads.codec_server.allowed_origins[0]: "https://ui.example.com/path" is not an origin ' +
        '(scheme://host[:port] with nothing after, e.g. https://temporal.example.com; or *)',
    ]);
    expect(problemsOf({ store: 's3', s3: { bucket: 'Agent_Runs' } })).toEqual([
      'payloads.s3.bucket: "Agent_Runs" is not an S3 bucket name (3–63 lowercase letters, digits, dots and hyphens)',
    ]);
    expect(problemsOf({ store: 's3', s3: { bucket: 'runs', access_key_id_env: 'not a name' } })).toEqual([
      'payloads.s3.access_key_id_env: "not a name" is not the name of an environment variable (e.g. AWS_ACCESS_KEY_ID)',
    ]);
  });

  it('reads who may call the codec endpoint, whether it encodes, its token variable and its bounds', () => {
    const { config } = parseConfig({
      payloads: {
        codec_server: {
          allowed_origins: ['https://temporal.example.com', 'http://localhost:8233'],
          allow_encode: true,
          token_env: '$UI_CODEC_TOKEN',
          max_encode_bytes_per_client: 1048576,
          max_encode_bytes: 4194304,
          encode_window_seconds: 600,
        },
      },
    });
    expect(config.payloads.codec_server).toEqual({
      enabled: true,
      allowed_origins: ['https://temporal.example.com', 'http://localhost:8233'],
      allow_encode: true,
      token_env: 'UI_CODEC_TOKEN',
      max_encode_bytes_per_client: 1048576,
      max_encode_bytes: 4194304,
      encode_window_seconds: 600,
    });
    expect(
      problemsOf({
        codec_server: {
          allow_encode: 'yes',
          token_env: 'my token',
          max_encode_bytes_per_client: 10,
          max_encode_bytes: -1,
          encode_window_seconds: 0,
        },
      }),
    ).toEqual([
      'payloads.codec_server.allow_encode: "yes" is not true or false',
      'payloads.codec_server.token_env: "my token" is not the name of an environment variable (e.g. AWS_ACCESS_KEY_ID)',
      'payloads.codec_server.max_encode_bytes_per_client: 10 is out of range (1024 or more)',
      'payloads.codec_server.max_encode_bytes: -1 is out of range (1024 or more)',
      'payloads.codec_server.encode_window_seconds: 0 is out of range (1–604800)',
    ]);
    expect(problemsOf({ codec_server: { token: 'abc' } })[0]).toMatch(
      /^payloads\.codec_server\.token: unknown key \(accepted: enabled, port, allowed_origins, allow_encode, token_env, /,
    );
  });

  it('shares fields by default, and writes payloads whole when told not to', () => {
    expect((projectCodec(parseConfig({}).config.payloads).codecs[0] as SharedFieldsCodec).share).toBe(true);
    const { config } = parseConfig({ payloads: { shared_fields: false } });
    expect(config.payloads.shared_fields).toBe(false);
    const [shared] = projectCodec(config.payloads).codecs as [SharedFieldsCodec];
    expect(shared.share).toBe(false);
    expect(problemsOf({ shared_fields: 'no' })).toHaveLength(1);
  });

  it('refuses unknown keys, naming the accepted ones', () => {
    expect(problemsOf({ treshold_bytes: 20000 })).toEqual([
      'payloads.treshold_bytes: unknown key (accepted: threshold_bytes, shared_fields, store, path, s3, codec_server, encryption)',
    ]);
    expect(problemsOf({ s3: { bucket: 'runs', secret: 'x' } })[0]).toMatch(
      /^payloads\.s3\.secret: unknown key \(accepted: endpoint, bucket, region, prefix, access_key_id_env, /,
    );
  });

  it('needs the s3 section for store: s3, and both credential variables or neither', () => {
    expect(problemsOf({ store: 's3' })).toEqual([
      'payloads.s3: is missing (store: s3 needs at least s3.bucket; s3.endpoint for a store other than AWS)',
    ]);
    expect(problemsOf({ store: 's3', s3: { bucket: 'runs', access_key_id_env: 'KEY_ID' } })).toEqual([
      'payloads.s3.secret_access_key_env: is missing (give access_key_id_env and secret_access_key_env together, or neither)',
    ]);
    expect(problemsOf({ store: 's3', s3: {} })).toEqual([
      'payloads.s3.bucket: is missing (an S3 bucket name)',
    ]);
  });

  it('takes a relative path from the config file’s folder', () => {
    const dir = mkdtempSync(join(tmpdir(), 'payload-config-'));
    try {
      mkdirSync(join(dir, 'conf'));
      writeFileSync(join(dir, 'conf', 'config.yaml'), 'payloads:\n  path: blobs\n');
      expect(loadConfig(join(dir, 'conf', 'config.yaml')).config.payloads.path).toBe(
        join(dir, 'conf', 'blobs'),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
