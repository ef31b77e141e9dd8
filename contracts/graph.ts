/**
 * A custom agent that is a LangGraph graph: where its module is, how its turns map to LangGraph's recursion
 * limit, and what the graph activity takes and returns. Pure: workflows import it.
 */
import type { WorkspaceRequest } from './workspace';
import type { ModelErrorFallback, ModelSettings } from './model';
import type { AssistantMessage, TokenUsage, ToolMessage } from './messages';
import type { TokenBudgetSettings } from './subagent';
import type { GraphAgentSettings } from './input-schemas';

/** A graph turn is a model node and a tools node, as in DeerFlow's agents with no middleware hooks. */
export const DEFAULT_NODES_PER_TURN = 2;
/** Nodes that run once per invocation (a planning or a setup node). */
export const DEFAULT_ONE_TIME_NODES = 1;
/** The export read when the reference names none (`./researcher.js` means `./researcher.js#graph`). */
export const DEFAULT_GRAPH_EXPORT = 'graph';

export type { GraphAgentSettings } from './input-schemas';

/** `<module path>#<export>` → its parts; undefined when it is not of that form. */
export function parseGraphReference(reference: string): { module: string; export: string } | undefined {
  const hash = reference.lastIndexOf('#');
  const module = (hash < 0 ? reference : reference.slice(0, hash)).trim();
  const name = hash < 0 ? DEFAULT_GRAPH_EXPORT : reference.slice(hash + 1).trim();
  if (module === '' || !/^[A-Za-z_$][\w$]*$/.test(name)) return undefined;
  return { module, export: name };
}

/**
 * LangGraph's super-step budget for `max_turns` (the seeds' mapping): `max_turns × nodes per turn + one-time
 * nodes`, so a configured number of turns really yields that many turns.
 */
export function graphRecursionLimit(
  maxTurns: number,
  graph: Pick<GraphAgentSettings, 'nodes_per_turn' | 'one_time_nodes'>,
): number {
  return maxTurns * graph.nodes_per_turn + graph.one_time_nodes;
}

/** The graph activity's input: one whole subagent run of the graph (resumed from its checkpoint on retry). */
export interface GraphRunInput {
  /** Where the run's workspace lives (contracts/workspace.ts). Absent: a run from before placements. */
  placement?: WorkspaceRequest;
  /** The agent's name (the scripted model's scripts key on it). */
  agent_name: string;
  graph: GraphAgentSettings;
  /** The LangGraph thread: the subagent's workflow id, the same on every attempt. */
  thread_id: string;
  prompt: string;
  /** Handed to a graph factory as `systemPrompt`. */
  system_prompt: string;
  model: ModelSettings;
  recursion_limit: number;
  token_budget: TokenBudgetSettings;
  /** Epoch ms when the wall clock runs out: the graph is stopped then and its partial answer kept. */
  deadline_ms?: number;
  workspace: string;
}

/** How the graph's run ended. */
export type GraphRunEnd = 'answered' | 'turn_capped' | 'token_capped' | 'timed_out' | 'failed';

export interface GraphRunResult {
  end: GraphRunEnd;
  /** The last AI message's text in the graph's latest state (the answer, or the partial one). */
  text?: string;
  /** A provider error retrying cannot fix (`end: failed`). */
  error_fallback?: ModelErrorFallback;
  /** Why the graph failed otherwise (it threw). */
  error?: string;
  /** Summed over the graph's model calls, every attempt included; absent when no provider reported any. */
  usage?: TokenUsage;
  model_name?: string;
  /** Model calls the graph made (its turns). */
  model_calls: number;
  /** Super-steps run, the resumed attempt's earlier ones included. */
  super_steps: number;
  /** The graph's messages after the task prompt (AI and tool): the subagent's steps. */
  messages: (AssistantMessage | ToolMessage)[];
  /** Attempts that resumed from a checkpoint instead of starting over. */
  resumed?: boolean;
}

/**
 * What the graph activity heartbeats: a retried attempt resumes from it, and a reader finds the running graph's
 * messages so far in the checkpoint it names. Small whatever the graph's state.
 */
export interface GraphProgress {
  /** The payload-store key of the latest checkpoint head (activities/graph/checkpointer.ts). */
  head?: string;
  /** The node that last finished, and the super-steps so far: live state in the Web UI's pending activity. */
  node?: string;
  super_steps: number;
  model_calls: number;
  usage?: TokenUsage;
  model_name?: string;
  /** The token budget's one-time warning was given. */
  budget_warned?: boolean;
}

type GraphProblem = [path: (string | number)[], input: unknown, message: string];

/** What a custom agent's config must say, graph or not (checked with the rest of the config). */
export function graphAgentProblems(
  name: string,
  custom: { graph?: string; tools?: unknown; nodes_per_turn?: number; one_time_nodes?: number },
  overrides: Record<string, { tools?: unknown } | undefined>,
): GraphProblem[] {
  const at = (key: string): (string | number)[] => ['subagents', 'custom_agents', name, key];
  if (custom.graph === undefined) {
    const out: GraphProblem[] = [];
    for (const key of ['nodes_per_turn', 'one_time_nodes'] as const) {
      if (custom[key] !== undefined)
        out.push([at(key), custom[key], 'applies to a graph agent only (set graph)']);
    }
    return out;
  }
  const out: GraphProblem[] = [];
  if (parseGraphReference(custom.graph) === undefined) {
    out.push([
      at('graph'),
      custom.graph,
      'is not <module path>#<export> (e.g. ./agents/researcher.js#graph)',
    ]);
  }
  const toolsMessage = 'does not apply to a graph agent (its graph binds its own tools)';
  if (custom.tools !== undefined) out.push([at('tools'), undefined, toolsMessage]);
  if (Object.hasOwn(overrides, name) && overrides[name]?.tools !== undefined) {
    out.push([['subagents', 'agents', name, 'tools'], undefined, toolsMessage]);
  }
  return out;
}
