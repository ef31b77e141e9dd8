/**
 * Records the histories of real runs (scripted model, real dev server) as JSON fixtures under
 * test/fixtures/histories, which `test/temporal/replay.test.ts` replays against the workflow code of the day.
 * Re-record after an intended change to workflow behaviour: `npm run record:histories`.
 *
 * Workspace folders are temporary; their path is replaced by `/workspace` in the recorded payloads, so the
 * fixtures carry nothing of the machine that recorded them.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { promisify } from 'node:util';
import { admissionWorkflowId } from '../../contracts/admission';
import {
  batchItemWorkflowId,
  batchStatusQuery,
  type BatchItem,
  type BatchLimits,
} from '../../contracts/batch';
import { parseConfig } from '../../contracts/config';
import { buildBatchInput } from '../../client/batches';
import { workflowResult } from '../../client/results';
import { leadStatusQuery } from '../../contracts/lead';
import { Context } from '@temporalio/activity';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import type { RemoteActivityDeps } from '../../activities/remote';
import { SubagentsClient, type RunHandle } from '../../client/api';
import type { RemoteProgress } from '../../contracts/remote-subagent';
import type { RunSkillsSettings } from '../../contracts/run-skills';
import { startWorkerMcp } from '../../worker/mcp';
import { startCodecServer } from '../../payloads/codec-server';
import { projectCodec, projectDataConverter } from '../../payloads/data-converter';
import { resolveTemporalCli } from '../../devserver/temporal-cli';
import { connectOrStartServer } from '../../devserver/temporal-server';
import { createProjectWorker } from '../../worker/worker';
import { leadInput, subagentInput, tempDir, writeScript } from './subagent-input';
import { ADMISSION_RECORDINGS, manifestEntries, manifestText, MANIFEST_FILE } from './history-manifest';

/** What a scenario's `drive` gets: the run as it runs, on the recorder's worker. */
interface RunInFlight {
  client: Client;
  handle: WorkflowHandle;
  /** The run as the project's client API sees it (approvals, answers). */
  run: RunHandle;
}

interface Scenario {
  workflow: 'subagentWorkflow' | 'leadRunWorkflow' | 'batchWorkflow';
  /** A batch's items and limits (its agent: `general-purpose`). */
  batch?: { items: BatchItem[]; limits: Partial<BatchLimits> };
  script: ModelScriptFileInput;
  config?: Record<string, unknown>;
  agent?: string;
  /** Cancel the run once this many delegations (a batch: items) are in progress. */
  cancelWhenRunning?: number;
  /**
   * The server suggests continue-as-new past this many events (recorded on a server of its own, with the
   * first execution as `<name>.first-run.json` beside the last).
   */
  continueAsNewAfterEvents?: number;
  /** Its input's additions, built in the recording's folder (`dir`, scrubbed to `/workspace`). */
  inputExtra?: (dir: string) => Record<string, unknown>;
  /** What a person (or the world) does while the run is in flight: approve, deny, answer, cancel. */
  drive?: (inFlight: RunInFlight) => Promise<void>;
}

const ls = { name: 'ls', args: { path: '.' } };
const usage = { input_tokens: 400, output_tokens: 20 };

/** A batch of `count` items `part-<i>`, two running and four live, one attempt each, each answer `delayMs` late. */
function partsBatch(count: number, delayMs: number): Pick<Scenario, 'batch' | 'script'> {
  return {
    batch: {
      items: Array.from({ length: count }, (_, i) => ({ key: `part-${i}`, prompt: `Check part ${i}.` })),
      limits: { max_running_items: 2, max_live_items: 4, max_attempts: 1, retry_backoff_seconds: 0.2 },
    },
    script: {
      scripts: [
        {
          agent: 'general-purpose',
          repeat_last: true,
          turns: [{ content: 'Checked.', usage, delay_ms: delayMs }],
        },
      ],
    },
  };
}

const task = (id: string, subagentType = 'general-purpose') => ({
  name: 'task',
  id,
  args: { description: `Part ${id}`, prompt: `Work on part ${id}.`, subagent_type: subagentType },
});
const childAnswers = {
  agent: 'general-purpose',
  repeat_last: true,
  turns: [{ content: 'Part done.', usage }],
};

