/**
 * `npm run chaos`: the long chaos run (issue 8). Lead runs that delegate to three subagents each keep
 * starting while one of the worker processes is SIGKILLed at random every few seconds and restarted; then
 * every run is checked (test/support/chaos.ts: completed, three completed ledger entries, no child started
 * twice, no non-idempotent append run twice). test/temporal/chaos.test.ts is the bounded CI version.
 *
 * Env: CHAOS_KILLS (default 100), CHAOS_RUNS (default: runs keep starting until the kills are done),
 * CHAOS_CONCURRENCY (lead runs in flight, 8), CHAOS_WORKERS (2), CHAOS_KILL_EVERY_MS (pause before each kill,
 * "2000-4000"), CHAOS_MODEL_DELAY_MS (the scripted model's time per turn, 600), CHAOS_SEED (random; printed),
 * TEMPORAL_ADDRESS (else an embedded dev server). Exits 1 when a promise was broken.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { projectDataConverter } from '../payloads/data-converter';
import { connectOrStartServer } from '../devserver/temporal-server';
import { bundleProjectWorkflows } from '../worker/worker';
import { runChaos } from '../test/support/chaos';
import { tempDir } from '../test/support/subagent-input';
import { formatTable, percentile } from './stats';

function numberFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name}: "${raw}" is not a non-negative number`);
  return value;
}

function rangeFromEnv(name: string, fallback: readonly [number, number]): readonly [number, number] {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const match = /^(\d+)-(\d+)$/.exec(raw);
  if (!match || Number(match[1]) > Number(match[2])) {
    throw new Error(`${name}: "${raw}" is not a range of milliseconds such as 2000-4000`);
  }
  return [Number(match[1]), Number(match[2])];
}

async function main(): Promise<void> {
  const kills = numberFromEnv('CHAOS_KILLS', 100);
  const runs = process.env.CHAOS_RUNS ? numberFromEnv('CHAOS_RUNS', 0) : undefined;
  const killEveryMs = rangeFromEnv('CHAOS_KILL_EVERY_MS', [2000, 4000]);
  const seed = numberFromEnv('CHAOS_SEED', Date.now() % 2 ** 31);
  const log = (line: string) => process.stderr.write(`${line}\n`);

  const [server, bundle] = await Promise.all([
    connectOrStartServer({ headless: true, log }),
    bundleProjectWorkflows(),
  ]);
  const bundlePath = join(tempDir('chaos-bundle'), 'workflows.js');
  writeFileSync(bundlePath, bundle);
  const connection = await Connection.connect({ address: server.address });
  try {
    const client = new Client({
      connection,
      namespace: server.namespace,
      dataConverter: projectDataConverter(),
    });
    log(`chaos: seed ${seed}, ${kills} kills, kill every ${killEveryMs.join('–')} ms`);
    const report = await runChaos({
      client,
      workers: {
        address: server.address,
        namespace: server.namespace,
        taskQueue: `chaos-${Date.now()}`,
        bundlePath,
        logLevel: 'ERROR',
      },
      workerCount: numberFromEnv('CHAOS_WORKERS', 2),
      runs,
      kills,
      concurrency: numberFromEnv('CHAOS_CONCURRENCY', 8),
      killEveryMs,
      modelDelayMs: numberFromEnv('CHAOS_MODEL_DELAY_MS', 600),
      seed,
      // Generous: a kill costs a run seconds, not minutes.
      deadlineMs: (kills * killEveryMs[1] + 120_000) * 2,
      maxRunning: 12,
      log,
    });

    const durations = report.runs.map((run) => run.durationMs / 1000);
    const failed = report.appends.filter((a) => a.reported === 'failed');
    process.stdout.write(
      `${formatTable([
        {
          name: 'lead run, 3 subagents, wall',
          unit: 's',
          p50: percentile(durations, 50),
          p95: percentile(durations, 95),
          samples: durations.length,
        },
      ])}\n\n`,
    );
    const facts: [string, string][] = [
      ['seed', String(report.seed)],
      ['wall (runs only, not the checks)', `${Math.round(report.wallMs / 1000)} s`],
      ['kills (SIGKILL)', String(report.kills)],
      [
        'lead runs / completed',
        `${report.runs.length} / ${report.runs.filter((r) => r.result?.status === 'completed').length}`,
      ],
      ['slowest run', `${Math.max(...durations).toFixed(1)} s`],
      [
        'append calls / reported done',
        `${report.appends.length} / ${report.appends.filter((a) => a.reported === 'done').length}`,
      ],
      [
        'appends interrupted (written once / not at all)',
        `${failed.length} (${failed.filter((a) => a.written === 1).length} / ${failed.filter((a) => a.written === 0).length})`,
      ],
      ['activity attempts retried after a kill', String(report.recoveries.retried_activities)],
      ['workflow tasks lost mid-task (10 s timeout)', String(report.recoveries.workflow_task_timeouts)],
      ['workflow tasks moved off a dead sticky queue', String(report.recoveries.sticky_timeouts)],
      ['broken promises', String(report.violations.length)],
    ];
    const width = Math.max(...facts.map(([name]) => name.length));
    process.stdout.write(`${facts.map(([name, value]) => `${name.padEnd(width)}  ${value}`).join('\n')}\n`);
    for (const violation of report.violations) process.stdout.write(`BROKEN: ${violation}\n`);
    if (report.violations.length > 0) process.exitCode = 1;
  } finally {
    await connection.close();
    await server.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
