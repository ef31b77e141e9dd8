/**
 * `tool_output` and `read_before_write` in the tool activity (issue 46): a result over its budget saved in the
 * workspace and replaced by DeerFlow's synopsis, exempt tools and overrides honoured; a write to an existing file
 * refused with DeerFlow's message until the agent has read its current version.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import {
  DEFAULT_TOOL_OUTPUT,
  readBeforeWriteRefusal,
  type ReadGate,
  type ToolOutputSettings,
} from '../../../../contracts/tool-output';
import { BUILTIN_TOOL_NAMES, DEFAULT_SANDBOX, type ToolCallResult } from '../../../../contracts/tools';
import {
  fallbackTruncation,
  renderToolOutputPreview,
} from '../../../../activities/tools/tool-output-synopsis';
import { PathLocks } from '../../../../activities/tools/tool-output';
import { executeToolCall, makeFixture, removeFixture, type Fixture } from './workspace-fixture';

let fx: Fixture;
beforeEach(async () => {
  fx = await makeFixture();
});
afterEach(async () => {
  await removeFixture(fx);
});

const settings = (over: Partial<ToolOutputSettings> = {}): ToolOutputSettings => ({
  ...DEFAULT_TOOL_OUTPUT,
  exempt_tools: [...DEFAULT_TOOL_OUTPUT.exempt_tools],
  externalize_min_chars: 1000,
  ...over,
});

function call(
  name: string,
  args: Record<string, unknown>,
  extra: { tool_output?: ToolOutputSettings; read_gate?: ReadGate } = {},
): Promise<ToolCallResult> {
  return executeToolCall({
    call: { id: 'call-1', name, args: JSON.stringify(args) },
    workspace: fx.workspace,
    allowed_tools: [...BUILTIN_TOOL_NAMES],
    sandbox: { ...DEFAULT_SANDBOX, output_cap_chars: 100_000 },
    ...extra,
  });
}

/** 2,000 numbered lines of 40 characters: `row 0001: …`. */
const listing = Array.from(
  { length: 2000 },
  (_, i) => `row ${String(i + 1).padStart(4, '0')}: ${'x'.repeat(29)}`,
).join('\n');

