/** A graph agent's steps rebuilt from history: its run's messages, one step each, as the workflow made them. */
import { stepsFromHistory } from '../../../client/subagent-steps';
import { stepLines } from '../../../cli/steps-command';
import type { AssistantMessage, ToolMessage } from '../../../contracts/messages';
import { buildStep } from '../../../contracts/steps';

const messages: (AssistantMessage | ToolMessage)[] = [
  {
    role: 'assistant',
    content: 'Looking it up.',
    tool_calls: [{ id: 'c1', name: 'lookup', args: '{"q":"x"}' }],
  },
  { role: 'tool', tool_call_id: 'c1', name: 'lookup', content: 'x is 42' },
  { role: 'assistant', content: 'x is 42.' },
];

it("gives a graph run's messages as steps, the same the workflow's query answers", () => {
  const { steps, missing } = stepsFromHistory([{ kind: 'graph', messages }], { guardStopped: false });
  expect(steps).toEqual(messages.map((message, i) => buildStep(i + 1, message)));
  expect(missing).toEqual([]);
  expect(steps.flatMap(stepLines)).toEqual([
    '1 ai: Looking it up.',
    '    → lookup [c1] {"q":"x"}',
    '2 tool lookup [c1]: x is 42',
    '3 ai: x is 42.',
  ]);
});

it("keeps a guard-stopped graph's last tool calls: they are its state's, not dropped by the workflow", () => {
  const { steps } = stepsFromHistory([{ kind: 'graph', messages: messages.slice(0, 1) }], {
    guardStopped: true,
  });
  expect(steps).toEqual([buildStep(1, messages[0])]);
});

it('says why a graph run that returned nothing has no steps', () => {
  const { steps, missing } = stepsFromHistory(
    [{ kind: 'graph_unfinished', reason: 'its run failed: boom' }],
    { guardStopped: false },
  );
  expect(steps).toEqual([]);
  expect(missing).toEqual(["the graph's messages: its run failed: boom"]);
});
