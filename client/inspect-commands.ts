/** `subagents status|ledger|cancel <run-id>` and `subagents events <run-id> [--follow]`. */
import { WorkflowNotFoundError } from '@temporalio/client';
import type { TaskEvent } from '../contracts/events';
import { SubagentsClient, type RunHandle } from './api';
import { loadCommandConfig, requireServer } from './command-setup';
import { connectClient } from './connection';
import { integerFlag, parseFlags, UsageError, type FlagSpec, type FlagValues } from './flags';
import { queuePlace, renderLedgerTable } from './tree';

async function withRun<T>(
  command: string,
  args: string[],
  spec: FlagSpec,
  body: (run: RunHandle, values: FlagValues) => Promise<T>,
): Promise<T> {
  const { values, positionals } = parseFlags(args, spec, command);
  if (positionals.length !== 1)
    throw new UsageError(`${command}: give one run id: subagents ${command} <run-id>`);
  const settings = await requireServer(command, loadCommandConfig(values));
  const { client, connection } = await connectClient(settings);
  try {
    const run = new SubagentsClient(client, settings.namespace).getRun(positionals[0]);
    try {
      return await body(run, values);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) {
        throw new UsageError(`${command}: no run ${positionals[0]} on ${settings.address}`);
      }
      throw err;
    }
  } finally {
    await connection.close();
  }
}

const json = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

export function statusCommand(args: string[]): Promise<number> {
  return withRun('status', args, {}, async (run, values) => {
    const status = await run.status();
    if (values.json) json(status);
    else {
      const counts = Object.entries(status.counts)
        .filter(([, n]) => n > 0)
        .map(([state, n]) => `${n} ${state}`)
        .join(', ');
      const tokens = status.token_usage.total ? `, ${status.token_usage.total.total_tokens} tokens` : '';
      // A run waiting for a slot (lead_runtime) says where it stands and since when.
      const state = status.admission
        ? `queued for a run slot (${queuePlace(status.admission)} when it joined, since ${status.admission.since})`
        : status.state;
      process.stdout.write(
        `${run.runId}: ${state}, ${status.turns} lead turns${tokens}; delegations: ${counts || 'none'}\n`,
      );
    }
    return 0;
  });
}

export function ledgerCommand(args: string[]): Promise<number> {
  return withRun('ledger', args, {}, async (run, values) => {
    const ledger = await run.ledger();
    if (values.json) json(ledger);
    else
      process.stdout.write(
        `${renderLedgerTable(ledger, { color: process.stdout.isTTY === true }).join('\n')}\n`,
      );
    return 0;
  });
}

function printEvent(event: TaskEvent, asJson: boolean): void {
  process.stdout.write(
    `${asJson ? JSON.stringify(event) : `${event.seq} ${event.at} ${event.type} ${event.task_id}`}\n`,
  );
}

export function eventsCommand(args: string[]): Promise<number> {
  const spec: FlagSpec = { follow: { type: 'boolean' }, after: { type: 'string' } };
  return withRun('events', args, spec, async (run, values) => {
    const after = integerFlag(values, 'after', 0, Number.MAX_SAFE_INTEGER) ?? 0;
    const asJson = values.json === true;
    if (values.follow) {
      for await (const event of run.followEvents(500, after)) printEvent(event, asJson);
    } else {
      for (const event of await run.events(after)) printEvent(event, asJson);
    }
    return 0;
  });
}

export function cancelCommand(args: string[]): Promise<number> {
  return withRun('cancel', args, {}, async (run) => {
    await run.cancel();
    process.stderr.write(`Cancellation requested for ${run.runId}; waiting for its children to stop…\n`);
    const result = await run.result();
    process.stdout.write(`${run.runId}: ${result.status}\n`);
    return 0;
  });
}
