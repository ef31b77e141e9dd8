/**
 * `subagents batch start|list|status|results|cancel`: durable batches from the command line, on a running
 * server (`--address`, or the one `subagents dev-server` runs) and the workers polling it. `list` is in
 * batch-list-command.ts.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { resolve } from 'node:path';
import { WorkflowNotFoundError } from '@temporalio/client';
import { parseBatchItemsJsonl } from '../contracts/batch-items';
import type { BatchInput } from '../contracts/batch';
import { configBatchLimits } from '../contracts/config/lead-input';
import type { Config } from '../contracts/config';
import { MAX_COST_FLAG, withMaxCostUsd } from './batch-cost-flag';
import { resolveAgent } from '../contracts/config/agents';
import { BatchesClient, buildBatchInput, newBatchId, type BatchHandle } from '../client/batches';
import { loadCommandConfig, requireServer, runWorkspace } from './command-setup';
import { connectClient } from '../client/connection';
import { identify, kindText } from '../client/id-kinds';
import { integerFlag, parseFlags, stringFlag, UsageError, type FlagSpec, type FlagValues } from './flags';
import { sayWhenNoWorkerPolls } from './worker-presence';
import { batchCountsText } from './outcome-lines';
import { batchListCommand } from './batch-list-command';
import { existingSkillsRoot } from '../client/config';

const say = (line: string) => process.stderr.write(`${line}\n`);
const json = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

const START_FLAGS: FlagSpec = {
  wait: { type: 'boolean' },
  provider: { type: 'string' },
  model: { type: 'string' },
  user: { type: 'string' },
  workspace: { type: 'string' },
};

export async function batchCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'start':
      return startBatch(rest);
    case 'list':
      return batchListCommand(rest);
    case 'status':
      return withBatch(
        'batch status',
        rest,
        { offset: { type: 'string' }, limit: { type: 'string' } },
        status,
      );
    case 'results':
      return withBatch('batch results', rest, {}, results);
    case 'cancel':
      return withBatch('batch cancel', rest, {}, cancel);
    default:
      throw new UsageError(
        `batch: ${sub === undefined ? 'give a subcommand' : `unknown subcommand ${JSON.stringify(sub)}`} ` +
          '(start, list, status, results, cancel)',
      );
  }
}

/** The largest items file `--items` reads: far above what `subagents.batch.max_items` items take. */
export const MAX_ITEMS_FILE_BYTES = 64 * 1024 * 1024;

/**
 * The text of an items file: a regular file only (a device such as /dev/zero, a FIFO or a folder would never
 * end or never parse), read up to MAX_ITEMS_FILE_BYTES. Opened first and checked on the open file, so a file
 * swapped after the check is not read; non-blocking, so opening a FIFO does not wait for a writer.
 */
function readItemsFile(path: string): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(
      `--items: ${JSON.stringify(path)} ${code === 'ENOENT' ? 'does not exist' : `cannot be read (${code})`}`,
    );
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile())
      throw new UsageError(
        `--items: ${JSON.stringify(path)} is ${fileKind(stats)}, not a regular file (give a JSONL file: one item a line)`,
      );
    if (stats.size > MAX_ITEMS_FILE_BYTES)
      throw new UsageError(
        `--items: ${JSON.stringify(path)} is ${stats.size} bytes, above the ${MAX_ITEMS_FILE_BYTES} an items file may hold`,
      );
    const buffer = Buffer.alloc(Math.min(stats.size, MAX_ITEMS_FILE_BYTES) + 1);
    let length = 0;
    for (let n = -1; n !== 0 && length < buffer.length; length += n)
      n = readSync(fd, buffer, length, buffer.length - length, null);
    // A file that grew while it was read is held to the same bound.
    if (length > MAX_ITEMS_FILE_BYTES)
      throw new UsageError(
        `--items: ${JSON.stringify(path)} holds more than the ${MAX_ITEMS_FILE_BYTES} bytes an items file may hold`,
      );
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

function fileKind(stats: Stats): string {
  if (stats.isDirectory()) return 'a folder';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isSocket()) return 'a socket';
  return 'not a file';
}

