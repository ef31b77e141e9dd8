/**
 * `node dist/bench/turn-vs-deerflow.js [--rounds 3] [--turns 10] [--json]` (issue 50, item 4): one subagent turn,
 * ours against DeerFlow's loop, on the same workload and the same fake model.
 *
 * The turn: the per-turn overhead is the time from the fake OpenAI-compatible provider handing answer k (one
 * `ls` tool call) to the network to request k+1 arriving at it: the model answer read, the tool run, the next
 * model request sent. Both stamps are taken in the provider's process (support/turn-stamps.ts); the provider
 * answers at once.
 *
 * The workload: a general-purpose subagent lists the workspace folders d1…dN, one `ls` a turn (a different folder
 * each turn, so neither side's loop detection steps in), then answers. `ls`, not `bash`: our bash goes through a
 * bubblewrap sandbox, DeerFlow's local sandbox runs a plain subprocess. Two shapes: one subagent alone, and three
 * turning at once: ours, a lead that delegates three in one response (`task` ×3; the lead's own turns are not
 * measured); DeerFlow's, three subagents handed to its executor at once (a 3-thread scheduler pool, every subagent
 * a coroutine on one persistent event loop).
 *
 * The systems, interleaved in each round after one unmeasured run of each:
 *   - ours, embedded: `subagents run --embedded` (dev server, worker and client in one process tree, per run);
 *   - ours, split: `subagents worker` (kept up) and `subagents run --address` against this bench's dev server;
 *   - DeerFlow's loop: bench/deerflow/loop.py (its header says what of DeerFlow 2.1.0's executor it mirrors and
 *     what it leaves out) on LangChain/LangGraph at DeerFlow's pinned versions (bench/deerflow/requirements.txt),
 *     in a venv this bench makes once in the project's cache folder (DEERFLOW_BENCH_PYTHON picks the Python).
 *
 * For the split deployment, each turn is also cut at its subagent's history events (support/turn-history.ts).
 * The load average is noted at the start and the end: other work on the host lengthens every figure.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { Client } from '@temporalio/client';
import { FakeOpenAI } from '../test/support/fake-openai';
import { tempDir } from '../test/support/subagent-input';
import { withBenchServer } from './support/bench-server';
import { DeerFlowLoop, ensureDeerFlowVenv, type DeerFlowLoopInfo } from './support/deerflow-loop';
import { connectProjectClient } from './support/project-client';
import { runSubagentsCli, startSubagentsWorker, stopWorker } from './support/subagents-cli';
import { PHASE_NAMES, turnAnatomies, type TurnAnatomy, type TurnPhases } from './support/turn-history';
import { TurnStamps, turnFolder } from './support/turn-stamps';
import { msRow, percentile, type BenchResult } from './stats';

/** DeerFlow runs a subagent with `recursion_limit` = max_turns (150 for general-purpose) graph steps. */
const DEERFLOW_MAX_TURNS = 150;
/** Graph steps of one turn in DeerFlow's loop: 2 before-model nodes, the model, 4 after-model nodes, the tools. */
const DEERFLOW_STEPS_A_TURN = 8;
/** The steps outside the turns: before-agent (5) and after-agent (3) nodes, the last model call's 7. */
const DEERFLOW_STEPS_BESIDE = 15;
const MAX_TURNS = Math.floor((DEERFLOW_MAX_TURNS - DEERFLOW_STEPS_BESIDE) / DEERFLOW_STEPS_A_TURN);

const SHAPES = [
  { name: 'alone', slug: 'alone', subagents: 1 },
  { name: 'three at once', slug: 'three', subagents: 3 },
] as const;
type Shape = (typeof SHAPES)[number];

const SYSTEMS = [
  { name: 'ours, embedded', slug: 'embedded' },
  { name: 'ours, split', slug: 'split' },
  { name: "DeerFlow's loop", slug: 'deerflow' },
] as const;
type System = (typeof SYSTEMS)[number];

interface Options {
  rounds: number;
  turns: number;
  json: boolean;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '3' },
      turns: { type: 'string', default: '10' },
      json: { type: 'boolean', default: false },
    },
  });
  const rounds = Number(values.rounds);
  const turns = Number(values.turns);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20)
    throw new Error(`--rounds: ${values.rounds} is out of range (1–20)`);
  if (!Number.isInteger(turns) || turns < 1 || turns > MAX_TURNS) {
    throw new Error(
      `--turns: ${values.turns} is out of range (1–${MAX_TURNS}: DeerFlow stops a general-purpose subagent ` +
        `after ${DEERFLOW_MAX_TURNS} graph steps, ${DEERFLOW_STEPS_A_TURN} a turn)`,
    );
  }
  return { rounds, turns, json: values.json };
}

