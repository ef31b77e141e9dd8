/**
 * One run, many hosts (issue 41): three worker hosts, each in a mount namespace of its own with a private
 * tmpfs on the workspace root (test/support/hosts.ts), against the suite's server, the payload store shared as
 * a bucket is. Runs whose subagents write and read in parallel lose a host mid-run:
 *
 * - on S3 (moto): 20 runs, the host that is home to most of those caught in their slow bash call SIGKILLed
 *   with all its processes, then restarted under the same host id (it must refuse the stale calls it gets);
 * - on a shared local folder: 20 runs, every host SIGKILLed while subagents sit in their slow bash call, then a
 *   fourth host with its own empty root joins (the acceptance suite's shape).
 *
 * Every run completes; every read after the kill sees every write that completed before it; no tool call that
 * reported done ran twice (a journal line appended by a non-idempotent bash call).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import type { LeadRunResult } from '../../contracts/lead';
import { leadStatusQuery } from '../../contracts/lead';
import { subagentStepsQuery } from '../../contracts/queries';
import type { SubagentStep as StepRecord } from '../../contracts/steps';
import type { leadRunWorkflow } from '../../workflows/lead-run';
import { connectClient, testAddress, testNamespace, uniqueTaskQueue, waitFor } from '../harness/temporal';
import { useMachineTurn } from '../harness/machine-turn';
import { Host, hostsUnavailable } from '../support/hosts';
import { MOTO_CREDENTIALS, motoMissing, startMoto, type MotoServer } from '../support/moto';
import { available, itWhere } from '../support/required';
import { artifactsDir } from '../support/outcomes';
import { payloadSettings } from '../../payloads/store';
import { historyOutline } from '../support/histories';
import { WORKSPACE_FAILURES } from '../../contracts/workspace';
import { leadInput, tempDir, writeScript } from '../support/subagent-input';

const PARTS = ['a', 'b'] as const;
const describeWithHosts = available('namespaces', 'the many-hosts tests', hostsUnavailable())
  ? describe
  : describe.skip;

useMachineTurn();

const note = (part: string) => `note of part ${part}`;
const journalLine = (part: string) => `${part} appended`;

/**
 * The lead writes a brief, delegates both parts at once, reads their notes and answers. Each subagent writes its
 * note, runs a slow bash (it waits for the test to open a gate) that reads it back and appends a journal line
 * (not idempotent: the kill's window), then reads its note, the brief and its journal, and answers.
 */
function script(gate: string): ModelScriptFileInput {
  return {
    scripts: [
      {
        agent: 'lead',
        turns: [
          {
            content: 'Brief first.',
            tool_calls: [{ name: 'write_file', args: { path: 'brief.txt', content: 'the brief' } }],
          },
          {
            content: 'Both parts at once.',
            tool_calls: PARTS.map((part) => ({
              name: 'task',
              id: `part-${part}`,
              args: {
                description: `Part ${part}`,
                prompt: `Work on part ${part} of the job.`,
                subagent_type: 'general-purpose',
              },
            })),
          },
          {
            content: 'Read what they wrote.',
            tool_calls: PARTS.map((part) => ({ name: 'read_file', args: { path: `notes/${part}.txt` } })),
          },
          { content: 'Both parts are done.' },
        ],
      },
      ...PARTS.map((part) => ({
        agent: 'general-purpose',
        prompt_contains: `part ${part} of`,
        turns: [
          {
            content: 'Write the note.',
            tool_calls: [{ name: 'write_file', args: { path: `notes/${part}.txt`, content: note(part) } }],
          },
          {
            content: 'Slow work.',
            tool_calls: [
              {
                name: 'bash',
                args: {
                  command: `until [ -e '${gate}' ]; do sleep 0.1; done; cat notes/${part}.txt; echo '${journalLine(part)}' >> journal-${part}.txt`,
                },
              },
            ],
          },
          {
            content: 'Read everything back.',
            tool_calls: [
              { name: 'read_file', args: { path: `notes/${part}.txt` } },
              { name: 'read_file', args: { path: 'brief.txt' } },
              { name: 'read_file', args: { path: `journal-${part}.txt` } },
            ],
          },
          { content: `Part ${part} is done.` },
        ],
      })),
    ],
  };
}

