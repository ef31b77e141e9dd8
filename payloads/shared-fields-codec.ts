/**
 * The shared-fields payload codec: each large top-level field of a JSON payload (a subagent's agent definition
 * and run scope in its input, a model call's tools and messages) is stored once in the blob store by the
 * sha256 of its JSON, and history carries the digest instead. What a run repeats in every child's input and
 * every model call's input (the same definitions, the same tool specs) then costs history a digest each time
 * and the store one blob in all (issue 50).
 *
 * Only fields named in SHARED_FIELD_NAMES are stored: the inputs a run repeats. No workflow's result and no
 * query's answer (the Web UI's current details among them) holds such a field, so they are written whole: other
 * Temporal clients and the Web UI read those without the project's codecs, and none of them repeats.
 *
 * On the wire: metadata `encoding: json/shared-fields`; data, as JSON, `{"value": <the object with each
 * stored field's value replaced by its digest>, "shared": [<the names of the stored fields>]}`. Decoding
 * fetches each field's JSON (kept in memory by digest, so a definition read by every child is read from the
 * store once a process) and restores the original `json/plain` bytes exactly: a payload is split only when
 * re-serializing its parsed value gives back its bytes (the SDK's own JSON does), otherwise it passes as is.
 * A payload large enough for the claim-check codec to store whole is left to it (one reference in history).
 *
 * Runs first when encoding (before encryption), last when decoding; its store keeps blobs encrypted at rest
 * when the process holds keys (payloads/store.ts `atRestStore`). Payloads of any other encoding pass through,
 * so histories written before it still replay, and workflow code sees the same values: no history's commands
 * change, only the bytes of its payloads.
 */
import type { Payload, PayloadCodec, SerializationContext } from '@temporalio/common';
import { PayloadBlobError } from './claim-check-codec';
import { describeContext } from './payload-context';
import { blobKey, isBlobKey, type BlobStore } from './store';

export const SHARED_FIELDS_ENCODING = 'json/shared-fields';
const JSON_ENCODING = 'json/plain';
const ENCODING_KEY = 'encoding';

/** A field whose JSON is at least this long is stored; a digest with its quotes is 66 bytes. */
export const SHARED_FIELD_MIN_BYTES = 256;
/**
 * The top-level fields stored, wherever they are large: what a run sends again and again in its inputs. A
 * subagent's `agent` (its definition and prompt) and `scope` (the run scope, carried unchanged), a lead's
 * `agents` (the catalog) and `scope`; a model call's `tools` (the specs), `messages` and `system_context` (the
 * same first messages and context in every call of a turn's retries and of a fork).
 */
export const SHARED_FIELD_NAMES: ReadonlySet<string> = new Set([
  'agent',
  'agents',
  'scope',
  'tools',
  'messages',
  'system_context',
]);
/** Below this a payload cannot hold a field worth storing next to its others. */
const MIN_PAYLOAD_BYTES = SHARED_FIELD_MIN_BYTES + 16;
/** Fields' JSON kept in memory by digest, at most this many characters in all (oldest dropped first). */
const CACHE_CHARS = 32 * 1024 * 1024;

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

interface SharedFieldsData {
  value: Record<string, unknown>;
  shared: string[];
}

export interface SharedFieldsCodecOptions {
  /** Where fields are stored: the at-rest store (encrypted when the process holds keys). */
  store: BlobStore;
  /** A field's JSON at least this long is stored (default SHARED_FIELD_MIN_BYTES). */
  minFieldBytes?: number;
  /**
   * A payload larger than this is left whole: the claim-check codec keeps it out of history by one reference
   * (its `thresholdBytes`), and its blob is checked on every read. Absent: no such bound.
   */
  wholeAboveBytes?: number;
  /** False: payloads are written whole (`payloads.shared_fields: false`); those written with it are still read. */
  share?: boolean;
}

export class SharedFieldsCodec implements PayloadCodec {
  readonly store: BlobStore;
  readonly minFieldBytes: number;
  readonly wholeAboveBytes: number;
  readonly share: boolean;
  /** Digest → the field's JSON: stored by or read into this process (an insertion-ordered LRU). */
  private readonly known = new Map<string, string>();
  private knownChars = 0;

  constructor(options: SharedFieldsCodecOptions) {
    this.store = options.store;
    this.minFieldBytes = options.minFieldBytes ?? SHARED_FIELD_MIN_BYTES;
    this.wholeAboveBytes = options.wholeAboveBytes ?? Infinity;
    this.share = options.share ?? true;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(payloads.map((payload) => this.encodeOne(payload)));
  }