/** The items of a JSONL file, every problem named (`file:line`), before anything starts. */
function readItems(path: string) {
  const text = readItemsFile(path);
  const { items, problems } = parseBatchItemsJsonl(text, path);
  if (problems.length > 0) {
    throw new UsageError(
      `--items: ${problems.length} problem${problems.length === 1 ? '' : 's'}, no batch started:\n  ${problems.join('\n  ')}`,
    );
  }
  return items;
}

/** The flags that describe a batch: `batch start`'s, and `schedule create`'s for a scheduled batch. */
export const BATCH_FLAGS: FlagSpec = {
  items: { type: 'string' },
  type: { type: 'string' },
  description: { type: 'string' },
  'max-running-items': { type: 'string' },
  'max-live-items': { type: 'string' },
  'max-attempts': { type: 'string' },
  ...MAX_COST_FLAG,
};

/**
 * A batch from the flags, every one of them checked (the items file whole, the agent, the limits) before
 * anything is made; `build` then makes its input for a workspace.
 */
export function batchFromFlags(
  command: string,
  values: FlagValues,
  configured: Config,
): { items: number; build: (workspace: string) => BatchInput } {
  // The whole batch shares one budget: its items lease from the batch, the root of their tree.
  const config = withMaxCostUsd(command, values, configured);
  const itemsPath = stringFlag(values, 'items');
  const type = stringFlag(values, 'type');
  if (itemsPath === undefined) throw new UsageError(`${command}: --items FILE is required (JSONL items)`);
  if (type === undefined) throw new UsageError(`${command}: --type AGENT is required (e.g. general-purpose)`);
  const items = readItems(resolve(itemsPath));
  const limits = {
    ...optional('max_running_items', integerFlag(values, 'max-running-items', 1, 1000)),
    ...optional('max_live_items', integerFlag(values, 'max-live-items', 1, 10_000)),
    ...optional('max_attempts', integerFlag(values, 'max-attempts', 1, 10)),
  };
  try {
    resolveAgent(config, type);
  } catch (err) {
    throw new UsageError(`${command}: --type ${type}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const merged = { ...configBatchLimits(config), ...limits };
  if (merged.max_running_items > merged.max_live_items) {
    throw new UsageError(
      `${command}: --max-running-items ${merged.max_running_items} is above --max-live-items ` +
        `${merged.max_live_items} (running items are live items)`,
    );
  }
  const maxItems = config.subagents.batch.max_items;
  if (items.length > maxItems) {
    throw new UsageError(
      `${command}: ${itemsPath} has ${items.length} items, above the ${maxItems} a batch may hold ` +
        '(subagents.batch.max_items)',
    );
  }
  const description = stringFlag(values, 'description') ?? `${items.length} items from ${itemsPath}`;
  return {
    items: items.length,
    build: (workspace) =>
      buildBatchInput(config, {
        description,
        subagent_type: type,
        items,
        workspace,
        limits,
        skills_root: existingSkillsRoot(config),
      }),
  };
}

async function startBatch(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, { ...BATCH_FLAGS, ...START_FLAGS }, 'batch start');
  if (positionals.length > 0)
    throw new UsageError(`batch start: unexpected ${JSON.stringify(positionals[0])}`);
  const config = loadCommandConfig(values);
  // Everything checked before the workspace folder is made: a refused batch leaves nothing behind.
  const batchSpec = batchFromFlags('batch start', values, config);
  const settings = await requireServer('batch start', config);
  const batchId = newBatchId();
  const workspace = runWorkspace(config, values, batchId);
  const input = batchSpec.build(workspace);
  const { client, connection } = await connectClient(settings);
  try {
    const batch = await new BatchesClient(client).start(input, {
      taskQueue: config.temporal.task_queue,
      batchId,
    });
    if (!values.wait) {
      if (values.json) json({ batch_id: batch.batchId, items: batchSpec.items, workspace });
      else process.stdout.write(`${batch.batchId}\n`);
      say(`batch ${batch.batchId}: ${batchSpec.items} items · workspace ${workspace}`);
      return 0;
    }
    say(`batch ${batch.batchId}: ${batchSpec.items} items · workspace ${workspace}`);
    const stopLooking = sayWhenNoWorkerPolls({
      client,
      address: settings.address,
      namespace: settings.namespace,
      taskQueue: config.temporal.task_queue,
      ...(stringFlag(values, 'config') !== undefined && { configFile: stringFlag(values, 'config') }),
      say,
    });
    try {
      await follow(batch);
    } finally {
      stopLooking();
    }
    const end = await batch.status({ limit: 0 });
    if (values.json) json(end);
    else process.stdout.write(`${batch.batchId}: ${end.status} · ${batchCountsText(end)}\n`);
    return end.counts.failed > 0 || end.status !== 'completed' ? 1 : 0;
  } finally {
    await connection.close();
  }
}

function optional<K extends string>(key: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, number>);
}

/** A progress line until the batch ends: counts, items a second, the time left at that pace. */
async function follow(batch: BatchHandle): Promise<void> {
  const started = Date.now();
  const tty = process.stderr.isTTY === true;
  let last = '';
  for (;;) {
    const status = await batch.status({ limit: 0 });
    const done = status.counts.completed + status.counts.failed + status.counts.cancelled;
    const seconds = (Date.now() - started) / 1000;
    const rate = seconds > 0 ? done / seconds : 0;
    const left = status.total - done;
    const eta = rate > 0 && left > 0 ? ` · ETA ${Math.ceil(left / rate)} s` : '';
    const line = `${batchCountsText(status)} · ${rate.toFixed(1)} items/s${eta}`;
    if (tty) process.stderr.write(`\r${line}\u001b[K`);
    else if (line !== last) say(line);
    last = line;
    if (status.status !== 'running') {
      if (tty) process.stderr.write('\n');
      return;
    }
    await new Promise((resolveWait) => setTimeout(resolveWait, 1000));
  }
}

async function withBatch(
  command: string,
  args: string[],
  spec: FlagSpec,
  body: (batch: BatchHandle, values: FlagValues) => Promise<number>,
): Promise<number> {
  const { values, positionals } = parseFlags(args, spec, command);
  if (positionals.length !== 1)
    throw new UsageError(`${command}: give one batch id: subagents ${command} <batch-id>`);
  const settings = await requireServer(command, loadCommandConfig(values));
  const { client, connection } = await connectClient(settings);
  try {
    const { kind } = await identify(client, positionals[0]);
    if (kind.kind !== 'batch' && kind.kind !== 'unknown')
      throw new UsageError(
        `${command}: ${kind.id} is ${kindText(kind)}, not a batch (subagents status ${kind.id})`,
      );
    return await body(new BatchesClient(client).get(positionals[0]), values);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError)
      throw new UsageError(`${command}: no batch ${positionals[0]} on ${settings.address}`);
    throw err;
  } finally {
    await connection.close();
  }
}

async function status(batch: BatchHandle, values: FlagValues): Promise<number> {
  const page = {
    offset: integerFlag(values, 'offset', 0, Number.MAX_SAFE_INTEGER) ?? 0,
    limit: integerFlag(values, 'limit', 0, 200) ?? 20,
  };
  const now = await batch.status(page);
  if (values.json) {
    json(now);
    return 0;
  }
  process.stdout.write(
    `${now.batch_id}: ${now.status} · ${batchCountsText(now)} · ${now.subagent_type}: ${now.description}\n`,
  );
  for (const item of now.items) {
    const extra = [item.stop_reason, item.error].filter(Boolean).join(' · ');
    process.stdout.write(
      `  ${item.key}  ${item.state}  attempts ${item.attempts}${extra ? `  ${extra}` : ''}\n`,
    );
  }
  if (now.total > page.offset + now.items.length) {
    process.stdout.write(`  … ${now.total - page.offset - now.items.length} more (--offset, --limit)\n`);
  }
  return 0;
}

async function results(batch: BatchHandle): Promise<number> {
  for await (const line of batch.results()) process.stdout.write(`${JSON.stringify(line)}\n`);
  return 0;
}

async function cancel(batch: BatchHandle, values: FlagValues): Promise<number> {
  await batch.cancel();
  const end = await batch.result();
  if (values.json) json(end);
  else
    process.stdout.write(
      `${batch.batchId}: ${end.status} · ${end.counts.completed} completed, ${end.counts.failed} failed, ${end.counts.cancelled} cancelled\n`,
    );
  return 0;
}
