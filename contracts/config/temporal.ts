/**
 * The `temporal:` section: the server, namespace, task queue and credentials. What it leaves out comes from
 * the Temporal SDKs' own environment variables and config profile (client/connection.ts), so the section is
 * an overlay on them.
 */
import { apiKeyReference, hostPort, httpUrl, section, text } from './fields';
import { withoutUndefined } from '../records';

/** The namespace when neither flags, the config, the environment nor a Temporal profile name one. */
export const DEFAULT_NAMESPACE = 'default';

export const DEFAULT_TASK_QUEUE = 'durable-subagents';

export interface TemporalTlsSettings {
  server_name?: string;
  server_root_ca_cert_path?: string;
  client_cert_path?: string;
  client_key_path?: string;
}

export interface TemporalSettings {
  /** host:port; absent → the environment's or profile's, else the embedded dev server. */
  address?: string;
  /** Absent → the environment's or profile's, else DEFAULT_NAMESPACE. */
  namespace?: string;
  task_queue: string;
  /** Name of the environment variable holding a Temporal Cloud API key. */
  api_key_env?: string;
  tls?: TemporalTlsSettings;
  ui_url?: string;
}

export const temporalSection = section('temporal', {
  address: hostPort.optional(),
  namespace: text.optional(),
  task_queue: text.default(DEFAULT_TASK_QUEUE),
  api_key: apiKeyReference.optional(),
  tls: section('temporal.tls', {
    server_name: text.optional(),
    server_root_ca_cert_path: text.optional(),
    client_cert_path: text.optional(),
    client_key_path: text.optional(),
  }).optional(),
  ui_url: httpUrl.optional(),
})
  .superRefine(({ tls }, ctx) => {
    if (tls !== undefined && (tls.client_cert_path === undefined) !== (tls.client_key_path === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['tls', tls.client_cert_path === undefined ? 'client_cert_path' : 'client_key_path'],
        input: undefined,
        message: 'is missing (mTLS needs client_cert_path and client_key_path)',
      });
    }
  })
  .transform((settings): TemporalSettings =>
    withoutUndefined({
      address: settings.address,
      namespace: settings.namespace,
      task_queue: settings.task_queue,
      api_key_env: settings.api_key,
      tls: settings.tls,
      ui_url: settings.ui_url,
    }),
  )
  .prefault({});