function say(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** A workspace with the folders d1…dN, two small files in each. */
function workspace(turns: number): string {
  const dir = tempDir('turn-vs-deerflow-ws');
  for (let k = 1; k <= turns; k++) {
    const folder = join(dir, turnFolder(k));
    mkdirSync(folder);
    writeFileSync(join(folder, 'notes.md'), `# folder ${k}\n`);
    writeFileSync(join(folder, 'data.csv'), 'item,count\nbolts,12\n');
  }
  return dir;
}

interface Bench {
  options: Options;
  stamps: TurnStamps;
  env: NodeJS.ProcessEnv;
  address: string;
  client: Client;
  deerflow: DeerFlowLoop;
}

interface RunOutcome {
  gaps: number[];
  turns: TurnAnatomy[];
}

/** One run of `shape` on `system`: its subagents' per-turn overheads (and, split, their turns' phases). */
async function runOnce(bench: Bench, shape: Shape, system: System, round: number): Promise<RunOutcome> {
  const { stamps, options } = bench;
  const base = `r${round}-${shape.slug}-${system.slug}-${Date.now().toString(36)}`;
  const keys = Array.from({ length: shape.subagents }, (_, i) => `${base}-${i + 1}`);
  const dir = workspace(options.turns);
  const turns: TurnAnatomy[] = [];
  try {
    if (system.slug === 'deerflow') {
      const tasks = keys.map((key) => ({
        prompt: stamps.planSubagent(key, options.turns, 'deerflow'),
        workspace: dir,
      }));
      await bench.deerflow.run(tasks, DEERFLOW_MAX_TURNS);
    } else {
      for (const key of keys) stamps.planSubagent(key, options.turns, 'relative');
      const prompt = stamps.planLead(`${base}-lead`, keys);
      const deployment = system.slug === 'embedded' ? ['--embedded'] : ['--address', bench.address];
      const stdout = await runSubagentsCli(
        [
          'run',
          ...deployment,
          '--provider',
          'openai',
          '--model',
          'fake-model',
          '--workspace',
          dir,
          '--json',
          prompt,
        ],
        bench.env,
      );
      if (system.slug === 'split') {
        const { run_id: runId } = JSON.parse(stdout) as { run_id: string };
        for (const [i, key] of keys.entries()) {
          const history = await bench.client.workflow.getHandle(`${runId}/task/list${i + 1}`).fetchHistory();
          turns.push(...turnAnatomies(history.events ?? [], stamps.turnWindows(key)));
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { gaps: keys.flatMap((key) => stamps.gaps(key)), turns };
}

function ms(value: number): string {
  return `${value.toFixed(1)} ms`;
}

function ratio(ours: number, theirs: number): string {
  return `${(ours / theirs).toFixed(2)}×`;
}

function markdownTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

function mean(values: readonly number[]): number {
  return values.reduce((sum, v) => sum + v, 0) / values.length;
}

interface Figures {
  gaps: Map<string, number[]>;
  /** The split deployment's turns, cut at their histories' events. */
  turns: Map<string, TurnAnatomy[]>;
}

const cell = (shape: Shape, system: System) => `${shape.slug}/${system.slug}`;

/** What a split turn's history is counted for, beside its times. */
const COUNTS: Array<[string, (turn: TurnAnatomy) => number]> = [
  ['workflow tasks a turn', (t) => t.workflowTasks],
  ['tool calls run as regular activities a turn', (t) => t.toolActivities],
];

function spread(values: readonly number[]): { p50: number; p95: number; samples: number } {
  return { p50: percentile(values, 50), p95: percentile(values, 95), samples: values.length };
}

function results(figures: Figures): BenchResult[] {
  const rows: BenchResult[] = [];
  for (const shape of SHAPES) {
    const theirs = figures.gaps.get(cell(shape, SYSTEMS[2])) ?? [];
    for (const system of SYSTEMS) {
      const gaps = figures.gaps.get(cell(shape, system)) ?? [];
      rows.push(msRow(`turn overhead, ${shape.name}: ${system.name}`, gaps));
      if (system.slug === 'deerflow') continue;
      rows.push({
        name: `turn overhead, ${shape.name}: ${system.name} / DeerFlow's loop`,
        unit: '×',
        p50: percentile(gaps, 50) / percentile(theirs, 50),
        p95: percentile(gaps, 95) / percentile(theirs, 95),
        samples: gaps.length,
      });
    }
    const turns = figures.turns.get(cell(shape, SYSTEMS[1])) ?? [];
    for (const key of Object.keys(PHASE_NAMES) as Array<keyof TurnPhases>) {
      rows.push(
        msRow(
          `turn phases, ${shape.name}, ours split: ${PHASE_NAMES[key]}`,
          turns.map((t) => t.phases[key]),
        ),
      );
    }
    for (const [what, count] of COUNTS) {
      const values = turns.map(count);
      rows.push({ name: `turn phases, ${shape.name}, ours split: ${what}`, unit: '', ...spread(values) });
    }
  }
  return rows;
}

function report(figures: Figures, opts: Options, info: DeerFlowLoopInfo, loads: number[][], seconds: number) {
  const out: string[] = [];
  for (const shape of SHAPES) {
    const theirs = figures.gaps.get(cell(shape, SYSTEMS[2])) ?? [];
    out.push(
      `${shape.name}: ${shape.subagents} subagent(s) × ${opts.turns} turns (one ls each), ${opts.rounds} rounds`,
    );
    const rows = SYSTEMS.map((system) => {
      const gaps = figures.gaps.get(cell(shape, system)) ?? [];
      const p50 = percentile(gaps, 50);
      const p95 = percentile(gaps, 95);
      const versus =
        system.slug === 'deerflow'
          ? '—'
          : `${ratio(p50, percentile(theirs, 50))} (${ratio(p95, percentile(theirs, 95))})`;
      return [system.name, `${ms(p50)} (${ms(p95)})`, versus, String(gaps.length)];
    });
    out.push(
      markdownTable(['system', 'per-turn overhead p50 (p95)', 'ours / DeerFlow p50 (p95)', 'turns'], rows),
    );
    out.push('');
  }
  out.push(
    'ours, split: where a turn goes (mean a turn, from the subagents’ histories; the ms parts add up to the turn)',
  );
  const header = ['part', ...SHAPES.map((s) => s.name)];
  const meanOf = (shape: Shape, value: (turn: TurnAnatomy) => number) => {
    const turns = figures.turns.get(cell(shape, SYSTEMS[1])) ?? [];
    return turns.length === 0 ? '—' : mean(turns.map(value)).toFixed(1);
  };
  const rows = [
    ...(Object.keys(PHASE_NAMES) as Array<keyof TurnPhases>).map((key) => [
      PHASE_NAMES[key],
      ...SHAPES.map((shape) => meanOf(shape, (t) => t.phases[key])),
    ]),
    ...COUNTS.map(([what, count]) => [what, ...SHAPES.map((shape) => meanOf(shape, count))]),
  ];
  out.push(markdownTable(header, rows));
  out.push('');
  const load = (l: number[]) => l.map((v) => v.toFixed(2)).join(' / ');
  out.push(`load average (1 / 5 / 15 min): ${load(loads[0])} at the start, ${load(loads[1])} at the end`);
  out.push(
    `took ${Math.round(seconds)} s on ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ` +
      `${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
  );
  const libraries = Object.entries(info.versions)
    .map(([name, version]) => `${name} ${version}`)
    .join(', ');
  out.push(`DeerFlow's loop: Python ${info.python}, ${libraries}`);
  return out.join('\n');
}

async function main(): Promise<void> {
  const opts = options();
  const started = performance.now();
  const loads = [loadavg()];
  const python = await ensureDeerFlowVenv(say);
  const stamps = new TurnStamps();
  const fake = await FakeOpenAI.start({ respond: stamps.respond, sent: stamps.sent });
  // The split deployment's worker calls the provider too: both find it through the environment.
  const env: NodeJS.ProcessEnv = { ...process.env, OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'bench' };
  delete env.TEMPORAL_ADDRESS;
  const figures: Figures = { gaps: new Map(), turns: new Map() };
  let info: DeerFlowLoopInfo | undefined;
  try {
    const deerflow = await DeerFlowLoop.start(python, fake.url);
    info = deerflow.info;
    try {
      await withBenchServer(async (server) => {
        const worker = await startSubagentsWorker(server.address, env);
        const { client, connection } = await connectProjectClient(server);
        const bench: Bench = { options: opts, stamps, env, address: server.address, client, deerflow };
        try {
          // Round 0 is the unmeasured warm-up: the first run of each pays for caches the rest share.
          for (let round = 0; round <= opts.rounds; round++) {
            for (const shape of SHAPES) {
              for (const system of SYSTEMS) {
                const outcome = await runOnce(bench, shape, system, round);
                say(
                  `round ${round}${round === 0 ? ' (warm-up)' : ''}, ${shape.name}, ${system.name}: ` +
                    `p50 ${ms(percentile(outcome.gaps, 50))} a turn, load ${loadavg()[0].toFixed(2)}`,
                );
                if (round === 0) continue;
                const key = cell(shape, system);
                figures.gaps.set(key, [...(figures.gaps.get(key) ?? []), ...outcome.gaps]);
                figures.turns.set(key, [...(figures.turns.get(key) ?? []), ...outcome.turns]);
              }
            }
          }
        } finally {
          await connection.close();
          await stopWorker(worker);
        }
      });
    } finally {
      await deerflow.close();
    }
  } finally {
    await fake.close();
  }
  loads.push(loadavg());
  const seconds = (performance.now() - started) / 1000;
  if (opts.json) {
    const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
    const summary = {
      date: new Date().toISOString(),
      machine,
      tool: 'ls',
      turns: opts.turns,
      rounds: opts.rounds,
      load_average: { start: loads[0], end: loads[1] },
      seconds,
      deerflow: info,
      results: results(figures),
    };
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  } else if (info) {
    process.stdout.write(`${report(figures, opts, info, loads, seconds)}\n`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
