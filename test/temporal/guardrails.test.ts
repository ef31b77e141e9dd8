/**
 * Guardrails against the real server with the scripted model: a denied call never runs — its workspace is
 * unchanged, no tool activity is scheduled for it, and the model's next request holds the denial (the scripts
 * check with `if_missing`) — for the lead's bash, a subagent's bash, and an MCP tool; a provider module that
 * throws blocks the call when fail_closed; an `ask` in a batch item (no approver) is denied at once with the
 * unattended reason.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { temporal } from '@temporalio/proto';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { subagentResult } from '../../client/api';
import { BatchesClient } from '../../client/batches';
import { batchItemWorkflowId } from '../../contracts/batch';
import { parseConfig } from '../../contracts/config';
import { buildLeadRunInput } from '../../contracts/config/lead-input';
import { UNATTENDED_DENY_REASON } from '../../contracts/guardrail-rules';
import { leadEventsQuery } from '../../contracts/lead';
import { startWorkerMcp } from '../../worker/mcp';
import { subagentWorkflow } from '../../workflows/subagent';
import { startLeadRun, uniqueTaskQueue, useTestClient, withProjectWorker } from '../harness/temporal';
import { scriptedBatchInput, subagentInput, tempDir, writeScript } from '../support/subagent-input';

type IHistory = temporal.api.history.v1.IHistory;

const testClient = useTestClient();

/** A workspace holding keep.txt, and the folder of its script. */
function workspaceWithFile(label: string): { dir: string; workspace: string } {
  const dir = tempDir(label);
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  writeFileSync(join(workspace, 'keep.txt'), 'keep me');
  return { dir, workspace };
}

const rmCall = { name: 'bash', id: 'rm1', args: { command: 'rm keep.txt' } };

/** Turn 2 of a script: `seen` when the request holds `text` (the denial), else `MISSED`. */
const thenCheck = (text: string, seen = 'DENIAL SEEN') => ({
  content: seen,
  if_missing: { text, turn: { content: 'MISSED' } },
});

const rmRules = {
  enabled: true,
  rules: [{ tool: 'bash', args: { command: '\\brm\\b' }, decision: 'deny', reason: 'no deleting files' }],
};

function activityNames(history: IHistory): string[] {
  return (history.events ?? []).flatMap((event) => {
    const name = event.activityTaskScheduledEventAttributes?.activityType?.name;
    return name ? [name] : [];
  });
}

