/**
 * `subagents watch <run-id>`: follows a run that is already going, as `run` follows the one it starts: on a
 * terminal the live tree (each running agent's newest line of text under its row), elsewhere one line per
 * event (tool denials, questions and delegations among them), then the summary and the ledger once it ends.
 * `--tokens [--agent PATH]`: one agent's text as it streams instead (docs/live.md). Stopping the watch
 * (Ctrl-C) leaves the run going.
 */
import type { LeadRunResult } from '../contracts/lead';
import type { RunHandle } from '../client/api';
import { delegationPathOf, leadRunIdOf } from '../contracts/stream';
import { stringFlag, UsageError, type FlagValues } from './flags';
import { AgentTextPrinter } from './stream-printing';
import { closedRunStatus, closedStatusLines, withRun } from './inspect-commands';
import { watchRun } from './progress';
import { renderLedgerTable, renderSummary } from './tree';

const say = (line: string) => process.stderr.write(`${line}\n`);

/** The summary and the ledger of a run that has ended, as `run` prints them; the exit code: 0 completed. */
function printEnd(result: LeadRunResult, color: boolean, uiUrl: string | undefined, json = false): number {
  if (json)
    process.stdout.write(`${JSON.stringify({ ...result, ...(uiUrl && { ui_url: uiUrl }) }, null, 2)}\n`);
  else
    process.stdout.write(
      `\n${renderSummary(result, { color, ...(uiUrl && { ui_url: uiUrl }) }).join('\n')}\n`,
    );
  if (!json) process.stdout.write(`\nLedger:\n${renderLedgerTable(result.ledger, { color }).join('\n')}\n`);
  if (result.status === 'completed') return 0;
  say(`subagents: run ${result.run_id} ended ${result.status}${result.error ? `: ${result.error}` : ''}`);
  return 1;
}

/** A run that ended without a result (terminated, a hard timeout): how, as `status` says it. */
async function endedWithout(run: RunHandle, uiUrl: string | undefined): Promise<number> {
  const inspected = await run.inspect();
  if (inspected.open) return 1;
  process.stdout.write(`${closedStatusLines(run.runId, closedRunStatus(inspected, uiUrl)).join('\n')}\n`);
  return 1;
}

/**
 * The agent `--agent` names in run `runId`: a delegation path (`part0`, `part0/call_7`) or a subagent's
 * workflow id (`<run id>/task/part0`); absent: the lead ('').
 */
export function watchedAgentPath(runId: string, agent: string | undefined): string {
  if (agent === undefined || agent === '' || agent === 'lead') return '';
  if (!agent.includes('/task/')) return agent.replace(/^\/+|\/+$/g, '');
  if (leadRunIdOf(agent) !== runId)
    throw new UsageError(`watch: --agent ${agent} is not an agent of run ${runId}`);
  return delegationPathOf(agent);
}

/** `--tokens`: the agent's text as it streams, then how it ended; exit 0 when it completed. */
async function watchTokens(run: RunHandle, values: FlagValues): Promise<number> {
  if (values.json === true) throw new UsageError('watch: --tokens prints text; it does not go with --json');
  const path = watchedAgentPath(run.runId, stringFlag(values, 'agent'));
  const printer = new AgentTextPrinter(path, (text) => process.stdout.write(text));
  for await (const { event } of run.stream()) if (printer.add(event)) break;
  return printer.ended === 'completed' ? 0 : 1;
}

export function watchCommand(args: string[]): Promise<number> {
  const spec = { tokens: { type: 'boolean' }, agent: { type: 'string' } } as const;
  return withRun('watch', args, spec, async ({ run, values, uiUrl, workerMissing }) => {
    if (values.tokens === true) return watchTokens(run, values);
    if (values.agent !== undefined) throw new UsageError('watch: --agent goes with --tokens');
    // --json: the result alone once the run ends, as `run --json` prints it.
    const json = values.json === true;
    const tty = process.stdout.isTTY === true && !json;
    const color = tty && !process.env.NO_COLOR;
    const inspected = await run.inspect();
    if (!inspected.open) {
      if (!inspected.result) return endedWithout(run, uiUrl);
      return printEnd(inspected.result, color, uiUrl, json);
    }
    // The run goes on when a worker polls, and the watch with it: say so once rather than wait in silence.
    const missing = await workerMissing(inspected.task_queue);
    if (missing !== undefined) say(`waiting: ${missing}`);
    if (!json) process.stdout.write(`Run ${run.runId}${uiUrl && !tty ? ` · Web UI: ${uiUrl}` : ''}\n\n`);
    let result: LeadRunResult;
    try {
      result = json
        ? await run.result()
        : await watchRun(run, {
            out: process.stdout,
            live: tty,
            color,
            ...(uiUrl && { uiUrl }),
            stream: (signal) => run.stream({ signal }),
          });
    } catch (err) {
      // Its result cannot be read (terminated, a hard timeout) or its queries keep failing: say how it stands.
      const now = await run.inspect();
      if (!now.open) return endedWithout(run, uiUrl);
      throw err;
    }
    return printEnd(result, color, uiUrl, json);
  });
}
