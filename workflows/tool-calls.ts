/**
 * A response's tool calls, as the agent loop runs them: built-in tools as activities (local ones for idempotent
 * calls, at most once for the rest), MCP tools, `tool_search`, and the calls a plugin runs itself (`task`: a
 * child workflow each). They run at once; their results come back in the order the model issued the calls.
 */
import { ActivityFailure, ChildWorkflowFailure, proxyActivities, workflowInfo } from '@temporalio/workflow';
import { localActivities } from './local-activities';
import type { ActivityOptions, LocalActivityOptions } from '@temporalio/common';
import type { ProjectActivities } from '../activities';
import { isMcpToolName, type McpCallInfo, type McpToolFilter } from '../contracts/mcp';
import { toolMessageFor, type ToolCall, type ToolMessage } from '../contracts/messages';
import type { ScreenedCall } from '../contracts/run-skills';
import { TOOL_SEARCH_TOOL_NAME } from '../contracts/tool-search';
import {
  GATED_WRITE_TOOLS,
  gatedPath,
  overBudget,
  READ_MARKING_TOOL,
  readMarkKey,
  type ReadGate,
} from '../contracts/tool-output';
import { isIdempotentCall, type SandboxSettings, type SkillMount } from '../contracts/tools';
import type { AgentLoopConfig, AgentLoopState, LoopPlugins } from './agent-loop';
import { runMcpTask, runMcpToolCall, runToolSearch } from './mcp-tool-call';
import { mcpTaskWorkflowId } from '../contracts/mcp-tasks';
import { callLine } from './outcome';
import type { CallPlace } from './workspace-route';

// Activities heartbeat every third of this (activities/activity-context.ts): a worker that dies is noticed
// within it, and the attempt retried.
export const HEARTBEAT_TIMEOUT = '3 seconds';

// A tool that runs at most once (bash, str_replace, an append): a lost heartbeat is reported to the model as
// "may or may not have run", which makes it repeat work or give up. On a saturated host a live worker's beats
// can arrive seconds late, so these wait longer before the attempt is taken for lost: a false interruption
// costs the run more than a dead worker's bash call noticed a few seconds later.
const AT_MOST_ONCE_HEARTBEAT_TIMEOUT = '10 seconds';

type ExecuteToolCall = ProjectActivities['executeToolCall'];
type Externalize = ProjectActivities['externalizeToolOutput'];
type ToolRun = (input: Parameters<ExecuteToolCall>[0], summary: string) => ReturnType<ExecuteToolCall>;

interface ToolRuns {
  idempotent: ToolRun;
  once: ToolRun;
  /** A regular activity, with the route's options over its own (the home's queue, or any host's). */
  regular: (
    input: Parameters<ExecuteToolCall>[0],
    summary: string,
    place: CallPlace,
  ) => ReturnType<ExecuteToolCall>;
  /** `tool_output` for a result the workflow produced: a local activity, or a regular one on the home's queue. */
  externalize: (input: Parameters<Externalize>[0], place: CallPlace) => ReturnType<Externalize>;
}

function toolActivities(sandbox: SandboxSettings): ToolRuns {
  // Idempotent calls (ls, read_file, a plain write_file) run as local activities: one marker event in
  // history instead of six, no round trip through matching, and re-running one after a crash is harmless.
  const local: LocalActivityOptions = {
    startToCloseTimeout: '2 minutes',
    retry: { initialInterval: '1 second', maximumAttempts: 3 },
  };
  // A tool that is not idempotent (bash, str_replace, an append) runs at most once, as a regular activity:
  // after a crash the model is told it may or may not have run, the tool is not run again blindly.
  const remote: ActivityOptions = {
    startToCloseTimeout: `${sandbox.bash_timeout_seconds + 60} seconds`,
    heartbeatTimeout: AT_MOST_ONCE_HEARTBEAT_TIMEOUT,
    retry: { maximumAttempts: 1 },
  };
  const idempotent = localActivities<ProjectActivities>(local).executeToolCall;
  const once = proxyActivities<ProjectActivities>(remote).executeToolCall;
  // Saving a result is idempotent (its file is named by its content's hash): retried as a local activity is.
  const saveLocal = localActivities<ProjectActivities>(local).externalizeToolOutput;
  const saveRegular = proxyActivities<ProjectActivities>(remote).externalizeToolOutput;
  // Each call is named in the Web UI by its tool and arguments (metadata: replay does not compare it).
  return {
    idempotent: (input, summary) => idempotent.executeWithOptions({ ...local, summary }, [input]),
    once: (input, summary) => once.executeWithOptions({ ...remote, summary }, [input]),
    regular: (input, summary, place) =>
      once.executeWithOptions({ ...remote, ...place.home, summary }, [input]),
    externalize: (input, place) =>
      place.home || place.regular
        ? saveRegular.executeWithOptions({ ...remote, retry: local.retry, ...place.home }, [input])
        : saveLocal(input),
  };
}

