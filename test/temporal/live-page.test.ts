/**
 * The page `subagents serve` serves, driven in headless Chromium against the real server: a three-part run
 * whose parts each wait on a person (two bash calls a guardrail holds, one question). The page shows the tree,
 * its inbox lists all three; signed in with a bearer token, the person approves one call, denies the other
 * with a reason and answers the question; each part's text grows live on the page, and the run completes.
 * Screenshots go to the test artifacts folder.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { SubagentsClient } from '../../client/api';
import { startLiveServer } from '../../client/live-server';
import { artifactsDir, itInBrowser } from '../support/outcomes';
import { withBrowserPage } from '../support/web-ui';
import { leadInput, scriptedWorkspace } from '../support/subagent-input';
import { testFileBridge } from '../support/live-stream';
import {
  startLeadRun,
  testNamespace,
  uniqueTaskQueue,
  useTestClient,
  withProjectWorker,
} from '../harness/temporal';

const testClient = useTestClient();
const inBrowser = itInBrowser('live-page');

const GROWING = 'Part zero ran its cleanup and now reports at length, word after word, as a model would.';

function heldPartsInput() {
  const bashPart = (id: string, file: string, answer: string, delayMs: number) => ({
    agent: 'general-purpose',
    prompt_contains: `Do part ${id}.`,
    turns: [
      { tool_calls: [{ name: 'bash', id: `rm_${id}`, args: { command: `rm -f ${file}` } }] },
      { content: answer, delay_ms: delayMs },
    ],
  });
  const { workspace, scriptFile } = scriptedWorkspace('live-page', {
    scripts: [
      {
        agent: 'lead',
        turns: [
          {
            tool_calls: [
              ...['part0', 'part1'].map((id) => ({
                name: 'task',
                id,
                args: {
                  description: `Part ${id}`,
                  prompt: `Do part ${id}.`,
                  subagent_type: 'general-purpose',
                },
              })),
              {
                name: 'task',
                id: 'part2',
                args: { description: 'Part part2', prompt: 'Do part part2.', subagent_type: 'painter' },
              },
            ],
          },
          { content: 'All three parts came back.' },
        ],
      },
      bashPart('part0', 'a.txt', GROWING, 3000),
      bashPart('part1', 'b.txt', 'Part one was told: {{tool_result}}', 300),
      {
        agent: 'painter',
        turns: [
          {
            tool_calls: [
              {
                name: 'ask_clarification',
                id: 'ask_colour',
                args: {
                  question: 'Which colour?',
                  clarification_type: 'approach_choice',
                  options: ['Blue', 'Red'],
                },
              },
            ],
          },
          { content: 'Painted: {{tool_result}}', delay_ms: 300 },
        ],
      },
    ],
  });
  return leadInput({
    workspace,
    scriptFile,
    config: {
      subagent_runtime: { max_running: 3 },
      subagents: {
        max_concurrent: 3,
        custom_agents: {
          painter: {
            description: 'Paints.',
            system_prompt: 'You paint.',
            tools: { allow: ['ls', 'ask_clarification'] },
          },
        },
      },
      clarification: { timeout_seconds: 600 },
      guardrails: {
        enabled: true,
        rules: [{ tool: 'bash', args: { command: 'rm' }, decision: 'ask', reason: 'deletes files' }],
      },
    },
  });
}

const shot = (page: Page, name: string) =>
  page.screenshot({ path: join(artifactsDir(), `live-page-${name}.png`), fullPage: true });

const panelText = (page: Page, path: string) =>
  page
    .locator(`.agent[data-path="${path}"] pre.text`)
    .textContent()
    .then((text) => text ?? '');

inBrowser('a person watches the tree, approves, denies with a reason and answers from the page', async () => {
  const input = heldPartsInput();
  const bridge = testFileBridge('page');
  const taskQueue = uniqueTaskQueue('live-page');
  await withProjectWorker(
    taskQueue,
    async () => {
      const server = await startLiveServer({
        client: new SubagentsClient(testClient(), testNamespace()),
        bridge,
        tokens: new Map([['page-token', 'alice']]),
        pollMs: 300,
      });
      try {
        const handle = await startLeadRun(testClient(), input, taskQueue);
        await withBrowserPage(async (page) => {
          await page.goto(`${server.url}/runs/${encodeURIComponent(handle.workflowId)}`);
          await page.fill('#token', 'page-token');
          await page.dispatchEvent('#token', 'change');
          await page.locator('#who', { hasText: 'signed in as alice' }).waitFor({ timeout: 30_000 });
          // The inbox: two held calls and a question.
          await page.locator('.item.approval').nth(1).waitFor({ timeout: 60_000 });
          await page.locator('.item.question').waitFor({ timeout: 60_000 });
          await page.locator('.agent[data-path="part2"]').waitFor();
          await shot(page, '1-inbox');
          // The stream refused before the token was given (401) and flows now: nothing stale is left on the page.
          expect(await page.textContent('#notice')).toBe('');
          expect(await page.locator('.item.approval code').allTextContents()).toEqual(
            expect.arrayContaining([
              expect.stringContaining('rm -f a.txt'),
              expect.stringContaining('rm -f b.txt'),
            ]),
          );

          // Every length part zero's text takes on the page, seen as it changes (polling could miss the growth
          // on a loaded machine, seeing only the whole text).
          await page.evaluate(() => {
            type Seen = { lengths: number[] };
            const doc = (
              globalThis as unknown as {
                document: { body: object; querySelector(s: string): { textContent: string } | null };
              }
            ).document;
            const seen = globalThis as unknown as Seen;
            seen.lengths = [];
            const Observer = (
              globalThis as unknown as {
                MutationObserver: new (cb: () => void) => { observe(n: object, o: object): void };
              }
            ).MutationObserver;
            new Observer(() => {
              const length =
                doc.querySelector('.agent[data-path="part0"] pre.text')?.textContent?.trim().length ?? 0;
              if (length > 0 && seen.lengths.at(-1) !== length) seen.lengths.push(length);
            }).observe(doc.body, { childList: true, subtree: true, characterData: true });
          });
          await page.locator('.item.approval[data-ref="part0/a1"] button.approve').click();
          await page
            .locator('.item.approval[data-ref="part0/a1"]')
            .waitFor({ state: 'detached', timeout: 30_000 });
          // Part zero's answer grows on the page while it streams.
          await page.waitForFunction(
            () =>
              (
                (
                  globalThis as unknown as {
                    document: { querySelector(s: string): { textContent: string } | null };
                  }
                ).document.querySelector('.agent[data-path="part0"] pre.text')?.textContent ?? ''
              ).length > 0,
            undefined,
            { timeout: 30_000 },
          );
          const early = await panelText(page, 'part0');
          await shot(page, '2-growing');
          await page.locator('.item.approval[data-ref="part1/a1"] input.reason').fill('not today');
          await page.locator('.item.approval[data-ref="part1/a1"] button.deny').click();
          await page.locator('.item.question input.answer-text').fill('Blue');
          await page.locator('.item.question button.answer').click();
          await page.locator('#ended[data-status="completed"]').waitFor({ timeout: 60_000 });
          const lengths = await page.evaluate(() => (globalThis as unknown as { lengths: number[] }).lengths);
          expect(early.length).toBeGreaterThan(0);
          // It grew: seen in part before it was whole.
          expect(lengths.some((length) => length < GROWING.length)).toBe(true);
          expect((await panelText(page, 'part0')).trim()).toBe(GROWING);
          expect(await panelText(page, 'part1')).toContain('not today');
          expect(await panelText(page, 'part2')).toContain('Blue');
          expect(await page.locator('#ended').textContent()).toContain('All three parts came back.');
          // The inbox empties once the run has ended.
          await page.waitForSelector('.item', { state: 'detached', timeout: 30_000 });
          await shot(page, '3-completed');
        });
        const result = await handle.result();
        expect(result.status).toBe('completed');
        // The decisions were recorded with the signed-in person.
        expect(result.decisions).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ type: 'tool_approved', by: 'alice' }),
            expect.objectContaining({ type: 'tool_denied' }),
          ]),
        );
        // So was the answer: the lead's event log names who answered part 2's question.
        const events = await new SubagentsClient(testClient(), testNamespace())
          .getRun(handle.workflowId)
          .events();
        expect(events).toContainEqual(
          expect.objectContaining({ type: 'clarification_answered', answer: 'Blue', by: 'alice' }),
        );
      } finally {
        await server.close();
      }
    },
    { stream: bridge },
  );
});
