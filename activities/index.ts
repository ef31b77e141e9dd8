/**
 * Every activity a worker registers, built by one factory with what they need handed in: no activity reaches
 * module-global state. Workflows import only the type (`ProjectActivities`) and proxy it by name; the names
 * are recorded in histories and never change.
 */
import type { LeadInputFiller } from '../contracts/minimal-lead-input';
import type { PayloadKeyring } from '../payloads/encryption-codec';
import type { BlobStore } from '../payloads/store';
import { createAcceptanceActivities } from './acceptance';
import { createAdmissionActivities, type PoolSettings } from './admission';
import type { SlotLeases } from './admission-lease';
import { createBatchToolActivities } from './batch-tools';
import { createDailyBudgetActivities } from './budget/daily';
import { readCancelledResult } from './cancelled-results';
import { createForkActivities } from './fork/fork-point';
import { createGraphActivities } from './graph';
import { createGuardrailActivities } from './guardrails';
import { createLeadInputActivities } from './lead-input';
import { createMcpActivities } from './mcp';
import { createMemoryActivities } from './memory';
import type { McpCatalog } from './mcp/catalog';
import { createModelActivities, ModelProviders } from './model';
import { createRemoteActivities, type RemoteActivityDeps } from './remote';
import { createSkillActivities } from './skills/run-skills';
import { createSummaryActivities } from './summarize';
import { createToolActivities, machineProbes, type MachineProbes } from './tools';
import type { WebToolDeps } from './tools/web';
import { Transcripts } from './transcripts';
import { createWorkspaceActivities } from './workspace';
import { oneProcessWorkspaces, type WorkspaceHost } from './workspace/host';
import { StreamPublishing, type StreamSink } from './stream/agent-stream';
import { streamingToolResults } from './stream/tool-results';

export interface ProjectActivityDeps {
  /** Where transcripts, tool specs and graph checkpoints are kept (encrypted at rest when keys are held). */
  store: BlobStore;
  /** The worker's MCP servers; none when its config lists none. */
  mcpCatalog?: McpCatalog;
  /**
   * The admission settings this worker declares, per pool, the identity it declares them under, and its leases
   * of spare slots (none: every request goes to the admission workflow).
   */
  admission: { settings: PoolSettings; identity: string; leases?: SlotLeases };
  /** The transcripts over `store` (default: a new one; a test keeps its own to clear what it remembers). */
  transcripts?: Transcripts;
  /**
   * What this machine can start for bash (default: new probes). The worker's process hands in the one it also
   * reports the sandbox with, so the probes run once and what is shown is what runs.
   */
  probes?: MachineProbes;
  /** What bash opens request-scoped secrets with (payloads/secrets.ts); absent: secrets cannot be opened. */
  secretsKeyring?: PayloadKeyring;
  /** The model providers and what they keep between calls (default: new ones; a worker that restarts keeps its). */
  providers?: ModelProviders;
  /** How remote subagents (A2A, ACP) are reached (default: their clients; a test hands in doubles). */
  remote?: RemoteActivityDeps;
  /** The run workspaces this worker serves (default: one process serves them all, nothing saved). */
  workspaces?: WorkspaceHost;
  /** A lead run's full input from the worker's config, for a run started with its prompt alone; none: refused. */
  leadInputs?: LeadInputFiller;
  /** The web tools' `tools:` entries and what they read (default: no web tool configured). */
  web?: WebToolDeps;
  /** Where the agents' deltas and tool results go (the tree's live stream, docs/live.md); absent: nowhere. */
  stream?: StreamSink;
}

/** The activities of one worker: the object it registers. */
export function createProjectActivities(deps: ProjectActivityDeps) {
  const transcripts = deps.transcripts ?? new Transcripts(deps.store);
  const providers = deps.providers ?? new ModelProviders();
  const workspaces = deps.workspaces ?? oneProcessWorkspaces();
  const stream = deps.stream && new StreamPublishing(deps.stream);
  const tools = createToolActivities({
    probes: deps.probes ?? machineProbes(),
    ...(deps.secretsKeyring && { keyring: deps.secretsKeyring }),
    workspaces,
    ...(deps.web && { web: deps.web }),
  });
  const mcp = createMcpActivities({ mcpCatalog: deps.mcpCatalog });
  return {
    ...createModelActivities({ transcripts, providers, mcpCatalog: deps.mcpCatalog, stream }),
    ...createSummaryActivities({ transcripts, providers }),
    ...tools,
    executeToolCall: streamingToolResults(tools.executeToolCall, stream),
    ...createWorkspaceActivities(workspaces),
    ...mcp,
    executeMcpToolCall: streamingToolResults(mcp.executeMcpToolCall, stream),
    ...createGraphActivities({ store: deps.store, providers }, workspaces),
    readCancelledResult,
    ...createAdmissionActivities(deps.admission.settings, deps.admission.identity, deps.admission.leases),
    ...createAcceptanceActivities(workspaces),
    ...createBatchToolActivities(workspaces),
    ...createSkillActivities(),
    ...createGuardrailActivities(),
    ...createRemoteActivities(deps.remote, workspaces),
    ...createLeadInputActivities(deps.leadInputs),
    ...createMemoryActivities(providers),
    ...createDailyBudgetActivities(),
    ...createForkActivities(workspaces),
  };
}

/** What workflows proxy: every activity of a project worker, by name. */
export type ProjectActivities = ReturnType<typeof createProjectActivities>;
