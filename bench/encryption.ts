/**
 * The cost of payload encryption (payloads/encryption-codec.ts): encoding and decoding one payload of
 * each size with a key, against the same payload with none (the codec passes it through), and how many bytes
 * a payload grows by. No Temporal: the codec alone, as every client and worker runs it. Runs alone too:
 * `node dist/bench/encryption.js`.
 */
import { randomBytes } from 'node:crypto';
import type { Payload } from '@temporalio/common';
import { defaultPayloadConverter } from '@temporalio/common';
import { EncryptionCodec, PayloadKeyring } from '../payloads/encryption-codec';
import { keyIdOf } from '../payloads/encryption-keys';
import { formatTable, msRow, type BenchResult } from './stats';

const ROUNDS = 200;
const SIZES: [string, number][] = [
  ['200 B', 200],
  ['4 KiB', 4096],
  ['64 KiB', 65_536],
  ['1 MiB', 1_048_576],
];

/** A transcript-like text of `bytes` bytes; `round` makes each one distinct (no nonce or cache reuse). */
function payloadOf(bytes: number, round: number): Payload {
  const text = `${round} `.padEnd(bytes, 'The subagent read notes/incidents.md and found three outages. ');
  return defaultPayloadConverter.toPayload(text);
}

async function timed(codec: EncryptionCodec, bytes: number): Promise<{ encode: number[]; decode: number[] }> {
  const encode: number[] = [];
  const decode: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const payload = payloadOf(bytes, round);
    let started = performance.now();
    const [sealed] = await codec.encode([payload]);
    encode.push(performance.now() - started);
    started = performance.now();
    await codec.decode([sealed]);
    decode.push(performance.now() - started);
  }
  return { encode, decode };
}

export async function benchEncryption(): Promise<BenchResult[]> {
  const material = randomBytes(32);
  const keyed = new EncryptionCodec(new PayloadKeyring([{ id: keyIdOf(material), material }]));
  const plain = new EncryptionCodec(new PayloadKeyring([]));
  const results: BenchResult[] = [];
  for (const [label, bytes] of SIZES) {
    const withKey = await timed(keyed, bytes);
    const without = await timed(plain, bytes);
    results.push(msRow(`encrypt ${label} payload (encode)`, withKey.encode));
    results.push(msRow(`decrypt ${label} payload (decode)`, withKey.decode));
    results.push(msRow(`no key: ${label} payload passed through (encode)`, without.encode));
    const payload = payloadOf(bytes, 0);
    const [sealed] = await keyed.encode([payload]);
    const grown = (sealed.data?.length ?? 0) - (payload.data?.length ?? 0);
    results.push({
      name: `encrypted ${label} payload grows by`,
      unit: 'bytes',
      p50: grown,
      p95: grown,
      samples: 1,
    });
  }
  return results;
}

if (require.main === module) {
  benchEncryption()
    .then((results) => process.stdout.write(`${formatTable(results)}\n`))
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}
