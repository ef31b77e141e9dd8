/**
 * A response's tool calls, as the agent loop runs them: built-in tools as activities (local ones for idempotent
 * calls, at most once for the rest), MCP tools, `tool_search`, and the calls a plugin runs itself (`task`: a
 * child workflow each). They run at once; their results come back in the order the model issued the calls.
 */
import { ActivityFailure, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { ActivityOptions, LocalActivityOptions } from '@temporalio/common';
import type { ProjectActivities } from '../activities';
import { isMcpToolName, type McpCallInfo, type McpToolFilter } from '../contracts/mcp';
import type { ToolCall, ToolMessage } from '../contracts/messages';
import type { ScreenedCall } from '../contracts/run-skills';
import { TOOL_SEARCH_TOOL_NAME } from '../contracts/tool-search';
import { isIdempotentCall, type SandboxSettings, type SkillMount } from '../contracts/tools';
import type { AgentLoopConfig, AgentLoopState, LoopPlugins } from './agent-loop';
import { runMcpToolCall, runToolSearch } from './mcp-tool-call';
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
  const idempotent = proxyLocalActivities<ProjectActivities>(local).executeToolCall;
  const once = proxyActivities<ProjectActivities>(remote).executeToolCall;
  // Each call is named in the Web UI by its tool and arguments (metadata: replay does not compare it).
  return {
    idempotent: (input, summary) => idempotent.executeWithOptions({ ...local, summary }, [input]),
    once: (input, summary) => once.executeWithOptions({ ...remote, summary }, [input]),
    regular: (input, summary, place) =>
      once.executeWithOptions({ ...remote, ...place.home, summary }, [input]),
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
}

/** The tool calls of an agent's responses, one response at a time. */
export class ToolCalls {
  private readonly tools: ToolRuns;
  /** What the model activity said about the MCP tools the current response calls (read-only, timeout). */
  private mcpCalls: Record<string, McpCallInfo> = {};
  /** What each `tool_search` call of the current response found. */
  private readonly promotedBy = new Map<ToolCall, string[]>();
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
    const claimedResults = claimer && claimed.length > 0 ? claimer.run(claimed) : Promise.resolve([]);
    return Promise.all([
      Promise.all(
        calls.flatMap((call, i) => (this.claimed[i] || refused(i) ? [] : [this.run(call, screened[i])])),
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
      return { result, ...(promoted && { promoted }) };
    });
    this.promotedBy.clear();
    this.screened = [];
    return results;
  }

  private async run(call: ToolCall, screened: ScreenedCall | undefined): Promise<ToolMessage> {
    const { config } = this;
    if (config.mcpTools?.deferred && call.name === TOOL_SEARCH_TOOL_NAME)
      return this.search(call, config.mcpTools);
    const idempotent = isIdempotentCall(call);
    const mcp = config.mcpTools !== undefined && isMcpToolName(call.name) ? config.mcpTools : undefined;
    const mcpInfo = mcp && this.mcpCalls[call.name];
    try {
      const summary = callLine(call.name, call.args);
      const result = mcp
        ? await runMcpToolCall(call, mcp, mcpInfo, {
            heartbeatTimeout: HEARTBEAT_TIMEOUT,
            summary,
            promoted: this.state.promoted_tools,
          })
        : await config.route.run((place) => {
            const input = {
              call,
              workspace: config.route.workspace,
              allowed_tools: config.allowedTools,
              sandbox: config.sandbox,
              ...withSkillMounts(config),
              ...(screened?.secrets && { secrets: screened.secrets }),
              placement: place.placement,
            };
            if (place.home || place.regular) return this.tools.regular(input, summary, place);
            return (idempotent ? this.tools.idempotent : this.tools.once)(input, summary);
          }, idempotent);
      return {
        role: 'tool',
        tool_call_id: result.tool_call_id,
        name: result.name,
        content: result.content,
        is_error: result.is_error,
      };
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      return interruptedToolMessage(call, err, mcp ? mcpInfo?.read_only === true : idempotent);
    }
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