describe('the synopsis', () => {
  it('says where the output is, its size and kind, and shows the head and the tail, not the middle', () => {
    const preview = renderToolOutputPreview(listing, 'bash', '.tool-results/bash-1.log', 200, 100);
    const lines = preview.split('\n');
    expect(lines[0]).toBe(
      `[Full bash output saved to .tool-results/bash-1.log (${listing.length} chars, ~${Math.floor(listing.length / 4)} tokens).]`,
    );
    expect(lines[1]).toBe(
      '[Preview kind: text. This is a structured synopsis, not a raw head/tail truncation.]',
    );
    expect(preview).toContain(
      `- Text output from bash with ${listing.length} characters, 6000 words, and 2000 lines.`,
    );
    expect(preview).toContain('Raw sample (head + tail, clipped to head_chars / tail_chars):');
    expect(preview).toContain('row 0001:');
    expect(preview).toContain('row 2000:');
    expect(preview).not.toContain('row 1000:');
    expect(preview).toContain(
      '- Use read_file on .tool-results/bash-1.log with start_line and end_line to inspect the raw output.',
    );
    expect(preview.length).toBeLessThan(1000);
  });

  it('types JSON: its shape, keys and a few values', () => {
    const json = JSON.stringify({
      items: Array.from({ length: 300 }, (_, i) => ({ id: i, name: `n${i}` })),
      total: 300,
    });
    const preview = renderToolOutputPreview(json, 'web_search', 'r.txt', 100, 50);
    expect(preview).toContain('[Preview kind: json.');
    expect(preview).toContain('- JSON object with 2 top-level keys.');
    expect(preview).toContain('- shape: object(keys=2: items, total)');
    expect(preview).toContain('- $.items: array length 300; first item object');
    expect(preview).toContain('- $.items[0].id: 0');
  });

  it('types a CSV table by its columns and first row, and code by its imports and symbols', () => {
    const csv = [
      'id,name,score',
      ...Array.from({ length: 400 }, (_, i) => `${i},"Doe, J${i}",${i * 2}`),
    ].join('\n');
    const table = renderToolOutputPreview(csv, 'bash', 'r.log', 100, 50);
    expect(table).toContain('[Preview kind: csv.');
    expect(table).toContain('- CSV table with 400 data rows and 3 columns.');
    expect(table).toContain('- columns: id, name, score');
    expect(table).toContain('- first data row: id=0 | name=Doe, J0 | score=0');
    const code = [
      'import os',
      'from pathlib import Path',
      '',
      ...Array.from({ length: 300 }, (_, i) => `def f${i}():\n    return ${i}`),
    ].join('\n');
    const synopsis = renderToolOutputPreview(code, 'read_file', 'c.txt', 100, 50);
    expect(synopsis).toContain('[Preview kind: code.');
    expect(synopsis).toContain('- imports: os, pathlib');
    expect(synopsis).toContain('- def f0');
  });

  it('cuts to fallback_max_chars where the output cannot be saved, saying how much it left out', () => {
    const cut = fallbackTruncation(listing, 'bash', 3000, 1000, 500);
    expect(cut.length).toBeLessThanOrEqual(3000);
    expect(cut.startsWith('row 0001:')).toBe(true);
    expect(cut.endsWith('row 2000: ' + 'x'.repeat(29))).toBe(true);
    expect(cut).toMatch(/\[\.\.\. \d+ chars omitted from bash output\. Persistent storage unavailable\./);
  });
});

describe('tool_output in the tool activity', () => {
  it('saves a large result in the workspace under storage_subdir and gives the model the synopsis', async () => {
    writeFileSync(path.join(fx.workspace, 'listing.txt'), listing);
    const result = await call('bash', { command: 'cat listing.txt' }, { tool_output: settings() });
    expect(result.is_error).toBe(false);
    const saved = /saved to (\.tool-results\/bash-[0-9a-f]{12}\.log) /.exec(result.content)?.[1];
    expect(saved).toBeDefined();
    // The whole output, as the tool gave it (bash's exit line included).
    const full = readFileSync(path.join(fx.workspace, saved ?? ''), 'utf8');
    expect(full.startsWith(listing)).toBe(true);
    expect(full.length).toBeLessThan(listing.length + 100);
    expect(result.content.length).toBeLessThan(4000);
  });

  it('leaves alone a result within its threshold, an exempt tool, and a tool whose override is 0', async () => {
    writeFileSync(path.join(fx.workspace, 'listing.txt'), listing);
    const small = await call('bash', { command: 'echo hi' }, { tool_output: settings() });
    expect(small.content).toMatch(/^hi\n/);
    const read = await call('read_file', { path: 'listing.txt' }, { tool_output: settings() });
    expect(read.content).toContain('row 1000:');
    const overridden = await call(
      'bash',
      { command: 'cat listing.txt' },
      { tool_output: settings({ tool_overrides: { bash: 0 }, fallback_max_chars: 0 }) },
    );
    expect(overridden.content).toContain('row 1000:');
    expect(existsSync(path.join(fx.workspace, '.tool-results'))).toBe(false);
  });

  it('honours a per-tool threshold and a storage_subdir of its own', async () => {
    writeFileSync(path.join(fx.workspace, 'listing.txt'), listing.slice(0, 5000));
    const result = await call(
      'bash',
      { command: 'cat listing.txt' },
      {
        tool_output: settings({
          externalize_min_chars: 100_000,
          tool_overrides: { bash: 2000 },
          storage_subdir: 'big',
        }),
      },
    );
    expect(result.content).toMatch(/^\[Full bash output saved to big\/bash-/);
    expect(readdirSync(path.join(fx.workspace, 'big'))).toHaveLength(1);
  });
});

describe('read_before_write in the tool activity', () => {
  const gated = (mark?: string): { read_gate: ReadGate } => ({
    read_gate: mark === undefined ? {} : { mark },
  });

  it('refuses a write to an existing unread file with DeerFlow’s message, and lets it through after a read', async () => {
    writeFileSync(path.join(fx.workspace, 'report.md'), '# Report\n');
    const refused = await call('write_file', { path: 'report.md', content: 'new', append: true }, gated());
    expect(refused).toMatchObject({
      is_error: true,
      content: readBeforeWriteRefusal('write_file', 'report.md'),
    });
    expect(refused.content).toBe(
      'Error: write_file blocked — report.md already exists and you have not read its current version. Any write ' +
        'invalidates earlier reads, so re-read before every modification. Call read_file on it (a ranged read of ' +
        'the relevant section is enough, e.g. the last ~30 lines before an append), check what is already there, ' +
        'then retry.',
    );
    expect(readFileSync(path.join(fx.workspace, 'report.md'), 'utf8')).toBe('# Report\n');

    const read = await call('read_file', { path: 'report.md', start_line: 1, end_line: 1 }, gated());
    expect(read.read_mark).toMatch(/^[0-9a-f]{64}$/);
    const written = await call(
      'write_file',
      { path: './report.md', content: 'more\n', append: true },
      gated(read.read_mark),
    );
    expect(written.is_error).toBe(false);
    // The write changed the file: the old mark no longer lets a write through.
    const again = await call(
      'str_replace',
      { path: 'report.md', old_str: 'more', new_str: 'less' },
      gated(read.read_mark),
    );
    expect(again).toMatchObject({
      is_error: true,
      content: readBeforeWriteRefusal('str_replace', 'report.md'),
    });
  });

  it('lets a new file be created, and leaves an ungated call alone', async () => {
    const created = await call('write_file', { path: 'notes/new.md', content: 'x' }, gated());
    expect(created).toMatchObject({ is_error: false });
    const ungated = await call('write_file', { path: 'notes/new.md', content: 'y' });
    expect(ungated).toMatchObject({ is_error: false });
    expect(readFileSync(path.join(fx.workspace, 'notes/new.md'), 'utf8')).toBe('y');
  });

  it('marks no failed read', async () => {
    const missing = await call('read_file', { path: 'absent.md' }, gated());
    expect(missing.is_error).toBe(true);
    expect(missing.read_mark).toBeUndefined();
  });
});

it('PathLocks runs the work on one key one at a time, and other keys meanwhile', async () => {
  const locks = new PathLocks();
  const order: string[] = [];
  let release: () => void = () => undefined;
  const first = locks.hold(
    'a',
    () =>
      new Promise<void>(
        (resolve) =>
          (release = () => {
            order.push('a1');
            resolve();
          }),
      ),
  );
  const second = locks.hold('a', async () => void order.push('a2'));
  await locks.hold('b', async () => void order.push('b'));
  release();
  await Promise.all([first, second]);
  expect(order).toEqual(['b', 'a1', 'a2']);
});