function interruptedToolMessage(
  call: ToolCall,
  err: unknown,
  idempotent = isIdempotentCall(call),
): ToolMessage {
  const cause = err instanceof ActivityFailure && err.cause ? err.cause.message : String(err);
  const content = idempotent
    ? `Tool "${call.name}" failed: ${cause}`
    : `Tool "${call.name}" was interrupted (${cause}). It may or may not have run: check its effects before running it again.`;
  return { role: 'tool', tool_call_id: call.id, name: call.name, content, is_error: true };
}

/** The skill folders a built-in tool call mounts, for an agent with skills; else nothing (the input stays as it was). */
function withSkillMounts(config: AgentLoopConfig): { skill_mounts?: SkillMount[] } {
  const mounts = config.skills?.mounts();
  return mounts ? { skill_mounts: mounts } : {};
}

/** One call's result, with the MCP tools its `tool_search` found (promoted once the result is recorded). */
export interface CallResult {
  result: ToolMessage;
  promoted?: string[];
  /** A gated `read_file`'s mark (read_before_write): the file's key and the hash of the version read. */
  readMark?: { key: string; hash: string };
}

/** The tool calls of an agent's responses, one response at a time. */
export class ToolCalls {
  private readonly tools: ToolRuns;
  /** What the model activity said about the MCP tools the current response calls (read-only, timeout). */
  private mcpCalls: Record<string, McpCallInfo> = {};
  /** What each `tool_search` call of the current response found. */
  private readonly promotedBy = new Map<ToolCall, string[]>();
  /** The read marks the current response's gated reads returned (read_before_write). */
  private readonly markedBy = new Map<ToolCall, { key: string; hash: string }>();
  /** Which of the current response's calls a plugin claimed. */
  private claimed: boolean[] = [];
  /** What the skills' policy decided for each of the current response's calls. */
  private screened: (ScreenedCall | undefined)[] = [];

  constructor(
    private readonly state: AgentLoopState,
    private readonly config: AgentLoopConfig,
  ) {
    this.tools = toolActivities(config.sandbox);
  }

  /** A new response: what the model activity said about the MCP tools it calls. */
  heard(mcpCalls: Record<string, McpCallInfo> | undefined): void {
    this.mcpCalls = mcpCalls ?? {};
  }

  /**
   * Starts the response's calls: the claimed ones first (the plugin's children), then the rest, each as its
   * activity; a call the skills' policy refused (`screened`) runs nowhere. Settles with the plugin's results and
   * the activities', each in the calls' order.
   */
  start(
    calls: ToolCall[],
    claimer: LoopPlugins['claimedCalls'],
    screened: ScreenedCall[] = [],
  ): Promise<[ToolMessage[], ToolMessage[]]> {
    this.screened = screened;
    const refused = (i: number) => screened[i]?.refusal !== undefined;
    this.claimed = calls.map((call, i) => !refused(i) && (claimer?.claims(call) ?? false));
    const claimed = calls.filter((_, i) => this.claimed[i]);
    const claimedResults =
      claimer && claimed.length > 0
        ? claimer.run(claimed).then((results) => Promise.all(results.map((r) => this.budgeted(r))))
        : Promise.resolve([]);
    return Promise.all([
      Promise.all(
        calls.flatMap((call, i) => (this.claimed[i] || refused(i) ? [] : [this.run(call, screened[i], i)])),
      ),
      claimedResults,
    ]);
  }

  /** What `start` settled with, one result per call in the calls' order, and what each search promoted. */
  inCallOrder(calls: ToolCall[], [toolResults, delegated]: [ToolMessage[], ToolMessage[]]): CallResult[] {
    // Results follow the calls by position, not by id: a model may give two calls the same id.
    let nextTool = 0;
    let nextDelegated = 0;
    const results = calls.map((call, i) => {
      const result =
        this.screened[i]?.refusal ?? (this.claimed[i] ? delegated[nextDelegated++] : toolResults[nextTool++]);
      if (!result) throw new Error(`no result for tool call ${call.id} (${call.name})`);
      const promoted = this.promotedBy.get(call);
      const readMark = this.markedBy.get(call);
      return { result, ...(promoted && { promoted }), ...(readMark && { readMark }) };
    });
    this.promotedBy.clear();
    this.markedBy.clear();
    this.screened = [];
    return results;
  }

