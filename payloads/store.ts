/**
 * Content-addressed blob stores for payloads kept out of workflow history: a local folder by default, an
 * S3-compatible bucket when several machines share runs. A blob's key is the lowercase hex sha256 of its bytes,
 * so writing the same bytes twice stores them once and a reader can check what it got.
 *
 * One store per process: the worker or client bootstrap calls `configurePayloads(config.payloads)` once; the
 * claim-check codec reads it through `plainPayloadStore()` (its payloads are encrypted already), the process's
 * readers of transcripts through `payloadStore()` (encrypted at rest when the process holds keys), and a
 * worker hands `activityPayloadStore()` to the activities it builds. The codec keeps a process-wide store
 * because the data converter is built where no worker is (every client, the codec server).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type * as S3Library from '@aws-sdk/client-s3';
import {
  defaultPayloadSettings,
  type PayloadSettings,
  type S3PayloadSettings,
} from '../contracts/config/payloads';
import { cacheRoot } from './cache-root';
import { EncryptedBlobStore } from './encrypted-store';
import { PayloadKeyring } from './encryption-codec';
import { processEncryptionKeys } from './encryption-keys';
import { loadOptional } from './optional-packages';

export interface BlobStore {
  /** Stores `bytes` under `key` (their sha256); a key that is already there is left as is. */
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** The bytes stored under `key`, or undefined when there are none. */
  get(key: string): Promise<Uint8Array | undefined>;
  /** Where the blobs are, for messages: `local directory /…/payloads`, `S3 bucket …`. */
  readonly description: string;
}

/** Overrides `payloads.path` for the local store (tests give every suite a folder of its own). */
export const PAYLOAD_DIR_ENV = 'SUBAGENTS_PAYLOAD_DIR';

const BLOB_KEY = /^[0-9a-f]{64}$/;

/** The store's key for `bytes`: lowercase hex sha256. */
export function blobKey(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export function isBlobKey(key: string): boolean {
  return BLOB_KEY.test(key);
}

/** Keys reach stores from history and from HTTP requests: anything but 64 hex digits could name another file. */
function checkKey(key: string): void {
  if (!isBlobKey(key))
    throw new Error(`not a payload blob key: ${JSON.stringify(key)} (64 lowercase hex digits)`);
}

/** `<cache>/payloads`, beside the Temporal CLI build and the dev server's database. */
export function defaultPayloadDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), 'payloads');
}

/** The local store's folder: SUBAGENTS_PAYLOAD_DIR, else payloads.path, else the cache folder's. */
export function localPayloadDir(settings: PayloadSettings, env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env[PAYLOAD_DIR_ENV];
  if (fromEnv) return resolve(fromEnv);
  return settings.path ?? defaultPayloadDir(env);
}

/**
 * Blobs as files `<dir>/ab/cdef…` (the first two hex digits name a folder, so no folder holds more than a
 * 256th of them). Writes go to a temporary file that is synced and renamed into place: a reader never sees
 * half a blob, and a crash leaves at worst a stray `.tmp` file. Owner-only permissions: blobs are transcripts.
 * The sync stays (unlike the live stream's file): once the activity that stored a blob completes, history
 * refers to it by key, and a blob lost to a power cut (a transcript, a shared field) cannot be made again.
 */
export class LocalDirBlobStore implements BlobStore {
  readonly description: string;
  /**
   * The `ab/` folders this store made or found: a write into one needs no `mkdir` (a call into the thread pool
   * per blob, issue 50 item 3). One removed behind its back is made again when the write finds it missing.
   */
  readonly #folders = new Set<string>();

  constructor(readonly dir: string) {
    this.description = `local directory ${dir}`;
  }