interface Scenario {
  client: Client;
  dir: string;
  root: string;
  taskQueue: string;
  scriptFile: string;
  hostConfig: (name: string) => string;
  /** Lets every slow bash call go on (they wait for it, however long the subagents take to gather). */
  openGate: () => void;
  hostEnv?: NodeJS.ProcessEnv;
  logs: string[];
}

function scenario(client: Client, label: string, payloads: string): Scenario {
  const dir = tempDir(label);
  const root = join(dir, 'hosts-root');
  mkdirSync(root);
  // Outside every host's workspace root, so all hosts see it: the slow bash calls wait for it, not for a clock.
  const gate = join(dir, 'gate');
  const scriptFile = writeScript(dir, script(gate));
  const hostConfig = (name: string) => {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(
      file,
      'sandbox: {kind: host, allow_host_bash: true, bash_timeout_seconds: 900}\n' +
        `${payloads}\n` +
        'subagent_runtime: {max_running: 50}\n' +
        `worker: {host_id: ${name}}\n`,
    );
    return file;
  };
  const openGate = () => writeFileSync(gate, '');
  return { client, dir, root, taskQueue: uniqueTaskQueue(label), scriptFile, hostConfig, openGate, logs: [] };
}

function startHost(s: Scenario, name: string): Promise<Host> {
  return Host.start({
    name,
    root: s.root,
    address: testAddress(),
    namespace: testNamespace(),
    taskQueue: s.taskQueue,
    config: s.hostConfig(name),
    ...(s.hostEnv && { env: s.hostEnv }),
    onLog: (line) => s.logs.push(line),
  });
}

async function startRuns(s: Scenario, count: number): Promise<WorkflowHandle<typeof leadRunWorkflow>[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      s.client.workflow.start<typeof leadRunWorkflow>('leadRunWorkflow', {
        taskQueue: s.taskQueue,
        workflowId: `${s.taskQueue}-run-${i}`,
        args: [
          leadInput({
            workspace: join(s.root, `run-${i}`),
            scriptFile: s.scriptFile,
            config: {
              subagents: { max_concurrent: 2 },
              // Host bash, in the host's mount namespace: it sees the gate (a sandbox would not).
              sandbox: { kind: 'host', allow_host_bash: true, bash_timeout_seconds: 900 },
            },
          }),
        ],
      }),
    ),
  );
}

/** A subagent's steps, or none while it cannot answer (it has not started, or its worker is being killed). */
async function stepsOf(client: Client, id: string): Promise<StepRecord[]> {
  try {
    return await client.workflow.getHandle(id).query(subagentStepsQuery, 0);
  } catch {
    return [];
  }
}

