/**
 * Skills reaching the agents, against the real server with the scripted model: a subagent limited to
 * `skills: [a]` is shown `a` alone; a user's custom skill shadows the public one for that user only; after
 * reading a skill whose allowed-tools is [read_file], bash is refused — and the refusal survives a SIGKILLed
 * worker and a replay; bash is handed a secret only once the skill that declares it is active.
 *
 * A scripted model cannot show its prompt, so the scripts ask it: `if_missing` answers otherwise when no
 * message sent (the system message with its skills block included) holds a text.
 */
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { temporal } from '@temporalio/proto';
import { subagentResult } from '../../client/api';
import { parseConfig } from '../../contracts/config';
import { buildLeadRunInput } from '../../contracts/config/lead-input';
import { subagentStepsQuery } from '../../contracts/queries';
import type { RunSkillsSettings } from '../../contracts/run-skills';
import type { SealedSecret } from '../../contracts/secrets';
import type { SubagentStep } from '../../contracts/steps';
import type { SubagentInput, SubagentResult } from '../../contracts/subagent';
import type { RunScope } from '../../contracts/run-scope';
import type { ToolCallInput } from '../../contracts/tools';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { subagentWorkflow } from '../../workflows/subagent';
import {
  startLeadRun,
  startProjectWorkerProcess,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
  withProjectWorker,
} from '../harness/temporal';
import { subagentInput, tempDir, writeScript } from '../support/subagent-input';

const testClient = useTestClient();

type IHistory = temporal.api.history.v1.IHistory;

const skillFile = (name: string, description: string, extra = '') =>
  `---\nname: ${name}\ndescription: ${description}\n${extra}---\n# ${name}\n\nFollow these steps.\n`;

/** public/a (read_file only), public/b, public/c (bash, needs C_TOKEN), and alice's own a. */
function skillsFolder(): string {
  const root = join(tempDir('skills'), 'skills');
  const files: Record<string, string> = {
    'public/a/SKILL.md': skillFile('a', 'Public a skill.', 'allowed-tools: [read_file]\n'),
    'public/b/SKILL.md': skillFile('b', 'Public b skill.'),
    'public/c/SKILL.md': skillFile(
      'c',
      'Public c skill.',
      'allowed-tools: [bash, read_file]\nrequired-secrets: [C_TOKEN]\n',
    ),
    'users/alice/custom/alice-a/SKILL.md': skillFile('a', 'Alice own a skill.'),
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const root = skillsFolder();

function settings(agents?: Record<string, string[]>): RunSkillsSettings {
  return {
    root,
    container_path: '/mnt/skills',
    deferred_discovery: false,
    ...(agents && { agents }),
  };
}

/** A subagent of `user` over `script`, with the run's skills (and `secrets`). */
function skilledSubagent(
  script: ModelScriptFileInput,
  user: string,
  extra: Partial<RunScope> = {},
): SubagentInput {
  const dir = tempDir('skills-subagent');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const input = subagentInput({ workspace, scriptFile: writeScript(dir, script) });
  return { ...input, scope: { ...input.scope, user_id: user, skills: settings(), ...extra } };
}

async function runSubagent(
  input: SubagentInput,
): Promise<{ result: SubagentResult; steps: SubagentStep[]; history: IHistory }> {
  const taskQueue = uniqueTaskQueue('skills');
  return withProjectWorker(taskQueue, async () => {
    const handle = await testClient().workflow.start(subagentWorkflow, {
      taskQueue,
      workflowId: `${taskQueue}/task/${input.task_id}`,
      args: [input],
    });
    const result = await subagentResult(handle);
    return { result, steps: await handle.query(subagentStepsQuery, 0), history: await handle.fetchHistory() };
  });
}

/** The inputs of the history's `executeToolCall` activities, decoded as the client's converter does. */
async function toolInputs(history: IHistory): Promise<ToolCallInput[]> {
  const { payloadCodecs, payloadConverter } = testClient().options.loadedDataConverter;
  const inputs: ToolCallInput[] = [];
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name !== 'executeToolCall') continue;
    let payloads = scheduled.input?.payloads ?? [];
    for (const codec of [...payloadCodecs].reverse()) payloads = await codec.decode(payloads);
    inputs.push(payloadConverter.fromPayload<ToolCallInput>(payloads[0]));
  }
  return inputs;
}

/** The history's `loadRunSkills` markers (local activities). */
function snapshotMarkers(history: IHistory): number {
  return (history.events ?? []).filter((event) =>
    Object.values(event.markerRecordedEventAttributes?.details ?? {}).some((details) =>
      (details.payloads ?? []).some((payload) =>
        Buffer.from(payload.data ?? [])
          .toString('utf8')
          .includes('loadRunSkills'),
      ),
    ),
  ).length;
}

const readSkill = (folder: string) => ({
  name: 'read_file',
  args: { path: `/mnt/skills/public/${folder}/SKILL.md` },
});

