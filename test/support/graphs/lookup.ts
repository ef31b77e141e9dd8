/**
 * A tool-calling graph the graph-subagent tests run: `agent` (the handed-in model, bound to a `lookup` tool)
 * and `tools` (LangGraph's ToolNode) in turn until the model answers without a tool call, so its messages hold
 * an AI turn with tool calls and the tool's result, as a ReAct agent's do.
 */
import { tool } from '@langchain/core/tools';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';
import type { GraphFactoryContext } from '../../../activities/graph/load-graph';

const lookup = tool(async ({ key }: { key: string }) => `${key} is 42`, {
  name: 'lookup',
  description: 'Looks a key up in the reference table.',
  schema: z.object({ key: z.string() }),
});

export function lookupGraph({ model }: GraphFactoryContext) {
  if (!model.bindTools) throw new Error('the handed-in model cannot bind tools');
  const agent = model.bindTools([lookup]);
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', async (state: typeof MessagesAnnotation.State) => ({
      messages: [await agent.invoke(state.messages)],
    }))
    .addNode('tools', new ToolNode([lookup]))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', toolsCondition, ['tools', END])
    .addEdge('tools', 'agent')
    .compile();
}
