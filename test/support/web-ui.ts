/**
 * The suite server's Temporal Web UI as a user sees it, in headless Chromium: the default list of workflows
 * (its status badges, text and colour) and a workflow's user metadata (summary, details, current details), read
 * from the rendered DOM. The UI renders each metadata text as markdown in an iframe of its own (`/render`), so
 * what is read there is what the user reads and copies.
 */
import { chromium, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, itInBrowser } from './outcomes';

/** `describe`, or `describe.skip` where there is no Chromium (see itInBrowser; CI turns the skip into a failure). */
export function describeInBrowser(label: string): jest.Describe {
  return itInBrowser(label) === it ? describe : describe.skip;
}

/** The suite server's Web UI (TEMPORAL_TEST_UI_URL). */
export function webUiUrl(): string {
  const ui = process.env.TEMPORAL_TEST_UI_URL;
  if (!ui) throw new Error('the suite’s server has no Web UI (TEMPORAL_TEST_UI_URL is not set)');
  return ui;
}

/** Runs `body` with a page of a fresh headless Chromium, closed whatever happens. */
export async function withBrowserPage<T>(body: (page: Page) => Promise<T>): Promise<T> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    return await body(await browser.newPage({ viewport: { width: 1600, height: 1000 } }));
  } finally {
    await browser.close();
  }
}

export interface ListRow {
  workflowId: string;
  /** The status badge's text as the page has it (`Completed`, `Failed`, `Canceled`, `Running`). */
  status: string;
  /** The badge's classes and its computed background colour: how the UI colours that status. */
  badgeClass: string;
  badgeColour: string;
}

/** What the page's own window offers (the project compiles without the DOM library). */
interface PageWindow {
  getComputedStyle(element: unknown): { backgroundColor: string };
}

/** The rows of the Web UI's workflow list in its default columns, filtered by a visibility `query`. */
export async function listRows(page: Page, namespace: string, query: string): Promise<ListRow[]> {
  await page.goto(`${webUiUrl()}/namespaces/${namespace}/workflows?query=${encodeURIComponent(query)}`);
  const badges = page.locator('table tbody tr [data-testid="execution-status"] > span');
  await badges.first().waitFor({ timeout: 30_000 });
  const headers = (await page.locator('table thead th').allTextContents()).map((text) => text.trim());
  const statusAt = headers.indexOf('Status');
  const idAt = headers.indexOf('Workflow ID');
  if (statusAt < 0 || idAt < 0) throw new Error(`the list has no Status or Workflow ID column: ${headers}`);
  const rows: ListRow[] = [];
  for (const row of await page.locator('table tbody tr').all()) {
    const cells = row.locator(':scope > td');
    const badge = cells.nth(statusAt).locator('[data-testid="execution-status"] > span');
    rows.push({
      workflowId: ((await cells.nth(idAt).textContent()) ?? '').trim(),
      status: ((await badge.textContent()) ?? '').trim(),
      badgeClass: (await badge.getAttribute('class')) ?? '',
      badgeColour: await badge.evaluate(
        (element) => (globalThis as unknown as PageWindow).getComputedStyle(element).backgroundColor,
      ),
    });
  }
  return rows;
}

export interface MetadataPanels {
  /** Each panel's rendered text, line by line (trimmed, blank lines left out). */
  summary: string[];
  details: string[];
  currentDetails: string[];
  /** The rendered text of the first code block of the details (a prompt as written), as a user copies it. */
  detailsBlock?: string;
  /** The rendered text of each code span of the current details. */
  currentCode: string[];
}

/**
 * Opens workflow `workflowId`'s page (its latest run), goes to its User Metadata tab and reads the three panels
 * once the current details (answered by a worker through a query) have rendered.
 */
export async function metadataPanels(
  page: Page,
  namespace: string,
  workflowId: string,
): Promise<MetadataPanels> {
  await page.goto(`${webUiUrl()}/namespaces/${namespace}/workflows/${encodeURIComponent(workflowId)}`);
  await page.getByTestId('user-metadata-tab').click();
  const panel = (id: string) => page.frameLocator(`#user-metadata-${id}`).locator('main');
  // A panel with nothing to show has no frame (the UI says "No details available").
  const lines = async (id: string) =>
    (await page.locator(`#user-metadata-${id}`).count()) === 0
      ? []
      : (await panel(id).innerText())
          .split('\n')
          .map((line) => line.trim())
          .filter((line) => line !== '');
  await panel('current-details').locator('p').first().waitFor({ timeout: 30_000 });
  const block =
    (await page.locator('#user-metadata-details').count()) === 0
      ? undefined
      : panel('details').locator('pre');
  return {
    summary: await lines('summary'),
    details: await lines('details'),
    currentDetails: await lines('current-details'),
    ...(block && (await block.count()) > 0 && { detailsBlock: await block.first().innerText() }),
    currentCode: await panel('current-details').locator('code').allInnerTexts(),
  };
}

export interface InputAndResult {
  /** The Input and Result panes' text as rendered (the lines the editor has drawn: the first screenful or so). */
  input: string;
  result: string;
  /** Whether the UI's codec indicator says its codec endpoint converted the payloads (a failure has its own). */
  codecSucceeded: boolean;
}

/**
 * Opens workflow `workflowId`'s page in the Web UI at `uiUrl` and reads its Input and Result panes once both
 * show `expected` (the UI decodes through its codec endpoint after the page loads); on a page that never does,
 * what it shows by then. `shot`: where to save a screenshot of the page, taken whatever it shows.
 */
export async function inputAndResult(
  page: Page,
  options: { uiUrl: string; namespace: string; workflowId: string; expected: string; shot?: string },
): Promise<InputAndResult> {
  const { uiUrl, namespace, workflowId, expected, shot } = options;
  await page.goto(`${uiUrl}/namespaces/${namespace}/workflows/${encodeURIComponent(workflowId)}`);
  const pane = (label: string) => page.getByTestId('input-and-result').getByLabel(label, { exact: true });
  try {
    await Promise.all(
      ['Input', 'Result'].map((label) =>
        pane(label).filter({ hasText: expected }).waitFor({ timeout: 30_000 }),
      ),
    );
  } catch {
    // The assertions on what the panes show say more than a timeout.
  }
  if (shot !== undefined) await page.screenshot({ path: shot });
  return {
    input: await pane('Input').innerText(),
    result: await pane('Result').innerText(),
    codecSucceeded: (await page.getByTestId('data-encoder-status-success').count()) > 0,
  };
}