describe('skills in a run', () => {
  it('shows a subagent limited to skills [a] only a, its lead every skill, and hands on the user', async () => {
    const dir = tempDir('skills-lead');
    const workspace = join(dir, 'workspace');
    mkdirSync(workspace);
    const script: ModelScriptFileInput = {
      scripts: [
        {
          agent: 'lead',
          turns: [
            {
              tool_calls: [
                {
                  name: 'task',
                  id: 'only-a',
                  args: { description: 'Use skill a', prompt: 'Check a.', subagent_type: 'general-purpose' },
                },
              ],
              if_missing: { text: '<name>b</name>', turn: { content: 'LEAD MISSED B' } },
            },
            { content: 'Combined.' },
          ],
        },
        {
          agent: 'general-purpose',
          turns: [
            {
              tool_calls: [{ name: 'ls', args: { path: '.' } }],
              if_missing: {
                text: '<location>/mnt/skills/custom/alice-a/SKILL.md</location>',
                turn: { content: 'ALICE A MISSING' },
              },
            },
            { content: 'B SEEN', if_missing: { text: '<name>b</name>', turn: { content: 'ONLY A' } } },
          ],
        },
      ],
    };
    const { config } = parseConfig({
      models: [
        { name: 'scripted', provider: 'scripted', model: 'test', script_file: writeScript(dir, script) },
      ],
      lead: { user_id: 'alice' },
      subagents: { agents: { 'general-purpose': { skills: ['a'] } } },
    });
    const input = buildLeadRunInput(config, { prompt: 'Do the work.', workspace, skills_root: root });
    const taskQueue = uniqueTaskQueue('skills-lead');
    await withProjectWorker(taskQueue, async () => {
      const handle = await startLeadRun(testClient(), input, taskQueue);
      const result = await handle.result();
      expect(result).toMatchObject({ status: 'completed', final_output: 'Combined.' });
      const child = testClient().workflow.getHandle(`${handle.workflowId}/task/only-a`);
      expect(await subagentResult(child)).toMatchObject({ status: 'completed', result: 'ONLY A' });
    });
  });

  it('gives alice her own a in place of the public one, and bob the public one', async () => {
    // Each case answers otherwise: alice's a, the public a, or no a at all. One `if_missing` a turn: a run that
    // is not shown alice's a lists the workspace first, then answers by whether it was shown the public a.
    const script: ModelScriptFileInput = {
      scripts: [
        {
          turns: [
            {
              content: 'ALICE A',
              if_missing: {
                text: 'Alice own a skill.',
                turn: { tool_calls: [{ name: 'ls', args: { path: '.' } }] },
              },
            },
            {
              content: 'PUBLIC A',
              if_missing: { text: 'Public a skill.', turn: { content: 'NO PUBLIC A' } },
            },
          ],
        },
      ],
    };
    const alice = await runSubagent(skilledSubagent(script, 'alice'));
    expect(alice.result).toMatchObject({ status: 'completed', result: 'ALICE A' });
    const bob = await runSubagent(skilledSubagent(script, 'bob'));
    expect(bob.result).toMatchObject({ status: 'completed', result: 'PUBLIC A' });
    // One snapshot per execution, a local activity: one marker in history.
    expect(snapshotMarkers(bob.history)).toBe(1);
    // A run without skills takes none.
    const skilled = skilledSubagent(script, 'bob');
    const { skills: _none, ...unskilled } = skilled.scope;
    const plain = await runSubagent({ ...skilled, scope: unskilled });
    expect(plain.result).toMatchObject({ status: 'completed', result: 'NO PUBLIC A' });
    expect(snapshotMarkers(plain.history)).toBe(0);
  });

  it('refuses bash once a skill allowing only read_file is read, across a SIGKILLed worker and a replay', async () => {
    const input = skilledSubagent(
      {
        scripts: [
          {
            turns: [
              { tool_calls: [readSkill('a')] },
              { tool_calls: [{ name: 'bash', args: { command: 'echo ran > ran.txt' } }] },
              // The worker is killed while this turn's model call waits.
              { content: 'Done.', delay_ms: 4000 },
            ],
          },
        ],
      },
      'bob',
    );
    const refusal = 'Tool bash is not allowed while skill a is active (allowed-tools: read_file)';
    const taskQueue = uniqueTaskQueue('skills-kill');
    const workers: ChildProcess[] = [await startProjectWorkerProcess(taskQueue)];
    try {
      const handle = await testClient().workflow.start(subagentWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}/task/${input.task_id}`,
        args: [input],
      });
      await waitFor('the bash refusal', async () =>
        (await handle.query(subagentStepsQuery, 0)).some(
          (step) => step.kind === 'tool' && step.name === 'bash',
        ),
      );
      workers[0].kill('SIGKILL');
      await once(workers[0], 'exit');
      workers.push(await startProjectWorkerProcess(taskQueue));

      const result = await subagentResult(handle);
      expect(result).toMatchObject({ status: 'completed', result: 'Done.' });
      // Read from the new worker: the steps are rebuilt by replaying the history.
      const steps = await handle.query(subagentStepsQuery, 0);
      const read = steps.find((step) => step.kind === 'tool' && step.name === 'read_file');
      expect(read).toMatchObject({ activated_skill: 'a' });
      const bash = steps.find((step) => step.kind === 'tool' && step.name === 'bash');
      expect(bash).toMatchObject({ text: refusal, is_error: true });

      const history = await handle.fetchHistory();
      // Refused, never run: no bash activity in history.
      expect((await toolInputs(history)).filter((tool) => tool.call.name === 'bash')).toEqual([]);
    } finally {
      for (const worker of workers) worker.kill('SIGKILL');
    }
  });

  it('hands bash the secrets of an active skill only, and mounts the skills in every built-in call', async () => {
    const sealed = (name: string): SealedSecret => ({ name, key_id: 'test-key', sealed: 'AAAA' });
    const input = skilledSubagent(
      {
        scripts: [
          {
            turns: [
              { tool_calls: [{ name: 'bash', args: { command: 'echo before' } }] },
              { tool_calls: [readSkill('c')] },
              { tool_calls: [{ name: 'bash', args: { command: 'echo after' } }] },
              { content: 'Done.' },
            ],
          },
        ],
      },
      'bob',
      { secrets: [sealed('C_TOKEN'), sealed('OTHER_TOKEN')] },
    );
    const { result, history } = await runSubagent(input);
    expect(result).toMatchObject({ status: 'completed', result: 'Done.' });
    const bash = (await toolInputs(history)).filter((tool) => tool.call.name === 'bash');
    expect(bash.map((tool) => JSON.parse(tool.call.args) as unknown)).toEqual([
      { command: 'echo before' },
      { command: 'echo after' },
    ]);
    expect(bash[0].secrets).toBeUndefined();
    expect(bash[1].secrets).toEqual([sealed('C_TOKEN')]);
    for (const tool of bash) {
      expect(tool.skill_mounts).toEqual([
        { container_path: '/mnt/skills/public', host_path: join(root, 'public') },
      ]);
    }
  });
  it('lists names only with deferred discovery, and answers describe_skill in the workflow', async () => {
    const input = skilledSubagent(
      {
        scripts: [
          {
            turns: [
              {
                tool_calls: [{ name: 'describe_skill', args: { query: 'a' } }],
                if_missing: {
                  text: '<skill_index>\n- a\n- b\n- c\n</skill_index>',
                  turn: { content: 'NO INDEX' },
                },
              },
              {
                content: 'DESCRIPTIONS IN PROMPT',
                if_missing: { text: 'Public b skill.', turn: { content: 'NAMES ONLY' } },
              },
            ],
          },
        ],
      },
      'bob',
    );
    const { result, steps, history } = await runSubagent({
      ...input,
      scope: { ...input.scope, skills: { ...settings(), deferred_discovery: true } },
    });
    expect(result).toMatchObject({ status: 'completed', result: 'NAMES ONLY' });
    const described = steps.find((step) => step.kind === 'tool' && step.name === 'describe_skill');
    expect(described).toMatchObject({
      is_error: false,
      text: [
        'name: a',
        'description: Public a skill.',
        'read it at: /mnt/skills/public/a/SKILL.md',
        'allowed-tools: read_file',
      ].join('\n'),
    });
    expect(await toolInputs(history)).toEqual([]);
  });
  it('keeps the snapshot and the active skills a continued execution carries, and reads no catalog', async () => {
    const carried = {
      name: 'carried-only',
      description: 'A skill only the carry knows.',
      category: 'public' as const,
      container_path: '/mnt/skills/public/carried-only/SKILL.md',
      content_hash: 'sha256:carried',
      allowed_tools: ['read_file'],
      required_secrets: [],
    };
    const input = skilledSubagent(
      {
        scripts: [
          {
            turns: [
              {
                tool_calls: [{ name: 'bash', args: { command: 'echo ran' } }],
                if_missing: { text: '<name>carried-only</name>', turn: { content: 'NOT CARRIED' } },
              },
              { content: 'Done.' },
            ],
          },
        ],
      },
      'bob',
    );
    const { result, steps, history } = await runSubagent({
      ...input,
      carry: {
        transcript: {
          tail: [
            { role: 'system', content: input.agent.system_prompt },
            { role: 'user', content: input.prompt },
          ],
        },
        task_index: 1,
        turns: 0,
        guard_states: {},
        step_seq: 0,
        continued: 1,
        skills: { skills: [carried], mounts: [], problems: [] },
        active_skills: [{ name: 'carried-only', by: 'read' }],
      },
    });
    expect(result).toMatchObject({ status: 'completed', result: 'Done.' });
    expect(steps.find((step) => step.kind === 'tool' && step.name === 'bash')).toMatchObject({
      is_error: true,
      text: 'Tool bash is not allowed while skill carried-only is active (allowed-tools: read_file)',
    });
    expect(snapshotMarkers(history)).toBe(0);
  });
});