  pathOf(key: string): string {
    checkKey(key);
    return join(this.dir, key.slice(0, 2), key.slice(2));
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    const path = this.pathOf(key);
    // A blob already there is left as it is: the same key is the same bytes.
    if (await exists(path)) return;
    const folder = dirname(path);
    const temporary = join(folder, `.${key.slice(2)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    try {
      const file = await this.#create(folder, temporary);
      try {
        await file.writeFile(bytes);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temporary, path);
    } catch (err) {
      await unlink(temporary).catch(() => undefined);
      throw new Error(`cannot store payload blob ${key} in ${this.description}: ${(err as Error).message}`);
    }
  }

  /** Creates `temporary` in `folder`, making the folder first when this store has not seen it. */
  async #create(folder: string, temporary: string): Promise<FileHandle> {
    if (this.#folders.has(folder)) {
      try {
        return await open(temporary, 'wx', 0o600);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        this.#folders.delete(folder);
      }
    }
    await mkdir(folder, { recursive: true, mode: 0o700 });
    this.#folders.add(folder);
    return open(temporary, 'wx', 0o600);
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      return await readFile(this.pathOf(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/** Blobs as objects `<prefix><sha256>` in an S3 bucket (AWS or any S3-compatible server). */
export class S3BlobStore implements BlobStore {
  readonly description: string;
  private client: S3Library.S3Client | undefined;
  private readonly credentials: S3Credentials | undefined;

  /** Reads the credentials' environment variables now, so a missing one stops the bootstrap, not a run. */
  constructor(
    readonly settings: S3PayloadSettings,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    const where = settings.endpoint ?? `AWS region ${settings.region}`;
    this.description = `S3 bucket ${settings.bucket}${settings.prefix ? ` (prefix ${settings.prefix})` : ''} at ${where}`;
    this.credentials = settings.access_key_id_env === undefined ? undefined : s3Credentials(settings, env);
  }

  private objectKey(key: string): string {
    checkKey(key);
    return `${this.settings.prefix}${key}`;
  }

  private s3(): S3Library.S3Client {
    this.client ??= createS3Client(this.settings, this.credentials);
    return this.client;
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    const Key = this.objectKey(key);
    const { HeadObjectCommand, PutObjectCommand } = s3Library();
    const client = this.s3();
    try {
      await client.send(new HeadObjectCommand({ Bucket: this.settings.bucket, Key }));
      return;
    } catch (err) {
      if (!isNotFound(err)) throw this.failure('check', key, err);
    }
    try {
      await client.send(
        new PutObjectCommand({
          Bucket: this.settings.bucket,
          Key,
          Body: bytes,
          ContentLength: bytes.byteLength,
          ContentType: 'application/octet-stream',
        }),
      );
    } catch (err) {
      throw this.failure('store', key, err);
    }
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    const Key = this.objectKey(key);
    const { GetObjectCommand } = s3Library();
    const client = this.s3();
    try {
      const response = await client.send(new GetObjectCommand({ Bucket: this.settings.bucket, Key }));
      if (response.Body === undefined) return new Uint8Array();
      return await response.Body.transformToByteArray();
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw this.failure('read', key, err);
    }
  }

  private failure(what: string, key: string, err: unknown): Error {
    const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    return new Error(`cannot ${what} payload blob ${key} in ${this.description}: ${reason}`);
  }
}

/** No such object; a missing bucket is a fault of the store, not a missing blob. */
export function isNotFound(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { name, $metadata } = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  if (name === 'NoSuchBucket') return false;
  return name === 'NotFound' || name === 'NoSuchKey' || $metadata?.httpStatusCode === 404;
}

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** The S3 client library, loaded on first use: it would add about 100 ms to the start of every process. */
export function s3Library(): typeof S3Library {
  return loadOptional(
    'the S3 payload store (payloads.store: s3)',
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy, and import() needs --experimental-vm-modules under jest
    () => require('@aws-sdk/client-s3') as typeof S3Library,
  );
}

export function createS3Client(
  settings: S3PayloadSettings,
  credentials: S3Credentials | undefined,
): S3Library.S3Client {
  return new (s3Library().S3Client)({
    region: settings.region,
    forcePathStyle: settings.force_path_style,
    ...(settings.endpoint && { endpoint: settings.endpoint }),
    // Without named variables: the SDK's own chain (AWS_ACCESS_KEY_ID, profiles, instance roles).
    ...(credentials && { credentials }),
    // Checksums on every request are the SDK's default since 2025, and several S3-compatible servers refuse
    // them; the codec checks each blob's sha256 itself.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

export function s3Credentials(settings: S3PayloadSettings, env: NodeJS.ProcessEnv): S3Credentials {
  const read = (key: 'access_key_id_env' | 'secret_access_key_env'): string => {
    const name = settings[key] ?? '';
    const value = env[name];
    if (!value) throw new Error(`payloads.s3.${key}: the environment variable ${name} is not set`);
    return value;
  };
  return { accessKeyId: read('access_key_id_env'), secretAccessKey: read('secret_access_key_env') };
}

/** The store the settings describe (nothing is touched until the first put or get). */
export function openBlobStore(settings: PayloadSettings, env: NodeJS.ProcessEnv = process.env): BlobStore {
  if (settings.store === 's3') {
    if (!settings.s3) throw new Error('payloads.store is s3 but payloads.s3 is missing');
    return new S3BlobStore(settings.s3, env);
  }
  return new LocalDirBlobStore(localPayloadDir(settings, env));
}

let processSettings: PayloadSettings = defaultPayloadSettings();
let processStore: BlobStore | undefined;
let processEncryptedStore: BlobStore | undefined;

/** Sets this process's payload settings (bootstrap, once, after reading the config). */
export function configurePayloads(settings: PayloadSettings): void {
  processSettings = settings;
  processStore = undefined;
  processEncryptedStore = undefined;
}

/** This process's payload settings: what `configurePayloads` set, else the defaults. */
export function payloadSettings(): PayloadSettings {
  return processSettings;
}

/** This process's blob store as it is (the local default until `configurePayloads` says otherwise). */
export function plainPayloadStore(): BlobStore {
  processStore ??= openBlobStore(processSettings);
  return processStore;
}

/**
 * The store for what is kept without the codecs (transcripts, tool specs, checkpoints) over `plain`: blobs
 * encrypted at rest under the newest key when the process holds keys for `settings`, `plain` itself when not.
 */
export function atRestStore(plain: BlobStore, settings: PayloadSettings): BlobStore {
  const keyring = new PayloadKeyring(processEncryptionKeys(settings.encryption));
  return keyring.keyId === undefined ? plain : new EncryptedBlobStore(plain, keyring);
}

/** This process's store for what is kept without the codecs (`atRestStore` over its plain store). */
export function payloadStore(): BlobStore {
  processEncryptedStore ??= atRestStore(plainPayloadStore(), processSettings);
  return processEncryptedStore;
}

/**
 * The store a worker's activities keep transcripts, tool specs and checkpoints in: for `settings`, or without
 * them this process's (the one its readers, `steps` and the codec server, open).
 */
export function activityPayloadStore(settings?: PayloadSettings): BlobStore {
  if (settings === undefined || settings === processSettings) return payloadStore();
  return atRestStore(openBlobStore(settings), settings);
}
