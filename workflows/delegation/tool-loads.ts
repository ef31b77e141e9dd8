/**
 * A lead run's tool loads (the provider registry of `dsh-tool-subagent`): which exist in this run, as the
 * model sees them, and the probe that fixes them as the run starts. The set of tools must be the same on every
 * replay and in every execution, so it comes from what the run recorded: a remote load's tool exists only when
 * the run's one probe found its provider available (workflow state, carried across continue-as-new).
 */
import { ActivityFailure, isCancellation, log, proxyActivities } from '@temporalio/workflow';
import type { ProjectActivities } from '../../activities';
import type { NewTaskEvent } from '../../contracts/events';
import type { ToolSpec } from '../../contracts/messages';
import {
  isRemoteProvider,
  PROVIDER_CAPABILITIES,
  providerLabel,
  remoteProvidersOf,
  type ProviderProbe,
  type SubagentToolLoad,
} from '../../contracts/subagent-providers';
import { failureText } from './batch-delegations';
import { buildLoadToolSpec } from './task-tool';

// The run's remote providers, probed once as it starts: each probe is bounded by the activity itself
// (activities/remote/index.ts PROBE_TIMEOUT_MS), so one attempt answers within seconds; a retry covers a lost
// worker.
const { probeSubagentProviders } = proxyActivities<ProjectActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3, initialInterval: '1 second' },
  summary: 'probe the remote subagent providers',
});

export interface ToolLoadsOptions {
  runId: string;
  loads: readonly SubagentToolLoad[];
  /** What an earlier execution's probe found (continue-as-new): no probe again. */
  probe?: ProviderProbe;
  /** Appends to the run's event log (a tool absent from the run). */
  record: (event: NewTaskEvent) => void;
}

export class ToolLoads {
  /** What the run's probe found; absent while none ran (no remote load, or not yet). */
  probe: ProviderProbe | undefined;

  constructor(private readonly options: ToolLoadsOptions) {
    this.probe = options.probe;
  }

  /** Whether the run has remote loads whose providers it has not probed yet. */
  get probePending(): boolean {
    return this.probe === undefined && remoteProvidersOf(this.options.loads).length > 0;
  }

  /**
   * Probes the remote providers the loads use (one activity, each provider at once, bounded), and records it:
   * each load whose provider is unavailable is absent from the run, said by one event and one log line. A
   * probe that fails altogether counts every provider unavailable, with its reason. Throws when cancelled.
   */
  async probeProviders(): Promise<void> {
    if (!this.probePending) return;
    const providers = remoteProvidersOf(this.options.loads);
    let probe: ProviderProbe;
    try {
      probe = await probeSubagentProviders({ providers });
    } catch (err) {
      if (isCancellation(err)) throw err;
      const cause = err instanceof ActivityFailure && err.cause ? err.cause.message : failureText(err);
      const reason = `the probe failed: ${cause}`;
      probe = Object.fromEntries(providers.map((provider) => [provider.name, { available: false, reason }]));
    }
    this.probe = probe;
    for (const load of this.options.loads) {
      const answer = this.answerFor(load);
      if (!isRemoteProvider(load.provider) || answer === undefined || answer.available) continue;
      const reason = answer.reason ?? 'no reason given';
      log.warn(
        `subagent tool ${load.tool_name} is absent from this run: provider ` +
          `${providerLabel(load.provider)} is unavailable: ${reason}`,
        { run_id: this.options.runId },
      );
      this.options.record({
        type: 'subagent_tool_unavailable',
        task_id: load.tool_name,
        at: new Date().toISOString(),
        tool: load.tool_name,
        provider: load.provider.name,
        provider_type: load.provider.type,
        reason,
      });
    }
  }

  /** The loads whose tool exists in this run: local ones always, a remote one once its provider answered. */
  available(): SubagentToolLoad[] {
    return this.options.loads.filter(
      (load) => !isRemoteProvider(load.provider) || this.answerFor(load)?.available === true,
    );
  }

  /** The load of this run named `name`, if its tool exists. */
  named(name: string): SubagentToolLoad | undefined {
    return this.available().find((load) => load.tool_name === name);
  }

  /** The tools as the model sees them: `{description, prompt}`, worded after each provider, limits as enforced. */
  toolSpecs(limits: { maxConcurrent: number; maxTotalPerRun: number }): ToolSpec[] {
    return this.available().map((load) =>
      buildLoadToolSpec({
        toolName: load.tool_name,
        inheritsParentContext: PROVIDER_CAPABILITIES[load.provider.type].inherits_parent_context,
        ...(load.description !== undefined && { description: load.description }),
        ...limits,
      }),
    );
  }

  private answerFor(load: SubagentToolLoad) {
    const probe = this.probe;
    return probe !== undefined && Object.hasOwn(probe, load.provider.name)
      ? probe[load.provider.name]
      : undefined;
  }
}
