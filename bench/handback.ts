/**
 * A subagent's own loop and its hand-back, timed the way a user's model provider sees them: every model call
 * goes to a fake OpenAI-compatible server over HTTP, which notes when each request arrives. The lead delegates
 * one `bash` subagent; the subagent makes 4 model calls with 3 bash calls between them (`echo`, in the
 * sandbox the worker chooses), then answers; the lead answers after it. From the six requests' arrival times:
 *   - the subagent's loop: its first → last model request (3 turns, each a model answer, a bash call and the
 *     next request), and per turn;
 *   - the hand-back: the subagent's last model request → the lead's next one (the subagent closing, its slot
 *     given back, the lead woken, its next model call dispatched).
 * Two deployments, alternating run by run: `subagents run --embedded` (dev server, worker and client in one
 * process tree) and the split one (`subagents worker` and `subagents run --address` against a dev server of
 * their own). Run alone: `node dist/bench/handback.js` (HANDBACK_RUNS, default 5).
 */
import { loadavg } from 'node:os';
import type { TemporalServer } from '../devserver/temporal-server';
import { FakeOpenAI, type FakeReply } from '../test/support/fake-openai';
import { tempDir } from '../test/support/subagent-input';
import { withBenchServer } from './support/bench-server';
import { runSubagentsCli, startSubagentsWorker, stopWorker } from './support/subagents-cli';
import { formatTable, msRow, type BenchResult } from './stats';

const RUNS = Number(process.env.HANDBACK_RUNS ?? 5);
const BASH_CALLS = 3;

/** Lead: delegate; subagent: 3 bash calls then an answer; lead: the final answer. */
function replies(): FakeReply[] {
  const bash = (i: number): FakeReply => ({
    tool_calls: [{ name: 'bash', args: { command: `echo step ${i}` }, id: `bash${i}` }],
    usage: { input_tokens: 100, output_tokens: 10 },
  });
  return [
    {
      tool_calls: [
        {
          name: 'task',
          id: 'only',
          args: { description: 'Three steps', prompt: 'Run three echo steps.', subagent_type: 'bash' },
        },
      ],
      usage: { input_tokens: 100, output_tokens: 10 },
    },
    ...Array.from({ length: BASH_CALLS }, (_, i) => bash(i + 1)),
    { content: 'Three steps done.', usage: { input_tokens: 100, output_tokens: 10 } },
    { content: 'The subagent ran three steps.', usage: { input_tokens: 100, output_tokens: 10 } },
  ];
}

interface Sample {
  loopMs: number;
  handBackMs: number;
}

async function oneRun(fake: FakeOpenAI, runArgs: string[], env: NodeJS.ProcessEnv): Promise<Sample> {
  const before = fake.chatRequestTimes.length;
  fake.enqueue(...replies());
  await runSubagentsCli(
    [
      'run',
      ...runArgs,
      '--provider',
      'openai',
      '--model',
      'fake-model',
      '--workspace',
      tempDir('handback-ws'),
      '--json',
      'Delegate three steps.',
    ],
    env,
  );
  const at = fake.chatRequestTimes.slice(before);
  if (at.length !== BASH_CALLS + 3)
    throw new Error(`expected ${BASH_CALLS + 3} model requests, got ${at.length}`);
  // [lead 1, subagent 1..4, lead 2]
  return { loopMs: at[BASH_CALLS + 1] - at[1], handBackMs: at[BASH_CALLS + 2] - at[BASH_CALLS + 1] };
}

function rows(name: string, samples: Sample[]): BenchResult[] {
  const row = (what: string, values: number[]) => msRow(`${name}: ${what}`, values);
  return [
    row(
      'subagent loop, first → last model request (4 calls, 3 bash)',
      samples.map((s) => s.loopMs),
    ),
    row(
      'per subagent turn',
      samples.map((s) => s.loopMs / BASH_CALLS),
    ),
    row(
      'hand-back, subagent last → lead next request',
      samples.map((s) => s.handBackMs),
    ),
  ];
}

/** On `server` (the caller's), or on a dev server of its own. */
export async function benchHandBack(server?: TemporalServer): Promise<BenchResult[]> {
  // One fake provider for every run: the split deployment's worker calls it too, so it must know its address.
  const fake = await FakeOpenAI.start();
  const env: NodeJS.ProcessEnv = { ...process.env, OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'bench' };
  delete env.TEMPORAL_ADDRESS;
  const embedded: Sample[] = [];
  const split: Sample[] = [];
  const loads: number[] = [];
  const onServer = async (server: TemporalServer) => {
    const worker = await startSubagentsWorker(server.address, env);
    try {
      // One of each unmeasured first: the first run of a process tree pays for caches the rest share.
      for (let i = 0; i <= RUNS; i++) {
        loads.push(loadavg()[0]);
        const e = await oneRun(fake, ['--embedded'], env);
        const s = await oneRun(fake, ['--address', server.address], env);
        if (i === 0) continue;
        embedded.push(e);
        split.push(s);
      }
    } finally {
      await stopWorker(worker);
    }
  };
  await (server ? onServer(server) : withBenchServer(onServer)).finally(() => fake.close());
  console.error(`hand-back: load average ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`);
  return [...rows('embedded', embedded), ...rows('split', split)];
}

if (require.main === module) {
  benchHandBack()
    .then((results) => console.log(formatTable(results)))
    .catch((err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    });
}
