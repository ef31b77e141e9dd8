/**
 * The activities of remote subagents (contracts/remote-subagent.ts): `probeSubagentProviders`, which a lead run
 * with remote tool loads runs once as it starts (a provider that does not answer means no tool for that run),
 * and `runRemoteSubagent`, the whole work of one remote delegation, dispatched by the provider's type to the
 * A2A client (./a2a) or the ACP client (./acp). Each protocol's module, and its SDK, is loaded when a run first
 * needs it: a worker whose runs have no remote load never loads them.
 */
import { oneProcessWorkspaces, withWorkspaceOutcome, type WorkspaceHost } from '../workspace/host';
import type { ProbeProvidersInput, ProviderProbe } from '../../contracts/subagent-providers';
import type {
  RemoteProbeResult,
  RemoteProviderSettings,
  RemoteProviderType,
  RemoteSubagentInput,
  RemoteSubagentResult,
} from '../../contracts/remote-subagent';
import { loadOptional } from '../../payloads/optional-packages';
import type * as A2A from './a2a';
import type * as Acp from './acp';

/** How long one provider's probe may take before it counts as unavailable. */
export const PROBE_TIMEOUT_MS = 10_000;

/** One protocol's side: how a delegation runs on a provider of its type, and how one is probed. */
export interface RemoteProtocol {
  run(input: RemoteSubagentInput): Promise<RemoteSubagentResult>;
  probe(provider: RemoteProviderSettings): Promise<RemoteProbeResult>;
}

export interface RemoteActivityDeps {
  /** Each protocol's side (default: the A2A and ACP clients, loaded on first use); a test hands in its own. */
  protocols?: Partial<Record<RemoteProviderType, RemoteProtocol>>;
  /** Default PROBE_TIMEOUT_MS. */
  probeTimeoutMs?: number;
}

const a2a = () =>
  loadOptional(
    'an a2a subagent provider',
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy; import() needs --experimental-vm-modules under jest
    () => require('./a2a') as typeof A2A,
    ['@a2a-js/sdk'],
  );
const acp = () =>
  loadOptional(
    'an acp subagent provider',
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy, as above
    () => require('./acp') as typeof Acp,
    ['@agentclientprotocol/sdk'],
  );

const DEFAULT_PROTOCOLS: Record<RemoteProviderType, RemoteProtocol> = {
  a2a: {
    run: (input) => a2a().runA2ASubagent({ ...input, provider: narrow(input.provider, 'a2a') }),
    probe: (provider) => a2a().probeA2AProvider(narrow(provider, 'a2a')),
  },
  acp: {
    run: (input) => acp().runAcpSubagent({ ...input, provider: narrow(input.provider, 'acp') }),
    probe: (provider) => acp().probeAcpProvider(narrow(provider, 'acp')),
  },
};

function narrow<T extends RemoteProviderType>(
  provider: RemoteProviderSettings,
  type: T,
): Extract<RemoteProviderSettings, { type: T }> {
  if (provider.type !== type) throw new Error(`provider ${provider.name} is ${provider.type}, not ${type}`);
  return provider as Extract<RemoteProviderSettings, { type: T }>;
}

function reasonOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** One provider's answer within `timeoutMs`; a probe that throws or does not answer says why not. */
async function probeOne(
  protocol: RemoteProtocol,
  provider: RemoteProviderSettings,
  timeoutMs: number,
): Promise<RemoteProbeResult> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<RemoteProbeResult>((resolve) => {
    timer = setTimeout(
      () => resolve({ available: false, reason: `no answer within ${timeoutMs / 1000} s` }),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([
      protocol.probe(provider).catch((err: unknown) => ({ available: false, reason: reasonOf(err) })),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The remote subagents' activities of one worker. */
export function createRemoteActivities(
  deps: RemoteActivityDeps = {},
  workspaces: WorkspaceHost = oneProcessWorkspaces(),
) {
  const protocolOf = (type: RemoteProviderType): RemoteProtocol =>
    deps.protocols?.[type] ?? DEFAULT_PROTOCOLS[type];
  const timeoutMs = deps.probeTimeoutMs ?? PROBE_TIMEOUT_MS;
  return {
    /** Every provider probed at once, each bounded by the probe timeout: the answer comes within it. */
    async probeSubagentProviders(input: ProbeProvidersInput): Promise<ProviderProbe> {
      const answers = await Promise.all(
        input.providers.map((provider) => probeOne(protocolOf(provider.type), provider, timeoutMs)),
      );
      return Object.fromEntries(input.providers.map((provider, i) => [provider.name, answers[i]]));
    },

    /** One remote delegation's work; a retried attempt re-attaches to what the last one started. */
    async runRemoteSubagent(input: RemoteSubagentInput): Promise<RemoteSubagentResult> {
      const run = () => protocolOf(input.provider.type).run(input);
      // An ACP agent works in the run's workspace: where it lives, and what it changed saved afterwards.
      if (input.placement === undefined) return run();
      return withWorkspaceOutcome(await workspaces.serve(input.placement, input.workspace, true, run));
    },
  };
}