/** A finished subagent's steps: a query on a closed workflow is answered by a replay, asked until it answers. */
async function finishedSteps(client: Client, id: string): Promise<StepRecord[]> {
  let last: unknown;
  for (let attempt = 0; attempt < 10; attempt += 1) {
    try {
      return await client.workflow.getHandle(id).query(subagentStepsQuery, 0);
    } catch (err) {
      last = err;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
  const cause = (last as { cause?: { message?: string } }).cause?.message;
  // The history that would not replay, kept for the one who reads the failure (replay it with the worker's
  // Worker.runReplayHistory to see where it parts).
  const kept = join(artifactsDir(), `${id.replace(/[^A-Za-z0-9._-]/g, '_')}.history.json`);
  const history = await client.workflow.getHandle(id).fetchHistory();
  writeFileSync(kept, JSON.stringify(history));
  throw new Error(
    `the steps of ${id} cannot be read: ${String(last)}${cause ? `: ${cause}` : ''} (history: ${kept})\n` +
      historyOutline(history.events ?? []),
  );
}

/** The runs whose subagents sit in their slow bash call now (asked, not answered), once per such subagent. */
async function inSlowBash(client: Client, runs: WorkflowHandle[]): Promise<WorkflowHandle[]> {
  const children = runs.flatMap((run) =>
    PARTS.map((part) => ({ run, id: `${run.workflowId}/task/part-${part}` })),
  );
  const logs = await Promise.all(children.map(({ id }) => stepsOf(client, id)));
  return children
    .filter((_, i) => {
      const bash = logs[i]
        .flatMap((step) => (step.kind === 'ai' ? step.tool_calls : []))
        .find((c) => c.name === 'bash');
      return (
        bash !== undefined && !logs[i].some((step) => step.kind === 'tool' && step.tool_call_id === bash.id)
      );
    })
    .map(({ run }) => run);
}

/** The results of the tool calls a subagent made, in order, with the call each answers. */
function toolResults(steps: StepRecord[]): { name: string; args: string; text: string; error: boolean }[] {
  const calls = steps.flatMap((step) => (step.kind === 'ai' ? step.tool_calls : []));
  return calls.map((call) => {
    const result = steps.find((step) => step.kind === 'tool' && step.tool_call_id === call.id);
    return {
      name: call.name,
      args: call.args,
      text: result?.kind === 'tool' ? result.text : '(no result)',
      error: result?.kind === 'tool' ? result.is_error : true,
    };
  });
}

/** Every broken promise of one run: its result, its reads, its journal. */
async function checkRun(client: Client, run: WorkflowHandle, result: LeadRunResult): Promise<string[]> {
  const id = run.workflowId;
  const problems: string[] = [];
  if (result.status !== 'completed') problems.push(`${id}: ${result.status}: ${result.error}`);
  const ledger = result.ledger.map((entry) => entry.status);
  if (ledger.join() !== 'completed,completed') problems.push(`${id}: ledger [${ledger.join(', ')}]`);
  for (const part of PARTS) {
    const child = `${id}/task/part-${part}`;
    const results = toolResults(await finishedSteps(client, child));
    const bash = results.find((r) => r.name === 'bash');
    const reads = results.filter((r) => r.name === 'read_file');
    const [noteRead, briefRead, journalRead] = reads;
    if (!noteRead?.text.includes(note(part)))
      problems.push(`${child}: its note read back as ${noteRead?.text}`);
    if (!briefRead?.text.includes('the brief'))
      problems.push(`${child}: the lead's brief read as ${briefRead?.text}`);
    const lines = (journalRead?.text ?? '').split('\n').filter((line) => line.includes(journalLine(part)));
    if (lines.length > 1) problems.push(`${child}: the journal line was written ${lines.length} times`);
    if (bash && !bash.error) {
      if (!bash.text.includes(note(part))) problems.push(`${child}: bash read its note as ${bash.text}`);
      if (lines.length !== 1)
        problems.push(`${child}: bash reported done, journal shows ${lines.length} lines`);
    }
  }
  return problems;
}

async function allResults(runs: WorkflowHandle<typeof leadRunWorkflow>[]): Promise<LeadRunResult[]> {
  return Promise.all(
    runs.map((run) =>
      run.result().catch((err: unknown) => {
        const details = (err as { cause?: { details?: unknown[] } }).cause?.details?.[0];
        if (details && typeof details === 'object' && 'status' in details) return details as LeadRunResult;
        throw err;
      }),
    ),
  );
}

/** The value most of `values` are. */
function mostCommon(values: string[]): string {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0][0];
}

/** How long after `killedAt` a workspace call of `workflowId` first started on a host other than `victim`. */
async function firstCallElsewhere(
  client: Client,
  workflowId: string,
  victim: string,
  killedAt: number,
): Promise<number | undefined> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const ms = (time: (typeof events)[number]['eventTime']) =>
    Number(time?.seconds ?? 0) * 1000 + Math.floor((time?.nanos ?? 0) / 1e6);
  const elsewhere = new Set(
    events
      .filter((e) => {
        const queue = e.activityTaskScheduledEventAttributes?.taskQueue?.name ?? '';
        return queue.includes('@') && !queue.endsWith(`@${victim}`);
      })
      .map((e) => String(e.eventId)),
  );
  const started = events.find(
    (e) =>
      elsewhere.has(String(e.activityTaskStartedEventAttributes?.scheduledEventId)) &&
      ms(e.eventTime) > killedAt,
  );
  return started ? ms(started.eventTime) - killedAt : undefined;
}

