/**
 * The project's DataConverter: Temporal's default payload conversion, then the shared-fields codec (large
 * fields stored once by digest), then the encryption codec, then the claim-check codec. Every Client, Worker and codec endpoint of the project is built with it; one without it
 * would read ciphertext and references instead of values.
 *
 * Encoding runs the codecs in order (share large fields, encrypt, then store what is large), decoding in
 * reverse (fetch, decrypt, restore the fields): the payload store and history hold only ciphertext or
 * references to it (the shared fields' blobs are encrypted at rest by their store).
 */
import type { DataConverter, Payload, PayloadCodec, SerializationContext } from '@temporalio/common';
import type { PayloadSettings } from '../contracts/config/payloads';
import { ClaimCheckCodec } from './claim-check-codec';
import { EncryptionCodec, PayloadKeyring } from './encryption-codec';
import { processEncryptionKeys } from './encryption-keys';
import { SharedFieldsCodec } from './shared-fields-codec';
import { atRestStore, openBlobStore, payloadSettings, plainPayloadStore } from './store';

/** Several codecs as one, for an endpoint that takes one (the codec server). */
export class CodecChain implements PayloadCodec {
  constructor(readonly codecs: readonly PayloadCodec[]) {}

  async encode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    for (const codec of this.codecs) payloads = await codec.encode(payloads, context);
    return payloads;
  }

  async decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    for (const codec of [...this.codecs].reverse()) payloads = await codec.decode(payloads, context);
    return payloads;
  }
}

/**
 * The codecs for `settings`, in encoding order; without settings, this process's (`configurePayloads`) and
 * its shared store. The keys come from `settings.encryption` and this process's environment, read once.
 */
export function projectCodecs(
  settings?: PayloadSettings,
): [SharedFieldsCodec, EncryptionCodec, ClaimCheckCodec] {
  const chosen = settings ?? payloadSettings();
  const store = chosen === payloadSettings() ? plainPayloadStore() : openBlobStore(chosen);
  return [
    new SharedFieldsCodec({
      store: atRestStore(store, chosen),
      wholeAboveBytes: chosen.threshold_bytes,
      share: chosen.shared_fields,
    }),
    new EncryptionCodec(new PayloadKeyring(processEncryptionKeys(chosen.encryption))),
    new ClaimCheckCodec({ store, thresholdBytes: chosen.threshold_bytes }),
  ];
}

/** The project's codecs as one (shared fields, encryption, then claim-check), for the codec endpoint and tests. */
export function projectCodec(settings?: PayloadSettings): CodecChain {
  return new CodecChain(projectCodecs(settings));
}

/** For `new Client({ dataConverter })` and `Worker.create({ dataConverter })`. */
export function projectDataConverter(settings?: PayloadSettings): DataConverter {
  return { payloadCodecs: projectCodecs(settings) };
}
