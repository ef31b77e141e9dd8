import { Context } from '@temporalio/activity';

export interface ActivityHooks {
  heartbeat: () => void;
  signal?: AbortSignal;
}

/** Heartbeat and cancellation of the running activity, or inert hooks when called outside one (unit tests). */
export function currentActivityHooks(): ActivityHooks {
  let context: Context;
  try {
    context = Context.current();
  } catch {
    return { heartbeat: () => undefined };
  }
  return { heartbeat: () => context.heartbeat(), signal: context.cancellationSignal };
}