/** The failures of a workflow's activities, from its history: type and message. */
async function activityFailures(handle: WorkflowHandle): Promise<{ type?: string; message: string }[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  return events.flatMap((event) => {
    const failure = event.activityTaskFailedEventAttributes?.failure;
    if (!failure) return [];
    const type = failure.applicationFailureInfo?.type ?? undefined;
    return [{ ...(type && { type }), message: failure.message ?? '' }];
  });
}

describeWithHosts('a run on many hosts', () => {
  let client: Client;
  let close: () => Promise<void>;
  const hosts: Host[] = [];

  beforeAll(async () => {
    ({ client, close } = await connectClient());
  });

  afterEach(async () => {
    await Promise.all(hosts.splice(0).map((host) => host.kill()));
  });

  afterAll(async () => {
    await close();
  });

  const itWithMoto = itWhere('s3', 'the many-hosts test on S3', motoMissing());

  itWithMoto(
    'loses nothing when a home host is SIGKILLed mid-run, and fences it once it returns (S3)',
    async () => {
      const moto: MotoServer = await startMoto();
      // This test's client writes to the hosts' store: a lead's input it starts holds shared fields (its scope).
      Object.assign(process.env, MOTO_CREDENTIALS);
      const s3Client = await connectClient(undefined, {
        ...payloadSettings(),
        store: 's3',
        s3: moto.settings,
      });
      const client = s3Client.client;
      try {
        const payloads = `payloads: {store: s3, s3: ${JSON.stringify(moto.settings)}}`;
        const s = { ...scenario(client, 'hosts-s3', payloads), hostEnv: MOTO_CREDENTIALS };
        hosts.push(...(await Promise.all(['h1', 'h2', 'h3'].map((name) => startHost(s, name)))));
        const runs = await startRuns(s, 20);
        let inBash: WorkflowHandle[] = [];
        await waitFor(
          'eight subagents in their slow bash',
          async () => (inBash = await inSlowBash(client, runs)).length >= 8,
          180_000,
        );
        // The host that is home to most of the runs caught in their slow bash: they have calls to make after it.
        const homes = await Promise.all(
          inBash.map(async (run) => (await run.query(leadStatusQuery)).workspace?.host_id),
        );
        const victimId = mostCommon(homes.filter((home) => home !== undefined));
        const victim = hosts.find((host) => host.hostId === victimId)!;
        const homed = new Set(inBash.filter((_, i) => homes[i] === victimId));
        const homeBefore = await Promise.all(
          runs.map(async (run) => (await run.query(leadStatusQuery)).workspace?.host_id),
        );
        await victim.kill();
        const killedAt = Date.now();
        s.openGate();
        const results = await allResults(runs);
        process.stderr.write(
          `many hosts (S3): ${victimId} killed, home of ${homeBefore.filter((h) => h === victimId).length} of ` +
            `20 runs (${homed.size} caught in their bash); every run ended ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill\n`,
        );
        const resumed = await Promise.all(
          [...homed].map((run) =>
            firstCallElsewhere(client, `${run.workflowId}/task/part-a`, victimId, killedAt),
          ),
        );
        const seconds = resumed.filter((ms) => ms !== undefined).map((ms) => (ms / 1000).toFixed(1));
        process.stderr.write(
          `many hosts (S3): kill → the next workspace call started on another host: ${seconds.join(', ')} s\n`,
        );
        const problems = (await Promise.all(runs.map((run, i) => checkRun(client, run, results[i])))).flat();
        expect(problems).toEqual([]);
        // Runs homed elsewhere stayed where they were (epoch 1); the victim's runs caught mid-call moved (to a live
        // host, epoch 2), and so did any other of its runs that had a call left to make.
        const movedRuns: WorkflowHandle[] = [];
        for (const [i, run] of runs.entries()) {
          const workspace = (await run.query(leadStatusQuery)).workspace;
          if (homeBefore[i] !== victimId) expect(workspace).toEqual({ host_id: homeBefore[i], epoch: 1 });
          else if (homed.has(run) || workspace?.epoch !== 1) {
            expect(workspace?.epoch).toBe(2);
            expect(workspace?.host_id).not.toBe(victimId);
            movedRuns.push(run);
          }
        }
        expect(movedRuns.length).toBeGreaterThan(0);

        // The victim comes back under its own id. A straggler that still believes a moved run's workspace lives
        // there (epoch 1) is refused by it, told where it lives now, and carries on there.
        hosts.push(await startHost(s, victimId));
        const moved = movedRuns[0];
        const input = leadInput({
          workspace: join(s.root, `run-${runs.indexOf(moved)}`),
          scriptFile: s.scriptFile,
          config: {
            subagents: { max_concurrent: 2 },
            sandbox: { kind: 'host', allow_host_bash: true, bash_timeout_seconds: 900 },
          },
        });
        // The run's workspace records are keyed by its workflow id and first run id (workflows/workspace-route.ts).
        const runKey = `${moved.workflowId}@${(await moved.describe()).runId}`;
        const straggler = await client.workflow.start<typeof leadRunWorkflow>('leadRunWorkflow', {
          taskQueue: s.taskQueue,
          workflowId: `${s.taskQueue}-straggler`,
          args: [
            {
              ...input,
              run_id: moved.workflowId,
              scope: {
                ...input.scope,
                workspace_key: runKey,
                workspace_placement: {
                  mode: 'home',
                  run_key: runKey,
                  host_id: victimId,
                  queue: `${s.taskQueue}@${victimId}`,
                  epoch: 1,
                  snapshots: true,
                },
              },
            },
          ],
        });
        const result = await straggler.result();
        expect(result.status).toBe('completed');
        const refusals = (await activityFailures(straggler)).filter(
          (f) => f.type === WORKSPACE_FAILURES.moved,
        );
        expect(refusals.length).toBeGreaterThan(0);
        expect(refusals[0].message).toContain(
          `host ${victimId} no longer holds the run's workspace (epoch 1)`,
        );
      } finally {
        await s3Client.close();
        for (const name of Object.keys(MOTO_CREDENTIALS)) delete process.env[name];
        await moto.stop();
      }
    },
    400_000,
  );

  it('loses nothing when every host is SIGKILLed mid-run and a fourth joins (shared local folder)', async () => {
    const s = scenario(
      client,
      'hosts-all',
      `payloads: {store: local, path: ${join(tempDir('hosts-store'), 'payloads')}}`,
    );
    hosts.push(...(await Promise.all(['h1', 'h2', 'h3'].map((name) => startHost(s, name)))));
    const runs = await startRuns(s, 20);
    await waitFor(
      'a dozen subagents in their slow bash',
      async () => (await inSlowBash(client, runs)).length >= 12,
      120_000,
    );
    await Promise.all(hosts.map((host) => host.kill()));
    s.openGate();
    hosts.push(await startHost(s, 'h4'));
    const results = await allResults(runs);
    const problems = (await Promise.all(runs.map((run, i) => checkRun(client, run, results[i])))).flat();
    expect(problems).toEqual([]);
    // Every run's workspace moved to the fourth host, and its status says so.
    const h4 = hosts[hosts.length - 1].hostId;
    for (const run of runs) {
      const status = await run.query(leadStatusQuery);
      expect(status.workspace).toMatchObject({ host_id: h4, epoch: 2 });
    }
  }, 400_000);
});
