/**
 * The state a PostgreSQL-backed Temporal server needs before this project runs on it: its two databases
 * (made by `temporal-sql-tool`, before the server starts) and, once it serves, the namespace and the
 * project's search attributes. Those two go through the server's own gRPC API on the connection the
 * readiness check opens anyway: no Temporal CLI to find, no process per attribute. By hand, a person runs
 * `temporal operator namespace create` and `temporal operator search-attribute create` instead
 * (deploy/temporal-postgres/README.md).
 */
import { Connection, isGrpcServiceError } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { addMissingSearchAttributes } from './search-attributes';
import { lastLine, runTool } from './temporal-cli-builds';
import { sqlToolEnv, sqlToolSteps } from './temporal-postgres-config';
import type { PostgresConnection } from './postgres-cluster';
import type { WaitHandle } from '../worker/wait-progress';

/** gRPC's status code for a namespace that is there already. */
const ALREADY_EXISTS = 6;

/** How long a namespace this registers keeps a closed workflow's history. */
const RETENTION_MS = 24 * 60 * 60_000;

/** Creates both databases when missing and brings their schemas to the tool's version. */
export async function setupDatabases(
  sqlTool: string,
  postgres: PostgresConnection,
  databases: { database: string; visibilityDatabase: string },
  env: NodeJS.ProcessEnv,
  wait: WaitHandle,
): Promise<void> {
  const steps = [
    ...sqlToolSteps(databases.database, 'temporal'),
    ...sqlToolSteps(databases.visibilityDatabase, 'visibility'),
  ];
  for (const args of steps) {
    wait.update(`temporal-sql-tool ${args.join(' ')}`);
    const run = await runTool(sqlTool, args, {
      env: { ...env, ...sqlToolEnv(postgres) },
      timeoutMs: 5 * 60_000,
    });
    if (run.code !== 0) {
      // The tool logs to stdout; its error is the last line there.
      throw new Error(
        `temporal-sql-tool ${args.join(' ')} on ${postgres.host}:${postgres.port} ${run.timedOut ? 'did not finish within 5 minutes' : `failed (exit ${run.code})`}: ` +
          lastLine(`${run.stdout}\n${run.stderr}`),
      );
    }
  }
}

/**
 * Registers `namespace` and the project's search attributes where missing; true once the namespace answers
 * with all of them. Safe to repeat: a restarted server on the same databases has them already.
 */
export async function registerProjectNamespace(connection: Connection, namespace: string): Promise<boolean> {
  const service = connection.workflowService;
  try {
    await service.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs(RETENTION_MS),
    });
  } catch (err) {
    if (!isGrpcServiceError(err) || err.code !== ALREADY_EXISTS) throw err;
  }
  await addMissingSearchAttributes(connection, namespace);
  await service.describeNamespace({ namespace });
  return true;
}
