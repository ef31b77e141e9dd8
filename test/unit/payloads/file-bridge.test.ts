import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_STREAM_BRIDGE_SETTINGS } from '../../../contracts/config/stream-bridge';
import type { StreamEvent } from '../../../contracts/stream';
import { FileStreamBridge } from '../../../payloads/stream/file-bridge';

/** The bridge's quiet time in these tests (IDLE_CLOSE_MS in a worker). */
const QUIET_MS = 200;

const event = (text: string): StreamEvent => ({
  kind: 'text',
  run_id: 'run-a',
  path: '',
  workflow_id: 'run-a',
  attempt: 1,
  at: '2026-01-01T00:00:00.000Z',
  text,
});

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (JSON.parse(line) as StreamEvent).text);

/** This process's open file descriptors on `file` (Linux: /proc/self/fd). */
function openOn(file: string): number {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(join('/proc/self/fd', fd)) === file;
    } catch {
      return false;
    }
  }).length;
}

describe('FileStreamBridge', () => {
  let dir: string;
  let bridge: FileStreamBridge;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'stream-bridge-'));
    bridge = new FileStreamBridge(join(dir, 'streams'), DEFAULT_STREAM_BRIDGE_SETTINGS, QUIET_MS);
  });

  afterEach(async () => {
    await bridge.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('appends each batch as lines in order, a file per run, owner-only, read back with offsets', async () => {
    await bridge.publish('run-a', [event('one'), event('two')]);
    await bridge.publish('run-b', [event('other run')]);
    await bridge.publish('run-a', [event('three')]);
    const file = bridge.fileOf('run-a');
    expect(lines(file)).toEqual(['one', 'two', 'three']);
    expect(lines(bridge.fileOf('run-b'))).toEqual(['other run']);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stop = new AbortController();
    const read: string[] = [];
    for await (const entry of bridge.read('run-a', { signal: stop.signal })) {
      read.push(`${entry.event.text}@${entry.id}`);
      if (read.length === 3) stop.abort();
    }
    const ends = readFileSync(file, 'utf8')
      .split('\n')
      .slice(0, 3)
      .reduce<number[]>((acc, line) => [...acc, (acc.at(-1) ?? 0) + Buffer.byteLength(line) + 1], []);
    expect(read).toEqual([`one@${ends[0]}`, `two@${ends[1]}`, `three@${ends[2]}`]);
  });

  it('keeps the batches of two writers (two processes) whole and each in its own order', async () => {
    const other = new FileStreamBridge(join(dir, 'streams'), DEFAULT_STREAM_BRIDGE_SETTINGS);
    try {
      await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          Promise.all([
            bridge.publish('run-a', [event(`a${i}`), event(`a${i}'`)]),
            other.publish('run-a', [event(`b${i}`)]),
          ]),
        ),
      );
    } finally {
      await other.close();
    }
    const written = lines(bridge.fileOf('run-a'));
    expect(written).toHaveLength(120);
    const mine = written.filter((text) => text?.startsWith('a'));
    expect(mine).toEqual(Array.from({ length: 40 }, (_, i) => [`a${i}`, `a${i}'`]).flat());
    expect(written.filter((text) => text?.startsWith('b'))).toEqual(
      Array.from({ length: 40 }, (_, i) => `b${i}`),
    );
  });

  it('holds a run file open while the run publishes, closes it once quiet, opens it again later', async () => {
    const file = bridge.fileOf('run-a');
    await bridge.publish('run-a', [event('one')]);
    await bridge.publish('run-a', [event('two')]);
    expect(openOn(file)).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS + 300));
    expect(openOn(file)).toBe(0);
    // Deleted while closed (the sweep of another process): the next batch makes it again.
    rmSync(file);
    await bridge.publish('run-a', [event('three')]);
    expect(lines(file)).toEqual(['three']);
    await bridge.close();
    expect(openOn(file)).toBe(0);
  });

  it('fails a publish whose file cannot be opened, and opens it for a later one', async () => {
    const file = bridge.fileOf('run-a');
    mkdirSync(file, { recursive: true });
    await expect(bridge.publish('run-a', [event('lost')])).rejects.toThrow(/EISDIR/);
    rmSync(file, { recursive: true });
    await bridge.publish('run-a', [event('kept')]);
    expect(lines(file)).toEqual(['kept']);
  });
});