  /** One call (`index`: its place in the response, which names an MCP task's child workflow). */
  private async run(call: ToolCall, screened: ScreenedCall | undefined, index: number): Promise<ToolMessage> {
    const { config } = this;
    // A search finds and promotes only what an active skill's `allowed-tools` leaves (as DeerFlow filters it).
    if (config.mcpTools?.deferred && call.name === TOOL_SEARCH_TOOL_NAME)
      return this.search(call, config.skills?.searchFilter(config.mcpTools) ?? config.mcpTools);
    const idempotent = isIdempotentCall(call);
    const mcp = config.mcpTools !== undefined && isMcpToolName(call.name) ? config.mcpTools : undefined;
    const mcpInfo = mcp && this.mcpCalls[call.name];
    try {
      const summary = callLine(call.name, call.args);
      const result = mcp
        ? await this.budgeted(
            mcpInfo?.task
              ? await runMcpTask(
                  call,
                  mcp,
                  { ...mcpInfo, task: mcpInfo.task },
                  {
                    workflowId: mcpTaskWorkflowId(workflowInfo().workflowId, this.state.turns, index),
                    summary,
                    ...(this.state.promoted_tools && { promoted: this.state.promoted_tools }),
                    questions: {
                      run_id: config.runId,
                      lead_workflow_id: config.runId,
                      agent_name: config.agentName,
                      ...(config.clarification && { clarification: config.clarification }),
                    },
                  },
                )
              : await runMcpToolCall(call, mcp, mcpInfo, {
                  heartbeatTimeout: HEARTBEAT_TIMEOUT,
                  summary,
                  promoted: this.state.promoted_tools,
                }),
          )
        : await config.route.run(
            (place) => {
              const input = {
                call,
                workspace: config.route.workspace,
                allowed_tools: config.allowedTools,
                sandbox: config.sandbox,
                ...withSkillMounts(config),
                ...(screened?.secrets && { secrets: screened.secrets }),
                placement: place.placement,
                ...(config.toolOutput && { tool_output: config.toolOutput }),
                ...this.readGate(call),
              };
              if (place.local) return this.tools.idempotent(input, summary);
              if (place.home || place.regular) return this.tools.regular(input, summary, place);
              return (idempotent ? this.tools.idempotent : this.tools.once)(input, summary);
            },
            idempotent,
            true,
          );
      if ('read_mark' in result && result.read_mark !== undefined) this.mark(call, result.read_mark);
      return {
        role: 'tool',
        tool_call_id: result.tool_call_id,
        name: result.name,
        content: result.content,
        is_error: result.is_error,
      };
    } catch (err) {
      if (err instanceof ChildWorkflowFailure) {
        // An MCP task's workflow that failed, or was cancelled with the run (it cancelled the task first).
        const cause = err.cause?.message ?? err.message;
        return toolMessageFor(call, `MCP task "${call.name}" ended without a result (${cause}).`, true);
      }
      if (!(err instanceof ActivityFailure)) throw err;
      return interruptedToolMessage(call, err, mcp ? mcpInfo?.read_only === true : idempotent);
    }
  }

  /** What a call tells the read-before-write gate: a read is to be marked, a write carries the mark held. */
  private readGate(call: ToolCall): { read_gate?: ReadGate } {
    if (!this.config.readBeforeWrite) return {};
    if (call.name !== READ_MARKING_TOOL && !GATED_WRITE_TOOLS.includes(call.name)) return {};
    const requested = gatedPath(call.args);
    if (requested === undefined) return {};
    const mark = this.state.read_marks?.[readMarkKey(this.config.route.workspace, requested)];
    return { read_gate: mark === undefined || call.name === READ_MARKING_TOOL ? {} : { mark } };
  }

  /**
   * A result the workflow produced (an MCP tool's, a delegation's) over its `tool_output` budget: saved in the
   * workspace by an activity on its host, the model given the synopsis. A save that fails leaves the result as it
   * was (already bounded by its own cap).
   */
  private async budgeted<M extends Pick<ToolMessage, 'name' | 'content'>>(message: M): Promise<M> {
    const { config } = this;
    const settings = config.toolOutput;
    if (!settings || !overBudget(settings, message.name, message.content.length)) return message;
    try {
      const saved = await config.route.run(
        (place) =>
          this.tools.externalize(
            {
              tool: message.name,
              content: message.content,
              workspace: config.route.workspace,
              sandbox: config.sandbox,
              tool_output: settings,
              placement: place.placement,
            },
            place,
          ),
        true,
      );
      return { ...message, content: saved.content };
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      return message;
    }
  }

  private mark(call: ToolCall, hash: string): void {
    const requested = gatedPath(call.args);
    if (requested === undefined) return;
    this.markedBy.set(call, { key: readMarkKey(this.config.route.workspace, requested), hash });
  }

  private async search(call: ToolCall, filter: McpToolFilter): Promise<ToolMessage> {
    try {
      const found = await runToolSearch(call, filter, callLine(call.name, call.args));
      this.promotedBy.set(call, found.promoted);
      const { promoted: _promoted, ...result } = found;
      return { role: 'tool', ...result };
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      return interruptedToolMessage(call, err, true);
    }
  }
}
