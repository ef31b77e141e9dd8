/**
 * The workspace activity of a worker: moving a run's workspace when its home is lost (on the shared task queue:
 * whichever live host takes it restores the workspace there). The calls that use a workspace go through the
 * host's `serve` (activities/workspace/host.ts) inside their own activities; the run's first call to be served
 * places it.
 */
import { Context } from '@temporalio/activity';
import type { HomePlacement, Relocation } from '../../contracts/workspace';
import { whileHeartbeating } from '../activity-context';
import { homeVerdictAsker } from './home-liveness';
import type { WorkspaceHost } from './host';

export interface RelocateWorkspaceInput {
  placement: HomePlacement;
  workspace: string;
}

/** How often the home is asked about while the answer is neither alive nor gone. */
const VERDICT_POLL_MS = 500;

export function createWorkspaceActivities(host: WorkspaceHost) {
  return {
    /** Keeps the workspace where it is while its home lives; else moves it to this host. */
    relocateWorkspace: (input: RelocateWorkspaceInput): Promise<Relocation> =>
      whileHeartbeating(async (signal) => {
        const context = Context.current();
        const ask = homeVerdictAsker(context.client, context.info.namespace, input.placement.queue);
        const homeAlive = async (): Promise<boolean> => {
          for (;;) {
            const verdict = await ask();
            if (verdict !== 'unsure') return verdict === 'alive';
            await new Promise((resolve) => setTimeout(resolve, VERDICT_POLL_MS));
            signal.throwIfAborted();
          }
        };
        return host.relocate(input.placement, input.workspace, homeAlive);
      }),
  };
}
