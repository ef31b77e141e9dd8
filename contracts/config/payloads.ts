/**
 * The `payloads:` section: the keys that encrypt every payload (the encryption codec), where payloads too large
 * for workflow history go (the claim-check codec), and the codec endpoint that lets the Web UI show them decoded.
 *
 * Pure: no Node APIs. The default local directory (under the cache folder) and `SUBAGENTS_PAYLOAD_DIR` are
 * resolved where the store is opened (payloads/store.ts); relative paths in worker/config.ts.
 */
import { z } from 'zod';
import { withoutUndefined } from '../records';
import { bool, envReferenceName, httpUrl, listOf, oneOf, seconds, section, wholeNumber } from './fields';

const PAYLOAD_STORES = ['local', 's3'] as const;
export type PayloadStoreKind = (typeof PAYLOAD_STORES)[number];

export const DEFAULT_PAYLOAD_THRESHOLD_BYTES = 16_384;
/** Below this, references (about 150 bytes) would save next to nothing. */
const MIN_PAYLOAD_THRESHOLD_BYTES = 1024;
/** The server refuses a payload above 2 MiB (limit.blobSize.error), so a higher threshold would never act. */
const MAX_PAYLOAD_THRESHOLD_BYTES = 2 * 1024 * 1024;

/** The port `subagents codec-server` listens on when neither --port nor codec_server.port says otherwise. */
export const DEFAULT_CODEC_SERVER_PORT = 8081;
/** Where the codec endpoint's bearer token is read from unless codec_server.token_env names another variable. */
export const DEFAULT_CODEC_TOKEN_ENV = 'SUBAGENTS_CODEC_TOKEN';
const MIB = 1024 * 1024;
const DEFAULT_S3_PREFIX = 'durable-subagents/payloads/';
const DEFAULT_S3_REGION = 'us-east-1';

export interface S3PayloadSettings {
  /** An S3-compatible endpoint (MinIO, Ceph, R2, …); absent → AWS S3 in `region`. */
  endpoint?: string;
  bucket: string;
  region: string;
  /** Object keys are `<prefix><sha256>`; always empty or ending in `/`. */
  prefix: string;
  /** Names of the environment variables holding the keys; absent → the AWS SDK's own credential chain. */
  access_key_id_env?: string;
  secret_access_key_env?: string;
  /** `bucket` in the path instead of the host name: what most S3-compatible servers need. */
  force_path_style: boolean;
}

export interface CodecServerSettings {
  /** Serve the codec endpoint beside the embedded dev server (`npm start`, `run`, `dev-server`). */
  enabled: boolean;
  /** Its port; absent → a free port for the embedded one, 8081 for `subagents codec-server`. */
  port?: number;
  /**
   * Browser origins that may call it, e.g. a shared Web UI; `*` = any. The embedded dev server's own UI and
   * `temporal.ui_url` are added where the endpoint starts; no other page may, loopback ones included.
   */
  allowed_origins: string[];
  /** Serve `POST …/encode` (the Web UI calls it to start a workflow or send a signal with input). */
  allow_encode: boolean;
  /** The environment variable whose value, when set, every caller must send as `Authorization: Bearer …`. */
  token_env: string;
  /** Bytes one client (remote address) may send to `/encode` per window. */
  max_encode_bytes_per_client: number;
  /** Bytes all clients together may send to `/encode` per window. */
  max_encode_bytes: number;
  encode_window_seconds: number;
}

/** The environment variable read for encryption keys unless `payloads.encryption.key_env` names another. */
export const DEFAULT_ENCRYPTION_KEY_ENV = 'SUBAGENTS_ENCRYPTION_KEY';
const DEFAULT_KEY_COMMAND_TIMEOUT_SECONDS = 10;

/**
 * Where this process finds its encryption keys. Every source that is set adds keys; the first key found
 * (environment, then file, then command) encrypts new payloads, and every key decrypts. No key anywhere:
 * payloads are not encrypted.
 */
export interface EncryptionSettings {
  /** The environment variable holding keys (default SUBAGENTS_ENCRYPTION_KEY). */
  key_env: string;
  /** A file holding keys, one entry a line (`#` starts a comment). */
  key_file?: string;
  /** A shell command that prints keys (a KMS or secret-manager client), run once per process. */
  key_command?: string;
  /** How long the command may take. */
  key_command_timeout_seconds: number;
}

export interface PayloadSettings {
  /** A payload whose encoded size passes this goes to the store; history keeps a reference. */
  threshold_bytes: number;
  /**
   * Store each large top-level field of a JSON payload once, by digest (payloads/shared-fields-codec.ts).
   * Off: payloads are written whole; those written with it are still read.
   */
  shared_fields: boolean;
  store: PayloadStoreKind;
  /** The local store's folder; absent → `$SUBAGENTS_PAYLOAD_DIR`, else `<cache>/durable-subagents/payloads`. */
  path?: string;
  s3?: S3PayloadSettings;
  codec_server: CodecServerSettings;
  encryption: EncryptionSettings;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `is missing (…)` or `is not text (…)`, as the shared value types of fields.ts say it. */
function textError(noun: string): (issue: { input?: unknown }) => string {
  return (issue) => (issue.input === undefined ? `is missing (${noun})` : `is not text (${noun})`);
}

/** The name of an environment variable, written bare (AWS_ACCESS_KEY_ID) or as a reference ($AWS_…). */
const envName = z
  .string({ error: textError('the name of an environment variable, e.g. AWS_ACCESS_KEY_ID') })
  .transform((value, ctx) => {
    const name = envReferenceName(value) ?? (ENV_NAME.test(value) ? value : undefined);
    if (name === undefined) {
      ctx.issues.push({
        code: 'custom',
        input: value,
        message: 'is not the name of an environment variable (e.g. AWS_ACCESS_KEY_ID)',
      });
      return z.NEVER;
    }
    return name;
  });

/** S3's bucket naming rules, which S3-compatible servers share. */
const bucketName = z
  .string({ error: textError('an S3 bucket name') })
  .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, {
    error: 'is not an S3 bucket name (3–63 lowercase letters, digits, dots and hyphens)',
  });

