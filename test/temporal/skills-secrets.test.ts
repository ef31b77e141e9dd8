/**
 * A request-scoped secret end to end, against the real server: a lead run with a sealed secret delegates to a
 * subagent that reads a skill declaring it (`required-secrets`) and runs the skill's script, which echoes it.
 * The script saw the value (its output has the masked form where the value was), the tool output and the final
 * answer show it masked, and the value is in no workflow history of the run as `temporal workflow show --output
 * json` prints it (every payload decoded), nor in the payload store.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { parseConfig } from '../../contracts/config';
import { buildLeadRunInput } from '../../contracts/config/lead-input';
import { maskedSecret } from '../../contracts/secrets';
import { findTemporalCli } from '../../devserver/temporal-cli';
import { payloadStore, type LocalDirBlobStore } from '../../payloads/store';
import { processSecretsKeyring, sealSecrets, useEphemeralSecretsKey } from '../../payloads/secrets';
import {
  startLeadRun,
  testAddress,
  testNamespace,
  uniqueTaskQueue,
  useTestClient,
  withProjectWorker,
} from '../harness/temporal';
import { tempDir, writeScript } from '../support/subagent-input';

const testClient = useTestClient();

const SECRET = 'WAREHOUSE_API_TOKEN';
const SKILL_PATH = '/mnt/skills/public/stock-api/SKILL.md';
const SCRIPT_PATH = '/mnt/skills/public/stock-api/scripts/call.sh';

function skillsFolder(): string {
  const root = join(tempDir('skills-secrets'), 'skills');
  const files: Record<string, string> = {
    'public/stock-api/SKILL.md':
      '---\nname: stock-api\ndescription: Ask the stock API.\nallowed-tools: [bash, read_file]\n' +
      `required-secrets: [${SECRET}]\n---\n# Stock API\n\nRun scripts/call.sh.\n`,
    // What a real script would send in a header; here it says what it got, and how long it was.
    'public/stock-api/scripts/call.sh': `echo "calling with token $${SECRET} (\${#${SECRET}} characters)"\n`,
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/** Every file under `dir` (the payload store's blobs). */
function filesUnder(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** The history as the Temporal CLI prints it, with every payload's `data` decoded from base64 beside it. */
async function shownHistory(cli: string, workflowId: string): Promise<string> {
  const { stdout } = await promisify(execFile)(
    cli,
    [
      'workflow',
      'show',
      '--workflow-id',
      workflowId,
      '--address',
      testAddress(),
      '--namespace',
      testNamespace(),
      '--output',
      'json',
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const decoded = [...stdout.matchAll(/"data":\s*"([A-Za-z0-9+/=]+)"/g)].map((m) =>
    Buffer.from(m[1], 'base64').toString('utf8'),
  );
  return [stdout, ...decoded].join('\n');
}

it('a skill script gets the secret in bash; it shows masked, and no history or stored payload holds it', async () => {
  const value = `tok-${randomUUID()}`;
  const root = skillsFolder();
  const dir = tempDir('skills-secrets-run');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const scriptFile = writeScript(dir, {
    scripts: [
      {
        agent: 'lead',
        turns: [
          {
            tool_calls: [
              {
                name: 'task',
                id: 'stock',
                args: {
                  description: 'Ask the API',
                  prompt: 'Ask the stock API.',
                  subagent_type: 'general-purpose',
                },
              },
            ],
          },
          { content: 'Lead: {{tool_result}}' },
        ],
      },
      {
        agent: 'general-purpose',
        turns: [
          { tool_calls: [{ name: 'read_file', args: { path: SKILL_PATH } }] },
          { tool_calls: [{ name: 'bash', args: { command: `sh ${SCRIPT_PATH}` } }] },
          { content: 'Sub: {{tool_result}}' },
        ],
      },
    ],
  });
  const { config } = parseConfig({
    models: [{ name: 'scripted', provider: 'scripted', model: 'test', script_file: scriptFile }],
  });
  // The test process is the worker too: it seals with a key of its own, which its worker holds.
  useEphemeralSecretsKey();
  const built = buildLeadRunInput(config, { prompt: 'Check the stock.', workspace, skills_root: root });
  const secrets = sealSecrets(processSecretsKeyring(), { [SECRET]: value });
  const input = { ...built, scope: { ...built.scope, secrets } };
  const taskQueue = uniqueTaskQueue('skills-secrets');
  const client = testClient();
  const result = await withProjectWorker(taskQueue, async () =>
    (await startLeadRun(client, input, taskQueue)).result(),
  );

  // The script ran with the value: masked where it was printed, its length the value's.
  expect(result.final_output).toContain(
    `calling with token ${maskedSecret(SECRET)} (${value.length} characters)`,
  );
  expect(result.final_output).not.toContain(value);

  const cli = findTemporalCli();
  if (!cli) throw new Error('the Temporal CLI should have been found by the suite setup');
  const workflowIds = [`${taskQueue}-lead`, ...result.ledger.map((entry) => entry.workflow_id)];
  expect(workflowIds).toHaveLength(2);
  for (const workflowId of workflowIds) {
    const shown = await shownHistory(cli.path, workflowId);
    expect(shown).toContain(SECRET);
    expect(shown).not.toContain(value);
  }
  const blobs = filesUnder((payloadStore() as LocalDirBlobStore).dir);
  expect(blobs.filter((path) => readFileSync(path).includes(value))).toEqual([]);
});
