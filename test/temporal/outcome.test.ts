/**
 * Outcomes where an operator looks, against the real server: every workflow's search attributes say how it
 * ended (`SubagentStatus`, `StopReason`, `TotalTokens`), so a list query finds the failed and the capped ones;
 * while it runs, its current details say what it is doing and its last tool call; its activities are named
 * by model and turn, or by tool and argument.
 */
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { runSearchAttributes, TOTAL_TOKENS } from '../../contracts/search-attributes';
import { artifactsDir, CHROMIUM, CHROMIUM_ARGS, itInBrowser, threeOutcomesInput } from '../support/outcomes';
import { uniqueTaskQueue, useTestClient, waitFor, withProjectWorker } from '../harness/temporal';
import type { leadRunWorkflow } from '../../workflows/lead-run';
import type { LeadRunResult } from '../../contracts/lead';

const testClient = useTestClient();

async function listIds(client: Client, query: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const execution of client.workflow.list({ query })) ids.push(execution.workflowId);
  return ids.sort();
}

function summaryOf(metadata: temporal.api.sdk.v1.IUserMetadata | null | undefined): string | undefined {
  const payload = metadata?.summary;
  return payload ? defaultPayloadConverter.fromPayload<string>(payload) : undefined;
}

interface OutcomeRun {
  runId: string;
  result: LeadRunResult;
  details: string;
}

/** A lead whose three delegations end completed, capped (token budget) and failed (a provider's 400). */
async function runThreeOutcomes(): Promise<OutcomeRun> {
  const input = threeOutcomesInput('outcome', { okDelayMs: 3000 });
  const client = testClient();
  const taskQueue = uniqueTaskQueue('outcome');
  const runId = `${taskQueue}-lead`;
  let details = '';
  const result = await withProjectWorker(taskQueue, async () => {
    const handle = await client.workflow.start<typeof leadRunWorkflow>('leadRunWorkflow', {
      taskQueue,
      workflowId: runId,
      args: [{ ...input, run_id: runId }],
      typedSearchAttributes: runSearchAttributes(runId, 'lead', 0),
    });
    // While `ok` waits for its second answer, its current details show its turn and its last tool call.
    const ok = client.workflow.getHandle(`${runId}/task/ok`);
    await waitFor('the running subagent’s current details', async () => {
      const metadata = await ok
        .query<temporal.api.sdk.v1.IWorkflowMetadata>('__temporal_workflow_metadata')
        .catch(() => undefined);
      details = metadata?.currentDetails ?? '';
      // Its last tool call is shown from the moment it starts: wait for the wait after it, not the call.
      return details.includes('Now: waiting for scripted (turn 2)');
    });
    return handle.result();
  });
  return { runId, result, details };
}

