/**
 * A blob of the payload store altered under a waiting run, against the real server: a transcript segment
 * (read by the model activity) and a claim-check blob (read by the codec) are both retried, not failed for
 * good; `status` names the blob in one line; restoring the file lets the run finish.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { Transcripts } from '../../activities/transcripts';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { SubagentsClient } from '../../client/api';
import { defaultPayloadSettings } from '../../contracts/config/payloads';
import { leadStatusQuery } from '../../contracts/lead';
import { configurePayloads, PAYLOAD_DIR_ENV, payloadStore } from '../../payloads/store';
import type { leadRunWorkflow } from '../../workflows';
import { leadInput, scriptedWorkspace, tempDir } from '../support/subagent-input';
import {
  startLeadRun,
  suiteCli,
  testNamespace,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
  withProjectWorker,
} from '../harness/temporal';

// A store of this file's own (its client, its worker and the CLI processes use it): the tests alter blobs in
// it. Set before the test client is made, so that client stores the runs' inputs there too.
const dir = tempDir('payload-faults');
const suiteDir = process.env[PAYLOAD_DIR_ENV];
process.env[PAYLOAD_DIR_ENV] = dir;
configurePayloads(defaultPayloadSettings());
const testClient = useTestClient();
// The worker's transcripts, kept here so a test can make the worker read the store instead of recalling.
const transcripts = new Transcripts(payloadStore());
afterAll(() => {
  if (suiteDir === undefined) delete process.env[PAYLOAD_DIR_ENV];
  else process.env[PAYLOAD_DIR_ENV] = suiteDir;
  configurePayloads(defaultPayloadSettings());
});

/** The lead asks a question, then answers "Done.": its second model call reads the first call's segment. */
const ASKS_THEN_ANSWERS: ModelScriptFileInput = {
  scripts: [
    {
      agent: 'lead',
      turns: [
        {
          content: '',
          tool_calls: [
            {
              name: 'ask_clarification',
              id: 'q',
              args: { question: 'Which one?', clarification_type: 'missing_info' },
            },
          ],
        },
        { content: 'Done.' },
      ],
    },
  ],
};

/** A model retried every second, so a restored blob is picked up at once. */
const FAST_RETRY = {
  models: [
    {
      name: 'scripted',
      provider: 'scripted',
      model: 'test',
      retry: { initial_interval_seconds: 1, max_interval_seconds: 1, backoff_coefficient: 1 },
    },
  ],
};

function storedFiles(): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !entry.name.endsWith('.tmp'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** Alters every stored blob whose bytes hold `marker`; answers how to put them back. */
function tamper(marker: string): { keys: string[]; restore: () => void } {
  const originals = storedFiles()
    .map((path) => ({ path, bytes: readFileSync(path) }))
    .filter(({ bytes }) => bytes.includes(marker));
  expect(originals.length).toBeGreaterThan(0);
  for (const { path, bytes } of originals)
    writeFileSync(path, Buffer.from(bytes.toString('latin1').replace(marker, 'Forged'), 'latin1'));
  return {
    keys: originals.map(({ path }) => path.split('/').slice(-2).join('')),
    restore: () => originals.forEach(({ path, bytes }) => writeFileSync(path, bytes)),
  };
}

async function waitForQuestion(handle: WorkflowHandle<typeof leadRunWorkflow>): Promise<void> {
  await waitFor('the question', async () => {
    const status = await handle.query(leadStatusQuery).catch(() => undefined);
    return (status?.questions ?? []).length > 0;
  });
}

function setUp(label: string, prompt: string) {
  const { workspace, scriptFile } = scriptedWorkspace(label, ASKS_THEN_ANSWERS);
  const config = { ...FAST_RETRY, models: [{ ...FAST_RETRY.models[0], script_file: scriptFile }] };
  return leadInput({ workspace, scriptFile, prompt, config });
}

it('retries a model call on a tampered transcript segment, names it in status, and finishes once it is restored', async () => {
  const taskQueue = uniqueTaskQueue('segment-fault');
  const input = setUp('segment-fault', 'Summarise the Marker logs.');
  await withProjectWorker(
    taskQueue,
    async () => {
      const handle = await startLeadRun(testClient(), input, taskQueue);
      await waitForQuestion(handle);
      // The first call's segment holds the prompt; the worker must read it back, not recall it.
      const altered = tamper('Marker');
      transcripts.clearCache();
      await new SubagentsClient(testClient(), testNamespace()).getRun(handle.workflowId).answer('The first.');
      await waitFor('a retried model call', async () => {
        const { raw } = await handle.describe();
        return (raw.pendingActivities ?? []).some(
          (a) => (a.attempt ?? 0) >= 2 && /does not match its hash/.test(a.lastFailure?.message ?? ''),
        );
      });
      expect((await handle.describe()).status.name).toBe('RUNNING');
      const shown = await suiteCli(['status', handle.workflowId]);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toMatch(
        new RegExp(
          `^waiting on the payload store: transcript segment (${altered.keys.join('|')}) in local directory .* ` +
            'does not match its hash \\(tampered or corrupted\\)',
          'm',
        ),
      );
      const json = await suiteCli(['status', handle.workflowId, '--json']);
      expect(JSON.parse(json.stdout)).toMatchObject({
        payload_store_fault: expect.stringMatching(/^transcript segment [0-9a-f]{64} /),
      });
      altered.restore();
      const result = await handle.result();
      expect(result).toMatchObject({ status: 'completed', final_output: 'Done.' });
    },
    { transcripts },
  );
});

it('names a claim-check blob that does not match its hash in status, and the run finishes once it is restored', async () => {
  const taskQueue = uniqueTaskQueue('blob-fault');
  // Over the codec's threshold: the run's input is kept in the payload store, history holds its hash.
  const input = setUp('blob-fault', `Summarise the Bulky logs. ${'x'.repeat(20_000)}`);
  // No workflow cache: each task and query replays the history, and so decodes the altered blob.
  const tuning = { maxCachedWorkflows: 0 };
  await withProjectWorker(
    taskQueue,
    async () => {
      const handle = await startLeadRun(testClient(), input, taskQueue);
      await waitForQuestion(handle);
      const altered = tamper('Bulky');
      const shown = await suiteCli(['status', handle.workflowId]);
      expect(shown.code).toBe(1);
      expect(shown.stderr.trim()).toMatch(
        new RegExp(
          `^subagents: status: run ${handle.workflowId} cannot be read: payload blob ` +
            `(${altered.keys.join('|')}) in local directory .* is corrupt: .*; the run waits and resumes when ` +
            'it is restored$',
        ),
      );
      expect(shown.stderr).not.toMatch(/unexpected error|no worker/);
      altered.restore();
      transcripts.clearCache();
      // Readable again once restored. A query sent at once may still meet what the failed replays left in the
      // worker's no-cache bookkeeping (it failed so once in CI), as a person's next `status` might: ask until it reads.
      await waitForQuestion(handle);
      await new SubagentsClient(testClient(), testNamespace()).getRun(handle.workflowId).answer('The first.');
      expect(await handle.result()).toMatchObject({ status: 'completed', final_output: 'Done.' });
    },
    { tuning, transcripts },
  );
});
