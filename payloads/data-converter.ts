/**
 * The project's DataConverter: Temporal's default payload conversion, then the encryption codec, then the
 * claim-check codec. Every Client, Worker and codec endpoint of the project is built with it; one without it
 * would read ciphertext and references instead of values.
 *
 * Encoding runs the codecs in order (encrypt, then store what is large), decoding in reverse (fetch, then
 * decrypt): the payload store and history hold only ciphertext or references to it.
 */
import type { DataConverter, Payload, PayloadCodec, SerializationContext } from '@temporalio/common';
import type { PayloadSettings } from '../contracts/config/payloads';
import { ClaimCheckCodec } from './claim-check-codec';
import { EncryptionCodec, PayloadKeyring } from './encryption-codec';
import { processEncryptionKeys } from './encryption-keys';
import { openBlobStore, payloadSettings, plainPayloadStore } from './store';

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
export function projectCodecs(settings?: PayloadSettings): [EncryptionCodec, ClaimCheckCodec] {
  const chosen = settings ?? payloadSettings();
  const store = chosen === payloadSettings() ? plainPayloadStore() : openBlobStore(chosen);
  return [
    new EncryptionCodec(new PayloadKeyring(processEncryptionKeys(chosen.encryption))),
    new ClaimCheckCodec({ store, thresholdBytes: chosen.threshold_bytes }),
  ];
}

/** The project's codecs as one (encryption, then claim-check), for the codec endpoint and tests. */
export function projectCodec(settings?: PayloadSettings): CodecChain {
  return new CodecChain(projectCodecs(settings));
}

/** For `new Client({ dataConverter })` and `Worker.create({ dataConverter })`. */
export function projectDataConverter(settings?: PayloadSettings): DataConverter {
  return { payloadCodecs: projectCodecs(settings) };
}