describe('outcomes in search attributes', () => {
  let run: OutcomeRun;
  beforeAll(async () => {
    run = await runThreeOutcomes();
  });

  it('finds the failed and the capped delegations by query, with tokens; a failed one is a failed workflow', async () => {
    const { runId, result, details } = run;
    const client = testClient();
    expect(details).toContain('**general-purpose** · turn 1 · 500 tokens');
    expect(details).toContain('Now: waiting for scripted (turn 2)');
    expect(details).toContain('Last tool call: `ls: {"path":"."}`');

    expect(result.ledger.map((entry) => [entry.id, entry.status, entry.stop_reason])).toEqual([
      ['ok', 'completed', undefined],
      ['capped', 'completed', 'token_capped'],
      ['broken', 'failed', undefined],
    ]);
    const child = (id: string) => `${runId}/task/${id}`;
    const ofRun = `LeadRunId = '${runId}'`;
    await waitFor('visibility to hold every outcome', async () => {
      const ended = await listIds(client, `${ofRun} AND SubagentStatus != 'running'`);
      return ended.length === 4;
    });
    expect(await listIds(client, `${ofRun} AND SubagentStatus = 'failed'`)).toEqual([child('broken')]);
    // The failed subagent failed its workflow too (red in Temporal's own views), and its parent still read its
    // whole result from the failure.
    expect(await listIds(client, `${ofRun} AND ExecutionStatus = 'Failed'`)).toEqual([child('broken')]);
    expect(result.ledger[2]).toMatchObject({
      status: 'failed',
      error: expect.stringContaining('bad request'),
    });
    expect(result.final_output).toBe('Combined.');
    expect(await listIds(client, `${ofRun} AND StopReason = 'token_capped'`)).toEqual([child('capped')]);
    expect(await listIds(client, `${ofRun} AND SubagentStatus = 'completed'`)).toEqual(
      [runId, child('ok'), child('capped')].sort(),
    );
    // Tokens: the lead's total counts its children's.
    const lead = await client.workflow.getHandle(runId).describe();
    expect(lead.typedSearchAttributes.get(TOTAL_TOKENS)).toBe(result.token_usage.total?.total_tokens);

    // Each activity is named: the model call by model and turn, the tool call by tool and argument.
    const history = (await client.workflow.getHandle(child('ok')).fetchHistory()).events ?? [];
    const summaries = history.flatMap((event) => {
      const summary = summaryOf(event.userMetadata);
      return summary === undefined ? [] : [summary];
    });
    expect(summaries).toEqual(
      expect.arrayContaining(['scripted · general-purpose turn 1', 'scripted · general-purpose turn 2']),
    );
    expect(summaries.some((summary) => summary.startsWith('ls: {"path":"."}'))).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------------------
// The same run in the Web UI, in headless Chromium (Debian's `chromium`; `.ci/run` installs it)

const itWithBrowser = itInBrowser('web-ui');

describe('outcomes in the Web UI', () => {
  let run: OutcomeRun;
  beforeAll(async () => {
    run = await runThreeOutcomes();
  });

  itWithBrowser(
    'shows the failed delegation as failed and finds exactly the capped one by StopReason',
    async () => {
      const ui = process.env.TEMPORAL_TEST_UI_URL;
      if (!ui) throw new Error('the suite’s server has no Web UI (TEMPORAL_TEST_UI_URL is not set)');
      const client = testClient();
      await waitFor('visibility to hold every outcome', async () => {
        const ended = await listIds(client, `LeadRunId = '${run.runId}' AND SubagentStatus != 'running'`);
        return ended.length === 4;
      });
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: CHROMIUM_ARGS,
      });
      try {
        const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
        // The rows once the page shows as many workflows as `expected` (their status badges drawn), not after a
        // pause guessed long enough for it; past 30 s, whatever it shows, for the assertions to judge.
        const list = async (query: string, expected: number): Promise<string[]> => {
          await page.goto(`${ui}/namespaces/default/workflows?query=${encodeURIComponent(query)}`);
          const rows = page.locator('table tbody tr');
          const badges = rows.locator('[data-testid="execution-status"] > span');
          await badges.first().waitFor({ timeout: 30_000 });
          await waitFor(
            `${expected} rows for ${query}`,
            async () => (await badges.count()) >= expected,
            30_000,
          ).catch(() => undefined);
          return (await rows.allInnerTexts()).map((text) => text.replace(/\s+/g, ' ').trim());
        };
        const all = await list(`LeadRunId="${run.runId}"`, 4);
        await page.screenshot({ path: join(artifactsDir(), 'web-ui-outcomes.png') });
        console.log(`web-ui rows:\n${all.join('\n')}`);
        const rowOf = (id: string) => all.find((row) => row.includes(id)) ?? '';
        expect(all).toHaveLength(4);
        expect(rowOf(`${run.runId}/task/broken`)).toMatch(/failed/i);
        expect(rowOf(`${run.runId}/task/ok`)).toMatch(/completed/i);
        const capped = await list(`LeadRunId="${run.runId}" AND StopReason="token_capped"`, 1);
        expect(capped).toHaveLength(1);
        expect(capped[0]).toContain(`${run.runId}/task/capped`);
      } finally {
        await browser.close();
      }
    },
  );
});
