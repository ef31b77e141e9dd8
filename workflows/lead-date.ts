/**
 * The lead's date moves on (DeerFlow's DynamicContextMiddleware, lead-only): when a long run crosses midnight
 * (UTC, in workflow time), the next turn's `<current_date>` is the new day's, kept in the loop's state (so the
 * model activity's input records it in history, and a replay sends the same). Subagents keep the date they
 * started with, as the seed says. Histories recorded before this kept the first date all along: the change is
 * behind `patched('lead-midnight-date')`, asked only when the day has changed.
 */
import { patched } from '@temporalio/workflow';
import { currentDateContext } from '../contracts/date-context';
import type { AgentLoopState } from './agent-loop';

export const LEAD_MIDNIGHT_DATE_PATCH = 'lead-midnight-date';

/** The date reminder for `now` when it is another day than `current` says; undefined when it is the same day. */
export function movedDate(current: string | undefined, now: Date): string | undefined {
  if (current === undefined) return undefined;
  const today = currentDateContext(now);
  return today === current ? undefined : today;
}

/** Before a lead's model call: the date reminder moved to today, when the run has crossed midnight. */
export function followDate(state: AgentLoopState): void {
  const moved = movedDate(state.date_context, new Date());
  if (moved !== undefined && patched(LEAD_MIDNIGHT_DATE_PATCH)) state.date_context = moved;
}
