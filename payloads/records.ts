/**
 * Small mutable records beside the content-addressed blobs: a name whose bytes may be replaced, and a create
 * that only one writer can win. A blob's key says what it holds; a record's name says what it is for (a run's
 * current workspace manifest, the epoch that owns it), so the store must offer the one operation blobs cannot:
 * "write this unless someone already has".
 *
 * Local records are files `<payload dir>/records/<name>`, S3 records objects `<prefix>records/<name>`: neither
 * can collide with a blob, whose key is 64 hex digits.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type * as S3Library from '@aws-sdk/client-s3';
import type { PayloadSettings, S3PayloadSettings } from '../contracts/config/payloads';
import {
  createS3Client,
  isNotFound,
  localPayloadDir,
  s3Credentials,
  s3Library,
  type S3Credentials,
} from './store';

export interface RecordStore {
  /**
   * Writes bytes under name unless a record is there already; true when this call wrote it (atomic
   * create-if-absent).
   */
  create(name: string, bytes: Uint8Array): Promise<boolean>;
  /** Writes (replaces) the record. */
  put(name: string, bytes: Uint8Array): Promise<void>;
  /** The record's bytes, or undefined. */
  get(name: string): Promise<Uint8Array | undefined>;
  /** Where the records are, for messages: `records in local directory /…/records`, `records in S3 bucket …`. */
  readonly description: string;
}

const RECORD_NAME = /^[a-z0-9][a-z0-9._/-]{0,300}$/;

/** Why `name` cannot name a record, or undefined when it can. */
export function recordNameProblem(name: string): string | undefined {
  if (!RECORD_NAME.test(name))
    return 'it must start with a lowercase letter or digit and hold at most 301 of a-z 0-9 . _ / -';
  if (name.endsWith('/')) return 'it must not end with a slash';
  if (name.split('/').some((segment) => segment === '' || segment === '.' || segment === '..'))
    return 'it must not hold an empty, "." or ".." segment';
  return undefined;
}

/** Names reach the store from workflow state: one that could climb out of `records/` is refused. */
function checkName(name: string): void {
  const problem = recordNameProblem(name);
  if (problem !== undefined)
    throw new Error(`not a payload record name: ${JSON.stringify(name)} (${problem})`);
}

/**
 * Records as files. Every write goes to a synced temporary file first: `put` renames it into place, `create`
 * hard-links it to the record's path, which fails with EEXIST when the record is there, in one step, so two
 * hosts racing to create it cannot both win and a reader never sees half a record. Owner-only permissions.
 */
export class LocalDirRecordStore implements RecordStore {
  readonly description: string;

  constructor(readonly dir: string) {
    this.description = `records in local directory ${dir}`;
  }

  pathOf(name: string): string {
    checkName(name);
    return join(this.dir, name);
  }

  async create(name: string, bytes: Uint8Array): Promise<boolean> {
    const path = this.pathOf(name);
    return this.viaTemporary(name, path, bytes, 'create', async (temporary) => {
      try {
        await link(temporary, path);
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw err;
      }
    });
  }

  async put(name: string, bytes: Uint8Array): Promise<void> {
    const path = this.pathOf(name);
    await this.viaTemporary(name, path, bytes, 'store', (temporary) => rename(temporary, path));
  }

  async get(name: string): Promise<Uint8Array | undefined> {
    try {
      return await readFile(this.pathOf(name));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // ENOTDIR: a record `a/b` asked for where a record `a` is a file; there is no such record either way.
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      throw new Error(`cannot read payload record ${name} in ${this.description}: ${(err as Error).message}`);
    }
  }