/** A browser origin: scheme, host and optional port, nothing after. */
const origin = z
  .string({ error: textError('an origin such as https://temporal.example.com, or *') })
  .regex(/^(\*|https?:\/\/[^\s/]+)$/, {
    error:
      'is not an origin (scheme://host[:port] with nothing after, e.g. https://temporal.example.com; or *)',
  });

const s3 = section('payloads.s3', {
  endpoint: httpUrl.optional(),
  bucket: bucketName,
  region: z
    .string({ error: textError('an AWS region, e.g. us-east-1') })
    .min(1, { error: 'is empty (an AWS region, e.g. us-east-1)' })
    .default(DEFAULT_S3_REGION),
  prefix: z.string({ error: textError('a folder in the bucket') }).default(DEFAULT_S3_PREFIX),
  access_key_id_env: envName.optional(),
  secret_access_key_env: envName.optional(),
  force_path_style: bool.optional(),
}).transform((settings): S3PayloadSettings =>
  withoutUndefined({
    endpoint: settings.endpoint,
    bucket: settings.bucket,
    region: settings.region,
    prefix: settings.prefix === '' || settings.prefix.endsWith('/') ? settings.prefix : `${settings.prefix}/`,
    access_key_id_env: settings.access_key_id_env,
    secret_access_key_env: settings.secret_access_key_env,
    // AWS serves virtual-hosted buckets; MinIO, moto and most self-hosted stores want path style.
    force_path_style: settings.force_path_style ?? settings.endpoint !== undefined,
  }),
);

const codecServer = section('payloads.codec_server', {
  enabled: bool.default(true),
  port: wholeNumber(1, 65535).optional(),
  allowed_origins: listOf(origin, 'origins').default([]),
  allow_encode: bool.default(false),
  token_env: envName.default(DEFAULT_CODEC_TOKEN_ENV),
  max_encode_bytes_per_client: wholeNumber(1024).default(64 * MIB),
  max_encode_bytes: wholeNumber(1024).default(256 * MIB),
  encode_window_seconds: wholeNumber(1, 7 * 24 * 3600).default(3600),
});

const encryption = section('payloads.encryption', {
  key_env: envName.default(DEFAULT_ENCRYPTION_KEY_ENV),
  key_file: z
    .string({ error: 'is not text (a file of keys)' })
    .min(1, { error: 'is empty (write a file of keys)' })
    .optional(),
  key_command: z
    .string({ error: 'is not text (a shell command that prints keys)' })
    .trim()
    .min(1, { error: 'is empty (write a shell command that prints keys)' })
    .optional(),
  key_command_timeout_seconds: seconds.default(DEFAULT_KEY_COMMAND_TIMEOUT_SECONDS),
}).transform((settings): EncryptionSettings => withoutUndefined(settings));

/** The `payloads:` section's schema; index.ts lists it among the sections it reads. */
export const payloadsSection = section('payloads', {
  threshold_bytes: wholeNumber(MIN_PAYLOAD_THRESHOLD_BYTES, MAX_PAYLOAD_THRESHOLD_BYTES).default(
    DEFAULT_PAYLOAD_THRESHOLD_BYTES,
  ),
  shared_fields: bool.default(true),
  store: oneOf(PAYLOAD_STORES).default('local'),
  path: z
    .string({ error: 'is not text (a folder)' })
    .min(1, { error: 'is empty (write a folder)' })
    .optional(),
  s3: s3.optional(),
  codec_server: codecServer.prefault({}),
  encryption: encryption.prefault({}),
})
  .superRefine((settings, ctx) => {
    if (settings.store === 's3' && settings.s3 === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['s3'],
        input: undefined,
        message: 'is missing (store: s3 needs at least s3.bucket; s3.endpoint for a store other than AWS)',
      });
    }
    const s3Settings = settings.s3;
    if (
      s3Settings &&
      (s3Settings.access_key_id_env === undefined) !== (s3Settings.secret_access_key_env === undefined)
    ) {
      const missing =
        s3Settings.access_key_id_env === undefined ? 'access_key_id_env' : 'secret_access_key_env';
      ctx.addIssue({
        code: 'custom',
        path: ['s3', missing],
        input: undefined,
        message: 'is missing (give access_key_id_env and secret_access_key_env together, or neither)',
      });
    }
  })
  .transform((settings): PayloadSettings => withoutUndefined(settings))
  .prefault({});

/**
 * Every default: a local store under the cache folder, 16 KiB threshold, the codec endpoint on, keys from
 * SUBAGENTS_ENCRYPTION_KEY.
 */
export function defaultPayloadSettings(): PayloadSettings {
  return payloadsSection.parse(undefined);
}
