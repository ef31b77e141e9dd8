/** What a workflow test needs: the suite's server, a task queue of its own, workers that always shut down. */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import type { AdmissionSettings } from '../../contracts/admission';
import type { LeadRunInput } from '../../contracts/lead';
import type { PayloadSettings } from '../../contracts/config/payloads';
import type { leadRunWorkflow } from '../../workflows/lead-run';
import { projectDataConverter } from '../../payloads/data-converter';
import { createProjectWorker, hostWorkerStopped, type ProjectWorkerOptions } from '../../worker/worker';
import { WORKER_HEARTBEAT_INTERVAL_MS } from '../../worker/runtime';
import { spawnWorkerProcess, type WorkerProcessOptions } from '../support/chaos-workers';
import { cliEnv, runCli, type Finished } from '../support/cli-process';

// Worker state changes at INFO would bury the test output; warnings and errors still show.
let runtimeInstalled = false;
function quietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  // Heartbeats as often as the project's own workers send them: tests of "no worker" see what users see.
  Runtime.install({
    logger: new DefaultLogger('WARN'),
    workerHeartbeatInterval: WORKER_HEARTBEAT_INTERVAL_MS,
  });
}

export function testAddress(): string {
  const address = process.env.TEMPORAL_TEST_ADDRESS;
  if (!address) throw new Error('TEMPORAL_TEST_ADDRESS is not set: run workflow tests through `npm test`');
  return address;
}

export function testNamespace(): string {
  return process.env.TEMPORAL_TEST_NAMESPACE ?? 'default';
}

/** A task queue no other test uses, so workers of different tests never take each other's tasks. */
export function uniqueTaskQueue(label: string): string {
  return `test-${label}-${randomUUID().slice(0, 8)}`;
}

export interface TestClient {
  client: Client;
  close(): Promise<void>;
}

/**
 * A client with the project's codecs on the suite's payload store (SUBAGENTS_PAYLOAD_DIR), or on `payloads`'
 * store: a test whose workers use another store gives theirs, since what the client starts holds shared fields.
 */
export async function connectClient(
  address = testAddress(),
  payloads?: PayloadSettings,
): Promise<TestClient> {
  const connection = await Connection.connect({ address });
  const client = new Client({
    connection,
    namespace: testNamespace(),
    dataConverter: projectDataConverter(payloads),
  });
  return { client, close: () => connection.close() };
}

/**
 * One client for the whole test file, connected before its tests and closed after them; call at the top
 * level of the file and read the client through the returned function inside the tests.
 */
export function useTestClient(): () => Client {
  let testClient: TestClient | undefined;
  beforeAll(async () => {
    testClient = await connectClient();
  });
  afterAll(() => testClient?.close());
  return () => {
    if (!testClient) throw new Error('the test client is connected in beforeAll: read it inside a test');
    return testClient.client;
  };
}

/** Runs `body` while an in-process worker polls; the worker and its connection are closed whatever happens. */
export async function withWorker<T>(
  options: Omit<WorkerOptions, 'connection' | 'namespace'>,
  body: (worker: Worker) => Promise<T>,
  address = testAddress(),
): Promise<T> {
  quietRuntime();
  const connection = await NativeConnection.connect({ address });
  try {
    const worker = await Worker.create({
      dataConverter: projectDataConverter(),
      ...options,
      connection,
      namespace: testNamespace(),
    });
    return await worker.runUntil(body(worker));
  } finally {
    await connection.close();
  }
}

export function testWorkflowBundle(): string {
  const path = process.env.TEMPORAL_TEST_WORKFLOW_BUNDLE;
  if (!path)
    throw new Error('TEMPORAL_TEST_WORKFLOW_BUNDLE is not set: run workflow tests through `npm test`');
  return path;
}

/**
 * Runs `body` while an in-process worker of the project (every workflow and activity) polls `taskQueue`,
 * declaring `worker.admission` (default: the config defaults) to the task queue's admission workflow;
 * `worker.say` takes the lines the worker would print (a warning about another worker's settings);
 * `worker.server` is a server of the test's own instead of the suite's.
 */
export async function withProjectWorker<T>(
  taskQueue: string,
  body: () => Promise<T>,
  worker: {
    admission?: AdmissionSettings;
    runAdmission?: AdmissionSettings;
    say?: (line: string) => void;
    server?: { address: string; namespace: string };
    /** Worker options over the project's (e.g. a small workflow cache). */
    tuning?: ProjectWorkerOptions['tuning'];
  } & Pick<
    ProjectWorkerOptions,
    'mcpCatalog' | 'transcripts' | 'remote' | 'leases' | 'leadInputs' | 'providers' | 'workspaces' | 'stream'
  > = {},
): Promise<T> {
  quietRuntime();
  const connection = await NativeConnection.connect({ address: worker.server?.address ?? testAddress() });
  try {
    const projectWorker = await createProjectWorker({
      connection,
      namespace: worker.server?.namespace ?? testNamespace(),
      taskQueue,
      workflowBundlePath: testWorkflowBundle(),
      ...(worker.admission && { admission: worker.admission }),
      ...(worker.runAdmission && { runAdmission: worker.runAdmission }),
      ...(worker.tuning && { tuning: worker.tuning }),
      ...(worker.say && { say: worker.say }),
      ...(worker.mcpCatalog && { mcpCatalog: worker.mcpCatalog }),
      ...(worker.transcripts && { transcripts: worker.transcripts }),
      ...(worker.remote && { remote: worker.remote }),
      ...(worker.leases === false && { leases: false }),
      ...(worker.leadInputs && { leadInputs: worker.leadInputs }),
      ...(worker.providers && { providers: worker.providers }),
      ...(worker.workspaces && { workspaces: worker.workspaces }),
      ...(worker.stream !== undefined && { stream: worker.stream }),
    });
    try {
      return await projectWorker.runUntil(body());
    } finally {
      // A home host's own queue has a worker of its own on the same connection: stopped with this one.
      await hostWorkerStopped(projectWorker);
    }
  } finally {
    await connection.close();
  }
}

/** A project worker in a process of its own (so a test can SIGKILL it); resolves once it polls. */
export async function startProjectWorkerProcess(
  taskQueue: string,
  env: NodeJS.ProcessEnv = {},
  logs?: Pick<WorkerProcessOptions, 'logLevel' | 'onLog'>,
): Promise<ChildProcess> {
  return spawnWorkerProcess({
    address: testAddress(),
    namespace: testNamespace(),
    taskQueue,
    bundlePath: testWorkflowBundle(),
    env,
    ...logs,
  });
}

export async function waitFor(
  what: string,
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The ids of the children a workflow started, in the order its history started them. */
export async function childStarts(handle: WorkflowHandle): Promise<string[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  return events.flatMap((e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId ?? []);
}

/** Runs `subagents <args>` as a process against the suite's server, and how long it took. */
export async function suiteCli(args: string[]): Promise<Finished & { ms: number }> {
  const started = Date.now();
  const finished = await runCli(
    [...args, '--address', testAddress(), '--namespace', testNamespace()],
    cliEnv(),
  );
  return { ...finished, ms: Date.now() - started };
}

/** Starts a lead run on `taskQueue` with the id `<taskQueue>-lead`. */
export function startLeadRun(
  client: Client,
  input: LeadRunInput,
  taskQueue: string,
): Promise<WorkflowHandle<typeof leadRunWorkflow>> {
  return client.workflow.start<typeof leadRunWorkflow>('leadRunWorkflow', {
    taskQueue,
    workflowId: `${taskQueue}-lead`,
    args: [input],
  });
}
