/**
 * Where the Temporal server is and how to reach it. Most specific first: a flag (written into the config by
 * the loader), the config's `temporal:` section, the Temporal SDKs' own environment variables
 * (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*, …), then the profile of the
 * Temporal config file (temporal.toml; TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE), read by `@temporalio/envconfig`
 * as every Temporal SDK and the Temporal CLI read them. TLS/mTLS from files or the profile's data; an API key
 * (Temporal Cloud) implies TLS.
 */
import { readFileSync } from 'node:fs';
import { Client, type Connection, type TLSConfig } from '@temporalio/client';
import {
  loadClientConfigProfile,
  type ClientConfigProfile,
  type ConfigDataSource,
} from '@temporalio/envconfig';
import { DEFAULT_NAMESPACE, type TemporalSettings } from '../contracts/config/temporal';
import { projectDataConverter } from '../payloads/data-converter';
import { connectChecked } from './server-probe';

export interface ConnectionSettings {
  /** host:port; undefined means "no server given": the CLI then starts (or reuses) the embedded one. */
  address?: string;
  namespace: string;
  taskQueue: string;
  apiKey?: string;
  /** Absent: plain text unless there is an API key; `false`: plain text even then; `{}`: the system's CAs. */
  tls?: TLSConfig | false;
  /** gRPC headers sent with every call (a profile's `grpc_meta`, TEMPORAL_GRPC_META_*). */
  metadata?: Record<string, string>;
  uiUrl?: string;
}

export class ConnectionError extends Error {
  override name = 'ConnectionError';
}

/** The names this project read before it used the Temporal SDKs' own; they still work, with a notice. */
const DEPRECATED_ENV: Readonly<Record<string, string>> = {
  TEMPORAL_TLS_CERT: 'TEMPORAL_TLS_CLIENT_CERT_PATH',
  TEMPORAL_TLS_KEY: 'TEMPORAL_TLS_CLIENT_KEY_PATH',
  TEMPORAL_TLS_CA: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
};

/** The environment with each deprecated name read as its new one (a new name that is set wins). */
function withCurrentNames(env: NodeJS.ProcessEnv, warn: (line: string) => void): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) out[name] = value;
  const used = Object.keys(DEPRECATED_ENV).filter((name) => out[name] !== undefined);
  for (const name of used) out[DEPRECATED_ENV[name]] ??= out[name];
  if (used.length > 0) {
    const renames = used.map((name) => `${name} → ${DEPRECATED_ENV[name]}`).join(', ');
    warn(`deprecated environment names, still read for now: ${renames} (the names every Temporal SDK reads)`);
  }
  return out;
}

function temporalProfile(env: Record<string, string>): ClientConfigProfile {
  try {
    return loadClientConfigProfile({ overrideEnvVars: env });
  } catch (err) {
    const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new ConnectionError(`Temporal config profile (temporal.toml): ${reason}`);
  }
}

function readSource(what: string, source: ConfigDataSource): Buffer {
  if ('data' in source) return Buffer.from(source.data);
  try {
    return readFileSync(source.path);
  } catch (err) {
    throw new ConnectionError(
      `${what}: cannot read ${source.path} (${(err as NodeJS.ErrnoException).code ?? err})`,
    );
  }
}

const fromPath = (path: string | undefined): ConfigDataSource | undefined =>
  path === undefined ? undefined : { path };

const warnOnStderr = (line: string): void => {
  process.stderr.write(`warning: ${line}\n`);
};

/**
 * Resolves the settings (precedence above). `warn` gets the one-line notice about deprecated environment
 * names; stderr by default.
 */
export function connectionSettings(
  config: TemporalSettings,
  env: NodeJS.ProcessEnv = process.env,
  warn: (line: string) => void = warnOnStderr,
): ConnectionSettings {
  const profile = temporalProfile(withCurrentNames(env, warn));
  const configTls = config.tls ?? {};
  const profileTls = profile.tls ?? {};
  const cert = fromPath(configTls.client_cert_path) ?? profileTls.clientCert;
  const key = fromPath(configTls.client_key_path) ?? profileTls.clientKey;
  const ca = fromPath(configTls.server_root_ca_cert_path) ?? profileTls.serverCACert;
  const serverName = configTls.server_name ?? profileTls.serverName;
  if ((cert === undefined) !== (key === undefined)) {
    throw new ConnectionError(
      'mTLS needs both a client certificate and its key (temporal.tls.client_cert_path and client_key_path, ' +
        'or TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH)',
    );
  }
  let apiKey = profile.apiKey || undefined;
  if (config.api_key_env !== undefined) {
    apiKey = env[config.api_key_env] || undefined;
    if (apiKey === undefined) {
      throw new ConnectionError(
        `temporal.api_key: the environment variable ${config.api_key_env} is not set`,
      );
    }
  }
  // As the SDKs decide: TLS when any TLS setting or an API key is given, unless TEMPORAL_TLS=false (or the
  // profile's tls.disabled) turns it off and the config does not turn it back on.
  const disabled = profileTls.disabled === true && config.tls === undefined;
  const wantsTls =
    !disabled && (config.tls !== undefined || profile.tls !== undefined || apiKey !== undefined);
  const tls: TLSConfig | false | undefined = disabled
    ? false
    : wantsTls
      ? {
          ...(serverName && { serverNameOverride: serverName }),
          ...(ca && { serverRootCACertificate: readSource('TLS server CA certificate', ca) }),
          ...(cert &&
            key && {
              clientCertPair: {
                crt: readSource('TLS client certificate', cert),
                key: readSource('TLS client key', key),
              },
            }),
        }
      : undefined;
  const address = config.address ?? (profile.address || undefined);
  return {
    ...(address && { address }),
    namespace: config.namespace ?? (profile.namespace || DEFAULT_NAMESPACE),
    taskQueue: config.task_queue,
    ...(apiKey && { apiKey }),
    ...(tls !== undefined && { tls }),
    ...(profile.grpcMeta && { metadata: profile.grpcMeta }),
    ...(config.ui_url && { uiUrl: config.ui_url }),
  };
}

/** The settings' address, or a ConnectionError that names where an address can come from. */
export function requireAddress(settings: ConnectionSettings): string {
  if (!settings.address)
    throw new ConnectionError(
      'no Temporal server address (--address, temporal.address, TEMPORAL_ADDRESS or a Temporal profile)',
    );
  return settings.address;
}

/** The one-line ConnectionError for a server at `address` that did not answer. */
export function unreachable(address: string, err: unknown): ConnectionError {
  const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
  return new ConnectionError(`cannot reach the Temporal server at ${address}: ${reason}`);
}

export async function connectClient(
  settings: ConnectionSettings,
): Promise<{ client: Client; connection: Connection }> {
  const address = requireAddress(settings);
  // Built before connecting, and outside the connection's errors: a malformed encryption key is a key problem,
  // not a server that cannot be reached.
  const dataConverter = projectDataConverter();
  let connection: Connection;
  try {
    connection = await connectChecked(
      {
        address,
        connectTimeout: '5 seconds',
        ...(settings.tls !== undefined && { tls: settings.tls }),
        ...(settings.apiKey && { apiKey: settings.apiKey }),
        ...(settings.metadata && { metadata: settings.metadata }),
      },
      settings.namespace,
    );
  } catch (err) {
    throw unreachable(address, err);
  }
  // The claim-check codec of this process's payload settings (`configurePayloads`): results come back whole.
  const client = new Client({ connection, namespace: settings.namespace, dataConverter });
  return { client, connection };
}