  /** Writes `bytes` to a synced temporary file beside `path`, hands it to `place`, and always removes it. */
  private async viaTemporary<T>(
    name: string,
    path: string,
    bytes: Uint8Array,
    what: string,
    place: (temporary: string) => Promise<T>,
  ): Promise<T> {
    // Short: a record's last segment may be as long as a file name can be.
    const temporary = join(dirname(path), `.record.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      const file = await open(temporary, 'wx', 0o600);
      try {
        await file.writeFile(bytes);
        await file.sync();
      } finally {
        await file.close();
      }
      return await place(temporary);
    } catch (err) {
      throw new Error(
        `cannot ${what} payload record ${name} in ${this.description}: ${(err as Error).message}`,
      );
    } finally {
      // After a rename there is nothing left to remove; after a link, the record keeps its own name.
      await unlink(temporary).catch(() => undefined);
    }
  }
}

/** How often a create is retried when S3 answers that a conditional write to the same key is in flight. */
const CONFLICT_RETRIES = 3;

/** Records as objects `<prefix>records/<name>`; a create is a PutObject with `If-None-Match: *`. */
export class S3RecordStore implements RecordStore {
  readonly description: string;
  private client: S3Library.S3Client | undefined;
  private readonly credentials: S3Credentials | undefined;

  /** Reads the credentials' environment variables now, so a missing one stops the bootstrap, not a run. */
  constructor(
    readonly settings: S3PayloadSettings,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    const where = settings.endpoint ?? `AWS region ${settings.region}`;
    const prefix = settings.prefix ? ` (prefix ${settings.prefix})` : '';
    this.description = `records in S3 bucket ${settings.bucket}${prefix} at ${where}`;
    this.credentials = settings.access_key_id_env === undefined ? undefined : s3Credentials(settings, env);
  }

  private objectKey(name: string): string {
    checkName(name);
    return `${this.settings.prefix}records/${name}`;
  }

  private s3(): S3Library.S3Client {
    this.client ??= createS3Client(this.settings, this.credentials);
    return this.client;
  }

  async create(name: string, bytes: Uint8Array): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.send(name, bytes, '*');
        return true;
      } catch (err) {
        const status = httpStatus(err);
        if (status === 412 || (err as { name?: string }).name === 'PreconditionFailed') return false;
        // 409: another conditional write to this key is under way; once it lands, ours gets its 412.
        if (status === 409 && attempt < CONFLICT_RETRIES) {
          await new Promise((resolve) => setTimeout(resolve, 100 * (attempt + 1)));
          continue;
        }
        throw this.failure('create', name, err);
      }
    }
  }

  async put(name: string, bytes: Uint8Array): Promise<void> {
    try {
      await this.send(name, bytes, undefined);
    } catch (err) {
      throw this.failure('store', name, err);
    }
  }

  async get(name: string): Promise<Uint8Array | undefined> {
    const Key = this.objectKey(name);
    const { GetObjectCommand } = s3Library();
    try {
      const response = await this.s3().send(new GetObjectCommand({ Bucket: this.settings.bucket, Key }));
      if (response.Body === undefined) return new Uint8Array();
      return await response.Body.transformToByteArray();
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw this.failure('read', name, err);
    }
  }

  private async send(name: string, bytes: Uint8Array, ifNoneMatch: '*' | undefined): Promise<void> {
    const Key = this.objectKey(name);
    const { PutObjectCommand } = s3Library();
    await this.s3().send(
      new PutObjectCommand({
        Bucket: this.settings.bucket,
        Key,
        Body: bytes,
        ContentLength: bytes.byteLength,
        ContentType: 'application/octet-stream',
        ...(ifNoneMatch && { IfNoneMatch: ifNoneMatch }),
      }),
    );
  }

  private failure(what: string, name: string, err: unknown): Error {
    const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    return new Error(`cannot ${what} payload record ${name} in ${this.description}: ${reason}`);
  }
}

function httpStatus(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  return (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

/** The record store beside the blob store the settings describe (nothing is touched until the first call). */
export function openRecordStore(
  settings: PayloadSettings,
  env: NodeJS.ProcessEnv = process.env,
): RecordStore {
  if (settings.store === 's3') {
    if (!settings.s3) throw new Error('payloads.store is s3 but payloads.s3 is missing');
    return new S3RecordStore(settings.s3, env);
  }
  return new LocalDirRecordStore(join(localPayloadDir(settings, env), 'records'));
}
