/**
 * The floor of `bench/load.ts`: the load benchmark's run shape written as plain Temporal, bundled on its own
 * (never with the project's workflows). The parent runs one no-op activity where the lead makes its first
 * model call, starts three children at once where the lead delegates, and runs another no-op where the lead
 * answers; each child runs a no-op activity where a subagent makes a model or a tool call (one by default). No admission, no codec, no
 * search attributes: what is left is what any Temporal application of this shape pays.
 */
import { executeChild, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type * as activities from './activities';

const { noop } = proxyActivities<typeof activities>({ startToCloseTimeout: '1 minute' });

/** `activities` no-ops one after another (absent: one; histories before the argument have none). */
export async function floorChildWorkflow(activities = 1): Promise<void> {
  for (let i = 0; i < activities; i++) await noop();
}

export async function floorParentWorkflow(children: number, childActivities = 1): Promise<void> {
  await noop();
  const { workflowId } = workflowInfo();
  await Promise.all(
    Array.from({ length: children }, (_, i) =>
      executeChild(floorChildWorkflow, { workflowId: `${workflowId}/child/${i}`, args: [childActivities] }),
    ),
  );
  await noop();
}
