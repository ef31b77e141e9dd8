import { DEFAULT_BATCH_LIMITS, type BatchToolSettings } from '../../../../contracts/batch';
import {
  buildBatchToolSpecs,
  parseBatchRefArgs,
  parseBatchTaskArgs,
} from '../../../../workflows/delegation/batch-tools';

const SETTINGS: BatchToolSettings = {
  limits: { ...DEFAULT_BATCH_LIMITS, max_running_items: 3, max_live_items: 6 },
  max_items: 5000,
};
const AGENTS = ['general-purpose', 'bash'];

function parse(args: unknown) {
  return parseBatchTaskArgs(JSON.stringify(args), AGENTS, SETTINGS);
}

describe('batch_task arguments', () => {
  it('takes inline items with the configured limits when none are asked for', () => {
    const parsed = parse({
      description: 'Review',
      subagent_type: 'bash',
      items: [{ key: 'a', prompt: 'x' }],
    });
    expect(parsed).toEqual({
      ok: true,
      args: {
        description: 'Review',
        subagent_type: 'bash',
        items: [{ key: 'a', prompt: 'x' }],
        limits: { max_running_items: 3, max_live_items: 6, max_attempts: 2, retry_backoff_seconds: 5 },
        lowered: [],
      },
    });
  });

  it('lowers limits above the ceiling, and keeps running within live', () => {
    const parsed = parse({
      description: 'Review',
      subagent_type: 'general-purpose',
      items_file: 'items.jsonl',
      max_running_items: 10,
      max_live_items: 2,
      max_attempts: 9,
    });
    if (!parsed.ok) throw new Error(parsed.error);
    expect(parsed.args.limits).toEqual({
      max_running_items: 2,
      max_live_items: 2,
      max_attempts: 2,
      retry_backoff_seconds: 5,
    });
    expect(parsed.args.lowered).toEqual([
      'max_running_items 10 → 3 (the configured ceiling)',
      'max_attempts 9 → 2 (the configured ceiling)',
    ]);
  });

  it('refuses both items and items_file, neither, an unknown agent and unknown arguments, naming each', () => {
    const both = parse({ description: 'R', subagent_type: 'bash', items: [], items_file: 'f' });
    expect(both).toEqual({ ok: false, error: expect.stringContaining('give either items or items_file') });
    const neither = parse({ description: 'R', subagent_type: 'bash' });
    expect(neither).toEqual({ ok: false, error: expect.stringContaining('exactly one of them') });
    const bad = parse({ description: '', subagent_type: 'coder', items: [], extra: 1 });
    if (bad.ok) throw new Error('accepted');
    expect(bad.error).toContain('- description: is empty');
    expect(bad.error).toContain(
      '- subagent_type: "coder" is not an available subagent (general-purpose, bash)',
    );
    expect(bad.error).toContain('- extra: not an argument of batch_task');
    expect(parseBatchTaskArgs('{', AGENTS, SETTINGS)).toEqual({
      ok: false,
      error: expect.stringContaining('not valid JSON'),
    });
  });
});

describe('the follow-up tools’ arguments', () => {
  it('fills in the defaults and bounds the page and the wait', () => {
    expect(parseBatchRefArgs('batch_status', '{"batch_id": "b1"}')).toEqual({
      ok: true,
      args: { batch_id: 'b1', offset: 0, limit: 20, wait_seconds: 0, max_chars: 8000 },
    });
    expect(parseBatchRefArgs('read_batch_result', '{"batch_id": "b1", "offset": 10}')).toMatchObject({
      ok: true,
      args: { offset: 10, limit: 10 },
    });
    const tooLong = parseBatchRefArgs('batch_status', '{"batch_id": "b1", "wait_seconds": 7200}');
    expect(tooLong).toEqual({ ok: false, error: expect.stringContaining('wait_seconds') });
    const waitOnCancel = parseBatchRefArgs('cancel_batch', '{"batch_id": "b1", "wait_seconds": 5}');
    expect(waitOnCancel).toEqual({
      ok: false,
      error: expect.stringContaining('wait_seconds: not an argument'),
    });
  });
});

describe('the batch tools as the model sees them', () => {
  it('offers four tools whose text states the ceiling and the agents', () => {
    const specs = buildBatchToolSpecs(
      [
        { name: 'general-purpose', description: 'Anything.' },
        { name: 'bash', description: 'Shell work.' },
      ],
      SETTINGS,
    );
    expect(specs.map((spec) => spec.name)).toEqual([
      'batch_task',
      'batch_status',
      'read_batch_result',
      'cancel_batch',
    ]);
    expect(specs[0].description).toContain(
      'at most 5,000 items; at most 3 running at once and 6 started or waiting',
    );
    expect(specs[0].description).toContain('- bash: Shell work.');
    expect(specs[0].parameters).toMatchObject({
      type: 'object',
      required: ['description', 'subagent_type'],
      properties: { items: { type: 'array' }, items_file: { type: 'string' } },
    });
  });
});
