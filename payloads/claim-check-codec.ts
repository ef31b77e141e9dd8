/**
 * The claim-check payload codec: a payload too large for workflow history is stored in a blob store by the
 * sha256 of its bytes, and history carries a small reference instead.
 *
 * On the wire, a reference is a payload with metadata `encoding: binary/claim-check` and data, as JSON,
 * `{"sha256": "<64 hex digits>", "size": <bytes>}`: the hash of the original payload's
 * `temporal.api.common.v1.Payload` protobuf encoding (metadata and data, so decoding restores it exactly) and
 * that encoding's length. Identical payloads (a transcript sent again, the same file read twice) hash alike
 * and are stored once.
 *
 * Runs in clients and workers only (Temporal applies codecs outside the workflow sandbox). Payloads of any
 * other encoding pass through untouched both ways, so histories written before the codec still replay.
 */
import type { Payload, PayloadCodec, SerializationContext } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { DEFAULT_PAYLOAD_THRESHOLD_BYTES } from '../contracts/config/payloads';
import { describeContext } from './payload-context';
import { blobKey, isBlobKey, type BlobStore } from './store';

const ProtoPayload = temporal.api.common.v1.Payload;

export const CLAIM_CHECK_ENCODING = 'binary/claim-check';
const ENCODING_KEY = 'encoding';

/** What a claim-check payload's data says, as JSON. */
export interface ClaimCheckReference {
  /** Lowercase hex sha256 of the stored bytes: the original payload's protobuf encoding. */
  sha256: string;
  /** Their length in bytes. */
  size: number;
}

/** A claim-check payload whose blob cannot be used: missing, altered, or a malformed reference. */
export class PayloadBlobError extends Error {
  override name = 'PayloadBlobError';
}

export interface ClaimCheckCodecOptions {
  store: BlobStore;
  /** Payloads whose protobuf encoding is larger than this are stored (default 16384). */
  thresholdBytes?: number;
}

/** Keys this process already stored, so a transcript sent every turn costs one store call, not one per turn. */
const REMEMBERED_KEYS = 4096;

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

export class ClaimCheckCodec implements PayloadCodec {
  readonly store: BlobStore;
  readonly thresholdBytes: number;
  private readonly stored = new Set<string>();

  constructor(options: ClaimCheckCodecOptions) {
    this.store = options.store;
    this.thresholdBytes = options.thresholdBytes ?? DEFAULT_PAYLOAD_THRESHOLD_BYTES;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(payloads.map((payload) => this.encodeOne(payload)));
  }

  async decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    return Promise.all(payloads.map((payload) => this.decodeOne(payload, context)));
  }

  private async encodeOne(payload: Payload): Promise<Payload> {
    // Most payloads are small: an upper bound of their encoded size spares encoding them just to measure.
    if (encodedSizeBound(payload) <= this.thresholdBytes) return payload;
    const bytes = ProtoPayload.encode(payload).finish();
    if (bytes.length <= this.thresholdBytes) return payload;
    const sha256 = blobKey(bytes);
    if (!this.stored.has(sha256)) {
      await this.store.put(sha256, bytes);
      this.remember(sha256);
    }
    return claimCheckPayload({ sha256, size: bytes.length });
  }

  private remember(key: string): void {
    this.stored.add(key);
    if (this.stored.size > REMEMBERED_KEYS) {
      const oldest = this.stored.values().next().value;
      if (oldest !== undefined) this.stored.delete(oldest);
    }
  }

  private async decodeOne(payload: Payload, context?: SerializationContext): Promise<Payload> {
    if (!isClaimCheckPayload(payload)) return payload;
    const reference = readReference(payload);
    const bytes = await this.store.get(reference.sha256);
    const where = context === undefined ? '' : ` (${describeContext(context)})`;
    if (bytes === undefined) {
      throw new PayloadBlobError(
        `payload blob ${reference.sha256} is missing from ${this.store.description}${where}: ` +
          'it was deleted, or stored by a process on another payloads store (every worker, client and codec ' +
          'server of a deployment must use the same payloads.store)',
      );
    }
    const actual = blobKey(bytes);
    if (actual !== reference.sha256) {
      throw new PayloadBlobError(
        `payload blob ${reference.sha256} in ${this.store.description}${where} is corrupt: ` +
          `its ${bytes.length} bytes hash to ${actual}; refusing to use it`,
      );
    }
    return ProtoPayload.decode(bytes);
  }
}

/** The small payload history keeps in place of a stored one. */
export function claimCheckPayload(reference: ClaimCheckReference): Payload {
  return {
    metadata: { [ENCODING_KEY]: textEncoder.encode(CLAIM_CHECK_ENCODING) },
    data: textEncoder.encode(JSON.stringify({ sha256: reference.sha256, size: reference.size })),
  };
}

export function isClaimCheckPayload(payload: Payload): boolean {
  const encoding = payload.metadata?.[ENCODING_KEY];
  return encoding !== undefined && encoding !== null && textDecoder.decode(encoding) === CLAIM_CHECK_ENCODING;
}

/** The reference a claim-check payload carries, checked: its hash becomes a file or object name. */
export function readReference(payload: Payload): ClaimCheckReference {
  const text = payload.data ? textDecoder.decode(payload.data) : '';
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const { sha256, size } = (typeof value === 'object' && value !== null ? value : {}) as Record<
    string,
    unknown
  >;
  if (
    typeof sha256 !== 'string' ||
    !isBlobKey(sha256) ||
    typeof size !== 'number' ||
    !Number.isSafeInteger(size)
  ) {
    const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
    throw new PayloadBlobError(
      `malformed ${CLAIM_CHECK_ENCODING} payload: ${JSON.stringify(shown)} ` +
        '(expected {"sha256": "<64 lowercase hex digits>", "size": <bytes>})',
    );
  }
  return { sha256, size };
}

/**
 * At least the size of the payload's protobuf encoding: each field costs at most a tag byte and a 5-byte length
 * besides its content, each metadata entry three such fields.
 */
function encodedSizeBound(payload: Payload): number {
  if (payload.externalPayloads?.length) return Infinity;
  let size = 6 + (payload.data?.length ?? 0);
  for (const [key, value] of Object.entries(payload.metadata ?? {})) {
    size += 18 + Buffer.byteLength(key) + (value?.length ?? 0);
  }
  return size;
}
