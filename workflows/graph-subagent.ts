/**
 * A subagent whose agent is a LangGraph graph: the graph runs in one activity (activities/graph/run-graph.ts),
 * checkpointed after every super-step and heartbeating, so a worker that dies costs at most the step in
 * flight. The wall clock and cancellation act as on the agent loop; the run ends as an `AgentRunEnd`, and its
 * answer, usage and steps go into the loop state, so the subagent's result is built as any other's.
 */
import type { WorkspaceRoute } from './workspace-route';
import {
  ActivityFailure,
  CancellationScope,
  isCancellation,
  proxyActivities,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { ProjectActivities } from '../activities';
import { graphRecursionLimit, type GraphAgentSettings, type GraphRunResult } from '../contracts/graph';
import type { SubagentInput } from '../contracts/subagent';
import type { AgentLoopState } from './agent-loop';
import { clockEnd, runAgent, type AgentRunEnd, type AgentRunOptions } from './agent-run';
import { modelRetryPolicy } from './model-activity';
import { runRemoteAgent } from './remote-subagent';
import { buildStep } from '../contracts/steps';

/** As the agent loop's activities: a dead worker is noticed within seconds and the attempt retried. */
const HEARTBEAT_TIMEOUT = '3 seconds';
/** After the activity's own deadline, the workflow cancels it (a graph that ignores its abort signal). */
const DEADLINE_GRACE_MS = 10_000;

/** The subagent's run: a remote agent's when a remote provider does the work, its graph, or the agent loop. */
export function runSubagentAgent(input: SubagentInput, options: AgentRunOptions): Promise<AgentRunEnd> {
  if (input.remote) {
    const { state, clarifications, agent } = options;
    return runRemoteAgent(
      input,
      input.remote,
      state,
      clarifications,
      agent.clockStartMs,
      options.context.route,
    );
  }
  const graph = input.agent.graph;
  return graph
    ? runGraphAgent(input, graph, options.state, options.agent.clockStartMs, options.context.route)
    : runAgent(options);
}

async function runGraphAgent(
  input: SubagentInput,
  graph: GraphAgentSettings,
  state: AgentLoopState,
  clockStartMs: number | undefined,
  route: WorkspaceRoute,
): Promise<AgentRunEnd> {
  const { agent } = input;
  const options = {
    // The whole run is one attempt: its wall clock bounds it, heartbeats notice a dead worker sooner.
    startToCloseTimeout: `${agent.timeout_seconds + 60} seconds`,
    heartbeatTimeout: HEARTBEAT_TIMEOUT,
    // Retries are for a dead worker and for provider errors time can fix; both resume from the checkpoint.
    retry: modelRetryPolicy(agent.model.retry),
    summary: `graph: ${agent.name}`,
  };
  const { runGraphSubagent } = proxyActivities<ProjectActivities>(options);
  const deadlineMs = clockEnd(clockStartMs ?? workflowInfo().startTime.getTime(), agent.timeout_seconds);
  const scope = new CancellationScope();
  const clockScope = new CancellationScope();
  try {
    // Where the workspace is: a graph retried on the home resumes from its checkpoint; one moved starts there.
    const run = scope.run(() =>
      route.run(
        (place) =>
          runGraphSubagent.executeWithOptions({ ...options, ...place.home, retry: options.retry }, [
            {
              placement: place.placement,
              agent_name: agent.name,
              graph,
              // Stable across the activity's attempts: a retry finds its checkpoints under it.
              thread_id: workflowInfo().workflowId,
              prompt: input.prompt,
              system_prompt: agent.system_prompt,
              model: agent.model,
              recursion_limit: graphRecursionLimit(agent.max_turns, graph),
              token_budget: agent.token_budget,
              deadline_ms: deadlineMs,
              workspace: input.scope.workspace,
            },
          ]),
        true,
      ),
    );
    const backstop = clockScope.run(() =>
      sleep(Math.max(0, deadlineMs + DEADLINE_GRACE_MS - Date.now()), {
        summary: `wall clock: timeout_seconds ${agent.timeout_seconds}`,
      }),
    );
    const result = await Promise.race([run, backstop.then(() => undefined)]);
    if (result === undefined) {
      scope.cancel();
      return { kind: 'timed_out' };
    }
    recordGraphRun(state, result);
    return graphRunEnd(result);
  } catch (err) {
    if (isCancellation(err)) return { kind: 'cancelled' };
    if (err instanceof ActivityFailure)
      return { kind: 'activity_failed', message: err.cause?.message ?? err.message };
    throw err;
  } finally {
    clockScope.cancel();
  }
}

/** The graph's answer, usage and steps, into the state the subagent's result and queries are built from. */
function recordGraphRun(state: AgentLoopState, result: GraphRunResult): void {
  state.turns = result.model_calls;
  if (result.usage) state.usage = result.usage;
  if (result.model_name !== undefined) state.model_name = result.model_name;
  if (result.text !== undefined) state.last_text = result.text;
  for (const message of result.messages) {
    state.step_seq += 1;
    state.steps.push(buildStep(state.step_seq, message));
  }
}

function graphRunEnd(result: GraphRunResult): AgentRunEnd {
  switch (result.end) {
    case 'answered':
      return { kind: 'answered' };
    case 'turn_capped':
    case 'token_capped':
      return { kind: 'guard_stopped', stopReason: result.end };
    case 'timed_out':
      return { kind: 'timed_out' };
    case 'failed':
      return result.error_fallback
        ? { kind: 'error_fallback', error: result.error_fallback }
        : { kind: 'activity_failed', message: result.error ?? 'the graph failed' };
  }
}
