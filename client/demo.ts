/**
 * The offline demo behind `npm start`: a subagent works on a copy of the sample workspace with the scripted
 * model; its steps are printed as they happen, then its result and the run's Web UI link.
 */
import { cpSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { resolveAgent } from '../contracts/agents';
import type { Config } from '../contracts/config';
import { subagentProgressQuery, subagentStepsQuery } from '../contracts/queries';
import type { SubagentStep } from '../contracts/steps';
import type { SubagentInput } from '../contracts/subagent';
import type { TemporalServer } from '../worker/temporal-server';
import { SUBAGENT_TIMEOUT_GRACE_SECONDS } from '../workflows/subagent';

/** Shipped beside the code: dist/client/demo.js → <package>/client/demo. */
export const DEMO_DIR = resolve(__dirname, '..', '..', 'client', 'demo');

export interface DemoOptions {
  server: TemporalServer;
  taskQueue: string;
  config: Config;
  out: NodeJS.WritableStream;
}

export function workflowUiUrl(server: TemporalServer, workflowId: string): string | undefined {
  if (!server.uiUrl) return undefined;
  return `${server.uiUrl}/namespaces/${encodeURIComponent(server.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

function describeStep(step: SubagentStep): string {
  if (step.kind === 'ai') {
    const calls = step.tool_calls.map((call) => `${call.name}(${call.args})`).join(', ');
    return `  [${step.seq}] model: ${step.text || '(no text)'}${calls ? `\n        calls ${calls}` : ''}`;
  }
  const first = step.text.split('\n')[0];
  return `  [${step.seq}] ${step.name}${step.is_error ? ' (error)' : ''}: ${first}${step.text.includes('\n') ? ' …' : ''}`;
}

/** Runs the demo; true when the subagent completed. */
export async function runDemo(options: DemoOptions): Promise<boolean> {
  const { server, taskQueue, config, out } = options;
  const runId = `demo-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const workspace = join(resolve(config.workspace.root), runId);
  mkdirSync(workspace, { recursive: true });
  cpSync(join(DEMO_DIR, 'workspace'), workspace, { recursive: true });

  const agent = resolveAgent(config, 'general-purpose');
  if (agent.model.provider === 'scripted' && !agent.model.script_file) {
    agent.model = { ...agent.model, script_file: join(DEMO_DIR, 'script.yaml') };
  }
  const input: SubagentInput = {
    run_id: runId,
    task_id: 'demo',
    description: 'Find items to reorder',
    prompt:
      'Read the inventory and the supplier list; list the items below their reorder level, with supplier and lead time.',
    subagent_type: agent.name,
    agent,
    loop_detection: config.loop_detection,
    workspace,
    sandbox: config.sandbox,
    depth: 1,
  };

  const connection = await Connection.connect({ address: server.address });
  try {
    const client = new Client({ connection, namespace: server.namespace });
    const workflowId = `${runId}/task/demo`;
    const handle = await client.workflow.start('subagentWorkflow', {
      taskQueue,
      workflowId,
      args: [input],
      workflowExecutionTimeout: `${agent.timeout_seconds + SUBAGENT_TIMEOUT_GRACE_SECONDS} seconds`,
    });
    out.write(`\nSubagent "${agent.name}" (${input.description}) in ${workspace}\n`);
    const link = workflowUiUrl(server, workflowId);
    if (link) out.write(`Web UI: ${link}\n`);

    let seen = 0;
    const printNew = async () => {
      for (const step of await handle.query(subagentStepsQuery, seen)) {
        out.write(`${describeStep(step)}\n`);
        seen = step.seq;
      }
    };
    const result = handle.result();
    let done = false;
    void result.finally(() => (done = true)).catch(() => undefined);
    while (!done) {
      await printNew();
      await Promise.race([result.catch(() => undefined), new Promise((r) => setTimeout(r, 250))]);
    }
    await printNew();
    const final = (await result) as Awaited<ReturnType<typeof handle.result>> & {
      status: string;
      result?: string;
    };
    const progress = await handle.query(subagentProgressQuery);
    out.write(`\nStatus: ${final.status}, ${progress.turns} turns`);
    if (progress.token_usage) out.write(`, ${progress.token_usage.total_tokens} tokens`);
    out.write(`\n\nAnswer:\n${final.result ?? '(none)'}\n`);
    if (link) out.write(`\nInspect the run in the Web UI: ${link}\n`);
    return final.status === 'completed';
  } finally {
    await connection.close();
  }
}
