/**
 * The lead's system prompt, rendered once when a run starts. Its routing policy is the one the `task` tool
 * states (`contracts/routing-policy.ts`) at the limits this run enforces, so the two can never disagree.
 */
import { routingParagraphs, type RoutingLimits } from '../contracts/routing-policy';

const CLOSING = 'Work happens in the shared workspace; answer with a concise final result.';

/**
 * The lead's first system message: the routing policy at the run's enforced delegation limits, or none when
 * the run offers no `task` tool (no agent to start).
 */
export function leadSystemPrompt(limits: RoutingLimits | undefined): string {
  if (limits === undefined) return `You are the lead agent. Do the work yourself. ${CLOSING}`;
  const [weighing, dispatch, hardLimits] = routingParagraphs(limits);
  return [
    `You are the lead agent. ${weighing}`,
    dispatch,
    hardLimits,
    `Give each subagent a self-contained task, then combine their results into one answer for the user. ${CLOSING}`,
  ].join('\n\n');
}
