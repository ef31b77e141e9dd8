/**
 * A worker SIGKILLed while its agents stream (docs/live.md): the killed attempts' pieces stop; Temporal retries
 * each call on a new worker process, which says so on the stream (`interrupted`) and streams the retry's
 * pieces. A reader that drops a turn's pieces on `interrupted` assembles every agent's text once, equal to what
 * history holds; one that does not would hold the killed attempt's words twice.
 */
import { once } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { SubagentsClient } from '../../client/api';
import type { StreamEvent } from '../../contracts/stream';
import { STREAM_DIR_ENV } from '../../payloads/stream/bridge';
import { leadInput, scriptedWorkspace } from '../support/subagent-input';
import {
  LEAD_ANSWER,
  PARTS,
  partAnswer,
  streamedText,
  testFileBridge,
  threePartScript,
} from '../support/live-stream';
import {
  startLeadRun,
  startProjectWorkerProcess,
  testNamespace,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
} from '../harness/temporal';

const testClient = useTestClient();

/** Each part's answer streams word by word over this long: a kill lands in the middle of it. */
const ANSWER_MS = 8000;

it('says a killed call was interrupted, streams its retry, and assembles each text once', async () => {
  const { workspace, scriptFile } = scriptedWorkspace('live-crash', threePartScript(ANSWER_MS));
  const input = leadInput({
    workspace,
    scriptFile,
    config: { subagent_runtime: { max_running: 3 }, subagents: { max_concurrent: 3 } },
  });
  const bridge = testFileBridge('crash');
  const env = { [STREAM_DIR_ENV]: bridge.dir };
  const taskQueue = uniqueTaskQueue('live-crash');
  const workers: ChildProcess[] = [await startProjectWorkerProcess(taskQueue, env)];
  const stop = new AbortController();
  try {
    const handle = await startLeadRun(testClient(), input, taskQueue);
    const run = new SubagentsClient(testClient(), testNamespace()).getRun(handle.workflowId);
    const events: StreamEvent[] = [];
    const reading = (async () => {
      for await (const { event } of run.stream({ bridge, pollMs: 200, signal: stop.signal }))
        events.push(event);
    })();

    // Every part is in its answer's turn (turn 1) and has streamed some words of it, none has ended it.
    const answering = (path: string) =>
      events.some((e) => e.path === path && e.kind === 'text' && e.turn === 1);
    const answered = (path: string) =>
      events.some((e) => e.path === path && e.kind === 'turn_ended' && e.turn === 1);
    await waitFor('every part streaming its answer', () => PARTS.every(answering), 180_000);
    const cut = PARTS.filter((path) => !answered(path));
    expect(cut.length).toBeGreaterThan(0);
    workers[0].kill('SIGKILL');
    await once(workers[0], 'exit');
    workers.push(await startProjectWorkerProcess(taskQueue, env));

    const result = await handle.result();
    await reading;
    expect(result.status).toBe('completed');
    expect(result.final_output).toBe(LEAD_ANSWER);
    expect(events[events.length - 1]).toMatchObject({ kind: 'run_ended', text: LEAD_ANSWER });
    for (const path of cut) {
      const own = events.filter((e) => e.path === path);
      // The retry says so before its own pieces: the second attempt of the answer's turn.
      const interrupted = own.findIndex((e) => e.kind === 'interrupted');
      expect(own[interrupted]).toMatchObject({ turn: 1, attempt: 2 });
      expect(own.slice(interrupted + 1).some((e) => e.kind === 'text' && e.attempt === 2)).toBe(true);
      expect(own.some((e) => e.kind === 'turn_ended' && e.turn === 1 && e.attempt === 1)).toBe(false);
      // Assembled, the text is the answer once, as history holds it.
      expect(streamedText(events, path)).toBe(partAnswer(path));
      // Without the drop, the killed attempt's words would be there twice.
      const pieces = (attempt?: number) =>
        own
          .filter((e) => e.kind === 'text' && (attempt === undefined || e.attempt === attempt))
          .map((e) => e.text)
          .join('');
      const partial = pieces(1);
      expect(partial.length).toBeGreaterThan(0);
      expect(partAnswer(path).startsWith(partial)).toBe(true);
      expect(pieces()).toBe(`${partial}${partAnswer(path)}`);
    }
  } finally {
    stop.abort();
    for (const worker of workers) worker.kill('SIGKILL');
  }
});
