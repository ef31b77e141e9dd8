/**
 * The A2A provider of remote subagents: `runA2ASubagent` (one delegation, durable: see ./run.ts) and
 * `probeA2AProvider` (can a run starting now use it?). `activities/remote` dispatches to them by
 * `provider.type`.
 */
import type { A2AProviderSettings, RemoteProbeResult } from '../../../contracts/remote-subagent';
import { redactSecrets, resolveEnvReferences, type ResolvedValues } from '../shared';
import { connectA2A } from './connection';
import { reasonOf } from './errors';

export { runA2ASubagent } from './run';

/** How long the probe gives the agent card to answer. */
const PROBE_TIMEOUT_MS = 5_000;

/**
 * Whether the agent answers with a card this worker can use (a transport it speaks), within PROBE_TIMEOUT_MS.
 * Never throws: a reason says why not.
 */
export async function probeA2AProvider(settings: A2AProviderSettings): Promise<RemoteProbeResult> {
  const label = `A2A provider "${settings.name}"`;
  let resolved: ResolvedValues = { values: {}, secrets: [] };
  const signal = AbortSignal.timeout(PROBE_TIMEOUT_MS);
  try {
    resolved = resolveEnvReferences(
      settings.headers ?? {},
      process.env,
      `subagent_providers.${settings.name}.headers`,
    );
    await connectA2A(settings, label, resolved, signal);
    return { available: true };
  } catch (err) {
    const reason = signal.aborted
      ? `${label}: the agent card did not answer within ${PROBE_TIMEOUT_MS / 1000} s`
      : reasonOf(err);
    return { available: false, reason: redactSecrets(reason, resolved.secrets) };
  }
}