/** A lead delegating two children that list the workspace once each. */
const leadRunSlot: Scenario = {
  workflow: 'leadRunWorkflow',
  script: {
    scripts: [
      {
        agent: 'lead',
        turns: [
          { tool_calls: ['a', 'b'].map((id) => task(id)), usage },
          { content: 'Combined.', usage },
        ],
      },
      {
        ...childAnswers,
        turns: [
          { tool_calls: [{ ...ls, id: 'ls_1' }], usage },
          { content: 'Part done.', usage },
        ],
      },
    ],
  },
};

/** A lead delegating five children through the recorder's worker's three slots: two wait in the queue. */
const fiveThroughThreeSlots: Scenario = {
  workflow: 'leadRunWorkflow',
  config: { subagent_runtime: { max_running: 5 } },
  script: {
    scripts: [
      {
        agent: 'lead',
        turns: [
          { tool_calls: ['a', 'b', 'c', 'd', 'e'].map((id) => task(id)), usage },
          { content: 'Combined.', usage },
        ],
      },
      { ...childAnswers, turns: [{ content: 'Part done.', usage, delay_ms: 300 }] },
    ],
  },
};

/** A lead delegating one child whose own guardrail (an allowlist) denies its bash call. */
const subagentDenied: Scenario = {
  workflow: 'leadRunWorkflow',
  config: {
    subagents: {
      agents: {
        'general-purpose': {
          guardrails: { provider: { use: 'allowlist', config: { allowed_tools: ['ls', 'read_file'] } } },
        },
      },
    },
  },
  script: {
    scripts: [
      {
        agent: 'lead',
        turns: [
          { tool_calls: [task('a')], usage },
          { content: 'Combined.', usage },
        ],
      },
      {
        ...childAnswers,
        turns: [
          { tool_calls: [{ name: 'bash', args: { command: 'rm -f keep.txt' }, id: 'rm1' }], usage },
          { content: 'Part done.', usage },
        ],
      },
    ],
  },
};

/** Polls `predicate` until it holds (the recorder drives real runs: it waits on what they show, not on time). */
async function until(what: string, predicate: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!(await predicate().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await setTimeout(100);
  }
}

const heldCall = async ({ run }: RunInFlight) =>
  until('a call held for approval', async () => (await run.pending()).length === 1);

/** A lead whose bash calls that remove files are held for a person (a guardrail rule deciding `ask`). */
function guardedLead(extra: Record<string, unknown> = {}): Pick<Scenario, 'workflow' | 'config' | 'script'> {
  return {
    workflow: 'leadRunWorkflow',
    config: {
      guardrails: {
        enabled: true,
        rules: [{ tool: 'bash', args: { command: 'rm' }, decision: 'ask', reason: 'deletes files' }],
        ...extra,
      },
    },
    script: {
      scripts: [
        {
          agent: 'lead',
          turns: [
            { tool_calls: [{ name: 'bash', id: 'rm1', args: { command: 'rm -f scratch.txt' } }], usage },
            { content: 'Decided: {{tool_result:rm1}}', usage },
          ],
        },
      ],
    },
  };
}

const remoteCall = (tool: string, id: string, prompt: string) => ({
  name: tool,
  id,
  args: { description: `Remote ${id}`, prompt },
});

/** A lead making one call of a remote tool load, then answering with what it returned. */
function remoteLead(tool: string, prompt: string): Pick<Scenario, 'workflow' | 'config' | 'script'> {
  return {
    workflow: 'leadRunWorkflow',
    config: {
      subagent_providers: {
        team_a2a: { type: 'a2a', url: 'http://127.0.0.1:9/a2a' },
        local_acp: { type: 'acp', command: 'node', args: ['agent.mjs'], env: {} },
      },
      subagent_tools: [
        { tool_name: 'subagent_a2a', provider: 'team_a2a' },
        { tool_name: 'subagent_acp', provider: 'local_acp' },
      ],
    },
    script: {
      scripts: [
        {
          agent: 'lead',
          turns: [
            { tool_calls: [remoteCall(tool, 'r1', prompt)], usage },
            { content: 'Remote: {{tool_result:r1}}' },
          ],
        },
      ],
    },
  };
}

