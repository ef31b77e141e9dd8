/**
 * Every payload a history holds, wherever in its events it sits (inputs, results, memo, summaries, details,
 * Update and signal inputs, markers, headers, search attributes), found by walking each event: a check that
 * reads them all cannot miss a field that a list of known fields would.
 */
import { temporal } from '@temporalio/proto';

type IHistory = temporal.api.history.v1.IHistory;
type IPayload = temporal.api.common.v1.IPayload;

export interface PlacedPayload {
  /** The event's type and the payload's path in it: `EVENT_TYPE_…: userMetadata.summary`. */
  where: string;
  payload: IPayload;
}

const isPayload = (value: object): value is IPayload =>
  'data' in value && value.data instanceof Uint8Array && 'metadata' in value;

const eventTypeName = (type: temporal.api.enums.v1.EventType | null | undefined) =>
  temporal.api.enums.v1.EventType[type ?? 0];

export function historyPayloads(history: IHistory): PlacedPayload[] {
  const found: PlacedPayload[] = [];
  const walk = (value: unknown, path: string, event: string) => {
    if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return;
    if (isPayload(value)) {
      found.push({ where: `${event}: ${path}`, payload: value });
      return;
    }
    for (const [key, child] of Object.entries(value)) walk(child, path ? `${path}.${key}` : key, event);
  };
  for (const event of history.events ?? []) walk(event, '', eventTypeName(event.eventType));
  return found;
}

/** The payload's encoding (`metadata.encoding`), as text. */
export function payloadEncoding(payload: IPayload): string {
  return Buffer.from(payload.metadata?.encoding ?? []).toString('utf8');
}

/** Where `text` appears in a payload's bytes or its metadata. */
export function payloadsHolding(payloads: PlacedPayload[], text: string): string[] {
  const needle = Buffer.from(text, 'utf8');
  return payloads
    .filter(
      ({ payload }) =>
        Buffer.from(payload.data ?? []).includes(needle) ||
        Object.values(payload.metadata ?? {}).some((value) => Buffer.from(value).includes(needle)),
    )
    .map(({ where }) => where);
}
