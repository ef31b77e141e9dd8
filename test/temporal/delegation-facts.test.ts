/**
 * What a delegation reports about itself, end to end (issue 25): `task_started` names the model the child
 * really runs with (a custom agent's own model, `subagents.model`, else the lead's), and a provider that
 * reports no usage leaves usage absent, never 0, in `task_running`, the ledger, the terminal event and the
 * result's metadata.
 */
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { delegationMetadata } from '../../contracts/delegation-result';
import type { TaskEvent } from '../../contracts/events';
import { leadEventsQuery } from '../../contracts/lead';
import { METADATA_KEYS } from '../../contracts/status';
import type { subagentWorkflow } from '../../workflows/subagent';
import { leadInput, scriptedWorkspace } from '../support/subagent-input';
import { startLeadRun, uniqueTaskQueue, useTestClient, withProjectWorker } from '../harness/temporal';

const testClient = useTestClient();

const task = (id: string, subagentType: string) => ({
  name: 'task',
  id,
  args: { description: `Part ${id}`, prompt: `Work on part ${id}.`, subagent_type: subagentType },
});

/** No turn reports usage. A child's first turn outlasts the first progress report's wait (5 s). */
function script(): ModelScriptFileInput {
  const child = (agent: string) => ({
    agent,
    turns: [
      { content: 'Looking.', tool_calls: [{ name: 'ls', args: {} }], delay_ms: 5_500 },
      { content: `${agent} part done.` },
    ],
  });
  return {
    scripts: [
      {
        agent: 'lead',
        turns: [
          { tool_calls: [task('gp', 'general-purpose'), task('rs', 'researcher')] },
          { content: 'Combined.' },
        ],
      },
      child('general-purpose'),
      child('researcher'),
    ],
  };
}

function input(subagentsModel: string | undefined) {
  const { workspace, scriptFile } = scriptedWorkspace('delegation-facts', script());
  // The config's name for a model and the provider's model differ, so the test tells them apart.
  const model = (name: string) => ({
    name,
    provider: 'scripted',
    model: `model-${name}`,
    script_file: scriptFile,
  });
  return leadInput({
    workspace,
    config: {
      models: [model('m-lead'), model('m-sub'), model('m-custom')],
      subagents: {
        ...(subagentsModel && { model: subagentsModel }),
        custom_agents: {
          researcher: {
            description: 'Researches a part.',
            system_prompt: 'You research.',
            model: 'm-custom',
          },
        },
      },
    },
  });
}

async function run(subagentsModel: string | undefined) {
  const taskQueue = uniqueTaskQueue('delegation-facts');
  return withProjectWorker(taskQueue, async () => {
    const handle = await startLeadRun(testClient(), input(subagentsModel), taskQueue);
    const result = await handle.result();
    const events = await handle.query(leadEventsQuery, 0);
    const children = await Promise.all(
      result.ledger.map((entry) =>
        testClient()
          .workflow.getHandle<typeof subagentWorkflow>(entry.workflow_id ?? '')
          .result(),
      ),
    );
    return { result, events, children };
  });
}

const startedModels = (events: TaskEvent[]) =>
  Object.fromEntries(events.flatMap((e) => (e.type === 'task_started' ? [[e.task_id, e.model_name]] : [])));

it("task_started names the effective model: a custom agent its own, the others subagents.model, else the lead's", async () => {
  const withDefault = await run('m-sub');
  expect(withDefault.result.status).toBe('completed');
  // task_started names the configured model the child was resolved to (DeerFlow's effective model name)…
  expect(startedModels(withDefault.events)).toEqual({ gp: 'm-sub', rs: 'm-custom' });
  // …and the ledger, once the child ran, the model its provider says answered.
  expect(withDefault.result.ledger.map((e) => [e.id, e.model_name])).toEqual([
    ['gp', 'scripted/model-m-sub'],
    ['rs', 'scripted/model-m-custom'],
  ]);

  const inherited = await run(undefined);
  expect(startedModels(inherited.events)).toEqual({ gp: 'm-lead', rs: 'm-custom' });
  expect(inherited.result.ledger.map((e) => e.model_name)).toEqual([
    'scripted/model-m-lead',
    'scripted/model-m-custom',
  ]);
}, 120_000);

it('usage a provider did not report stays absent (never 0) in task_running, the ledger, the end and the metadata', async () => {
  const { result, events, children } = await run('m-sub');
  const running = events.filter((e) => e.type === 'task_running');
  // The children ran past the first report's wait: their progress was reported, without usage.
  expect(running.length).toBeGreaterThan(0);
  for (const event of running) expect(event).not.toHaveProperty('token_usage');
  for (const event of events.filter((e) => e.type === 'task_completed')) {
    expect(event).not.toHaveProperty('token_usage');
  }
  for (const entry of result.ledger) expect(entry).not.toHaveProperty('token_usage');
  for (const child of children) {
    expect(child.status).toBe('completed');
    expect(child).not.toHaveProperty('token_usage');
    expect(delegationMetadata(child)).not.toHaveProperty(METADATA_KEYS.token_usage);
  }
  // The lead's own calls reported none either: its total is absent, not 0.
  expect(result.token_usage.total).toBeUndefined();
}, 120_000);
