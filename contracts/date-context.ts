/**
 * The date an agent is told (DeerFlow #4781): one hidden framework reminder, merged into the agent's single
 * leading system message before its first model call. It is the date of the execution's start in workflow
 * time (UTC), carried across continue-as-new, so a replay or a continued run sends the same text. The lead's
 * moves on at its first turn past midnight (workflows/lead-date.ts); a subagent keeps its first.
 */

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;

/** `<current_date>2026-12-01, Tuesday</current_date>` for the UTC day of `at`. */
export function currentDateContext(at: Date): string {
  const day = at.toISOString().slice(0, 10);
  return `<current_date>${day}, ${WEEKDAYS[at.getUTCDay()]}</current_date>`;
}
