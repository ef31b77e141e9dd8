/**
 * The graph activity of a worker. Its run (run-graph.ts) needs LangChain and LangGraph (~580 modules, ~35 MiB
 * in a fresh process), so it is loaded when a graph subagent first runs: a worker whose runs have no graph
 * agent never loads them (BENCHMARKS.md, "Where the memory goes").
 */
import { oneProcessWorkspaces, withWorkspaceOutcome, type WorkspaceHost } from '../workspace/host';
import type { GraphRunInput, GraphRunResult } from '../../contracts/graph';
import type { BlobStore } from '../../payloads/store';
import type { ModelProviders } from '../model';
import type * as RunGraph from './run-graph';
import { loadOptional } from '../../payloads/optional-packages';

/** What a graph run needs of its worker: where its checkpoints go, and the model providers it calls. */
export interface GraphActivityDeps {
  store: BlobStore;
  providers: ModelProviders;
}

/** The graph activity of a worker, whose checkpoints go to `store` (encrypted at rest when it holds keys). */
export function createGraphActivities(
  deps: GraphActivityDeps,
  workspaces: WorkspaceHost = oneProcessWorkspaces(),
) {
  return {
    runGraphSubagent: async (input: GraphRunInput): Promise<GraphRunResult> => {
      const run = () => runGraph().runGraphSubagent(deps, input);
      // A graph's tools may work in the run's workspace: where it lives, and what they changed saved afterwards.
      if (input.placement === undefined) return run();
      return withWorkspaceOutcome(await workspaces.serve(input.placement, input.workspace, true, run));
    },
  };
}

function runGraph(): typeof RunGraph {
  return loadOptional(
    'a LangGraph agent (graph: in its subagent)',
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy; import() needs --experimental-vm-modules under jest
    () => require('./run-graph') as typeof RunGraph,
  );
}
