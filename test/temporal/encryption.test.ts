/**
 * The encryption codec end to end, each part a process of its own as a user runs them: with
 * SUBAGENTS_ENCRYPTION_KEY in the environment of the dev server, the worker and the CLI, a run's prompt and
 * answers reach neither the server's SQLite files nor the payload store, while the CLI and the codec
 * endpoint the Web UI calls still read them; a CLI without the key names the key it lacks.
 */
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

/** The files under `dir` (a folder of its own for the server's database, another for the store) holding `text`. */
function filesContaining(dir: string, text: string): string[] {
  const needle = Buffer.from(text, 'utf8');
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((path) => readFileSync(path).includes(needle));
}

it('keeps a run out of the database and the store in the clear, and shows it to the CLI and the codec endpoint', async () => {
  const marker = `secret-${randomUUID()}`;
  const key = randomBytes(32).toString('base64');
  const keyId = keyIdOf(Buffer.from(key, 'base64'));
  const dbDir = tempDir('encrypted-db');
  const payloadDir = tempDir('encrypted-payloads');
  const configDir = tempDir('encrypted-config');
  // Large enough that the lead's transcript and the results pass the claim-check threshold too.
  const bulk = `${marker} `.repeat(600);
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
                  prompt: `Look at ${marker}-task.`,
                  subagent_type: 'general-purpose',
                },
              },
            ],
          },
          { content: `The answer is ${marker}-final. ${bulk}` },
        ],
      },
      { agent: 'general-purpose', turns: [{ content: `Found ${marker}-sub.` }] },
    ],
  });
  const config = join(configDir, 'config.yaml');
  writeFileSync(config, `models:\n  - name: scripted\n    provider: scripted\n    script_file: ${script}\n`);
  const env = cliEnv({ SUBAGENTS_ENCRYPTION_KEY: key, SUBAGENTS_PAYLOAD_DIR: payloadDir });

  const server = await startProcess(
    [CLI, 'dev-server', '--db-filename', join(dbDir, 'temporal.db')],
    env,
    /"address"/,
  );
  const processes = [server.child];
  try {
    const { address, codec_endpoint } = JSON.parse(server.line) as {
      address: string;
      codec_endpoint: string;
    };
    processes.push((await startProcess([CLI, 'worker', '--address', address], env, /worker ready/)).child);
    const run = await runCli(
      ['run', '--address', address, '--config', config, '--json', `Plan ${marker}-prompt. ${bulk}`],
      env,
    );
    expect(run.stderr).not.toMatch(/unexpected error/);
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as LeadRunResult;
    expect(result.status).toBe('completed');
    expect(result.final_output).toContain(`${marker}-final`);

    // The CLI with the key reads the run; one without it says which key it lacks.
    const ledger = await runCli(['ledger', result.run_id, '--address', address, '--json'], env);
    expect(ledger.code).toBe(0);
    expect(ledger.stdout).toContain(`${marker}-sub`);
    const status = await runCli(['status', result.run_id, '--address', address], env);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/: completed/);
    const keyless = await runCli(
      ['ledger', result.run_id, '--address', address, '--json'],
      cliEnv({ SUBAGENTS_PAYLOAD_DIR: payloadDir }),
    );
    expect(keyless.code).not.toBe(0);
    expect(keyless.stderr).toContain(`encrypted with key ${keyId}, which this process does not hold`);

    // History holds ciphertext or references; the codec endpoint (the Web UI's) turns the input back into text.
    const connection = await Connection.connect({ address });
    try {
      const plain = new Client({ connection });
      const history = await plain.workflow.getHandle(result.run_id).fetchHistory();
      expect(JSON.stringify(history)).not.toContain(marker);
      const [input] = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
      const encoding = Buffer.from(input.metadata?.encoding ?? []).toString('utf8');
      expect([ENCRYPTED_ENCODING, CLAIM_CHECK_ENCODING]).toContain(encoding);
      const base64 = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('base64');
      const response = await fetch(`${codec_endpoint}/decode`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Origin: 'http://127.0.0.1:8233' },
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
  } finally {
    for (const child of processes.reverse()) await stop(child);
  }
  // The server stopped: its SQLite file, journal included, is all on disk.
  expect(readdirSync(dbDir).some((name) => name.startsWith('temporal.db'))).toBe(true);
  expect(filesContaining(dbDir, marker)).toEqual([]);
  expect(readdirSync(payloadDir).length).toBeGreaterThan(0);
  expect(filesContaining(payloadDir, marker)).toEqual([]);
});