/** The delegations the remote doubles have been asked to run (each attempt's). */
const remoteAsked: string[] = [];

/**
 * The recorder's remote agents. A2A: the first attempt sends the prompt, heartbeats the remote task's id and then
 * falls silent as a SIGKILLed worker's attempt does; after the heartbeat timeout the next attempt finds the id in
 * its heartbeat details and re-attaches. ACP: runs until cancelled, heartbeating.
 */
const remoteDoubles: RemoteActivityDeps = {
  protocols: {
    a2a: {
      probe: () => Promise.resolve({ available: true }),
      async run(input) {
        remoteAsked.push(input.delegation_id);
        const activity = Context.current();
        const progress = activity.info.heartbeatDetails as RemoteProgress | undefined;
        if (progress?.remote_task_id) {
          return {
            end: 'completed',
            text: 'Rows counted: 42.',
            remote_task_id: progress.remote_task_id,
            context_id: progress.context_id,
            resumed: 'reattached',
            messages: [],
          };
        }
        activity.heartbeat({
          remote_task_id: 'a2a-task-1',
          context_id: 'a2a-ctx-1',
          prompt_sent: true,
          updates: 0,
        });
        // Silent past the heartbeat timeout: the server gives up on this attempt, whose late end it refuses.
        await setTimeout(REMOTE_SILENCE_MS);
        throw new Error('this attempt was given up for dead');
      },
    },
    acp: {
      probe: () => Promise.resolve({ available: true }),
      async run(input) {
        remoteAsked.push(input.delegation_id);
        const activity = Context.current();
        for (;;) {
          activity.heartbeat({ session_id: 'acp-session-1', prompt_sent: true, updates: 0 });
          await activity.sleep(200);
        }
      },
    },
  },
};
/** Longer than the remote activity's 5 s heartbeat timeout. */
const REMOTE_SILENCE_MS = 8_000;

const skillFile = (name: string, description: string, extra = '') =>
  `---\nname: ${name}\ndescription: ${description}\n${extra}---\n# ${name}\n\nFollow these steps.\n`;

/** A skills folder in the recording's folder: `a` allows read_file only. */
function skillsIn(dir: string): RunSkillsSettings {
  const root = join(dir, 'skills');
  mkdirSync(join(root, 'public', 'a'), { recursive: true });
  writeFileSync(
    join(root, 'public', 'a', 'SKILL.md'),
    skillFile('a', 'Public a skill.', 'allowed-tools: [read_file]\n'),
  );
  return { root, container_path: '/mnt/skills', deferred_discovery: false };
}

