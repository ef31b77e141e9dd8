/** The graph checkpointer: what one saver stored, a fresh one (another attempt, another worker) resumes from. */
import { join } from 'node:path';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { StoredCheckpointSaver } from '../../../activities/graph/checkpointer';
import { LocalDirBlobStore } from '../../../payloads/store';
import { tempDir } from '../../support/subagent-input';

/** `one` → `two` → `three`, each adding an AI message; `ran` counts the runs of each node. */
function countingGraph(ran: Record<string, number>, failAt?: string) {
  const node = (name: string) => () => {
    ran[name] = (ran[name] ?? 0) + 1;
    if (name === failAt) throw new Error(`${name} failed`);
    return { messages: [new AIMessage(`${name} done`)] };
  };
  return new StateGraph(MessagesAnnotation)
    .addNode('one', node('one'))
    .addNode('two', node('two'))
    .addNode('three', node('three'))
    .addEdge(START, 'one')
    .addEdge('one', 'two')
    .addEdge('two', 'three')
    .addEdge('three', END);
}

it('resumes a graph from the last stored super-step in a fresh saver', async () => {
  const store = new LocalDirBlobStore(join(tempDir('graph-checkpointer'), 'payloads'));
  const thread = { configurable: { thread_id: 'subagent-1' }, durability: 'sync' as const };
  const heads: string[] = [];
  const first: Record<string, number> = {};
  const crashed = countingGraph(first, 'three').compile({
    checkpointer: new StoredCheckpointSaver(store, (head) => heads.push(head)),
  });
  await expect(crashed.invoke({ messages: [new HumanMessage('go')] }, thread)).rejects.toThrow(
    'three failed',
  );

  const second: Record<string, number> = {};
  const saver = new StoredCheckpointSaver(store, () => undefined);
  await saver.restore(heads[heads.length - 1]);
  const resumed = countingGraph(second).compile({ checkpointer: saver });
  const state = await resumed.invoke(null, thread);

  expect(first).toEqual({ one: 1, two: 1, three: 1 });
  expect(second).toEqual({ three: 1 });
  expect(state.messages.map((m) => m.text)).toEqual(['go', 'one done', 'two done', 'three done']);
});
