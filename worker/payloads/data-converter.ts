/**
 * The project's DataConverter: Temporal's default payload conversion, then the claim-check codec. Every Client
 * and Worker of the project is built with it; one without it would read references instead of values.
 */
import type { DataConverter } from '@temporalio/common';
import type { PayloadSettings } from '../../contracts/config/payloads';
import { ClaimCheckCodec } from './claim-check-codec';
import { openBlobStore, payloadSettings, payloadStore } from './store';

/** The codec for `settings`; without them, this process's (`configurePayloads`) and its shared store. */
export function projectCodec(settings?: PayloadSettings): ClaimCheckCodec {
  const chosen = settings ?? payloadSettings();
  const store = chosen === payloadSettings() ? payloadStore() : openBlobStore(chosen);
  return new ClaimCheckCodec({ store, thresholdBytes: chosen.threshold_bytes });
}

/** For `new Client({ dataConverter })` and `Worker.create({ dataConverter })`. */
export function projectDataConverter(settings?: PayloadSettings): DataConverter {
  return { payloadCodecs: [projectCodec(settings)] };
}
