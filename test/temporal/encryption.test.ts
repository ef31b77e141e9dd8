/**
 * The encryption codec end to end, each part a process of its own as a user runs them: with
 * SUBAGENTS_ENCRYPTION_KEY in the environment of the dev server, the worker and the CLI, a run's prompt and
 * answers reach neither the server's SQLite files nor the payload store, while the CLI and the codec
 * endpoint the Web UI calls still read them, and the Web UI (in Chromium) shows them decoded; a CLI without the
 * key names the key it lacks.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { LeadRunResult } from '../../contracts/lead';
import { CLI, cliEnv, runCli, startProcess, stop } from '../support/cli-process';
import { tempDir, writeScript } from '../support/subagent-input';
import { CLAIM_CHECK_ENCODING } from '../../payloads/claim-check-codec';
import { ENCRYPTED_ENCODING } from '../../payloads/encryption-codec';
import { keyIdOf } from '../../payloads/encryption-keys';
import { projectDataConverter } from '../../payloads/data-converter';
import { payloadSettings } from '../../payloads/store';
import {
  historyPayloads,
  payloadEncoding,
  payloadsHolding,
  type PlacedPayload,
} from '../support/history-payloads';
import { artifactsDir, itInBrowser } from '../support/outcomes';
import { inputAndResult, withBrowserPage } from '../support/web-ui';

/** The files under `dir` (a folder of its own for the server's database, another for the store) holding `text`. */
function filesContaining(dir: string, text: string): string[] {
  const needle = Buffer.from(text, 'utf8');
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((path) => readFileSync(path).includes(needle));
}