describe('guardrails', () => {
  it("keep the lead's denied bash call from running, and the model reads the denial", async () => {
    const { dir, workspace } = workspaceWithFile('guardrails-lead');
    const script: ModelScriptFileInput = {
      scripts: [
        {
          agent: 'lead',
          turns: [
            { tool_calls: [rmCall] },
            thenCheck('Guardrail denied: bash — no deleting files (rules[0])'),
          ],
        },
      ],
    };
    const { config } = parseConfig({
      models: [
        { name: 'scripted', provider: 'scripted', model: 'test', script_file: writeScript(dir, script) },
      ],
      guardrails: rmRules,
    });
    const input = buildLeadRunInput(config, { prompt: 'Clean up.', workspace });
    const taskQueue = uniqueTaskQueue('guardrails-lead');
    await withProjectWorker(taskQueue, async () => {
      const handle = await startLeadRun(testClient(), input, taskQueue);
      expect(await handle.result()).toMatchObject({ status: 'completed', final_output: 'DENIAL SEEN' });
      expect(existsSync(join(workspace, 'keep.txt'))).toBe(true);
      expect(activityNames(await handle.fetchHistory())).not.toContain('executeToolCall');
      const events = await handle.query(leadEventsQuery, 0);
      expect(events.filter((event) => event.type === 'tool_denied')).toEqual([
        expect.objectContaining({
          task_id: 'rm1',
          tool: 'bash',
          agent: 'lead',
          reason: 'no deleting files',
          policy_id: 'rules[0]',
        }),
      ]);
    });
  });

  it("keep a subagent's denied bash call from running under its own stricter policy, in the lead's event log", async () => {
    const { dir, workspace } = workspaceWithFile('guardrails-subagent');
    const script: ModelScriptFileInput = {
      scripts: [
        {
          agent: 'lead',
          turns: [
            {
              tool_calls: [
                {
                  name: 'task',
                  id: 't1',
                  args: {
                    description: 'Clean up',
                    prompt: 'Delete keep.txt.',
                    subagent_type: 'general-purpose',
                  },
                },
              ],
            },
            { content: '{{tool_result:t1}}' },
          ],
        },
        {
          agent: 'general-purpose',
          turns: [
            { tool_calls: [rmCall] },
            thenCheck(
              'Guardrail denied: bash — tool bash is not allowed (allowed_tools: ls, read_file) (allowlist)',
            ),
          ],
        },
      ],
    };
    const { config } = parseConfig({
      models: [
        { name: 'scripted', provider: 'scripted', model: 'test', script_file: writeScript(dir, script) },
      ],
      // The lead may do anything but delete; its general-purpose subagent may only look.
      guardrails: rmRules,
      subagents: {
        agents: {
          'general-purpose': {
            guardrails: { provider: { use: 'allowlist', config: { allowed_tools: ['ls', 'read_file'] } } },
          },
        },
      },
    });
    const input = buildLeadRunInput(config, { prompt: 'Clean up.', workspace });
    const taskQueue = uniqueTaskQueue('guardrails-subagent');
    await withProjectWorker(taskQueue, async () => {
      const handle = await startLeadRun(testClient(), input, taskQueue);
      expect(await handle.result()).toMatchObject({ status: 'completed' });
      const child = testClient().workflow.getHandle(`${handle.workflowId}/task/t1`);
      expect(await subagentResult(child)).toMatchObject({ status: 'completed', result: 'DENIAL SEEN' });
      expect(existsSync(join(workspace, 'keep.txt'))).toBe(true);
      expect(activityNames(await child.fetchHistory())).not.toContain('executeToolCall');
      const events = await handle.query(leadEventsQuery, 0);
      expect(events.filter((event) => event.type === 'tool_denied')).toEqual([
        expect.objectContaining({
          task_id: 't1/rm1',
          tool: 'bash',
          agent: 'general-purpose',
          policy_id: 'allowlist',
          workflow_id: child.workflowId,
        }),
      ]);
    });
  });

  it('keep a denied MCP tool call from reaching its server', async () => {
    const { dir, workspace } = workspaceWithFile('guardrails-mcp');
    const serverScript = require.resolve('../support/mcp-test-server');
    const mcpConfig = {
      mcp_servers: { local: { command: process.execPath, args: [serverScript, '--stdio'] } },
    };
    const mcp = await startWorkerMcp(parseConfig(mcpConfig).config.mcp_servers, () => undefined, {
      PATH: process.env.PATH,
    });
    if (mcp === undefined) throw new Error('the MCP test server did not start');
    try {
      const script: ModelScriptFileInput = {
        scripts: [
          {
            agent: 'lead',
            turns: [
              { tool_calls: [{ name: 'local__add', id: 'm1', args: { a: 1, b: 2 } }] },
              thenCheck('Guardrail denied: local__add — tool local__add is denied (denied_tools: local__*)'),
            ],
          },
        ],
      };
      const { config } = parseConfig({
        ...mcpConfig,
        models: [
          { name: 'scripted', provider: 'scripted', model: 'test', script_file: writeScript(dir, script) },
        ],
        guardrails: {
          enabled: true,
          provider: {
            use: 'deerflow.guardrails.builtin:AllowlistProvider',
            config: { denied_tools: ['local__*'] },
          },
        },
      });
      const input = buildLeadRunInput(config, { prompt: 'Add.', workspace });
      const taskQueue = uniqueTaskQueue('guardrails-mcp');
      await withProjectWorker(
        taskQueue,
        async () => {
          const handle = await startLeadRun(testClient(), input, taskQueue);
          expect(await handle.result()).toMatchObject({ status: 'completed', final_output: 'DENIAL SEEN' });
          expect(activityNames(await handle.fetchHistory())).not.toContain('executeMcpToolCall');
        },
        { mcpCatalog: mcp.catalog },
      );
    } finally {
      await mcp.close();
    }
  });

  it('block the call when a provider module throws and fail_closed holds', async () => {
    const { dir, workspace } = workspaceWithFile('guardrails-module');
    const module = join(dir, 'policy.js');
    writeFileSync(module, "exports.provider = { evaluate() { throw new Error('policy service down'); } };\n");
    const script: ModelScriptFileInput = {
      scripts: [
        {
          turns: [
            { tool_calls: [{ name: 'ls', id: 'l1', args: { path: '.' } }] },
            thenCheck('the guardrail provider failed (guardrail provider'),
          ],
        },
      ],
    };
    const child = subagentInput({ workspace, scriptFile: writeScript(dir, script) });
    const guardrails = {
      approval_timeout_seconds: 60,
      run: {
        provider: 'module' as const,
        module,
        export: 'provider',
        fail_closed: true,
        unattended: 'deny' as const,
      },
    };
    const input = { ...child, scope: { ...child.scope, guardrails } };
    const taskQueue = uniqueTaskQueue('guardrails-module');
    await withProjectWorker(taskQueue, async () => {
      const handle = await testClient().workflow.start(subagentWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}/task/${input.task_id}`,
        args: [input],
      });
      expect(await subagentResult(handle)).toMatchObject({ status: 'completed', result: 'DENIAL SEEN' });
      expect(activityNames(await handle.fetchHistory())).not.toContain('executeToolCall');
    });
  });

  it('deny an ask in a batch item at once: nobody is attached to approve it', async () => {
    const script: ModelScriptFileInput = {
      scripts: [
        {
          turns: [
            { tool_calls: [{ name: 'bash', id: 'b1', args: { command: 'echo hi' } }] },
            thenCheck(`Guardrail denied: bash — ${UNATTENDED_DENY_REASON} (rules[0])`),
          ],
        },
      ],
    };
    const base = scriptedBatchInput([{ key: 'only', prompt: 'Say hi.' }], {}, script);
    const guardrails = {
      approval_timeout_seconds: 3600,
      run: {
        provider: 'rules' as const,
        rules: [{ tool: 'bash', decision: 'ask' as const }],
        fail_closed: true,
        unattended: 'deny' as const,
      },
    };
    const input = { ...base, scope: { ...base.scope, guardrails } };
    const taskQueue = uniqueTaskQueue('guardrails-batch');
    await withProjectWorker(taskQueue, async () => {
      const batch = await new BatchesClient(testClient()).start(input, { taskQueue });
      expect((await batch.result()).counts).toMatchObject({ completed: 1 });
      const item = testClient().workflow.getHandle(batchItemWorkflowId(batch.batchId, 'only', 1));
      expect(await subagentResult(item)).toMatchObject({ status: 'completed', result: 'DENIAL SEEN' });
      expect(activityNames(await item.fetchHistory())).not.toContain('executeToolCall');
    });
  });
});
