/**
 * An example graph agent (docs/tools-and-agents.md, "LangGraph graphs as subagents"): a two-node researcher, `plan` → `answer`,
 * on whatever model the agent is configured with (the factory is handed it), so it runs offline on the
 * scripted model and for real on `openai`. A run is checkpointed after each node: a worker that dies between
 * them costs nothing already done.
 */
import { SystemMessage } from '@langchain/core/messages';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import type { GraphFactoryContext } from '../../../activities/graph/load-graph';

export function graph({ model, systemPrompt }: GraphFactoryContext) {
  const step = (instruction: string) => async (state: typeof MessagesAnnotation.State) => ({
    messages: [
      await model.invoke([new SystemMessage(`${systemPrompt}\n\n${instruction}`), ...state.messages]),
    ],
  });
  return new StateGraph(MessagesAnnotation)
    .addNode(
      'plan',
      step('First write a short research plan: the questions to answer, in order. No answer yet.'),
    )
    .addNode('answer', step('Now answer the task, following your plan. Keep the key facts inline.'))
    .addEdge(START, 'plan')
    .addEdge('plan', 'answer')
    .addEdge('answer', END)
    .compile();
}
