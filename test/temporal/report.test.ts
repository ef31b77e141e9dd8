/**
 * `subagents report` against the real server, as a process of its own with no worker running: a finished run
 * with a completed, a token-capped and a failed delegation becomes one HTML page, which headless Chromium
 * opens with the network blocked (timeline bars coloured by outcome, errors, Web UI links, step logs; the
 * run's text escaped, never run).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { workflowUiUrl } from '../../client/api';
import { TONE_COLOURS } from '../../cli/report';
import type { LeadRunResult } from '../../contracts/lead';
import { runSearchAttributes } from '../../contracts/search-attributes';
import type { leadRunWorkflow } from '../../workflows/lead-run';
import { tempDir } from '../support/subagent-input';
import { artifactsDir, CHROMIUM, CHROMIUM_ARGS, itInBrowser, threeOutcomesInput } from '../support/outcomes';
import {
  suiteCli,
  testAddress,
  testNamespace,
  uniqueTaskQueue,
  useTestClient,
  withProjectWorker,
} from '../harness/temporal';

const testClient = useTestClient();
const UI = process.env.TEMPORAL_TEST_UI_URL ?? 'http://ui.example:8233';
/** Text a model or a caller could send: it must reach the page as text. */
const HOSTILE_DESCRIPTION = 'Part ok <script>window.pwned = 1</script>';
const HOSTILE_RESULT = 'Part done. <img src="x" onerror="window.pwned = 2">';

/** What the tests read in the page (the project compiles without the DOM's types). */
interface PageGlobals {
  getComputedStyle(element: unknown): { backgroundColor: string; color: string };
  pwned?: number;
}

const cli = suiteCli;

/**
 * Below the command's query deadline (10 s): a report this fast did not wait on a query no worker answers.
 * (How fast it is, is a benchmark's figure: a loaded CI machine starts a process slowly.)
 */
const WITHOUT_WAITING_MS = 8_000;

const itWithBrowser = itInBrowser('report');

