/**
 * A graph agent's module: loaded with Node's `require` (CommonJS, e.g. TypeScript compiled to .js), its export
 * either a compiled LangGraph graph or a factory that builds one from what the subagent hands it.
 */
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { Pregel } from '@langchain/langgraph';
import type { GraphAgentSettings } from '../../contracts/graph';

/** What a factory export `(context) => compiled graph` receives. */
export interface GraphFactoryContext {
  /** The agent's configured model (`scripted` or `openai`) as a LangChain chat model. */
  model: BaseChatModel;
  /** The agent's `system_prompt` (its description when the config gives none). */
  systemPrompt: string;
  agentName: string;
  /** The run's workspace folder. */
  workspace: string;
}

// The graph's own node and channel types are the module's business: any compiled graph will do.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
export type CompiledGraph = Pregel<any, any>;

/** A module or export that is not a graph: the subagent fails with this message (no retry can fix it). */
export class GraphModuleError extends Error {
  override readonly name = 'GraphModuleError';
}

function isCompiledGraph(value: unknown): value is CompiledGraph {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { stream?: unknown }).stream === 'function' &&
    typeof (value as { invoke?: unknown }).invoke === 'function' &&
    typeof (value as { getState?: unknown }).getState === 'function'
  );
}

/** The agent's compiled graph, built by its factory when the export is one. */
export async function loadGraph(
  settings: GraphAgentSettings,
  context: GraphFactoryContext,
): Promise<CompiledGraph> {
  const where = `graph module ${settings.module}`;
  let module: Record<string, unknown>;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the path comes from config; import() needs --experimental-vm-modules under jest
    module = require(settings.module) as Record<string, unknown>;
  } catch (err) {
    throw new GraphModuleError(`${where} cannot be loaded: ${(err as Error).message.split('\n')[0]}`);
  }
  const exported = Object.hasOwn(module, settings.export) ? module[settings.export] : undefined;
  if (exported === undefined) {
    const names = Object.keys(module).join(', ') || 'none';
    throw new GraphModuleError(`${where} has no export "${settings.export}" (its exports: ${names})`);
  }
  const graph =
    typeof exported === 'function' && !isCompiledGraph(exported)
      ? await (exported as (c: GraphFactoryContext) => unknown)(context)
      : exported;
  if (!isCompiledGraph(graph)) {
    throw new GraphModuleError(
      `${where}: export "${settings.export}" is not a compiled LangGraph graph (call .compile()) nor a factory returning one`,
    );
  }
  return graph;
}

/** A copy of `graph` that checkpoints with `saver` (the module's graph may serve other runs at once). */
export function withCheckpointer(graph: CompiledGraph, saver: BaseCheckpointSaver): CompiledGraph {
  const Compiled = graph.constructor as new (fields: object) => CompiledGraph;
  return new Compiled({ ...graph, checkpointer: saver });
}
