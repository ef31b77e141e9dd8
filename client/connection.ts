/**
 * Where the Temporal server is and how to reach it: a flag beats the config's `temporal:` section, which beats
 * the usual `TEMPORAL_*` environment variables. TLS/mTLS from file paths; an API key (Temporal Cloud) implies
 * TLS.
 */
import { readFileSync } from 'node:fs';
import { Client, Connection, type TLSConfig } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { DEFAULT_NAMESPACE, type TemporalSettings } from '../contracts/config/temporal';
import { projectDataConverter } from '../worker/payloads/data-converter';

export interface ConnectionSettings {
  /** host:port; undefined means "no server given": the CLI then starts (or reuses) the embedded one. */
  address?: string;
  namespace: string;
  taskQueue: string;
  apiKey?: string;
  tls?: TLSConfig;
  uiUrl?: string;
}

export class ConnectionError extends Error {
  override name = 'ConnectionError';
}

function readPem(what: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new ConnectionError(`${what}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? err})`);
  }
}

/**
 * Resolves the settings: the config's `temporal:` section (with the flags written in) over the Temporal CLI's
 * environment variables; what neither says gets the defaults.
 */
export function connectionSettings(
  config: TemporalSettings,
  env: NodeJS.ProcessEnv = process.env,
): ConnectionSettings {
  const tlsConfig = config.tls ?? {};
  const certPath = tlsConfig.client_cert_path ?? env.TEMPORAL_TLS_CERT;
  const keyPath = tlsConfig.client_key_path ?? env.TEMPORAL_TLS_KEY;
  const caPath = tlsConfig.server_root_ca_cert_path ?? env.TEMPORAL_TLS_CA;
  const serverName = tlsConfig.server_name ?? env.TEMPORAL_TLS_SERVER_NAME;
  if (Boolean(certPath) !== Boolean(keyPath)) {
    throw new ConnectionError(
      'mTLS needs both a client certificate and its key (TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY)',
    );
  }
  if (config.api_key_env && !env[config.api_key_env]) {
    throw new ConnectionError(`temporal.api_key: the environment variable ${config.api_key_env} is not set`);
  }
  const apiKey = (config.api_key_env ? env[config.api_key_env] : undefined) ?? env.TEMPORAL_API_KEY;
  const wantsTls = Boolean(
    certPath || caPath || serverName || apiKey || config.tls || env.TEMPORAL_TLS === 'true',
  );
  const tls: TLSConfig | undefined = wantsTls
    ? {
        ...(serverName && { serverNameOverride: serverName }),
        ...(caPath && { serverRootCACertificate: readPem('TLS server CA certificate', caPath) }),
        ...(certPath &&
          keyPath && {
            clientCertPair: {
              crt: readPem('TLS client certificate', certPath),
              key: readPem('TLS client key', keyPath),
            },
          }),
      }
    : undefined;
  return {
    address: config.address ?? env.TEMPORAL_ADDRESS,
    namespace: config.namespace ?? env.TEMPORAL_NAMESPACE ?? DEFAULT_NAMESPACE,
    taskQueue: config.task_queue,
    ...(apiKey && { apiKey }),
    ...(tls && { tls }),
    ...(config.ui_url && { uiUrl: config.ui_url }),
  };
}

function requireAddress(settings: ConnectionSettings): string {
  if (!settings.address)
    throw new ConnectionError('no Temporal server address (--address, TEMPORAL_ADDRESS or temporal.address)');
  return settings.address;
}

function unreachable(address: string, err: unknown): ConnectionError {
  const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
  return new ConnectionError(`cannot reach the Temporal server at ${address}: ${reason}`);
}

export async function connectClient(
  settings: ConnectionSettings,
): Promise<{ client: Client; connection: Connection }> {
  const address = requireAddress(settings);
  try {
    const connection = await Connection.connect({
      address,
      connectTimeout: '5 seconds',
      ...(settings.tls && { tls: settings.tls }),
      ...(settings.apiKey && { apiKey: settings.apiKey }),
    });
    // Connecting is lazy about the server; ask it something so a wrong address fails here, in one line.
    await connection.workflowService
      .describeNamespace({ namespace: settings.namespace })
      .catch((err: unknown) => {
        void connection.close();
        throw err;
      });
    // The claim-check codec of this process's payload settings (`configurePayloads`): results come back whole.
    const client = new Client({
      connection,
      namespace: settings.namespace,
      dataConverter: projectDataConverter(),
    });
    return { client, connection };
  } catch (err) {
    throw unreachable(address, err);
  }
}

export async function connectWorker(settings: ConnectionSettings): Promise<NativeConnection> {
  const address = requireAddress(settings);
  try {
    return await NativeConnection.connect({
      address,
      ...(settings.tls && { tls: settings.tls }),
      ...(settings.apiKey && { apiKey: settings.apiKey }),
    });
  } catch (err) {
    throw unreachable(address, err);
  }
}
