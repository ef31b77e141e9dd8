/**
 * Records the histories of real runs (scripted model, real dev server) as JSON fixtures under
 * test/fixtures/histories, which `test/temporal/replay.test.ts` replays against the workflow code of the day.
 * Re-record after an intended change to workflow behaviour: `npm run record:histories`.
 *
 * Workspace folders are temporary; their path is replaced by `/workspace` in the recorded payloads, so the
 * fixtures carry nothing of the machine that recorded them.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { resolveTemporalCli } from '../../worker/temporal-cli';
import { connectOrStartServer } from '../../worker/temporal-server';
import { createProjectWorker } from '../../worker/worker';
import { subagentInput, tempDir, writeScript } from './subagent-input';

interface Scenario {
  workflow: 'subagentWorkflow';
  script: ModelScriptFileInput;
  config?: Record<string, unknown>;
  agent?: string;
}

const ls = { name: 'ls', args: { path: '.' } };
const usage = { input_tokens: 400, output_tokens: 20 };

export const SCENARIOS: Record<string, Scenario> = {
  'subagent-completed': {
    workflow: 'subagentWorkflow',
    script: {
      scripts: [
        {
          turns: [
            {
              content: 'Looking.',
              tool_calls: [ls, { name: 'write_file', args: { path: 'a.txt', content: 'a' } }],
              usage,
            },
            {
              content: '',
              tool_calls: [{ name: 'write_file', args: { path: 'log.txt', content: 'x', append: true } }],
              usage,
            },
            { content: 'Done: a.txt written.', usage },
          ],
        },
      ],
    },
  },
  'subagent-token-capped': {
    workflow: 'subagentWorkflow',
    config: { subagents: { token_budget: { max_tokens: 1000 } } },
    script: { scripts: [{ repeat_last: true, turns: [{ content: 'Working.', tool_calls: [ls], usage }] }] },
  },
  'subagent-loop-capped': {
    workflow: 'subagentWorkflow',
    script: { scripts: [{ repeat_last: true, turns: [{ content: 'Again.', tool_calls: [ls] }] }] },
  },
  'subagent-turn-capped-failed': {
    workflow: 'subagentWorkflow',
    config: { subagents: { agents: { 'general-purpose': { max_turns: 2 } } } },
    script: { scripts: [{ repeat_last: true, turns: [{ content: '', tool_calls: [ls] }] }] },
  },
  'subagent-timed-out': {
    workflow: 'subagentWorkflow',
    config: { subagents: { agents: { 'general-purpose': { timeout_seconds: 2 } } } },
    script: {
      scripts: [
        {
          turns: [
            { content: 'Partial.', tool_calls: [ls] },
            { content: 'late', delay_ms: 30_000 },
          ],
        },
      ],
    },
  },
  'subagent-provider-400': {
    workflow: 'subagentWorkflow',
    script: { scripts: [{ turns: [{ error: { status: 400, message: 'bad request' } }] }] },
  },
  'subagent-retried-429': {
    workflow: 'subagentWorkflow',
    script: {
      scripts: [{ turns: [{ content: 'ok', fail_attempts: [{ status: 429, message: 'slow down' }] }] }],
    },
  },
};

/**
 * Replaces machine-specific strings (temporary folders, the checkout's path, the host name) in a history's
 * JSON text: in the text itself (stack traces, identities) and inside its base64 JSON payloads.
 */
function scrub(json: string, replacements: [string, string][]): string {
  const apply = (text: string) => replacements.reduce((acc, [from, to]) => acc.split(from).join(to), text);
  const inPayloads = json.replace(/"data":\s*"([A-Za-z0-9+/=]*)"/g, (match, data: string) => {
    const text = Buffer.from(data, 'base64').toString('utf8');
    const scrubbed = apply(text);
    return scrubbed === text ? match : `"data": "${Buffer.from(scrubbed, 'utf8').toString('base64')}"`;
  });
  return apply(inPayloads);
}

const PROJECT_ROOT = join(__dirname, '..', '..', '..');
const histories = join(PROJECT_ROOT, 'test', 'fixtures', 'histories');
const IDENTITY = 'history-recorder';

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const cli = (await resolveTemporalCli())?.path;
  if (!cli) throw new Error('recording needs the Temporal CLI: run `npm run temporal:ensure` first');
  const server = await connectOrStartServer({ headless: true });
  const connection = await Connection.connect({ address: server.address });
  const native = await NativeConnection.connect({ address: server.address });
  try {
    const client = new Client({ connection, namespace: server.namespace, identity: IDENTITY });
    const taskQueue = 'record-histories';
    const worker = await createProjectWorker({
      connection: native,
      namespace: server.namespace,
      taskQueue,
      tuning: { identity: IDENTITY },
    });
    mkdirSync(histories, { recursive: true });
    await worker.runUntil(async () => {
      for (const [name, scenario] of Object.entries(SCENARIOS)) {
        const dir = tempDir(`record-${name}`);
        const workspace = join(dir, 'workspace');
        mkdirSync(workspace);
        const input = subagentInput({
          workspace,
          agent: scenario.agent,
          config: scenario.config,
          scriptFile: writeScript(dir, scenario.script),
        });
        const workflowId = `replay-${name}/task/call_1`;
        const handle = await client.workflow.start(scenario.workflow, {
          taskQueue,
          workflowId,
          args: [input],
        });
        const result = await handle.result();
        // The CLI's export is the JSON the Web UI downloads too, the form `historyFromJSON` reads.
        const exported = execFileSync(
          cli,
          ['workflow', 'show', '--workflow-id', workflowId, '--address', server.address, '--output', 'json'],
          { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
        );
        const json = scrub(exported, [
          [dir, '/workspace'],
          [PROJECT_ROOT, '/project'],
          [hostname(), 'recorder'],
        ]);
        writeFileSync(join(histories, `${name}.json`), json);
        process.stdout.write(
          `${name}: ${JSON.stringify({ status: result.status, stop_reason: result.stop_reason })}\n`,
        );
      }
    });
  } finally {
    await native.close();
    await connection.close();
    await server.stop();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
