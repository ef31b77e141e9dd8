/**
 * What placing a run's workspace costs a run on one machine (issue 41): the fan-out of issue 13 (a lead, three
 * subagents reading a file, the lead answering), its runs interleaved in three ways:
 *   - pre-placed: the input carries its placement already, so no call places it;
 *   - embedded: the worker a command runs for itself (`snapshots: auto` = off): the run's first call places the
 *     workspace on this host, its calls go as they did before placements;
 *   - one host, snapshots on: a worker with a host queue, as `subagents worker` on one machine: every workspace
 *     call on the host's queue, a save after each call that may change the workspace.
 * `npm run bench:workspace` runs it after the snapshot figures.
 */
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { DEFAULT_WORKSPACE_SETTINGS } from '../contracts/workspace';
import type { TemporalServer } from '../devserver/temporal-server';
import { projectDataConverter } from '../payloads/data-converter';
import { createProjectWorker, hostWorkerStopped } from '../worker/worker';
import { workspaceHosting } from '../worker/workspace-hosting';
import { formatTable, msRow, type BenchResult } from './stats';
import { withBenchServer } from './support/bench-server';
import { fanOutInput } from './support/fanout-workload';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);

type Mode = 'pre-placed' | 'embedded' | 'snapshots';

async function timedRuns(
  server: TemporalServer,
  modes: readonly Mode[],
  standalone: boolean,
): Promise<Map<Mode, number[]>> {
  const connection = await Connection.connect({ address: server.address });
  const native = await NativeConnection.connect({ address: server.address });
  const taskQueue = `bench-placement-${standalone ? 'host' : 'embedded'}-${Date.now()}`;
  const wall = new Map<Mode, number[]>(modes.map((mode) => [mode, []]));
  try {
    const client = new Client({
      connection,
      namespace: server.namespace,
      dataConverter: projectDataConverter(),
    });
    const workspaces = workspaceHosting({ workspace: DEFAULT_WORKSPACE_SETTINGS }, taskQueue, standalone);
    const worker = await createProjectWorker({
      connection: native,
      namespace: server.namespace,
      taskQueue,
      workspaces,
    });
    const body = async () => {
      for (let run = 0; run < RUNS; run++) {
        for (const mode of modes) {
          const input = fanOutInput('bench-placement');
          const workflowId = `${taskQueue}-${mode}-${run}`;
          const args = [
            mode === 'pre-placed'
              ? { ...input, workspace_placement: { mode: 'anywhere', run_key: workflowId } }
              : input,
          ];
          const started = performance.now();
          await client.workflow.execute('leadRunWorkflow', { taskQueue, workflowId, args });
          wall.get(mode)?.push(performance.now() - started);
        }
      }
    };
    await worker.runUntil(body);
    await hostWorkerStopped(worker);
    return wall;
  } finally {
    await native.close();
    await connection.close();
  }
}

export async function benchWorkspacePlacement(server: TemporalServer): Promise<BenchResult[]> {
  const embedded = await timedRuns(server, ['pre-placed', 'embedded'], false);
  const host = await timedRuns(server, ['snapshots'], true);
  return [
    msRow('fan-out of 3, pre-placed (no call places it), wall', embedded.get('pre-placed') ?? []),
    msRow(
      'fan-out of 3, embedded default (placed by its first call, nothing saved), wall',
      embedded.get('embedded') ?? [],
    ),
    msRow('fan-out of 3, one host with snapshots on, wall', host.get('snapshots') ?? []),
  ];
}

if (require.main === module) {
  withBenchServer(async (server) => {
    process.stdout.write(`${formatTable(await benchWorkspacePlacement(server))}\n`);
  }).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
