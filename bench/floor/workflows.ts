/**
 * The floor of `bench/load.ts`: the load benchmark's run shape written as plain Temporal, bundled on its own
 * (never with the project's workflows). The parent runs one no-op activity where the lead makes its first
 * model call, starts three children at once where the lead delegates, and runs another no-op where the lead
 * answers; each child runs one no-op activity, where a subagent's turns would be. No admission, no codec, no
 * search attributes: what is left is what any Temporal application of this shape pays.
 */
import { executeChild, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type * as activities from './activities';

const { noop } = proxyActivities<typeof activities>({ startToCloseTimeout: '1 minute' });

export async function floorChildWorkflow(): Promise<void> {
  await noop();
}

export async function floorParentWorkflow(children: number): Promise<void> {
  await noop();
  const { workflowId } = workflowInfo();
  await Promise.all(
    Array.from({ length: children }, (_, i) =>
      executeChild(floorChildWorkflow, { workflowId: `${workflowId}/child/${i}` }),
    ),
  );
  await noop();
}
