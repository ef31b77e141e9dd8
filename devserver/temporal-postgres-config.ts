/**
 * What Temporal's own server reads on PostgreSQL, written here as Temporal documents it: a server config
 * file (persistence and visibility on the `postgres12` plugin, the four services on loopback ports of one
 * process) and a dynamic config file; and the `temporal-sql-tool` steps that make the two databases.
 * deploy/temporal-postgres/postgres.yaml is the same config, for a person to run by hand.
 */
import { createServer } from 'node:net';
import { stringify } from 'yaml';
import { PROJECT_DYNAMIC_CONFIG, freePort } from './temporal-server';
import type { PostgresConnection } from './postgres-cluster';

/**
 * Over PROJECT_DYNAMIC_CONFIG on PostgreSQL.
 * - `limit.maxIDLength`: the schema stores workflow ids as VARCHAR(255) (SQLite does not enforce a length).
 *   A longer id passes the server's own check, then fails in the database with an UNAVAILABLE error, and a
 *   child workflow's start is retried by the server without end, its parent waiting (measured: a lead whose
 *   child id had 257 characters still waited after 60 s). At 255 the server refuses such an id at once, with
 *   a message that says why.
 * - The rest are what `temporal server start-dev` sets, so the two local servers behave alike: a search
 *   attribute is usable as soon as it is registered (every read of the search attribute cache goes to the
 *   database), with the persistence rate limits raised to match.
 */
export const POSTGRES_DYNAMIC_CONFIG: Record<string, unknown> = {
  'limit.maxIDLength': 255,
  'system.forceSearchAttributesCacheRefreshOnRead': true,
  'frontend.persistenceMaxQPS': 10000,
  'history.persistenceMaxQPS': 45000,
};

const SERVICES = ['frontend', 'history', 'matching', 'worker'] as const;
type Service = (typeof SERVICES)[number];

/** Each service's gRPC and membership port, and the frontend's HTTP port (Nexus and the HTTP API need it). */
export interface ServerPorts {
  grpc: Record<Service, number>;
  membership: Record<Service, number>;
  http: number;
}

/**
 * The highest membership port: the server records each service's membership port in PostgreSQL as a
 * SMALLINT (`cluster_membership.rpc_port`), and Linux hands out ephemeral ports from 32768 up, so a port the
 * kernel picks fails the server's start (`value "45871" is out of range for type smallint`).
 */
const MAX_MEMBERSHIP_PORT = 32767;
const MIN_MEMBERSHIP_PORT = 20000;

/** Whether `port` can be bound on loopback now. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Free loopback ports for every service, the frontend's gRPC port `frontend` when given. */
export async function allocateServerPorts(frontend?: number): Promise<ServerPorts> {
  const taken = new Set<number>(frontend === undefined ? [] : [frontend]);
  const claim = (port: number) => (taken.has(port) ? undefined : (taken.add(port), port));
  // The kernel may hand back a port it gave a moment ago (each probe closes before the next): ask again.
  const next = async (): Promise<number> => {
    for (;;) {
      const port = claim(await freePort());
      if (port !== undefined) return port;
    }
  };
  const nextLow = async (): Promise<number> => {
    for (;;) {
      const candidate =
        MIN_MEMBERSHIP_PORT + Math.floor(Math.random() * (MAX_MEMBERSHIP_PORT - MIN_MEMBERSHIP_PORT + 1));
      if (!taken.has(candidate) && (await portFree(candidate))) {
        taken.add(candidate);
        return candidate;
      }
    }
  };
  const grpc = {} as Record<Service, number>;
  const membership = {} as Record<Service, number>;
  for (const service of SERVICES) {
    grpc[service] = service === 'frontend' && frontend !== undefined ? frontend : await next();
    membership[service] = await nextLow();
  }
  return { grpc, membership, http: await next() };
}

export interface ServerConfigInput {
  postgres: PostgresConnection;
  database: string;
  visibilityDatabase: string;
  numHistoryShards: number;
  ip: string;
  ports: ServerPorts;
  dynamicConfigFile: string;
  logLevel: string;
}

function sqlStore(input: ServerConfigInput, databaseName: string) {
  return {
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `${input.postgres.host}:${input.postgres.port}`,
      connectProtocol: 'tcp',
      user: input.postgres.user,
      password: input.postgres.password ?? '',
      // Per pool, and each service has its own: 29 connections in all under bench/load.ts here.
      maxConns: 10,
      maxIdleConns: 10,
      maxConnLifetime: '1h',
    },
  };
}

/** The server config file (`temporal-server --env <name> start` reads `<name>.yaml` of its config folder). */
export function serverConfigYaml(input: ServerConfigInput): string {
  const { ip, ports } = input;
  const frontend = `${ip}:${ports.grpc.frontend}`;
  const services = Object.fromEntries(
    SERVICES.map((service) => [
      service,
      {
        rpc: {
          grpcPort: ports.grpc[service],
          membershipPort: ports.membership[service],
          bindOnIP: ip,
          ...(service === 'frontend' && { httpPort: ports.http }),
        },
      },
    ]),
  );
  return stringify({
    log: { stdout: true, level: input.logLevel },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: input.numHistoryShards,
      datastores: {
        'postgres-default': sqlStore(input, input.database),
        'postgres-visibility': sqlStore(input, input.visibilityDatabase),
      },
    },
    global: { membership: { maxJoinDuration: '30s', broadcastAddress: ip } },
    services,
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: {
          enabled: true,
          initialFailoverVersion: 1,
          rpcName: 'frontend',
          rpcAddress: frontend,
          httpAddress: `${ip}:${ports.http}`,
        },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    publicClient: { hostPort: frontend },
    dynamicConfigClient: { filepath: input.dynamicConfigFile, pollInterval: '10s' },
  });
}

/** The dynamic config file: PROJECT_DYNAMIC_CONFIG, POSTGRES_DYNAMIC_CONFIG, then `overrides`. */
export function dynamicConfigYaml(overrides: Record<string, unknown> = {}): string {
  const values = { ...PROJECT_DYNAMIC_CONFIG, ...POSTGRES_DYNAMIC_CONFIG, ...overrides };
  return stringify(Object.fromEntries(Object.entries(values).map(([key, value]) => [key, [{ value }]])));
}

/**
 * `temporal-sql-tool` arguments that make a database ready, as Temporal documents it: create it, set up the
 * versioning tables at 0.0, then update to the newest schema. The versioned schemas are the ones embedded in
 * the tool (`--schema-name`), so they match its server version and nothing is read from the module cache.
 * Each step changes nothing on a database that has it already, so it runs at every start: a newer build
 * brings its schema updates.
 */
export function sqlToolSteps(database: string, schema: 'temporal' | 'visibility'): string[][] {
  return [
    ['--db', database, 'create-database'],
    ['--db', database, 'setup-schema', '-v', '0.0'],
    ['--db', database, 'update-schema', '--schema-name', `postgresql/v12/${schema}`],
  ];
}

/** The environment `temporal-sql-tool` reads its connection from (the password stays off the command line). */
export function sqlToolEnv(postgres: PostgresConnection): Record<string, string> {
  return {
    SQL_PLUGIN: 'postgres12',
    SQL_HOST: postgres.host,
    SQL_PORT: String(postgres.port),
    SQL_USER: postgres.user,
    SQL_PASSWORD: postgres.password ?? '',
  };
}
