/**
 * Throughput on a Temporal server backed by PostgreSQL, beside the same load on the SQLite dev server:
 * `node dist/bench/postgres-throughput.js [postgres|dev|both] [leads] [concurrency]` (default `both 40 10`).
 *
 * The load: `leads` lead runs of the scripted model, each delegating three subagents that answer at once,
 * `concurrency` of them in flight at a time, one in-process worker with admission wide enough not to queue
 * (so the server and the worker are what is measured, not `max_running`). Reported: completed leads and
 * delegations per second over the wall time, each lead's start → result (p50/p95), and the machine's load.
 * For the same server version on both, point TEMPORAL_CLI_PATH at the Go build of the CLI (server 1.29.1).
 *
 * `startPostgresServer` (worker/temporal-postgres.ts) is the piece a load benchmark calls to run on
 * PostgreSQL; the first call builds the server with Go (minutes), later ones start it in seconds.
 */
import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { SubagentsClient } from '../client/api';
import type { LeadRunResult } from '../contracts/lead';
import { projectDataConverter } from '../worker/payloads/data-converter';
import { startPostgresServer } from '../worker/temporal-postgres';
import { startDevServer, type TemporalServer } from '../worker/temporal-server';
import { bundleProjectWorkflows, createProjectWorker } from '../worker/worker';
import { percentile } from './stats';
import { fanOutLeadInput } from './support/subagent-input';

const DELEGATIONS = ['a', 'b', 'c'];

export interface ThroughputFigures {
  server: string;
  /** What the server says it is (`getSystemInfo`). */
  serverVersion: string;
  leads: number;
  concurrency: number;
  wallMs: number;
  leadsPerSecond: number;
  delegationsPerSecond: number;
  leadP50Ms: number;
  leadP95Ms: number;
}

/** Runs the load against `server` with a worker of its own; every lead must complete with its 3 delegations. */
export async function measureThroughput(
  server: TemporalServer,
  label: string,
  leads: number,
  concurrency: number,
  bundle: string,
): Promise<ThroughputFigures> {
  const taskQueue = `bench-throughput-${randomUUID().slice(0, 8)}`;
  const workerConnection = await NativeConnection.connect({ address: server.address });
  const connection = await Connection.connect({ address: server.address });
  try {
    const { serverVersion } = await connection.workflowService.getSystemInfo({});
    const client = new Client({
      connection,
      namespace: server.namespace,
      dataConverter: projectDataConverter(),
    });
    const api = new SubagentsClient(client, server.namespace);
    const worker = await createProjectWorker({
      connection: workerConnection,
      namespace: server.namespace,
      taskQueue,
      workflowBundleCode: bundle,
      admission: {
        max_running: 3 * concurrency,
        max_queued: 64,
        admission_policy: 'queue',
        queue_timeout_seconds: 300,
      },
    });
    const durations: number[] = [];
    const runOne = async (i: number) => {
      const started = Date.now();
      const run = await api.startRun(fanOutLeadInput(DELEGATIONS), { taskQueue, runId: `${taskQueue}-${i}` });
      const result: LeadRunResult = await run.result();
      const done = result.ledger.filter((e) => e.status === 'completed').length;
      if (result.status !== 'completed' || done !== DELEGATIONS.length) {
        throw new Error(`lead ${i}: ${result.status}, ${done}/${DELEGATIONS.length} delegations completed`);
      }
      durations.push(Date.now() - started);
    };
    const wallMs = await worker.runUntil(async () => {
      // Warm-up (the worker's first tasks, the admission workflow): not measured.
      await runOne(-1);
      durations.length = 0;
      const begun = Date.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < leads) await runOne(next++);
        }),
      );
      return Date.now() - begun;
    });
    return {
      server: label,
      serverVersion,
      leads,
      concurrency,
      wallMs,
      leadsPerSecond: (leads * 1000) / wallMs,
      delegationsPerSecond: (leads * DELEGATIONS.length * 1000) / wallMs,
      leadP50Ms: percentile(durations, 50),
      leadP95Ms: percentile(durations, 95),
    };
  } finally {
    await connection.close();
    await workerConnection.close();
  }
}

function line(f: ThroughputFigures): string {
  return (
    `${f.server} (server ${f.serverVersion}): ${f.leads} leads × ${DELEGATIONS.length} delegations, ${f.concurrency} at a time, in ` +
    `${(f.wallMs / 1000).toFixed(1)} s: ${f.leadsPerSecond.toFixed(2)} leads/s, ` +
    `${f.delegationsPerSecond.toFixed(1)} delegations/s; a lead p50 ${f.leadP50Ms} ms, p95 ${f.leadP95Ms} ms` +
    ` (load ${loadavg()[0].toFixed(1)} on ${cpus().length} cores)`
  );
}

async function main(): Promise<void> {
  const [which = 'both', leadsArg = '40', concurrencyArg = '10'] = process.argv.slice(2);
  const leads = Number(leadsArg);
  const concurrency = Number(concurrencyArg);
  if (!['postgres', 'dev', 'both'].includes(which) || !(leads > 0) || !(concurrency > 0)) {
    throw new Error('usage: postgres-throughput.js [postgres|dev|both] [leads] [concurrency]');
  }
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const log = (text: string) => process.stderr.write(`${text}\n`);
  const bundle = await bundleProjectWorkflows();
  const starts: [string, () => Promise<TemporalServer>][] = [];
  if (which !== 'dev') starts.push(['PostgreSQL', () => startPostgresServer({ log })]);
  if (which !== 'postgres') starts.push(['SQLite dev server', () => startDevServer({ headless: true, log })]);
  for (const [label, start] of starts) {
    const server = await start();
    try {
      process.stdout.write(`${line(await measureThroughput(server, label, leads, concurrency, bundle))}\n`);
    } finally {
      await server.stop();
    }
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