  async decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    return Promise.all(payloads.map((payload) => this.decodeOne(payload, context)));
  }

  private async encodeOne(payload: Payload): Promise<Payload> {
    const { data, metadata } = payload;
    if (!this.share || !data || data.length < Math.max(MIN_PAYLOAD_BYTES, this.minFieldBytes)) return payload;
    if (data.length > this.wholeAboveBytes) return payload;
    if (!metadata || Object.keys(metadata).length !== 1 || !isEncoding(payload, JSON_ENCODING))
      return payload;
    // An object's JSON starts with `{`: anything else (arrays, strings, numbers) passes without parsing.
    if (data[0] !== 0x7b) return payload;
    const text = textDecoder.decode(data);
    const value = JSON.parse(text) as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return payload;
    const fields = value as Record<string, unknown>;
    const large: [string, string][] = [];
    for (const [name, field] of Object.entries(fields)) {
      // Only the named fields (never `__proto__`, which decoding would set as the prototype, not as a field).
      if (!SHARED_FIELD_NAMES.has(name) || (typeof field !== 'object' && typeof field !== 'string')) continue;
      const json = JSON.stringify(field);
      if (json.length >= this.minFieldBytes) large.push([name, json]);
    }
    if (large.length === 0 || JSON.stringify(value) !== text) return payload;
    const shared: string[] = [];
    for (const [name, json] of large) {
      const key = blobKey(textEncoder.encode(json));
      if (!this.known.has(key)) await this.store.put(key, textEncoder.encode(json));
      this.remember(key, json);
      fields[name] = key;
      shared.push(name);
    }
    const out: SharedFieldsData = { value: fields, shared };
    return {
      metadata: { [ENCODING_KEY]: textEncoder.encode(SHARED_FIELDS_ENCODING) },
      data: textEncoder.encode(JSON.stringify(out)),
    };
  }

  private async decodeOne(payload: Payload, context?: SerializationContext): Promise<Payload> {
    if (!isEncoding(payload, SHARED_FIELDS_ENCODING)) return payload;
    const { value, shared } = readSharedFields(payload);
    for (const name of shared) {
      const key = name === '__proto__' ? undefined : value[name];
      if (typeof key !== 'string' || !isBlobKey(key)) {
        throw new PayloadBlobError(
          `malformed ${SHARED_FIELDS_ENCODING} payload: field ${JSON.stringify(name)} holds no sha256 digest`,
        );
      }
      value[name] = JSON.parse(await this.fieldJson(key, context)) as unknown;
    }
    return {
      metadata: { [ENCODING_KEY]: textEncoder.encode(JSON_ENCODING) },
      data: textEncoder.encode(JSON.stringify(value)),
    };
  }

  /** A stored field's JSON: from memory, else from the store (checked against its digest). */
  private async fieldJson(key: string, context?: SerializationContext): Promise<string> {
    const cached = this.known.get(key);
    if (cached !== undefined) {
      this.remember(key, cached);
      return cached;
    }
    const bytes = await this.store.get(key);
    const where = context === undefined ? '' : ` (${describeContext(context)})`;
    if (bytes === undefined) {
      throw new PayloadBlobError(
        `payload blob ${key} is missing from ${this.store.description}${where}: ` +
          'it was deleted, or stored by a process on another payloads store (every worker, client and codec ' +
          'server of a deployment must use the same payloads.store)',
      );
    }
    const actual = blobKey(bytes);
    if (actual !== key) {
      throw new PayloadBlobError(
        `payload blob ${key} in ${this.store.description}${where} is corrupt: ` +
          `its ${bytes.length} bytes hash to ${actual}; refusing to use it`,
      );
    }
    const json = textDecoder.decode(bytes);
    this.remember(key, json);
    return json;
  }

  private remember(key: string, json: string): void {
    if (this.known.delete(key)) this.knownChars -= json.length;
    this.known.set(key, json);
    this.knownChars += json.length;
    for (const [oldest, text] of this.known) {
      if (this.knownChars <= CACHE_CHARS) break;
      this.known.delete(oldest);
      this.knownChars -= text.length;
    }
  }
}

function isEncoding(payload: Payload, encoding: string): boolean {
  const raw = payload.metadata?.[ENCODING_KEY];
  return raw !== undefined && raw !== null && textDecoder.decode(raw) === encoding;
}

function readSharedFields(payload: Payload): SharedFieldsData {
  const text = payload.data ? textDecoder.decode(payload.data) : '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const { value, shared } = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<
    string,
    unknown
  >;
  if (
    typeof value !== 'object' ||
    value === null ||
    Array.isArray(value) ||
    !Array.isArray(shared) ||
    !shared.every((name) => typeof name === 'string')
  ) {
    const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
    throw new PayloadBlobError(
      `malformed ${SHARED_FIELDS_ENCODING} payload: ${JSON.stringify(shown)} ` +
        '(expected {"value": {…}, "shared": ["<field>", …]})',
    );
  }
  return { value: value as Record<string, unknown>, shared: shared as string[] };
}
