/**
 * Graphs the graph-subagent tests run. Each node appends its name to `journal.txt` in the workspace, so a test
 * can tell a resumed run (earlier nodes once) from a restarted one. `wait_ms=N` in the prompt makes the `slow`
 * node wait that long (a worker can be killed meanwhile); the graph's abort signal ends the wait, journaled as
 * `slow aborted`.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LangGraphRunnableConfig } from '@langchain/langgraph';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import type { GraphFactoryContext } from '../../../activities/graph/load-graph';

type State = typeof MessagesAnnotation.State;

function journal(workspace: string, line: string): void {
  appendFileSync(join(workspace, 'journal.txt'), `${line}\n`);
}

/** `plan` (a model call) → `slow` (waits) → `answer` (a model call). */
export function journalGraph({ model, workspace }: GraphFactoryContext) {
  return new StateGraph(MessagesAnnotation)
    .addNode('plan', async (state: State) => {
      journal(workspace, 'plan');
      return { messages: [await model.invoke(state.messages)] };
    })
    .addNode('slow', async (state: State, config: LangGraphRunnableConfig) => {
      journal(workspace, 'slow');
      const wait = /wait_ms=(\d+)/.exec(state.messages[0].text)?.[1];
      try {
        await sleep(Number(wait ?? 0), undefined, { signal: config.signal });
      } catch (err) {
        if (config.signal?.aborted) journal(workspace, 'slow aborted');
        throw err;
      }
      return {};
    })
    .addNode('answer', async (state: State) => {
      journal(workspace, 'answer');
      return { messages: [await model.invoke(state.messages)] };
    })
    .addEdge(START, 'plan')
    .addEdge('plan', 'slow')
    .addEdge('slow', 'answer')
    .addEdge('answer', END)
    .compile();
}

/** `think` forever (one model call a super-step): only a guard ends it. */
export function endlessGraph({ model, workspace }: GraphFactoryContext) {
  return new StateGraph(MessagesAnnotation)
    .addNode('think', async (state: State) => {
      journal(workspace, 'think');
      return { messages: [await model.invoke(state.messages)] };
    })
    .addEdge(START, 'think')
    .addEdge('think', 'think')
    .compile();
}