describe('a run with encryption on, each part a process of its own', () => {
  const marker = `secret-${randomUUID()}`;
  /** The keyless run's own marker: its plaintext on the same server must not be taken for a leak of `marker`. */
  const plainMarker = `plain-${randomUUID()}`;
  const key = randomBytes(32).toString('base64');
  const keyId = keyIdOf(Buffer.from(key, 'base64'));
  const dbDir = tempDir('encrypted-db');
  const payloadDir = tempDir('encrypted-payloads');
  const env = cliEnv({ SUBAGENTS_ENCRYPTION_KEY: key, SUBAGENTS_PAYLOAD_DIR: payloadDir });
  const processes: ChildProcess[] = [];
  let server: { address: string; ui_url: string; codec_endpoint: string };
  let result: LeadRunResult;
  /** The same run on a worker and a CLI without the key: the positive control of the checks on history. */
  let keylessRun: LeadRunResult;

  /** A config whose scripted lead delegates once and answers, `mark` in every text (a bulk of it with `bulk`). */
  function markedConfig(mark: string, bulk = '', extra = ''): string {
    const configDir = tempDir('encrypted-config');
    const script = writeScript(configDir, {
      scripts: [
        {
          agent: 'lead',
          turns: [
            {
              tool_calls: [
                {
                  name: 'task',
                  id: 'look',
                  args: {
                    description: 'Look at it',
                    prompt: `Look at ${mark}-task.`,
                    subagent_type: 'general-purpose',
                  },
                },
              ],
            },
            { content: `The answer is ${mark}-final. ${bulk}` },
          ],
        },
        { agent: 'general-purpose', turns: [{ content: `Found ${mark}-sub.` }] },
      ],
    });
    const config = join(configDir, 'config.yaml');
    writeFileSync(
      config,
      `models:\n  - name: scripted\n    provider: scripted\n    script_file: ${script}\n${extra}`,
    );
    return config;
  }

  beforeAll(async () => {
    // Large enough that the lead's transcript and the results pass the claim-check threshold too.
    const bulk = `${marker} `.repeat(600);
    const config = markedConfig(marker, bulk);

    const devServer = await startProcess(
      [CLI, 'dev-server', '--db-filename', join(dbDir, 'temporal.db')],
      env,
      /"address"/,
    );
    processes.push(devServer.child);
    server = JSON.parse(devServer.line) as typeof server;
    // A start line says which key the worker encrypts with, by its id.
    const worker = await startProcess([CLI, 'worker', '--address', server.address], env, /^payloads: /);
    processes.push(worker.child);
    expect(worker.line).toBe(`payloads: encrypted with key ${keyId} (1 key held)`);
    const run = await runCli(
      ['run', '--address', server.address, '--config', config, '--json', `Plan ${marker}-prompt. ${bulk}`],
      env,
    );
    expect(run.stderr).not.toMatch(/unexpected error/);
    expect(run.code).toBe(0);
    result = JSON.parse(run.stdout) as LeadRunResult;
    expect(result.status).toBe('completed');
    expect(result.final_output).toContain(`${marker}-final`);

    const plainEnv = cliEnv({ SUBAGENTS_PAYLOAD_DIR: tempDir('plain-payloads') });
    // The control writes payloads whole: with shared fields, the marker's large fields would be in the store
    // (the encrypted run's are, encrypted at rest: checked below), not in history for this reading to find.
    const whole = 'payloads:\n  shared_fields: false\n';
    const wholeConfig = join(tempDir('keyless-config'), 'config.yaml');
    writeFileSync(wholeConfig, whole);
    const plainWorker = await startProcess(
      [CLI, 'worker', '--address', server.address, '--task-queue', 'keyless', '--config', wholeConfig],
      plainEnv,
      /^payloads: /,
    );
    processes.push(plainWorker.child);
    const plainRun = await runCli(
      [
        'run',
        ...['--address', server.address, '--task-queue', 'keyless'],
        ...['--config', markedConfig(plainMarker, '', whole), '--json'],
        `Plan ${plainMarker}-prompt.`,
      ],
      plainEnv,
    );
    expect(plainRun.code).toBe(0);
    keylessRun = JSON.parse(plainRun.stdout) as LeadRunResult;
  });

  /** Every payload of the run's history and its subagent's, as the server holds them. */
  async function storedPayloads(run: LeadRunResult): Promise<PlacedPayload[]> {
    const connection = await Connection.connect({ address: server.address });
    try {
      const plain = new Client({ connection });
      const ids = [run.run_id, ...run.ledger.map((entry) => entry.workflow_id)];
      const histories = await Promise.all(ids.map((id) => plain.workflow.getHandle(id).fetchHistory()));
      return histories.flatMap(historyPayloads);
    } finally {
      await connection.close();
    }
  }

  afterAll(async () => {
    for (const child of processes.reverse()) await stop(child);
  });

  it('shows it to the CLI with the key; a CLI without it names the key it lacks', async () => {
    const ledger = await runCli(['ledger', result.run_id, '--address', server.address, '--json'], env);
    expect(ledger.code).toBe(0);
    expect(ledger.stdout).toContain(`${marker}-sub`);
    const status = await runCli(['status', result.run_id, '--address', server.address], env);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/: completed/);
    const keyless = await runCli(
      ['ledger', result.run_id, '--address', server.address, '--json'],
      cliEnv({ SUBAGENTS_PAYLOAD_DIR: payloadDir }),
    );
    expect(keyless.code).not.toBe(0);
    expect(keyless.stderr).toContain(`encrypted with key ${keyId}, which this process does not hold`);
  });

  it('lists every run to a CLI without the key, the encrypted one marked; a malformed key is a key problem', async () => {
    const keylessEnv = cliEnv({ SUBAGENTS_PAYLOAD_DIR: payloadDir });
    const listed = await runCli(['list', '--address', server.address, '--limit', '100'], keylessEnv);
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    const rowOf = (runId: string) => listed.stdout.split('\n').find((line) => line.startsWith(`${runId} `));
    expect(rowOf(result.run_id)).toMatch(new RegExp(`\\bcompleted\\b.*encrypted: key ${keyId} not held$`));
    expect(rowOf(keylessRun.run_id)).toMatch(/\bcompleted\b/);
    expect(rowOf(keylessRun.run_id)).not.toContain('encrypted');
    const json = await runCli(['list', '--address', server.address, '--limit', '100', '--json'], keylessEnv);
    expect(json.code).toBe(0);
    const runs = JSON.parse(json.stdout) as Array<{ run_id: string; unreadable?: string }>;
    expect(runs.find((run) => run.run_id === result.run_id)?.unreadable).toBe(
      `encrypted: key ${keyId} not held`,
    );

    const malformed = await runCli(
      ['list', '--address', server.address],
      cliEnv({ SUBAGENTS_ENCRYPTION_KEY: 'not a key', SUBAGENTS_PAYLOAD_DIR: payloadDir }),
    );
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toMatch(/^subagents: encryption key: /);
    expect(malformed.stderr).not.toContain('cannot reach the Temporal server');
  });

  it("says in status why a run its worker cannot decode waits (the worker lacks the run's key)", async () => {
    // A client with the key starts a run on the keyless worker's queue: its input is ciphertext to that worker.
    process.env.ENCRYPTION_TEST_KEY = key;
    const settings = payloadSettings();
    const connection = await Connection.connect({ address: server.address });
    const workflowId = `undecodable-${randomUUID()}`;
    try {
      const client = new Client({
        connection,
        dataConverter: projectDataConverter({
          ...settings,
          encryption: { ...settings.encryption, key_env: 'ENCRYPTION_TEST_KEY' },
        }),
      });
      await client.workflow.start('leadRunWorkflow', {
        taskQueue: 'keyless',
        workflowId,
        args: [{ prompt: 'Plan the undecodable run.' }],
      });
      const status = await runCli(['status', workflowId, '--address', server.address], env);
      expect(status.stderr).not.toContain('unexpected error');
      expect(status.stderr).toContain(
        `status: run ${workflowId} cannot be read: payload of workflow ${workflowId} is encrypted with key ${keyId}, ` +
          'which this process does not hold',
      );
      expect(status.stderr).toContain('the run waits and resumes once its workers hold that key');
      expect(status.code).toBe(1);
      await client.workflow.getHandle(workflowId).terminate('test over');
    } finally {
      delete process.env.ENCRYPTION_TEST_KEY;
      await connection.close();
    }
  });

  it('keeps history to ciphertext or references, which the codec endpoint turns back into text', async () => {
    const connection = await Connection.connect({ address: server.address });
    try {
      const plain = new Client({ connection });
      const history = await plain.workflow.getHandle(result.run_id).fetchHistory();
      // Every payload of every event (inputs, results, memo, summaries, Update inputs, markers): encrypted or
      // a claim-check reference, the marker in none. Not encoded, by the SDK's design: search attributes (the
      // server's index) and a local activity marker's bookkeeping (`details.data`: its id, type, attempt).
      const payloads = await storedPayloads(result);
      const encoded = payloads.filter(
        ({ where }) =>
          !where.includes('searchAttributes') &&
          !where.includes('markerRecordedEventAttributes.details.data.'),
      );
      expect(encoded.length).toBeGreaterThan(20);
      expect(
        encoded
          .filter(
            ({ payload }) => ![ENCRYPTED_ENCODING, CLAIM_CHECK_ENCODING].includes(payloadEncoding(payload)),
          )
          .map(({ where, payload }) => `${where} (${payloadEncoding(payload)})`),
      ).toEqual([]);
      expect(payloadsHolding(payloads, marker)).toEqual([]);
      const [input] = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
      const encoding = Buffer.from(input.metadata?.encoding ?? []).toString('utf8');
      expect([ENCRYPTED_ENCODING, CLAIM_CHECK_ENCODING]).toContain(encoding);
      const base64 = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('base64');
      const response = await fetch(`${server.codec_endpoint}/decode`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Origin: new URL(server.ui_url).origin },
        body: JSON.stringify({
          payloads: [
            {
              metadata: Object.fromEntries(
                Object.entries(input.metadata ?? {}).map(([name, value]) => [name, base64(value)]),
              ),
              data: base64(input.data),
            },
          ],
        }),
      });
      expect(response.status).toBe(200);
      const decoded = (await response.json()) as { payloads: { data: string }[] };
      expect(Buffer.from(decoded.payloads[0].data, 'base64').toString('utf8')).toContain(`${marker}-prompt`);
    } finally {
      await connection.close();
    }
  });

  itInBrowser('encryption')(
    'shows the run’s input and result decoded in the dev server’s Web UI',
    async () => {
      const shot = join(artifactsDir(), 'encryption-web-ui.png');
      const shown = await withBrowserPage((page) =>
        inputAndResult(page, {
          uiUrl: server.ui_url,
          namespace: 'default',
          workflowId: result.run_id,
          expected: marker,
          shot,
        }),
      );
      expect(shown.input).toContain(`"prompt": "Plan ${marker}-prompt.`);
      expect(shown.result).toContain(`"final_output": "The answer is ${marker}-final.`);
      for (const pane of [shown.input, shown.result]) {
        expect(pane).not.toContain(ENCRYPTED_ENCODING);
        expect(pane).not.toContain(CLAIM_CHECK_ENCODING);
      }
      expect(shown.codecSucceeded).toBe(true);
    },
  );

  it('finds the marker, with the same reading of history, in a run without the key', async () => {
    expect(keylessRun.status).toBe('completed');
    const found = payloadsHolding(await storedPayloads(keylessRun), plainMarker);
    const places = [
      'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED: workflowExecutionStartedEventAttributes.input',
      'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: activityTaskScheduledEventAttributes.input',
      'EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED: startChildWorkflowExecutionInitiatedEventAttributes.input',
      'EVENT_TYPE_ACTIVITY_TASK_COMPLETED: activityTaskCompletedEventAttributes.result',
      'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED: workflowExecutionCompletedEventAttributes.result',
    ];
    for (const place of places) expect(found.filter((where) => where.startsWith(place))).not.toEqual([]);
  });

  it('leaves neither the server’s database nor the payload store holding it in the clear', async () => {
    // Stopped, the server has its SQLite file, journal included, all on disk.
    for (const child of processes.splice(0).reverse()) await stop(child);
    expect(readdirSync(dbDir).some((name) => name.startsWith('temporal.db'))).toBe(true);
    // The search reads the database: the run's id, which is not encrypted, is found there.
    expect(filesContaining(dbDir, result.run_id)).not.toEqual([]);
    expect(filesContaining(dbDir, marker)).toEqual([]);
    expect(readdirSync(payloadDir).length).toBeGreaterThan(0);
    expect(filesContaining(payloadDir, marker)).toEqual([]);
  });
});