describe('report of a finished run, with no worker running', () => {
  let result: LeadRunResult;
  let page: string;
  let config: string;
  beforeAll(async () => {
    const dir = tempDir('report');
    config = join(dir, 'config.yaml');
    writeFileSync(config, `temporal:\n  ui_url: ${UI}\n`);
    page = join(dir, 'r.html');
    const client = testClient();
    const taskQueue = uniqueTaskQueue('report');
    const runId = `${taskQueue}-lead`;
    // The worker stops once the run has ended: the report is made with none.
    result = await withProjectWorker(taskQueue, () =>
      client.workflow.execute<typeof leadRunWorkflow>('leadRunWorkflow', {
        taskQueue,
        workflowId: runId,
        args: [
          {
            ...threeOutcomesInput('report', { okDescription: HOSTILE_DESCRIPTION, okAnswer: HOSTILE_RESULT }),
            run_id: runId,
          },
        ],
        typedSearchAttributes: runSearchAttributes(runId, 'lead', 0),
      }),
    );
    expect(result.ledger.map((entry) => [entry.id, entry.status, entry.stop_reason])).toEqual([
      ['ok', 'completed', undefined],
      ['capped', 'completed', 'token_capped'],
      ['broken', 'failed', undefined],
    ]);
  });

  it('writes the page without waiting for a worker, and says where (--json: {path})', async () => {
    const made = await cli(['report', result.run_id, '-o', page, '--config', config]);
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    expect(made.ms).toBeLessThan(WITHOUT_WAITING_MS);
    expect(made.stdout).toBe(`${page}\n`);
    const html = readFileSync(page, 'utf8');
    expect(html).toContain('&lt;script&gt;window.pwned = 1&lt;/script&gt;');
    expect(html).not.toContain('<script>window.pwned');
    expect(html).not.toMatch(/<img/);

    const json = await cli(['report', result.run_id, '--output', page, '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ path: page });
  });

  itWithBrowser(
    'in a browser offline: four bars coloured by outcome, the error in red, Web UI links, step logs, nothing injected runs',
    async () => {
      const made = await cli(['report', result.run_id, '-o', page, '--config', config]);
      expect(made.code).toBe(0);
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: CHROMIUM_ARGS,
      });
      try {
        const tab = await browser.newPage({ viewport: { width: 1400, height: 900 } });
        const requested: string[] = [];
        await tab.route('**', (route) => {
          const url = route.request().url();
          if (url.startsWith('file:')) return route.continue();
          requested.push(url);
          return route.abort();
        });
        await tab.goto(`file://${page}`);
        const child = (id: string) => `${result.run_id}/task/${id}`;
        const row = (workflowId: string) => tab.locator(`.timeline .row[data-workflow-id="${workflowId}"]`);

        expect(await tab.locator('.timeline .bar').count()).toBe(4);
        expect(await row(result.run_id).getAttribute('class')).toContain('bar--completed');
        expect(await row(child('ok')).getAttribute('class')).toContain('bar--completed');
        expect(await row(child('capped')).getAttribute('class')).toContain('bar--capped');
        expect(await row(child('capped')).locator('.stop-reason').innerText()).toBe('token_capped');

        const broken = row(child('broken'));
        expect(await broken.getAttribute('class')).toContain('bar--failed');
        const rgb = (hex: string) =>
          `rgb(${[1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(', ')})`;
        expect(
          await broken
            .locator('.bar')
            .evaluate((el) => (globalThis as unknown as PageGlobals).getComputedStyle(el).backgroundColor),
        ).toBe(rgb(TONE_COLOURS.failed));
        const error = broken.locator('.error');
        expect(await error.innerText()).toContain('bad request');
        expect(
          await error.evaluate((el) => (globalThis as unknown as PageGlobals).getComputedStyle(el).color),
        ).toBe(rgb(TONE_COLOURS.failed));

        for (const id of [result.run_id, child('ok'), child('capped'), child('broken')]) {
          expect(await row(id).locator('a.ui-link').getAttribute('href')).toBe(
            workflowUiUrl(UI, testNamespace(), id),
          );
        }
        // The lead's bar spans the run; each delegation's lies within it.
        expect(await row(result.run_id).locator('.bar').getAttribute('style')).toMatch(/left:0\.000%/);

        const logs = tab.locator('details.step-log');
        expect(await logs.count()).toBe(3);
        const okLog = tab.locator(`details.step-log[data-workflow-id="${child('ok')}"]`);
        await row(child('ok')).locator('a.log-link').click();
        expect(await okLog.evaluate((el) => (el as unknown as { open: boolean }).open)).toBe(true);
        expect(await okLog.innerText()).toContain('→ ls');
        expect(await okLog.innerText()).toContain(HOSTILE_RESULT);
        expect(await tab.locator('table.ledger tbody tr').count()).toBe(3);

        // The run's text is shown as text: no element of it exists, none of its script ran.
        expect(await row(child('ok')).locator('.description').innerText()).toBe(HOSTILE_DESCRIPTION);
        expect(await tab.evaluate(() => (globalThis as unknown as PageGlobals).pwned)).toBeUndefined();
        expect(await tab.locator('script').count()).toBe(1);
        expect(await tab.locator('img').count()).toBe(0);
        expect(requested).toEqual([]);

        await tab.screenshot({ path: join(artifactsDir(), 'report.png'), fullPage: true });
      } finally {
        await browser.close();
      }
    },
  );
});

it('an unknown run id, and an open run no worker polls: one line each, no page written', async () => {
  const out = join(tempDir('report'), 'r.html');
  const unknown = await cli(['report', 'no-such-run-here', '-o', out]);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toBe(`subagents: report: no run no-such-run-here on ${testAddress()}\n`);

  const taskQueue = uniqueTaskQueue('report-open');
  const handle = await testClient().workflow.start<typeof leadRunWorkflow>('leadRunWorkflow', {
    taskQueue,
    workflowId: `${taskQueue}-lead`,
    args: [{ ...threeOutcomesInput('report-open'), run_id: `${taskQueue}-lead` }],
  });
  try {
    const open = await cli(['report', handle.workflowId, '-o', out]);
    expect(open.ms).toBeLessThan(WITHOUT_WAITING_MS);
    expect(open.code).toBe(1);
    expect(open.stdout).toBe('');
    expect(open.stderr).toBe(
      `subagents: report: run ${handle.workflowId} is still running, and no worker polls task queue ` +
        `"${taskQueue}" at ${testAddress()} to answer its queries: report it once it has ended, or start a ` +
        `worker with: subagents worker --address ${testAddress()} --task-queue ${taskQueue}\n`,
    );
    expect(existsSync(out)).toBe(false);
  } finally {
    await handle.terminate('test over');
  }
});
