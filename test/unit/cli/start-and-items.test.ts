import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { batchFromFlags } from '../../../cli/batch-command';
import { ServerUnavailableError, SubagentsClient } from '../../../client/api';
import { parseConfig } from '../../../contracts/config';
import { parseBatchItemsJsonl } from '../../../contracts/batch-items';
import { leadInput } from '../../support/subagent-input';

const dir = mkdtempSync(join(tmpdir(), 'start-and-items-'));
const config = parseConfig({}).config;
const fromItems = (path: string) =>
  batchFromFlags('batch start', { items: path, type: 'general-purpose' }, config);

describe('batch start --items', () => {
  it('refuses a device without reading it (it would never end)', () => {
    expect(() => fromItems('/dev/zero')).toThrow(
      '--items: "/dev/zero" is a character device, not a regular file (give a JSONL file: one item a line)',
    );
  });

  it('refuses a FIFO without waiting for a writer, and a folder', () => {
    const fifo = join(dir, 'items.fifo');
    execFileSync('mkfifo', [fifo]);
    expect(() => fromItems(fifo)).toThrow(`--items: "${fifo}" is a FIFO (named pipe), not a regular file`);
    expect(() => fromItems(dir)).toThrow(`--items: "${dir}" is a folder, not a regular file`);
  });

  it('reads a regular file', () => {
    const path = join(dir, 'items.jsonl');
    writeFileSync(path, '{"key": "a", "prompt": "Do a."}\n');
    expect(fromItems(path).items).toBe(1);
  });
});

describe('batch item keys', () => {
  it.each(['__proto__', 'constructor', 'prototype'])('refuses %s, saying why', (key) => {
    const { problems } = parseBatchItemsJsonl(JSON.stringify({ key, prompt: 'p' }), 'items.jsonl');
    expect(problems).toEqual([
      `items.jsonl:1: key: "${key}" is a name JavaScript objects reserve (__proto__, constructor, prototype): write another key, e.g. item-1`,
    ]);
  });
});

describe('startRun while the server cannot be reached', () => {
  const unavailable = () =>
    Object.assign(new Error('Failed to start Workflow'), {
      cause: Object.assign(new Error('14 UNAVAILABLE: No connection established'), { code: 14 }),
    });

  function fakeClient(failures: number) {
    let memo: Record<string, unknown> = {};
    const start = jest.fn(async (_type: string, options: { memo: Record<string, unknown> }) => {
      if (start.mock.calls.length <= failures) throw unavailable();
      memo = options.memo;
      return {};
    });
    const client = {
      workflow: { start, getHandle: () => ({ describe: async () => ({ memo }) }) },
    } as unknown as Client;
    return { client, start };
  }
  const input = () => leadInput({ workspace: mkdtempSync(join(tmpdir(), 'start-ws-')) });

  it('retries, says so on each retry, and starts once the server answers', async () => {
    const { client, start } = fakeClient(2);
    const lines: string[] = [];
    const run = await new SubagentsClient(client, 'default').startRun(input(), {
      taskQueue: 'q',
      runId: 'run-retry',
      onRetry: (line) => lines.push(line),
    });
    expect(run.runId).toBe('run-retry');
    expect(start).toHaveBeenCalledTimes(3);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^the Temporal server cannot be reached \(.*14 UNAVAILABLE.*\); trying again to start run run-retry in 0\.5 s/,
    );
  });

  it('gives up after its budget with a clear error', async () => {
    const { client } = fakeClient(Infinity);
    const refused = await new SubagentsClient(client, 'default')
      .startRun(input(), { taskQueue: 'q', runId: 'run-down', retryForMs: 1200 })
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ServerUnavailableError);
    // The time told is the time waited: the budget, and the last attempt's backoff within it.
    expect((refused as Error).message).toMatch(
      /^cannot start run run-down: the Temporal server could not be reached for [12] s /,
    );
  });
});
