/** A graph's messages as steps: read back from a stored checkpoint head by a saver of the reader's own. */
import { join } from 'node:path';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { checkpointStepMessages, graphStepMessages } from '../../../activities/graph/graph-messages';
import { StoredCheckpointSaver } from '../../../activities/graph/checkpointer';
import { LocalDirBlobStore } from '../../../payloads/store';
import { tempDir } from '../../support/subagent-input';

const asked = new AIMessage({
  content: 'Looking x up.',
  tool_calls: [{ type: 'tool_call', id: 'l1', name: 'lookup', args: { key: 'x' } }],
});
const looked = new ToolMessage({ content: 'x is 42', tool_call_id: 'l1', name: 'lookup' });

it('gives the AI and tool messages after the prompt, in the transcript shape', () => {
  expect(graphStepMessages([new HumanMessage('What is x?'), asked, looked])).toEqual([
    {
      role: 'assistant',
      content: 'Looking x up.',
      tool_calls: [{ id: 'l1', name: 'lookup', args: '{"key":"x"}' }],
    },
    { role: 'tool', tool_call_id: 'l1', name: 'lookup', content: 'x is 42' },
  ]);
});

it('reads the messages of the latest checkpoint a head lists, as far as the graph got', async () => {
  const store = new LocalDirBlobStore(join(tempDir('graph-messages'), 'payloads'));
  const heads: string[] = [];
  const graph = new StateGraph(MessagesAnnotation)
    .addNode('ask', () => ({ messages: [asked] }))
    .addNode('look', () => ({ messages: [looked] }))
    .addNode('stop', () => {
      throw new Error('stopped here');
    })
    .addEdge(START, 'ask')
    .addEdge('ask', 'look')
    .addEdge('look', 'stop')
    .addEdge('stop', END)
    .compile({ checkpointer: new StoredCheckpointSaver(store, (head) => heads.push(head)) });
  const thread = { configurable: { thread_id: 'subagent-1' }, durability: 'sync' as const };
  await expect(graph.invoke({ messages: [new HumanMessage('What is x?')] }, thread)).rejects.toThrow(
    'stopped here',
  );

  const read = await checkpointStepMessages(store, heads[heads.length - 1], 'subagent-1');
  expect(read).toEqual(graphStepMessages([asked, looked]));
  expect(await checkpointStepMessages(store, heads[0], 'subagent-1')).toEqual([]);
  expect(await checkpointStepMessages(store, heads[heads.length - 1], 'another-thread')).toEqual([]);
});