const mcpServers = { local: { command: 'node', args: [require.resolve('./mcp-test-server'), '--stdio'] } };

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
  // A response stopped for safety with a tool call: the call is dropped unrun, the subagent fails (issue 42).
  'subagent-safety-stopped': {
    workflow: 'subagentWorkflow',
    script: {
      scripts: [
        {
          turns: [
            {
              content: 'Cleaning up.',
              tool_calls: [{ name: 'bash', args: { command: 'echo ran > ran.txt' } }],
              finish_reason: 'content_filter',
              usage,
            },
          ],
        },
      ],
    },
  },
  'lead-concurrency-capped': {
    workflow: 'leadRunWorkflow',
    config: { subagent_runtime: { max_running: 3 } },
    script: {
      scripts: [
        {
          agent: 'lead',
          turns: [
            { tool_calls: ['a', 'b', 'c', 'd', 'e'].map((id) => task(id)), usage },
            { content: 'Combined.', usage },
          ],
        },
        childAnswers,
      ],
    },
  },
  // Five children through the recorder's worker's three slots: two wait in the admission queue.
  'lead-admission-queued': fiveThroughThreeSlots,
  // The same five children once the admission workflow batches its answers: recorded with it
  // (admission-workflow-batched.json), two of them queued, granted as the first three give their slots back.
  'admission-batched': fiveThroughThreeSlots,
  // A lead that takes its slot in the lead-run pool first (lead_runtime) and delegates two built-in-tool
  // children, which send the model their tools by name and report progress only after 5 s.
  'lead-run-slot': leadRunSlot,
  // The same run where the inputs say that each workflow asks for its slot (`asks_slot`): no patch check, so
  // no patch marker and no search attribute update in the lead or its children.
  'lead-slot-from-input': leadRunSlot,
  // The same run with its slot granted from the worker's lease of the runs' pool (activities/admission-lease.ts):
  // the lead's local activity returns the grant, no answer comes by signal.
  'lead-leased': leadRunSlot,
  // Recorded before a subagent's denial was told to its parent (`.before-notice`), and after: its signal.
  'lead-subagent-denied': subagentDenied,
  // A lead that starts a durable batch (`batch_task`, three inline items), waits for it with `batch_status`,
  // reads its answers and answers itself.
  'lead-batch': {
    workflow: 'leadRunWorkflow',
    config: { subagents: { batch: { enabled: true, max_running_items: 2, max_live_items: 2 } } },
    script: {
      scripts: [
        {
          agent: 'lead',
          turns: [
            {
              tool_calls: [
                {
                  name: 'batch_task',
                  id: 'b1',
                  args: {
                    description: 'Check parts',
                    subagent_type: 'general-purpose',
                    items: ['p1', 'p2', 'p3'].map((key) => ({ key, prompt: `Check ${key}.` })),
                  },
                },
              ],
              usage,
            },
            { tool_calls: [{ name: 'batch_status', args: { batch_id: 'b1', wait_seconds: 120 } }], usage },
            { tool_calls: [{ name: 'read_batch_result', args: { batch_id: 'b1' } }], usage },
            { content: 'All parts checked.', usage },
          ],
        },
        childAnswers,
      ],
    },
  },
  // A batch of four items, two at a time: one fails its first attempt (it leaves a marker, then the model
  // errs) and passes its second, one is checked against acceptance criteria (an activity), all complete.
  'batch-retried': {
    workflow: 'batchWorkflow',
    batch: {
      items: [
        { key: 'flaky', prompt: 'Check the flaky part.' },
        { key: 'checked', prompt: 'Check the checked part.', acceptance_criteria: ['contains: Checked'] },
        { key: 'plain-1', prompt: 'Check part one.' },
        { key: 'plain-2', prompt: 'Check part two.' },
      ],
      limits: { max_running_items: 2, max_live_items: 3, max_attempts: 2, retry_backoff_seconds: 0.2 },
    },
    script: {
      scripts: [
        {
          agent: 'general-purpose',
          prompt_contains: 'flaky',
          turns: [
            { tool_calls: [{ name: 'read_file', args: { path: 'marker.txt' }, id: 'r1' }], usage },
            {
              content: 'Checked after a retry.',
              usage,
              if_missing: {
                text: 'SECOND',
                turn: {
                  tool_calls: [{ name: 'write_file', args: { path: 'marker.txt', content: 'SECOND' } }],
                },
              },
            },
            { error: { status: 400, message: 'the first attempt fails' } },
          ],
        },
        { agent: 'general-purpose', repeat_last: true, turns: [{ content: 'Checked.', usage }] },
      ],
    },
  },
  'lead-limit-capped': {
    workflow: 'leadRunWorkflow',
    script: {
      scripts: [
        {
          agent: 'lead',
          turns: [1, 2, 3].map((n) => ({
            content: `Batch ${n}.`,
            tool_calls: [1, 2, 3].map((k) => task(`t${n}${k}`)),
          })),
        },
        childAnswers,
      ],
    },
  },
  'lead-nested-depth': {
    workflow: 'leadRunWorkflow',
    config: {
      subagents: {
        max_depth: 2,
        custom_agents: {
          coordinator: {
            description: 'Delegates parts.',
            system_prompt: 'You coordinate.',
            tools: { allow: ['task', 'ls'] },
          },
        },
      },
    },
    script: {
      scripts: [
        { agent: 'lead', turns: [{ tool_calls: [task('lvl1', 'coordinator')] }, { content: 'Lead done.' }] },
        {
          agent: 'coordinator',
          prompt_contains: 'part lvl1',
          turns: [{ tool_calls: [task('lvl2', 'coordinator')] }, { content: 'One.' }],
        },
        {
          agent: 'coordinator',
          prompt_contains: 'part lvl2',
          turns: [{ tool_calls: [task('lvl3')] }, { content: 'Two.' }],
        },
        childAnswers,
      ],
    },
  },
  'lead-fork': {
    workflow: 'leadRunWorkflow',
    config: { subagents: { provider: 'fork' } },
    script: {
      scripts: [
        {
          agent: 'lead',
          turns: [
            { content: 'Looking first.', tool_calls: [ls], usage },
            { tool_calls: [task('f1'), task('f2')], usage },
            { content: 'Both forks reported.', usage },
          ],
        },
        childAnswers,
      ],
    },
  },
  'lead-cancelled': {
    workflow: 'leadRunWorkflow',
    cancelWhenRunning: 2,
    script: {
      scripts: [
        { agent: 'lead', turns: [{ tool_calls: [task('slow1'), task('slow2')] }, { content: 'never' }] },
        { agent: 'general-purpose', turns: [{ content: 'never', delay_ms: 120_000 }] },
      ],
    },
  },
  // Children that end Canceled (honest-close): the lead reads each one's result from its memo.
  'lead-cancelled-memo': {
    workflow: 'leadRunWorkflow',
    cancelWhenRunning: 2,
    script: {
      scripts: [
        {
          agent: 'lead',
          turns: [{ tool_calls: [task('slow1'), task('slow2')], usage }, { content: 'never' }],
        },
        {
          agent: 'general-purpose',
          turns: [
            { content: 'Half of it.', tool_calls: [ls], usage },
            { content: 'never', delay_ms: 120_000 },
          ],
        },
      ],
    },
  },
  'subagent-compacted': {
    workflow: 'subagentWorkflow',
    config: { summarization: { enabled: true, trigger_tokens: 1000, keep_messages: 2 } },
    script: {
      scripts: [
        {
          agent: 'general-purpose/summarizer',
          repeat_last: true,
          turns: [{ content: 'Listed the folder.' }],
        },
        {
          turns: [
            ...[1, 2, 3, 4].map((k) => ({
              content: `Look ${k}.`,
              tool_calls: [{ name: 'ls', args: { path: `d${k}` } }],
              usage: { input_tokens: 600 * k, output_tokens: 20 },
            })),
            { content: 'Done after a summary.', usage },
          ],
        },
      ],
    },
  },
  'subagent-continued': {
    workflow: 'subagentWorkflow',
    continueAsNewAfterEvents: 40,
    config: { loop_detection: { enabled: false } },
    script: {
      scripts: [
        {
          turns: [
            ...Array.from({ length: 12 }, (_, k) => ({
              content: `Step ${k}.`,
              tool_calls: [{ name: 'ls', args: { path: `d${k}` } }],
              usage,
            })),
            { content: 'Done across executions.', usage },
          ],
        },
      ],
    },
  },
  'lead-timed-out': {
    workflow: 'leadRunWorkflow',
    config: { lead: { timeout_seconds: 2 }, loop_detection: { enabled: false } },
    script: {
      scripts: [
        {
          agent: 'lead',
          repeat_last: true,
          turns: [{ content: 'Still looking.', tool_calls: [ls], usage, delay_ms: 600 }],
        },
      ],
    },
  },
  // A batch of eight items past a low history bound: each execution drains (slots asked for or granted go back,
  // the attempts running finish) and continues as new, carrying its items' records (`.first-run.json`).
  'batch-continued': { workflow: 'batchWorkflow', ...partsBatch(8, 200), continueAsNewAfterEvents: 60 },
  // A batch cancelled while two of its items run: they end cancelled, the slots waiting go back, the rest never
  // run, and the batch ends Canceled.
  'batch-cancelled': { workflow: 'batchWorkflow', ...partsBatch(6, 3000), cancelWhenRunning: 2 },
  'subagent-retried-429': {
    workflow: 'subagentWorkflow',
    script: {
      scripts: [{ turns: [{ content: 'ok', fail_attempts: [{ status: 429, message: 'slow down' }] }] }],
    },
  },
  // A bash call held for a person (a guardrail rule deciding `ask`), approved: it runs.
  'lead-approval-approved': {
    ...guardedLead(),
    drive: async (inFlight) => {
      await heldCall(inFlight);
      await inFlight.run.approve('a1', 'scratch only');
    },
  },
  // The same call denied with a reason, which the model reads as the call's result.
  'lead-approval-denied': {
    ...guardedLead(),
    drive: async (inFlight) => {
      await heldCall(inFlight);
      await inFlight.run.deny('a1', 'not today');
    },
  },
  // The same call left undecided: the approval times out, a denial.
  'lead-approval-timed-out': guardedLead({ approval_timeout_seconds: 2 }),
  // A lead's question (`ask_clarification`) answered by a person: the run goes on with the answer.
  'lead-clarification-answered': {
    workflow: 'leadRunWorkflow',
    config: { clarification: { timeout_seconds: 600 } },
    script: {
      scripts: [
        {
          agent: 'lead',
          turns: [
            {
              tool_calls: [
                {
                  name: 'ask_clarification',
                  id: 'ask1',
                  args: {
                    question: 'Which region?',
                    clarification_type: 'missing_info',
                    options: ['EU', 'US'],
                  },
                },
              ],
              usage,
            },
            { content: 'Region: {{tool_result:ask1}}', usage },
          ],
        },
      ],
    },
    drive: async ({ handle, run }) => {
      await until('the question', async () =>
        ((await handle.query(leadStatusQuery)).questions ?? []).some((q) => q.ref === 'q1'),
      );
      await run.answer('EU only', { question: 'q1' });
    },
  },
  // An A2A delegation whose worker stopped while the remote task held: the next attempt re-attached to it.
  'lead-a2a-reattached': remoteLead('subagent_a2a', 'Count the rows.'),
  // An ACP delegation cancelled with its lead while the remote agent works.
  'lead-acp-cancelled': {
    ...remoteLead('subagent_acp', 'A long task.'),
    drive: async ({ handle }) => {
      await until('the remote run', () =>
        Promise.resolve(remoteAsked.includes(`${handle.workflowId}/task/r1`)),
      );
      await handle.cancel();
    },
  },
  // A lead delegating through a tool load (`subagent_tools`) as well as `task`.
  'lead-tool-loads': {
    workflow: 'leadRunWorkflow',
    config: { subagent_tools: [{ tool_name: 'subagent_helper', provider: 'spawn' }] },
    script: {
      scripts: [
        {
          agent: 'lead',
          turns: [
            {
              tool_calls: [
                {
                  name: 'subagent_helper',
                  id: 'h1',
                  args: { description: 'Helper part', prompt: 'Look around.' },
                },
              ],
              usage,
            },
            { content: 'Lead: {{tool_result:h1}}', usage },
          ],
        },
        { agent: 'subagent_helper', turns: [{ content: 'Helper looked.', usage }] },
      ],
    },
  },
  // Deferred MCP tools: `tool_search` promotes one, whose call then runs; a child delegated after it starts
  // with nothing promoted.
  'lead-mcp-promoted': {
    workflow: 'leadRunWorkflow',
    config: { mcp_servers: mcpServers, tool_search: { enabled: true } },
    script: {
      scripts: [
        {
          agent: 'lead',
          turns: [
            { tool_calls: [{ name: 'tool_search', id: 's1', args: { query: 'select:local__add' } }], usage },
            { tool_calls: [{ name: 'local__add', id: 'a1', args: { a: 2, b: 3 } }], usage },
            { content: 'Sum: {{tool_result:a1}}', usage },
          ],
        },
      ],
    },
  },
  // A subagent that reads skill `a` (read_file only) and is refused bash, in its first execution and again
  // in the next, after continue-as-new: the active skill travels with the carried state.
  'subagent-skill-continued': {
    workflow: 'subagentWorkflow',
    continueAsNewAfterEvents: 40,
    config: { loop_detection: { enabled: false } },
    inputExtra: (dir) => ({ user_id: 'bob', skills: skillsIn(dir) }),
    script: {
      scripts: [
        {
          turns: [
            { tool_calls: [{ name: 'read_file', args: { path: '/mnt/skills/public/a/SKILL.md' } }], usage },
            { tool_calls: [{ name: 'bash', args: { command: 'echo first > ran.txt' } }], usage },
            ...Array.from({ length: 10 }, (_, k) => ({
              content: `Step ${k}.`,
              tool_calls: [{ name: 'read_file', args: { path: `d${k}.txt` } }],
              usage,
            })),
            { tool_calls: [{ name: 'bash', args: { command: 'echo second > ran.txt' } }], usage },
            { content: 'Done across executions.', usage },
          ],
        },
      ],
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
  const cli = (await resolveTemporalCli()).cli?.path;
  if (!cli) throw new Error('recording needs the Temporal CLI: run `npm run temporal:ensure` first');
  // RECORD_ONLY=a,b records those scenarios (and those of the admission recordings named there) and keeps every
  // other fixture (and its index entry) as it is: a committed recording changes only when named.
  const only = process.env.RECORD_ONLY?.split(',').filter(Boolean);
  const selected = Object.entries(SCENARIOS).filter(([name]) => !only || only.includes(name));
  const unknown = (only ?? []).filter((name) => !(name in SCENARIOS) && !(name in ADMISSION_RECORDINGS));
  if (unknown.length > 0) throw new Error(`RECORD_ONLY: no such scenarios: ${unknown.join(', ')}`);
  const suggestAt = new Set(selected.map(([, scenario]) => scenario.continueAsNewAfterEvents));
  if (suggestAt.size > 1) {
    throw new Error('scenarios with different continueAsNewAfterEvents need runs of their own (RECORD_ONLY)');
  }
  const [continueAfter] = suggestAt;
  const server = await connectOrStartServer({
    headless: true,
    ...(continueAfter !== undefined && {
      dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': continueAfter },
    }),
  });
  const connection = await Connection.connect({ address: server.address });
  const native = await NativeConnection.connect({ address: server.address });
  // The export decodes claim-checked payloads through it, so the fixtures need no payload store to replay.
  const codec = await startCodecServer({ codec: projectCodec() });
  const mcpConfig = selected.find(([, scenario]) => scenario.config?.mcp_servers)?.[1].config;
  const mcp =
    mcpConfig &&
    (await startWorkerMcp(parseConfig(mcpConfig).config.mcp_servers, () => undefined, {
      PATH: process.env.PATH,
    }));
  try {
    const client = new Client({
      connection,
      namespace: server.namespace,
      identity: IDENTITY,
      dataConverter: projectDataConverter(),
    });
    const taskQueue = 'record-histories';
    const worker = await createProjectWorker({
      connection: native,
      namespace: server.namespace,
      taskQueue,
      tuning: { identity: IDENTITY },
      remote: remoteDoubles,
      ...(mcp && { mcpCatalog: mcp.catalog }),
    });
    mkdirSync(histories, { recursive: true });
    // Replay must run under the recorded workflow id: children's ids derive from it.
    // Every recording already listed stays listed (a scenario recorded again replaces its own entries): older
    // recordings, such as the admission workflow's from before its answers were batched, keep replaying.
    const indexFile = join(histories, 'index.json');
    const index: Record<string, string> = existsSync(indexFile)
      ? (JSON.parse(readFileSync(indexFile, 'utf8')) as Record<string, string>)
      : {};
    const manifestFile = join(histories, MANIFEST_FILE);
    const manifest = existsSync(manifestFile) ? manifestEntries(readFileSync(manifestFile, 'utf8')) : {};
    const write = (file: string, text: string) => {
      writeFileSync(join(histories, file), text);
      manifest[file] = createHash('sha256').update(text).digest('hex');
    };
    await worker.runUntil(async () => {
      for (const [name, scenario] of selected) {
        const dir = tempDir(`record-${name}`);
        const workspace = join(dir, 'workspace');
        mkdirSync(workspace);
        const scriptFile = writeScript(dir, scenario.script);
        const { config, agent } = scenario;
        const lead = scenario.workflow === 'leadRunWorkflow';
        const batch = scenario.workflow === 'batchWorkflow';
        const input = scenario.batch
          ? buildBatchInput(
              parseConfig({
                models: [{ name: 'scripted', provider: 'scripted', model: 'test', script_file: scriptFile }],
                ...config,
              }).config,
              { description: name, subagent_type: 'general-purpose', workspace, ...scenario.batch },
            )
          : lead
            ? { ...leadInput({ workspace, config, scriptFile }), ...scenario.inputExtra?.(dir) }
            : { ...subagentInput({ workspace, agent, config, scriptFile }), ...scenario.inputExtra?.(dir) };
        const workflowId = lead || batch ? `replay-${name}` : `replay-${name}/task/call_1`;
        const handle = await client.workflow.start(scenario.workflow, {
          taskQueue,
          workflowId,
          args: [input],
        });
        if (scenario.drive) {
          const run = new SubagentsClient(client, server.namespace).getRun(workflowId);
          await scenario.drive({ client, handle, run });
        }
        if (scenario.cancelWhenRunning !== undefined) {
          const running = scenario.cancelWhenRunning;
          const inProgress = async () =>
            batch
              ? (await handle.query(batchStatusQuery)).counts.running
              : (await handle.query(leadStatusQuery)).counts.in_progress;
          while ((await inProgress()) < running) await setTimeout(100);
          await handle.cancel();
        }
        // However it closed: a cancelled run ends Canceled, its result in its memo.
        const result = (await workflowResult(handle)) as {
          status: string;
          stop_reason?: string;
          ledger?: { workflow_id: string }[];
        };
        // A lead's first child too: a subagent as a lead starts it (fork seeding, progress reports, nesting).
        const recordings: [file: string, workflowId: string, runId?: string][] = [
          [`${name}.json`, workflowId],
        ];
        const firstChild =
          result.ledger?.[0]?.workflow_id ??
          (scenario.batch && batchItemWorkflowId(workflowId, scenario.batch.items[0].key, 1));
        if (firstChild) recordings.push([`${name}.first-child.json`, firstChild]);
        if (scenario.continueAsNewAfterEvents !== undefined) {
          recordings.push([`${name}.first-run.json`, workflowId, handle.firstExecutionRunId]);
        }
        for (const [file, id, runId] of recordings) {
          // The CLI's export is the JSON the Web UI downloads too, the form `historyFromJSON` reads.
          // Asynchronously: the codec endpoint it calls runs in this process.
          const { stdout: exported } = await promisify(execFile)(
            cli,
            [
              'workflow',
              'show',
              '--workflow-id',
              id,
              ...(runId ? ['--run-id', runId] : []),
              '--address',
              server.address,
              '--codec-endpoint',
              codec.url,
              '--output',
              'json',
            ],
            { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
          );
          const replacements: [string, string][] = [
            [dir, '/workspace'],
            [PROJECT_ROOT, '/project'],
            [hostname(), 'recorder'],
          ];
          write(file, scrub(exported, replacements));
          index[file] = id;
        }
        process.stdout.write(
          `${name}: ${JSON.stringify({ status: result.status, stop_reason: result.stop_reason })}\n`,
        );
      }
      // The task queue's admission workflows, as every recorded delegation left them (they are still running):
      // recorded with every scenario, or when RECORD_ONLY names them.
      const admissions = Object.entries(ADMISSION_RECORDINGS)
        .filter(([name]) => !only || only.includes(name))
        .map(([name, pool]) => [`${name}.json`, admissionWorkflowId(taskQueue, pool)] as const);
      for (const [file, admission] of admissions) {
        const { stdout: exported } = await promisify(execFile)(
          cli,
          ['workflow', 'show', '--workflow-id', admission, '--address', server.address, '--output', 'json'],
          { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
        );
        write(file, scrub(exported, [[hostname(), 'recorder']]));
        index[file] = admission;
      }
    });
    write('index.json', `${JSON.stringify(index, null, 2)}\n`);
    writeFileSync(manifestFile, manifestText(manifest));
  } finally {
    await mcp?.close();
    await native.close();
    await connection.close();
    await server.stop();
    await codec.close();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
